"""Aegis, the two-player trick-taking game of RULES.md §2 (pure rules, no I/O).

A match (:class:`AegisMatch`, the registry's ``new_match``) is a draw for the
first master (§2.2) followed by games (:class:`AegisGame`, one deal each) until
someone wins by §2.8. Seats are 0 and 1; the roles *master* and *slave*
alternate every game.

Deck orders become deals by RULES.md §3: deck cards 0..9 go alternately to
slave and master, the slave first (slave 0, 2, 4, 6, 8; master 1, 3, 5, 7, 9);
card 10 is the key card; the stock is cards 11..51, card 11 on top. The
master draw uses a deck of its own: seat 0 draws its card 0, seat 1 its card 1.

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

``legal_actions(seat)`` lists actions in ascending int order: at an exchange
the master gets ``STOP`` then its 31 non-empty discard sets, the slave its 32
discard sets (decline first); at the declarations the master gets
``DECLARE e+1 .. 5`` and the slave ``PASS`` then ``DECLARE d_m+1 .. 5``; in
trick play the cards of the led suit if it holds any, else its whole hand.
The first legal action is the referee's default (STOP, decline, the lowest
declaration or PASS, the lowest legal card).

Illegal actions raise :class:`IllegalActionError` with the rule broken
("2.4" exchange, "2.5" declarations, "2.6" trick play); acting out of turn
raises :class:`NotYourTurnError` citing the section of the decision at hand
("2.4" during the exchanges, "2.5" the declarations, "2.6" trick play, "2.8"
once the match is over; "2" for a seat that does not exist).

Cards and suits in views
------------------------
The engine keeps cards as ints (and actions are ints), but everything that
leaves it as data -- ``observation(seat)``, ``Event.data`` and ``results()``
-- names cards in the rule book's notation (``"AS"``, ``"TD"``) and suits by
letter (``"S"``, ``"H"``, ``"D"``, ``"C"``). Hands and discards are listed in
ascending card order; drawn cards in the order they came off the stock. Conversion happens only where that data
is built; ``legal_actions`` and ``apply`` stay int-based.

Events (``Event(kind, seat, data, to)``)
----------------------------------------
public: ``master_draw`` {cards, master}; ``deal`` {game, master, slave,
key_card, trump, killers, stock_size}; ``exchange`` {round, role, count};
``stop`` {round}; ``exchange_end`` {e, by: "stop"|"limit"}; ``declare``
{role, d}; ``pass`` {role}; ``attacker`` {attacker, role, d}; ``play``
{trick, card}; ``trick`` {trick, leader, cards, winner}; ``game_end`` (the
game's result); ``match_end`` {scores, winner, placing, ended_by, games}.
private (``to`` = the seat itself): ``hand`` {game, cards} and
``exchange_cards`` {round, discarded, drawn} (not sent for a decline).

Observations (``observation(seat)``) hold the seat's hand, its own exchanges
and what is public, never the opponent's hand, discards or draws, nor the
stock order; see :meth:`AegisGame.observation` and
:meth:`AegisMatch.observation`.

For search bots, :func:`determinize` turns one seat's observation into a
full game (or match) state consistent with it (the hidden cards sampled).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from referee import cards
from referee.cards import NAMES, RANK, SUIT, SUIT_MASK, cards_of, suit_cards
from referee.games.base import (
    ActionSyntaxError,
    Event,
    GameSpec,
    GameState,
    IllegalActionError,
    NotYourTurnError,
    Option,
    Shoe,
    check_options,
    places_by_score,
)

__all__ = [
    "STOP", "PASS", "DECLARE", "EXCHANGE", "DECLINE", "OPTIONS", "SPEC",
    "AegisGame", "AegisMatch", "action_name", "parse_action",
    "beats", "follower_wins", "draw_master", "score_game", "deal", "determinize",
]

# --- constants ----------------------------------------------------------------

STOP = 52
PASS = 53
DECLARE = 53  # DECLARE + d, d = 1..5
EXCHANGE = 1 << 52
DECLINE = EXCHANGE  # the slave's EXCHANGE of no cards

HAND_SIZE = 5
NUM_TRICKS = 5
MAX_EXCHANGES = 4
MAX_DECLARATION = 5
STOCK_SIZE = 52 - 2 * HAND_SIZE - 1  # 41
WINNING_SCORE = 25
CALLED_LEAD = 10

MASTER, SLAVE = "master", "slave"

OPTIONS: dict[str, Option] = {
    "promise": Option(
        "table",
        "when the promise bonus (+1 for taking exactly the declared tricks) applies: "
        "'table' = every declaration (the sheet's table, default); '4plus' = only declarations of 4 or 5 "
        "(the sheet's text)",
        choices=("table", "4plus"),
    ),
}

# phases
EXCHANGE_MASTER, EXCHANGE_SLAVE, DECLARE_MASTER, DECLARE_SLAVE, PLAY, OVER = range(6)
PHASE_NAMES = ("exchange", "exchange", "declare", "declare", "play", "over")

_ACE = 12
_FACES = (9, 10, 11)  # J Q K


def _rank_beats(a: int, b: int) -> bool:
    if a == b:
        return False
    if a == _ACE:
        return b in _FACES
    if b == _ACE:
        return a <= 8  # T..2 beat the ace
    return a > b


#: RANK_BEATS[a][b]: rank a is stronger than rank b by RULES 2.1 (not transitive)
RANK_BEATS: tuple[tuple[bool, ...], ...] = tuple(
    tuple(_rank_beats(a, b) for b in range(13)) for a in range(13)
)

#: per key card (RULES 2.3): the three killers (its rank in the other suits), their mask, their names
_KILLERS = tuple(tuple(s * 13 + RANK[key] for s in range(4) if s != SUIT[key]) for key in range(52))
_KILLER_MASKS = tuple(cards.mask_of(k) for k in _KILLERS)
_KILLER_NAMES = tuple(tuple(NAMES[c] for c in k) for k in _KILLERS)


# --- pure rule functions ------------------------------------------------------


def beats(a: int, b: int) -> bool:
    """Card ``a`` is stronger than card ``b`` of the same suit (RULES 2.1)."""
    if SUIT[a] != SUIT[b]:
        raise ValueError(f"{NAMES[a]} and {NAMES[b]} are not of the same suit")
    return RANK_BEATS[RANK[a]][RANK[b]]


def follower_wins(lead: int, follow: int, trump: int, killers: int) -> bool:
    """Whether the second card of a trick beats the led card (RULES 2.6).

    ``killers`` is the bit mask of the three killers (never of the trump suit).
    """
    lead_suit = SUIT[lead]
    follow_suit = SUIT[follow]
    if follow_suit == lead_suit:
        return RANK_BEATS[RANK[follow]][RANK[lead]]
    if lead_suit != trump:
        return follow_suit == trump  # case 1 (a killer here has only its ordinary strength)
    return bool(killers >> follow & 1)  # case 2; otherwise case 3, the leader wins


def draw_master(card0: int, card1: int) -> int:
    """The seat that becomes master after the draw (RULES 2.2): seat 0 drew ``card0``."""
    r0, r1 = RANK[card0], RANK[card1]
    if r0 != r1:
        return 0 if RANK_BEATS[r0][r1] else 1
    return 0 if SUIT[card0] < SUIT[card1] else 1  # spades > hearts > diamonds > clubs


def score_game(d: int, t: int, d_m: int, promise: str = "table") -> tuple[int, int]:
    """(attacker points, defender points) of a game (RULES 2.7).

    ``d`` is the attacker's declaration, ``t`` the attacker's tricks, ``d_m``
    the master's declaration (equal to ``d`` when the slave passed).
    """
    if t >= d:
        points = d
        if t == d and (promise == "table" or d >= 4):
            points += 1  # promise
        if t == NUM_TRICKS:
            points += 1  # conquest
        save = d_m if d_m <= 2 and NUM_TRICKS - t >= d_m else 0
        return points, save
    return 0, d + (1 if t == 0 else 0)  # the defender wins, +1 conquest


def deal(deck: Sequence[int]) -> tuple[list[int], list[int], int, list[int]]:
    """(slave hand, master hand, key card, stock top first) of a deck order (RULES §3)."""
    return list(deck[0:10:2]), list(deck[1:10:2]), deck[10], list(deck[11:])


# --- notation -----------------------------------------------------------------


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


def _names(card_list) -> list[str]:
    """Cards leave the engine in the rule book's notation (observations, events, results)."""
    return [NAMES[c] for c in card_list]


