"""What the games' text renderers share: tables, hands (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from referee import cards


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    from tabulate import tabulate  # late: a bot that imports the rules never prints a table (20 ms at its start)

    return tabulate(rows, headers=list(headers), tablefmt="simple")


def hand_text(hand: Iterable[str]) -> str:
    """A hand (card names, as the engines' events give them) by suit (S H D C), high cards first,
    suits apart."""
    by_suit: dict[str, list[str]] = {suit: [] for suit in cards.SUITS}
    for name in sorted(hand, key=cards.parse, reverse=True):
        by_suit[name[-1]].append(name)
    return "  ".join(" ".join(group) for group in by_suit.values() if group) or "-"
