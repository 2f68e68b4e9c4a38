"""The heuristic bot, weakened: with probability --noise it plays a uniformly random legal action.

    python -m sample_bots.weakened --noise 0.5 --address HOST:PORT --name NAME --token TOKEN [--seed S]

A bot of known, tunable inferiority for the SPRT tests and ``referee.tools.sprt_simulation`` (noise 0 is the heuristic
bot itself). The random choices come from the kit's per-game generator, so with
--seed the same game gets the same choices.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from referee.bot import GameView, run_bot
from sample_bots import heuristic


def weakened(noise: float) -> Callable[[dict[str, Any], list[str], GameView], str | int]:
    """A ``decide`` that plays randomly with probability ``noise``, else as the heuristic bot."""

    def decide(observation: dict[str, Any], legal_actions: list[str], game: GameView) -> str | int:
        if game.rng.random() < noise:
            return game.rng.randrange(len(legal_actions))
        return heuristic.decide(observation, legal_actions, game)

    return decide


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--noise", type=float, default=0.5)
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if not 0.0 <= args.noise <= 1.0:
        parser.error("--noise must be between 0 and 1")
    run_bot(weakened(args.noise), rest, default_name="weakened")


if __name__ == "__main__":
    main()
