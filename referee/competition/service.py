"""The run of a tournament, a gauntlet or an SPRT as one service: a request in, an outcome out.

A front end (the ``referee`` command, a web server) builds a request from what it was given,
calls :func:`run_tournament` or :func:`run_gauntlet` with an :class:`Observer` (what to say as the
run goes, how to show its progress, how to run its matches' coroutine), or :func:`run_sprt` with an
:class:`SprtObserver`, and gets back an :class:`Outcome`: a frozen value whose
:attr:`Outcome.exit_code` is computed here, in one place, from what the run left (interrupted,
incomplete, inconclusive, the candidate worse or the SPRT's H0 accepted, withdrawn). The front end
prints the outcome as it prints; the service imports no front end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from referee.competition import adaptive, gauntlet, run
from referee.competition.gauntlet import GauntletConfig, Verdict, Versus
from referee.competition.run import Plan, Progress
from referee.competition.sprt import report as sprt_report
from referee.competition.sprt import run as sprt_run
from referee.competition.sprt.setup import SprtSetup
from referee.competition.sprt.units import Tally
from referee.hosting import versions
from referee.model import ConfigError, EntryStatus, Played, Schedule, Stop, TournamentConfig
from referee.model.exits import ExitCode
from referee.results import history, rounds, standings
from referee.results.pool import Pool, content_hash
from referee.results.release import held_in
from referee.results.standings import Standings
from referee.results.store import Store
from referee.stats import sprt as sprt_stats


class Observer(Protocol):
    """What a front end is told as a run goes, and how it runs the matches."""

    def say(self, line: str) -> None:
        """An announcement (the ``referee`` command: a line on standard error)."""

    def started(self, config: TournamentConfig, out: set[str], schedule: Schedule) -> None:
        """The store is claimed: the entries out for good, and the schedule of the others."""

    def playing(self, config: TournamentConfig, store: Store, schedule: Schedule) -> Progress:
        """The matches are about to be played (``schedule``: of the entries in play); returns what is
        told the progress (finished, total, the match just played)."""

    def watch(self, arena: Any) -> None:
        """The executor's arena, once it is open (a live page watches its matches)."""

    def play(self, work: Coroutine[Any, Any, int]) -> int:
        """Run the matches' coroutine to its end and return what it returns (how many were played);
        a KeyboardInterrupt stops the run (what finished is saved)."""


class SprtObserver(Protocol):
    """What a front end is told as an SPRT goes, and how it runs the units."""

    def say(self, line: str) -> None:
        """An announcement (the ``referee`` command: a line on standard error)."""

    def started(self, setup: SprtSetup, test: sprt_stats.SPRT) -> None:
        """The store (if any) is claimed and the test is set up (``test``: its hypotheses and bounds)."""

    def counted(self, tally: Tally) -> None:
        """A unit was counted (units are counted in order; after the verdict, none)."""

    def played(self, number: int | None, match: Played) -> None:
        """A match was played, and saved with an output directory: ``number`` is its number in the
        store, or without one how many matches this run played."""

    def play(self, work: Coroutine[Any, Any, sprt_stats.Verdict]) -> sprt_stats.Verdict:
        """Run the units' coroutine to its end and return its verdict; a KeyboardInterrupt stops the
        test (the units counted are reported)."""


@dataclass(frozen=True)
class Withdrawn:
    """An entry out of the run: it did not start, or died for good (absent = "withdraw")."""

    name: str
    status: EntryStatus
    why: str | None


@dataclass(frozen=True)
class MasterSeed:
    """The master seed as the run may print it: ``held`` (why it is not printed: records are held)
    or the seed and the later seeds that dealt something (first deal set, seed)."""

    seed: int
    held: str | None = None
    later: tuple[tuple[int, int], ...] = ()


class Ending(Enum):
    """What decides a run's exit code, in the order the first that applies decides."""

    INTERRUPTED = "interrupted"
    INCOMPLETE = "incomplete"
    INCONCLUSIVE = "inconclusive"
    WORSE = "worse"
    H0_ACCEPTED = "H0 accepted"
    WITHDRAWN = "withdrawn"
    DONE = "done"


