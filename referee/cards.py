"""Cards as small ints, their notation, the deck and seeded shuffles.

A card is an int 0..51: ``suit * 13 + rank``, with ranks 0..12 standing for
``23456789TJQKA`` and suits 0..3 for ``SHDC`` (spades, hearts, diamonds,
clubs). The notation is rank then suit: ``AS``, ``TD``, ``9C``.

Sets of cards (hands) are bit masks: card ``c`` is bit ``1 << c``; the cards
of suit ``s`` occupy bits ``13*s .. 13*s+12``. Masks iterate in ascending card
order, which is the canonical order everywhere in the project.

The engines use plain ints. :class:`Card` is an ``int`` subclass whose repr
reads back (``Card('AS')``), for people at a prompt and in tests.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "SHDC"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
NUM_CARDS = 52

SPADES, HEARTS, DIAMONDS, CLUBS = range(4)

#: rank index of each card (0 = '2' .. 12 = 'A') and suit index of each card
RANK = tuple(c % 13 for c in range(NUM_CARDS))
SUIT = tuple(c // 13 for c in range(NUM_CARDS))
#: notation of each card
NAMES = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(NUM_CARDS))
_BY_NAME = {name: c for c, name in enumerate(NAMES)}

#: bit mask of every card of each suit
SUIT_MASK = tuple(0x1FFF << (13 * s) for s in range(4))
FULL_DECK_MASK = (1 << NUM_CARDS) - 1


class CardError(ValueError):
    """A string or number that is not a card."""


def make(rank: int, suit: int) -> int:
    return suit * 13 + rank


def parse(text: str) -> int:
    """``'AS'`` -> 12. Case-insensitive; ``10`` is accepted for ``T``."""
    key = text.strip().upper()
    if key.startswith("10"):
        key = "T" + key[2:]
    try:
        return _BY_NAME[key]
    except KeyError:
        raise CardError(f"not a card: {text!r} (expected rank {RANKS} then suit {SUITS}, e.g. 'AS')") from None


def name(card: int) -> str:
    """12 -> ``'AS'``."""
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"not a card number: {card!r} (expected 0..51)")
    return NAMES[card]


def parse_suit(text: str) -> int:
    key = text.strip().upper()
    if len(key) == 1 and key in SUITS:
        return SUITS.index(key)
    raise CardError(f"not a suit: {text!r} (expected one of {', '.join(SUITS)})")


def suit_name(suit: int) -> str:
    return SUITS[suit]


def parse_list(text: str | Iterable[str]) -> list[int]:
    """``'AS KD 2C'`` (or a list of names) -> list of cards, in that order."""
    items = text.split() if isinstance(text, str) else list(text)
    return [parse(item) for item in items]


def format_list(cards: Iterable[int]) -> str:
    return " ".join(NAMES[c] for c in cards)


class Card(int):
    """A card that prints as itself: ``Card('AS')`` or ``Card(12)``."""

    def __new__(cls, value: int | str) -> Card:
        if isinstance(value, str):
            return super().__new__(cls, parse(value))
        name(value)  # validates
        return super().__new__(cls, value)

    @property
    def rank(self) -> int:
        return RANK[self]

    @property
    def suit(self) -> int:
        return SUIT[self]

    def __str__(self) -> str:
        return NAMES[self]

    def __repr__(self) -> str:
        return f"Card({NAMES[self]!r})"


# --- masks ------------------------------------------------------------------

def _suit_cards(suit: int) -> tuple[tuple[int, ...], ...]:
    """For each 13-bit pattern, the cards of ``suit`` it stands for, ascending: a pattern's are those of
    the pattern without its highest bit, then that bit's card (built in one pass: every program that
    imports the rules pays for this table when it starts)."""
    table: list[tuple[int, ...]] = [()]
    for pattern in range(1, 1 << 13):
        high = pattern.bit_length() - 1
        table.append(table[pattern ^ (1 << high)] + (suit * 13 + high,))
    return tuple(table)


#: for each suit and each 13-bit pattern, the cards it stands for, ascending
SUIT_CARDS = tuple(_suit_cards(s) for s in range(4))


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def cards_of(mask: int) -> list[int]:
    """The cards of a mask, ascending."""
    return [
        *SUIT_CARDS[0][mask & 0x1FFF],
        *SUIT_CARDS[1][mask >> 13 & 0x1FFF],
        *SUIT_CARDS[2][mask >> 26 & 0x1FFF],
        *SUIT_CARDS[3][mask >> 39 & 0x1FFF],
    ]


def suit_cards(mask: int, suit: int) -> tuple[int, ...]:
    """The cards of ``suit`` in a mask, ascending."""
    return SUIT_CARDS[suit][mask >> (13 * suit) & 0x1FFF]


# --- the deck ---------------------------------------------------------------


def new_deck() -> list[int]:
    return list(range(NUM_CARDS))


def shuffled_deck(rng: random.Random) -> list[int]:
    deck = new_deck()
    rng.shuffle(deck)
    return deck


def _note(seen: set[int], card: int) -> bool:
    """Adds ``card`` to ``seen``; false, for a comprehension's condition."""
    seen.add(card)
    return False


def check_deck(deck: Iterable[int]) -> tuple[int, ...]:
    """A deck order must hold each of the 52 cards exactly once."""
    order = tuple(deck)
    if len(order) != NUM_CARDS or mask_of(order) != FULL_DECK_MASK:
        seen: set[int] = set()
        dupes = sorted({c for c in order if c in seen or _note(seen, c)})
        missing = sorted(set(range(NUM_CARDS)) - set(order))
        detail = []
        if dupes:
            detail.append("repeated " + format_list(dupes))
        if missing:
            detail.append("missing " + format_list(missing))
        raise CardError(f"a deck order must hold the 52 cards once each; got {len(order)} cards" +
                        (f" ({'; '.join(detail)})" if detail else ""))
    return order
