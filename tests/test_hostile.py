"""Hostile bots, as real processes over real gRPC: each misbehaviour costs the
bot that commits it, and nobody else.

Every case plays a small Aegis match list (hostile vs good, and good vs good
as a control whose results must not change) through an in-process referee.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from referee.runner import Clock
from referee.server import RefereeServer

BOT = Path(__file__).parent / "bots" / "proto_bot.py"
TOKENS = {"good1": "t1", "good2": "t2", "evil": "t3"}


def start(address, name, *args, token=None):
    return subprocess.Popen([sys.executable, str(BOT), "--address", address, "--name", name,
                             "--token", TOKENS[name] if token is None else token, "--seed", "5", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def play(evil_args, evil_token=None, clock=Clock(0.5, 1.0), connect_timeout=3.0):
    """Matches: evil v good1, good1 v evil, good1 v good2 (the control)."""
    async def main():
        async with RefereeServer(tokens=TOKENS, connect_timeout=connect_timeout) as server:
            procs = [start(server.address, "good1", "--capacity", "4"),
                     start(server.address, "good2", "--capacity", "4")]
            if evil_args is not None:
                procs.append(start(server.address, "evil", "--capacity", "4", *evil_args, token=evil_token))
            try:
                before = rss_kb()
                control = await server.arena.run_match("aegis", {}, ["good1", "good2"], seed=8, clock=clock,
                                                       game_id="control")
                hostile = [await server.arena.run_match("aegis", {}, lineup, seed=8, clock=clock, game_id=gid)
                           for gid, lineup in (("h1", ["evil", "good1"]), ("h2", ["good1", "evil"]))]
                return control, hostile, rss_kb() - before, server.arena
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
    return asyncio.run(main())


@pytest.fixture(scope="module")
def reference():
    control, _, _, _ = play(["--mode", "random"])
    return control


CASES = {
    "crash at start": (["--mode", "crashstart"], None, {"no_session"}),
    "crash mid-game": (["--mode", "crash", "--after", "3"], None, {"disconnect", "no_session"}),
    "hang forever": (["--mode", "hang", "--after", "2"], None, {"timeout"}),
    "answer after the deadline": (["--mode", "late", "--after", "1", "--sleep", "0.9"], None, {"timeout"}),
    "illegal actions": (["--mode", "illegal"], None, {"illegal"}),
    "garbage bytes": (["--mode", "rawgarbage"], None, {"disconnect", "no_session"}),
    "another seat's request": (["--mode", "otherseat", "--after", "1"], None, {"wrong_id"}),
    "another game's request": (["--mode", "othergame", "--after", "1"], None, {"wrong_id"}),
    # the flood delays the flooder's own answers too
    "flood of messages": (["--mode", "flood", "--flood", "3000"], None, {"wrong_id", "timeout"}),
    # its idle sessions get seats and time out; its playing session is refused, so it may have none,
    # and then the bot exits: the seats its idle sessions held are lost with them
    "many sessions": (["--mode", "sessions", "--flood", "60"], None, {"timeout", "no_session", "disconnect"}),
    "wrong token": (["--mode", "random"], "nope", {"no_session"}),
    "another bot's token": (["--mode", "random"], "t1", {"no_session"}),
    "disconnect and reconnect": (["--mode", "reconnect", "--after", "3"], None, {"disconnect"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_bot_is_charged_and_harms_nobody(case, reference):
    args, token, kinds = CASES[case]
    control, hostile, grown_kb, arena = play(args, token)
    # the control match between the two good bots is exactly what it is without the hostile bot
    assert control.state.actions == reference.state.actions and control.faults == []
    charged = set()
    for out in hostile:
        assert out.state.is_terminal()
        evil = out.seat_names.index("evil")
        good = 1 - evil
        assert sum(out.results["faults"][good].values()) == 0, out.faults
        charged |= {k for k, n in out.results["faults"][evil].items() if n}
    assert charged and charged <= kinds, (charged, [out.faults for out in hostile])
    assert grown_kb < 64 * 1024, f"the referee grew by {grown_kb} KB"
    if case == "many sessions":
        assert len(arena.sessions.get("evil", [])) <= arena.max_sessions_per_bot