#: each ending's exit code
EXIT_CODES: Mapping[Ending, ExitCode] = {
    Ending.INTERRUPTED: ExitCode.INTERRUPTED,
    Ending.INCOMPLETE: ExitCode.INCOMPLETE,
    Ending.INCONCLUSIVE: ExitCode.INCONCLUSIVE,
    Ending.WORSE: ExitCode.CHECK_FAILED,
    Ending.H0_ACCEPTED: ExitCode.H0_ACCEPTED,
    Ending.WITHDRAWN: ExitCode.WITHDRAWN,
    Ending.DONE: ExitCode.OK,
}


@dataclass(frozen=True)
class Outcome:
    """What a run left. ``directory``: its results (None: an SPRT without one); ``saved``: the
    matches stored; ``played``: how many this run played; ``incomplete``: the bots that died for
    good and did not play all their matches (how many they missed, of how many); ``withdrawn``: the
    entries out (did not start, dead); ``stop``: an adaptive run's stop; ``standings``: None when no
    match is stored, or the anchor is in no match (``bots``: the bots in the stored matches);
    ``worse``: a gauntlet's candidate is worse than a baseline at the confidence asked; ``sprt``:
    an SPRT's verdict (H1 or H0 accepted, inconclusive at the cap, interrupted) and ``report`` its
    report (:func:`referee.competition.sprt.report.summary`, JSON-ready)."""

    directory: Path | None
    saved: int
    interrupted: bool = False
    played: int = 0
    seed: MasterSeed | None = None
    stop: Stop | None = None
    standings: Standings | None = None
    bots: frozenset[str] = frozenset()
    incomplete: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    withdrawn: tuple[Withdrawn, ...] = ()
    worse: bool = False
    versus: tuple[Versus, ...] = ()
    verdict: Verdict | None = None
    sprt: sprt_stats.Verdict | None = None
    report: Mapping[str, Any] | None = None

    @property
    def ending(self) -> Ending:
        """What decides the exit code: interrupted, then missing matches (incomplete), then an
        adaptive run's cap reached before its rule or an SPRT's before its verdict (inconclusive),
        then a gauntlet's candidate worse, then an SPRT's H0 accepted, then an entry withdrawn."""
        if self.interrupted or self.sprt is sprt_stats.Verdict.INTERRUPTED:
            return Ending.INTERRUPTED
        if self.incomplete:
            return Ending.INCOMPLETE
        if adaptive.inconclusive(self.stop) or self.sprt is sprt_stats.Verdict.INCONCLUSIVE:
            return Ending.INCONCLUSIVE
        if self.worse:
            return Ending.WORSE
        if self.sprt is sprt_stats.Verdict.H0:
            return Ending.H0_ACCEPTED
        if self.withdrawn:
            return Ending.WITHDRAWN
        return Ending.DONE

    @property
    def exit_code(self) -> ExitCode:
        return EXIT_CODES[self.ending]


@dataclass(frozen=True)
class TournamentRequest:
    """A tournament to run: its configuration as loaded, the bots whose stored matches are dropped
    (``rerun``), a remote referee (``server``, ``admin_token``), the standings' ``anchor`` and
    ``bootstrap``."""

    config: TournamentConfig
    rerun: tuple[str, ...] = ()
    server: str | None = None
    admin_token: str | None = None
    anchor: tuple[str, float] | None = None
    bootstrap: int = 1000


@dataclass(frozen=True)
class GauntletRequest:
    """A gauntlet to run: as :class:`TournamentRequest`, and the verdict's ``confidence``."""

    config: GauntletConfig
    rerun: tuple[str, ...] = ()
    server: str | None = None
    admin_token: str | None = None
    anchor: tuple[str, float] | None = None
    bootstrap: int = 1000
    confidence: float = 0.95


