"""The in-process executor: a referee server in this process, on a free loopback port."""

from __future__ import annotations

import contextlib
from typing import Any

from referee.tournament.executors.base import Executor
from referee.tournament.schedule import Seating


class LocalExecutor(Executor):
    """Matches played by a :class:`~referee.server.RefereeServer` running in this process."""

    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        from referee.server import RefereeServer

        self.referee = await stack.enter_async_context(
            RefereeServer(tokens=self.tokens, connect_timeout=self.connect_timeout))
        return self.referee.address

    async def _run(self, seating: Seating, match_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        outcome = await self.referee.arena.run_match(self.game, self.options, seating.lineup, seed=seating.seed,
                                                     clock=self.clock, game_id=match_id or None, gone=self.gone)
        return outcome.results, outcome.record
