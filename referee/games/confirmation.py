"""Confirmation: 4 players, bidding, trick play and a mid-round confirm/revise choice.

RULES.md §1 is the specification; comments cite its sections. One
:class:`Confirmation` state plays a whole game of ``rounds`` rounds (8 by
default; ``rounds=1`` is a single deal).

Action encoding (ints, legal actions always ascending):

=============  ===========  =====================
action         int          notation
=============  ===========  =====================
play card c    0..51        ``AS``, ``TD``, ``9C``
bid n          52 + n       ``BID 3``
confirm        66           ``CONFIRM``
revise to n    67 + n       ``REVISE 4``
=============  ===========  =====================

Observations, events and results name cards in the rule book's notation
(``"AS"``) and suits by letter (``"S"``); only actions are ints.

Options: ``rounds`` (int ≥ 1, default 8), ``trump`` (``dealer-card`` |
``random-suit``), ``double``, ``blind``, ``pairs`` (booleans, combine freely).

For search bots, :func:`determinize` turns one seat's observation into a
full state consistent with it (the hidden hands sampled).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from math import comb
from typing import Any

from referee import cards
from referee.cards import NAMES, SUIT, SUIT_CARDS, SUIT_MASK, RANK
from referee.games.base import (
    PUBLIC,
    ActionSyntaxError,
    Event,
    GameError,
    GameSpec,
    GameState,
    IllegalActionError,
    NotYourTurnError,
    Option,
    Shoe,
    check_options,
)

NUM_SEATS = 4
TRICKS = 13
MAX_BID = 13

BID = 52
CONFIRM = 66
REVISE = 67

# phases
BIDDING, PLAYING, CONFIRMING, OVER = "bid", "play", "confirm", "over"

OPTIONS = {
    "rounds": Option(8, "number of rounds (RULES 1.2)", minimum=1),
    "trump": Option("dealer-card", "how trump is chosen (RULES 1.3)", choices=("dealer-card", "random-suit")),
    "double": Option(False, "two confirmation phases, after tricks 4 and 9 (RULES 1.8)"),
    "blind": Option(False, "others' confirm/revise choices hidden until the round is scored (RULES 1.8)"),
    "pairs": Option(False, "seats 0+2 and 1+3 play as partners (RULES 1.8)"),
}

_ALL_BIDS = tuple(BID + n for n in range(MAX_BID + 1))


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


def _names(card_list) -> list[str]:
    """Cards leave the engine in the rule book's notation (observations, events, results)."""
    return [NAMES[c] for c in card_list]


def _choice_word(confirmed: bool) -> str:
    return "CONFIRM" if confirmed else "REVISE"


def round_points(choices: list[bool], bid: int, tricks: int) -> int:
    """RULES 1.7 and 1.8 (double): points of one seat or team for a round.

    ``choices`` holds True (confirm) / False (revise) for each confirmation
    phase in order; ``bid`` is the final bid.
    """
    last_confirmed = choices[-1]
    if tricks == bid:
        if not last_confirmed:
            return 10 + bid
        if len(choices) == 2 and choices[0]:
            return 30 + 3 * bid
        return 20 + 2 * bid
    return (-3 if last_confirmed else -1) * abs(tricks - bid)


def seat_points(choices: list[list[bool]], parts: list[int], won: list[int], pairs: bool) -> list[int]:
    """RULES 1.7/1.8: each seat's points for a round (in *pairs* both partners get the team's)."""
    if pairs:
        points = [0] * NUM_SEATS
        for a in (0, 1):
            b = a + 2
            team_choices = [ca and cb for ca, cb in zip(choices[a], choices[b])]
            points[a] = points[b] = round_points(team_choices, parts[a] + parts[b], won[a] + won[b])
        return points
    return [round_points(choices[s], parts[s], won[s]) for s in range(NUM_SEATS)]


