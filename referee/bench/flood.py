"""Section 7 (``--only flood``): a batched-reply flood beside a fair match, on a ``referee serve``.

The issue's attack: an accepted session sends 40 messages of 250,000 batched
replies each, as fast as gRPC takes them. Here a standalone ``referee serve``
(a process of its own) hosts, at once:

- a **control** match between two random bot processes on a tight clock
  (300 ms per decision, no bank): any delay of the server shows up there as a
  ``timeout`` fault;
- one **hostile** match per flooder, the flooder against a random bot: the
  flooder (:func:`flooder`, a process of its own) waits for its first
  request, then floods; once closed it comes back with a new session and
  floods again, ``--sessions`` times in all, so that the flood lasts;

while this process asks the server's ``ListGames`` every 25 ms and times each
answer. The figures: the latencies (median, 99th percentile, the slowest), the
faults of every match, and what each flooder's sessions were told when their
streams ended.

``python -m referee.bench --only flood`` prints them; the end-to-end test
(tests/test_sandbox_attacks.py) runs the same scenario and checks the faults.
"""

from __future__ import annotations

import argparse
import itertools
import json
import queue
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

#: the issue's flood: 40 messages of 250,000 replies (larger than the server reads), and one that
#: fits under the server's message size, so that the batch rule is what stops it
FLOODS = ((40, 250_000), (40, 10_000))
CONTROL_CLOCK_MS = (300, 0)  # decision, bank
PROBE_EVERY_S = 0.025


@dataclass(frozen=True)
class Flood:
    messages: int
    replies: int
    sessions: int = 50


def batch_bytes(replies: int, game_id: str, seat: int) -> bytes:
    """One BotMessage of ``replies`` junk ActionReplies for ``game_id``, serialized once."""
    reply: bytes = pb.ActionReply(request_id=1 << 39, game_id=game_id, seat=seat, name="X").SerializeToString()
    field = b"\x0a" + _varint(len(reply)) + reply  # ActionReplies.replies = 1
    body = field * replies
    return b"\x1a" + _varint(len(body)) + body  # BotMessage.actions = 3


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def flooder(address: str, name: str, token: str, messages: int, replies: int, sessions: int) -> None:
    """The hostile client: ``sessions`` sessions one after another, each sending ``messages``
    batches of ``replies`` replies (the first once it has a request to answer, so that it
    holds a seat); one JSON line per session: the messages gRPC took and how the stream ended."""
    hello = pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name=name, token=token, capacity=1,
                                         batching=True)).SerializeToString()
    with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1)]) as channel:
        play = channel.stream_stream("/referee.v1.Referee/Play", request_serializer=lambda b: b,
                                     response_deserializer=pb.RefereeMessage.FromString)
        for number in range(sessions):
            outbox: queue.Queue[bytes | None] = queue.Queue()
            outbox.put(hello)
            sent = [0]

            def outgoing() -> Iterator[bytes]:
                while (item := outbox.get()) is not None:  # noqa: B023 (called in this iteration)
                    yield item
                    sent[0] += item is not hello  # noqa: B023 (called in this iteration)

            call = play(outgoing())
            status, details, flooding = "OK", "", False
            try:
                for message in call:
                    kind = message.WhichOneof("kind")
                    found = ([m.request for m in message.batch.messages if m.WhichOneof("kind") == "request"]
                             if kind == "batch" else [message.request] if kind == "request" else [])
                    if not flooding and (found or number > 0 and kind == "welcome"):
                        flooding = True
                        junk = batch_bytes(replies, found[0].game_id if found else "none",
                                           found[0].seat if found else 0)
                        for _ in range(messages):
                            outbox.put(junk)
                        outbox.put(None)
            except grpc.RpcError as err:
                status, details = err.code().name, err.details()
            finally:
                outbox.put(None)
            print(json.dumps({"session": number, "messages_taken": sent[0], "status": status,
                              "details": details}), flush=True)


