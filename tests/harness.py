"""What the tests share to run the real thing: the checkout's root, the command line
as a subprocess, tournament files, bot processes playing against a RefereeServer.

A test that launches processes or a server is slow: mark it ``e2e`` (``pytest -m "not e2e"``
is the fast loop that leaves those out)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from referee import records
from referee.bench.ladder import competition_text
from referee.cli import referee
from referee.play.server import RefereeServer
from referee.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
PROTO_BOT = ROOT / "tests" / "bots" / "proto_bot.py"  # a bot written against the generated stubs, with faults to order


def invoke_cli(*args) -> Result:
    """The ``referee`` command run in this process (click's runner): exit_code and output."""
    return CliRunner().invoke(referee, [str(a) for a in args])


def run_cli(*args, timeout: float = 300, cwd: Path = ROOT, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess:
    """``python -m referee ARGS`` (in the checkout's root unless ``cwd``), its output captured as text."""
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env, check=False)


TOURNAMENT = """
[tournament]
game = "{game}"
deal_sets = {deal_sets}
seed = {seed}
concurrency = {concurrency}
output = "{output}"
{extra}

[tournament.options]
{options}
"""


def write_tournament(path: Path, tables: str, *, game: str, deal_sets: int, seed: int, concurrency: int,
                     output: str = "out", extra: str = "", options: str = "") -> Path:
    """A tournament file: its [tournament] table (``extra``: more lines of it) and the
    game's options, then ``tables`` as given ([clock], [gauntlet], [[bots]]...)."""
    path.write_text(TOURNAMENT.format(game=game, deal_sets=deal_sets, seed=seed, concurrency=concurrency,
                                      output=output, extra=extra, options=options) + tables)
    return path


def sample_bots(**commands: str) -> str:
    """A [clock] (2 s a decision) and a [[bots]] table per ``name="command"``, run from the root."""
    tables = "\n[clock]\ndecision_ms = 2000\nbank_ms = 10000\n"
    for name, command in commands.items():
        tables += f'\n[[bots]]\nname = "{name}"\ncommand = "{command}"\ncwd = "{ROOT}"\n'
    return tables


class Bots:
    """Bot processes launched against the referee at ``address``; ``close`` kills
    those still running. Their output goes to ``output`` (pipes unless told; None:
    this process's own)."""

    def __init__(self, address: str, output=subprocess.PIPE):
        self.address = address
        self.output = output
        self.procs: list[subprocess.Popen] = []

    def script(self, path: Path | str, name: str, *args: str) -> subprocess.Popen:
        """``python PATH --address ADDRESS --name NAME ARGS``"""
        return self._start([sys.executable, str(path), "--address", self.address, "--name", name, *args])

    def sample(self, name: str, *args: str, module: str = "sample_bots.random") -> subprocess.Popen:
        """A sample bot: ``python -m MODULE --address ADDRESS --name NAME ARGS``"""
        return self._start([sys.executable, "-m", module, "--address", self.address, "--name", name, *args])

    def proto(self, name: str, *args: str, token: str = "") -> subprocess.Popen:
        """tests/bots/proto_bot.py (``--mode`` and the other ARGS: see its docstring)."""
        return self.script(PROTO_BOT, name, "--token", token, *args)

    def _start(self, argv: list[str]) -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdout=self.output, stderr=self.output, text=True)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


def serve(test, *, output=subprocess.PIPE, **server_args):
    """``await test(server, bots)`` against a fresh RefereeServer(**server_args), in a
    new event loop; the bots (``Bots``, with ``output``) are killed before the server stops."""
    async def main():
        async with RefereeServer(**server_args) as server:
            bots = Bots(server.address, output)
            try:
                return await test(server, bots)
            finally:
                bots.close()
    return asyncio.run(main())


#: bubblewrap's options that take one value and mount nothing
_BWRAP_VALUE_OPTIONS = ("--size", "--remount-ro", "--chdir", "--hostname", "--cap-drop", "--uid", "--gid")


