"""Runs a tournament: schedule, bots, matches, the store.

The referee runs in-process (a :class:`~referee.server.RefereeServer` on a
free loopback port) unless a remote server is given, in which case matches
are started there with the RunMatch call. Matches play ``concurrency`` at a
time; each is saved the moment it ends, so an interrupted run resumes where
it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from referee.runner import Clock
from referee.tournament.config import BotSpec, TournamentConfig
from referee.tournament.launcher import Launcher
from referee.tournament.schedule import Schedule, Seating, make_schedule
from referee.tournament.store import Store


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


def claim_store(config: TournamentConfig, fingerprint: str, description: dict[str, Any]) -> Store:
    """The output directory's store, bound to this configuration (refuses another one's)."""
    store = Store(config.output)
    store.claim(fingerprint, description, config.bots)
    return store


def open_store(config: TournamentConfig) -> Store:
    return claim_store(config, config.fingerprint(), config.describe())


def seat_capacity(seatings: Sequence[Seating], concurrency: int) -> dict[str, int]:
    """Seats a launched bot must play at once: its most seats in one match x concurrency."""
    most: dict[str, int] = {}
    for s in seatings:
        for bot in set(s.lineup):
            most[bot] = max(most.get(bot, 0), s.lineup.count(bot))
    return {bot: n * concurrency for bot, n in most.items()}


class BotsDead(Exception):
    """Launched bots that died too often to be started again: {name: why}."""

    def __init__(self, reasons: Mapping[str, str]):
        super().__init__("; ".join(f"bot {name} {why}" for name, why in sorted(reasons.items())))
        self.reasons = dict(reasons)


class MatchPlayer:
    """Launched bots and a referee (in-process, or remote with ``server``) for playing seatings.

    ``async with MatchPlayer(...) as player: played = await player.play(seating)``. Each bot is
    launched with ``capacity[name]`` seats; a bot that died is started again before its next match."""

    def __init__(self, game: str, options: Mapping[str, Any], clock: Clock, bots: Sequence[BotSpec],
                 capacity: Mapping[str, int], log_dir: Path | None, server: str | None = None,
                 admin_token: str | None = None, connect_timeout: float = 30.0):
        self.game, self.options, self.clock = game, dict(options), clock
        self.bots = list(bots)
        self.capacity = dict(capacity)
        self.log_dir = log_dir
        self.server = server
        self.admin_token = admin_token
        self.connect_timeout = connect_timeout
        self.tokens = {b.name: b.token or secrets.token_hex(16) for b in self.bots}
        self.launcher: Launcher | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._play_one = None

    async def __aenter__(self) -> Self:
        from referee.server import RefereeServer

        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        self._stack = stack
        try:
            if self.server is None:
                referee = await stack.enter_async_context(
                    RefereeServer(tokens=self.tokens, connect_timeout=self.connect_timeout))
                address = referee.address

                async def play_local(seating: Seating) -> tuple[dict[str, Any], dict[str, Any]]:
                    outcome = await referee.arena.run_match(self.game, self.options, seating.lineup,
                                                            seed=seating.seed, clock=self.clock, game_id=seating.key,
                                                            gone=self.launcher.gone)
                    return outcome.results, outcome.record

                self._play_one = play_local
            else:
                import grpc

                from referee import wire
                from referee.v1 import referee_pb2 as pb
                from referee.v1 import referee_pb2_grpc as pb_grpc

                address = self.server
                channel = await stack.enter_async_context(grpc.aio.insecure_channel(self.server))
                stub = pb_grpc.RefereeStub(channel)

                async def play_remote(seating: Seating) -> tuple[dict[str, Any], dict[str, Any]]:
                    response = await stub.RunMatch(pb.RunMatchRequest(
                        admin_token=self.admin_token or "", game=self.game, options=wire.options_text(self.options),
                        lineup=list(seating.lineup), seed=seating.seed, clock=wire.clock(self.clock),
                        match_id=seating.key))
                    return json.loads(response.results_json), json.loads(response.record_json)

                self._play_one = play_remote
            self.launcher = Launcher(self.bots, address, self.tokens, self.capacity, self.log_dir)
            stack.callback(self.launcher.stop_all)  # runs before the server stops
            self.launcher.start_all()
        except BaseException:
            await stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()

    async def play(self, seating: Seating) -> Played:
        """Play one match; raises :class:`BotsDead` (without playing) if a bot of the line-up died
        more than its ``max_restarts`` times."""
        assert self.launcher is not None and self._play_one is not None, "use MatchPlayer in 'async with'"
        dead = self.launcher.ensure_running(seating.lineup)
        if dead:
            status = self.launcher.status()
            raise BotsDead({name: status[name]["dead"] for name in dead})
        started = time.monotonic()
        results, record = await self._play_one(seating)
        return Played(seating, results, record, time.monotonic() - started)



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
    lock = asyncio.Semaphore(config.concurrency)
    skipped = 0
    player = MatchPlayer(config.game, config.options, config.clock, config.bots,
                         seat_capacity(schedule.seatings, config.concurrency), config.output / "logs", server,
                         admin_token, connect_timeout)

    async def play(seating: Seating) -> None:
        nonlocal finished, skipped
        async with lock:
            try:
                played = await player.play(seating)
            except BotsDead:
                skipped += 1
                return
            store.save(seating.key, seating.deal_set, seating.seed, seating.lineup, played.results, played.record,
                       played.seconds)
            finished += 1
            if progress:
                progress(finished, total, played)

    try:
        async with player:
            await asyncio.gather(*(play(s) for s in todo))
    finally:
        if player.launcher is not None:
            store.set_meta("launcher", json.dumps(player.launcher.status()))
    return len(todo) - skipped


async def run(config: TournamentConfig, store: Store, progress: Progress | None = None,
              server: str | None = None, admin_token: str | None = None, connect_timeout: float = 30.0) -> int:
    """Play the tournament's matches not yet in the store; returns how many were played."""
    return await play_schedule(config, schedule_of(config), store, progress, server, admin_token, connect_timeout)
