"""The interface every game implements, and what the games share.

A game is a pure state machine (as in OpenSpiel): who acts now, the legal
actions of a seat, apply an action, terminal, scores. What a seat may know is
built by the game's ``observation(seat)`` and ``visible_events(seat)``, the
one place per game where a seat's view is computed; the state itself is never
handed to a seat.

Actions are ints. Each game documents its encoding and provides
``action_name``/``parse_action``; ``legal_actions`` always returns them in
ascending order, the canonical order (its first element is the referee's
default when a seat must be played for).

Nothing here, nor in any game module, does I/O or imports grpc, asyncio or
protobuf.
"""

from __future__ import annotations

import json
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, NamedTuple

from referee import cards

# --- errors -----------------------------------------------------------------


class GameError(ValueError):
    """Base of the errors a game raises."""


class IllegalActionError(GameError):
    """An action the rules do not allow. ``rule`` names the RULES.md section."""

    def __init__(self, rule: str, message: str):
        super().__init__(f"{message} (rule {rule})")
        self.rule = rule
        self.reason = message


class NotYourTurnError(IllegalActionError):
    """A seat acted when it was not among the seats to act."""


class OptionError(GameError):
    """A rule option that does not exist or has a bad value."""


class ActionSyntaxError(GameError):
    """A string that does not spell an action of the game."""


# --- events -----------------------------------------------------------------

PUBLIC = -1


class Event(NamedTuple):
    """Something that happened. ``to`` is PUBLIC (-1) or the one seat that sees it.

    ``data`` is JSON-compatible (ints, strings, lists, dicts).
    """

    kind: str
    seat: int | None
    data: Any = None
    to: int = PUBLIC

    @property
    def actor(self) -> int:
        """The seat of an event a seat is named in (a deal to it, a bid, a play, a trick won): what a
        log or a view of such an event reads; a ValueError for an event that names no seat."""
        if self.seat is None:
            raise ValueError(f"event {self.kind!r} names no seat")
        return self.seat


# --- the randomness a match consumes ----------------------------------------


class Shoe:
    """Every random draw of a match: from a seed, or replayed from a record.

    A match asks for whole deck orders (RULES.md §3 turns one into a deal) and,
    for options that need one, a suit drawn uniformly. What was drawn is kept
    in ``decks`` and ``suits`` so that a record can replay it exactly.
    """

    def __init__(self, seed: int | None = None, decks: Sequence[Sequence[int]] | None = None,
                 suits: Sequence[int] | None = None):
        self.seed = seed
        self._replay = decks is not None
        self._rng = random.Random(seed)
        self._recorded_decks = [cards.check_deck(d) for d in decks] if decks is not None else []
        self._recorded_suits = list(suits or [])
        self.decks: list[tuple[int, ...]] = []
        self.suits: list[int] = []

    def deck(self) -> tuple[int, ...]:
        if self._replay:
            if len(self.decks) >= len(self._recorded_decks):
                raise GameError(f"the record holds {len(self._recorded_decks)} deck order(s); "
                                f"the game needs deck #{len(self.decks) + 1}")
            order = self._recorded_decks[len(self.decks)]
        else:
            order = tuple(cards.shuffled_deck(self._rng))
        self.decks.append(order)
        return order

    def suit(self) -> int:
        if self._replay:
            if len(self.suits) >= len(self._recorded_suits):
                raise GameError(f"the record holds {len(self._recorded_suits)} drawn suit(s); "
                                f"the game needs suit #{len(self.suits) + 1}")
            s = self._recorded_suits[len(self.suits)]
            if s not in range(4):
                raise GameError(f"recorded suit #{len(self.suits) + 1} is not a suit: {s!r}")
        else:
            s = self._rng.randrange(4)
        self.suits.append(s)
        return s


class PrimedShoe(Shoe):
    """A shoe whose next deck (and suit) are given; later ones are shuffled from ``seed``.

    A determinized state (for search bots) deals its current deal from the
    primed deck and the deals after it at random."""

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


