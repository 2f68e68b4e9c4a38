"""Confirmation in duplicate play: which bots sit down together (the schedule plays every seat rotation).

Each group of four plays each deal set in all four seat rotations. With more
than four bots, every combination of four plays, or a balanced subset (each
bot and each pair as evenly as possible) when there are more than
``max_groups``. With fewer than four, bots fill several seats in a balanced
way: 2 bots sit A B A B; 3 bots play the three line-ups in which one of them
fills two seats.

With *pairs* (seats 0+2 and 1+3 partners, RULES 1.8) rotations never change
partners, so each group of four sits in its three partnerships (A B C D,
A C B D, A B D C: A with C, B, then D), each in its four rotations: every bot
partners every other bot of its group equally often and meets each as an
opponent twice as often, on the same deals. Without that, partners score
alike and individual ratings cannot be told apart. 2 bots sit A B A B (each
partnered with its own copy), 3 bots X X Y Z (X on both teams: Y against Z).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import Apart
from referee.games.lineups import balanced_subset


def seat_groups(bots: Sequence[str], options: Mapping[str, Any], max_groups: int,
                apart: Apart | None = None) -> tuple[list[tuple[str, ...]], str]:
    """The base line-ups of four seats, and a sentence on how they were chosen; with ``apart``, only
    groups it accepts (before the balanced subset)."""
    pairs = bool(options.get("pairs"))
    n = len(bots)
    if n < 4 and apart is not None and not apart(bots):
        return [], f"{n} bots fill the four seats together, and they may not sit together"
    if n == 2:
        a, b = bots
        return [(a, b, a, b)], ("2 bots fill the four seats, each partnered with its own copy" if pairs
                                else "2 bots fill the four seats, copies opposite each other")
    if n == 3:
        lineups: list[tuple[str, ...]] = []
        for x in bots:
            y, z = [b for b in bots if b != x]
            lineups.append((x, x, y, z) if pairs else (x, y, x, z))
        return lineups, "3 bots: each fills two seats in one of the three line-ups"
    every = list(itertools.combinations(bots, 4))
    combos: list[tuple[str, ...]] = [g for g in every if apart is None or apart(g)]
    left = f", {len(every) - len(combos)} that may not sit together left out" if len(combos) < len(every) else ""
    if len(combos) <= max_groups:
        chosen, note = combos, f"every group of four: {len(combos)} group(s){left}"
    else:
        chosen = balanced_subset(bots, combos, max_groups)
        per_bot = Counter(b for g in chosen for b in g)
        note = (f"a balanced subset of {len(chosen)} of the {len(combos)} groups of four{left} "
                f"(each bot in {min(per_bot.values())}-{max(per_bot.values())} groups)")
    if pairs:
        return [p for g in chosen for p in partnerships(g)], note + ", each in its 3 partnerships"
    return chosen, note


def partnerships(group: Sequence[str]) -> list[tuple[str, ...]]:
    """The three line-ups of a group of four that pair each bot with each other (seats 0+2 and 1+3)."""
    a, b, c, d = group
    return [(a, b, c, d), (a, c, b, d), (a, b, d, c)]


#: the gauntlet's duel (the candidate with each baseline, each in two seats) in a sentence
DUEL_NOTE = ("the candidate against each baseline, each in two seats, every deal set in every rotation: "
             "{n} baseline(s)")
