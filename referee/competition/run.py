"""Runs a tournament: schedule, bots, matches, the store.

Matches are played by an executor (:mod:`referee.play.executors`): an
in-process referee, or a remote one when a server is given. They play
``concurrency`` at a time; each is saved the moment it ends, so an
interrupted run resumes where it stopped, and a tournament file that grew
(:mod:`.growth`) plays only its new matches. An adaptive tournament
(:mod:`.adaptive`) is played deal set after deal set: its plan gives the next
one once every match before it is stored, until its stopping rule. The schedule is that of the
entries in play: under ``absent = "withdraw"`` an entry that does not start,
or dies for good, is out, and the rest play. Their records reach the
referee's spectators only when the configuration's ``release`` allows
(:mod:`.release`), and no match is dealt from a deal set that may have been
seen (:func:`keep_deals_secret`).
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from referee import games, records
from referee.competition import adaptive, growth
from referee.competition.schedule import make_schedule, missing, numbers
from referee.files import WriteFailed
from referee.hosting import paths, sandbox
from referee.model import (
    Absent,
    EntryStatus,
    ExecutorKind,
    ExecutorSpec,
    Played,
    SandboxMode,
    Schedule,
    Seating,
    TournamentConfig,
)
from referee.play.executors import executor_for, seat_capacity
from referee.results import release, rounds
from referee.results.release import Releases, held_in
from referee.results.store import DB_NAME, MetaKey, Store, StoreError
from referee.runner import FaultKind

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
                         config.later_seeds, config.retired, config.teams)


def planner(config: TournamentConfig, store: Store) -> Plan:
    """The plan of the configuration's tournament: its round robin, or its adaptive schedule (which
    reads what ``store`` holds), on the deals ``store`` holds when it is asked (a run may retire
    deal sets and draw a seed: :func:`keep_deals_secret`)."""
    if config.adaptive:
        return adaptive.Planner(config, store)
    return lambda out: schedule_of(config.with_deals(store.config()), out)


def hidden(config: TournamentConfig) -> list[Path]:
    """What the run hides from its bots, and leaves out of their versions: what it writes (its output
    directory, the files its standard output and error go to) and the tournament file."""
    return [*paths.written(config.output), *filter(None, [config.source])]


def snapshots_wanted(mode: SandboxMode, executor: ExecutorSpec) -> bool:
    """Whether a run copies its launched bots' files as it hashes them (:class:`versions.Snapshots`):
    when they run in bubblewrap (``[limits] sandbox``), which shows them the copy; not on Ray, whose
    nodes are shipped the files (or have their own)."""
    return executor.kind != ExecutorKind.RAY and sandbox.resolve(mode).isolated


def claim_store(config: TournamentConfig, fingerprint: str, description: dict[str, Any], rerun: Sequence[str] = (),
                announce: Callable[[str], None] | None = None) -> Store:
    """The output directory's store, bound to this configuration (refuses another one's, a file
    that shrinks what the directory holds (:func:`growth.check`: ``announce`` is told what grew),
    or a bot changed since its matches were stored unless it is in ``rerun``: those bots' stored
    matches are dropped, and ``announce`` is told how many)."""
    store = Store(config.output)

    def grows(store: Store) -> None:
        stored = json.loads(store.meta(MetaKey.FINGERPRINT) or "{}")
        if config.adaptive and "schedule" not in stored and store.count(every=True):  # written before schedules
            raise StoreError(f"{store.directory} holds the results of another tournament configuration (changed: "
                             f"schedule, a round robin's). Use a new output directory.")
        line = growth.check(store, description["bots"], config.deal_sets, config.retired)
        if line and announce is not None:
            announce(f"{config.output} grows: {line}")
        if store.count(every=True):  # before anything changes what is held (--rerun, an entry back): seen stays seen
            release.note_seen(store)

    try:
        store.claim(fingerprint, description, config.bots, rerun, announce, hide=hidden(config), check=grows,
                    snapshot=snapshots_wanted(config.sandbox, config.executor))
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
    return {e.name for e in store.entries() if e.status in (EntryStatus.WITHDRAWN, EntryStatus.DEAD)}


def with_stored_seed(config: TournamentConfig) -> TournamentConfig:
    """A configuration whose seed was drawn takes the seed its output directory already holds,
    if any: an interrupted run resumes on the same deals. So with the later seeds and the retired
    deal sets (:func:`keep_deals_secret` adds to them)."""
    if not config.seed_drawn or not (config.output / DB_NAME).exists():
        return config
    store = Store(config.output, create=False)
    try:
        stored = json.loads(store.meta(MetaKey.CONFIG) or "{}")
    finally:
        store.close()
    if not isinstance(stored.get("seed"), int):
        return config
    return dataclasses.replace(config, seed=stored["seed"]).with_deals(stored)


def keep_deals_secret(config: TournamentConfig, store: Store, plan: Plan, out: Collection[str],
                      announce: Callable[[str], None] | None = None) -> None:
    """The rule (:func:`~referee.results.release.exposed`): no match of the schedule of the
    entries not ``out`` is dealt from a deal set that may have been seen. Each deal set that a match
    still to play would be dealt from, and that may have been seen, is **retired**: its stored
    matches stay stored, not counted, and the schedule takes the next fresh deal set in its place,
    for every entry (a fair duplicate comparison: every entry plays the same deal sets). The deal
    sets not dealt yet get a new secret seed when the drawn one that would deal them was printed.
    Both are kept in the store's configuration; ``announce`` is told what was retired, and why. A
    seed given in the tournament file has no secret to keep: nothing is retired (:func:`late_entries`
    says so)."""
    if not config.seed_drawn:
        return
    seen = release.seen(store)
    done = store.done()
    exposed = release.exposed(plan(out), done, seen)
    players = newcomers(store, exposed)
    retired: set[int] = set()
    while exposed:  # a fresh deal set is never seen (no match dealt from it; its seed secret: below)
        retired |= {s.deal_set for s in exposed}
        _set_deals(store, retired=sorted({*store.config().get("retired", []), *retired}))
        exposed = release.exposed(plan(out), done, seen)
    _secret_seed(config, store, seen)
    if retired and announce is not None:
        announce(retired_line(store, plan(out), retired, players))


def _secret_seed(config: TournamentConfig, store: Store, seen: Collection[int]) -> None:
    """When the drawn seed that would deal the schedule's deal sets not dealt yet was printed (a run
    ended and printed it: anyone may know it), draw a new secret one for them, from the first fresh
    deal set on (:func:`~referee.competition.schedule.master_seed`), and the seeds are secret again
    until the run that plays them ends (:meth:`Store.withhold_seed`)."""
    stored = store.config()
    later = [(int(first), int(seed)) for first, seed in stored.get("later_seeds", [])]
    first = release.first_fresh(store, seen)
    if not store.seed_released() or (later and later[-1][0] >= first):  # secret still: no match was dealt from it
        return
    if numbers(config.deal_sets, stored.get("retired", []))[-1] < first:  # nothing new to deal
        return
    _set_deals(store, later_seeds=[[*pair] for pair in later] + [[first, secrets.randbits(128)]])
    store.withhold_seed()


def _set_deals(store: Store, **deals: Any) -> None:
    """Keep ``deals`` (``later_seeds``, ``retired``) in the store's configuration."""
    store.set_meta(MetaKey.CONFIG, json.dumps({**store.config(), **deals}))


