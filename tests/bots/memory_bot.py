"""A bot that tries to remember: at the first decision of each game it reports (on stderr,
which the launcher keeps in its log) how many games this process has seen before and
which marks earlier games left in its scratch (HOME), then leaves a mark of its own.
It plays the first legal action."""

from __future__ import annotations

import os
import sys

from referee.bot import run_bot

seen: list[str] = []


def decide(observation, legal_actions, game):
    if game.game_id not in seen:
        home = os.environ.get("HOME", "/tmp")
        marks = sorted(f for f in os.listdir(home) if f.startswith("mark-"))
        print(f"memory: games_before={len(seen)} marks={len(marks)}", file=sys.stderr, flush=True)
        seen.append(game.game_id)
        with open(os.path.join(home, f"mark-{len(seen)}-{os.getpid()}"), "w") as f:
            f.write(game.game_id)
    return 0


if __name__ == "__main__":
    run_bot(decide)
