"""Section 2: the transport floor, a raw gRPC echo between two processes.

What it measures: the cost of one decision's round trip on the wire and
nothing else. The server is a ``grpc.aio`` server in this process, built like
the referee's (same options, same generated ``Referee`` service, its ``Play``
an async generator); the client is a separate Python process using the same
gRPC API as the bot kit (a sync stub fed by a queue). Each round trip the
server writes one ``RefereeMessage`` holding a real ``DecisionRequest`` (the
median-sized request of a seeded random Aegis match, protobuf-encoded by
gRPC as the referee's are), the client decodes it and answers with an
``ActionReply``, and the server reads that answer. No game, no JSON, no
referee logic, no bot logic: what is left is protobuf, gRPC (C core and its
Python/asyncio layer), the kernel's loopback TCP and the two processes
waking each other.

The protocol sends one message per decision (the request, carrying the
events since the seat's last one), so one echo round trip is what one
decision costs the transport.

``Echo(clients=2)`` is the same echo with two client processes taking
turns, one round trip each: the shape of one Aegis game, whose two seats
are two bot processes. Each client then sleeps through the other's round
trip, so this is the most one such game could reach with a referee that did
no work at all (section 3's target is still measured against the plain echo).
"""

from __future__ import annotations

import asyncio
import os
import queue
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, Self, TypeVar

import grpc

from referee.games import GAMES, play_out
from referee.games.base import PUBLIC, GameState
from referee.play import wire
from referee.process import tune_gc
from referee.runner import Decision
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

T = TypeVar("T")


def all_known(values: list[T | None]) -> list[T] | None:
    """``values`` if none of them is None (a figure that could not be read), else None."""
    known = [v for v in values if v is not None]
    return known if len(known) == len(values) else None


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of a process so far; None where /proc is not there."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample_request(game: str = "aegis", seed: int = 1) -> pb.RefereeMessage:
    """The median-sized decision request of a random match, as the referee builds
    them (with the events the seat may see since its previous request)."""
    state = GAMES[game].new({}, seed=seed)
    rng = random.Random(seed)
    requests: list[pb.RefereeMessage] = []
    told = [0] * state.num_seats  # events up to here are in the seat's earlier requests

    def choose(state: GameState, seat: int) -> int:
        legal = state.legal_actions(seat)
        events = [wire.WireEvent(i, e) for i, e in enumerate(state.events)
                  if i >= told[seat] and e.to in (PUBLIC, seat)]
        told[seat] = len(state.events)
        requests.append(wire.request(Decision(len(requests) + 1, "g1", seat, state.observation(seat), tuple(legal),
                                              tuple(state.action_names(legal)), 1.0, 10.0), events))
        return rng.choice(legal)

    play_out(state, choose)
    requests.sort(key=lambda m: m.ByteSize())
    return requests[len(requests) // 2]


_Job = tuple[float, list[int], asyncio.Future[list[int]]]  # (until when, the round trips' ns, done with them)


class EchoServicer(pb_grpc.RefereeServicer):
    """``Play`` without a referee: after the hellos of ``clients`` streams, round
    trips on demand, the streams taking turns (one round trip each) when there
    are several, as the seats of one game do."""

    def __init__(self, request: pb.RefereeMessage, clients: int = 1):
        self.request = request
        self.clients = clients
        self.turns: list[asyncio.Queue[_Job | None]] = []
        self.connected = asyncio.Event()

    async def Play(self, request_iterator: AsyncIterator[pb.BotMessage],
                   context: grpc.aio.ServicerContext) -> AsyncIterator[pb.RefereeMessage]:
        replies = aiter(request_iterator)
        await anext(replies)  # the hello
        me = len(self.turns)
        turn: asyncio.Queue[_Job | None] = asyncio.Queue()
        self.turns.append(turn)
        if len(self.turns) == self.clients:
            self.connected.set()
        while (job := await turn.get()) is not None:
            deadline, times, done = job
            after = self.turns[(me + 1) % self.clients]
            while True:
                start = time.perf_counter_ns()
                yield self.request
                await anext(replies)
                times.append(time.perf_counter_ns() - start)
                if time.perf_counter() >= deadline:
                    done.set_result(times)
                    break
                if after is not turn:  # the next stream's turn
                    after.put_nowait(job)
                    break

    async def round_trips(self, seconds: float) -> list[int]:
        """Round trips for about ``seconds``: each one's time in ns."""
        done: asyncio.Future[list[int]] = asyncio.get_running_loop().create_future()
        self.turns[0].put_nowait((time.perf_counter() + seconds, [], done))
        return await done

    def stop(self) -> None:
        for turn in self.turns:
            turn.put_nowait(None)


def client(address: str) -> None:
    """The echo's client process: answer every request at once, until the stream ends
    (with the bots' process settings, so the floor is as low as theirs)."""
    tune_gc()
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(pb.BotMessage(hello=pb.Hello(protocol_version=wire.PROTOCOL_VERSION, bot_name="echo")))

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    with grpc.insecure_channel(address) as channel:
        try:
            for message in pb_grpc.RefereeStub(channel).Play(outgoing()):
                if message.WhichOneof("kind") == "request":
                    r = message.request
                    outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=r.request_id, game_id=r.game_id,
                                                                   seat=r.seat, index=0)))
        except grpc.RpcError:
            pass  # the bench stopped the server
        finally:
            outbox.put(None)


class Echo:
    """An echo server in this process and its client process(es)."""

    def __init__(self, clients: int = 1) -> None:
        self.request = sample_request()
        self.servicer = EchoServicer(self.request, clients)
        self.server: grpc.aio.Server | None = None
        self.processes: list[asyncio.subprocess.Process] = []

    async def __aenter__(self) -> Self:
        self.server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])  # as RefereeServer
        pb_grpc.add_RefereeServicer_to_server(self.servicer, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        for _ in range(self.servicer.clients):
            self.processes.append(await asyncio.create_subprocess_exec(sys.executable, "-m", "referee.bench",
                                                                       "--echo-client", f"127.0.0.1:{port}"))
        await asyncio.wait_for(self.servicer.connected.wait(), timeout=30)
        await self.measure(0.2)  # warm up
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.servicer.stop()  # the streams end, then the client processes
        for process in self.processes:
            await asyncio.wait_for(process.wait(), timeout=10)
        assert self.server is not None  # started by __aenter__
        await self.server.stop(None)

    async def measure(self, seconds: float) -> dict[str, Any]:
        start, cpu, client_cpu = time.perf_counter(), time.process_time(), self._clients_cpu()
        times = await self.servicer.round_trips(seconds)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        client_cpu_after = self._clients_cpu()
        client_cpu = None if client_cpu is None or client_cpu_after is None else client_cpu_after - client_cpu
        times.sort()
        return {
            "clients": self.servicer.clients,
            "request_bytes": self.request.ByteSize(),
            "round_trips": len(times),
            "round_trips_per_s": round(len(times) / wall),
            "median_us": round(statistics.median(times) / 1000, 1),
            "p99_us": round(times[min(len(times) - 1, int(len(times) * 0.99))] / 1000, 1),
            "server_cpu_us_per_round_trip": round(cpu / len(times) * 1e6),
            "client_cpu_us_per_round_trip": None if client_cpu is None else round(client_cpu / len(times) * 1e6),
        }

    def _clients_cpu(self) -> float | None:
        times = all_known([process_cpu(p.pid) for p in self.processes])
        return None if times is None else sum(times)
