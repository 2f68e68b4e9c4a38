"""Runs a tournament: schedule, bots, matches, the store.

Matches are played by an executor (:mod:`referee.tournament.executors`): an
in-process referee, or a remote one when a server is given. They play
``concurrency`` at a time; each is saved the moment it ends, so an
interrupted run resumes where it stopped, and a tournament file that grew
(:mod:`.growth`) plays only its new matches. An adaptive tournament
(:mod:`.adaptive`) is played deal set after deal set: its plan gives the next
one once every match before it is stored, until its stopping rule. The schedule is that of the
entries in play: under ``absent = "withdraw"`` an entry that does not start,
or dies for good, is out, and the rest play. Their records reach the
referee's spectators only when the configuration's ``release`` allows
(:mod:`.release`).
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Callable, Collection, Sequence
from typing import Any

from referee import games
from referee.files import WriteFailed
from referee.tournament import adaptive, growth
from referee.tournament.config import TournamentConfig
from referee.tournament.executors import Played, executor_for, seat_capacity
from referee.tournament.release import TO_PLAY, Releases, held_in
from referee.tournament.schedule import Schedule, Seating, make_schedule, missing
from referee.tournament.store import DB_NAME, DEAD, DID_NOT_START, PLAYING, WITHDRAWN, Store, StoreError

Progress = Callable[[int, int, Played | None], None]
#: the schedule of a run given the entries out of it (withdrawn, did not start, dead)
Plan = Callable[[Collection[str]], Schedule]


def schedule_of(config: TournamentConfig, out: Collection[str] = ()) -> Schedule:
    """The schedule of the file's entries in play: not ``withdrawn``, and not ``out``. Fewer than
    two: an empty schedule."""
    names = [name for name in config.entries if name not in out]
    if len(names) < 2:
        return Schedule((), (), f"{len(names)} entry in play: nothing to play")
    return make_schedule(config.game, config.options, names, config.deal_sets, config.seed, config.max_groups,
                         config.later_seeds, config.teams)


def planner(config: TournamentConfig, store: Store) -> Plan:
    """The plan of the configuration's tournament: its round robin, or its adaptive schedule (which
    reads what ``store`` holds)."""
    if config.adaptive:
        return adaptive.Planner(config, store)
    return lambda out: schedule_of(config, out)


def claim_store(config: TournamentConfig, fingerprint: str, description: dict[str, Any], rerun: Sequence[str] = (),
                announce: Callable[[str], None] | None = None) -> Store:
    """The output directory's store, bound to this configuration (refuses another one's, a file
    that shrinks what the directory holds (:func:`growth.check`: ``announce`` is told what grew),
    or a bot changed since its matches were stored unless it is in ``rerun``: those bots' stored
    matches are dropped, and ``announce`` is told how many)."""
    store = Store(config.output)

    def grows(store: Store) -> None:
        stored = json.loads(store.meta("fingerprint") or "{}")
        if config.adaptive and "schedule" not in stored and store.count(every=True):  # written before schedules
            raise StoreError(f"{store.directory} holds the results of another tournament configuration (changed: "
                             f"schedule, a round robin's). Use a new output directory.")
        line = growth.check(store, description["bots"], config.deal_sets)
        if line and announce is not None:
            announce(f"{config.output} grows: {line}")

    before = json.loads(store.meta("config") or "{}").get("later_seeds", [])
    try:
        store.claim(fingerprint, description, config.bots, rerun, announce,
                    hide=[config.output, *filter(None, [config.source])], check=grows)
        if len(config.later_seeds) > len(before):  # new deal sets on a new seed: secret until this run ends
            store.withhold_seed()
    except WriteFailed as err:  # a full disk already: what is stored stays, resumable
        failed = store.stopped(err)
        store.close()
        raise failed from None
    except BaseException:
        store.close()
        raise
    return store


def out_for_good(store: Store) -> set[str]:
    """The entries no run starts: withdrawn in the file, or dead (died for good under absent =
    "withdraw"; ``--rerun NAME`` brings one back). An entry that did not start is tried again."""
    return {e.name for e in store.entries() if e.status in (WITHDRAWN, DEAD)}


def with_stored_seed(config: TournamentConfig) -> TournamentConfig:
    """A configuration whose seed was drawn takes the seed its output directory already holds,
    if any: an interrupted run resumes on the same deals. So with the later seeds: and when the
    file has more deal sets than the directory dealt while its drawn seed has been released (a run
    ended and printed it), the new deal sets get a new secret seed of their own: anyone who read
    the old one could otherwise compute them (:func:`~referee.tournament.schedule.master_seed`)."""
    if not config.seed_drawn or not (config.output / DB_NAME).exists():
        return config
    store = Store(config.output, create=False)
    try:
        stored = json.loads(store.meta("config") or "{}")
        released = store.seed_released()
        dealt = store.deal_sets_dealt()
    finally:
        store.close()
    if not isinstance(stored.get("seed"), int):
        return config
    later = tuple((int(first), int(seed)) for first, seed in stored.get("later_seeds", []))
    # dealt: the deal sets of the stored matches (an adaptive run's are fewer than its cap)
    unused = later and later[-1][0] >= dealt  # a later seed no match was dealt from yet: still secret
    if released and config.deal_sets > dealt and not unused:
        later += ((dealt, secrets.randbits(128)),)
    return dataclasses.replace(config, seed=stored["seed"], later_seeds=later)


def open_store(config: TournamentConfig, rerun: Sequence[str] = (),
               announce: Callable[[str], None] | None = None) -> Store:
    return claim_store(config, config.fingerprint(), config.describe(), rerun, announce)


async def play_schedule(config: TournamentConfig, plan: Plan, store: Store, progress: Progress | None = None,
                        server: str | None = None, admin_token: str | None = None,
                        connect_timeout: float = 30.0, announce: Callable[[str], None] | None = None,
                        watch: Callable[[Any], None] | None = None) -> int:
    """Play every seating of the schedule (``plan``: the schedule given the entries out of the
    run) not yet in the store, ``concurrency`` at a time, saving each the moment it ends;
    returns how many were played. Before the first match every bot in play must be running and
    connected within ``startup_s``: with ``absent = "stop"``,
    :class:`~referee.tournament.executors.BotsNotReady` otherwise (nothing is played); with
    "withdraw", those that are not are out ("did not start") and the schedule of the others is
    played. A bot that dies for good mid-run: with "stop" its remaining matches are skipped and
    the store notes it as incomplete (:meth:`Store.incomplete`; a later run tries them again);
    with "withdraw" it is out for good ("dead": its stored matches no longer count) and the
    schedule of the others is played. A write the disk refuses (the store, a bot's log) stops
    the run: :class:`WriteFailed`, what was stored before intact. A deal set's records go to
    spectators once it is over (``config.release``). A run that ends (not one interrupted or
    stopped by an error) and leaves no record held releases the master seed: the store says so
    (:meth:`Store.seed_released`), and the pages show it from then on. ``watch(arena)`` is told
    the executor's arena once it is open (the live page)."""
    kept_out = out_for_good(store)
    full = plan(kept_out)
    bots = [b for b in config.bots if b.name not in kept_out]
    if announce is not None and (line := late_entries(store, full)) is not None:
        announce(line)
    if not missing(full, store.done()):  # nothing to play, no bot to start
        if full.seatings:
            store.set_schedule(s.key for s in full.seatings)
        adaptive.record(store, full)
        store.set_entries(PLAYING, {b.name: None for b in bots})
        store.set_incomplete({})
        ended(store, plan)
        if progress:
            progress(len(full.seatings), len(full.seatings), None)
        return 0
    record_to_play(store, full)  # what an entry that does not start now would come back to play
    capacity = seat_capacity(full.seatings, config.concurrency)
    if config.absent == "withdraw" or config.adaptive:  # fewer entries may fill more seats (two bots in four),
        # a later deal set of an adaptive run may seat a bot this one does not: all seats but one
        capacity = dict.fromkeys(capacity, (games.get(config.game).num_seats - 1) * config.concurrency)
    executor = executor_for(server, admin_token, config.executor,
                            game=config.game, options=config.options, clock=config.clock,
                            bots=bots, capacity=capacity,
                            log_dir=config.output / "logs", connect_timeout=connect_timeout,
                            sandbox=config.sandbox, hide=[config.output, *filter(None, [config.source])],
                            isolation=config.isolation, startup_s=config.startup_s, announce=announce,
                            absent=config.absent)
    try:
        try:
            async with executor:
                store.set_meta("sandbox", executor.sandbox.describe())
                store.set_meta("isolation", config.isolation)
                store.set_meta("executor", executor.describe())
                store.set_entries(DID_NOT_START, executor.absent)
                store.set_entries(PLAYING, {b.name: None for b in bots if b.name not in executor.absent})
                out = kept_out | set(executor.absent)
                if not plan(out).seatings:
                    raise executor.not_ready(
                        f"no match can be played without {', '.join(sorted(executor.absent))}")
                if watch:
                    watch(executor.arena)
                try:
                    played = await _play_in_play(config, plan, out, store, executor, progress, announce)
                finally:
                    host_account(executor, store)
        finally:
            if executor.launcher is not None:
                store.set_meta("launcher", json.dumps(executor.launcher.status()))
    except WriteFailed as err:  # a full disk (the store, a bot's log): what is stored stays, resumable
        raise store.stopped(err) from None
    ended(store, plan)
    return played


def record_to_play(store: Store, schedule: Schedule) -> None:
    """The deal sets with matches still to play of ``schedule`` (every entry not out for good in
    play, those that did not start included): what an entry that did not start would play when
    it comes back, held meanwhile (:func:`~referee.tournament.release.held_in`)."""
    store.set_meta(TO_PLAY, json.dumps(sorted({s.deal_set for s in missing(schedule, store.done())})))


def ended(store: Store, plan: Plan) -> None:
    """A run has ended: what is left to play is recorded, and its master seed may be printed and
    shown, unless records are still held (the seed deals every deal set, so it would give away
    the cards of those an entry still to play may play)."""
    record_to_play(store, plan(out_for_good(store)))
    if not held_in(store):
        store.release_seed()


async def _play_in_play(config: TournamentConfig, plan: Plan, out: set[str], store: Store, executor: Any,
                        progress: Progress | None, announce: Callable[[str], None] | None) -> int:
    """Play the schedule of the entries not ``out``; under "withdraw", when bots die for good, they
    are out too and the schedule of the others is played (what it adds: Confirmation's line-ups of
    fewer entries). A plan that gives more once what it gave is played (an adaptive tournament's
    next deal set) is played on, until it gives nothing new. Returns how many matches were played."""
    withdraw = config.absent == "withdraw"
    dead: dict[str, str] = {}  # bots dead for good in this run: why
    played = 0
    tried: set[str] = set()  # the seatings given to the executor: one that it could not play is not tried again
    first = again = True  # again: the entries in play changed
    while True:
        schedule = plan(out)
        todo = _start_playing(store, schedule, announce if again else None)
        if not (first or again or {s.key for s in todo} - tried):
            return played
        first = again = False
        tried |= {s.key for s in todo}
        total, finished = len(schedule.seatings), len(schedule.seatings) - len(todo)
        if progress:
            progress(finished, total, None)
        # what an entry that did not start would come back to play: held
        awaited = {s.deal_set for s in missing(plan(out - executor.absent.keys()), store.done())} \
            if executor.absent else set()
        releases = Releases(schedule.seatings, store.done(), config.release, awaited)

        def save(p: Played) -> None:
            nonlocal finished, played
            store.save_played(p)
            executor.release(releases.stored(p.seating))
            finished += 1
            played += 1
            if progress:
                progress(finished, total, p)

        try:
            await executor.play_all(todo, config.concurrency, save, lambda _, err: dead.update(err.reasons))
        finally:
            store.set_incomplete({} if withdraw else _missing(schedule, store.done(), dead))
            if withdraw:
                store.set_entries(DEAD, dead)
        if not withdraw or not dead.keys() - out:
            continue
        if announce is not None:
            announce(f"withdrawn: {'; '.join(f'bot {n} {dead[n]}' for n in sorted(dead.keys() - out))}; "
                     f"the other entries play on")
        out |= dead.keys()
        again = True


def late_entries(store: Store, schedule: Schedule) -> str | None:
    """A line when entries join deal sets that were played before them (new entries, entries back
    from withdrawal or brought back by --rerun) and that nothing held when the last run ended, so
    a report of this directory (or a referee's spectators) may already have shown their records:
    the organiser's choice (docs/security.md); None when none does."""
    before = store.schedule_keys()
    if not before:
        return None
    in_play = {name for s in schedule.seatings for name in s.lineup}
    known = {name for key in before for name in key.split(":", 1)[1].split("|")}
    joining = sorted(in_play - known)
    held = held_in(store)
    shown = sorted({row.deal_set for row in store.matches(every=True) if not held.holds(row.deal_set)})
    if not joining or not shown:
        return None
    sets = f"deal set {shown[0]}" if len(shown) == 1 else f"{len(shown)} deal sets ({shown[0]} to {shown[-1]})"
    return (f"late entries: {', '.join(joining)} join {sets} played before they came and not held since: a report "
            f"of this directory may already have shown their records (an entrant who read it knows those deals)")


def _start_playing(store: Store, schedule: Schedule, announce: Callable[[str], None] | None) -> list[Seating]:
    """Record the schedule the directory plays now and say, when some are stored, how many of its
    matches are left to play (and how many stored ones it no longer holds); the seatings to play."""
    stored = store.done()
    todo = missing(schedule, stored)
    store.set_schedule(s.key for s in schedule.seatings)
    adaptive.record(store, schedule)
    if stored and announce is not None:
        uncounted = len(stored) - (len(schedule.seatings) - len(todo))
        note = (f"; {uncounted} stored match(es) are not in this schedule (an entry out, line-ups that changed "
                f"with the entries): kept, not counted") if uncounted else ""
        announce(f"{len(todo)} of {len(schedule.seatings)} match(es) to play, "
                 f"{len(schedule.seatings) - len(todo)} stored{note}")
    return todo



def host_account(executor: Any, store: Store | None) -> None:
    """The host's load during the run, in the store (``meta`` key ``host``) and, when it was
    overloaded for long or while decisions timed out, in one line of the run's output."""
    if store is not None:
        store.set_meta("host", executor.host.to_json())
    if (line := executor.host.line()) is not None:
        executor.say(line)


def _missing(schedule: Schedule, done: set[str], dead: dict[str, str]) -> dict[str, dict[str, Any]]:
    """For each bot dead for good: how many of its matches in the schedule are not stored, of how
    many, and why it is dead."""
    out = {}
    for name, why in dead.items():
        theirs = [s.key for s in schedule.seatings if name in s.lineup]
        out[name] = {"missing": sum(1 for key in theirs if key not in done), "of": len(theirs), "why": why}
    return out


async def run(config: TournamentConfig, store: Store, progress: Progress | None = None,
              server: str | None = None, admin_token: str | None = None, connect_timeout: float = 30.0) -> int:
    """Play the tournament's matches not yet in the store; returns how many were played."""
    return await play_schedule(config, planner(config, store), store, progress, server, admin_token, connect_timeout)
