"""The tournament-run service without the command line (referee.competition.service): a real
tournament and a gauntlet return their outcome and exit code; the exit code's precedence over
every combination of what a run can leave."""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, write_tournament

from referee.competition import config as tconfig
from referee.competition import gauntlet, service
from referee.competition.service import Ending, Outcome, Withdrawn
from referee.model import Schedule, Stop, TournamentConfig
from referee.model.exits import ExitCode
from referee.results.store import Store

BOTS = "".join(f"""
[[bots]]
name = "{name}"
command = ["python", "-m", "sample_bots.{kind}", "--seed", "{seed}"]
cwd = "{ROOT}"
""" for name, kind, seed in (("r1", "random", 1), ("r2", "random", 2), ("h", "heuristic", 3)))
TABLES = '\n[clock]\ndecision_ms = 2000\nbank_ms = 10000\n\n[limits]\nsandbox = "none"\n'


class Recorder:
    """An observer that keeps what it is told, in order, and runs the work as a plain coroutine."""

    def __init__(self, interrupt: bool = False) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.interrupt = interrupt

    def say(self, line: str) -> None:
        self.events.append(("say", line))

    def started(self, config: TournamentConfig, out: set[str], schedule: Schedule) -> None:
        self.events.append(("started", len(schedule.seatings)))

    def playing(self, config: TournamentConfig, store: Store, schedule: Schedule):
        self.events.append(("playing", len(schedule.seatings)))
        return lambda finished, total, played: self.events.append(("progress", finished, total))

    def watch(self, arena: Any) -> None:
        self.events.append(("watch",))

    def play(self, work: Coroutine[Any, Any, int]) -> int:
        import asyncio  # here: only this observer runs a coroutine

        if self.interrupt:
            work.close()
            raise KeyboardInterrupt
        return asyncio.run(work)


def write(tmp: Path, extra: str = "", tables: str = BOTS) -> Path:
    return write_tournament(tmp / "t.toml", TABLES + tables, game="aegis", deal_sets=1, seed=7, concurrency=2,
                            output=str(tmp / "out"), extra=extra)


@pytest.mark.e2e  # real bot processes
def test_a_tournament_run_by_the_service_returns_its_outcome(tmp_path):
    config = service.prepared(tconfig.load(write(tmp_path)))
    seen = Recorder()
    outcome = service.run_tournament(service.TournamentRequest(config, bootstrap=50), seen)
    assert outcome.exit_code == ExitCode.OK and outcome.ending is Ending.DONE
    total = seen.events[0][1]
    assert total and outcome.played == outcome.saved == total
    assert outcome.standings is not None and {line.name for line in outcome.standings.lines} == {"r1", "r2", "h"}
    assert outcome.bots == {"r1", "r2", "h"} and not outcome.withdrawn and not outcome.incomplete
    assert outcome.seed is None  # given in the file: nothing to print
    kinds = [e[0] for e in seen.events]
    assert kinds[:2] == ["started", "playing"] and "watch" in kinds
    assert ("progress", total, total) in seen.events
    # again: nothing left to play, the same standings
    again = service.run_tournament(service.TournamentRequest(config, bootstrap=50), Recorder())
    assert again.played == 0 and again.saved == total and again.exit_code == ExitCode.OK


def test_an_interrupted_run_says_what_is_saved_and_exits_130(tmp_path):
    config = service.prepared(tconfig.load(write(tmp_path)))
    outcome = service.run_tournament(service.TournamentRequest(config), Recorder(interrupt=True))
    assert outcome.interrupted and outcome.saved == 0 and outcome.exit_code == ExitCode.INTERRUPTED
    Store(tmp_path / "out", create=False).close()  # the lock was let go: the directory opens


@pytest.mark.e2e
def test_an_entry_that_does_not_start_is_withdrawn_exit_5(tmp_path):
    broken = textwrap.dedent("""
    [[bots]]
    name = "broken"
    command = ["python", "-c", "import sys; sys.exit(3)"]
    """)
    config = service.prepared(tconfig.load(write(tmp_path, 'absent = "withdraw"', BOTS + broken)))
    outcome = service.run_tournament(service.TournamentRequest(config, bootstrap=50), Recorder())
    assert [(w.name, w.status) for w in outcome.withdrawn] == [("broken", "did not start")]
    assert outcome.ending is Ending.WITHDRAWN and outcome.exit_code == ExitCode.WITHDRAWN


@pytest.mark.e2e  # real bot processes
def test_a_gauntlet_run_by_the_service_returns_its_verdict(tmp_path):
    path = write(tmp_path, tables='\n[gauntlet]\ncandidate = "h"\n' + BOTS)
    cfg = gauntlet.load(path)
    outcome = service.run_gauntlet(service.GauntletRequest(cfg, bootstrap=50), Recorder())
    assert outcome.verdict is not None and [v.baseline for v in outcome.versus] == ["r1", "r2"]
    assert outcome.worse == outcome.verdict.worse
    assert outcome.exit_code == (ExitCode.CHECK_FAILED if outcome.worse else ExitCode.OK)


# --- the exit code, computed in one place ----------------------------------------------------

UNSETTLED = Stop(rule="max_deal_sets", settled=False, deal_sets=8, matches=96, text="max_deal_sets reached")
SETTLED = Stop(rule="order", settled=True, deal_sets=4, matches=48, text="the order is settled")


@pytest.mark.parametrize("interrupted, incomplete, stop, worse, withdrawn", list(itertools.product(
    (False, True), (False, True), (None, SETTLED, UNSETTLED), (False, True), (False, True))))
def test_the_exit_code_precedence(interrupted, incomplete, stop, worse, withdrawn):
    """Today's precedence, for tournament, gauntlet and ratings alike: interrupted (130), then
    matches missing (4), then an adaptive run's cap before its rule (3), then a gauntlet's
    candidate worse (1), then an entry withdrawn (5); otherwise 0."""
    outcome = Outcome(directory=Path("out"), saved=1, interrupted=interrupted,
                      incomplete={"r1": {"missing": 2, "of": 4}} if incomplete else {}, stop=stop, worse=worse,
                      withdrawn=(Withdrawn("r2", "dead", "it crashed"),) if withdrawn else ())
    expected = (ExitCode.INTERRUPTED if interrupted else ExitCode.INCOMPLETE if incomplete
                else ExitCode.INCONCLUSIVE if stop is UNSETTLED else ExitCode.CHECK_FAILED if worse
                else ExitCode.WITHDRAWN if withdrawn else ExitCode.OK)
    assert outcome.exit_code == expected
    assert service.EXIT_CODES[outcome.ending] == expected
