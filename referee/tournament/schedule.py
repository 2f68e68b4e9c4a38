"""Fair scheduling by duplicate play: every deal is played from every seat.

Deals come from the master seed in *deal sets*: deal set k is the seed of the
shoe of every match played on it, so all its seatings get the same cards in
the same seats (RULES §3 fixes how a deck order becomes a deal).

- Aegis: each pair of bots plays each deal set twice, seats swapped: the
  same cards go to the same role, played once by each bot.
- Confirmation: each group of four plays each deal set in all four seat
  rotations. With more than four bots, every combination of four plays, or a
  balanced subset (each bot and each pair as evenly as possible) when there
  are more than ``max_groups``. With fewer than four, bots fill several
  seats in a balanced way: 2 bots sit A B A B (with *pairs*, A A B B: A and B
  partners against each other's copies); 3 bots play the three line-ups in
  which one of them fills two seats.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Seating:
    """One match of the schedule."""

    deal_set: int
    seed: int
    lineup: tuple[str, ...]

    @property
    def key(self) -> str:
        """Stable and unique in a schedule: the match's id and its game id."""
        return f"{self.deal_set}:{'|'.join(self.lineup)}"


@dataclass(frozen=True)
class Schedule:
    seatings: tuple[Seating, ...]
    groups: tuple[tuple[str, ...], ...]
    note: str


def deal_seed(master_seed: int, deal_set: int) -> int:
    """The shoe seed of a deal set: a hash of the master seed, stable across versions."""
    digest = hashlib.sha256(f"referee-deals:{master_seed}:{deal_set}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def rotations(base: Sequence[str]) -> list[tuple[str, ...]]:
    """The distinct seat rotations of a line-up, in order."""
    seen: list[tuple[str, ...]] = []
    for r in range(len(base)):
        lineup = tuple(base[(i + r) % len(base)] for i in range(len(base)))
        if lineup not in seen:
            seen.append(lineup)
    return seen


def confirmation_groups(bots: Sequence[str], pairs: bool, max_groups: int) -> tuple[list[tuple[str, ...]], str]:
    """The base line-ups of four seats, and a sentence on how they were chosen."""
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


def balanced_subset(bots: Sequence[str], combos: list[tuple[str, ...]], size: int) -> list[tuple[str, ...]]:
    """Greedy: each step adds the group that keeps appearances, then pairings, most even."""
    appear: Counter[str] = Counter()
    together: Counter[tuple[str, str]] = Counter()
    chosen: list[tuple[str, ...]] = []
    left = list(combos)
    for _ in range(size):
        def cost(g: tuple[str, ...]) -> tuple[int, int]:
            return (sum(appear[b] for b in g), sum(together[p] for p in itertools.combinations(g, 2)))
        best = min(left, key=cost)
        left.remove(best)
        chosen.append(best)
        appear.update(best)
        together.update(itertools.combinations(best, 2))
    return chosen


def make_schedule(game: str, options: dict[str, Any], bots: Sequence[str], deal_sets: int, seed: int,
                  max_groups: int = 70) -> Schedule:
    if len(bots) < 2:
        raise ValueError("a schedule needs at least two bots")
    if game == "aegis":
        groups = list(itertools.combinations(bots, 2))
        bases = [list(rotations(g)) for g in groups]
        note = f"every pair plays every deal set twice, seats swapped: {len(groups)} pair(s)"
    else:
        groups, note = confirmation_groups(bots, bool(options.get("pairs")), max_groups)
        bases = [rotations(g) for g in groups]
    seatings = [Seating(k, deal_seed(seed, k), lineup)
                for k in range(deal_sets) for group in bases for lineup in group]
    return Schedule(tuple(seatings), tuple(tuple(g) for g in groups), note)
