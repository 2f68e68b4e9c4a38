"""A random bot that says in its log when its own code first ran and when it ended (the machine's
boot clock, in seconds), when its process began (``/proc/self/stat``) and whether the kit was
already imported when its code began (its process was prepared: :mod:`referee.hosting.starter`):

    LIFETIME {"began": B, "first": F, "warm": W}    (its first line)
    LIFETIME {"last": L}                             (once its session is over)

tests/test_prepared.py reads them: no two processes of one bot run its code at once, though the
next one is prepared while the last one plays.

    python tests/bots/lifetime.py (the kit's arguments)
"""

from __future__ import annotations

import json
import os
import sys
import time

FIRST = time.clock_gettime(time.CLOCK_BOOTTIME)
WARM = "grpc" in sys.modules


def began() -> float:
    """When this process began, in seconds since boot (field 22 of /proc/self/stat, in clock ticks)."""
    with open("/proc/self/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")


print("LIFETIME " + json.dumps({"began": began(), "first": FIRST, "warm": WARM}), flush=True)

from referee.bot import run_bot  # noqa: E402 (after the first instant is taken)


def main() -> None:
    run_bot(lambda observation, legal, game: game.rng.randrange(len(legal)), default_name="lifetime")
    print("LIFETIME " + json.dumps({"last": time.clock_gettime(time.CLOCK_BOOTTIME)}), flush=True)


if __name__ == "__main__":
    main()
