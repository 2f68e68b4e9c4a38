"""Playing the units of an SPRT until a verdict or the cap, and the store that keeps them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from referee.competition.run import host_account, snapshots_wanted
from referee.competition.sprt.setup import SprtSetup
from referee.competition.sprt.units import Tally, make_unit, unit_lineups
from referee.files import WriteFailed
from referee.model import Played, Seating, deal_seed
from referee.play.executors import BotsDead, executor_for, seat_capacity
from referee.results.store import MetaKey, Store
from referee.stats.sprt import Verdict


class SprtError(RuntimeError):
    """An SPRT that cannot go on (a bot that never came to play)."""


def open_store(setup: SprtSetup, rerun: Sequence[str] = (),
               announce: Callable[[str], None] | None = None) -> Store | None:
    """The output directory's store (none without one), bound to this SPRT (refuses another's, or
    a bot changed since its matches were stored unless it is in ``rerun``: its matches are dropped)."""
    if setup.output is None:
        return None
    store = Store(setup.output)
    try:  # the directory's lock: one run at a time
        store.claim(setup.fingerprint(), setup.describe(), [setup.candidate, setup.baseline], rerun, announce,
                    hide=setup.hidden(), snapshot=snapshots_wanted(setup.sandbox, setup.executor))
    except BaseException:
        store.close()
        raise
    return store


async def run(setup: SprtSetup, tally: Tally, progress: Callable[[Tally], None] | None = None,
              store: Any = None, server: str | None = None, admin_token: str | None = None,
              connect_timeout: float = 30.0, on_match: Callable[[Any], None] | None = None,
              announce: Callable[[str], None] | None = None) -> Verdict:
    """Play units (``setup.concurrency`` matches at a time, units started in order) until a
    verdict or ``setup.max_units``; returns H1, H0 or inconclusive. ``tally`` holds what was
    counted even if this is interrupted. With a ``store``, every match is saved and matches
    already in it are not played again (a run resumes where it stopped). ``on_match`` is told of
    every match played (a :class:`~referee.play.executors.Played`), once saved. A unit's
    records reach the referee's spectators once both its matches are played."""
    c, b = setup.candidate.name, setup.baseline.name
    lineups = unit_lineups(setup.game, c, b)

    def seating(k: int, j: int) -> Seating:
        return Seating(k, deal_seed(setup.seed, k), lineups[j])

    stored = {row.key: row.results for row in store.matches()} if store is not None else {}
    finished: dict[int, list[Mapping[str, Any] | None]] = {}
    counted = 0

    def record(s: Seating, results: Mapping[str, Any]) -> bool:
        """Count one match; True once the test is over (a verdict, or max_units counted)."""
        nonlocal counted
        k, j = s.deal_set, lineups.index(s.lineup)
        for seat, counts in enumerate(results.get("faults") or []):
            if counts.get("no_session"):
                raise SprtError(f"bot {s.lineup[seat]!r} did not come to play (no session within "
                                f"{connect_timeout:g} s): check its command and its log")
        finished.setdefault(k, [None] * len(lineups))[j] = results
        while counted in finished and all(r is not None for r in finished[counted]):
            both = [r for r in finished.pop(counted) if r is not None]  # all of them, as checked
            unit = make_unit(setup.game, counted, lineups, both, c, b)
            counted += 1
            verdict = tally.add(unit)
            if progress:
                progress(tally)
            if verdict is not None or counted >= setup.max_units:
                return True
        return False

    over = False

    def to_play() -> Iterator[Seating]:
        """The units' matches in order; those already stored are counted, not played."""
        nonlocal over
        for k in range(setup.max_units):
            for j in range(len(lineups)):
                s = seating(k, j)
                if s.key not in stored:
                    yield s
                elif record(s, stored[s.key]):
                    over = True
                if over:
                    return

    done = set(stored)  # keys of the matches stored, by this run or an earlier one

    def played(p: Played) -> bool:
        nonlocal over
        if store is not None:
            store.save_played(p)
        if on_match:
            on_match(p)
        done.add(p.seating.key)
        unit = [seating(p.seating.deal_set, j).key for j in range(len(lineups))]
        if done.issuperset(unit):  # the unit's deals are played out: its records may go to spectators
            executor.release(unit)
        over = over or record(p.seating, p.results)
        return over

    def dead(s: Seating, err: BotsDead) -> None:
        raise SprtError(f"{err}: the test cannot go on")

    capacity = seat_capacity([seating(0, j) for j in range(len(lineups))], setup.concurrency)
    log_dir = setup.output / "logs" if setup.output is not None else None
    executor = executor_for(server, admin_token, setup.executor,
                            game=setup.game, options=setup.options, clock=setup.clock,
                            bots=[setup.candidate, setup.baseline], capacity=capacity, log_dir=log_dir,
                            connect_timeout=connect_timeout, sandbox=setup.sandbox, hide=setup.hidden(),
                            isolation=setup.isolation, startup_s=setup.startup_s, announce=announce,
                            snapshots=store.snapshots if store is not None else None)
    try:
        async with executor:
            assert executor.sandbox is not None  # resolved as the executor opened
            if store is not None:
                store.set_meta(MetaKey.SANDBOX, executor.sandbox.describe())
                store.set_meta(MetaKey.ISOLATION, setup.isolation)
                store.set_meta(MetaKey.EXECUTOR, executor.describe())
            try:
                await executor.play_all(to_play(), setup.concurrency, played, dead)
            finally:
                host_account(executor, store)
    except WriteFailed as err:  # a full disk (the store, a bot's log): what is stored stays, resumable
        raise (store.stopped(err) if store is not None else err) from None
    return tally.verdict or Verdict.INCONCLUSIVE