@dataclass(frozen=True)
class SprtRequest:
    """An SPRT to run: its set-up (from a file, options, or both), the bots whose stored matches are
    dropped (``rerun``, with an output directory), a remote referee (``server``, ``admin_token``)."""

    setup: SprtSetup
    rerun: tuple[str, ...] = ()
    server: str | None = None
    admin_token: str | None = None
    #: ``--pool``: a reference pool whose bot the baseline is; the report gives the candidate's rating on its scale
    pool: Pool | None = None


def prepared(config: TournamentConfig, executor: Callable[[Any], Any] | None = None) -> TournamentConfig:
    """The configuration a run plays: the seed its directory holds when the file's was drawn
    (:func:`run.with_stored_seed`), and the executor the front end chose (``executor``: the
    file's executor to the one to use)."""
    config = run.with_stored_seed(config)
    return config if executor is None else dataclasses.replace(config, executor=executor(config.executor))


def run_tournament(request: TournamentRequest, observer: Observer) -> Outcome:
    """Run a tournament (a round robin, or adaptive) and return its outcome."""
    config = request.config
    no_anchor_with_pool(config, request.anchor)
    store = run.open_store(config, request.rerun, announce=observer.say)  # the directory's lock: one run at a time
    try:
        plan = run.planner(config, store)
        out = run.out_for_good(store)
        observer.started(config, out, plan(out))
        return _played(config, plan, store, request, observer)
    finally:
        store.close()


def run_gauntlet(request: GauntletRequest, observer: Observer) -> Outcome:
    """Run a gauntlet (its candidate against every baseline) and return its outcome, verdict included."""
    cfg = request.config
    no_anchor_with_pool(cfg.tournament, request.anchor)
    store = gauntlet.open_store(cfg, request.rerun, announce=observer.say)  # the directory's lock: one run at a time
    try:
        plan = gauntlet.planner(cfg, store)
        out = run.out_for_good(store)
        observer.started(cfg.tournament, out, plan(out))
        outcome = _played(cfg.tournament, plan, store, request, observer)
        if outcome.standings is None:
            return outcome
        rows = list(store.matches())
        against = gauntlet.versus(cfg.game, rows, cfg.candidate, bootstrap=request.bootstrap,
                                  confidence=request.confidence)
        verdict = gauntlet.verdict(cfg.candidate, against, request.confidence)
        return dataclasses.replace(outcome, versus=tuple(against), verdict=verdict, worse=bool(verdict.worse))
    finally:
        store.close()


def no_anchor_with_pool(config: TournamentConfig, anchor: tuple[str, float] | None) -> None:
    """A ConfigError (exit 2, before anything is written) for an anchor given to a run whose file has a
    ``[pool]``: its ratings are on the pool's scale (docs/pool.md)."""
    if anchor is not None and config.pool is not None:
        raise ConfigError(f"--anchor {anchor[0]}={anchor[1]:g}: {config.source or 'the tournament file'} has a "
                          f"[pool], whose scale its ratings are on: leave --anchor out, or the [pool] table")


def run_sprt(request: SprtRequest, observer: SprtObserver) -> Outcome:
    """Run an SPRT (units until a verdict, or its cap) and return its outcome, its verdict and report
    included; interrupted, the report covers the units counted."""
    setup = request.setup
    store = sprt_run.open_store(setup, request.rerun, announce=observer.say)  # with --output: one run at a time
    try:
        tally = Tally(sprt_stats.SPRT(setup.elo0, setup.elo1, setup.alpha, setup.beta, model=setup.elo_model))
        observer.started(setup, tally.sprt)
        played = _Numbered(store, observer)
        work = sprt_run.run(setup, tally, observer.counted, store=store, server=request.server,
                            admin_token=request.admin_token, on_match=played, announce=observer.say)
        try:
            verdict = observer.play(work)
        except KeyboardInterrupt:
            verdict = sprt_stats.Verdict.INTERRUPTED
        saved = store.count() if store is not None else 0
        report = sprt_report.summary(setup, tally, verdict)
        if request.pool is not None:
            report["anchored"] = sprt_report.on_pool(setup, tally, request.pool, _baseline_version(setup, store))
    finally:
        if store is not None:
            store.close()
    return Outcome(directory=setup.output if store is not None else None, saved=saved,
                   interrupted=verdict is sprt_stats.Verdict.INTERRUPTED, played=played.count, sprt=verdict,
                   report=report)


