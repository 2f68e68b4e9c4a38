"""Confirmation in duplicate play: which bots sit down together (the schedule plays every seat rotation).

Each group of four plays each deal set in all four seat rotations. With more
than four bots, every combination of four plays, or a balanced subset (each
bot and each pair as evenly as possible) when there are more than
``max_groups``. With fewer than four, bots fill several seats in a balanced
way: 2 bots sit A B A B (with *pairs*, A A B B: A and B partners against each
other's copies); 3 bots play the three line-ups in which one of them fills
two seats.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.lineups import balanced_subset


def seat_groups(bots: Sequence[str], options: Mapping[str, Any], max_groups: int) -> tuple[list[tuple[str, ...]], str]:
    """The base line-ups of four seats, and a sentence on how they were chosen."""
    pairs = bool(options.get("pairs"))
    n = len(bots)
    if n == 2:
        a, b = bots
        return [(a, a, b, b) if pairs else (a, b, a, b)], (
            "2 bots fill the four seats: A and B partners against each other's copies" if pairs
            else "2 bots fill the four seats, copies opposite each other")
    if n == 3:
        lineups = []
        for x in bots:
            y, z = [b for b in bots if b != x]
            lineups.append((x, x, y, z) if pairs else (x, y, x, z))
        return lineups, "3 bots: each fills two seats in one of the three line-ups"
    combos = list(itertools.combinations(bots, 4))
    if len(combos) <= max_groups:
        return combos, f"every group of four: {len(combos)} group(s)"
    chosen = balanced_subset(bots, combos, max_groups)
    per_bot = Counter(b for g in chosen for b in g)
    return chosen, (f"a balanced subset of {len(chosen)} of the {len(combos)} groups of four "
                    f"(each bot in {min(per_bot.values())}-{max(per_bot.values())} groups)")


#: the gauntlet's duel (the candidate with each baseline, each in two seats) in a sentence
DUEL_NOTE = ("the candidate against each baseline, each in two seats, every deal set in every rotation: "
             "{n} baseline(s)")