# --- options ----------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One rule option: its default and how to check a value."""

    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None

    def check(self, key: str, value: Any, from_text: bool = False) -> Any:
        """The checked value. ``from_text``: the value was written as text (a command line's
        ``-o double=no``, the protocol's string map) and may spell a boolean or an integer; a typed
        source (a record's JSON, a tournament file) must give the type itself."""
        kind = type(self.default)
        if kind is bool:
            if from_text and isinstance(value, str) and value.lower() in _BOOLEAN_WORDS:
                value = _BOOLEAN_WORDS[value.lower()]
            if not isinstance(value, bool):
                raise OptionError(f"option {key!r} must be true or false, got {value!r}")
        elif kind is int:
            if from_text and isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,18}", value.strip()):
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise OptionError(f"option {key!r} must be an integer, got {value!r}")
            if self.minimum is not None and value < self.minimum:
                raise OptionError(f"option {key!r} must be at least {self.minimum}, got {value}")
        elif not isinstance(value, kind):
            raise OptionError(f"option {key!r} must be a {kind.__name__}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise OptionError(f"option {key!r} must be one of {allowed}, got {value!r}")
        return value


_BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False,
                  "0": False}


def check_options(game: str, schema: Mapping[str, Option], given: Mapping[str, Any] | None,
                  from_text: bool = False) -> dict[str, Any]:
    """Every option of the schema, with the given values checked and defaults filled in
    (``from_text``: see :meth:`Option.check`)."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(schema))
    if unknown:
        raise OptionError(f"{game} has no option {', '.join(map(repr, unknown))} "
                          f"(its options: {', '.join(schema)})")
    return {key: opt.check(key, given[key], from_text) if key in given else opt.default
            for key, opt in schema.items()}


# --- the state interface ----------------------------------------------------


class GameState(ABC):
    """A game (or match) in progress. Subclasses hold the rules."""

    #: the game's name in the registry
    game: ClassVar[str]
    num_seats: int
    #: the checked rule options (every option of the game, defaults filled in)
    options: dict[str, Any]
    #: the randomness drawn so far (deck orders, suits), for records
    shoe: Shoe
    #: everything that happened, in order; a seat sees those with to == PUBLIC or to == seat
    events: list[Event]
    #: every action applied, in order, as (seat, action)
    actions: list[tuple[int, int]]

    @abstractmethod
    def to_act(self) -> tuple[int, ...]:
        """The seats that must act now, ascending; () when the game is over.

        More than one seat means a simultaneous decision: each acts without
        seeing the others' choices, which are revealed once all are in.
        """

    @abstractmethod
    def legal_actions(self, seat: int) -> list[int]:
        """All legal actions of ``seat``, ascending (the canonical order); [] if it need not act."""

    @abstractmethod
    def apply(self, seat: int, action: int) -> None:
        """Play ``action`` for ``seat``; raises IllegalActionError naming the rule broken."""

    @abstractmethod
    def observation(self, seat: int) -> dict[str, Any]:
        """All that ``seat`` may know now, and nothing else (JSON-compatible)."""

    @abstractmethod
    def scores(self) -> list[int]:
        """Each seat's points so far (the final scores once terminal)."""

    @staticmethod
    @abstractmethod
    def action_name(action: int) -> str:
        """The action's notation, e.g. 'AS', 'BID 3'."""

    @staticmethod
    @abstractmethod
    def parse_action(text: str) -> int:
        """The inverse of action_name; raises ActionSyntaxError."""

    def is_terminal(self) -> bool:
        return not self.to_act()

    def placing(self) -> list[int]:
        """1-based place of each seat by score; equal scores share a place."""
        return places_by_score(self.scores())

    def visible_events(self, seat: int, start: int = 0) -> list[Event]:
        """The events from index ``start`` on that ``seat`` may see."""
        return [e for e in self.events[start:] if e.to == PUBLIC or e.to == seat]

    def public_events(self, start: int = 0) -> list[Event]:
        return [e for e in self.events[start:] if e.to == PUBLIC]

    def results(self) -> dict[str, Any]:
        """Scores and placing, plus whatever the game adds (JSON-compatible)."""
        return {"scores": self.scores(), "placing": self.placing()}

    def apply_name(self, seat: int, text: str) -> None:
        self.apply(seat, self.parse_action(text))

    def action_names(self, actions: Sequence[int]) -> list[str]:
        """The notation of each action (an engine may name a whole legal list faster)."""
        return [self.action_name(a) for a in actions]

    def legal_action_names(self, seat: int) -> list[str]:
        return self.action_names(self.legal_actions(seat))


