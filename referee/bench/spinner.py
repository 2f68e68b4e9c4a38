"""A bot for the bench's section 8: ``python -m referee.bench.spinner --spinners N KIT-ARGS``.

It plays the first legal action; at its first decision it starts N processes that spin,
each in a session of its own, until it ends (its sandbox's end kills them): the CPU attack
of issue 24, against which each bot's CPU share is the defence.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"  # its forks spin: no fork handlers

from referee.bot import GameView, run_bot  # noqa: E402


def spin(count: int) -> None:
    for _ in range(count):
        if os.fork() == 0:
            os.setsid()
            while True:
                pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--spinners", type=int, default=240)
    mine, kit_args = parser.parse_known_args(argv)
    started: list[bool] = []

    def first_legal(observation: dict[str, Any], legal: list[str], game: GameView) -> int:
        if not started:
            started.append(True)
            spin(mine.spinners)
        return 0

    run_bot(first_legal, kit_args, default_name="spinner")


if __name__ == "__main__":
    main()
