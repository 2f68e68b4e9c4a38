"""Confirmation at the table: what a seat, a spectator or the referee sees, event by event
(the ``table_view`` trait; see :mod:`referee.games.view`). Pure, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import Event
from referee.games.confirmation.rules import NUM_SEATS, TRICKS
from referee.games.view import TableView, card, sorted_hand, suit, trick_of


class ConfirmationView(TableView):
    def __init__(self, seats: Sequence[str], options: Mapping[str, Any]):
        super().__init__(seats, options)
        self.round = 0
        self.dealer: int | None = None
        self.trump: str | None = None
        self.trump_card: str | None = None
        self.hands: list[list[str] | None] = [None] * NUM_SEATS
        self.counts = [0] * NUM_SEATS
        self.bids: list[int | None] = [None] * NUM_SEATS
        self.in_force: list[int | None] = [None] * NUM_SEATS
        self.choices: list[list[str]] = [[] for _ in range(NUM_SEATS)]
        self.won = [0] * NUM_SEATS
        self.plays: list[tuple[int, str]] = []
        self.trick_winner: int | None = None
        self.trick_no = 0
        self.last_trick: dict[str, Any] | None = None
        self.totals = [0] * NUM_SEATS
        self.rows: list[list[Any]] = []

    def feed(self, event: Event) -> None:
        kind, data, seat = event.kind, event.data, event.seat
        if kind == "round":
            self.round, self.dealer = data["round"], data["dealer"]
            self.hands = [None] * NUM_SEATS
            self.counts = [TRICKS] * NUM_SEATS
            self.bids = [None] * NUM_SEATS
            self.in_force = [None] * NUM_SEATS
            self.choices = [[] for _ in range(NUM_SEATS)]
            self.won = [0] * NUM_SEATS
            self.plays, self.trick_winner, self.trick_no = [], None, 0
        elif kind == "deal":
            self.hands[seat] = sorted_hand(data)
        elif kind == "trump":
            self.trump, self.trump_card = data["suit"], data["card"]
        elif kind == "bid":
            self.bids[seat] = self.in_force[seat] = data
        elif kind == "choice":
            self.choices[seat].append(data["choice"])
            if data["choice"].startswith("REVISE"):
                self.in_force[seat] = int(data["choice"].split()[1])
        elif kind == "play":
            if self.trick_winner is not None:
                self.plays, self.trick_winner = [], None
            self.plays.append((seat, data))
            self.counts[seat] -= 1
            hand = self.hands[seat]
            if hand is not None and data in hand:
                hand.remove(data)
        elif kind == "trick":
            self.trick_no, self.trick_winner = data, seat
            self.won[seat] += 1
            self.last_trick = trick_of(f"round {self.round}, trick {data}", self.plays, seat)
        elif kind == "score":
            self.totals = list(data["totals"])
            self.rows.append([data["round"], self.seats[data["dealer"]], {"s": data["trump"]},
                              *(f"{data['final_bids'][s]}/{data['tricks'][s]} {data['points'][s]:+d} "
                                f"= {data['totals'][s]}" for s in range(NUM_SEATS))])

    def describe(self, event: Event) -> str | None:
        kind, data, seats = event.kind, event.data, self.seats
        who = seats[event.seat] if event.seat is not None else ""
        if kind == "round":
            return f"round {data['round']}: {seats[data['dealer']]} deals"
        if kind == "deal":
            return f"{who} is dealt {' '.join(sorted_hand(data))}"
        if kind == "trump":
            how = f"the dealer's last card {data['card']}" if data["card"] is not None else "drawn at random"
            return f"trump {data['suit']} ({how})"
        if kind == "bid":
            return f"{who} bids {data}"
        if kind == "choice":
            return f"{who}: {data['choice']} (confirmation phase {data['phase']})"
        if kind == "play":
            return f"{who} plays {data}"
        if kind == "trick":
            return f"trick {data}: {who} wins"
        if kind == "score":
            return (f"round {data['round']} scored: "
                    + ", ".join(f"{seats[s]} {data['points'][s]:+d}" for s in range(NUM_SEATS)))
        if kind == "end":
            return "game over: " + ", ".join(f"{seats[s]} {data['scores'][s]}" for s in range(NUM_SEATS))
        return super().describe(event)

    def frame(self) -> dict[str, Any]:
        info: list[list[Any]] = [["round", [f"{self.round} of {self.options.get('rounds', '?')}"]]]
        if self.dealer is not None:
            info.append(["dealer", [self.seats[self.dealer]]])
        if self.trump is not None:
            info.append(["trump", [suit(self.trump)] + ([" (", card(self.trump_card), ")"] if self.trump_card else [])])
        teams = self.options.get("pairs")
        seats = []
        for s in range(NUM_SEATS):
            tags = ["dealer"] if s == self.dealer else []
            if teams:
                tags.append(f"team {s % 2 + 1}")
            bid = "-" if self.bids[s] is None else str(self.bids[s])
            if self.in_force[s] is not None and self.in_force[s] != self.bids[s]:
                bid += f" → {self.in_force[s]}"
            stats = [("bid", bid), ("choices", " ".join(self.choices[s]) or "-"), ("tricks", str(self.won[s])),
                     ("total", str(self.totals[s]))]
            seats.append(self.seat(s, self.hands[s], self.counts[s], tags, stats))
        number = self.trick_no if self.trick_winner is not None else self.trick_no + 1
        return {"chapter": f"round {self.round}", "trick": number if self.plays else None, "info": info,
                "seats": seats, "on_table": trick_of(f"trick {number}", self.plays, self.trick_winner),
                "last_trick": self.last_trick, "rows": len(self.rows)}

    def score_table(self) -> dict[str, Any]:
        return {"title": "rounds (bid in force/tricks, points = total)",
                "headers": ["round", "dealer", "trump", *self.seats], "rows": self.rows}