def places_by_score(scores: Sequence[int]) -> list[int]:
    """Competition ranking: [10, 30, 10, 5] -> [2, 1, 2, 4]."""
    return [1 + sum(other > s for other in scores) for s in scores]


# --- playing a game out -----------------------------------------------------

#: ``choose(state, seat)``: the action ``seat`` plays now
Choose = Callable[[GameState, int], int]


def play_out(state: GameState, choose: Choose, limit: int | None = None) -> int:
    """Play ``state`` to its end (or until ``limit`` decisions), ``choose`` deciding for every
    seat; returns the number of decisions made.

    A simultaneous decision is played in seat order: each seat's action is
    applied (the engine keeps it hidden) before the next seat chooses.
    """
    to_act, apply = state.to_act, state.apply
    n = 0
    while seats := to_act():
        for seat in seats:
            if n == limit:
                return n
            apply(seat, choose(state, seat))
            n += 1
    return n


def random_legal(rng: random.Random) -> Choose:
    """A ``choose`` for :func:`play_out`: a uniformly random legal action (one ``rng.choice`` each)."""
    choice = rng.choice
    return lambda state, seat: choice(state.legal_actions(seat))


def first_legal(state: GameState, seat: int) -> int:
    """A ``choose`` for :func:`play_out`: the first legal action (the referee's default)."""
    return state.legal_actions(seat)[0]


# --- the registry entry -----------------------------------------------------


class RatedBy(StrEnum):
    """What ranks the seats of a finished match for the ratings (each pair of seats is one
    pairwise game: the better one wins, equal is a draw)."""

    #: the match's placing (``results()["placing"]``): Aegis, where the match winner wins
    PLACING = "placing"
    #: the final scores: Confirmation, every pair of seats compared by points
    SCORE = "score"


#: ``seat_groups(bots, options, max_groups, apart=None) -> (groups, note)``: see :attr:`GameSpec.seat_groups`
SeatGroups = Callable[..., tuple[list[tuple[str, ...]], str]]
#: ``apart(bots) -> bool``: whether these bots may sit at one table (a scheduler's rule: team-mates may not)
Apart = Callable[[Sequence[str]], bool]
#: ``hidden_cards(state, seat)``: see :attr:`GameSpec.hidden_cards`
HiddenCards = Callable[[Any, int], Iterable[int]]  # Any: the game's own state class


def no_results_detail(results: Mapping[str, Any], seats: Sequence[str]) -> list[str]:
    """A game with nothing to show beyond the final scores."""
    return []


