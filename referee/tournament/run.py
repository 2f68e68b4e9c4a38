"""Runs a tournament: schedule, bots, matches, the store.

Matches are played by an executor (:mod:`referee.tournament.executors`): an
in-process referee, or a remote one when a server is given. They play
``concurrency`` at a time; each is saved the moment it ends, so an
interrupted run resumes where it stopped. Their records reach the referee's
spectators only when the configuration's ``release`` allows (:mod:`.release`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from referee.files import WriteFailed
from referee.tournament.config import TournamentConfig
from referee.tournament.executors import BotsDead, Played, executor_for, seat_capacity
from referee.tournament.release import Releases
from referee.tournament.schedule import Schedule, Seating, make_schedule
from referee.tournament.store import DB_NAME, Store


Progress = Callable[[int, int, Played | None], None]


def schedule_of(config: TournamentConfig) -> Schedule:
    return make_schedule(config.game, config.options, [b.name for b in config.bots], config.deal_sets,
                         config.seed, config.max_groups)


def claim_store(config: TournamentConfig, fingerprint: str, description: dict[str, Any], rerun: Sequence[str] = (),
                announce: Callable[[str], None] | None = None) -> Store:
    """The output directory's store, bound to this configuration (refuses another one's, or a
    bot changed since its matches were stored unless it is in ``rerun``: those bots' stored
    matches are dropped, and ``announce`` is told how many)."""
    store = Store(config.output)
    try:
        store.claim(fingerprint, description, config.bots, rerun, announce)
    except BaseException:
        store.close()
        raise
    return store


def with_stored_seed(config: TournamentConfig) -> TournamentConfig:
    """A configuration whose seed was drawn takes the seed its output directory already holds,
    if any: an interrupted run resumes on the same deals."""
    if not config.seed_drawn or not (config.output / DB_NAME).exists():
        return config
    store = Store(config.output, create=False)
    try:
        stored = json.loads(store.meta("config") or "{}").get("seed")
    finally:
        store.close()
    return dataclasses.replace(config, seed=stored) if isinstance(stored, int) else config


def open_store(config: TournamentConfig, rerun: Sequence[str] = (),
               announce: Callable[[str], None] | None = None) -> Store:
    return claim_store(config, config.fingerprint(), config.describe(), rerun, announce)


async def play_schedule(config: TournamentConfig, schedule: Schedule, store: Store, progress: Progress | None = None,
                        server: str | None = None, admin_token: str | None = None,
                        connect_timeout: float = 30.0, announce: Callable[[str], None] | None = None,
                        watch: Callable[[Any], None] | None = None) -> int:
    """Play every seating of the schedule not yet in the store, ``concurrency`` at a
    time, saving each the moment it ends; returns how many were played. Before the
    first match every bot must be running and connected within ``startup_s``
    (:class:`~referee.tournament.executors.BotsNotReady` otherwise: nothing is played).
    A write the disk refuses (the store, a bot's log) stops the run: :class:`WriteFailed`,
    what was stored before intact.
    A bot that dies for good mid-run has its remaining matches skipped: the store
    notes it as incomplete (:meth:`Store.incomplete`), and a later run tries them again.
    A deal set's records go to spectators once it is over (``config.release``). A run that ends
    (not one interrupted or stopped by an error) releases the master seed: the store says so
    (:meth:`Store.seed_released`), and the pages show it from then on.
    ``watch(arena)`` is told the executor's arena once it is open (the live page)."""
    done = store.done()
    todo = [s for s in schedule.seatings if s.key not in done]
    total = len(schedule.seatings)
    finished = total - len(todo)
    if progress:
        progress(finished, total, None)
    if not todo:
        store.set_incomplete({})
        store.release_seed()
        return 0
    dead: dict[str, str] = {}  # bots dead for good in this run: why
    played = 0
    releases = Releases(schedule.seatings, done, config.release)
    executor = executor_for(server, admin_token, config.executor,
                            game=config.game, options=config.options, clock=config.clock,
                            bots=config.bots, capacity=seat_capacity(schedule.seatings, config.concurrency),
                            log_dir=config.output / "logs", connect_timeout=connect_timeout,
                            sandbox=config.sandbox, hide=[config.output, *filter(None, [config.source])],
                            isolation=config.isolation, startup_s=config.startup_s, announce=announce)

    def save(p: Played) -> None:
        nonlocal finished, played
        store.save_played(p)
        executor.release(releases.stored(p.seating))
        finished += 1
        played += 1
        if progress:
            progress(finished, total, p)

    def skip(seating: Seating, err: BotsDead) -> None:
        dead.update(err.reasons)

    try:
        try:
            async with executor:
                store.set_meta("sandbox", executor.sandbox.describe())
                store.set_meta("isolation", config.isolation)
                store.set_meta("executor", executor.describe())
                if watch:
                    watch(executor.arena)
                try:
                    await executor.play_all(todo, config.concurrency, save, skip)
                finally:
                    store.set_incomplete(_missing(schedule, store.done(), dead))
                    host_account(executor, store)
        finally:
            if executor.launcher is not None:
                store.set_meta("launcher", json.dumps(executor.launcher.status()))
    except WriteFailed as err:  # a full disk (the store, a bot's log): what is stored stays, resumable
        raise store.stopped(err) from None
    store.release_seed()  # the run has ended: its master seed is printed
    return played


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
    return await play_schedule(config, schedule_of(config), store, progress, server, admin_token, connect_timeout)
