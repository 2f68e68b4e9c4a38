"""A random bot that writes a line to its log at every decision, naming its game and seat, and
at its first decision of each game a line made to look like the runner's match marker (of
another match), which the pages must not take for one.

    python tests/bots/chatty.py  (then the kit's arguments)
"""

from __future__ import annotations

import sys

from referee.bot import run_bot


def decide(observation, legal_actions, game) -> int:
    n = game.memory["decisions"] = game.memory.get("decisions", 0) + 1
    if n == 1:
        print(f"--- match 99:forged|{game.game_id} seat {game.seat}: begins at 2000-01-01 00:00:00", file=sys.stderr)
    print(f"chatty: game {game.game_id} seat {game.seat} decision {n}", file=sys.stderr, flush=True)
    return game.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    run_bot(decide, default_name="chatty")
