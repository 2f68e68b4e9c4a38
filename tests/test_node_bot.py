"""The Node.js sample bot (sample_bots/node) plays both games against a real referee.

The bot loads its kit's copy of proto/referee/v1/referee.proto at run time with
@grpc/proto-loader, so this also checks that the .proto alone is enough for a
bot in another language. Skipped only when ``node`` is not installed; when
sample_bots/node/node_modules is missing, ``npm ci`` installs the locked
dependencies first (a failing install fails the test).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT

from referee import records
from referee.play.server import RefereeServer
from referee.runner import MAX_FAULT_RECORDS

pytestmark = pytest.mark.e2e

NODE_DIR = ROOT / "sample_bots" / "node"
BOT = NODE_DIR / "bot.js"
INSTALLED = NODE_DIR / "node_modules" / "@grpc" / "grpc-js"  # what `npm ci` installs
VARIANTS = {"double": True, "blind": True, "pairs": True, "rounds": 2}


def install() -> subprocess.CompletedProcess | None:
    """``npm ci`` in sample_bots/node when its packages are missing and npm is here (None: nothing
    to run). conftest.py runs it before workers start: it writes into the repository."""
    npm = shutil.which("npm")
    if npm is None or INSTALLED.is_dir():
        return None
    return subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture(scope="module")
def node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    assert INSTALLED.is_dir() or shutil.which("npm") is not None, \
        "node is installed but npm is not: cannot install sample_bots/node"
    try:
        done = install()
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"npm ci in {NODE_DIR} timed out:\n{err.stdout}\n{err.stderr}")
    assert done is None or done.returncode == 0, f"npm ci in {NODE_DIR} failed:\n{done.stdout}\n{done.stderr}"
    return node


class Bots:
    """Bot processes, each with its output in a log file, all killed at the end."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, argv: list[str]) -> subprocess.Popen:
        with open(self.folder / f"{name}.log", "w") as log:
            proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        self.procs[name] = proc
        return proc

    def node(self, node: str, address: str, name: str, *extra: str) -> subprocess.Popen:
        return self.start(name, [node, str(BOT), "--address", address, "--name", name, "--token", "t", *extra])

    def python_random(self, address: str, name: str, *extra: str) -> subprocess.Popen:
        return self.start(name, [sys.executable, "-m", "sample_bots.random", "--address", address, "--name", name,
                                 *extra])

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text()

    def logs(self) -> str:
        return "\n".join(f"--- {name}\n{self.log(name)}" for name in self.procs)

    def kill(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            proc.wait(timeout=10)


def check(outcome, bots: Bots) -> None:
    game = outcome.state.game
    assert outcome.state.is_terminal(), f"{game} did not finish\n{bots.logs()}"
    assert outcome.faults == [], f"{game}: {[f.to_dict() for f in outcome.faults]}\n{bots.logs()}"
    assert records.replay(outcome.record).results == outcome.state.results(), game


@pytest.fixture(scope="module")
def played(node, tmp_path_factory) -> dict:
    """The three matches, played at the same time on one referee (Node bots given
    --games leave by themselves once their games are over)."""
    bots = Bots(tmp_path_factory.mktemp("node-bots"))

    async def main():
        async with RefereeServer(connect_timeout=15.0) as server:
            address = server.address
            try:
                # (a) a full Confirmation game: four Node processes, one seat each, answering by name
                for i in range(4):
                    bots.node(node, address, f"node{i}", "--games", "1")
                # (b) a full Aegis match: a Node bot answering by index against the Python random bot
                bots.node(node, address, "node-aegis", "--games", "1", "--by-index")
                bots.python_random(address, "py-random", "--seed", "5")
                # (c) the variants: one Node process plays all four seats of one game
                bots.node(node, address, "node-solo", "--capacity", "4", "--games", "4")
                matches = await asyncio.wait_for(asyncio.gather(
                    server.arena.run_match("confirmation", {}, [f"node{i}" for i in range(4)], seed=21),
                    server.arena.run_match("aegis", {}, ["node-aegis", "py-random"], seed=22),
                    server.arena.run_match("confirmation", VARIANTS, ["node-solo"] * 4, seed=23),
                ), timeout=90)
                codes = {}
                for name, proc in bots.procs.items():
                    if name.startswith("node"):
                        try:
                            codes[name] = await asyncio.to_thread(proc.wait, 10)
                        except subprocess.TimeoutExpired:
                            codes[name] = "still running"
                return matches, codes
            finally:
                bots.kill()

    try:
        (confirmation, aegis, variants), codes = asyncio.run(main())
    finally:
        bots.kill()
    return {"confirmation": confirmation, "aegis": aegis, "variants": variants, "codes": codes, "bots": bots}


def test_four_node_bots_play_a_full_confirmation_game(played):
    outcome = played["confirmation"]
    check(outcome, played["bots"])
    assert outcome.seat_names == ("node0", "node1", "node2", "node3")
    assert len(outcome.results["rounds"]) == 8
    assert "teams" not in outcome.results


def test_a_node_bot_plays_a_full_aegis_match_against_the_python_bot(played):
    outcome = played["aegis"]
    check(outcome, played["bots"])
    assert outcome.seat_names == ("node-aegis", "py-random")
    assert outcome.results["winner"] in (0, 1)
    assert max(outcome.results["scores"]) >= 25 or outcome.results["ended_by"] == "called"


def test_the_confirmation_variants_work_with_a_node_bot(played):
    outcome = played["variants"]
    check(outcome, played["bots"])
    assert len(outcome.results["rounds"]) == 2
    assert outcome.results["teams"] == [[0, 2], [1, 3]]
    for summary in outcome.results["rounds"]:  # double: two confirmation phases for every seat
        assert all(len(choices) == 2 for choices in summary["choices"]), summary


def test_node_bots_answer_legally_and_leave_after_their_games(played):
    bots = played["bots"]
    assert played["codes"] == dict.fromkeys(played["codes"], 0), f"exit codes {played['codes']}\n{bots.logs()}"
    assert "policy failed" not in bots.logs() and "the referee played" not in bots.logs(), bots.logs()
    assert "session " in bots.log("node0") and "done after 4 game(s)" in bots.log("node-solo"), bots.logs()


def test_a_node_bot_whose_policy_throws_is_charged_error_faults_not_taken_for_a_weak_bot(node, tmp_path):
    """The Node.js kit, as the Python kit, answers what its policy threw (ActionReply.error): the referee
    plays the first legal action and charges an error fault; the bot plays on (issue 34, item 2)."""
    buggy = tmp_path / "buggy.js"
    buggy.write_text(f"const bot = require({json.dumps(str(BOT))});\n"
                     "bot.POLICIES.aegis = () => { throw new TypeError(\"my bug\"); };\n"
                     "bot.main();\n")
    bots = Bots(tmp_path)

    async def main():
        async with RefereeServer(connect_timeout=15.0) as server:
            try:
                bots.start("buggy", [node, str(buggy), "--address", server.address, "--name", "buggy", "--games", "1"])
                bots.python_random(server.address, "py-random", "--seed", "5")
                return await asyncio.wait_for(server.arena.run_match("aegis", {}, ["buggy", "py-random"], seed=22),
                                              timeout=90)
            finally:
                bots.kill()

    outcome = asyncio.run(main())
    assert outcome.state.is_terminal() and outcome.faults, bots.logs()
    assert {(f.seat, f.kind) for f in outcome.faults} == {(0, "error")}, bots.logs()
    assert outcome.faults[0].detail == "the bot's own code failed: 'TypeError: my bug'"
    counted = outcome.results["faults"][0]["error"]  # every one counted, the first MAX_FAULT_RECORDS kept
    assert counted >= 10 and len(outcome.faults) == min(counted, MAX_FAULT_RECORDS)
    assert "policy failed: TypeError: my bug" in bots.log("buggy")


def test_a_refused_node_bot_exits_with_code_3(node):
    """A wrong token: the Refusal is printed on stderr and the bot exits with 3 (--proto given explicitly)."""
    async def refused():
        async with RefereeServer(tokens={"node": "right"}) as server:
            proc = await asyncio.create_subprocess_exec(
                node, str(BOT), "--address", server.address, "--name", "node", "--token", "wrong",
                "--proto", str(ROOT / "proto" / "referee" / "v1" / "referee.proto"),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            try:
                _, err = await asyncio.wait_for(proc.communicate(), timeout=20)
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            return proc.returncode, err.decode()

    code, err = asyncio.run(refused())
    assert code == 3, err
    assert "refused (BAD_TOKEN)" in err


def test_a_node_bot_reads_its_token_from_a_descriptor_and_plays_through_a_unix_socket(node, tmp_path):
    """As the launcher starts it: --token-fd (a pipe's read end) and --address unix:PATH (a Relay's
    socket in front of the referee); the token is on no command line."""
    from referee.hosting.relay import Relay

    bots = Bots(tmp_path)

    async def main():
        async with RefereeServer(tokens={"node": "s3cret", "py": "other"}) as server, \
                Relay(server.address) as relay:
            read_end, write_end = os.pipe()
            try:
                with open(tmp_path / "node.log", "w") as log:
                    proc = subprocess.Popen([node, str(BOT), "--address", relay.address, "--name", "node",
                                             "--token-fd", str(read_end), "--games", "1"],
                                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, pass_fds=(read_end,))
                bots.procs["node"] = proc
            finally:
                os.close(read_end)
            with os.fdopen(write_end, "w") as pipe:
                pipe.write("s3cret\n")
            bots.python_random(server.address, "py", "--token", "other", "--seed", "6")
            try:
                outcome = await asyncio.wait_for(server.arena.run_match("aegis", {}, ["node", "py"], seed=24), 60)
                code = await asyncio.to_thread(proc.wait, 10)
            finally:
                bots.kill()
            return outcome, code, proc.args

    outcome, code, argv = asyncio.run(main())
    check(outcome, bots)
    assert code == 0, bots.logs()
    assert not any("s3cret" in word for word in argv)


@pytest.mark.parametrize("args, message", [
    (["--token", "t", "--token-fd", "0"], "give --token or --token-fd, not both"),
    (["--token-fd", "97"], "cannot read the token from --token-fd 97: EBADF"),
])
def test_a_node_bot_with_a_bad_token_option_exits_with_code_2(node, args, message):
    done = subprocess.run([node, str(BOT), "--name", "n", *args], capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == message
