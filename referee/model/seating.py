"""A match as scheduled (its deal set, deal seed and line-up) and as played; a schedule."""

from __future__ import annotations

import hashlib
import hmac
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


def deal_set_of(key: str) -> int:
    """The deal set of a match's key (:attr:`Seating.key`, ``DEAL_SET:BOT|BOT...``)."""
    return int(key.split(":", 1)[0])


@dataclass(frozen=True)
class Schedule:
    seatings: tuple[Seating, ...]
    groups: tuple[tuple[str, ...], ...]
    note: str
    #: an adaptive schedule (:mod:`referee.competition.adaptive`): the rounds chosen so far (the next one
    #: included) and why it stopped, if it did; None and None for a fixed schedule
    rounds: tuple[Any, ...] | None = None
    stop: Any = None


def deal_seed(master_seed: int, deal_set: int) -> int:
    """The shoe seed of a deal set (64 bits, as the protocol's RunMatch carries): HMAC-SHA-256
    keyed with the master seed, stable across versions. Knowing some deal sets' seeds (a
    released record holds its own) tells nothing of the master seed or of another deal set's."""
    digest = hmac.new(str(master_seed).encode(), f"referee-deals:{deal_set}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def master_seed(seed: int, later_seeds: Sequence[tuple[int, int]], deal_set: int) -> int:
    """The master seed that deals ``deal_set``: ``seed``, or the last of ``later_seeds`` (each
    ``(first deal set, seed)``) that starts at or before it: a directory that grew after its drawn
    seed was released deals its new deal sets from a new secret one (docs/tournaments.md)."""
    for first, later in later_seeds:
        if deal_set >= first:
            seed = later
    return seed


def deal_set_seed(seed: int, later_seeds: Sequence[tuple[int, int]], deal_set: int) -> int:
    """The shoe seed of ``deal_set`` in a run of ``seed`` and ``later_seeds``: what every schedule deals it from."""
    return deal_seed(master_seed(seed, later_seeds, deal_set), deal_set)



@dataclass(frozen=True)
class Played:
    """One finished match: its seating, results (scores, placing, faults), record, and wall time."""

    seating: Seating
    results: dict[str, Any]
    record: dict[str, Any]
    seconds: float


