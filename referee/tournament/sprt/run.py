"""Playing the units of an SPRT until a verdict or the cap, and the store that keeps them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from referee.stats.sprt import Verdict
from referee.tournament.sprt.setup import SprtSetup
from referee.tournament.sprt.units import Tally, make_unit, unit_lineups
from referee.tournament.store import Store


class SprtError(RuntimeError):
    """An SPRT that cannot go on (a bot that never came to play)."""


def open_store(setup: SprtSetup) -> Store | None:
    """The output directory's store (none without one), bound to this SPRT (refuses another's)."""
    if setup.output is None:
        return None
    store = Store(setup.output)
    store.claim(setup.fingerprint(), setup.describe(), [setup.candidate, setup.baseline])
    return store


async def run(setup: SprtSetup, tally: Tally, progress: Callable[[Tally], None] | None = None,
              store: Any = None, server: str | None = None, admin_token: str | None = None,
              connect_timeout: float = 30.0) -> Verdict:
    """Play units (``setup.concurrency`` matches at a time, units started in order) until a
    verdict or ``setup.max_units``; returns H1, H0 or inconclusive. ``tally`` holds what was
    counted even if this is interrupted. With a ``store``, every match is saved and matches
    already in it are not played again (a run resumes where it stopped)."""
    from referee.tournament.run import BotsDead, MatchPlayer, seat_capacity
    from referee.tournament.schedule import Seating, deal_seed

    c, b = setup.candidate.name, setup.baseline.name
    lineups = unit_lineups(setup.game, c, b)

    def seating(k: int, j: int) -> Seating:
        return Seating(k, deal_seed(setup.seed, k), lineups[j])

    stored = {row.key: row.results for row in store.matches()} if store is not None else {}
    finished: dict[int, list[Mapping[str, Any] | None]] = {}
    counted = 0
    stop = asyncio.Event()

    def record(k: int, j: int, results: Mapping[str, Any]) -> None:
        nonlocal counted
        for seat, counts in enumerate(results.get("faults") or []):
            if counts.get("no_session"):
                raise SprtError(f"bot {lineups[j][seat]!r} did not come to play (no session within "
                                f"{connect_timeout:g} s): check its command and its log")
        finished.setdefault(k, [None] * len(lineups))[j] = results
        while counted in finished and all(r is not None for r in finished[counted]):
            unit = make_unit(setup.game, counted, lineups, finished.pop(counted), c, b)
            counted += 1
            verdict = tally.add(unit)
            if progress:
                progress(tally)
            if verdict is not None or counted >= setup.max_units:
                stop.set()
                return

    jobs = iter([(k, j) for k in range(setup.max_units) for j in range(len(lineups))])
    capacity = seat_capacity([seating(0, j) for j in range(len(lineups))], setup.concurrency)
    log_dir = setup.output / "logs" if setup.output is not None else None

    async with MatchPlayer(setup.game, setup.options, setup.clock, [setup.candidate, setup.baseline], capacity,
                           log_dir, server, admin_token, connect_timeout) as player:

        async def worker() -> None:
            for k, j in jobs:
                if stop.is_set():
                    return
                s = seating(k, j)
                if s.key in stored:
                    record(k, j, stored[s.key])
                    continue
                try:
                    played = await player.play(s)
                except BotsDead as err:
                    raise SprtError(f"{err}: the test cannot go on") from None
                if store is not None:
                    store.save(s.key, s.deal_set, s.seed, s.lineup, played.results, played.record, played.seconds)
                record(k, j, played.results)

        workers = {asyncio.create_task(worker()) for _ in range(setup.concurrency)}
        waiter = asyncio.create_task(stop.wait())
        pending = {waiter, *workers}
        try:
            while waiter in pending and pending - {waiter}:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if task is not waiter and task.exception() is not None:
                        raise task.exception()
        finally:
            # stop first: a worker whose cancellation is lost (asyncio.wait_for in Python 3.11 can
            # swallow one) still ends at its next job instead of playing on
            stop.set()
            for task in (waiter, *workers):
                task.cancel()
            await asyncio.gather(waiter, *workers, return_exceptions=True)
    return tally.verdict or Verdict.INCONCLUSIVE
