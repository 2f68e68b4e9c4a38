"""A minimal bot written against the generated stubs, for the end-to-end tests.

    python tests/bots/proto_bot.py --address HOST:PORT --name NAME [--token T] [--mode MODE]

Modes (how it misbehaves, once ``--after`` decisions have gone well):
  random      a uniformly random legal action, by name (or --by-index)
  late        sleeps --sleep seconds before every answer
  burn        computes --cpu seconds of CPU (its thread's own clock) before every answer
  illegal     answers an action the rules refuse (a card it does not hold...)
  garbage     answers a name that is no action at all
  badindex    answers an index past the end of the legal list
  wrongid     answers with a request id that does not exist
  disconnect  closes the stream and exits
  rawgarbage  sends bytes that are not a protobuf message, then exits
  crashstart  exits at once with status 1, before connecting
  crash       the process dies (os._exit) in the middle of a game
  hang        stops answering (keeps the stream open, sleeps forever)
  otherseat   answers with its request id but the opponent's seat
  othergame   answers with its request id but another game's id
  flood       sends --flood junk replies before every real answer
  huge        answers with a 10 MB message (past the referee's limit)
  sessions    opens --flood extra sessions that say hello and then idle
  reconnect   closes its stream mid-game and comes back with a new session
--pin CPU binds it (every thread) to that CPU before it starts.
It prints one JSON line per message it receives when --trace is given;
--dump FILE writes every message exactly as received (4-byte length, bytes);
--script FILE answers the actions listed in that JSON file, in order.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import sys
import time

import grpc
from google.protobuf import json_format

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--address", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--token", default="")
    p.add_argument("--token-fd", type=int, default=None)
    p.add_argument("--mode", default="random")
    p.add_argument("--after", type=int, default=0, help="good decisions before misbehaving")
    p.add_argument("--sleep", type=float, default=0.0)
    p.add_argument("--cpu", type=float, default=0.0, help="seconds of CPU a decision takes in mode burn")
    p.add_argument("--pin", type=int, default=None, help="the CPU it runs on")
    p.add_argument("--capacity", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--by-index", action="store_true")
    p.add_argument("--trace", action="store_true")
    p.add_argument("--version", type=int, default=1)
    p.add_argument("--games", type=int, default=0, help="exit after this many game ends (0 = never)")
    p.add_argument("--flood", type=int, default=2000)
    p.add_argument("--dump")
    p.add_argument("--script")
    args = p.parse_args()
    if args.pin is not None:  # before any thread starts: they all inherit it
        os.sched_setaffinity(0, {args.pin})
    if args.token_fd is not None:
        with open(args.token_fd) as pipe:
            args.token = pipe.readline().strip()
    script = iter(json.load(open(args.script))) if args.script else None
    dump = open(args.dump, "wb") if args.dump else None
    rng = random.Random(args.seed)

    if args.mode == "crashstart":
        sys.exit(1)
    if args.mode == "sessions":
        idle = []
        for _ in range(args.flood):
            q: queue.Queue = queue.Queue()
            q.put(pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name=args.name, token=args.token,
                                               capacity=1)))
            channel = grpc.insecure_channel(args.address)
            idle.append((q, pb_grpc.RefereeStub(channel).Play(iter(q.get, None)), channel))
        args.mode = "random"
    if args.mode == "rawgarbage":
        channel = grpc.insecure_channel(args.address)
        raw = channel.stream_stream("/referee.v1.Referee/Play", request_serializer=lambda b: b,
                                    response_deserializer=lambda b: b)
        hello = pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name=args.name, token=args.token,
                                             capacity=args.capacity)).SerializeToString()
        outbox: queue.Queue = queue.Queue()
        outbox.put(hello)
        replies = raw(iter(outbox.get, None))
        for n, _ in enumerate(replies):  # the welcome, then the messages of a game
            if n == 1:
                outbox.put(b"\xff\xfe\xfd garbage \x00\x01")
                outbox.put(None)
        return

    while play_session(args, rng, script, dump) == "reconnect":
        args.mode, args.after = "random", 0


def play_session(args, rng, script, dump) -> str:
    outbox = queue.Queue()
    outbox.put(pb.BotMessage(hello=pb.Hello(protocol_version=args.version, bot_name=args.name,
                                            token=args.token, capacity=args.capacity)))
    channel = grpc.insecure_channel(args.address)
    if dump:  # keep the bytes exactly as received
        play = channel.stream_stream("/referee.v1.Referee/Play", request_serializer=pb.BotMessage.SerializeToString,
                                     response_deserializer=lambda b: b)
    else:
        play = pb_grpc.RefereeStub(channel).Play
    decisions = ended = 0
    for raw in play(iter(outbox.get, None)):
        if dump:
            dump.write(len(raw).to_bytes(4, "big") + raw)
            dump.flush()
        message = pb.RefereeMessage.FromString(raw) if dump else raw
        kind = message.WhichOneof("kind")
        if args.trace:
            print(json.dumps({"kind": kind, "message": json_format.MessageToDict(message)}), flush=True)
        if kind == "refusal":
            print(f"refused: {message.refusal.message}", file=sys.stderr)
            sys.exit(3)
        if kind == "game_end":
            ended += 1
            if args.games and ended >= args.games:
                outbox.put(None)
                return "done"
        if kind != "request":
            continue
        req = message.request
        decisions += 1
        misbehave = decisions > args.after and args.mode != "random"
        reply = pb.ActionReply(request_id=req.request_id, game_id=req.game_id, seat=req.seat)
        choice = rng.randrange(len(req.legal_actions))
        if script is not None:
            reply.name = next(script)
        elif args.by_index:
            reply.index = choice
        else:
            reply.name = req.legal_actions[choice]
        if misbehave:
            if args.mode == "late":
                time.sleep(args.sleep)
            elif args.mode == "burn":
                until = time.thread_time() + args.cpu
                while time.thread_time() < until:
                    pass
            elif args.mode == "illegal":
                reply.name = illegal_action(req)
            elif args.mode == "garbage":
                reply.name = "XYZZY 42"
            elif args.mode == "badindex":
                reply.index = len(req.legal_actions) + 5
            elif args.mode == "wrongid":
                reply.request_id = req.request_id + 100000
            elif args.mode == "disconnect":
                outbox.put(None)
                return "gone"
            elif args.mode == "reconnect":
                outbox.put(None)
                return "reconnect"
            elif args.mode == "crash":
                os._exit(1)
            elif args.mode == "hang":
                while True:
                    time.sleep(3600)
            elif args.mode == "otherseat":
                reply.seat = 1 - req.seat if req.seat < 2 else (req.seat + 1) % 4
            elif args.mode == "huge":
                reply.name = "X" * 10_000_000
            elif args.mode == "othergame":
                reply.game_id = req.game_id + "-not-mine"
            elif args.mode == "flood":
                for _n in range(args.flood):
                    outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=rng.randrange(1 << 40),
                                                                   game_id=req.game_id, seat=req.seat,
                                                                   name="FLOOD")))
        outbox.put(pb.BotMessage(action=reply))
    return "closed"


def illegal_action(req) -> str:
    """A well-formed action that is not among the legal ones."""
    legal = set(req.legal_actions)
    ranks, suits = "23456789TJQKA", "SHDC"
    for candidate in ["BID 14", "DECLARE 0"] + [r + s for s in suits for r in ranks] + \
            [f"BID {n}" for n in range(14)] + [f"DECLARE {n}" for n in range(1, 6)] + ["PASS", "STOP", "CONFIRM"]:
        if candidate not in legal and candidate not in ("BID 14", "DECLARE 0"):
            return candidate
    return "PASS"


if __name__ == "__main__":
    main()