def newcomers(store: Store, seatings: Sequence[Seating]) -> list[str]:
    """The entries of ``seatings`` with no match stored on its deal set (a new version: ``--rerun``
    dropped its matches; an entry back, a late one), in the order first seen."""
    there: dict[int, set[str]] = {}
    for row in store.matches(every=True):
        there.setdefault(row.deal_set, set()).update(row.lineup)
    return list(dict.fromkeys(name for s in seatings for name in s.lineup if name not in there.get(s.deal_set, ())))


def retired_line(store: Store, schedule: Schedule, retired: Collection[int], players: Sequence[str]) -> str:
    """What retiring ``retired`` did, in a line: who would have played them (``players``), why they
    may have been seen, what becomes of their matches, and which deal sets every entry plays instead."""
    dealt = store.deal_sets_stored()
    stored = sum(1 for row in store.matches(every=True) if row.deal_set in retired)
    fresh = sorted({s.deal_set for s in schedule.seatings} - dealt)
    them, their = ("them", "their") if len(retired) > 1 else ("it", "its")
    who = (f"{', '.join(players)} would play {them} (a new version, an entry back or a late one)" if players
           else f"matches still to play would be dealt from {them}")
    instead = (f"; every entry plays deal set{'s' if len(fresh) > 1 else ''} {_numbers_text(fresh)} instead, "
               f"dealt from a secret seed") if fresh else ""
    return (f"deal set{'s' if len(retired) > 1 else ''} {_numbers_text(retired)} retired: {who}, and {their} "
            f"deals may have been seen (a report or a referee's spectators may have shown {their} records, a "
            f"printed master seed deals {them}): {their} {stored} stored match(es) stay stored, not "
            f"counted{instead}")


