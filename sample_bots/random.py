"""random: a uniformly random legal action, for both games.

    python -m sample_bots.random --address HOST:PORT --name random --token TOKEN
"""

from __future__ import annotations

from typing import Any

from referee.bot import GameView, run_bot


def decide(observation: dict[str, Any], legal_actions: list[str], game: GameView) -> int:
    return game.rng.randrange(len(legal_actions))


def main(argv: list[str] | None = None) -> None:
    run_bot(decide, argv, default_name="random")


if __name__ == "__main__":
    main()
