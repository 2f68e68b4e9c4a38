"""A bot that spins while its match waits its turn takes no CPU from a bot that plays (issue 32).

Under ``isolation = "match"`` the next matches' processes start while others play
(``Executor.play_all`` prepares them ahead), and wait for their turn. A hostile bot
(tests/bots/hostile/waiting.py ``--spin``) keeps a process spinning on CPU 0 from its start; the
victim (``--meter``), pinned to CPU 0 too, plays a match meanwhile and counts, each decision, as far
as 150 ms of wall time let it: the CPU it had. The defence: a waiting match's processes have the
least CPU share (cgroup ``cpu.shares`` :data:`~referee.hosting.sandbox.SHARES_WAITING`) until their
match plays. The same run with the bot calm (``--calm``, the same play: the first legal action) is
the control: the victim must count as far as there, and its results must be the same.

Without the defence (the waiting processes at a playing bot's share) the victim counted about half
as far (``SHARES_WAITING`` set to ``SHARES_PER_SEAT`` by hand: 0.52 of the control; with it: 1.01)."""

from __future__ import annotations

import asyncio
import re
import statistics
import sys
from pathlib import Path

import pytest
from harness import ROOT, require_cgroups, require_sandbox

from referee.model import BotSpec, Isolation, SandboxMode, Seating
from referee.play.executors import LocalExecutor
from referee.runner import Clock

pytestmark = pytest.mark.e2e

WAITING = str(ROOT / "tests" / "bots" / "hostile" / "waiting.py")


def play(logs: Path, mode: str) -> tuple[list[tuple[int, float]], dict, list[float]]:
    """The victim's match (victim against rival) played while the hostile bot's (waiting against
    other) waits its turn, one match at a time: the victim's counts (with when), its match's results,
    and when the hostile bot's spinner began (none for ``--calm``)."""
    bots = [BotSpec("victim", (sys.executable, WAITING, "--meter"), str(ROOT)),
            BotSpec("rival", (sys.executable, "-m", "sample_bots.random", "--seed", "1"), str(ROOT)),
            BotSpec("waiting", (sys.executable, WAITING, mode), str(ROOT)),
            BotSpec("other", (sys.executable, "-m", "sample_bots.random", "--seed", "2"), str(ROOT))]
    seatings = [Seating(0, 100, ("victim", "rival")), Seating(1, 101, ("waiting", "other"))]
    played = []

    async def run() -> None:
        async with LocalExecutor("aegis", {}, Clock(3.0, 10.0), bots, dict.fromkeys((b.name for b in bots), 1),
                                 log_dir=logs, sandbox=SandboxMode.BWRAP, isolation=Isolation.MATCH) as executor:
            await executor.play_all(seatings, 1, played.append)

    asyncio.run(run())
    work = [(int(n), float(t)) for n, t in re.findall(r"^WORK (\d+) (\S+)$", (logs / "victim.log").read_text(), re.M)]
    spun = [float(t) for t in re.findall(r"^SPIN (\S+)$", (logs / "waiting.log").read_text(), re.M)]
    (victims,) = [p for p in played if "victim" in p.seating.lineup]
    return work, victims.results, spun


def test_a_bot_spinning_while_its_match_waits_slows_no_bot_that_plays(tmp_path):
    require_sandbox()
    require_cgroups(cpu=True)
    work, results, spun = play(tmp_path / "attack", "--spin")
    calm, calm_results, none = play(tmp_path / "control", "--calm")
    assert work and calm and not none
    # the attack ran: the spinner was up (its match prepared) while the victim played
    assert spun and any(t > min(spun) for _, t in work), "the hostile bot's match was not waiting meanwhile"
    attacked, control = statistics.median(n for n, _ in work), statistics.median(n for n, _ in calm)
    assert attacked > 0.8 * control, f"the victim counted {attacked / control:.2f} of the control's"
    assert results == calm_results