def _numbers_text(deal_sets: Collection[int]) -> str:
    """Deal sets in words: "4", "4 and 5", "4 to 9" (consecutive), "1, 3 and 7"."""
    ordered = sorted(deal_sets)
    if len(ordered) > 2 and ordered[-1] - ordered[0] == len(ordered) - 1:
        return f"{ordered[0]} to {ordered[-1]}"
    if len(ordered) > 1:
        return f"{', '.join(map(str, ordered[:-1]))} and {ordered[-1]}"
    return str(ordered[0]) if ordered else "none"


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
    :class:`~referee.play.executors.BotsNotReady` otherwise (nothing is played); with
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
    if announce is not None and (line := late_entries(config, store, plan(kept_out))) is not None:
        announce(line)
    keep_deals_secret(config, store, plan, kept_out, announce)
    full = plan(kept_out)
    bots = [b for b in config.bots if b.name not in kept_out]
    if full.seatings:  # what an entry back or late is to play is held from now on, not when it starts
        store.set_schedule(s.key for s in full.seatings)
    if not missing(full, store.done()):  # nothing to play, no bot to start
        rounds.record(store, full)
        store.set_entries(EntryStatus.PLAYING, {b.name: None for b in bots})
        store.set_incomplete({})
        ended(store, plan)
        if progress:
            progress(len(full.seatings), len(full.seatings), None)
        return 0
    record_to_play(store, plan, {b.name for b in bots})  # any of them may not start now: what it would play
    capacity = seat_capacity(full.seatings, config.concurrency)
    if config.absent == Absent.WITHDRAW or config.adaptive:  # fewer entries may fill more seats (two bots in four),
        # a later deal set of an adaptive run may seat a bot this one does not: all seats but one
        capacity = dict.fromkeys(capacity, (games.get(config.game).num_seats - 1) * config.concurrency)
    executor = executor_for(server, admin_token, config.executor,
                            game=config.game, options=config.options, clock=config.clock,
                            bots=bots, capacity=capacity,
                            log_dir=config.output / "logs", connect_timeout=connect_timeout,
                            sandbox=config.sandbox, hide=hidden(config), isolation=config.isolation,
                            startup_s=config.startup_s, announce=announce, absent=config.absent,
                            snapshots=store.snapshots)
    try:
        try:
            async with executor:
                assert executor.sandbox is not None  # resolved on entering
                store.set_meta(MetaKey.SANDBOX, executor.sandbox.describe())
                store.set_meta(MetaKey.ISOLATION, config.isolation)
                store.set_meta(MetaKey.EXECUTOR, executor.describe())
                store.set_entries(EntryStatus.DID_NOT_START, executor.absent)
                store.set_entries(EntryStatus.PLAYING, {b.name: None for b in bots if b.name not in executor.absent})
                record_to_play(store, plan)
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
                store.set_meta(MetaKey.LAUNCHER, json.dumps(executor.launcher.status()))
    except WriteFailed as err:  # a full disk (the store, a bot's log): what is stored stays, resumable
        raise store.stopped(err) from None
    ended(store, plan)
    return played


