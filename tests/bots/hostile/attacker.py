"""A hostile entrant: a bot on the kit that attacks the tournament it plays in.

    python attacker.py --attack NAME [--attack NAME ...] [--victim NAME ...] [options] KIT-ARGS
    python attacker.py --honest KIT-ARGS          # the control: it only plays

It always plays the first legal action: what the referee plays for a seat that
hangs, faults or has no bot, so its opponents' games are the same whether it
answers, is killed by a limit or never connects. The attacks (attacks.ATTACKS)
start in a thread as soon as its first session is welcomed (a runner plays no match
before every bot has connected), or, for an attacker that SIGXFSZ kills (``--native-signals``),
at its first decision: one that kills itself while the runner checks that every bot is up
is a bot that crashes at start, and only stops the tournament, with its name. They
report as ``ATTACK {json}`` lines on stdout;
its first answer waits (up to WAIT seconds, well within the clock's bank) until
the one-shot attacks are done, so the tournament is still running when they
report. The repeated ones (attacks.REPEATED) go on until the process ends.
Every other argument goes to the bot kit (``--address``, ``--name``, the token).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"  # its forks are its own business: no handlers, no log line each
# one malloc arena and small thread stacks: each thread's arena reserves 64 MB of address space, which a
# memory_mb of 512 (its address space) would run out of, and then its kit cannot start a thread
ctypes.CDLL(None).mallopt(-8, 1)  # M_ARENA_MAX
threading.stack_size(1 << 20)
sys.path.insert(0, str(Path(__file__).resolve().parent))

import attacks

from referee import bot as kit
from referee.bot import run_bot

WAIT = 25.0
attacked = threading.Event()
welcomed = threading.Event()
decided = threading.Event()  # its first decision request came: a match is being played
started = time.monotonic()
_welcome = kit.BotSession._on_welcome


def _on_welcome(self, welcome) -> None:
    _welcome(self, welcome)
    welcomed.set()


kit.BotSession._on_welcome = _on_welcome  # the attacks start once it is connected
_token_from_fd = kit.token_from_fd
token: list[str] = []  # its own, as the kit reads it (an attack opening sessions of its own needs it)


def _read_token(fd: int) -> str:
    token.append(_token_from_fd(fd))
    return token[-1]


kit.token_from_fd = _read_token


#: what it answers (``--answer``): the first legal action, or text that is no action at all, which
#: the referee replaces with the first legal action (so its opponents' games are the same):
#: ``huge``, as long as one message may be (the referee's cap, server.MAX_MESSAGE_BYTES, less
#: the reply's own fields); ``escapes``, terminal escape sequences (attacks.ESCAPES)
ANSWERS = {"first": 0, "huge": "X" * (256 * 1024 - 200), "escapes": attacks.ESCAPES}
answer: int | str = 0


def first_legal(observation, legal, game):
    decided.set()
    attacked.wait(max(0.0, started + WAIT - time.monotonic()))
    return answer


def unbatched(self):
    """The kit's messages one by one: a batch of two answers at the cap would be past it."""
    yield from iter(self._outbox.get, None)


def use_answer(name: str) -> None:
    global answer
    answer = ANSWERS[name]
    if name != "first":
        kit.BotSession._messages = unbatched


def run_attacks(names: list[str], ctx: attacks.Context, start: threading.Event) -> None:
    start.wait()
    ctx.token = token[-1] if token else ""  # read by the kit before it connected
    for name in names:
        if name in attacks.REPEATED:
            threading.Thread(target=run_attack, args=(name, ctx), daemon=True).start()
    for name in names:
        if name not in attacks.REPEATED:
            run_attack(name, ctx)
    attacked.set()


def run_attack(name: str, ctx: attacks.Context) -> None:
    try:
        attacks.ATTACKS[name](ctx)
    except Exception:  # noqa: BLE001 - say why, keep playing
        attacks.report("crashed", name=name, error=traceback.format_exc(limit=3))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--honest", action="store_true", help="attack nothing: the control run")
    parser.add_argument("--attack", action="append", default=[], choices=sorted(attacks.ATTACKS))
    parser.add_argument("--victim", action="append", default=[], help="a bot name to impersonate")
    parser.add_argument("--hint", action="append", default=[], help="a path the attacker guesses")
    parser.add_argument("--canary-port", type=int, default=0, help="a port the test listens on")
    parser.add_argument("--canary-abstract", default="", help="an abstract Unix socket the test listens on")
    parser.add_argument("--listen-port", type=int, default=0, help="where to listen on 0.0.0.0")
    parser.add_argument("--write-dir", action="append", default=[], help="where to write first")
    parser.add_argument("--native-signals", action="store_true",
                        help="SIGXFSZ kills, as in a native program (Python ignores it)")
    parser.add_argument("--answer", choices=sorted(ANSWERS), default="first",
                        help="what it answers: the first legal action, or malformed text (huge, escapes)")
    parser.add_argument("--crash-at-start", action="store_true",
                        help="print attacks.ESCAPES (or, --honest, plain lines) and exit before connecting")
    parser.add_argument("--mark", default="", help="carried by the command line of whatever it leaves")
    parser.add_argument("--forks", type=int, default=10_000)
    parser.add_argument("--write-mb", type=int, default=1024)
    parser.add_argument("--children", type=int, default=4)
    parser.add_argument("--child-mb", type=int, default=600)
    parser.add_argument("--file-mb", type=int, default=64, help="its file size limit (the fill attack)")
    parser.add_argument("--files", type=int, default=100_000, help="empty files to make at most (the fill attack)")
    parser.add_argument("--kit-capacity", type=int, default=0,
                        help="the seats its own session says it plays (0: as given), "
                             "leaving room for sessions of its own")
    mine, kit_args = parser.parse_known_args(argv)
    if mine.kit_capacity and "--capacity" in kit_args:
        kit_args[kit_args.index("--capacity") + 1] = str(mine.kit_capacity)
    if mine.crash_at_start:
        attacks.crash_at_start(honest=mine.honest)
    use_answer(mine.answer)
    if mine.native_signals:
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    kit = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    kit.add_argument("--address", default="127.0.0.1:50051")
    address = kit.parse_known_args(kit_args)[0].address
    if mine.honest:
        attacked.set()
    else:
        ctx = attacks.Context(address, mine.victim, mine.hint, mine.canary_port, mine.canary_abstract,
                              mine.listen_port, mine.mark, mine.forks, mine.write_mb, mine.children, mine.child_mb,
                              mine.write_dir, mine.file_mb, mine.files)
        start = decided if mine.native_signals else welcomed
        threading.Thread(target=run_attacks, args=(mine.attack, ctx, start), daemon=True).start()
    run_bot(first_legal, kit_args, default_name="attacker")


if __name__ == "__main__":
    main()