def sandbox_shows(argv: list[str], path: Path) -> bool:
    """Whether a bubblewrap command (``sandbox.bwrap_command``'s) shows the file ``path`` of this
    machine at its own place: the mount that covers it last and deepest is a bind of a real
    directory or file where it exists (not a tmpfs, a ``/dev/null`` bind or nothing at all)."""
    mounts, i = [], 1
    while i < len(argv) and argv[i] != "--":
        option = argv[i]
        if option in ("--ro-bind", "--bind", "--symlink"):
            mounts.append((Path(argv[i + 2]), option, argv[i + 1]))
            i += 3
        elif option in ("--tmpfs", "--proc", "--dev", "--dir"):
            mounts.append((Path(argv[i + 1]), option, None))
            i += 2
        else:
            i += 3 if option == "--setenv" else 2 if option in _BWRAP_VALUE_OPTIONS else 1
    over = [(len(dest.parts), n) for n, (dest, _, _) in enumerate(mounts) if dest == path or dest in path.parents]
    if not over:
        return False
    dest, kind, source = mounts[max(over)[1]]
    if kind not in ("--ro-bind", "--bind") or source == "/dev/null":
        return False
    return (Path(source) / path.relative_to(dest)).exists()


def require_sandbox() -> None:
    """Skip the test, with the one-line reason, where bubblewrap cannot make a sandbox; with
    REFEREE_REQUIRE_SANDBOX=1 (set by .ci/run) fail instead: in CI these tests may not skip."""
    from referee.hosting import sandbox

    why = sandbox.probe()
    if why is None:
        return
    if os.environ.get("REFEREE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"REFEREE_REQUIRE_SANDBOX=1 but {why}", pytrace=False)
    pytest.skip(why)


def require_ray() -> None:
    """Skip the test, with the one-line reason, where Ray (the ``referee[ray]`` extra) is not
    installed; with REFEREE_REQUIRE_RAY=1 (set by .ci/run, which installs it) fail instead."""
    try:
        import ray  # noqa: F401
    except ImportError:
        why = "ray is not installed (the referee[ray] extra: make install-ray)"
        if os.environ.get("REFEREE_REQUIRE_RAY") == "1":
            pytest.fail(f"REFEREE_REQUIRE_RAY=1 but {why}", pytrace=False)
        pytest.skip(why)


#: the modules of the ``referee[server]`` extra (pyproject.toml), as imported
SERVER_MODULES = ("starlette", "uvicorn", "jinja2", "python_multipart", "argon2", "itsdangerous", "httpx")


def require_server(modules: tuple[str, ...] = SERVER_MODULES) -> None:
    """Skip the test (or, called at a module's top, the whole module), with the one-line reason, where
    a module of the server extra (``referee[server]``, which ``make install`` installs) is missing; with
    REFEREE_REQUIRE_SERVER=1 (set by .ci/run) fail instead."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if not missing:
        return
    why = f"{', '.join(missing)} not installed (the referee[server] extra: make install)"
    if os.environ.get("REFEREE_REQUIRE_SERVER") == "1":
        pytest.fail(f"REFEREE_REQUIRE_SERVER=1 but {why}", pytrace=False)
    pytest.skip(why, allow_module_level=True)


def require_cgroups(cpu: bool = False) -> None:
    """Skip where this process cannot make cgroup v1 groups (whole-bot memory and process limits;
    ``cpu``: a cpu group, for CPU shares); with REFEREE_REQUIRE_SANDBOX=1 (CI, which runs as root
    on a machine that has them) fail instead."""
    from referee.hosting import sandbox

    if (sandbox.cpu_parent() if cpu else sandbox.cgroup_parents()) is None:
        controllers = "cpu groups" if cpu else "pids and memory groups"
        why = f"no cgroup v1 {controllers} can be made here (root, a writable hierarchy)"
        if os.environ.get("REFEREE_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"REFEREE_REQUIRE_SANDBOX=1 but {why}", pytrace=False)
        pytest.skip(why)


CHROMIUM = "/usr/bin/chromium"  # Debian's chromium package; Playwright cannot download browsers here


def require_browser() -> None:
    """Skip the test, with the one-line reason, without Debian's chromium or Playwright for Python;
    with REFEREE_REQUIRE_BROWSER=1 (set by .ci/run, which installs chromium) fail instead."""
    why = None
    if not os.path.exists(CHROMIUM):
        why = f"no {CHROMIUM} (Debian's chromium package; .ci/run installs it)"
    else:
        try:
            import playwright.sync_api  # noqa: F401  (only whether it imports)
        except ImportError:
            why = "Playwright for Python is not installed (pip install -e '.[dev]')"
    if why is None:
        return
    if os.environ.get("REFEREE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"REFEREE_REQUIRE_BROWSER=1 but {why}", pytrace=False)
    pytest.skip(why)


def require_kit(why: str | None) -> None:
    """Skip a starter kit's test, with ``why`` (the one line saying what of its toolchain is
    missing), unless nothing is (``why`` None); with REFEREE_REQUIRE_KITS=1 (set by .ci/run, which
    installs the toolchains) fail instead."""
    if why is None:
        return
    if os.environ.get("REFEREE_REQUIRE_KITS") == "1":
        pytest.fail(f"REFEREE_REQUIRE_KITS=1 but {why}", pytrace=False)
    pytest.skip(why)


# --- hostile entrants (tests/bots/hostile/) in sandboxed tournaments, and what their victim got --

HOSTILE = ROOT / "tests" / "bots" / "hostile"  # the hostile entrants' bots


def tables(*bots: tuple[str, list[str], str]) -> str:
    """A [clock] of 3 s a decision, [limits] in bubblewrap, and a [[bots]] table per (name, command, cwd)."""
    text = '\n[clock]\ndecision_ms = 3000\nbank_ms = 10000\n\n[limits]\nsandbox = "bwrap"\n'
    for name, command, cwd in bots:
        text += f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{cwd}"\n'
    return text


def random_bot(name: str, seed: int) -> tuple[str, list[str], str]:
    return name, ["python", "-m", "sample_bots.random", "--seed", str(seed)], name


def reports(log: Path, kind: str) -> list[dict]:
    """The ``KIND {json}`` lines of a bot's log."""
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines() if line.startswith(kind + " ")]


