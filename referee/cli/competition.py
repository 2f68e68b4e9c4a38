"""``referee server`` (a competition that runs itself: docs/organising.md) and ``referee submit``
(an entrant's upload from a bot's directory, for CI: docs/entering.md)."""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import click

from referee.competition import ladder
from referee.hosting import uploads
from referee.model import ConfigError
from referee.model.exits import ExitCode


class SubmitError(Exception):
    """``referee submit`` could not upload, or the server refused the upload (one line; exit 2)."""


@click.command()
@click.argument("competition_file", type=click.Path(dir_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default=None,
              help="Where matches are played (default: the file's [executor], else here).")
@click.option("--address", default=None, help="With --executor ray: the cluster's address (default: one started here).")
@click.option("--open", "open_now", is_flag=True, help="Open the competition now if it is a draft (uploads start).")
@click.option("--invites", default=0, type=click.IntRange(0, 1000), help="Print this many new invite codes.")
@click.option("--state", "state", default=None, type=click.Path(file_okay=False),
              help="The server's directory (default: the file's competition.state).")
@click.option("--secure-cookies", is_flag=True,
              help="Cookies only over HTTPS: behind a TLS proxy (the browser then never sends them in clear).")
def server(competition_file: str, host: str, port: int, executor: str | None, address: str | None,
           open_now: bool, invites: int, state: str | None, secure_cookies: bool) -> None:
    """Run a competition: a web site where entrants register, upload bots and read their logs, and a
    coordinator that builds and validates each upload and plays the ladder until the deadline, then
    the finals (docs/organising.md). Needs the server extra: pip install 'referee[server]'."""
    try:
        from referee.server import main as server_main  # late: the optional server extra (Starlette, Uvicorn)
    except ImportError as err:
        raise ConfigError(f"referee server needs the server extra ({err.name} is not installed): "
                          f"pip install 'referee[server]'") from None
    from referee.cli.options import chosen_executor  # late: options imports the executors' optional parts

    spec = ladder.load(competition_file)
    if state is not None:
        spec = dataclasses.replace(spec, state=Path(state).resolve())
    chosen = chosen_executor(spec.house.executor, executor, address, None) if executor or address else None
    server_main.serve(spec, host, port, chosen, open_now, invites, echo=click.echo, secure_cookies=secure_cookies)


@click.command()
@click.argument("path", default=".", type=click.Path(exists=True))
@click.option("--server", "url", required=True, envvar="REFEREE_SERVER", help="The competition's address.")
@click.option("--token", required=True, envvar="REFEREE_TOKEN", help="Your API token (from your page).")
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="Wait for the build and validation, print their logs, exit by the verdict.")
@click.option("--timeout", "timeout_s", default=1800.0, show_default=True, type=click.FloatRange(1),
              help="With --wait: give up after this many seconds (exit 3).")
def submit(path: str, url: str, token: str, wait: bool, timeout_s: float) -> None:
    """Upload the bot in PATH (a directory with a bot.toml, or an archive) as a new version.

    \b
    Exit codes: 0 accepted (built and validated); 1 its build or validation
    failed (the logs say why); 2 refused (bad token, bad upload, uploads
    closed, over the hourly limit) or the server unreachable; 3 --wait timed
    out before a verdict.
    """
    source = Path(path)
    try:
        if source.is_dir():
            data, name = uploads.pack(source), f"{source.resolve().name or 'bot'}.tar.gz"
        else:
            data, name = source.read_bytes(), source.name
    except uploads.UploadRefused as err:
        raise SubmitError(f"{path}: {err}") from None
    except OSError as err:
        raise SubmitError(f"{path}: cannot read: {err.strerror or err}") from None
    base = url.rstrip("/")
    sub = _call(f"{base}/api/submit", token, _multipart({"file": (name, data)}))
    click.echo(f"uploaded: submission {sub['id']}, version {sub['version'][:12]}", err=True)
    if not wait:
        return
    deadline = time.monotonic() + timeout_s
    while not sub.get("done"):
        if time.monotonic() > deadline:
            click.echo(f"submission {sub['id']}: still {sub['status']} after {timeout_s:g} s", err=True)
            raise SystemExit(ExitCode.INCONCLUSIVE)
        time.sleep(1.0)
        sub = _call(f"{base}/api/submission/{sub['id']}", token, None)
    click.echo("--- build log ---\n" + (sub.get("build_log") or ""))
    click.echo("--- validation log ---\n" + (sub.get("validation_log") or ""))
    click.echo(f"submission {sub['id']}: {sub['status']}" + (f": {sub['reason']}" if sub.get("reason") else ""),
               err=True)
    if sub["status"] != "accepted":
        raise SystemExit(ExitCode.CHECK_FAILED)


@click.group()
@click.option("--server", "url", required=True, envvar="REFEREE_SERVER", help="The competition's address.")
@click.option("--token", required=True, envvar="REFEREE_TOKEN",
              help="The organiser's API token (STATE/server/organiser.txt).")
@click.pass_context
def organise(ctx: click.Context, url: str, token: str) -> None:
    """The organiser's commands against a running ``referee server`` (docs/organising.md): the same as its
    organiser's page."""
    ctx.obj = (url.rstrip("/"), token)


@organise.command()
@click.argument("phase", type=click.Choice([str(p) for p in ladder.Phase]))
@click.pass_obj
def move(obj: tuple[str, str], phase: str) -> None:
    """Move the competition on to PHASE (one step: draft, open, frozen, finals, closed)."""
    url, token = obj
    reply = _call(f"{url}/api/phase", token, _json({"to": phase}))
    click.echo(f"the competition is {reply['phase']}")


@organise.command()
@click.option("--team", default=None, help="The team the code's entrant joins.")
@click.pass_obj
def invite(obj: tuple[str, str], team: str | None) -> None:
    """Print a new invite code."""
    url, token = obj
    reply = _call(f"{url}/api/invite", token, _json({} if team is None else {"team": team}))
    click.echo(reply["invite"])


def _json(body: dict[str, Any]) -> tuple[bytes, str]:
    return json.dumps(body).encode(), "application/json"


def _multipart(files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = "referee-" + secrets.token_hex(16)
    parts = []
    for field, (name, data) in files.items():
        safe = name.replace('"', "_").replace("\r", "_").replace("\n", "_")
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{safe}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def _call(url: str, token: str, body: tuple[bytes, str] | None) -> dict[str, Any]:
    request = urllib.request.Request(url, data=body[0] if body else None, method="POST" if body else "GET",
                                     headers={"Authorization": f"Bearer {token}", "Accept": "application/json",
                                              **({"Content-Type": body[1]} if body else {})})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            reply: dict[str, Any] = json.loads(response.read())
            return reply
    except urllib.error.HTTPError as err:
        try:
            said = json.loads(err.read()).get("error")
        except (ValueError, AttributeError):
            said = None
        raise SubmitError(f"{url}: refused ({err.code}): {said or err.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise SubmitError(f"{url}: cannot reach the server: {reason}") from None