def events_text(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    """One line per event: its kind, its seat, to whom, its data as JSON (any game's log)."""
    for e in events:
        who = f" {seats[e.seat]}" if e.seat is not None else ""
        to = "" if e.to == PUBLIC else f" (to {seats[e.to]})"
        yield f"{e.kind}{who}{to}: {json.dumps(e.data)}"


def generic_table_view(seats: Sequence[str], options: Mapping[str, Any]) -> Any:
    """The table view of a game without one of its own (:class:`referee.games.view.TableView`)."""
    from referee.games.view import TableView  # late: referee.games.view imports this module

    return TableView(seats, options)


@dataclass(frozen=True)
class TypedForm:
    """A game's data in the shape of its typed protocol messages (the ``typed`` trait).

    The engine's observation, event data and results are JSON-compatible values; the protocol
    also carries them as messages (``ConfirmationObservation``, ``AegisEvent``...; docs/protocol.md
    §9, §10). Each function here takes the plain value and gives plain values shaped as the
    message: a dict of its fields' values, nested dicts and lists for nested messages, None for an
    absent field (no protobuf here: ``referee/play/wire.py`` builds the message from them). The mapping
    follows the protocol's rules (the proto's "Game data, typed"), which tests/test_typed.py checks
    in reverse on every message of random games.
    """

    #: the observation -> the fields of the game's observation message
    observation: Callable[[Mapping[str, Any]], dict[str, Any]]
    #: (an event's kind, its data) -> the fields of the game's event message (one: the kind's)
    event: Callable[[str, Any], dict[str, Any]]
    #: the results -> the fields of the game's results message (scores, placing and faults are the
    #: GameEnd's own)
    results: Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class GameSpec:
    """What the registry knows of a game: how to start one, its options, and its traits:
    everything the referee, the tournaments and the reports need to know of a game
    (as OpenSpiel's GameType/GameInfo), so that no code outside ``referee/games``
    asks for a game by name."""

    name: str
    #: the name in prose (error messages)
    title: str
    num_seats: int
    options: Mapping[str, Option]
    #: (checked options, shoe) -> a new match
    new_match: Callable[[dict[str, Any], Shoe], GameState]
    #: card-free, option-free notation helpers
    action_name: Callable[[int], str]
    parse_action: Callable[[str], int]
    #: duplicate play: the base line-ups of a tournament of ``bots`` (``max_groups`` at most where
    #: there is a choice) and a sentence on how they were chosen; each base line-up is played on
    #: every deal set in each of its distinct seat rotations (``tournament.schedule``). With
    #: ``apart`` (an :data:`Apart`), only tables whose bots it accepts, chosen among those before any
    #: balanced subset: a line-up of bots that may not sit together is never given
    seat_groups: SeatGroups
    #: the gauntlet's "duel" schedule in a sentence, ``{n}`` the number of baselines (each baseline
    #: with the candidate is seated as ``seat_groups`` seats two bots)
    duel_note: str
    #: what ranks the seats of a match for the ratings
    rated_by: RatedBy
    #: the cards of the deal in play (the shoe's last deck) whose place ``seat`` may not know now (RULES
    #: §4): the conformance check swaps two of them and expects the seat's view unchanged
    #: (``referee/games/conformance.py``); a game that hides no card gives none
    hidden_cards: HiddenCards
    #: the seat-bias table: the heading of its column of first places, and how the seats differ
    first_place_label: str = "first place %"
    seat_order: str = "by seat index"
    #: text: the lines of the match log from its events (the referee's view) ...
    render_log: Callable[[Sequence[Event], Sequence[str]], Iterator[str]] = events_text
    #: ... and the game's detail of a finished match's results (the final scores follow it)
    render_results: Callable[[Mapping[str, Any], Sequence[str]], list[str]] = no_results_detail
    #: HTML: ``table_view(seats, options)`` follows a match event by event as one viewer sees it and
    #: says what the table shows (a :class:`referee.games.view.TableView`; ``referee/view`` renders it)
    table_view: Callable[[Sequence[str], Mapping[str, Any]], Any] = generic_table_view
    #: the protocol's typed messages: the game's data shaped as them (the oneof field of
    #: DecisionRequest, GameEvent and GameEnd named as the game holds them); None: JSON only
    typed: TypedForm | None = None
    summary: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def check_options(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """Typed option values (a record, a tournament file, code) checked, defaults filled in."""
        return check_options(self.name, self.options, given)

    def parse_options(self, given: Mapping[str, str] | None) -> dict[str, Any]:
        """Option values written as text (``-o rounds=1``, the protocol's string map) checked."""
        return check_options(self.name, self.options, given, from_text=True)

    def new(self, options: Mapping[str, Any] | None = None, seed: int | None = None,
            decks: Sequence[Sequence[int]] | None = None, suits: Sequence[int] | None = None) -> GameState:
        """A new match from a seed, or from explicit deck orders (and drawn suits)."""
        return self.new_match(self.check_options(options), Shoe(seed, decks, suits))
