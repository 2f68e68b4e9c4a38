"""A bot to upload to a competition server (docs/entering.md): a random legal action, in either game.

    referee submit examples/upload-bot --server http://127.0.0.1:8000 --token TOKEN
"""

from __future__ import annotations

from typing import Any

from referee.bot import GameView, run_bot


def decide(observation: dict[str, Any], legal_actions: list[str], game: GameView) -> int:
    return game.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    run_bot(decide, None, default_name="upload-bot")
