"""Aegis's actions: their int encoding, their notation and its parsing (RULES.md §2; no I/O).

Action encoding (ints; fixed, other code depends on it)
--------------------------------------------------------
==========================  =====================  ==========================
action                      int                    notation
==========================  =====================  ==========================
play card ``c``             ``c`` (0..51)          ``AS``, ``TD``
master stops exchanging     ``STOP`` = 52          ``STOP``
slave passes (declaration)  ``PASS`` = 53          ``PASS``
declare ``d`` tricks        ``DECLARE + d``        ``DECLARE 3``
                            (54..58, d = 1..5)
exchange cards of ``mask``  ``EXCHANGE | mask``,   ``EXCHANGE 2C 5H``
                            ``EXCHANGE = 1 << 52`` (ascending card order)
slave declines to exchange  ``EXCHANGE | 0``       ``EXCHANGE``
==========================  =====================  ==========================

``mask`` is the bit mask of the discarded cards (``1 << card`` each). Parsing
is case-insensitive and accepts the cards of an exchange in any order;
``action_name`` writes the canonical form, and the two round-trip exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee import cards
from referee.cards import NAMES, cards_of
from referee.games.base import ActionSyntaxError

STOP = 52
PASS = 53
DECLARE = 53  # DECLARE + d, d = 1..5
EXCHANGE = 1 << 52
DECLINE = EXCHANGE  # the slave's EXCHANGE of no cards

HAND_SIZE = 5
MAX_DECLARATION = 5


def action_names(actions: Sequence[int]) -> list[str]:
    """The notation of each action, faster than one by one: an exchange request
    (every subset of a hand, up to 32) is named the way ``legal_actions`` lists
    it, doubling the list with a card at a time, and checked against the codes;
    the other actions come from a table."""
    last = actions[-1] if actions else None
    if type(last) is int and EXCHANGE < last < 2 * EXCHANGE and len(hand := cards_of(last ^ EXCHANGE)) <= HAND_SIZE:
        codes, names = [EXCHANGE], ["EXCHANGE"]
        for c in hand:  # ascending: every name lists its cards in canonical order
            bit, word = 1 << c, " " + NAMES[c]
            codes += [code | bit for code in codes]
            names += [name + word for name in names]
        if actions[0] == STOP:
            codes[0], names[0] = STOP, "STOP"
        if codes == list(actions):
            return names
    get = _NAMES.get
    return [(get(a) if type(a) is int else None) or action_name(a) for a in actions]


#: the names of every action but the exchanges
_NAMES = {**dict(enumerate(NAMES)), STOP: "STOP", PASS: "PASS",
          **{DECLARE + d: f"DECLARE {d}" for d in range(1, MAX_DECLARATION + 1)}}


def action_name(action: int) -> str:
    """The notation of an action: ``AS``, ``STOP``, ``PASS``, ``DECLARE 3``, ``EXCHANGE 2C 5H``."""
    if isinstance(action, int) and not isinstance(action, bool):
        if 0 <= action < 52:
            return NAMES[action]
        if action == STOP:
            return "STOP"
        if action == PASS:
            return "PASS"
        if DECLARE + 1 <= action <= DECLARE + MAX_DECLARATION:
            return f"DECLARE {action - DECLARE}"
        if EXCHANGE <= action < 2 * EXCHANGE:
            discarded = cards_of(action ^ EXCHANGE)
            return " ".join(["EXCHANGE", *(NAMES[c] for c in discarded)])
    raise ActionSyntaxError(f"{action!r} is not an aegis action")


def parse_action(text: str) -> int:
    """The inverse of :func:`action_name` (case-insensitive)."""
    if not isinstance(text, str):
        raise ActionSyntaxError(f"an action is text, got {text!r}")
    words = text.split()
    if not words:
        raise ActionSyntaxError("empty action (expected a card such as AS, or STOP, PASS, "
                                "DECLARE n, EXCHANGE [cards])")
    head, args = words[0].upper(), words[1:]
    if head in ("STOP", "PASS"):
        if args:
            raise ActionSyntaxError(f"{head} takes nothing after it: {text!r}")
        return STOP if head == "STOP" else PASS
    if head == "DECLARE":
        if len(args) != 1 or not args[0].isdigit() or not 1 <= int(args[0]) <= MAX_DECLARATION:
            raise ActionSyntaxError(f"DECLARE takes one number of tricks 1..5: {text!r}")
        return DECLARE + int(args[0])
    if head == "EXCHANGE":
        mask = 0
        for word in args:
            try:
                c = cards.parse(word)
            except cards.CardError as exc:
                raise ActionSyntaxError(f"EXCHANGE lists cards to discard: {exc}") from None
            if mask >> c & 1:
                raise ActionSyntaxError(f"EXCHANGE lists {NAMES[c]} twice: {text!r}")
            mask |= 1 << c
        return EXCHANGE | mask
    if len(words) == 1:
        try:
            return cards.parse(words[0])
        except cards.CardError:
            pass
    raise ActionSyntaxError(f"not an aegis action: {text!r} (expected a card such as AS, "
                            f"or STOP, PASS, DECLARE n, EXCHANGE [cards])")



def describe(action: Any) -> str:
    """The action's notation, or its repr if it is no action (for error messages)."""
    try:
        return action_name(action)
    except ActionSyntaxError:
        return repr(action)
