"""A bot that records its GameEnds: each one, after a moment's work (0.2 s: a bot that is stopped
as soon as its match is over never gets to write it), prints ``game end: GAME_ID seat S`` on
stderr (the launcher keeps it in the bot's log; ``referee match`` shows it). It plays the first
legal action."""

from __future__ import annotations

import sys
import time

from referee.bot import run_bot


def decide(observation, legal_actions, game):
    return 0


def on_game_end(view, results) -> None:
    time.sleep(0.2)
    print(f"game end: {view.game_id} seat {view.seat}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run_bot(decide, on_game_end=on_game_end)
