"""A hostile bot that takes CPU while its match waits its turn, and the victim that measures it.

Under ``isolation = "match"`` a match's processes are started ahead, while another match plays
(``Executor.play_all``), and wait for their turn. ``--spin``: from its start this bot keeps a process
of its own spinning on CPU 0, waiting and playing, to take CPU from whatever bot plays there
meanwhile. ``--calm``: the same bot without the spinner (the control). ``--meter``: the victim, pinned
to CPU 0, spends 150 ms of wall time a decision counting, and logs ``WORK n t`` (how far it counted: the
CPU it had; when, Unix time). Every mode plays the first legal action, so that the games are the same whatever the
CPU.
"""

from __future__ import annotations

import os
import sys
import time

from referee.bot import run_bot

MODE = sys.argv.pop(1)
THINK_S = 0.150


def spin() -> None:
    """A process of this bot's own (in its tree, so gone with it) spinning on CPU 0; logs ``SPIN t``
    (when it began, Unix time)."""
    if os.fork() == 0:
        os.sched_setaffinity(0, {0})
        print(f"SPIN {time.time()}", flush=True)
        while True:
            pass


def decide(obs, legal, game):
    if MODE == "--meter":
        count, end = 0, time.monotonic() + THINK_S
        while time.monotonic() < end:
            count += 1
        print(f"WORK {count} {time.time()}", flush=True)
    return 0


if __name__ == "__main__":
    if MODE == "--spin":
        spin()
    elif MODE == "--meter":
        os.sched_setaffinity(0, {0})
    run_bot(decide, default_name="waiting")
