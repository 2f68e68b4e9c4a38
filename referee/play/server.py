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
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from referee import __version__, games
from referee.play import wire
from referee.play.arena import (
    Arena,
    Ended,
    RecordHeld,
    RefusalReason,
    Refused,
    Released,
    Session,
    SpectatorRefused,
    instance_of,
    shown,
)
from referee.process import tune_gc
from referee.runner import Clock, GameInfo
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
#: the largest message the server reads (a batch of 256 replies is some 60 KB at most); a larger
#: one breaks its stream (RESOURCE_EXHAUSTED) before any of it is decoded
MAX_MESSAGE_BYTES = 256 * 1024


#: calls one connection through a bot's door may have open at once: a session is one Play stream,
#: and a flood of other calls (refused, each still work for the referee) waits behind these
DOOR_STREAMS = 4


def server_options(hello_timeout: float) -> list[tuple[str, int]]:
    """The options of every listening grpc server: a message at most MAX_MESSAGE_BYTES, and a
    connection that opens no stream (nor even speaks HTTP/2) closed after ``hello_timeout``, as a
    stream that sends no Hello is (a client with no call open just connects again)."""
    return [("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.server_handshake_timeout_ms", round(hello_timeout * 1000)),
            ("grpc.max_connection_idle_ms", round(hello_timeout * 1000))]


