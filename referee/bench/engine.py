"""Section 1: random-playout speed of each game, in process, no referee.

One decision is ``legal_actions`` + a uniform random choice + ``apply``: the
rules' share of the work a referee does per decision, minus everything else.
"""

from __future__ import annotations

import random
import time
from typing import Any

from referee.games import GAMES, play_out, random_legal

CASES = [
    ("confirmation", {}),
    ("confirmation", {"double": True, "blind": True, "pairs": True, "trump": "random-suit"}),
    ("aegis", {}),
]


def playout_rate(game: str, seconds: float, options: dict[str, Any] | None = None, seed: int = 0) -> dict[str, Any]:
    spec = GAMES[game]
    choose = random_legal(random.Random(seed))
    decisions = matches = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    while time.perf_counter() - start < seconds:
        decisions += play_out(spec.new(options, seed=seed + matches), choose)
        matches += 1
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return {
        "game": game,
        "options": options or {},
        "matches": matches,
        "decisions": decisions,
        "seconds": round(wall, 3),
        "decisions_per_s": round(decisions / wall),
        "cpu_us_per_decision": round(cpu / decisions * 1e6, 2),
        "matches_per_s": round(matches / wall, 1),
    }


def run(seconds: float) -> list[dict[str, Any]]:
    return [playout_rate(game, seconds, options) for game, options in CASES]
