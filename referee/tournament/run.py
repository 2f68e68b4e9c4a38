"""Runs a tournament: schedule, bots, matches, the store.

Matches are played by an executor (:mod:`referee.tournament.executors`): an
in-process referee, or a remote one when a server is given. They play
``concurrency`` at a time; each is saved the moment it ends, so an
interrupted run resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from referee.tournament.config import TournamentConfig
from referee.tournament.executors import BotsDead, Played, executor_for, seat_capacity
from referee.tournament.schedule import Schedule, Seating, make_schedule
from referee.tournament.store import DB_NAME, Store


Progress = Callable[[int, int, Played | None], None]


def schedule_of(config: TournamentConfig) -> Schedule:
    return make_schedule(config.game, config.options, [b.name for b in config.bots], config.deal_sets,
                         config.seed, config.max_groups)


def claim_store(config: TournamentConfig, fingerprint: str, description: dict[str, Any]) -> Store:
    """The output directory's store, bound to this configuration (refuses another one's)."""
    store = Store(config.output)
    store.claim(fingerprint, description, config.bots)
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


def open_store(config: TournamentConfig) -> Store:
    return claim_store(config, config.fingerprint(), config.describe())


async def play_schedule(config: TournamentConfig, schedule: Schedule, store: Store, progress: Progress | None = None,
                        server: str | None = None, admin_token: str | None = None,
                        connect_timeout: float = 30.0) -> int:
    """Play every seating of the schedule not yet in the store, ``concurrency`` at a
    time, saving each the moment it ends; returns how many were played. A bot
    that keeps dying has its matches skipped (a later run tries them again)."""
    done = store.done()
    todo = [s for s in schedule.seatings if s.key not in done]
    total = len(schedule.seatings)
    finished = total - len(todo)
    if progress:
        progress(finished, total, None)
    if not todo:
        return 0
    skipped = 0
    executor = executor_for(server, admin_token, config.executor,
                            game=config.game, options=config.options, clock=config.clock,
                            bots=config.bots, capacity=seat_capacity(schedule.seatings, config.concurrency),
                            log_dir=config.output / "logs", connect_timeout=connect_timeout,
                            sandbox=config.sandbox, hide=[config.output, *filter(None, [config.source])],
                            isolation=config.isolation)

    def save(played: Played) -> None:
        nonlocal finished
        store.save_played(played)
        finished += 1
        if progress:
            progress(finished, total, played)

    def skip(seating: Seating, dead: BotsDead) -> None:
        nonlocal skipped
        skipped += 1

    try:
        async with executor:
            store.set_meta("sandbox", executor.sandbox.describe())
            store.set_meta("isolation", config.isolation)
            store.set_meta("executor", executor.describe())
            await executor.play_all(todo, config.concurrency, save, skip)
    finally:
        if executor.launcher is not None:
            store.set_meta("launcher", json.dumps(executor.launcher.status()))
    return len(todo) - skipped


async def run(config: TournamentConfig, store: Store, progress: Progress | None = None,
              server: str | None = None, admin_token: str | None = None, connect_timeout: float = 30.0) -> int:
    """Play the tournament's matches not yet in the store; returns how many were played."""
    return await play_schedule(config, schedule_of(config), store, progress, server, admin_token, connect_timeout)