class RefereeServicer(pb_grpc.RefereeServicer):
    def __init__(self, arena: Arena, hello_timeout: float = HELLO_TIMEOUT_S,
                 max_waiting: int = MAX_WAITING_FOR_HELLO):
        self.arena = arena
        self.hello_timeout = hello_timeout
        self.max_waiting = max_waiting
        self.waiting = 0  # streams open that have not been welcomed or refused yet

    async def Play(self, request_iterator: AsyncIterator[pb.BotMessage],
                   context: grpc.aio.ServicerContext) -> AsyncIterator[pb.RefereeMessage]:
        if self.waiting >= self.max_waiting:
            yield wire.refusal(pb.Refusal.BAD_HELLO, f"{self.waiting} streams are already waiting for their Welcome")
            return
        self.waiting += 1
        try:
            session = await self._session(request_iterator)
        finally:
            self.waiting -= 1
        if session is None:
            return
        if isinstance(session, pb.RefereeMessage):  # a refusal
            yield session
            return
        reader = asyncio.create_task(self._read(request_iterator, session))
        try:
            yield wire.welcome(session.session_id, f"referee {__version__}")
            while (message := await session.next_message()) is not None:
                yield message
            if session.expelled:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, session.expelled)
        finally:
            reader.cancel()
            self.arena.close_session(session)

    async def _session(self, request_iterator: AsyncIterator[pb.BotMessage]) -> Session | pb.RefereeMessage | None:
        """The session a stream's Hello opens, or the refusal to answer it with; None if the stream ended
        first. A Hello refused only for want of room waits up to the Hello deadline for a place
        (:meth:`~referee.play.arena.Arena.open_session_when_room`)."""
        try:
            first = await asyncio.wait_for(anext(aiter(request_iterator)), self.hello_timeout)
        except TimeoutError:
            return wire.refusal(pb.Refusal.BAD_HELLO, f"no Hello within {self.hello_timeout:g} s")
        except (StopAsyncIteration, grpc.RpcError, asyncio.CancelledError):
            return None
        if first.WhichOneof("kind") != "hello":
            return wire.refusal(pb.Refusal.BAD_HELLO, "the first message of a session must be a Hello")
        try:
            return await self.arena.open_session_when_room(first.hello, self.hello_timeout)
        except Refused as refused:
            log.info("refused bot %s: %s", shown(first.hello.bot_name), refused)
            return wire.refusal(REFUSALS[refused.reason], str(refused))

    async def _read(self, request_iterator: AsyncIterator[pb.BotMessage], session: Session) -> None:
        """The session's messages, one at a time, each a bounded piece of work (its size is capped by
        MAX_MESSAGE_BYTES, its replies by the session's open requests), yielding to the other
        streams after each; past UNASKED_ALLOWANCE messages that answer no request the session is
        closed, before any work on the next: a flood delays only the flooder, and costs it its session."""
        try:
            async for message in request_iterator:
                if not session.on_replies(wire.replies(message), batched=message.WhichOneof("kind") == "actions"):
                    break
                await asyncio.sleep(0)
        except grpc.RpcError as err:  # the stream broke (client gone, undecodable bytes)
            log.info("session %s: stream ended: %s", session.session_id, err)
        except Exception:  # noqa: BLE001 - a bot must never bring the server down
            log.exception("session %s: reader failed", session.session_id)
        finally:
            self.arena.close_session(session)

    async def _spectator(self, token: str, context: grpc.aio.ServicerContext) -> None:
        """Abort the call unless ``token`` may spectate and list games."""
        try:
            self.arena.check_spectator(token)
        except SpectatorRefused as refused:
            code = grpc.StatusCode.UNAUTHENTICATED if refused.missing else grpc.StatusCode.PERMISSION_DENIED
            await context.abort(code, str(refused))

    async def _admin(self, token: str, call: str, context: grpc.aio.ServicerContext) -> None:
        """Abort the call unless ``token`` is the server's admin token."""
        expected = self.arena.admin_token
        if expected is None or not secrets.compare_digest(expected.encode(), token.encode()):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, f"{call} needs the server's admin token")

    async def Spectate(self, request: pb.SpectateRequest,
                       context: grpc.aio.ServicerContext) -> AsyncIterator[pb.SpectatorMessage]:
        await self._spectator(request.token, context)
        game_id, form = request.game_id, request.data_form
        if form not in wire.DATA_FORMS:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"data_form {form} is none of DATA_JSON (0), "
                                                                  f"DATA_TYPED (1), DATA_BOTH (2)")
        game = ""
        try:
            async for item in self.arena.spectate(game_id):
                match item:
                    case GameInfo():
                        game = item.game
                        yield wire.spectator_start(item)
                    case Ended():
                        yield wire.spectator_end(game_id, item.results, form, game)
                    case RecordHeld():
                        yield wire.spectator_record_held()
                    case Released():
                        yield wire.spectator_record(item.record)
                    case (index, event):
                        yield wire.spectator_event(game_id, index, event, form, game)
        except KeyError:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no game {request.game_id!r} on this server")

    async def ListGames(self, request: pb.ListGamesRequest, context: grpc.aio.ServicerContext) -> pb.ListGamesResponse:
        await self._spectator(request.token, context)
        return pb.ListGamesResponse(games=[
            pb.GameInfo(game_id=gid, game=m.info.game, seat_names=list(m.info.seat_names),
                        finished=m.outcome is not None, record_held=m.held)
            for gid, m in self.arena.matches.items()])

    async def RunMatch(self, request: pb.RunMatchRequest, context: grpc.aio.ServicerContext) -> pb.RunMatchResponse:
        await self._admin(request.admin_token, "RunMatch", context)
        seed = request.seed if request.HasField("seed") else secrets.randbelow(2**63)
        # NAME#TAG seats a session connected under that name, and the record names bot NAME
        sessions = list(request.lineup)
        try:
            options = games.get(request.game).parse_options(dict(request.options))
            outcome = await self.arena.run_match(
                request.game, options, [instance_of(name) for name in sessions], seed=seed,
                clock=wire.clock_from(request.clock, Clock()), game_id=request.match_id or None,
                hold=not request.release_at_end, sessions=sessions)
        except (games.GameError, ValueError) as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        return pb.RunMatchResponse(game_id=outcome.game_id, results_json=wire.to_json(outcome.results),
                                   record_json=json.dumps(outcome.record),
                                   faults_json=wire.to_json([f.to_dict() for f in outcome.faults]))

    async def ReleaseRecords(self, request: pb.ReleaseRecordsRequest,
                             context: grpc.aio.ServicerContext) -> pb.ReleaseRecordsResponse:
        await self._admin(request.admin_token, "ReleaseRecords", context)
        return pb.ReleaseRecordsResponse(released=self.arena.release(list(request.match_ids)))


class CannotListen(OSError):
    """The server cannot listen where it was told (one line, for the user)."""