def victim_hands(record: dict) -> dict[int, list[str]]:
    """The victim's hand in each deal of a match, from its record."""
    seat = record["seats"].index("victim")
    state = records.replay(record).state
    return {event.data["game"]: event.data["cards"] for event in state.events
            if event.kind == "hand" and event.seat == seat}


def store_view(out: Path) -> tuple[dict, dict]:
    """Per match: the victim's results (seat, scores, placing, its faults), and its hand in each deal."""
    store = Store(out, create=False)
    try:
        rows = list(store.matches())
        results = {r.key: (seat := r.lineup.index("victim"), r.scores, r.placing, r.faults[seat]) for r in rows}
        # by the game id the bots are told (the record's), which names no bot
        hands = {(record := store.record(r.key))["meta"]["game_id"]: victim_hands(record) for r in rows}
    finally:
        store.close()
    return results, hands


# --- the competition server (issue 32) ---------------------------------------------------------

PASSWORD = "correct horse battery"  # an entrant's, in the server's tests


def competition_file(title: str, extra: str = "") -> str:
    """A competition file (:func:`referee.bench.ladder.competition_text`) for the server's tests: 2 s a
    decision, the ladder a deal set a round; ``extra``: more tables ([finals], [uploads]...)."""
    return competition_text(title, ROOT, extra, decision_ms=2000, per_round=1)
