"""The gRPC referee server (grpc.aio).

The servicer only translates: protobuf messages in, calls of the arena out,
and back. Sessions, seat assignment and matches live in ``arena.py``; the
clock and the fault policy in ``runner.py``; the rules in ``games/``.
Besides the Referee service the server offers the standard health service
and server reflection, so that ``grpcurl`` can list and call it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Mapping

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee import __version__, games, wire
from referee.arena import Arena, RefusalReason, Refused, shown
from referee.process import tune_gc
from referee.runner import Clock, GameInfo, MatchOutcome
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

log = logging.getLogger("referee")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Referee"].full_name

REFUSALS = {
    RefusalReason.UNSUPPORTED_VERSION: pb.Refusal.UNSUPPORTED_VERSION,
    RefusalReason.BAD_HELLO: pb.Refusal.BAD_HELLO,
    RefusalReason.BAD_TOKEN: pb.Refusal.BAD_TOKEN,
    RefusalReason.TOO_MANY_SESSIONS: pb.Refusal.TOO_MANY_SESSIONS,
}


#: how long a new stream may take to send its Hello, and how many may wait for theirs at once
HELLO_TIMEOUT_S = 10.0
MAX_WAITING_FOR_HELLO = 256


class RefereeServicer(pb_grpc.RefereeServicer):
    def __init__(self, arena: Arena, hello_timeout: float = HELLO_TIMEOUT_S,
                 max_waiting: int = MAX_WAITING_FOR_HELLO):
        self.arena = arena
        self.hello_timeout = hello_timeout
        self.max_waiting = max_waiting
        self.waiting = 0  # streams open that have not sent their Hello yet

    async def Play(self, request_iterator: AsyncIterator[pb.BotMessage],
                   context: grpc.aio.ServicerContext) -> AsyncIterator[pb.RefereeMessage]:
        if self.waiting >= self.max_waiting:
            yield wire.refusal(pb.Refusal.BAD_HELLO, f"{self.waiting} streams are already waiting to say Hello")
            return
        self.waiting += 1
        try:
            first = await asyncio.wait_for(anext(aiter(request_iterator)), self.hello_timeout)
        except TimeoutError:
            first = None
        except (StopAsyncIteration, grpc.RpcError, asyncio.CancelledError):
            return
        finally:
            self.waiting -= 1
        if first is None:
            yield wire.refusal(pb.Refusal.BAD_HELLO, f"no Hello within {self.hello_timeout:g} s")
            return
        if first.WhichOneof("kind") != "hello":
            yield wire.refusal(pb.Refusal.BAD_HELLO, "the first message of a session must be a Hello")
            return
        try:
            session = self.arena.open_session(first.hello)
        except Refused as refused:
            log.info("refused bot %s: %s", shown(first.hello.bot_name), refused)
            yield wire.refusal(REFUSALS[refused.reason], str(refused))
            return
        reader = asyncio.create_task(self._read(request_iterator, session))
        try:
            yield wire.welcome(session.session_id, f"referee {__version__}")
            while (message := await session.next_message()) is not None:
                yield message
        finally:
            reader.cancel()
            self.arena.close_session(session)

    async def _read(self, request_iterator: AsyncIterator[pb.BotMessage], session) -> None:
        try:
            async for message in request_iterator:
                answers = wire.replies(message)
                for answer in answers:
                    session.on_reply(answer)
                if not answers:
                    session.stray_replies += 1
        except grpc.RpcError as err:  # the stream broke (client gone, undecodable bytes)
            log.info("session %s: stream ended: %s", session.session_id, err)
        except Exception:  # noqa: BLE001 - a bot must never bring the server down
            log.exception("session %s: reader failed", session.session_id)
        finally:
            self.arena.close_session(session)

    async def Spectate(self, request: pb.SpectateRequest,
                       context: grpc.aio.ServicerContext) -> AsyncIterator[pb.SpectatorMessage]:
        game_id = request.game_id
        try:
            async for item in self.arena.spectate(game_id):
                match item:
                    case GameInfo():
                        yield wire.spectator_start(item)
                    case MatchOutcome():
                        for message in wire.spectator_end(game_id, item.results, item.record):
                            yield message
                    case (index, event):
                        yield wire.spectator_event(game_id, index, event)
        except KeyError:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no game {request.game_id!r} on this server")

    async def ListGames(self, request: pb.ListGamesRequest, context) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=[
            pb.GameInfo(game_id=gid, game=m.info.game, seat_names=list(m.info.seat_names),
                        finished=m.outcome is not None)
            for gid, m in self.arena.matches.items()])

    async def RunMatch(self, request: pb.RunMatchRequest, context) -> pb.RunMatchResponse:
        expected = self.arena.admin_token
        if expected is None or not secrets.compare_digest(expected.encode(), request.admin_token.encode()):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "RunMatch needs the server's admin token")
        seed = request.seed if request.HasField("seed") else secrets.randbelow(2**63)
        try:
            options = games.get(request.game).parse_options(dict(request.options))
            outcome = await self.arena.run_match(
                request.game, options, list(request.lineup), seed=seed,
                clock=wire.clock_from(request.clock, Clock()), game_id=request.match_id or None)
        except (games.GameError, ValueError) as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        return pb.RunMatchResponse(game_id=outcome.game_id, results_json=wire.to_json(outcome.results),
                                   record_json=json.dumps(outcome.record),
                                   faults_json=wire.to_json([f.to_dict() for f in outcome.faults]))


class RefereeServer:
    """A running referee: ``await start()``, then ``arena.run_match(...)``, then ``await stop()``.

    It listens on ``host:port`` and, given ``unix`` (a path), on that Unix socket too (mode 0666,
    so that a bot running as another user may connect; removed when the server stops)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tokens: Mapping[str, str] | None = None,
                 admin_token: str | None = None, connect_timeout: float = 10.0, unix: str | None = None,
                 hello_timeout: float = HELLO_TIMEOUT_S):
        self.host = host
        self.hello_timeout = hello_timeout
        self.requested_port = port
        self.unix = unix
        self.arena_args = dict(tokens=tokens, admin_token=admin_token, connect_timeout=connect_timeout)
        self.arena: Arena | None = None
        self.port: int | None = None
        self._server: grpc.aio.Server | None = None
        self._doors: list[tuple[grpc.aio.Server, str]] = []

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self) -> str:
        tune_gc()
        self.arena = Arena(**self.arena_args)
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        pb_grpc.add_RefereeServicer_to_server(RefereeServicer(self.arena, self.hello_timeout), server)
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            server)
        self.port = server.add_insecure_port(f"{self.host}:{self.requested_port}")
        if not self.port:
            raise OSError(f"cannot listen on {self.host}:{self.requested_port}")
        if self.unix is not None and not server.add_insecure_port(f"unix:{self.unix}"):
            raise OSError(f"cannot listen on unix:{self.unix}")
        await server.start()
        if self.unix is not None:
            os.chmod(self.unix, 0o666)
        self._server = server
        log.info("referee listening on %s%s", self.address, f" and unix:{self.unix}" if self.unix else "")
        return self.address

    async def add_door(self, path: str, max_connections: int) -> None:
        """Listen on the Unix socket ``path`` too (mode 0666), taking at most ``max_connections``
        connections through it at once (grpc closes the others as they come): one bot's own way
        in, so that however many connections it opens, it uses up only its own door."""
        door = grpc.aio.server(options=[("grpc.so_reuseport", 0),
                                        ("grpc.max_allowed_incoming_connections", max_connections)])
        pb_grpc.add_RefereeServicer_to_server(RefereeServicer(self.arena, self.hello_timeout), door)
        if not door.add_insecure_port(f"unix:{path}"):
            raise OSError(f"cannot listen on unix:{path}")
        await door.start()
        os.chmod(path, 0o666)
        self._doors.append((door, path))

    async def stop(self, grace: float | None = 1.0) -> None:
        for door, path in self._doors:
            await door.stop(grace)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self._doors = []
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
            if self.unix is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.unix)

    async def wait(self) -> None:
        """Until the server stops."""
        if self._server is not None:
            await self._server.wait_for_termination()

    async def __aenter__(self) -> RefereeServer:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()


async def serve_forever(host: str, port: int, tokens: Mapping[str, str] | None, admin_token: str | None,
                        unix: str | None = None) -> None:
    server = RefereeServer(host, port, tokens, admin_token, unix=unix)
    await server.start()
    try:
        await server.wait()
    finally:
        await server.stop()
