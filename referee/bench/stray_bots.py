"""The bots of section 7b (:mod:`referee.bench.strays`): an entrant that floods the referee with stray
replies, and its control.

    python -m referee.bench.stray_bots [--sessions N] KIT-ARGS      # N flooding sessions besides

(the stdio one: :mod:`referee.bench.stray_stdio`).

The hostile bots of the tests (tests/bots/hostile/attacks.py, ``--attack strays``) open their
flooding sessions with :func:`flood_session`.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from referee.bot import GameView, run_bot, token_from_fd
from referee.v1 import referee_pb2 as pb

STRAY_GAME = "no-such-game"     # what a stray names: a game nobody plays
REPORT_EVERY_S = 1.0


@dataclass
class Tally:
    """What a bot's flooding sessions met, added up over its threads."""

    opened: int = 0           # Hellos sent
    refused: int = 0
    closed: int = 0           # by the referee (RESOURCE_EXHAUSTED)
    last_refusal: str = ""
    last_close: str = ""
    #: per session, the stray messages its stream took (counted as they go)
    counts: list[list[int]] = field(default_factory=list, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def opening(self) -> list[int]:
        """A new session's stray count, counted in."""
        with self.lock:
            self.opened += 1
            self.counts.append(count := [0])
            return count

    def add(self, ended: dict[str, Any]) -> None:
        with self.lock:
            if ended["refusal"]:
                self.refused += 1
                self.last_refusal = ended["refusal"]
            elif ended["status"] == "RESOURCE_EXHAUSTED":
                self.closed += 1
                self.last_close = ended["details"]

    def line(self) -> str:
        with self.lock:
            facts = {k: v for k, v in vars(self).items() if k not in ("counts", "lock")}
            return "STRAYS " + json.dumps({**facts, "strays": sum(c[0] for c in self.counts)})


def stray_bytes(game_id: str = STRAY_GAME, seat: int = 0) -> bytes:
    """One BotMessage holding a reply for ``game_id`` (a game nobody plays, by default), serialized."""
    serialized: bytes = pb.BotMessage(action=pb.ActionReply(request_id=1 << 39, game_id=game_id, seat=seat,
                                                            name="X")).SerializeToString()
    return serialized


def flood_session(address: str, name: str, token: str, flood_from: str = "welcome",
                  count: list[int] | None = None,
                  on_answer: Callable[[str, str], None] | None = None) -> dict[str, Any]:
    """One session of bot ``name`` (capacity 1) that answers each request with the first legal action
    and, from its Welcome (``flood_from = "welcome"``) or its first request (``"request"``: it then
    holds a seat), sends stray replies besides, as fast as the stream takes them, until the stream ends.
    Returns how it ended: ``refusal`` (the Refusal's reason and message, or ""), ``status`` and
    ``details`` (the call's), ``strays`` (stray messages the stream took: also counted in ``count[0]``
    as they go), ``requests`` (it was sent). ``on_answer(kind, text)`` is told the referee's answer to
    its Hello as it comes: ("welcome", the session id) or ("refusal", the reason and message)."""
    hello = pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name=name, token=token, capacity=1,
                                         batching=True)).SerializeToString()
    stray = stray_bytes()
    outbox: queue.SimpleQueue[object] = queue.SimpleQueue()  # bytes to send, `wake`, or None: the end
    flooding, wake = threading.Event(), object()
    strays = count if count is not None else [0]
    requests = 0

    def outgoing() -> Iterator[object]:
        yield hello
        while True:
            if flooding.is_set():
                try:
                    item = outbox.get_nowait()
                except queue.Empty:
                    yield stray
                    strays[0] += 1  # taken: the stream asks for the next
                    continue
            else:
                item = outbox.get()
            if item is None:
                return
            if item is not wake:
                yield item

    ended = {"refusal": "", "status": "OK", "details": ""}
    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream("/referee.v1.Referee/Play", request_serializer=lambda b: b,
                                     response_deserializer=pb.RefereeMessage.FromString)
        call = play(outgoing())
        try:
            for message in call:
                kind = message.WhichOneof("kind")
                found = [m for m in message.batch.messages] if kind == "batch" else [message]
                for one in found:
                    what = one.WhichOneof("kind")
                    if what == "refusal":
                        ended["refusal"] = (f"{pb.Refusal.Reason.Name(one.refusal.reason)}: "
                                            f"{one.refusal.message}")
                    if what in ("welcome", "refusal") and on_answer is not None:
                        on_answer(what, one.welcome.session_id if what == "welcome" else ended["refusal"])
                    if what == flood_from and not flooding.is_set():
                        flooding.set()
                        outbox.put(wake)
                    if what == "request":
                        requests += 1
                        r = one.request
                        outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=r.request_id, game_id=r.game_id,
                                                                       seat=r.seat, index=0)).SerializeToString())
        except grpc.RpcError as err:
            ended["status"], ended["details"] = err.code().name, err.details() or ""
        finally:
            outbox.put(None)
            call.cancel()
    return {**ended, "strays": strays[0], "requests": requests}


def _flooders(address: str, name: str, token: str, sessions: int, tally: Tally) -> None:
    """``sessions`` threads, each opening flooding sessions one after another, without end; and one
    that prints what they met (``tally``) every REPORT_EVERY_S."""

    def flood() -> None:
        while True:
            try:
                tally.add(flood_session(address, name, token, count=tally.opening()))
            except Exception as err:  # noqa: BLE001 - a flooder keeps flooding
                tally.add({"refusal": "", "status": type(err).__name__, "details": str(err)})
                time.sleep(0.05)

    def report() -> None:
        while True:
            time.sleep(REPORT_EVERY_S)
            print(tally.line(), flush=True)

    for _ in range(sessions):
        threading.Thread(target=flood, daemon=True).start()
    threading.Thread(target=report, daemon=True).start()


def main(argv: Sequence[str]) -> None:
    """The gRPC entrant: on the kit, the first legal action; with ``--sessions N``, its own session says
    it plays 1 seat (leaving room for a session more within its seats), and from its first decision
    N threads open flooding sessions (:func:`flood_session`) one after another, without end."""
    parser = argparse.ArgumentParser(prog="python -m referee.bench.stray_bots", add_help=False)
    parser.add_argument("--sessions", type=int, default=0)
    parser.add_argument("--address", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--token-fd", type=int, default=None)
    parser.add_argument("--token", default="")
    parser.add_argument("--capacity", type=int, default=1)
    args = parser.parse_args(argv)
    token = token_from_fd(args.token_fd) if args.token_fd is not None else args.token
    flooding, tally = threading.Event(), Tally()

    def first_legal(observation: dict[str, Any], legal: list[str], game: GameView) -> int:
        if args.sessions and not flooding.is_set():  # its first match is on: the flood begins
            flooding.set()
            _flooders(args.address, args.name, token, args.sessions, tally)
        return 0

    capacity = 1 if args.sessions else args.capacity
    run_bot(first_legal, ["--address", args.address, "--name", args.name, "--token", token,
                          "--capacity", str(capacity)])
    if flooding.is_set():
        print(tally.line(), flush=True)
    os._exit(0)  # the flooders are daemon threads in grpc calls: do not wait for them


if __name__ == "__main__":
    main(sys.argv[1:])