def trick_winner(cards_played: list[int], leader: int, trump: int) -> int:
    """RULES 1.5: the seat that wins a complete trick (cards in play order from ``leader``)."""
    best = 0
    for i in range(1, len(cards_played)):
        c, b = cards_played[i], cards_played[best]
        if SUIT[c] == SUIT[b]:
            if RANK[c] > RANK[b]:
                best = i
        elif SUIT[c] == trump:
            best = i
    return (leader + best) % NUM_SEATS


class Confirmation(GameState):
    """A game of Confirmation: ``rounds`` deals, the dealer passing clockwise (RULES 1.2)."""

    game = "confirmation"
    num_seats = NUM_SEATS

    def __init__(self, options: dict[str, Any], shoe: Shoe):
        self._init_game(options, shoe)
        self._start_round()

    @classmethod
    def _resume(cls, options: dict[str, Any], shoe: Shoe, round_index: int, totals: list[int]) -> Confirmation:
        """A game entering round ``round_index`` (0-based) with ``totals`` already
        scored, that round dealt from ``shoe`` like any other (see :func:`determinize`)."""
        self = cls.__new__(cls)
        self._init_game(options, shoe)
        self.round = round_index
        self.totals = list(totals)
        self._start_round()
        return self

    def _init_game(self, options: dict[str, Any], shoe: Shoe) -> None:
        self.options = options
        self.shoe = shoe
        self.rounds = options["rounds"]
        self.pairs = options["pairs"]
        self.blind = options["blind"]
        self.random_suit = options["trump"] == "random-suit"
        # RULES 1.6 / 1.8: after how many tricks a confirmation phase comes
        self.confirm_after = (4, 9) if options["double"] else (7,)
        self.events: list[Event] = []
        self.actions: list[tuple[int, int]] = []
        self.totals = [0] * NUM_SEATS
        self.history: list[dict[str, Any]] = []
        self.round = 0

    # --- round set-up (RULES 1.3, §3) ----------------------------------------

    def _start_round(self) -> None:
        self.dealer = dealer = self.round % NUM_SEATS
        deck = self.shoe.deck()
        hands = [0] * NUM_SEATS
        for i, c in enumerate(deck):
            hands[(dealer + 1 + i) % NUM_SEATS] |= 1 << c
        self.hands = hands
        if self.random_suit:
            self.trump = self.shoe.suit()
            self.trump_card = None
        else:
            self.trump_card = deck[51]
            self.trump = SUIT[deck[51]]
        self.bids = [-1] * NUM_SEATS        # the bids as made (RULES 1.4)
        self.parts = [-1] * NUM_SEATS       # the bid in force of each seat
        self.choices: list[list[bool]] = [[] for _ in range(NUM_SEATS)]
        self.pending: dict[int, int] = {}   # confirm-phase actions not yet revealed
        self.won = [0] * NUM_SEATS
        self.tricks_done = 0
        self.completed: list[tuple[int, list[int], int]] = []  # (leader, cards, winner)
        self.trick: list[int] = []
        self.leader = self.turn = (dealer + 1) % NUM_SEATS
        self.phase = BIDDING
        self._to_act: tuple[int, ...] = (self.turn,)
        ev = self.events
        ev.append(Event("round", None, {"round": self.round + 1, "dealer": dealer}))
        for seat in range(NUM_SEATS):
            ev.append(Event("deal", seat, _names(cards.cards_of(hands[seat])), seat))
        trump_card = None if self.trump_card is None else NAMES[self.trump_card]
        ev.append(Event("trump", None, {"suit": cards.SUITS[self.trump], "card": trump_card}))

    # --- the interface ------------------------------------------------------

    def to_act(self) -> tuple[int, ...]:
        return self._to_act

    def is_terminal(self) -> bool:
        return self.phase is OVER

    def scores(self) -> list[int]:
        return list(self.totals)

    action_name = staticmethod(action_name)
    parse_action = staticmethod(parse_action)

    def legal_actions(self, seat: int) -> list[int]:
        phase = self.phase
        if phase is PLAYING:
            if seat != self.turn:
                return []
            hand = self.hands[seat]
            if self.trick:
                led = SUIT[self.trick[0]]
                follow = SUIT_CARDS[led][hand >> (13 * led) & 0x1FFF]
                if follow:
                    return list(follow)
            return cards.cards_of(hand)
        if phase is BIDDING:
            if seat != self.turn:
                return []
            forbidden = self._forbidden_bid()
            return [a for a in _ALL_BIDS if a - BID != forbidden]
        if phase is CONFIRMING:
            if seat in self.pending:
                return []
            part = self.parts[seat]
            return [CONFIRM] + [REVISE + n for n in range(MAX_BID + 1) if n != part]
        return []

    def _forbidden_bid(self) -> int:
        """RULES 1.4: the number the dealer may not bid (-1 when there is none)."""
        if self.turn != self.dealer:
            return -1
        forbidden = TRICKS - sum(b for s, b in enumerate(self.bids) if s != self.dealer)
        return forbidden if 0 <= forbidden <= MAX_BID else -1

    def apply(self, seat: int, action: int) -> None:
        phase = self.phase
        if phase is PLAYING:
            if seat != self.turn:
                raise self._not_your_turn(seat)
            self._play(seat, action)
        elif phase is BIDDING:
            if seat != self.turn:
                raise self._not_your_turn(seat)
            self._bid(seat, action)
        elif phase is CONFIRMING:
            if seat not in self._to_act:
                raise self._not_your_turn(seat)
            self._choose(seat, action)
        else:
            raise NotYourTurnError("1.2", "the game is over")
        self.actions.append((seat, action))

    def _not_your_turn(self, seat: int) -> NotYourTurnError:
        if seat not in range(NUM_SEATS):
            return NotYourTurnError("1", f"there is no seat {seat!r} (seats are 0..3)")
        if self.phase is CONFIRMING:
            return NotYourTurnError("1.6", f"seat {seat} has already chosen in this confirmation phase")
        return NotYourTurnError("1.4" if self.phase is BIDDING else "1.5",
                                f"it is seat {self.turn}'s turn to {self.phase}, not seat {seat}'s")

    # --- RULES 1.4 bidding ----------------------------------------------------

    def _bid(self, seat: int, action: int) -> None:
        if not BID <= action <= BID + MAX_BID:
            raise IllegalActionError("1.4", f"seat {seat} must bid now (BID 0..13), not {self._describe(action)}")
        n = action - BID
        if n == self._forbidden_bid():
            raise IllegalActionError("1.4", f"the dealer may not bid {n}: the four bids would total exactly 13")
        self.bids[seat] = self.parts[seat] = n
        self.events.append(Event("bid", seat, n))
        if seat == self.dealer:
            self.phase = PLAYING
            self.turn = self.leader
        else:
            self.turn = (seat + 1) % NUM_SEATS
        self._to_act = (self.turn,)

    # --- RULES 1.5 trick play -------------------------------------------------

    def _play(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        if not (isinstance(card, int) and 0 <= card < 52):
            raise IllegalActionError("1.5", f"seat {seat} must play a card now, not {self._describe(card)}")
        if not hand >> card & 1:
            raise IllegalActionError("1.5", f"seat {seat} does not hold {NAMES[card]}")
        trick = self.trick
        if trick:
            led = SUIT[trick[0]]
            if SUIT[card] != led and hand & SUIT_MASK[led]:
                raise IllegalActionError("1.5", f"seat {seat} must follow suit: it holds {cards.SUITS[led]} "
                                                f"and played {NAMES[card]}")
        self.hands[seat] = hand & ~(1 << card)
        trick.append(card)
        self.events.append(Event("play", seat, NAMES[card]))
        if len(trick) < NUM_SEATS:
            self.turn = (seat + 1) % NUM_SEATS
            self._to_act = (self.turn,)
            return
        winner = trick_winner(trick, self.leader, self.trump)
        self.won[winner] += 1
        self.completed.append((self.leader, trick, winner))
        self.tricks_done += 1
        self.events.append(Event("trick", winner, self.tricks_done))
        self.trick = []
        self.leader = self.turn = winner
        if self.tricks_done in self.confirm_after:
            self.phase = CONFIRMING
            self._to_act = (0, 1, 2, 3)
        elif self.tricks_done == TRICKS:
            self._score_round()
        else:
            self._to_act = (winner,)

    # --- RULES 1.6 the confirmation phase ---------------------------------------

    def _choose(self, seat: int, action: int) -> None:
        if action == CONFIRM:
            pass
        elif isinstance(action, int) and REVISE <= action <= REVISE + MAX_BID:
            if action - REVISE == self.parts[seat]:
                rule = "1.8" if len(self.choices[seat]) or self.pairs else "1.6"
                raise IllegalActionError(rule, f"a revision must change the number: seat {seat}'s bid "
                                               f"in force is already {self.parts[seat]}")
        else:
            raise IllegalActionError("1.6", f"seat {seat} must CONFIRM or REVISE n now, "
                                            f"not {self._describe(action)}")
        self.pending[seat] = action
        self._to_act = tuple(s for s in self._to_act if s != seat)
        if self._to_act:
            return
        phase_number = len(self.choices[0]) + 1
        for s in range(NUM_SEATS):
            a = self.pending[s]
            confirmed = a == CONFIRM
            if not confirmed:
                self.parts[s] = a - REVISE
            self.choices[s].append(confirmed)
            data = {"phase": phase_number, "choice": choice_name(confirmed, self.parts[s])}
            # RULES 1.8 blind: a seat sees its own choice only
            self.events.append(Event("choice", s, data, s if self.blind else PUBLIC))
        self.pending = {}
        self.phase = PLAYING
        self._to_act = (self.turn,)

    # --- RULES 1.7 scoring ------------------------------------------------------

    def _score_round(self) -> None:
        points = seat_points(self.choices, self.parts, self.won, self.pairs)
        for s in range(NUM_SEATS):
            self.totals[s] += points[s]
        summary = {
            "round": self.round + 1,
            "dealer": self.dealer,
            "trump": cards.SUITS[self.trump],
            "bids": list(self.bids),
            "final_bids": list(self.parts),
            "choices": [[_choice_word(c) for c in ch] for ch in self.choices],
            "tricks": list(self.won),
            "points": points,
            "totals": list(self.totals),
        }
        self.history.append(summary)
        self.events.append(Event("score", None, summary))
        self.round += 1
        if self.round < self.rounds:
            self._start_round()
        else:
            self.phase = OVER
            self._to_act = ()
            self.events.append(Event("end", None, {"scores": list(self.totals), "placing": self.placing()}))

    # --- what a seat may know (RULES §4) ----------------------------------------

    def observation(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may know now: its own hand, public play, and the
        confirm choices it has been shown (its own always; others' once all are
        in, or in *blind* once the round is scored)."""
        phase = self.phase
        shown = [list(ch) for ch in self.choices]
        in_force = list(self.parts)
        if self.blind and phase is not OVER:
            for s in range(NUM_SEATS):
                if s != seat:
                    shown[s] = []
                    in_force[s] = self.bids[s]
        return {
            "game": self.game,
            "seat": seat,
            "round": self.round + (phase is not OVER),
            "rounds": self.rounds,
            "dealer": self.dealer,
            "phase": phase,
            "turn": self.turn if phase is BIDDING or phase is PLAYING else None,
            "hand": _names(cards.cards_of(self.hands[seat])),
            "trump": cards.SUITS[self.trump],
            "trump_card": None if self.trump_card is None else NAMES[self.trump_card],
            "bids": [b if b >= 0 else None for b in self.bids],
            "bids_in_force": [b if b >= 0 else None for b in in_force],
            "choices": [[_choice_word(c) for c in ch] for ch in shown],
            "my_pending_choice": action_name(self.pending[seat]) if seat in self.pending else None,
            "leader": self.leader,
            "trick": _names(self.trick),
            "tricks_won": list(self.won),
            "tricks": [{"leader": ld, "cards": _names(cs), "winner": w} for ld, cs, w in self.completed],
            "scores": list(self.totals),
            "partner": (seat + 2) % NUM_SEATS if self.pairs else None,
        }

    def results(self) -> dict[str, Any]:
        out = super().results()
        out["rounds"] = [dict(h) for h in self.history]
        if self.pairs:
            out["teams"] = [[0, 2], [1, 3]]
        return out

    @staticmethod
    def _describe(action: Any) -> str:
        try:
            return action_name(action)
        except (ActionSyntaxError, TypeError):
            return f"action code {action!r}"


SPEC = GameSpec(
    name="confirmation",
    num_seats=NUM_SEATS,
    options=OPTIONS,
    new_match=Confirmation,
    action_name=action_name,
    parse_action=parse_action,
    summary="4 players: bid your tricks, then confirm or revise mid-round (RULES.md §1)",
)


# --- determinization: full states consistent with one seat's view -------------------
#
# A search bot (determinized Monte Carlo) samples complete states that agree
# with everything its seat knows, and plays them out with the engine.
# ``determinize(observation, rng, options)`` rebuilds the current round from
# a sampled deck order: the hidden hands are dealt uniformly among all deals
# consistent with the observation, the deck order is built from the
# resulting 13-card hands by RULES §3, and the round is replayed (bids,
# tricks, confirmation choices) up to the observed decision point.

_CARD = {name: c for c, name in enumerate(NAMES)}
_FULL_DECK = cards.FULL_DECK_MASK


class _PrimedShoe(Shoe):
    """A shoe whose next deck (and suit) are given; later ones are shuffled from ``seed``."""

    def __init__(self, seed: int, deck: tuple[int, ...], suit: int | None = None):
        super().__init__(seed)
        self._primed_deck: tuple[int, ...] | None = deck
        self._primed_suit = suit

    def deck(self) -> tuple[int, ...]:
        if self._primed_deck is None:
            return super().deck()
        order, self._primed_deck = self._primed_deck, None
        self.decks.append(order)
        return order

    def suit(self) -> int:
        if self._primed_suit is None:
            return super().suit()
        s, self._primed_suit = self._primed_suit, None
        self.suits.append(s)
        return s


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
    state does. A double-phase revision the view no longer shows (REVISE in
    both phases) is re-made with a random number.

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
    shoe = _PrimedShoe(rng.getrandbits(64), tuple(deck), trump if trump_card is None else None)
    state = Confirmation._resume(opts, shoe, obs["round"] - 1, totals)

    # replay the round: bids from left of the dealer, tricks, confirmation phases
    bids = obs["bids"]
    for i in range(NUM_SEATS):
        s = (dealer + 1 + i) % NUM_SEATS
        if bids[s] is None:
            break
        state.apply(s, BID + bids[s])
    hidden = state.blind and obs["phase"] != OVER
    plans = [None if hidden and s != me else
             _replayed_choices(obs["choices"][s], bids[s], obs["bids_in_force"][s], rng)
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


def _replayed_choices(words: list[str], bid: int | None, final: int | None, rng: random.Random) -> list[int]:
    """Actions that make a seat's shown choices (``words``) and bid in force ``final``.

    A revision followed by another one has left no number in the view: any
    legal one (neither the number before it nor the final one) will do.
    """
    actions = []
    part = bid
    for i, word in enumerate(words):
        if word == "CONFIRM":
            actions.append(CONFIRM)
            continue
        if "REVISE" in words[i + 1:]:
            part = rng.choice([n for n in range(MAX_BID + 1) if n != part and n != final])
        else:
            part = final
        actions.append(REVISE + part)
    return actions


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
