"""The remote executor: matches started on a ``referee serve`` elsewhere, by its RunMatch call."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.runner import Clock
from referee.tournament.config import BotSpec
from referee.tournament.executors.base import Executor
from referee.tournament.schedule import Seating


class RemoteExecutor(Executor):
    """Matches played by the referee at ``server`` (HOST:PORT), which needs its ``admin_token``.

    Launched bots connect to that server; external bots are expected to be connected already.
    Sandboxed, they keep the network namespace for now (until they reach it through a local relay)."""

    def __init__(self, game: str, options: Mapping[str, Any], clock: Clock, bots: Sequence[BotSpec],
                 capacity: Mapping[str, int], log_dir: Path | None = None, connect_timeout: float = 30.0,
                 sandbox: str = "auto", hide: Sequence[Path] = (), *, server: str, admin_token: str | None = None):
        super().__init__(game, options, clock, bots, capacity, log_dir, connect_timeout, sandbox, hide)
        self.server = server
        self.admin_token = admin_token

    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        import grpc

        from referee.v1 import referee_pb2_grpc as pb_grpc

        channel = await stack.enter_async_context(grpc.aio.insecure_channel(self.server))
        self.stub = pb_grpc.RefereeStub(channel)
        return self.server

    async def _run(self, seating: Seating, match_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        from referee import wire
        from referee.v1 import referee_pb2 as pb

        response = await self.stub.RunMatch(pb.RunMatchRequest(
            admin_token=self.admin_token or "", game=self.game, options=wire.options_text(self.options),
            lineup=list(seating.lineup), seed=seating.seed, clock=wire.clock(self.clock), match_id=match_id))
        return json.loads(response.results_json), json.loads(response.record_json)
