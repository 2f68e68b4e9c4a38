"""A hostile bot that takes CPU while its match waits its turn, and the victim that measures it.

Under ``isolation = "match"`` a match's processes are started ahead, while another match plays
(``Executor.play_all``), and wait for their turn. ``--spin``: from its start this bot keeps a process
of its own spinning on CPU 0, waiting and playing, to take CPU from whatever bot plays there
meanwhile; it counts as it spins and logs ``SPIN n t0 t1`` every 10 ms (how far it counted from t0
to t1, Unix times). ``--calm``: the same bot without the spinner (the control). ``--meter``: the
victim, pinned to CPU 0, spends 150 ms of wall time a decision counting, and logs ``WORK n t0 t1``.
Counts over the same moments on the same CPU compare the two processes' shares of it, whatever
else runs there. Every mode plays the first legal action, so that the games are the same whatever
the CPU.
"""

from __future__ import annotations

import os
import sys
import time

from referee.bot import run_bot

MODE = sys.argv.pop(1)
THINK_S = 0.150
SPIN_S = 0.010


def count(seconds: float) -> tuple[int, float, float]:
    """How far this process counts in ``seconds`` of wall time, from when to when (Unix times)."""
    n, start = 0, time.time()
    end = start + seconds
    while (now := time.time()) < end:
        n += 1
    return n, start, now


def spin() -> None:
    """A process of this bot's own (in its tree, so gone with it) spinning on CPU 0."""
    if os.fork() == 0:
        os.sched_setaffinity(0, {0})
        while True:
            print("SPIN {} {} {}".format(*count(SPIN_S)), flush=True)


def decide(obs, legal, game):
    if MODE == "--meter":
        print("WORK {} {} {}".format(*count(THINK_S)), flush=True)
    return 0


if __name__ == "__main__":
    if MODE == "--spin":
        spin()
    elif MODE == "--meter":
        os.sched_setaffinity(0, {0})
    run_bot(decide, default_name="waiting")
