"""A hostile Aegis entrant that dies at its first decision on purpose, then comes back knowing the deals.

Under ``absent = "withdraw"`` an entry that passes its start-up check and then dies for good is
out ("dead"): the others play all their matches, and ``--rerun NAME`` brings it back, its
matches dropped, to play them all again (docs/tournaments.md). In between, the organiser publishes
the report (``referee view DIR``) and the run may print its master seed: either gives away the
deals it will play. Its author "fixes" it: this time its directory holds ``deals.json``, the hands
of each deal set's first game by seat, read from the published replays or computed from the printed
seed. Without that file it dies (exit code 1) at its first decision, every time it is started. With
it, it plays every match of its own: each match it logs ``LEARNED {json}`` (the hand its opponent
holds in the first game, ``null`` where it has none).

It always plays the first legal action (its opponents' games are the same whatever it knows).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from referee.bot import run_bot

DEALS = Path(__file__).resolve().with_name("deals.json")
KNOWN = json.loads(DEALS.read_text()) if DEALS.exists() else None  # {deal set: [hand of seat 0, of seat 1]}
done: set[str] = set()


def decide(obs, legal, game):
    if KNOWN is None:
        print("dying at my first decision", file=sys.stderr, flush=True)
        os._exit(1)
    if game.game_id not in done:
        done.add(game.game_id)
        hands = KNOWN.get(game.game_id.split(":")[0].split("/")[-1])
        print("LEARNED " + json.dumps({"game_id": game.game_id, "seat": obs["seat"],
                                       "opponent_hand": hands[1 - obs["seat"]] if hands else None}), flush=True)
    return 0


if __name__ == "__main__":
    run_bot(decide, default_name="comeback")
