"""What the games' table views share (pure, no I/O).

A game's table view (the ``table_view`` trait of its spec) follows a match one
event at a time, as a seat, a spectator or the referee sees it, and says what
a table would show: the seats with their hands, the trick on the table, the
scores. It is fed only the events its viewer may see (a seat: the public ones
and its own; a spectator: the public ones; the referee: all), so a hidden card
it was never told of cannot appear in what it shows.

A frame (:meth:`TableView.frame`) is JSON for ``referee/view``'s one renderer,
the same for every game:

- ``chapter`` (``"round 2"``, ``"game 3"``) and ``trick`` (its number, or None): where
  the match is, for the viewer's jumps;
- ``info``: ``[label, parts]`` pairs; a part is a string, ``{"c": "AS"}`` (a card) or
  ``{"s": "H"}`` (a suit);
- ``seats``: per seat ``tags`` (dealer, master...), ``hand`` (card names, or None when
  hidden), ``count`` (cards held) and ``stats`` (``[label, text]``);
- ``on_table``: the trick being played, ``{"label", "cards": [[seat, card]], "winner"}``;
- ``last_trick``: the last trick won (its label, cards and winner), or None;
- ``rows``: how many rows of the score table (:meth:`TableView.score_table`) are filled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from referee import cards
from referee.games.base import Event, events_text

Part = str | dict[str, str]


def card(name: str) -> dict[str, str]:
    return {"c": name}


def suit(letter: str) -> dict[str, str]:
    return {"s": letter}


def sorted_hand(names: Iterable[str]) -> list[str]:
    """Card names by suit (S H D C), high cards first."""
    return sorted(names, key=lambda n: (cards.SUITS.index(n[-1]), -cards.RANKS.index(n[0])))


def trick_of(label: str, plays: Sequence[tuple[int, str]], winner: int | None) -> dict[str, Any]:
    return {"label": label, "cards": [list(p) for p in plays], "winner": winner}


#: ``phrase(data, who, seats)``: one kind of event as a line of the story (see TableView.PHRASES)
Phrase = Callable[[Any, str, Sequence[str]], str]


class TableView:
    """The generic view: seats and names, every event as its JSON line (a game without a view of
    its own). Games subclass it: :meth:`feed` takes the events in order; the hands, the trick on
    the table and the last trick won are kept here (:meth:`new_deal`, :meth:`play`, :meth:`won`),
    the rest by the game; ``PHRASES`` maps an event's kind to its line."""

    PHRASES: Mapping[str, Phrase] = {}

    def __init__(self, seats: Sequence[str], options: Mapping[str, Any]):
        self.seats = list(seats)
        self.options = dict(options)
        self.new_deal(0)
        self.last_trick: dict[str, Any] | None = None

    def feed(self, event: Event) -> None:
        """Take the next event the viewer sees."""

    def describe(self, event: Event) -> str | None:
        """The event as one line of the match's story (None: nothing to say)."""
        phrase = self.PHRASES.get(event.kind)
        if phrase is None:
            return next(events_text([event], self.seats))
        return phrase(event.data, self.seats[event.seat] if event.seat is not None else "", self.seats)

    # --- the cards: hands, the trick on the table, the last trick won --------------------

    def new_deal(self, hand_size: int) -> None:
        """A new deal: hands unknown until the viewer is shown one, ``hand_size`` cards each."""
        n = len(self.seats)
        self.hands: list[list[str] | None] = [None] * n
        self.counts = [hand_size] * n
        self.won = [0] * n
        self.plays: list[tuple[int, str]] = []
        self.trick_winner: int | None = None
        self.trick_no = 0

    def play(self, seat: int, name: str) -> None:
        if self.trick_winner is not None:  # the last trick leaves the table
            self.plays, self.trick_winner = [], None
        self.plays.append((seat, name))
        self.counts[seat] -= 1
        hand = self.hands[seat]
        if hand is not None and name in hand:
            hand.remove(name)

    def won_trick(self, seat: int, number: int, label: str) -> None:
        self.trick_no, self.trick_winner = number, seat
        self.won[seat] += 1
        self.last_trick = trick_of(label, self.plays, seat)

    def trick_frame(self) -> dict[str, Any]:
        """The frame's ``trick``, ``on_table`` and ``last_trick``."""
        number = self.trick_no if self.trick_winner is not None else self.trick_no + 1
        return {"trick": number if self.plays else None,
                "on_table": trick_of(f"trick {number}", self.plays, self.trick_winner), "last_trick": self.last_trick}

    # --- the frame ------------------------------------------------------------------------

    def frame(self) -> dict[str, Any]:
        return {"chapter": "", "info": [], "seats": [self.seat(s) for s in range(len(self.seats))],
                **self.trick_frame(), "rows": 0}

    def seat(self, seat: int, tags: Sequence[str] = (), stats: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
        """A seat of the frame: its tags and stats, and its hand (None when hidden) and count."""
        hand = self.hands[seat]
        return {"tags": list(tags), "hand": None if hand is None else list(hand), "count": self.counts[seat],
                "stats": [list(s) for s in stats]}

    def score_table(self) -> dict[str, Any]:
        """The scores as a table, a row per round or game so far: ``{"title", "headers", "rows"}``."""
        return {"title": "", "headers": [], "rows": []}
