"""What the games' line-ups for duplicate play share (see ``GameSpec.seat_groups``)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence


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
