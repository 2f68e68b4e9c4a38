"""Runs a tournament: schedule, bots, matches, the store.

The referee runs in-process (a :class:`~referee.server.RefereeServer` on a
free loopback port) unless a remote server is given, in which case matches
are started there with the RunMatch call. Matches play ``concurrency`` at a
time; each is saved the moment it ends, so an interrupted run resumes where
it stopped.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from referee import wire
from referee.server import RefereeServer
from referee.tournament.config import TournamentConfig
from referee.tournament.launcher import Launcher
from referee.tournament.schedule import Schedule, Seating, make_schedule
from referee.tournament.store import Store
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc


@dataclass(frozen=True)
class Played:
    seating: Seating
    results: dict[str, Any]
    record: dict[str, Any]
    seconds: float


Progress = Callable[[int, int, Played | None], None]


def schedule_of(config: TournamentConfig) -> Schedule:
    return make_schedule(config.game, config.options, [b.name for b in config.bots], config.deal_sets,
                         config.seed, config.max_groups)


def open_store(config: TournamentConfig) -> Store:
    """The output directory's store, bound to this configuration (refuses another one's)."""
    store = Store(config.output)
    store.claim(config.fingerprint(), config.describe(),
                [(b.name, "external" if b.external else "launched", json.dumps(list(b.command)) or None)
                 for b in config.bots])
    return store


def capacities(config: TournamentConfig, schedule: Schedule) -> dict[str, int]:
    """Seats a launched bot must play at once: its most seats in one match x concurrency."""
    most: Counter[str] = Counter()
    for s in schedule.seatings:
        for bot, n in Counter(s.lineup).items():
            most[bot] = max(most[bot], n)
    return {bot: n * config.concurrency for bot, n in most.items()}


async def run(config: TournamentConfig, store: Store, progress: Progress | None = None,
              server: str | None = None, admin_token: str | None = None, connect_timeout: float = 30.0) -> int:
    """Play every match of the schedule not yet in the store; returns how many were played."""
    schedule = schedule_of(config)
    done = store.done()
    todo = [s for s in schedule.seatings if s.key not in done]
    total = len(schedule.seatings)
    finished = total - len(todo)
    if progress:
        progress(finished, total, None)
    if not todo:
        return 0
    tokens = {b.name: b.token or secrets.token_hex(16) for b in config.bots}
    skipped: list[tuple[Seating, list[str]]] = []
    lock = asyncio.Semaphore(config.concurrency)

    async def play(seating: Seating, play_one) -> None:
        nonlocal finished
        async with lock:
            dead = launcher.ensure_running(seating.lineup)
            if dead:  # a bot that keeps dying: skip its matches (a later run tries again)
                skipped.append((seating, dead))
                store.set_meta("launcher", json.dumps(launcher.status()))
                return
            started = time.monotonic()
            results, record = await play_one(seating)
            played = Played(seating, results, record, time.monotonic() - started)
            store.save(seating.key, seating.deal_set, seating.seed, seating.lineup, results, record, played.seconds)
            finished += 1
            if progress:
                progress(finished, total, played)

    if server is None:
        async with RefereeServer(tokens=tokens, connect_timeout=connect_timeout) as referee:
            launcher = Launcher(config.bots, referee.address, tokens, capacities(config, schedule),
                                config.output / "logs")

            async def play_local(seating: Seating):
                outcome = await referee.arena.run_match(config.game, config.options, seating.lineup, seed=seating.seed,
                                                        clock=config.clock, game_id=seating.key, gone=launcher.gone)
                return outcome.results, outcome.record

            try:
                launcher.start_all()
                await asyncio.gather(*(play(s, play_local) for s in todo))
            finally:
                launcher.stop_all()
                store.set_meta("launcher", json.dumps(launcher.status()))
    else:
        launcher = Launcher(config.bots, server, tokens, capacities(config, schedule), config.output / "logs")
        async with grpc.aio.insecure_channel(server) as channel:
            stub = pb_grpc.RefereeStub(channel)

            async def play_remote(seating: Seating):
                response = await stub.RunMatch(pb.RunMatchRequest(
                    admin_token=admin_token or "", game=config.game, options=wire.options_text(config.options),
                    lineup=list(seating.lineup), seed=seating.seed, clock=wire.clock(config.clock),
                    match_id=seating.key))
                return json.loads(response.results_json), json.loads(response.record_json)

            try:
                launcher.start_all()
                await asyncio.gather(*(play(s, play_remote) for s in todo))
            finally:
                launcher.stop_all()
                store.set_meta("launcher", json.dumps(launcher.status()))
    return len(todo) - len(skipped)
