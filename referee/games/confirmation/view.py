"""Confirmation at the table: what a seat, a spectator or the referee sees, event by event
(the ``table_view`` trait; see :mod:`referee.games.view`). Pure, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import Event
from referee.games.confirmation.rules import NUM_SEATS, TRICKS
from referee.games.view import Phrase, TableView, card, sorted_hand, suit


def _trump(data: Any, who: str, seats: Sequence[str]) -> str:
    how = f"the dealer's last card {data['card']}" if data["card"] is not None else "drawn at random"
    return f"trump {data['suit']} ({how})"


def _each(values: Sequence[Any], seats: Sequence[str], fmt: str = "{}") -> str:
    return ", ".join(f"{seats[s]} {fmt.format(values[s])}" for s in range(NUM_SEATS))


PHRASES: dict[str, Phrase] = {
    "round": lambda d, who, seats: f"round {d['round']}: {seats[d['dealer']]} deals",
    "deal": lambda d, who, seats: f"{who} is dealt {' '.join(sorted_hand(d))}",
    "trump": _trump,
    "bid": lambda d, who, seats: f"{who} bids {d}",
    "choice": lambda d, who, seats: f"{who}: {d['choice']} (confirmation phase {d['phase']})",
    "play": lambda d, who, seats: f"{who} plays {d}",
    "trick": lambda d, who, seats: f"trick {d}: {who} wins",
    "score": lambda d, who, seats: f"round {d['round']} scored: {_each(d['points'], seats, '{:+d}')}",
    "end": lambda d, who, seats: f"game over: {_each(d['scores'], seats)}",
}


class ConfirmationView(TableView):
    """A game of rounds: per round the dealer, the trump, the bids and choices, tricks and points."""
    PHRASES = PHRASES

    def __init__(self, seats: Sequence[str], options: Mapping[str, Any]):
        super().__init__(seats, options)
        self.round = 0
        self.dealer: int | None = None
        self.trump: str | None = None
        self.trump_card: str | None = None
        self.bids: list[int | None] = [None] * NUM_SEATS
        self.in_force: list[int | None] = [None] * NUM_SEATS
        self.choices: list[list[str]] = [[] for _ in range(NUM_SEATS)]
        self.totals = [0] * NUM_SEATS
        self.rows: list[list[Any]] = []

    def feed(self, event: Event) -> None:
        kind, data = event.kind, event.data
        if kind == "round":
            self.round, self.dealer = data["round"], data["dealer"]
            self.new_deal(TRICKS)
            self.bids = [None] * NUM_SEATS
            self.in_force = [None] * NUM_SEATS
            self.choices = [[] for _ in range(NUM_SEATS)]
        elif kind == "deal":
            self.hands[event.actor] = sorted_hand(data)
        elif kind == "trump":
            self.trump, self.trump_card = data["suit"], data["card"]
        elif kind == "bid":
            self.bids[event.actor] = self.in_force[event.actor] = data
        elif kind == "choice":
            self.choices[event.actor].append(data["choice"])
            if data["choice"].startswith("REVISE"):
                self.in_force[event.actor] = int(data["choice"].split()[1])
        elif kind == "play":
            self.play(event.actor, data)
        elif kind == "trick":
            self.won_trick(event.actor, data, f"round {self.round}, trick {data}")
        elif kind == "score":
            self.totals = list(data["totals"])
            self.rows.append([data["round"], self.seats[data["dealer"]], {"s": data["trump"]},
                              *(f"{data['final_bids'][s]}/{data['tricks'][s]} {data['points'][s]:+d} "
                                f"= {data['totals'][s]}" for s in range(NUM_SEATS))])

    def frame(self) -> dict[str, Any]:
        info: list[list[Any]] = [["round", [f"{self.round} of {self.options.get('rounds', '?')}"]]]
        if self.dealer is not None:
            info.append(["dealer", [self.seats[self.dealer]]])
        if self.trump is not None:
            info.append(["trump", [suit(self.trump)] + ([" (", card(self.trump_card), ")"] if self.trump_card else [])])
        seats = []
        for s in range(NUM_SEATS):
            tags = ["dealer"] if s == self.dealer else []
            if self.options.get("pairs"):
                tags.append(f"team {s % 2 + 1}")
            bid = "-" if self.bids[s] is None else str(self.bids[s])
            if self.in_force[s] is not None and self.in_force[s] != self.bids[s]:
                bid += f" → {self.in_force[s]}"
            seats.append(self.seat(s, tags, [("bid", bid), ("choices", " ".join(self.choices[s]) or "-"),
                                             ("tricks", str(self.won[s])), ("total", str(self.totals[s]))]))
        return {"chapter": f"round {self.round}", "info": info, "seats": seats, **self.trick_frame(),
                "rows": len(self.rows)}

    def score_table(self) -> dict[str, Any]:
        return {"title": "rounds (bid in force/tricks, points = total)",
                "headers": ["round", "dealer", "trump", *self.seats], "rows": self.rows}
