"""Aegis in duplicate play: which bots sit down together (the schedule plays every seat rotation)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any


def seat_groups(bots: Sequence[str], options: Mapping[str, Any], max_groups: int) -> tuple[list[tuple[str, ...]], str]:
    """Every pair of bots: each pair plays every deal set twice, seats swapped (its two rotations)."""
    pairs = list(itertools.combinations(bots, 2))
    return pairs, f"every pair plays every deal set twice, seats swapped: {len(pairs)} pair(s)"


#: the gauntlet's duel (the candidate paired with each baseline) in a sentence
DUEL_NOTE = "the candidate plays every deal set twice against each baseline, seats swapped: {n} pair(s)"
