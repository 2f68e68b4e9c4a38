"""Shared helpers for the tests: decks built from chosen hands, quick play, the fast loop's share
of a parametrised test."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from referee import cards
from referee.games import first_legal, play_out, random_legal


def deck_for_confirmation(hands: dict[int, str | list[int]], dealer: int = 0, seed: int = 0) -> list[int]:
    """A deck order that deals the given hands (RULES §3: deck card i goes to
    seat (dealer + 1 + i) mod 4). Seats not given get the remaining cards at
    random; the dealer's last card (the default trump card) is the last listed."""
    chosen = {s: cards.parse_list(h) if isinstance(h, str) else list(h) for s, h in hands.items()}
    used = [c for h in chosen.values() for c in h]
    assert len(used) == len(set(used)), "a card is given twice"
    rest = [c for c in range(52) if c not in set(used)]
    random.Random(seed).shuffle(rest)
    for s in range(4):
        if s not in chosen:
            chosen[s] = [rest.pop() for _ in range(13)]
        assert len(chosen[s]) == 13, f"seat {s} needs 13 cards"
    deck = [0] * 52
    for s, hand in chosen.items():
        first = (s - dealer - 1) % 4
        for k, c in enumerate(hand):
            deck[first + 4 * k] = c
    return deck


def act(state, *names: str) -> None:
    """Apply actions by name, each for the (single) seat to act."""
    for text in names:
        seats = state.to_act()
        assert len(seats) == 1, f"{len(seats)} seats to act at {text!r}"
        state.apply(seats[0], state.parse_action(text))


def play_first_legal(state, decisions: int) -> None:
    """Play ``decisions`` decisions, each seat its first legal action."""
    play_out(state, first_legal, limit=decisions)


def random_playout(state, rng: random.Random) -> int:
    """Play to the end with uniform random legal actions; returns the number of decisions."""
    return play_out(state, random_legal(rng))


def swap_card(action: int, x: int, y: int) -> int:
    """The action with cards x and y exchanged: card actions (< 52) and Aegis
    exchanges (a card mask above bit 52) name cards; other actions do not."""
    if action < 52:
        return y if action == x else x if action == y else action
    if action >> 52 and (action >> x & 1) != (action >> y & 1):
        return action ^ (1 << x) ^ (1 << y)
    return action


def slow_but(values: Iterable[Any], quick: Callable[[Any], bool]) -> list[Any]:
    """Values for ``pytest.mark.parametrize``: those ``quick`` picks as they are (the fast loop runs
    them), the others marked ``slow`` (``make test`` runs them too); their ids stay as they were."""
    return [value if quick(value) else pytest.param(value, marks=pytest.mark.slow) for value in values]
