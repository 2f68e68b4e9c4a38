"""Confirmation's actions: their int encoding, their notation and its parsing (RULES.md §1; no I/O).

=============  ===========  =====================
action         int          notation
=============  ===========  =====================
play card c    0..51        ``AS``, ``TD``, ``9C``
bid n          52 + n       ``BID 3``
confirm        66           ``CONFIRM``
revise to n    67 + n       ``REVISE 4``
=============  ===========  =====================
"""

from __future__ import annotations

from referee import cards
from referee.cards import NAMES
from referee.games.base import ActionSyntaxError

MAX_BID = 13

BID = 52
CONFIRM = 66
REVISE = 67


def action_name(action: int) -> str:
    if 0 <= action < 52:
        return NAMES[action]
    if BID <= action <= BID + MAX_BID:
        return f"BID {action - BID}"
    if action == CONFIRM:
        return "CONFIRM"
    if REVISE <= action <= REVISE + MAX_BID:
        return f"REVISE {action - REVISE}"
    raise ActionSyntaxError(f"not a Confirmation action code: {action!r}")


def parse_action(text: str) -> int:
    words = text.split()
    head = words[0].upper() if words else ""
    if len(words) == 1 and head == "CONFIRM":
        return CONFIRM
    if len(words) == 2 and head in ("BID", "REVISE") and words[1].isdigit() and int(words[1]) <= MAX_BID:
        return (BID if head == "BID" else REVISE) + int(words[1])
    if len(words) == 1:
        try:
            return cards.parse(words[0])
        except cards.CardError:
            pass
    raise ActionSyntaxError(f"not a Confirmation action: {text!r} "
                            "(expected a card like 'AS', 'BID n', 'CONFIRM' or 'REVISE n', n in 0..13)")


def choice_name(confirmed: bool, number: int) -> str:
    return "CONFIRM" if confirmed else f"REVISE {number}"

