"""The run service without the command line (referee.competition.service): a real tournament, a
gauntlet and an SPRT return their outcome and exit code; the exit code's precedence over every
combination of what a run can leave."""

from __future__ import annotations

import asyncio
import dataclasses
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
from referee.competition.sprt import setup as sprt_setup
from referee.competition.sprt.setup import SprtSetup
from referee.competition.sprt.units import Tally
from referee.model import BotSpec, Played, Schedule, Stop, TournamentConfig
from referee.model.exits import ExitCode
from referee.results.store import Store
from referee.stats.sprt import SPRT, EloModel, Verdict

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
    assert outcome.worse is bool(outcome.verdict.worse)
    assert outcome.exit_code == (ExitCode.CHECK_FAILED if outcome.worse else ExitCode.OK)


# --- an SPRT -----------------------------------------------------------------------------------

HEURISTIC = BotSpec("h", ("python", "-m", "sample_bots.heuristic"), cwd=str(ROOT))
WEAK = BotSpec("w", ("python", "-m", "sample_bots.weakened", "--noise", "0.9", "--seed", "2"), cwd=str(ROOT))


class SprtRecorder:
    """An SPRT observer that keeps what it is told, in order, and runs the units as a plain coroutine;
    ``stop_after``: cancels the run once that many units are counted, as Ctrl-C does (a KeyboardInterrupt
    once the run's cleanup ran)."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.stop_after = stop_after
        self.task: asyncio.Task[Any] | None = None

    def say(self, line: str) -> None:
        self.events.append(("say", line))

    def started(self, setup: SprtSetup, test: SPRT) -> None:
        self.events.append(("started", setup.candidate.name, test.lower, test.upper))

    def counted(self, tally: Tally) -> None:
        self.events.append(("counted", tally.sprt.n, tally.verdict))
        if self.stop_after is not None and tally.sprt.n >= self.stop_after and self.task is not None:
            self.task.cancel()

    def played(self, number: int | None, match: Played) -> None:
        self.events.append(("played", number, match.seating.key))

    def play(self, work: Coroutine[Any, Any, Verdict]) -> Verdict:
        async def main() -> Verdict:
            self.task = asyncio.current_task()
            return await work

        try:
            return asyncio.run(main())
        except asyncio.CancelledError:
            raise KeyboardInterrupt from None

    def of(self, kind: str) -> list[tuple[Any, ...]]:
        return [e[1:] for e in self.events if e[0] == kind]


def sprt_of(candidate: BotSpec, baseline: BotSpec, output: Path | None = None, max_units: int = 40) -> SprtSetup:
    """Wide hypotheses (0 against 200 logistic Elo) and wide errors: the heuristic bot against the
    weakened one settles in a few units."""
    setup = sprt_setup.from_options("aegis", candidate, baseline, 7,
                                    hypotheses=sprt_setup.Hypotheses(0.0, 200.0, None, EloModel.LOGISTIC),
                                    decision_ms=2000, alpha=0.2, beta=0.2, max_units=max_units, output=output)
    return dataclasses.replace(setup, sandbox="none")


def test_an_sprt_run_by_the_service_accepts_h1_and_resumes_from_its_store(tmp_path):
    seen = SprtRecorder()
    request = service.SprtRequest(sprt_of(HEURISTIC, WEAK, tmp_path / "out"))
    outcome = service.run_sprt(request, seen)
    assert outcome.sprt is Verdict.H1 and outcome.ending is Ending.DONE and outcome.exit_code == ExitCode.H1_ACCEPTED
    report = outcome.report
    assert report is not None and report["verdict"] == "H1" and report["conclusion"] == "stronger"
    units = report["units"]
    assert seen.events[0][:2] == ("started", "h") and seen.events[0][2] < 0 < seen.events[0][3]
    # every unit counted in order, the verdict with the last; every match told with its number in the store
    assert seen.of("counted") == [(n, None) for n in range(1, units)] + [(units, Verdict.H1)]
    # (two matches at once: one of the unit after the verdict's may have finished too, and is saved)
    assert outcome.played == outcome.saved == len(seen.of("played")) >= 2 * units
    store = Store(tmp_path / "out", create=False)
    numbers = store.numbers()
    store.close()
    assert [number for number, _ in seen.of("played")] == list(range(1, outcome.saved + 1))
    assert all(numbers[key] == number for number, key in seen.of("played"))
    assert outcome.directory == tmp_path / "out" and not outcome.interrupted
    # again: the stored matches are counted, none played, the same verdict
    again = service.run_sprt(request, resumed := SprtRecorder())
    assert again.sprt is Verdict.H1 and again.played == 0 and again.saved == outcome.saved
    assert not resumed.of("played") and again.report is not None and again.report["units"] == units


def test_an_sprt_run_by_the_service_accepts_h0_exit_1(tmp_path):
    seen = SprtRecorder()
    outcome = service.run_sprt(service.SprtRequest(sprt_of(WEAK, HEURISTIC)), seen)
    assert outcome.sprt is Verdict.H0 and outcome.ending is Ending.H0_ACCEPTED
    assert outcome.exit_code == ExitCode.H0_ACCEPTED == 1
    assert outcome.report is not None and outcome.report["conclusion"] == "not stronger"
    # without an output directory: nothing saved, the matches numbered in the order this run played them
    assert outcome.directory is None and outcome.saved == 0
    assert [number for number, _ in seen.of("played")] == list(range(1, outcome.played + 1))
    assert outcome.played >= 2 * outcome.report["units"]


def test_an_interrupted_sprt_reports_the_units_counted_and_exits_130(tmp_path):
    seen = SprtRecorder(stop_after=2)
    outcome = service.run_sprt(service.SprtRequest(sprt_of(HEURISTIC, WEAK, tmp_path / "out", max_units=100)),
                               seen)
    assert outcome.interrupted and outcome.sprt is Verdict.INTERRUPTED
    assert outcome.ending is Ending.INTERRUPTED and outcome.exit_code == ExitCode.INTERRUPTED == 130
    report = outcome.report
    assert report is not None and report["verdict"] == "interrupted" and report["units"] >= 2
    assert report["conclusion"] == "no verdict: interrupted"
    store = Store(tmp_path / "out", create=False)  # the lock was let go; what was played is kept
    try:
        assert store.count() == outcome.saved >= 2 * report["units"]
    finally:
        store.close()


def test_an_sprt_interrupted_before_it_starts_exits_130():
    class Interrupt(SprtRecorder):
        def play(self, work: Coroutine[Any, Any, Verdict]) -> Verdict:
            work.close()
            raise KeyboardInterrupt

    outcome = service.run_sprt(service.SprtRequest(sprt_of(HEURISTIC, WEAK)), Interrupt())
    assert outcome.exit_code == ExitCode.INTERRUPTED and outcome.played == 0
    assert outcome.report is not None and outcome.report["units"] == 0


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


@pytest.mark.parametrize("verdict, ending, code", [
    (Verdict.H1, Ending.DONE, 0), (Verdict.H0, Ending.H0_ACCEPTED, 1),
    (Verdict.INCONCLUSIVE, Ending.INCONCLUSIVE, 3), (Verdict.INTERRUPTED, Ending.INTERRUPTED, 130)])
def test_an_sprt_verdict_decides_its_exit_code(verdict, ending, code):
    """``referee sprt``'s codes (docs/regression.md), through the same ending as the other runs."""
    outcome = Outcome(directory=None, saved=0, sprt=verdict)
    assert outcome.ending is ending and outcome.exit_code == code
