"""Determinization for search bots: full Confirmation states consistent with one seat's view.

A search bot (determinized Monte Carlo) samples complete states that agree
with everything its seat knows, and plays them out with the engine.
``determinize(observation, rng, options)`` rebuilds the current round from
a sampled deck order: the hidden hands are dealt uniformly among all deals
consistent with the observation, the deck order is built from the
resulting 13-card hands by RULES §3, and the round is replayed (bids,
tricks, confirmation choices) up to the observed decision point.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from math import comb
from typing import Any

from referee import cards
from referee.cards import NAMES, SUIT
from referee.games.base import GameError, PrimedShoe, check_options
from referee.games.confirmation.notation import BID, CONFIRM, REVISE, parse_action
from referee.games.confirmation.rules import (
    CONFIRMING,
    NUM_SEATS,
    OPTIONS,
    OVER,
    TRICKS,
    Confirmation,
    seat_points,
)

_CARD = {name: c for c, name in enumerate(NAMES)}
_FULL_DECK = cards.FULL_DECK_MASK

def determinize(observation: dict[str, Any], rng: random.Random, options: dict[str, Any] | None = None, *,
                hidden_choice: Callable[[Confirmation, int, random.Random], int] | None = None) -> Confirmation:
    """A full :class:`Confirmation` state that ``observation`` (of some seat) is a view of.

    The state is at the same decision point, ``state.observation(seat) ==
    observation``, and every card hidden from the seat lies uniformly at random
    among the deals consistent with what the seat saw: the cards played stay
    where they were played, a seat that did not follow a suit holds none of
    it, the dealer holds the face-up trump card (dealer-card trump) until it
    plays it, and every hand has its size. Nothing else constrains the hidden
    cards: bids and choices are not read as hints.

    ``options`` are the game's rule options (as in GameStart). ``rounds``,
    ``pairs`` and ``trump`` are read from the observation; ``double`` and
    ``blind`` are inferred when ``options`` leaves them out, which is not
    always possible (a seat cannot tell, after trick 7 or 8, whether its one
    confirmation phase came after trick 4 or 7): pass them. An option that
    contradicts the observation raises :class:`GameError`.

    Confirmation choices the seat has not seen (*blind*: the other seats'
    choices until the round is scored) are made by ``hidden_choice(state,
    seat, rng)``, called with the determinized state in its confirmation
    phase, which must return a legal action of that seat; by default CONFIRM.
    In a confirmation phase in progress, the seat's own choice, if it made
    one, is pending again; the other seats have not chosen yet (the seat
    cannot know who has), so ``to_act()`` may list more seats than the real
    state does.

    The state holds this round only: ``totals`` are those of the observation,
    ``history``, ``events`` and ``actions`` start at this round, and the later
    rounds are dealt from a fresh shoe seeded from ``rng``, so that the state
    can be played to the end of the game.
    """
    obs = observation
    me = obs["seat"]
    opts = _options_for(obs, options)
    dealer = obs["dealer"]
    trump = cards.SUITS.index(obs["trump"])
    trump_card = None if obs["trump_card"] is None else _CARD[obs["trump_card"]]

    # what each seat has played, and which suits it has shown out of (RULES 1.5)
    tricks = [(t["leader"], [_CARD[n] for n in t["cards"]]) for t in obs["tricks"]]
    current = [_CARD[n] for n in obs["trick"]]
    played = [0] * NUM_SEATS
    void = [0] * NUM_SEATS
    for leader, cs in (*tricks, (obs["leader"], current)):
        if not cs:
            continue
        led = SUIT[cs[0]]
        for i, c in enumerate(cs):
            s = (leader + i) % NUM_SEATS
            played[s] |= 1 << c
            if SUIT[c] != led:
                void[s] |= 1 << led

    # the hidden hands: the unseen cards, dealt consistently with the view
    hands = [0] * NUM_SEATS
    hands[me] = cards.mask_of(_CARD[n] for n in obs["hand"])
    known = hands[me] | played[0] | played[1] | played[2] | played[3]
    need = [TRICKS - played[s].bit_count() for s in range(NUM_SEATS)]
    need[me] = 0
    if trump_card is not None and not known >> trump_card & 1:
        hands[dealer] |= 1 << trump_card  # face up, still in the dealer's hand (RULES 1.3)
        need[dealer] -= 1
        known |= 1 << trump_card
    others = [s for s in range(NUM_SEATS) if s != me]
    _deal_hidden(rng, cards.cards_of(_FULL_DECK ^ known), others, need, void, hands)

    # the deck order that deals these hands (RULES §3); the trump card last
    deck = [0] * 52
    for s in range(NUM_SEATS):
        held = cards.cards_of(hands[s] | played[s])
        if s == dealer and trump_card is not None:
            held.remove(trump_card)
            held.append(trump_card)
        deck[(s - dealer - 1) % NUM_SEATS::NUM_SEATS] = held

    # totals before this round (at the end of the game the view's scores include it)
    totals = list(obs["scores"])
    if obs["phase"] == OVER:
        choices = [[w == "CONFIRM" for w in ch] for ch in obs["choices"]]
        points = seat_points(choices, obs["bids_in_force"], obs["tricks_won"], opts["pairs"])
        totals = [t - p for t, p in zip(totals, points)]
    shoe = PrimedShoe(rng.getrandbits(64), tuple(deck), trump if trump_card is None else None)
    state = Confirmation.resume(opts, shoe, obs["round"] - 1, totals)

    # replay the round: bids from left of the dealer, tricks, confirmation phases
    bids = obs["bids"]
    for i in range(NUM_SEATS):
        s = (dealer + 1 + i) % NUM_SEATS
        if bids[s] is None:
            break
        state.apply(s, BID + bids[s])
    hidden = state.blind and obs["phase"] != OVER
    plans = [None if hidden and s != me else
             _replayed_choices(obs["choices"][s], obs["phase_bids"][s])
             for s in range(NUM_SEATS)]
    phases_done = len(obs["choices"][me])
    phase = 0
    for k, (leader, cs) in enumerate(tricks, 1):
        for i, c in enumerate(cs):
            state.apply((leader + i) % NUM_SEATS, c)
        if k not in state.confirm_after:
            continue
        if phase < phases_done:
            for s in range(NUM_SEATS):
                plan = plans[s]
                if plan is not None:
                    state.apply(s, plan[phase])
                else:
                    state.apply(s, hidden_choice(state, s, rng) if hidden_choice else CONFIRM)
        elif obs["my_pending_choice"] is not None:  # the phase in progress
            state.apply(me, parse_action(obs["my_pending_choice"]))
        phase += 1
    for i, c in enumerate(current):
        state.apply((obs["leader"] + i) % NUM_SEATS, c)
    return state


def _options_for(obs: dict[str, Any], options: dict[str, Any] | None) -> dict[str, Any]:
    """The rule options: those given, checked against the view, the rest read from it."""
    given = dict(options or {})
    opts = check_options("confirmation", OPTIONS, given)
    seen = {"rounds": obs["rounds"], "pairs": obs["partner"] is not None,
            "trump": "dealer-card" if obs["trump_card"] is not None else "random-suit"}
    me = obs["seat"]
    done = len(obs["tricks"])
    reached = len(obs["choices"][me]) + (obs["phase"] == CONFIRMING)  # confirmation phases reached
    if reached == (done >= 4) + (done >= 9) != (done >= 7):
        seen["double"] = True
    elif reached == (done >= 7) != (done >= 4) + (done >= 9):
        seen["double"] = False
    if obs["phase"] != OVER and obs["choices"][me]:
        seen["blind"] = not any(obs["choices"][s] for s in range(NUM_SEATS) if s != me)
    for key, value in seen.items():
        if key not in given:
            opts[key] = value
        elif opts[key] != value:
            raise GameError(f"option {key}={opts[key]!r} contradicts the observation ({key}={value!r})")
    return opts


def _replayed_choices(words: list[str], in_force: list[int]) -> list[int]:
    """Actions that make a seat's shown choices (``words``) and its bids in force after each
    phase (``in_force``, shown with them)."""
    return [CONFIRM if word == "CONFIRM" else REVISE + n for word, n in zip(words, in_force)]


def _deal_hidden(rng: random.Random, pool: list[int], seats: list[int], need: list[int], void: list[int],
                 hands: list[int]) -> None:
    """Deal ``pool`` to ``seats`` (three at most), ``need[s]`` cards each and none
    of a suit in the bit set ``void[s]``, uniformly among all such deals; into ``hands``.

    The cards fall into classes by the set of seats that may hold them (the
    suits with the same set form one class). A class open to one seat goes to
    it; for the classes open to two seats, how many go to each is drawn with
    probability proportional to the number of deals that split allows, the
    cards open to all seats filling the rest; each class is then shuffled and
    cut.
    """
    if len(pool) != sum(need[s] for s in seats):
        raise GameError(f"the view is inconsistent: {len(pool)} unseen cards for "
                        f"{sum(need[s] for s in seats)} places in the hidden hands")
    if not any(void[s] for s in seats):
        rng.shuffle(pool)
        start = 0
        for s in seats:
            hands[s] |= cards.mask_of(pool[start:start + need[s]])
            start += need[s]
        return
    everyone = (1 << len(seats)) - 1
    classes: dict[int, list[int]] = {}
    pool_mask = cards.mask_of(pool)
    for suit in range(4):
        of_suit = cards.suit_cards(pool_mask, suit)
        if of_suit:
            open_to = sum(1 << i for i, s in enumerate(seats) if not void[s] >> suit & 1)
            classes.setdefault(open_to, []).extend(of_suit)
    if 0 in classes:
        raise GameError("the view is inconsistent: unseen cards no hidden hand may hold")
    caps = [need[s] for s in seats]
    split: list[tuple[int, int, list[int]]] = []  # (seat index a, seat index b, cards) of two-seat classes
    free: list[int] = []
    for open_to, cs in classes.items():
        if open_to == everyone:
            free = cs
            continue
        members = [i for i in range(len(seats)) if open_to >> i & 1]
        if len(members) == 1:
            caps[members[0]] -= len(cs)
            hands[seats[members[0]]] |= cards.mask_of(cs)
        else:
            split.append((members[0], members[1], cs))
    if min(caps) < 0:
        raise GameError("the view is inconsistent: a hidden hand is too small for the cards only it may hold")
    # every way to split the two-seat classes, weighted by the deals it allows
    combos: list[tuple[int, list[int], tuple[int, ...]]] = [(1, caps, ())]
    for a, b, cs in split:
        n = len(cs)
        grown = []
        for weight, left, xs in combos:
            for x in range(max(0, n - left[b]), min(n, left[a]) + 1):
                rest = list(left)
                rest[a] -= x
                rest[b] -= n - x
                grown.append((weight * comb(n, x), rest, (*xs, x)))
        combos = grown
    weighted = []
    total = 0
    for weight, left, xs in combos:
        ways = 1
        n = len(free)
        for c in left[:-1]:
            ways *= comb(n, c)
            n -= c
        total += weight * ways
        weighted.append((total, left, xs))
    if not total:
        raise GameError("the view is inconsistent: no deal of the hidden hands respects the voids")
    pick = rng.randrange(total)
    left, xs = next((left, xs) for upto, left, xs in weighted if pick < upto)
    for (a, b, cs), x in zip(split, xs):
        rng.shuffle(cs)
        hands[seats[a]] |= cards.mask_of(cs[:x])
        hands[seats[b]] |= cards.mask_of(cs[x:])
    rng.shuffle(free)
    start = 0
    for i, c in enumerate(left):
        hands[seats[i]] |= cards.mask_of(free[start:start + c])
        start += c
