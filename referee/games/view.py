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

from collections.abc import Iterable, Mapping, Sequence
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


class TableView:
    """The generic view: seats and names, every event as its JSON line (a game without a view of
    its own). Games subclass it; :meth:`feed` takes the events in order."""

    def __init__(self, seats: Sequence[str], options: Mapping[str, Any]):
        self.seats = list(seats)
        self.options = dict(options)

    def feed(self, event: Event) -> None:
        """Take the next event the viewer sees."""

    def describe(self, event: Event) -> str | None:
        """The event as one line of the match's story (None: nothing to say)."""
        return next(events_text([event], self.seats))

    def frame(self) -> dict[str, Any]:
        return {"chapter": "", "trick": None, "info": [], "seats": [self.seat(s) for s in range(len(self.seats))],
                "on_table": None, "last_trick": None, "rows": 0}

    def seat(self, seat: int, hand: list[str] | None = None, count: int = 0, tags: Sequence[str] = (),
             stats: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
        return {"tags": list(tags), "hand": None if hand is None else list(hand), "count": count, "stats": [list(s) for s in stats]}

    def score_table(self) -> dict[str, Any]:
        """The scores as a table, a row per round or game so far: ``{"title", "headers", "rows"}``."""
        return {"title": "", "headers": [], "rows": []}
