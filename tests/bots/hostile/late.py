"""A hostile Aegis entrant that fails to start on purpose, then comes back knowing every deal.

Under ``absent = "withdraw"`` an entry that does not start is withdrawn, the others play all
their matches, and the next run of the directory tries it again, on the same deal sets
(docs/tournaments.md). In between, the organiser publishes the report (``referee view DIR``), whose
replays show every hand of those deal sets. Its author "fixes" it (it could not load its data):
this time its directory holds ``deals.json``, the hands of each deal set's first game by seat, read
from the published replays. It then plays every match of its own on deal sets whose cards it
knows: each match it logs ``LEARNED {json}`` (the hand its opponent holds in the first game,
``null`` where it has none).

It always plays the first legal action (its opponents' games are the same whatever it knows).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from referee.bot import run_bot

DEALS = Path(__file__).resolve().with_name("deals.json")
if not DEALS.exists():
    print(f"cannot load {DEALS.name}", file=sys.stderr, flush=True)
    sys.exit(3)
KNOWN = json.loads(DEALS.read_text())  # {deal set: [hand of seat 0, hand of seat 1]} in the first game
done: set[str] = set()


def decide(obs, legal, game):
    if game.game_id not in done:
        done.add(game.game_id)
        deal_set = game.game_id.split(":")[0].split("/")[-1]
        hands = KNOWN.get(deal_set)
        print("LEARNED " + json.dumps({"game_id": game.game_id, "seat": obs["seat"],
                                       "opponent_hand": hands[1 - obs["seat"]] if hands else None}), flush=True)
    return 0


if __name__ == "__main__":
    run_bot(decide, default_name="late")