def _describe(action: Any) -> str:
    try:
        return action_name(action)
    except ActionSyntaxError:
        return repr(action)


# --- one game -----------------------------------------------------------------


class AegisGame(GameState):
    """One game of Aegis (one deal), RULES 2.3-2.7.

    ``AegisGame(master, deck, options=None, number=1, shoe=None, events=None)``:
    ``master`` is the master's seat (0 or 1), ``deck`` a 52-card deck order
    dealt by RULES §3. ``options`` are checked against :data:`OPTIONS`.
    ``number`` labels the game in events. A match passes its ``shoe`` and its
    ``events`` list (the game then appends to the match's list); alone, the
    game makes a shoe holding its deck and a list of its own.
    """

    game = "aegis"
    num_seats = 2

    def __init__(self, master: int, deck: Sequence[int], options: Mapping[str, Any] | None = None,
                 number: int = 1, shoe: Shoe | None = None, events: list[Event] | None = None):
        if master not in (0, 1):
            raise ValueError(f"the master is seat 0 or 1, got {master!r}")
        if shoe is not None and shoe.decks and deck is shoe.decks[-1]:
            order = deck  # the shoe's own last deck: already checked (a record's) or a fresh shuffle
        else:
            order = cards.check_deck(deck)
        self.options = check_options("aegis", OPTIONS, options)
        if shoe is None:
            shoe = Shoe(decks=[order])
            shoe.deck()
        self.shoe = shoe
        self.events = events if events is not None else []
        self.actions: list[tuple[int, int]] = []
        self.number = number
        self.deck = order
        self.master = master
        self.slave = 1 - master
        slave_hand, master_hand, key, stock = deal(order)
        self.hands = [0, 0]
        self.hands[self.slave] = cards.mask_of(slave_hand)
        self.hands[master] = cards.mask_of(master_hand)
        self.key_card = key
        self.trump = SUIT[key]
        self.killers = list(_KILLERS[key])
        self.killer_mask = _KILLER_MASKS[key]
        self.stock = stock  # a list, top first; never changed (self.drawn counts the cards taken)
        self.drawn = 0  # cards taken from the top of the stock so far
        # exchange phase
        self.round = 0  # 0-based index of the exchange round in progress
        self.e = 0
        self.exchange_counts: list[list[int | None]] = []  # per round [master count, slave count]
        self.exchange_end: str | None = None  # "stop" or "limit"
        self.own_exchanges: list[list[dict[str, Any]]] = [[], []]
        # declarations
        self.d_master: int | None = None
        self.d_slave: int | None = None
        self.slave_passed = False
        self.attacker: int | None = None
        self.d: int | None = None
        # trick play
        self.leader = master
        self.lead: int | None = None
        self.tricks_won = [0, 0]
        self.completed: list[dict[str, Any]] = []  # finished tricks as shown (cards named)
        self.points = [0, 0]
        self.result: dict[str, Any] | None = None
        self.phase = EXCHANGE_MASTER
        self.turn = master

        # the public face of the deal, in notation (RULES 2.3)
        self.key_name = NAMES[key]
        self.trump_name = cards.SUITS[self.trump]
        self.killer_names = _KILLER_NAMES[key]
        self.events.append(Event("deal", None, {
            "game": number, "master": master, "slave": self.slave, "key_card": self.key_name,
            "trump": self.trump_name, "killers": list(self.killer_names), "stock_size": STOCK_SIZE,
        }))
        self.events.append(Event("hand", self.slave, {"game": number, "cards": _names(sorted(slave_hand))},
                                 self.slave))
        self.events.append(Event("hand", master, {"game": number, "cards": _names(sorted(master_hand))}, master))

    # -- the interface --

    def to_act(self) -> tuple[int, ...]:
        return () if self.phase == OVER else (self.turn,)

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def legal_actions(self, seat: int) -> list[int]:
        if self.phase == OVER or seat != self.turn:
            return []
        phase = self.phase
        hand = self.hands[seat]
        if phase == PLAY:
            if self.lead is not None:
                follow = suit_cards(hand, SUIT[self.lead])
                if follow:
                    return list(follow)
            return cards_of(hand)
        if phase == EXCHANGE_MASTER or phase == EXCHANGE_SLAVE:
            # doubling over the cards in ascending order lists the subsets in ascending mask order
            subsets = [EXCHANGE]
            for c in cards_of(hand):
                bit = 1 << c
                subsets += [x | bit for x in subsets]
            if phase == EXCHANGE_MASTER:
                subsets[0] = STOP
            return subsets
        if phase == DECLARE_MASTER:
            return list(range(DECLARE + self.e + 1, DECLARE + MAX_DECLARATION + 1))
        # DECLARE_SLAVE
        return [PASS, *range(DECLARE + self.d_master + 1, DECLARE + MAX_DECLARATION + 1)]

    def apply(self, seat: int, action: int) -> None:
        if self.phase == OVER:
            raise NotYourTurnError("2.6", f"game {self.number} is over (five tricks played); no seat acts")
        if seat != self.turn:
            raise self._not_your_turn(seat)
        if not isinstance(action, int) or isinstance(action, bool):
            raise IllegalActionError(self._rule(), f"{action!r} is not an action (actions are ints)")
        phase = self.phase
        if phase == PLAY:
            self._play(seat, action)
        elif phase == EXCHANGE_MASTER:
            self._master_exchange(action)
        elif phase == EXCHANGE_SLAVE:
            self._slave_exchange(action)
        elif phase == DECLARE_MASTER:
            self._master_declares(action)
        else:
            self._slave_declares(action)
        self.actions.append((seat, action))

    def _not_your_turn(self, seat: Any) -> NotYourTurnError:
        if seat not in (0, 1):
            return NotYourTurnError("2", f"there is no seat {seat!r} (aegis seats are 0 and 1)")
        return NotYourTurnError(self._rule(), f"seat {seat} cannot act now: it is seat {self.turn}'s turn "
                                              f"({self._role(self.turn)}, {PHASE_NAMES[self.phase]})")

    def scores(self) -> list[int]:
        return list(self.points)

    action_name = staticmethod(action_name)
    action_names = staticmethod(action_names)
    parse_action = staticmethod(parse_action)

    # -- exchange (RULES 2.4) --

    def _master_exchange(self, action: int) -> None:
        r = self.round + 1
        if action == STOP:
            self.events.append(Event("stop", self.master, {"round": r}))
            self._end_exchanges("stop")
            return
        if not EXCHANGE <= action < 2 * EXCHANGE:
            raise IllegalActionError("2.4", f"in exchange round {r} the master must STOP or EXCHANGE 1..5 cards "
                                            f"of its hand, not {_describe(action)}")
        mask = action ^ EXCHANGE
        if not mask:
            raise IllegalActionError("2.4", "the master exchanges 1..5 cards; an EXCHANGE of no cards is the "
                                            "slave's decline (the master ends the exchange phase with STOP)")
        self._exchange(self.master, mask, r)
        self.e += 1
        self.phase = EXCHANGE_SLAVE
        self.turn = self.slave

    def _slave_exchange(self, action: int) -> None:
        r = self.round + 1
        if not EXCHANGE <= action < 2 * EXCHANGE:
            raise IllegalActionError("2.4", f"in exchange round {r} the slave answers the master's exchange with "
                                            f"EXCHANGE of 0..5 cards of its hand (a bare EXCHANGE declines), "
                                            f"not {_describe(action)}")
        self._exchange(self.slave, action ^ EXCHANGE, r)
        self.round += 1
        if self.round == MAX_EXCHANGES:
            self._end_exchanges("limit")
        else:
            self.phase = EXCHANGE_MASTER
            self.turn = self.master

    def _exchange(self, seat: int, mask: int, r: int) -> None:
        hand = self.hands[seat]
        if mask & ~hand:
            missing = cards.format_list(cards_of(mask & ~hand))
            raise IllegalActionError("2.4", f"{action_name(EXCHANGE | mask)}: {missing} not in your hand "
                                            f"(you hold {cards.format_list(cards_of(hand))})")
        discarded = cards_of(mask)
        k = len(discarded)
        top = self.drawn
        drawn = self.stock[top:top + k]
        self.drawn = top + k
        hand &= ~mask
        for c in drawn:
            hand |= 1 << c
        self.hands[seat] = hand
        if seat == self.master:
            role = MASTER
            self.exchange_counts.append([k, None])
        else:
            role = SLAVE
            self.exchange_counts[-1][1] = k
        self.own_exchanges[seat].append({"round": r, "discarded": discarded, "drawn": drawn})
        events = self.events
        events.append(Event("exchange", seat, {"round": r, "role": role, "count": k}))
        if k:  # the cards themselves only to the seat (RULES 2.4), in notation
            events.append(Event("exchange_cards", seat, {"round": r, "discarded": [NAMES[c] for c in discarded],
                                                          "drawn": [NAMES[c] for c in drawn]}, seat))

    def _end_exchanges(self, how: str) -> None:
        self.exchange_end = how
        self.phase = DECLARE_MASTER
        self.turn = self.master
        self.events.append(Event("exchange_end", None, {"e": self.e, "by": how}))

    # -- declarations (RULES 2.5) --

    def _master_declares(self, action: int) -> None:
        floor = self.e + 1
        if not DECLARE + 1 <= action <= DECLARE + MAX_DECLARATION:
            if action == STOP or EXCHANGE <= action < 2 * EXCHANGE:
                why = "the master stopped" if self.exchange_end == "stop" else \
                    f"{MAX_EXCHANGES} rounds were played"
                raise IllegalActionError("2.4", f"the exchange phase is over ({why}); the master must "
                                                f"declare DECLARE {floor}..5, not {_describe(action)}")
            if action == PASS:
                raise IllegalActionError("2.5", f"the master may not pass; it must declare "
                                                f"DECLARE {floor}..5")
            raise IllegalActionError("2.5", f"the master must declare now (DECLARE {floor}..5), "
                                            f"not {_describe(action)}")
        d = action - DECLARE
        if d < floor:
            raise IllegalActionError("2.5", f"DECLARE {d} is below the floor e+1 = {floor} after "
                                            f"{self.e} exchange{'s' if self.e != 1 else ''}")
        self.d_master = d
        self.events.append(Event("declare", self.master, {"role": MASTER, "d": d}))
        self.phase = DECLARE_SLAVE
        self.turn = self.slave

    def _slave_declares(self, action: int) -> None:
        d_m = self.d_master
        if action == PASS:
            self.slave_passed = True
            self.attacker, self.d = self.master, d_m
            self.events.append(Event("pass", self.slave, {"role": SLAVE}))
        elif DECLARE + 1 <= action <= DECLARE + MAX_DECLARATION:
            d = action - DECLARE
            if d <= d_m:
                only = "; after DECLARE 5 the slave can only PASS" if d_m == MAX_DECLARATION else \
                    f" (PASS or DECLARE {d_m + 1}..5)"
                raise IllegalActionError("2.5", f"DECLARE {d} does not exceed the master's DECLARE {d_m}{only}")
            self.d_slave = d
            self.attacker, self.d = self.slave, d
            self.events.append(Event("declare", self.slave, {"role": SLAVE, "d": d}))
        else:
            choices = "PASS" if d_m == MAX_DECLARATION else f"PASS or DECLARE {d_m + 1}..5"
            raise IllegalActionError("2.5", f"the slave must answer the master's DECLARE {d_m} with {choices}, "
                                            f"not {_describe(action)}")
        self.events.append(Event("attacker", self.attacker, {
            "attacker": self.attacker, "role": self._role(self.attacker), "d": self.d}))
        self.phase = PLAY
        self.leader = self.turn = self.master

    # -- trick play (RULES 2.6) --

    def _play(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        if not 0 <= card < 52:
            raise IllegalActionError("2.6", f"in trick play a seat plays a card of its hand, "
                                            f"not {_describe(card)}")
        if not hand >> card & 1:
            raise IllegalActionError("2.6", f"{NAMES[card]} is not in your hand "
                                            f"(you hold {cards.format_list(cards_of(hand))})")
        trick_no = len(self.completed) + 1
        lead = self.lead
        if lead is not None:
            lead_suit = SUIT[lead]
            if SUIT[card] != lead_suit and hand & SUIT_MASK[lead_suit]:
                follow = cards.format_list(suit_cards(hand, lead_suit))
                raise IllegalActionError("2.6", f"you must follow suit: {NAMES[lead]} was led and you hold "
                                                f"{follow}; {NAMES[card]} is not allowed")
        self.hands[seat] = hand & ~(1 << card)
        name = NAMES[card]
        self.events.append(Event("play", seat, {"trick": trick_no, "card": name}))
        if lead is None:
            self.lead = card
            self.turn = 1 - seat
            return
        winner = seat if follower_wins(lead, card, self.trump, self.killer_mask) else self.leader
        self.tricks_won[winner] += 1
        trick = {"trick": trick_no, "leader": self.leader, "cards": [NAMES[lead], name],
                 "winner": winner}
        self.completed.append(trick)
        self.events.append(Event("trick", winner, dict(trick)))
        self.lead = None
        if trick_no == NUM_TRICKS:
            self._finish()
        else:
            self.leader = self.turn = winner

    # -- scoring (RULES 2.7) --

    def _finish(self) -> None:
        attacker = self.attacker
        defender = 1 - attacker
        d, d_m = self.d, self.d_master
        t = self.tricks_won[attacker]
        att_points, def_points = score_game(d, t, d_m, self.options["promise"])
        self.points[attacker] = att_points
        self.points[defender] = def_points
        won = t >= d
        self.phase = OVER
        self.result = {
            "game": self.number,
            "master": self.master,
            "slave": self.slave,
            "key_card": self.key_name,
            "trump": self.trump_name,
            "e": self.e,
            "exchanges": [list(x) for x in self.exchange_counts],
            "d_master": d_m,
            "d_slave": self.d_slave,
            "slave_passed": self.slave_passed,
            "attacker": attacker,
            "defender": defender,
            "d": d,
            "tricks": list(self.tricks_won),
            "attacker_tricks": t,
            "attacker_won": won,
            "winner": attacker if won else defender,
            "promise": won and t == d and att_points > d + (t == NUM_TRICKS),
            "conquest": (t == NUM_TRICKS) if won else t == 0,
            "save": won and def_points > 0,
            "points": list(self.points),
        }
        self.events.append(Event("game_end", None, dict(self.result)))

    # -- views --

    def results(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scores": self.scores(), "placing": self.placing()}
        if self.result is not None:
            out.update(self.result)
        return out

    def observation(self, seat: int) -> dict[str, Any]:
        """All that ``seat`` may know of this game: its hand and own exchanges, and what is public."""
        if seat not in (0, 1):
            raise ValueError(f"aegis seats are 0 and 1, got {seat!r}")
        phase = self.phase
        return {
            "game": self.game,
            "game_number": self.number,
            "seat": seat,
            "role": MASTER if seat == self.master else SLAVE,
            "master": self.master,
            "phase": PHASE_NAMES[phase],
            "to_act": [] if phase == OVER else [self.turn],
            "hand": [NAMES[c] for c in cards_of(self.hands[seat])],
            "key_card": self.key_name,
            "trump": self.trump_name,
            "killers": list(self.killer_names),
            "stock_size": STOCK_SIZE - self.drawn,
            "exchange_round": self.round + 1 if phase <= EXCHANGE_SLAVE else None,
            "exchanges": [list(x) for x in self.exchange_counts],
            "exchange_end": self.exchange_end,
            "e": self.e,
            "my_exchanges": [{"round": x["round"], "discarded": _names(x["discarded"]),
                              "drawn": _names(x["drawn"])} for x in self.own_exchanges[seat]],
            "d_master": self.d_master,
            "d_slave": self.d_slave,
            "slave_passed": self.slave_passed,
            "attacker": self.attacker,
            "d": self.d,
            "leader": self.leader if phase == PLAY else None,
            "trick": [] if self.lead is None else [[self.leader, NAMES[self.lead]]],
            "tricks_won": list(self.tricks_won),
            "tricks": [{"trick": x["trick"], "leader": x["leader"], "cards": list(x["cards"]),
                        "winner": x["winner"]} for x in self.completed],
            "points": list(self.points),
            "result": None if self.result is None else _copy_result(self.result),
        }

    # -- helpers --

    def _role(self, seat: int) -> str:
        return MASTER if seat == self.master else SLAVE

    def _rule(self) -> str:
        return ("2.4", "2.4", "2.5", "2.5", "2.6", "2.6")[self.phase]


def _copy_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a game's result that shares nothing mutable with it (its lists are these three)."""
    out = dict(result)
    out["exchanges"] = [list(x) for x in result["exchanges"]]
    out["tricks"] = list(result["tricks"])
    out["points"] = list(result["points"])
    return out


# --- the match ----------------------------------------------------------------


class AegisMatch(GameState):
    """A match of Aegis (RULES 2.2 and 2.8): the master draw, then games to 25 or a 10-point lead.

    ``AegisMatch(options, shoe)``: the first ``shoe.deck()`` is the master draw
    (seat 0 draws card 0, seat 1 card 1), then one ``shoe.deck()`` per game.
    The current game's decisions are delegated to :attr:`current` (an
    :class:`AegisGame` writing into this match's ``events``).
    """

    game = "aegis"
    num_seats = 2

    def __init__(self, options: Mapping[str, Any] | None = None, shoe: Shoe | None = None):
        self.options = check_options("aegis", OPTIONS, options)
        self.shoe = shoe if shoe is not None else Shoe()
        self.events: list[Event] = []
        self.actions: list[tuple[int, int]] = []
        draw = self.shoe.deck()
        self.draw_cards = [draw[0], draw[1]]
        self.first_master = draw_master(draw[0], draw[1])
        self.draw_names = _names(self.draw_cards)
        self.events.append(Event("master_draw", None, {"cards": list(self.draw_names),
                                                        "master": self.first_master}))
        self.totals = [0, 0]
        self.games: list[AegisGame] = []  # finished games
        self.winner: int | None = None
        self.ended_by: str | None = None
        self.current = self._new_game()

    def _new_game(self) -> AegisGame:
        number = len(self.games) + 1
        master = self.first_master if number % 2 == 1 else 1 - self.first_master
        return AegisGame(master, self.shoe.deck(), self.options, number=number, shoe=self.shoe,
                         events=self.events)

    # -- the interface --

    def to_act(self) -> tuple[int, ...]:
        return () if self.winner is not None else self.current.to_act()

    def is_terminal(self) -> bool:
        return self.winner is not None

    def legal_actions(self, seat: int) -> list[int]:
        return [] if self.winner is not None else self.current.legal_actions(seat)

    def apply(self, seat: int, action: int) -> None:
        if self.winner is not None:
            raise NotYourTurnError("2.8", "the match is over; no seat acts")
        game = self.current
        game.apply(seat, action)
        self.actions.append((seat, action))
        if game.phase == OVER:
            self._game_over(game)

    def _game_over(self, game: AegisGame) -> None:
        self.games.append(game)
        a, b = self.totals[0] + game.points[0], self.totals[1] + game.points[1]
        self.totals = [a, b]
        if a >= WINNING_SCORE and b >= WINNING_SCORE:
            self.winner, self.ended_by = game.result["winner"], "both-25"
        elif a >= WINNING_SCORE or b >= WINNING_SCORE:
            self.winner, self.ended_by = (0 if a >= WINNING_SCORE else 1), "25"
        elif abs(a - b) >= CALLED_LEAD:
            self.winner, self.ended_by = (0 if a > b else 1), "called"
        if self.winner is None:
            self.current = self._new_game()
        else:
            self.events.append(Event("match_end", self.winner, {
                "scores": list(self.totals), "winner": self.winner, "placing": self.placing(),
                "ended_by": self.ended_by, "games": len(self.games)}))

    def scores(self) -> list[int]:
        return list(self.totals)

    def placing(self) -> list[int]:
        if self.winner is not None:
            return [1, 2] if self.winner == 0 else [2, 1]
        return places_by_score(self.totals)

    action_name = staticmethod(action_name)
    action_names = staticmethod(action_names)
    parse_action = staticmethod(parse_action)

    # -- views --

    def observation(self, seat: int) -> dict[str, Any]:
        """The current game's view for ``seat`` plus the match: the draw, totals, past games."""
        obs = self.current.observation(seat)
        if self.winner is not None:
            obs["to_act"] = []
        obs["options"] = dict(self.options)
        obs["draw"] = {"cards": list(self.draw_names), "master": self.first_master}
        obs["match_scores"] = list(self.totals)
        obs["games"] = [_copy_result(g.result) for g in self.games]
        obs["match_over"] = self.winner is not None
        obs["winner"] = self.winner
        obs["ended_by"] = self.ended_by
        return obs

    def results(self) -> dict[str, Any]:
        return {
            "scores": self.scores(),
            "placing": self.placing(),
            "winner": self.winner,
            "ended_by": self.ended_by,
            "draw": {"cards": list(self.draw_names), "master": self.first_master},
            "num_games": len(self.games),
            "games": [_copy_result(g.result) for g in self.games],
        }


SPEC = GameSpec(
    name="aegis",
    num_seats=2,
    options=OPTIONS,
    new_match=lambda opts, shoe: AegisMatch(opts, shoe),
    action_name=action_name,
    parse_action=parse_action,
    summary="2 players: exchange up to 4 times, declare tricks, play 5 tricks with trumps, "
            "killers and a non-transitive ace; first to 25 or 10 ahead wins",
)


# --- determinization: full states consistent with one seat's view -------------------
#
# A search bot (determinized Monte Carlo) samples complete states that agree
# with everything its seat knows and plays them out with the engine.
#
# What a seat knows of a game: its own hand now, its own exchanges (the cards
# it discarded and drew, the drawn ones in stock order), the key card, every
# card played, and the public counts. From these its own initial hand follows
# (undo the tricks, then the exchanges, last first). Its draws fix stock
# positions exactly: in each round the master draws first, then the slave,
# each from the top, so round r's master draw starts after all the cards
# drawn in rounds before r, and the slave's right after the master's.
#
# The hidden cards are the opponent's initial hand, its discards and draws,
# and the rest of the stock. By symmetry (a uniform deck), what the opponent
# holds now is uniform among the unseen cards of the suits it has not shown
# out of in trick play, together with the cards it has played. The rest is
# rebuilt backwards from its hand after the exchanges: in each round where it
# exchanged k cards, last round first, k cards of its hand are taken as that
# round's draw (a random k of them, in random stock order) and k fresh unseen
# cards as its discards (so it held them then); what remains at the start is
# its initial hand. The unseen cards left over are the undrawn stock, in random
# order. That is a deck order (RULES §3) and a discard for every opponent
# exchange, so the game can be replayed action by action to the decision point.

_CARD = {name: c for c, name in enumerate(NAMES)}


class _PastGame:
    """A finished game of a resumed match, known only by its result (what the match reads of it)."""

    def __init__(self, result: Mapping[str, Any]):
        self.result = _copy_result(result)
        self.points = list(self.result["points"])


class _PrimedShoe(Shoe):
    """A shoe whose next deck is given; later ones are shuffled from ``seed``."""

    def __init__(self, seed: int, deck: tuple[int, ...]):
        super().__init__(seed)
        self._primed: tuple[int, ...] | None = deck

    def deck(self) -> tuple[int, ...]:
        if self._primed is None:
            return super().deck()
        order, self._primed = self._primed, None
        self.decks.append(order)
        return order


def _resume_match(options: Mapping[str, Any], shoe: Shoe, draw_cards: Sequence[int], totals: Sequence[int],
                  past_results: Sequence[Mapping[str, Any]]) -> AegisMatch:
    """An :class:`AegisMatch` continued after ``past_results`` (totals ``totals``),
    its next game dealt from ``shoe``. The past games exist only as results."""
    match = AegisMatch.__new__(AegisMatch)
    match.options = check_options("aegis", OPTIONS, options)
    match.shoe = shoe
    match.events = []
    match.actions = []
    match.draw_cards = list(draw_cards)
    match.first_master = draw_master(draw_cards[0], draw_cards[1])
    match.draw_names = _names(match.draw_cards)
    match.events.append(Event("master_draw", None, {"cards": list(match.draw_names), "master": match.first_master}))
    match.totals = list(totals)
    match.games = [_PastGame(r) for r in past_results]  # type: ignore[misc]
    match.winner = None
    match.ended_by = None
    match.current = match._new_game()
    return match


def determinize(observation: dict[str, Any], rng: random.Random, options: Mapping[str, Any] | None = None, *,
                match: bool = False) -> AegisGame | AegisMatch:
    """A full game state that ``observation`` (of some seat) is a view of.

    By default an :class:`AegisGame`: the current game, at the same decision
    point, whose ``observation(seat)`` equals ``observation`` (a match's view
    may be given: its match keys are ignored); the game can be played to its
    end. With ``match=True`` (a match's view), an :class:`AegisMatch` whose
    ``observation(seat)`` equals the whole view and that can be played to the
    end of the match: the past games exist only as their results, and later
    games are dealt from a fresh shoe seeded from ``rng``.

    The hidden cards are sampled as the comment above this function explains:
    the opponent's hand now is uniform among the possibilities (cards it
    played stay, none of a suit it did not follow), its discards are unseen
    cards, and the stock holds the seat's own draws at their positions. The
    opponent's discards are not read as hints (it is assumed to discard
    without regard to which cards they are).

    ``options`` are the rule options (``promise``); a match's view carries
    them, and by default they are taken from there. The state's ``events`` and
    ``actions`` start at this game's deal.
    """
    obs = observation
    me = obs["seat"]
    opp = 1 - me
    master = obs["master"]
    slave = 1 - master
    if options is None:
        options = obs.get("options")
    key = _CARD[obs["key_card"]]

    # the cards played, and the suits the opponent showed out of (RULES 2.6)
    mine_played = opp_played = opp_void = 0
    for t in obs["tricks"]:
        leader = t["leader"]
        lead, follow = _CARD[t["cards"][0]], _CARD[t["cards"][1]]
        if leader == me:
            mine_played |= 1 << lead
            opp_played |= 1 << follow
            if SUIT[follow] != SUIT[lead]:
                opp_void |= 1 << SUIT[lead]
        else:
            opp_played |= 1 << lead
            mine_played |= 1 << follow
    for leader, name in obs["trick"]:
        if leader == me:
            mine_played |= 1 << _CARD[name]
        else:
            opp_played |= 1 << _CARD[name]

    # the seat's own initial hand: undo the tricks, then its exchanges, last first
    mine = {x["round"]: ([_CARD[n] for n in x["discarded"]], [_CARD[n] for n in x["drawn"]])
            for x in obs["my_exchanges"]}
    hand = cards.mask_of(_CARD[n] for n in obs["hand"]) | mine_played
    mine_drawn = 0
    for discarded, drawn in reversed(list(mine.values())):
        drawn_mask = cards.mask_of(drawn)
        hand = hand & ~drawn_mask | cards.mask_of(discarded)
        mine_drawn |= drawn_mask
    my_initial = cards_of(hand)

    # the opponent's hand after the exchanges: its played cards and a sample of the unseen cards
    unseen = cards_of(cards.FULL_DECK_MASK ^ (1 << key | hand | mine_drawn | opp_played))
    allowed = [c for c in unseen if not opp_void >> SUIT[c] & 1]
    holding = rng.sample(allowed, HAND_SIZE - opp_played.bit_count())
    rest = cards_of(cards.mask_of(unseen) & ~cards.mask_of(holding))
    rng.shuffle(rest)
    opp_hand = cards_of(opp_played) + holding

    # its exchanges, last round first: a random k of its hand were that round's draw, k unseen cards its discard
    who = 0 if opp == master else 1
    counts = obs["exchanges"]
    opp_discards: dict[int, list[int]] = {}
    opp_draws: dict[int, list[int]] = {}
    for r in range(len(counts), 0, -1):
        k = counts[r - 1][who]
        if not k:
            continue
        drawn = rng.sample(opp_hand, k)
        discarded = [rest.pop() for _ in range(k)]
        opp_hand = [c for c in opp_hand if c not in drawn] + discarded
        opp_draws[r], opp_discards[r] = drawn, discarded

    # the deck order (RULES §3): the hands, the key card, the stock with every draw at its place
    stock: list[int] = []
    for r, pair in enumerate(counts, 1):
        for seat, k in zip((master, slave), pair):
            if k:
                stock += mine[r][1] if seat == me else opp_draws[r]
    stock += rest
    deck = [0] * 10
    deck[0 if me == slave else 1::2] = my_initial
    deck[0 if opp == slave else 1::2] = opp_hand
    deck = (*deck, key, *stock)

    if match:
        game_number = obs["game_number"]
        past = obs["games"][:game_number - 1]
        totals = obs["match_scores"]
        if len(obs["games"]) >= game_number:  # the match is over: its totals count this game
            totals = [t - p for t, p in zip(totals, obs["points"])]
        state: AegisGame | AegisMatch = _resume_match(
            options or {}, _PrimedShoe(rng.getrandbits(64), deck), _cards(obs["draw"]["cards"]), totals, past)
    else:
        state = AegisGame(master, deck, options, number=obs["game_number"])

    # replay: the exchanges, the declarations, the tricks
    def discard(r: int, seat: int) -> int:
        return EXCHANGE | cards.mask_of(mine[r][0] if seat == me else opp_discards.get(r, ()))

    for r, (_, slave_count) in enumerate(counts, 1):
        state.apply(master, discard(r, master))
        if slave_count is not None:
            state.apply(slave, discard(r, slave))
    if obs["exchange_end"] == "stop":
        state.apply(master, STOP)
    if obs["d_master"] is not None:
        state.apply(master, DECLARE + obs["d_master"])
    if obs["slave_passed"]:
        state.apply(slave, PASS)
    elif obs["d_slave"] is not None:
        state.apply(slave, DECLARE + obs["d_slave"])
    for t in obs["tricks"]:
        state.apply(t["leader"], _CARD[t["cards"][0]])
        state.apply(1 - t["leader"], _CARD[t["cards"][1]])
    for leader, name in obs["trick"]:
        state.apply(leader, _CARD[name])
    return state


def _cards(names: Sequence[str]) -> list[int]:
    return [_CARD[n] for n in names]
