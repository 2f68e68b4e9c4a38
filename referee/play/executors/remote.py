"""The remote executor: matches started on a ``referee serve`` elsewhere, by its RunMatch call."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.hosting.relay import Relay
from referee.hosting.versions import Snapshots
from referee.model import Absent, BotSpec, ConfigError, Isolation, SandboxMode, Seating
from referee.play.executors.base import Executor
from referee.runner import Clock


class RemoteRefereeError(RuntimeError):
    """The remote referee cannot be reached, or refused a match (one line, for the user)."""


#: what a failed RunMatch means, by its status code
_FAILURES = {
    "UNAVAILABLE": "cannot reach the referee at {server} ({details})",
    "DEADLINE_EXCEEDED": "the referee at {server} did not answer ({details})",
    "PERMISSION_DENIED": "the referee at {server} refused the admin token (give the one its `referee serve` "
                         "was started with: --admin-token or $REFEREE_ADMIN_TOKEN)",
    "INVALID_ARGUMENT": "the referee at {server} refused the match: {details}",
}


class RemoteExecutor(Executor):
    """Matches played by the referee at ``server`` (HOST:PORT), which needs its ``admin_token``.

    Launched bots connect to that server; external bots are expected to be connected already.
    Sandboxed bots have no network: they reach it through a relay, a Unix socket in a directory
    of its own (bound into their sandbox) whose connections are forwarded to the server. A
    match's id there is the seating's key behind this run's own prefix, and its launched bots
    connect as ``NAME#RUN`` (with NAME's token) and are asked for by that name, so that any
    number of runs, one after another or at once, share one server, each seated on its own bots."""

    def __init__(self, game: str, options: Mapping[str, Any], clock: Clock, bots: Sequence[BotSpec],
                 capacity: Mapping[str, int], log_dir: Path | None = None, connect_timeout: float = 30.0,
                 sandbox: SandboxMode = SandboxMode.AUTO, hide: Sequence[Path] = (),
                 isolation: Isolation = Isolation.TOURNAMENT, startup_s: float = 30.0,
                 announce: Callable[[str], None] | None = None, absent: Absent = Absent.STOP,
                 snapshots: Snapshots | None = None, *, server: str, admin_token: str | None = None):
        if isolation == Isolation.MATCH:
            raise ConfigError('isolation = "match" needs the in-process referee: a remote one knows only the '
                              "bots its tokens name (leave out --server, or use isolation = \"tournament\")")
        super().__init__(game, options, clock, bots, capacity, log_dir, connect_timeout, sandbox, hide, isolation,
                         startup_s, announce, absent, snapshots)
        self.server = server
        self.admin_token = admin_token
        self.run_id = secrets.token_hex(4)
        self.session_tag = self.run_id  # this run's launched bots are seated in this run's matches only
        self._releasing: set[asyncio.Task[Any]] = set()

    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        # late: grpc and protobuf, which `referee --help` does not load
        import grpc

        from referee.v1 import referee_pb2_grpc as pb_grpc  # late: as grpc

        channel = await stack.enter_async_context(grpc.aio.insecure_channel(self.server))
        self.stub = pb_grpc.RefereeStub(channel)
        stack.push_async_callback(self._released)  # before the channel closes
        if self.sandbox is None or not self.sandbox.isolated:
            return self.server
        # each bot its own relay, with a cap on its connections
        return await self._open_doors(
            stack, lambda path: stack.enter_async_context(Relay(self.server, path, self.max_connections())))

    def _external_address(self) -> str:
        return self.server

    async def _run(self, seating: Seating, match_id: str,
                   sessions: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        # late: grpc and protobuf, which `referee --help` does not load
        import grpc

        from referee.play import wire  # late: as grpc
        from referee.v1 import referee_pb2 as pb  # late: as grpc

        assert self.launcher is not None, "use the executor in 'async with'"
        try:
            response = await self.stub.RunMatch(pb.RunMatchRequest(
                admin_token=self.admin_token or "", game=self.game, options=wire.options_text(self.options),
                lineup=[self.launcher.bots[bot].name if bot in self.launcher.bots else bot for bot in seating.lineup],
                seed=seating.seed, clock=wire.clock(self.clock),
                match_id=f"{self.run_id}/{match_id}" if match_id else ""))
        except grpc.aio.AioRpcError as err:
            text = _FAILURES.get(err.code().name, "the referee at {server} failed: {details}")
            raise RemoteRefereeError(text.format(server=self.server, details=err.details())) from None
        return json.loads(response.results_json), json.loads(response.record_json)

    def _release(self, game_ids: Sequence[str]) -> None:
        from referee.v1 import referee_pb2 as pb  # late: protobuf, which `referee --help` does not load

        request = pb.ReleaseRecordsRequest(admin_token=self.admin_token or "", match_ids=list(game_ids))
        task = asyncio.ensure_future(self.stub.ReleaseRecords(request))  # a call: awaitable, not a coroutine
        self._releasing.add(task)
        task.add_done_callback(self._release_done)

    def _release_done(self, task: asyncio.Task[Any]) -> None:
        """A release that failed is logged: the records stay held at the referee, which is
        safe (only its spectators miss them)."""
        self._releasing.discard(task)
        err = None if task.cancelled() else task.exception()
        if err is not None:
            details = err.details() if hasattr(err, "details") else str(err)
            logging.getLogger("referee").warning("the referee at %s did not release records: %s",
                                                 self.server, details)

    async def _released(self) -> None:
        """Wait for the releases sent (on the way out, before the channel closes)."""
        await asyncio.gather(*self._releasing, return_exceptions=True)
