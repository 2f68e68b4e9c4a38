"""A bot written from docs/protocol.md alone can play.

The bot is the Python block of docs/protocol.md (the one after the line
``<!-- standalone-bot -->``) and its stubs are generated from
proto/referee/v1/referee.proto by the command the doc gives (after
``<!-- standalone-protoc -->``), into an empty folder: so the doc and this
test cannot drift apart. The bots run as separate processes in which this
project's ``referee`` package cannot be imported, against a real
RefereeServer on loopback, and play a Confirmation game and an Aegis match
at the same time (one session of each bot holds seats of both games).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT

from referee import records
from referee.play.server import RefereeServer
from referee.runner import Clock

pytestmark = pytest.mark.e2e

DOC = ROOT / "docs" / "protocol.md"

# Runs a script (argv[1]) with the rest of argv, after making `referee` and
# `referee.*` unimportable: the bot must live on its generated stubs alone.
ISOLATE = """
import importlib.abc, runpy, sys
class NoReferee(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "referee" or name.startswith("referee."):
            raise ImportError(f"the standalone bot must not import {name!r}")
        return None
sys.meta_path.insert(0, NoReferee())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def block_after(marker: str, language: str) -> str:
    """The fenced code block that follows ``marker`` in docs/protocol.md."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(re.escape(marker) + r"\s*\n```" + language + r"\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert match, f"docs/protocol.md has no ```{language} block right after {marker}"
    return match.group(1)


def protoc_command(out: Path) -> list[str]:
    """The doc's protoc command, run by this interpreter, writing into ``out``."""
    lines = [line for line in block_after("<!-- standalone-protoc -->", "sh").splitlines() if line.strip()]
    assert len(lines) == 1, "the standalone-protoc block should hold the one command"
    args = shlex.split(lines[0])
    assert args[:3] == ["python", "-m", "grpc_tools.protoc"], args
    fixed = [sys.executable]
    for arg in args[1:]:
        for option in ("--python_out=", "--grpc_python_out="):
            if arg.startswith(option):
                arg = option + str(out)
        fixed.append(arg)
    return fixed


@pytest.fixture(scope="module")
def bot_dir(tmp_path_factory) -> Path:
    """An empty folder holding the generated stubs and the doc's bot, nothing else."""
    folder = tmp_path_factory.mktemp("standalone")
    generated = subprocess.run(protoc_command(folder), check=False, cwd=ROOT, capture_output=True, text=True,
                               timeout=60)
    assert generated.returncode == 0, generated.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["referee_pb2.py", "referee_pb2_grpc.py"]
    assert "import referee_pb2 as" in (folder / "referee_pb2_grpc.py").read_text()
    source = block_after("<!-- standalone-bot -->", "python")
    assert not re.search(r"^\s*(import|from)\s+referee(\s|\.|$)", source, re.MULTILINE), \
        "the doc's bot imports the referee package"
    (folder / "bot.py").write_text(source, encoding="utf-8")
    return folder


def start_bot(folder: Path, address: str, name: str, *extra: str,
              pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(folder)
    with open(folder / f"{name}.log", "w") as log:
        return subprocess.Popen([sys.executable, "-c", ISOLATE, "bot.py", "--address", address, "--name", name,
                                 *extra], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                                pass_fds=pass_fds)


def logs(folder: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(folder.glob("*.log")))


def test_the_isolation_holds(bot_dir):
    """In the bots' processes `referee` cannot be imported, but grpc and the stubs can."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(bot_dir)
    probe = bot_dir / "probe.py"
    probe.write_text("import grpc, referee_pb2, referee_pb2_grpc\n"
                     "try:\n    import referee\nexcept ImportError:\n    print('isolated')\n"
                     "else:\n    print('LEAK', referee.__file__)\n")
    try:
        run = subprocess.run([sys.executable, "-c", ISOLATE, "probe.py"], check=False, cwd=bot_dir, env=env,
                             capture_output=True, text=True, timeout=30)
    finally:
        probe.unlink()
    assert run.stdout.strip() == "isolated", run.stdout + run.stderr


def test_bots_written_from_the_doc_play_both_games(bot_dir):
    async def main():
        bots = []
        async with RefereeServer(connect_timeout=15.0) as server:
            try:
                # each bot: one session holding seats of both games at once (2 + 1 seats)
                bots.append(start_bot(bot_dir, server.address, "alice", "--capacity", "3", "--seed", "1"))
                bots.append(start_bot(bot_dir, server.address, "bob", "--capacity", "3", "--seed", "2",
                                      "--by-index"))
                clock = Clock(decision_s=2.0, bank_s=10.0)
                return await asyncio.wait_for(asyncio.gather(
                    server.arena.run_match("confirmation", {"rounds": 1}, ["alice", "bob", "alice", "bob"],
                                           seed=11, clock=clock),
                    server.arena.run_match("aegis", {}, ["bob", "alice"], seed=12, clock=clock),
                ), timeout=60)
            finally:
                for bot in bots:
                    bot.kill()
                for bot in bots:
                    bot.wait(timeout=10)

    outcomes = asyncio.run(main())
    for outcome in outcomes:
        game = outcome.state.game
        assert outcome.state.is_terminal(), f"{game} did not finish"
        assert outcome.faults == [], f"{game}: {[f.to_dict() for f in outcome.faults]}\n{logs(bot_dir)}"
        assert records.replay(outcome.record).results == outcome.state.results(), game
    confirmation, aegis = outcomes
    assert confirmation.seat_names == ("alice", "bob", "alice", "bob")
    assert aegis.results["winner"] in (0, 1)
    for name in ("alice", "bob"):  # each bot printed its Welcome (it had one session)
        assert (bot_dir / f"{name}.log").read_text().count("session ") == 1, logs(bot_dir)


def test_a_bot_written_from_the_doc_starts_as_the_launcher_starts_it(bot_dir):
    """§15: its token the first line of an inherited pipe (--token-fd), the referee at a unix: address
    (a Relay's socket in front of the server's TCP port); the tokens are on no command line."""
    from referee.hosting.relay import Relay

    async def main():
        bots = []
        async with RefereeServer(tokens={"carol": "c-secret", "dave": "d-secret"}) as server, \
                Relay(server.address) as relay:
            try:
                for name in ("carol", "dave"):
                    read_end, write_end = os.pipe()
                    try:
                        bots.append(start_bot(bot_dir, relay.address, name, "--token-fd", str(read_end),
                                              "--seed", "3", pass_fds=(read_end,)))
                    finally:
                        os.close(read_end)
                    with os.fdopen(write_end, "w") as pipe:
                        pipe.write(f"{name[0]}-secret\n")
                outcome = await asyncio.wait_for(server.arena.run_match("aegis", {}, ["carol", "dave"], seed=13), 60)
                return outcome, [bot.args for bot in bots]
            finally:
                for bot in bots:
                    bot.kill()
                for bot in bots:
                    bot.wait(timeout=10)

    outcome, argvs = asyncio.run(main())
    assert outcome.state.is_terminal() and outcome.faults == [], logs(bot_dir)
    assert not any("secret" in word for argv in argvs for word in argv)