class Served:
    """A ``referee serve`` process with an admin token, a spectator token and the given bots' tokens."""

    def __init__(self, tokens: dict[str, str], log_path: Path):
        self.admin = secrets.token_hex(8)
        self.spectator = secrets.token_hex(8)
        self.log_path = log_path
        args = [arg for bot, token in tokens.items() for arg in ("--token", f"{bot}={token}")]
        self.process = subprocess.Popen([sys.executable, "-m", "referee", "serve", "--port", "0",
                                         "--admin-token", self.admin, "--spectator-token", self.spectator, *args],
                                        stdout=subprocess.DEVNULL, stderr=open(log_path, "w"))
        deadline = time.monotonic() + 30
        while not (found := re.search(r"listening on (\S+)", log_path.read_text())):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"referee serve did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.05)
        self.address = found.group(1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def _probe(address: str, token: str, watched: set[str], begun: threading.Event,
           done: threading.Event) -> list[float]:
    """ListGames latencies (ms), one call every PROBE_EVERY_S until ``done``, counted from the
    first answer that lists every game of ``watched``, when ``begun`` is set: the flood has
    begun, and the start-up of the bot processes is not timed."""
    latencies: list[float] = []
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.RefereeStub(channel)
        while not done.is_set():
            started = time.perf_counter()
            listed = stub.ListGames(pb.ListGamesRequest(token=token), timeout=30)
            if begun.is_set():
                latencies.append((time.perf_counter() - started) * 1000)
            elif watched <= {g.game_id for g in listed.games}:
                begun.set()
            done.wait(PROBE_EVERY_S)
    return latencies


def _run_match(address: str, admin: str, lineup: Sequence[str], game_id: str, clock_ms: tuple[int, int],
               seed: int) -> dict[str, Any]:
    with grpc.insecure_channel(address) as channel:
        response = pb_grpc.RefereeStub(channel).RunMatch(pb.RunMatchRequest(
            admin_token=admin, game="aegis", lineup=list(lineup), seed=seed, match_id=game_id,
            clock=pb.Clock(decision_ms=clock_ms[0], bank_ms=clock_ms[1])), timeout=600)
    return {"game_id": response.game_id, "lineup": list(lineup), "faults": json.loads(response.faults_json),
            "counts": json.loads(response.results_json)["faults"]}


def measure(floods: Sequence[Flood] = tuple(itertools.starmap(Flood, FLOODS)), seed: int = 1,
            log_dir: Path | None = None, controls: int = 2) -> dict[str, Any]:
    """The scenario of this module's docstring: the matches' faults, the flooders' sessions and the
    ListGames latencies (ms), measured from the start of the flood until every flooder is done
    and at least ``controls`` control matches are over (with no flood: the same, for comparison)."""
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(log_dir or tmp)
        bots = ["good1", "good2", *(f"foil{i}" for i in range(len(floods)))]
        evil = [f"evil{i}" for i in range(len(floods))]
        tokens = {name: secrets.token_hex(8) for name in bots + evil}
        server = Served(tokens, where / "serve.log")
        processes: list[subprocess.Popen[bytes] | subprocess.Popen[str]] = []
        try:
            processes = [subprocess.Popen([sys.executable, "-m", "sample_bots.random", "--address", server.address,
                                           "--name", name, "--token", tokens[name], "--seed", str(i)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                         for i, name in enumerate(bots)]
            flooders = [subprocess.Popen([sys.executable, "-m", "referee.bench.flood", server.address, name,
                                          tokens[name], str(f.messages), str(f.replies), str(f.sessions)],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                        for name, f in zip(evil, floods)]
            processes += flooders
            begun, done = threading.Event(), threading.Event()
            with ThreadPoolExecutor(max_workers=2 + len(floods)) as pool:
                watched = {f"hostile{i}" for i in range(len(floods))}
                probe = pool.submit(_probe, server.address, server.spectator, watched, begun, done)
                # each flooder floods once it has its first request, in its hostile match
                hostile = [pool.submit(_run_match, server.address, server.admin, [name, f"foil{i}"], f"hostile{i}",
                                       (1000, 10000), seed) for i, name in enumerate(evil)]
                if not begun.wait(60):
                    raise RuntimeError("the hostile matches did not start within 60 s")
                control: list[dict[str, Any]] = []
                while len(control) < controls or any(f.poll() is None for f in flooders):
                    control.append(_run_match(server.address, server.admin, ["good1", "good2"],
                                              f"control{len(control)}", CONTROL_CLOCK_MS, seed + len(control)))
                done.set()
                latencies = probe.result()
                hostile_results = [h.result() for h in hostile]
            sessions = [{"bot": name, "sessions": [json.loads(line) for line in out.splitlines()]}
                        for name, (out, _) in zip(evil, (f.communicate(timeout=60) for f in flooders))]
        finally:
            for process in processes:
                process.kill()
                process.wait()
            server.stop()
        log_lines = (where / "serve.log").read_text().splitlines()
    return {"floods": [{"messages": f.messages, "replies": f.replies, "sessions": f.sessions} for f in floods],
            "control": control, "hostile": hostile_results, "flooders": sessions,
            "list_games_ms": _summary(latencies), "probe_every_ms": PROBE_EVERY_S * 1000,
            "control_clock_ms": list(CONTROL_CLOCK_MS), "log_lines": len(log_lines),
            "longest_log_line": max(map(len, log_lines), default=0)}


def _summary(latencies: list[float]) -> dict[str, Any]:
    ordered = sorted(latencies)
    return {"calls": len(ordered), "median": round(statistics.median(ordered), 2),
            "p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
            "max": round(ordered[-1], 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.bench.flood",
                                     description="the flooder of section 7 (a hostile bot client)")
    parser.add_argument("address")
    parser.add_argument("name")
    parser.add_argument("token")
    parser.add_argument("messages", type=int)
    parser.add_argument("replies", type=int)
    parser.add_argument("sessions", type=int)
    args = parser.parse_args(argv)
    flooder(args.address, args.name, args.token, args.messages, args.replies, args.sessions)


if __name__ == "__main__":
    main()
