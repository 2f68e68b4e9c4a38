"""One game of Aegis (one deal), RULES.md 2.1-2.7: the state machine (pure rules, no I/O).

Deck orders become deals by RULES.md §3: deck cards 0..9 go alternately to
slave and master, the slave first (slave 0, 2, 4, 6, 8; master 1, 3, 5, 7, 9);
card 10 is the key card; the stock is cards 11..51, card 11 on top.

``legal_actions(seat)`` lists actions (``notation.py``) in ascending int order: at an exchange
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
:meth:`~referee.games.aegis.match.AegisMatch.observation`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from referee import cards
from referee.cards import NAMES, RANK, SUIT, SUIT_MASK, cards_of, suit_cards
from referee.games.aegis.notation import (
    DECLARE,
    EXCHANGE,
    HAND_SIZE,
    MAX_DECLARATION,
    PASS,
    STOP,
    action_name,
    action_names,
    describe,
    parse_action,
)
from referee.games.base import (
    Event,
    GameState,
    IllegalActionError,
    NotYourTurnError,
    Option,
    Shoe,
    check_options,
)

NUM_TRICKS = 5
MAX_EXCHANGES = 4
STOCK_SIZE = 52 - 2 * HAND_SIZE - 1  # 41

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


def card_names(card_list: Iterable[int]) -> list[str]:
    """Cards leave the engine in the rule book's notation (observations, events, results)."""
    return [NAMES[c] for c in card_list]


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
        self.events.append(Event("hand", self.slave, {"game": number, "cards": card_names(sorted(slave_hand))},
                                 self.slave))
        self.events.append(Event("hand", master, {"game": number, "cards": card_names(sorted(master_hand))}, master))

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
        # DECLARE_SLAVE: the master has declared
        assert self.d_master is not None
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
                                            f"of its hand, not {describe(action)}")
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
                                            f"not {describe(action)}")
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
                                                f"declare DECLARE {floor}..5, not {describe(action)}")
            if action == PASS:
                raise IllegalActionError("2.5", f"the master may not pass; it must declare "
                                                f"DECLARE {floor}..5")
            raise IllegalActionError("2.5", f"the master must declare now (DECLARE {floor}..5), "
                                            f"not {describe(action)}")
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
        assert d_m is not None  # the slave answers the master's declaration
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
                                            f"not {describe(action)}")
        self.events.append(Event("attacker", self.attacker, {
            "attacker": self.attacker, "role": self._role(self.attacker), "d": self.d}))
        self.phase = PLAY
        self.leader = self.turn = self.master

    # -- trick play (RULES 2.6) --

    def _play(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        if not 0 <= card < 52:
            raise IllegalActionError("2.6", f"in trick play a seat plays a card of its hand, "
                                            f"not {describe(card)}")
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
        d, d_m = self.d, self.d_master
        # the last trick is played after the declarations, which chose the attacker and its d
        assert attacker is not None and d is not None and d_m is not None
        defender = 1 - attacker
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
            "my_exchanges": [{"round": x["round"], "discarded": card_names(x["discarded"]),
                              "drawn": card_names(x["drawn"])} for x in self.own_exchanges[seat]],
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
            "result": None if self.result is None else copy_result(self.result),
        }

    # -- helpers --

    def _role(self, seat: int) -> str:
        return MASTER if seat == self.master else SLAVE

    def _rule(self) -> str:
        return ("2.4", "2.4", "2.5", "2.5", "2.6", "2.6")[self.phase]


def copy_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a game's result that shares nothing mutable with it (its lists are these three)."""
    out = dict(result)
    out["exchanges"] = [list(x) for x in result["exchanges"]]
    out["tricks"] = list(result["tricks"])
    out["points"] = list(result["points"])
    return out
