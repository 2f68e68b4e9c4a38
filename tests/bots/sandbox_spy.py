"""A bot that looks at its surroundings, prints what it saw as one JSON line
(``SPY {...}``) to its output (its log), then plays randomly (or, with
``--then ACTION``, does something else instead of playing). For
tests/test_sandbox.py: what a launched bot sees, and what it may do.

    python tests/bots/sandbox_spy.py --look PATH [--look PATH...] [--tcp PORT]
        [--then play|exit|orphan|group|fork|write|memory] [--count N] [--size-mb N]
        --address A --name N --token-fd FD --capacity C
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time


def look(path: str) -> dict:
    """What this path is here: missing, a directory (its entries), a file (its size, readable?)."""
    try:
        if os.path.isdir(path):
            return {"dir": sorted(os.listdir(path))}
        with open(path, "rb") as f:
            return {"file": len(f.read())}
    except OSError as err:
        return {"error": err.strerror}


def can_write(folder: str) -> str:
    try:
        with open(os.path.join(folder, f"spy-{os.getpid()}"), "w") as f:
            f.write("x")
        return "yes"
    except OSError as err:
        return err.strerror or str(err)


def tcp(port: int) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return "connected"
    except OSError as err:
        return err.strerror or str(err)


def processes() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    found.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return found


def interfaces() -> list[str]:
    with open("/proc/net/dev") as f:
        return sorted(line.split(":")[0].strip() for line in f.read().splitlines()[2:] if line.strip())


def everything_readable() -> bytes:
    """Every process's command line and environment this bot can read, in one blob."""
    blob = b""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for part in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{pid}/{part}", "rb") as f:
                        blob += f.read() + b"\n"
                except OSError:
                    pass
    return blob


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--look", action="append", default=[])
    p.add_argument("--tcp", type=int, default=0)
    p.add_argument("--then", default="play")
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--size-mb", type=int, default=0)
    p.add_argument("--marker", default="")
    p.add_argument("--address")
    p.add_argument("--name")
    p.add_argument("--token-fd", type=int)
    p.add_argument("--capacity", type=int, default=1)
    args = p.parse_args()
    fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    with open(args.token_fd) as pipe:
        token = pipe.readline().strip()
    seen = {
        "argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd(), "uid": os.getuid(), "fds": fds,
        "token_length": len(token), "token_in_proc": token.encode() in everything_readable(),
        "processes": processes(), "interfaces": interfaces(),
        "look": {path: look(path) for path in args.look},
        "write": {folder: can_write(folder) for folder in (os.getcwd(), sys.prefix, os.environ.get("HOME", "/"))},
        "tcp": tcp(args.tcp) if args.tcp else None,
        "socket": os.listdir("/run/referee") if os.path.isdir("/run/referee") else None,
    }
    print("SPY " + json.dumps(seen), flush=True)
    if args.then == "exit":
        return
    if args.then == "orphan":  # a grandchild in its own session, then this process dies
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", args.marker])
            os._exit(0)
        time.sleep(0.5)
        sys.exit(5)
    if args.then == "group":  # a child in its own process group (same session), then this process dies
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", args.marker],
                                 process_group=0)
        print(f"SPY group child {child.pid}", flush=True)
        time.sleep(0.5)
        sys.exit(5)
    if args.then == "fork":  # as many processes as it can, each waiting
        children = []
        try:
            for _ in range(args.count):
                children.append(subprocess.Popen(["sleep", "60"]))
        except OSError as err:
            print(f"SPY fork stopped after {len(children)}: {err}", flush=True)
        sys.exit(6)
    if args.then == "write":
        with open(os.path.join(os.environ["HOME"], "big"), "wb") as f:
            for _ in range(args.size_mb):
                f.write(b"\0" * 1024 * 1024)
        print("SPY wrote it all", flush=True)
        sys.exit(0)
    if args.then == "memory":  # children holding memory, then this process grows until something gives
        code = f"b = bytearray({args.size_mb} * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); " \
               "import time; time.sleep(60)"
        for _ in range(args.count):
            subprocess.Popen([sys.executable, "-c", code])
        time.sleep(1)
        held = []
        while True:
            chunk = bytearray(16 * 1024 * 1024)
            chunk[::4096] = b"x" * len(chunk[::4096])
            held.append(chunk)
            time.sleep(0.01)

    from referee.bot import run_bot
    rng = random.Random(1)
    run_bot(lambda obs, legal, game: rng.randrange(len(legal)),
            ["--address", args.address, "--name", args.name, "--token", token, "--capacity", str(args.capacity)])


if __name__ == "__main__":
    main()
