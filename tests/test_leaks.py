"""RULES §4: a seat's observation holds only what it may know.

For sampled decision points of random games: take two cards hidden from a
seat (of the same suit, so every earlier action stays legal), swap them in the
deck, replay the same actions (the other seats' actions with the two cards
swapped too), and check the seat's observation and visible events are
identical, while the view of a seat holding one of them did change.
"""

from __future__ import annotations

import random

import pytest
from helpers import swap_card

from referee import cards
from referee.games import GAMES


def confirmation_hidden(state, seat):
    # the default trump card is face up: everyone knows the dealer holds it
    return [c for o in range(4) if o != seat for c in cards.cards_of(state.hands[o]) if c != state.trump_card]


def confirmation_holder(state, card):
    return next(o for o in range(4) if state.hands[o] >> card & 1)


def aegis_game(state):
    return state.current


def aegis_hidden(state, seat):
    g = aegis_game(state)
    other = 1 - seat
    hidden = cards.cards_of(g.hands[other]) + list(g.stock[g.drawn:])
    hidden += [c for ex in g.own_exchanges[other] for c in ex["discarded"]]
    return hidden


def aegis_holder(state, card):
    g = aegis_game(state)
    return next((o for o in range(2) if g.hands[o] >> card & 1), None)


HIDDEN = {
    "confirmation": (confirmation_hidden, confirmation_holder),
    "aegis": (aegis_hidden, aegis_holder),
}

OPTIONS = {
    "confirmation": [{"rounds": 2}, {"rounds": 2, "blind": True, "double": True},
                     {"rounds": 1, "pairs": True, "trump": "random-suit"}],
    "aegis": [{}, {"promise": "4plus"}],
}


def replay_swapped(spec, state, x, y, seat, deal_start):
    """Replay with x and y swapped in the current deal's deck, and in the other
    seats' actions of this deal."""
    decks = [list(d) for d in state.shoe.decks]
    last = decks[-1]
    i, j = last.index(x), last.index(y)
    last[i], last[j] = y, x
    twin = spec.new(state.options, decks=decks, suits=state.shoe.suits)
    for i, (s, a) in enumerate(state.actions):
        twin.apply(s, a if s == seat or i < deal_start else swap_card(a, x, y))
    return twin


@pytest.mark.parametrize("game", sorted(GAMES))
def test_hidden_cards_never_reach_a_seat(game):
    spec = GAMES[game]
    hidden_of, holder_of = HIDDEN[game]
    rng = random.Random(2024)
    checked = changed = 0
    for options in OPTIONS[game]:
        for match in range(12):
            state = spec.new(options, seed=1000 + match)
            decks_seen, deal_start = 0, 0
            while state.to_act():
                if len(state.shoe.decks) != decks_seen:
                    decks_seen, deal_start = len(state.shoe.decks), len(state.actions)
                if rng.random() < 0.15:
                    for seat in range(spec.num_seats):
                        hidden = hidden_of(state, seat)
                        by_suit: dict[int, list[int]] = {}
                        for c in hidden:
                            by_suit.setdefault(cards.SUIT[c], []).append(c)
                        pairs = [p for p in by_suit.values() if len(p) >= 2]
                        if not pairs:
                            continue
                        x, y = rng.sample(rng.choice(pairs), 2)
                        twin = replay_swapped(spec, state, x, y, seat, deal_start)
                        assert twin.observation(seat) == state.observation(seat), (game, options, seat, x, y)
                        assert twin.visible_events(seat) == state.visible_events(seat)
                        assert twin.legal_actions(seat) == state.legal_actions(seat)
                        checked += 1
                        holder = holder_of(state, x)
                        if holder is not None and holder != holder_of(state, y):
                            assert twin.observation(holder) != state.observation(holder)
                            changed += 1
                for seat in state.to_act():
                    state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert checked > 200 and changed > 50, (checked, changed)
