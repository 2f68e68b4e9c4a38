"""A random bot that sleeps before each answer, so that a run lasts long enough for a test to act
in the middle of it (a Ctrl-C, a killed worker) on an idle machine as on a loaded one: sleeping
costs no CPU, unlike the search bot's thinking.

    python tests/bots/slow.py --sleep-ms 20  (then the kit's arguments)
"""

from __future__ import annotations

import argparse
import time

from referee.bot import run_bot


def main() -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--sleep-ms", type=float, default=20.0)
    known, rest = parser.parse_known_args()

    def decide(observation, legal_actions, game) -> int:
        time.sleep(known.sleep_ms / 1000)
        return game.rng.randrange(len(legal_actions))

    run_bot(decide, rest, default_name="slow")


if __name__ == "__main__":
    main()
