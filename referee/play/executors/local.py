"""The in-process executor: a referee server in this process, on a free loopback port
(and, for sandboxed bots, on a Unix socket in a directory of its own)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from referee.model import Seating
from referee.play.executors.base import Executor

if TYPE_CHECKING:
    from referee.play.arena import Arena


class LocalExecutor(Executor):
    """Matches played by a :class:`~referee.play.server.RefereeServer` running in this process."""

    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        from referee.play.server import RefereeServer  # late: grpc, which `referee --help` does not load

        self.referee = await stack.enter_async_context(
            RefereeServer(tokens=self.tokens, connect_timeout=self.connect_timeout, seats=self.seats()))
        self._loop = asyncio.get_running_loop()
        if self.sandbox is None or not self.sandbox.isolated:
            return self.referee.address
        # the bots' only way out: each its own socket, with a cap on its connections
        return await self._open_doors(stack, lambda path: self.referee.add_door(str(path), self.max_connections()))

    def _bot_ended(self, name: str) -> None:
        # a match waiting for this bot to connect stops waiting (the arena asks gone() again)
        try:
            self._loop.call_soon_threadsafe(self.arena.wake)
        except RuntimeError:  # the loop has closed: nobody is waiting
            pass

    def _end_sessions(self, names: Collection[str] | None) -> bool:
        arena = self.arena
        for name in list(arena.sessions) if names is None else names:
            for session in list(arena.sessions.get(name, ())):
                arena.close_session(session)  # what is queued (its GameEnds) goes first, then the stream ends
        return True

    @property
    def arena(self) -> Arena:
        arena = self.referee.arena
        assert arena is not None  # the referee has started (_open)
        return arena

    def _connected(self, name: str) -> bool:
        return self.arena.connected(name) > 0

    def _external_address(self) -> str:
        return self.referee.address

    def _admit(self, name: str, token: str, seats: int) -> None:
        self.arena.admit(name, token, seats)

    def _dismiss(self, name: str) -> None:
        self.arena.dismiss(name)

    def _release(self, game_ids: Sequence[str]) -> None:
        self.arena.release(game_ids)

    async def _run(self, seating: Seating, match_id: str,
                   sessions: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        assert self.launcher is not None, "use the executor in 'async with'"
        outcome = await self.arena.run_match(self.game, self.options, seating.lineup, seed=seating.seed,
                                             clock=self.clock, game_id=match_id or None, gone=self.gone,
                                             sessions=sessions, hold=True, meter=self.launcher.meter)
        return outcome.results, outcome.record
