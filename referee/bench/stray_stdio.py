"""The stdio entrant of section 7b (:mod:`referee.bench.strays`), in plain Python (no gRPC, nothing of
the referee's: its start is as short as a stdio bot's can be, for the relay opens its session at once):

    python -P referee/bench/stray_stdio.py [--flood]        # protocol = "stdio"

It answers each request with the first legal action; with ``--flood``, from its first request, it
also writes stray replies (for a game nobody plays) as fast as its stdout takes them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading

STRAY_GAME = "no-such-game"


def main(argv: list[str]) -> None:
    """The stdio entrant: the first legal action; with ``--flood``, from its first request, stray
    lines without end besides (each write under PIPE_BUF, so that no answer is cut into)."""
    parser = argparse.ArgumentParser(prog="stray_stdio.py")
    parser.add_argument("--flood", action="store_true")
    args = parser.parse_args(argv)
    line = json.dumps({"action": {"requestId": str(1 << 39), "gameId": STRAY_GAME, "seat": 0, "name": "X"}})
    chunk = ((line + "\n") * (4000 // (len(line) + 1))).encode()
    started = threading.Event()

    def flood() -> None:
        started.wait()
        while True:
            os.write(1, chunk)

    if args.flood:
        threading.Thread(target=flood, daemon=True).start()
    try:
        for text in sys.stdin:
            request = json.loads(text).get("request")
            if request is not None:
                answer = {"requestId": request["requestId"], "gameId": request["gameId"],
                          "seat": request.get("seat", 0), "index": 0}
                os.write(1, (json.dumps({"action": answer}) + "\n").encode())
                started.set()
    except (BrokenPipeError, OSError):
        pass
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
