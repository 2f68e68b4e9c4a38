"""A stdio bot for the tests, misbehaving to order like its gRPC twin, proto_bot.py.

    python tests/bots/stdio_bot.py [--mode MODE] [--after N] [--seed S]   (protocol = "stdio")

It plays as proto_bot.py does (a random legal action by name, from ``random.Random(seed)``, one
draw per request), so that the two make the same moves and, misbehaving alike, must be charged alike.
Modes (how it misbehaves, once ``--after`` decisions have gone well):
  random    no misbehaviour
  crash     the process dies (os._exit(1)) in the middle of a game
  hang      stops answering (keeps reading nothing, sleeps forever)
  illegal   answers an action the rules refuse
  garbage   writes a line that is not JSON at all instead of its answer (an escape in it, 300 characters)
  flood     writes --flood junk replies (for request ids nobody sent) before every real answer
  huge      writes a 10 MB line instead of its answer
  chatter   also writes lines of debug text to stdout, without end, from a thread of its own
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proto_bot import illegal_action  # noqa: E402  (the same illegal choice as the gRPC twin)


class Request:
    """What illegal_action reads of a request."""

    def __init__(self, legal_actions: list[str]):
        self.legal_actions = legal_actions


#: what the garbage mode writes: not JSON, with an escape sequence (it must reach no log raw) and long
GARBAGE = "XYZZY 42, not JSON \x1b[31m" + "#" * 276


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def chatter() -> None:
    n = 0
    while True:
        n += 1
        write(f"debug: thinking about move {n}...")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="random")
    p.add_argument("--after", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--flood", type=int, default=2000)
    args = p.parse_args()
    rng = random.Random(args.seed)
    decisions = 0
    if args.mode == "chatter":
        threading.Thread(target=chatter, daemon=True).start()
    for line in sys.stdin:
        message = json.loads(line)
        if "request" not in message:
            continue
        request = message["request"]
        decisions += 1
        legal = request["legalActions"]
        reply = {"requestId": request["requestId"], "gameId": request["gameId"], "seat": request.get("seat", 0),
                 "name": legal[rng.randrange(len(legal))]}
        if decisions > args.after:
            if args.mode == "crash":
                os._exit(1)
            elif args.mode == "hang":
                while True:
                    time.sleep(3600)
            elif args.mode == "illegal":
                reply["name"] = illegal_action(Request(legal))
            elif args.mode == "garbage":
                write(GARBAGE)
                continue
            elif args.mode == "flood":
                for _ in range(args.flood):
                    write(json.dumps({"action": {**reply, "requestId": str(rng.randrange(1 << 40)), "name": "FLOOD"}}))
            elif args.mode == "huge":
                write(json.dumps({"action": {**reply, "name": "X" * 10_000_000}}))
                continue
        write(json.dumps({"action": reply}))


if __name__ == "__main__":
    main()