def comeback(store: Store, plan: Plan, away: Collection[str] | None = None) -> set[int]:
    """The deal sets the entries ``away`` (None: those that did not start or died for good) would
    play if they came back now: their matches still to play of the schedule with every entry not
    withdrawn in play, and, for one that died for good, every match of its (``--rerun`` drops what
    it played before it died)."""
    entries = store.entries()
    if away is None:
        away = {e.name for e in entries if e.status in (EntryStatus.DID_NOT_START, EntryStatus.DEAD)}
    dead = {e.name for e in entries if e.status == EntryStatus.DEAD}
    done = store.done()
    return {s.deal_set for s in plan(()).seatings
            if not set(away).isdisjoint(s.lineup) and (s.key not in done or not dead.isdisjoint(s.lineup))} \
        if away else set()


def record_to_play(store: Store, plan: Plan, away: Collection[str] | None = None) -> None:
    """What the entries away would play if they came back (:func:`comeback`), held meanwhile
    (:func:`~referee.results.release.held_in`)."""
    store.set_meta(MetaKey.TO_PLAY, json.dumps(sorted(comeback(store, plan, away))))


def ended(store: Store, plan: Plan) -> None:
    """A run has ended: what is left to play is recorded, what nothing holds is noted as seen, and
    its master seed may be printed and shown, unless records are still held (the seed deals every
    deal set, so it would give away the cards of those an entry still to play may play)."""
    record_to_play(store, plan)
    release.note_seen(store)
    if not held_in(store):
        store.release_seed()


async def _play_in_play(config: TournamentConfig, plan: Plan, out: set[str], store: Store, executor: Any,
                        progress: Progress | None, announce: Callable[[str], None] | None) -> int:
    """Play the schedule of the entries not ``out``; under "withdraw", when bots die for good, they
    are out too and the schedule of the others is played (what it adds: Confirmation's line-ups of
    fewer entries). A plan that gives more once what it gave is played (an adaptive tournament's
    next deal set) is played on, until it gives nothing new. Returns how many matches were played."""
    withdraw = config.absent == Absent.WITHDRAW
    dead: dict[str, str] = {}  # bots dead for good in this run: why
    played = 0
    tried: set[str] = set()  # the seatings given to the executor: one that it could not play is not tried again
    first = again = True  # again: the entries in play changed
    while True:
        if again and not first:  # fewer entries may mean new line-ups on deal sets seen meanwhile
            keep_deals_secret(config, store, plan, out, announce)
        schedule = plan(out)
        todo = _start_playing(store, schedule, announce if again else None)
        if not (first or again or {s.key for s in todo} - tried):
            return played
        first = again = False
        tried |= {s.key for s in todo}
        total, finished = len(schedule.seatings), len(schedule.seatings) - len(todo)
        if progress:
            progress(finished, total, None)
        # what an entry that did not start or died for good would come back to play: held
        releases = Releases(schedule.seatings, store.done(), config.release, comeback(store, plan))

        def save(p: Played, releases: Releases = releases) -> None:
            nonlocal finished, played
            refused = unverified(config, p)
            if refused is not None:  # a forged or corrupted result (an executor's worker is not trusted): not stored
                if announce is not None:
                    announce(f"match {p.seating.key}: its result was refused, not stored ({refused}); a later run "
                             f"plays it again")
                return
            store.save_played(p)
            if withdraw and _died_in(p):  # held until the run knows whether it is out for good (then awaited)
                releases.hold([p.seating.deal_set])
            free = releases.stored(p.seating)
            if releases.over(p.seating.deal_set):  # nothing holds it now: seen, for good (before spectators see it)
                release.note_seen(store, [p.seating.deal_set])
            executor.release(free)
            finished += 1
            played += 1
            if progress:
                progress(finished, total, p)

        def died(_: Any, err: Any, releases: Releases = releases, schedule: Schedule = schedule) -> None:
            dead.update(err.reasons)
            if withdraw:  # out for good: brought back (--rerun), it would play every deal set of its again
                releases.hold(s.deal_set for s in schedule.seatings if not err.reasons.keys().isdisjoint(s.lineup))

        try:
            await executor.play_all(todo, config.concurrency, save, died)
        finally:
            store.set_incomplete({} if withdraw else _missing(schedule, store.done(), dead))
            if withdraw:
                store.set_entries(EntryStatus.DEAD, dead)
                record_to_play(store, plan)
        if not withdraw or not dead.keys() - out:
            continue
        if announce is not None:
            announce(f"withdrawn: {'; '.join(f'bot {n} {dead[n]}' for n in sorted(dead.keys() - out))}; "
                     f"the other entries play on")
        out |= dead.keys()
        again = True


