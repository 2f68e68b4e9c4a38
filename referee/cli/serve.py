"""``referee serve``: the referee server standalone, for bots that run elsewhere."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import tomllib
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

import click

from referee.cli.options import KeyValue, live_options
from referee.untrusted import log_to_stderr
from referee.view.live import LivePage, arena_tally, listen

if TYPE_CHECKING:
    from referee.play.arena import Arena


class ServeError(Exception):
    """``referee serve`` cannot start: an address it cannot listen on, a bad tokens file (one line)."""


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0 for all).")
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True,
              help="Port to listen on (0 picks a free one).")
@click.option("--unix", "unix", type=click.Path(dir_okay=False),
              help="Also listen on this Unix socket (mode 0666; its directory must exist), as unix:PATH.")
@click.option("--token", "tokens", multiple=True, type=KeyValue(), metavar="BOT=SECRET",
              help="A bot allowed to connect, with its secret token (repeatable). "
                   "Without any, every bot is accepted whatever its token.")
@click.option("--tokens-file", type=click.Path(),
              help="A TOML file of bot = \"secret\" lines, added to --token.")
@click.option("--admin-token", envvar="REFEREE_ADMIN_TOKEN",
              help="Secret that lets a remote runner start matches (RunMatch). "
                   "Default: $REFEREE_ADMIN_TOKEN; none disables RunMatch.")
@click.option("--spectator-token", envvar="REFEREE_SPECTATOR_TOKEN",
              help="Secret that lets a client watch and list games (Spectate, ListGames; the admin token "
                   "does too). Default: $REFEREE_SPECTATOR_TOKEN. Needed only on a server with bot tokens.")
@click.option("--public-spectators", is_flag=True,
              help="Let anyone watch and list games, without a token. Records of matches on deals still "
                   "being played are held back either way.")
@click.option("--verbose", "-v", is_flag=True, help="Log every session and match (default: info).")
@live_options
def serve(host: str, port: int, unix: str | None, tokens: Sequence[tuple[str, str]], tokens_file: str | None,
          admin_token: str | None, spectator_token: str | None, public_spectators: bool, verbose: bool,
          http_port: int | None, http_host: str) -> None:
    """Run the referee server standalone, for bots that run elsewhere.

    It logs who connects and the outcome of each match. Stop it with Ctrl-C."""
    # grpc's own log lines (e.g. a second report of a port it cannot bind) only when asked for,
    # with GRPC_VERBOSITY=error or debug: a failure is the one line below
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    # late: grpc reads GRPC_VERBOSITY when first imported, and `referee --help` loads no grpc
    from referee.play.server import CannotListen, serve_forever

    allowed = dict(tokens)
    if tokens_file:
        allowed.update(read_tokens(tokens_file))
    if http_port is not None:
        http_socket = listen(http_host, http_port)  # a busy port: one line, before the server starts
    log_to_stderr(logging.DEBUG if verbose else logging.INFO, "%(asctime)s %(levelname)s %(message)s")
    log = logging.getLogger("referee")
    if not allowed:
        log.warning("no --token given: any bot may connect with any token, and anyone may watch and list games")
    elif public_spectators:
        log.warning("--public-spectators: anyone may watch and list games")
    elif not spectator_token:
        log.info("no --spectator-token: watching and listing games need the admin token")
    try:
        asyncio.run(serve_forever(host, port, allowed or None, admin_token, unix, spectator_token or None,
                                  public_spectators,
                                  around=None if http_port is None else
                                  live_page(http_host, http_socket, public=public_spectators or not allowed)))
    except KeyboardInterrupt:
        pass
    except CannotListen as err:
        raise ServeError(str(err)) from None


def live_page(host: str, sock: socket.socket, public: bool) -> Callable[[Arena], AbstractAsyncContextManager[str]]:
    """The live page of a standalone referee, on the listening socket ``sock``: its games, and a
    tally of its finished matches; unless ``public`` (as Spectate is), at an address holding a
    token of its own."""
    def around(arena: Arena) -> AbstractAsyncContextManager[str]:
        live = LivePage("referee: live", arena_tally(arena), token=None if public else secrets.token_urlsafe(16))
        live.watch(arena)
        return live.serving(host=host, sock=sock)

    return around


def read_tokens(path: str) -> dict[str, str]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ServeError(f"--tokens-file {path}: {err}") from None
    bad = [k for k, v in data.items() if not isinstance(v, str)]
    if bad:
        raise ServeError(f"--tokens-file {path}: the token of {', '.join(bad)} must be a string")
    return data
