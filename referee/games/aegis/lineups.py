"""Aegis in duplicate play: which bots sit down together (the schedule plays every seat rotation)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import Apart


def seat_groups(bots: Sequence[str], options: Mapping[str, Any], max_groups: int,
                apart: Apart | None = None) -> tuple[list[tuple[str, ...]], str]:
    """Every pair of bots (that ``apart`` accepts): each pair plays every deal set twice, seats
    swapped (its two rotations)."""
    every = list(itertools.combinations(bots, 2))
    pairs: list[tuple[str, ...]] = [p for p in every if apart is None or apart(p)]
    left = f" ({len(every) - len(pairs)} that may not meet left out)" if len(pairs) < len(every) else ""
    return pairs, f"every pair plays every deal set twice, seats swapped: {len(pairs)} pair(s){left}"


#: the gauntlet's duel (the candidate paired with each baseline) in a sentence
DUEL_NOTE = "the candidate plays every deal set twice against each baseline, seats swapped: {n} pair(s)"
