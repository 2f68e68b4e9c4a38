"""Confirmation: 4 players, bidding, trick play and a mid-round confirm/revise choice.

RULES.md §1 is the specification; comments cite its sections. One
:class:`Confirmation` state plays a whole game of ``rounds`` rounds (8 by
default; ``rounds=1`` is a single deal). Its actions are ints (``notation.py``),
legal actions always ascending.

Observations, events and results name cards in the rule book's notation
(``"AS"``) and suits by letter (``"S"``); only actions are ints.

Options: ``rounds`` (int ≥ 1, default 8), ``trump`` (``dealer-card`` |
``random-suit``), ``double``, ``blind``, ``pairs`` (booleans, combine freely).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from referee import cards
from referee.cards import NAMES, RANK, SUIT, SUIT_CARDS, SUIT_MASK
from referee.games.base import (
    PUBLIC,
    ActionSyntaxError,
    Event,
    GameState,
    IllegalActionError,
    NotYourTurnError,
    Option,
    Shoe,
)
from referee.games.confirmation.notation import (
    BID,
    CONFIRM,
    MAX_BID,
    REVISE,
    action_name,
    choice_name,
    parse_action,
)

NUM_SEATS = 4
TRICKS = 13

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


def _names(card_list: Iterable[int]) -> list[str]:
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
    def resume(cls, options: dict[str, Any], shoe: Shoe, round_index: int, totals: list[int]) -> Confirmation:
        """A game entering round ``round_index`` (0-based) with ``totals`` already
        scored, that round dealt from ``shoe`` like any other (see ``determinization.py``)."""
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
        self.phase_bids: list[list[int]] = [[] for _ in range(NUM_SEATS)]  # in force after each phase
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
            self.phase_bids[s].append(self.parts[s])
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
            # RULES 1.8 blind: every choice and every revised number is revealed at scoring
            "phase_bids": [list(b) for b in self.phase_bids],
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
        shown_bids = [list(b) for b in self.phase_bids]
        in_force = list(self.parts)
        if self.blind and phase is not OVER:
            for s in range(NUM_SEATS):
                if s != seat:
                    shown[s] = []
                    shown_bids[s] = []
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
            "phase_bids": shown_bids,
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


def hidden_cards(state: Confirmation, seat: int) -> list[int]:
    """The cards whose place ``seat`` may not know (RULES §4, the ``hidden_cards`` trait): the other
    hands, but the face-up trump card (RULES 1.3: everyone knows the dealer holds it)."""
    return [c for other in range(NUM_SEATS) if other != seat for c in cards.cards_of(state.hands[other])
            if c != state.trump_card]