def unverified(config: TournamentConfig, played: Played) -> str | None:
    """Why a match as an executor handed it back cannot be stored (None: it verifies). Its record is
    replayed through the engine (every action legal, the stated results those computed); it must be
    the game, options, seats and deal seed of its seating, its deals those of that seed, and the
    scores and placing stored those the replay computed."""
    record, seating = played.record, played.seating
    try:
        expected = {"game": config.game, "seats": list(seating.lineup)}
        if any(record.get(key) != value for key, value in expected.items()):
            return "its record is not of this match's game and seats"
        if str(record.get("seed")) != str(seating.seed):
            return "its record is not dealt from this match's seed"
        if record.get("options") != config.options:
            return "its record's options are not the tournament's"
        computed = records.replay(record).results
        from_seed = records.replay({k: v for k, v in record.items() if k not in ("decks", "suits")}).results
    except records.RecordError as err:
        return f"its record does not replay: {err}"
    if computed is None or computed != from_seed:
        return "its record's deals are not those of its seed"
    for key in ("scores", "placing"):
        if played.results.get(key) != computed.get(key):
            return f"its {key} are not those its record gives"
    return None


def _died_in(played: Played) -> bool:
    """Whether a seat of the match lost its bot (it died, or did not come back: a disconnect or no
    session): the bot may have died for good."""
    return any(seat.get(FaultKind.DISCONNECT) or seat.get(FaultKind.NO_SESSION)
               for seat in played.results.get("faults") or ())


def late_entries(config: TournamentConfig, store: Store, schedule: Schedule) -> str | None:
    """With a seed given in the tournament file, a line when entries play deal sets that were
    played before them and may have been seen since (:func:`~referee.results.release.exposed`:
    late entries, entries back, new versions after ``--rerun``): a report of this directory (or a
    referee's spectators) may already have shown their records, and no secret deal set can take
    their place (anyone who knows the seed computes them all). None when none does, and with a
    drawn seed (:func:`keep_deals_secret` retires those deal sets instead)."""
    if config.seed_drawn or not store.schedule_keys():  # no run recorded a schedule: nothing played before
        return None
    exposed = release.exposed(schedule, store.done(), release.seen(store))
    joining = newcomers(store, exposed)
    if not joining:
        return None
    shown = sorted({s.deal_set for s in exposed})
    sets = f"deal set {shown[0]}" if len(shown) == 1 else f"{len(shown)} deal sets ({_numbers_text(shown)})"
    return (f"late entries and new versions: {', '.join(joining)} play {sets} played before they came and not "
            f"held since: a report of this directory may already have shown their records (an entrant who read "
            f"it knows those deals); the seed is given in the tournament file, so no secret deal set can take "
            f"their place (leave seed out of the file: docs/security.md)")


def _start_playing(store: Store, schedule: Schedule, announce: Callable[[str], None] | None) -> list[Seating]:
    """Record the schedule the directory plays now and say, when some are stored, how many of its
    matches are left to play (and how many stored ones it no longer holds); the seatings to play."""
    stored = store.done()
    todo = missing(schedule, stored)
    store.set_schedule(s.key for s in schedule.seatings)
    rounds.record(store, schedule)
    if stored and announce is not None:
        uncounted = len(stored) - (len(schedule.seatings) - len(todo))
        note = (f"; {uncounted} stored match(es) are not in this schedule (an entry out, line-ups that changed "
                f"with the entries, a deal set retired): kept, not counted") if uncounted else ""
        announce(f"{len(todo)} of {len(schedule.seatings)} match(es) to play, "
                 f"{len(schedule.seatings) - len(todo)} stored{note}")
    return todo



def host_account(executor: Any, store: Store | None) -> None:
    """The host's load during the run and whose its timeouts were, in the store (``meta`` key
    ``host``) and, when it was overloaded for long or a decision timed out, in one line of the
    run's output."""
    if store is not None:
        store.set_meta(MetaKey.HOST, executor.host.to_json())
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