def _baseline_version(setup: SprtSetup, store: Store | None) -> str | None:
    """The content hash of the SPRT's baseline (:func:`referee.results.pool.content_hash`): as its store
    recorded it, or without one as its files are now (None: no version, or files that make none)."""
    if store is not None:
        recorded = store.recorded_versions().get(setup.baseline.name)
    else:
        try:
            recorded = versions.of(setup.baseline, [*setup.hidden(), *versions.apart(setup.baseline,
                                                                                     [setup.candidate])])
        except ConfigError:  # files that make no version (VersionRefused): the test's results stand
            recorded = None
    return content_hash(recorded) if recorded else None


class _Numbered:
    """Tells the observer of each match an SPRT plays, with its number: the store's, or without one
    how many this run played (``count``)."""

    def __init__(self, store: Store | None, observer: SprtObserver) -> None:
        self.store, self.observer, self.count = store, observer, 0

    def __call__(self, match: Played) -> None:
        self.count += 1
        self.observer.played(self.store.number(match.seating.key) if self.store is not None else self.count, match)


def _played(config: TournamentConfig, plan: Plan, store: Store, request: TournamentRequest | GauntletRequest,
            observer: Observer) -> Outcome:
    """Play what the store lacks of the schedule, then what the run left."""
    progress = observer.playing(config, store, plan(run.out_for_good(store)))
    work = run.play_schedule(config, plan, store, progress=progress, server=request.server,
                             admin_token=request.admin_token, announce=observer.say,
                             watch=observer.watch)
    try:
        played = observer.play(work)
    except KeyboardInterrupt:
        return Outcome(directory=store.directory, saved=store.count(), interrupted=True)
    return dataclasses.replace(outcome_of(store), played=played, seed=_seed(config, store),
                               **_standings(store, plan, request.anchor, request.bootstrap))


def outcome_of(store: Store) -> Outcome:
    """What a results directory holds, as an outcome, its standings left out."""
    withdrawn = tuple(Withdrawn(e.name, e.status, e.why) for e in store.entries()
                      if e.status in (EntryStatus.DID_NOT_START, EntryStatus.DEAD))
    return Outcome(directory=store.directory, saved=store.count(), stop=rounds.stop_of(store),
                   incomplete=store.incomplete(), withdrawn=withdrawn)


def _standings(store: Store, plan: Plan, anchor: tuple[str, float] | None, bootstrap: int) -> dict[str, Any]:
    """The standings of the stored matches (None: none stored, or the anchor in none) and their bots."""
    rows = list(store.matches())
    bots = frozenset(b for r in rows for b in r.lineup)
    if not rows or (anchor is not None and anchor[0] not in bots):
        return {"standings": None, "bots": bots}
    played = plan(set(store.out()))  # without the entries that did not start, if any
    notes = [f"schedule: {played.note}; {len(played.seatings)} match(es)"]
    st = standings.of_store(store, rows, anchor=anchor, bootstrap=bootstrap, notes=notes)
    history.record(store, st)  # each entry's current version and its rating: the directory's history
    return {"standings": st, "bots": bots}


def _seed(config: TournamentConfig, store: Store) -> MasterSeed | None:
    """The master seed as the run may print it: None when the file gives it."""
    if not config.seed_drawn:
        return None
    if not store.seed_released():
        return MasterSeed(config.seed, held=held_in(store).reason())
    dealt = store.deal_sets_dealt()  # a later seed that dealt nothing yet stays secret, for its deal sets
    later = tuple((first, seed) for first, seed in config.with_deals(store.config()).later_seeds if first < dealt)
    return MasterSeed(config.seed, later=later)