def why_not_listening(host: str, port: int | None = None, unix: str | None = None) -> str:
    """Why a grpc server could not bind (grpc says only that it failed): the operating system's
    answer to a plain socket bound the same way, e.g. "[Errno 98] Address already in use"."""
    if unix is not None:
        where: list[tuple[Any, ...]] = [(socket.AF_UNIX, socket.SOCK_STREAM, 0, "", unix)]
    else:
        try:
            where = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as err:
            return f"cannot resolve {host!r} ({err.strerror})"
    for family, kind, proto, _, address in where:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as err:
                return str(err)
        if unix is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(unix)
    return "grpc refused it (set GRPC_VERBOSITY=debug to see why)"


def _listen(server: grpc.aio.Server, address: str, why: Callable[[], str]) -> int:
    """``server.add_insecure_port(address)``; raises CannotListen with ``why()``."""
    try:
        port: int = server.add_insecure_port(address)
    except RuntimeError:  # grpc: "Failed to bind to address ..."
        port = 0
    if not port:
        raise CannotListen(f"cannot listen on {address}: {why()}")
    return port


class RefereeServer:
    """A running referee: ``await start()``, then ``arena.run_match(...)``, then ``await stop()``.

    It listens on ``host:port`` and, given ``unix`` (a path), on that Unix socket too (mode 0666,
    so that a bot running as another user may connect; removed when the server stops)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tokens: Mapping[str, str] | None = None,
                 admin_token: str | None = None, connect_timeout: float = 10.0, unix: str | None = None,
                 hello_timeout: float = HELLO_TIMEOUT_S, spectator_token: str | None = None,
                 public_spectators: bool = False, seats: Mapping[str, int] | None = None):
        self.host = host
        self.hello_timeout = hello_timeout
        self.requested_port = port
        self.unix = unix
        self.arena_args: dict[str, Any] = dict(tokens=tokens, admin_token=admin_token, connect_timeout=connect_timeout,
                               spectator_token=spectator_token, public_spectators=public_spectators, seats=seats)
        self.arena: Arena | None = None
        self.port: int | None = None
        self._server: grpc.aio.Server | None = None
        self._doors: list[tuple[grpc.aio.Server, str]] = []

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self) -> str:
        tune_gc()
        arena = self.arena = Arena(**self.arena_args)
        server = grpc.aio.server(options=server_options(self.hello_timeout))
        pb_grpc.add_RefereeServicer_to_server(RefereeServicer(arena, self.hello_timeout), server)
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            server)
        self.port = _listen(server, f"{self.host}:{self.requested_port}",
                            lambda: why_not_listening(self.host, self.requested_port))
        if self.unix is not None:
            _listen(server, f"unix:{self.unix}", lambda: why_not_listening("", unix=self.unix))
        await server.start()
        if self.unix is not None:
            os.chmod(self.unix, 0o666)
        self._server = server
        log.info("referee listening on %s%s", self.address, f" and unix:{self.unix}" if self.unix else "")
        return self.address

    async def add_door(self, path: str, max_connections: int) -> None:
        """Listen on the Unix socket ``path`` too (mode 0666), taking at most ``max_connections``
        connections through it at once (grpc closes the others as they come), each with at most
        :data:`DOOR_STREAMS` calls open: one bot's own way in, so that however many connections
        and calls it opens, it uses up only its own door."""
        assert self.arena is not None, "start the server first"
        door = grpc.aio.server(options=[*server_options(self.hello_timeout),
                                        ("grpc.max_allowed_incoming_connections", max_connections),
                                        ("grpc.max_concurrent_streams", DOOR_STREAMS)])
        pb_grpc.add_RefereeServicer_to_server(RefereeServicer(self.arena, self.hello_timeout), door)
        _listen(door, f"unix:{path}", lambda: why_not_listening("", unix=path))
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

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def serve_forever(host: str, port: int, tokens: Mapping[str, str] | None, admin_token: str | None,
                        unix: str | None = None, spectator_token: str | None = None,
                        public_spectators: bool = False,
                        around: Callable[[Arena], AbstractAsyncContextManager[object]] | None = None) -> None:
    """Serve until cancelled; ``around(arena)`` (the live page) is entered once the server is up."""
    server = RefereeServer(host, port, tokens, admin_token, unix=unix, spectator_token=spectator_token,
                           public_spectators=public_spectators)
    await server.start()
    assert server.arena is not None  # made by start()
    try:
        async with around(server.arena) if around else contextlib.nullcontext():
            await server.wait()
    finally:
        await server.stop()
