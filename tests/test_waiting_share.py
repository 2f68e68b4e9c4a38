"""A bot that spins while its match waits its turn takes no CPU from a bot that plays (issue 32).

Under ``isolation = "match"`` the next matches' processes start while others play
(``Executor.play_all`` prepares them ahead), and wait for their turn. A hostile bot
(tests/bots/hostile/waiting.py ``--spin``) keeps a process spinning on CPU 0 from its start, counting
as it spins; the victim (``--meter``), pinned to CPU 0 too, plays a match meanwhile and counts, each
decision, as far as 150 ms of wall time let it. Over the same moments on the same CPU, how far each
counted is its share of that CPU, whatever else runs there (other tests, other workers). The
defence: a waiting match's processes have the least CPU share (cgroup ``cpu.shares``
:data:`~referee.hosting.sandbox.SHARES_WAITING`) until their match plays. The same run with the bot
calm (``--calm``, the same play: the first legal action) is the control: the victim's results must
be the same.

Without the defence (``SHARES_WAITING`` set to ``SHARES_PER_SEAT`` by hand) the spinner counted
1.08 as fast as the victim while the victim decided; with it, 0.012 on an idle machine, and nothing
beside a process spinning elsewhere (there it could not even start its interpreter meanwhile)."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

import pytest
from harness import ROOT, require_cgroups, require_sandbox

from referee.model import BotSpec, Isolation, SandboxMode, Seating
from referee.play.executors import LocalExecutor
from referee.runner import Clock

pytestmark = pytest.mark.e2e

WAITING = str(ROOT / "tests" / "bots" / "hostile" / "waiting.py")
Counted = tuple[int, float, float]  # how far a process counted, from when to when (Unix times)


def counted(log: Path, word: str) -> list[Counted]:
    return [(int(n), float(a), float(b)) for n, a, b in re.findall(rf"^{word} (\d+) (\S+) (\S+)$", log.read_text(),
                                                                  re.M)]


def play(logs: Path, mode: str) -> tuple[list[Counted], dict, list[Counted], dict[str, tuple[float, bool]]]:
    """The victim's match (victim against rival) played while the hostile bot's (waiting against
    other) waits its turn, one match at a time: the victim's counts, its match's results, the
    spinner's counts (none for ``--calm``), and when each bot's process was started (Unix time) and
    whether it was to wait for its match's turn."""
    bots = [BotSpec("victim", (sys.executable, WAITING, "--meter"), str(ROOT)),
            BotSpec("rival", (sys.executable, "-m", "sample_bots.random", "--seed", "1"), str(ROOT)),
            BotSpec("waiting", (sys.executable, WAITING, mode), str(ROOT)),
            BotSpec("other", (sys.executable, "-m", "sample_bots.random", "--seed", "2"), str(ROOT))]
    seatings = [Seating(0, 100, ("victim", "rival")), Seating(1, 101, ("waiting", "other"))]
    played = []
    started: dict[str, tuple[float, bool]] = {}

    async def run() -> None:
        async with LocalExecutor("aegis", {}, Clock(3.0, 10.0), bots, dict.fromkeys((b.name for b in bots), 1),
                                 log_dir=logs, sandbox=SandboxMode.BWRAP, isolation=Isolation.MATCH) as executor:
            launcher = executor.launcher
            start = launcher.start_for_match

            def noted(bot: str, *args: object, waiting: bool = False) -> None:
                started[bot] = (time.time(), waiting)
                start(bot, *args, waiting=waiting)

            launcher.start_for_match = noted
            await executor.play_all(seatings, 1, played.append)

    asyncio.run(run())
    (victims,) = [p for p in played if "victim" in p.seating.lineup]
    return counted(logs / "victim.log", "WORK"), victims.results, counted(logs / "waiting.log", "SPIN"), started


def rate(counts: list[Counted]) -> float:
    return sum(n for n, _, _ in counts) / sum(b - a for _, a, b in counts)


def during(spins: list[Counted], work: list[Counted]) -> tuple[float, float]:
    """How fast the spinner counted while the victim decided, and for how long it was up meanwhile: each
    of its counts taken in the share of its time that falls in the victim's decisions (a spinner starved
    of CPU counts a little, then nothing until long after)."""
    counted = seconds = 0.0
    for n, a, b in spins:
        overlap = sum(max(0.0, min(b, w1) - max(a, w0)) for _, w0, w1 in work)
        if overlap > 0:
            counted += n * overlap / (b - a)
            seconds += overlap
    return (counted / seconds if seconds else 0.0), seconds


def test_a_bot_spinning_while_its_match_waits_slows_no_bot_that_plays(tmp_path):
    require_sandbox()
    require_cgroups(cpu=True)
    work, results, spins, started = play(tmp_path / "attack", "--spin")
    calm, calm_results, none, _ = play(tmp_path / "control", "--calm")
    assert work and calm and spins and not none
    # the attack ran: the hostile bot's process was started, to wait its turn, while the victim played
    when, waiting = started["waiting"]
    assert waiting and when < max(end for _, _, end in work), "the hostile bot's match did not wait meanwhile"
    # the spinner's counts while the victim decided: the same moments, the same CPU. A spinner that got
    # no CPU meanwhile (not even to start its interpreter: a loaded machine) took none from the victim.
    spinner, seconds = during(spins, work)
    if seconds > 0.5:
        assert spinner < 0.1 * rate(work), f"the spinner counted {spinner / rate(work):.2f} as fast as the victim"
    assert results == calm_results
