"""Aegis at the table: what a seat, a spectator or the referee sees, event by event
(the ``table_view`` trait; see :mod:`referee.games.view`). Pure, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.aegis.notation import HAND_SIZE
from referee.games.base import Event
from referee.games.view import TableView, card, sorted_hand, suit, trick_of


class AegisView(TableView):
    def __init__(self, seats: Sequence[str], options: Mapping[str, Any]):
        super().__init__(seats, options)
        self.game = 0
        self.deal: dict[str, Any] | None = None
        self.hands: list[list[str] | None] = [None, None]
        self.counts = [0, 0]
        self.exchanged = [0, 0]
        self.stock = 0
        self.e: int | None = None
        self.declared: list[str] = ["-", "-"]
        self.attacker: dict[str, Any] | None = None
        self.won = [0, 0]
        self.plays: list[tuple[int, str]] = []
        self.trick_winner: int | None = None
        self.trick_no = 0
        self.last_trick: dict[str, Any] | None = None
        self.totals = [0, 0]
        self.rows: list[list[Any]] = []
        self.winner: int | None = None

    def feed(self, event: Event) -> None:
        kind, data, seat = event.kind, event.data, event.seat
        if kind == "deal":
            self.game, self.deal, self.stock = data["game"], data, data["stock_size"]
            self.hands, self.counts, self.exchanged = [None, None], [HAND_SIZE, HAND_SIZE], [0, 0]
            self.e, self.declared, self.attacker, self.won = None, ["-", "-"], None, [0, 0]
            self.plays, self.trick_winner, self.trick_no = [], None, 0
        elif kind == "hand":
            self.hands[seat] = sorted_hand(data["cards"])
        elif kind == "exchange":
            self.exchanged[seat] += data["count"]
            self.stock -= data["count"]
        elif kind == "exchange_cards":
            hand = self.hands[seat]
            if hand is not None:
                kept = [c for c in hand if c not in data["discarded"]]
                self.hands[seat] = sorted_hand(kept + data["drawn"])
        elif kind == "exchange_end":
            self.e = data["e"]
        elif kind == "declare":
            self.declared[seat] = str(data["d"])
        elif kind == "pass":
            self.declared[seat] = "pass"
        elif kind == "attacker":
            self.attacker = data
        elif kind == "play":
            if self.trick_winner is not None:
                self.plays, self.trick_winner = [], None
            self.plays.append((seat, data["card"]))
            self.counts[seat] -= 1
            hand = self.hands[seat]
            if hand is not None and data["card"] in hand:
                hand.remove(data["card"])
        elif kind == "trick":
            self.trick_no, self.trick_winner = data["trick"], seat
            self.won[seat] += 1
            self.last_trick = trick_of(f"game {self.game}, trick {data['trick']}", self.plays, seat)
        elif kind == "game_end":
            self.totals = [self.totals[0] + data["points"][0], self.totals[1] + data["points"][1]]
            outcome = "makes it" if data["attacker_won"] else "fails"
            bonus = [name for name in ("promise", "conquest", "save") if data[name]]
            self.rows.append([data["game"], self.seats[data["master"]], {"c": data["key_card"]},
                              f"{self.seats[data['attacker']]} ({data['d']})",
                              f"{data['attacker_tricks']}: {outcome}" + (f" ({', '.join(bonus)})" if bonus else ""),
                              f"{data['points'][0]}-{data['points'][1]}", f"{self.totals[0]}-{self.totals[1]}"])
        elif kind == "match_end":
            self.winner = seat

    def describe(self, event: Event) -> str | None:
        kind, data, seats = event.kind, event.data, self.seats
        who = seats[event.seat] if event.seat is not None else ""
        if kind == "master_draw":
            c0, c1 = data["cards"]
            return f"draw for master: {seats[0]} {c0}, {seats[1]} {c1}: {seats[data['master']]} is master"
        if kind == "deal":
            return (f"game {data['game']}: master {seats[data['master']]}, key card {data['key_card']} "
                    f"(trump {data['trump']}, killers {' '.join(data['killers'])})")
        if kind == "hand":
            return f"{who} holds {' '.join(sorted_hand(data['cards']))}"
        if kind == "stop":
            return f"exchange round {data['round']}: {who} (master) stops"
        if kind == "exchange":
            count = "declines" if data["count"] == 0 else f"exchanges {data['count']}"
            return f"exchange round {data['round']}: {who} ({data['role']}) {count}"
        if kind == "exchange_cards":
            return f"{who} discards {' '.join(data['discarded'])}, draws {' '.join(data['drawn'])}"
        if kind == "exchange_end":
            how = "the master stopped" if data["by"] == "stop" else "after 4 rounds"
            return f"exchanges over ({how}): e = {data['e']}"
        if kind == "declare":
            return f"{who} ({data['role']}) declares {data['d']}"
        if kind == "pass":
            return f"{who} ({data['role']}) passes"
        if kind == "attacker":
            return f"attacker: {who} ({data['role']}), needs {data['d']} tricks"
        if kind == "play":
            return f"{who} plays {data['card']}"
        if kind == "trick":
            return f"trick {data['trick']}: {who} wins"
        if kind == "game_end":
            outcome = "makes it" if data["attacker_won"] else "fails"
            return (f"game {data['game']}: attacker {seats[data['attacker']]} took {data['attacker_tricks']} "
                    f"of {data['d']} and {outcome}; points {data['points'][0]}-{data['points'][1]}")
        if kind == "match_end":
            return f"match over after {data['games']} games: {who} wins ({data['ended_by']})"
        return super().describe(event)

    def frame(self) -> dict[str, Any]:
        info: list[list[Any]] = [["game", [str(self.game)]]]
        d = self.deal
        if d is not None:
            info += [["master", [self.seats[d["master"]]]],
                     ["key card", [card(d["key_card"]), " (trump ", suit(d["trump"]), ")"]],
                     ["killers", [card(k) for k in d["killers"]]],
                     ["stock", [f"{self.stock} cards" + ("" if self.e is None else f"; e = {self.e}")]]]
        if self.attacker is not None:
            info.append(["attacker", [f"{self.seats[self.attacker['attacker']]} needs {self.attacker['d']}"]])
        if self.winner is not None:
            info.append(["match won by", [self.seats[self.winner]]])
        seats = []
        for s in range(2):
            tags = [] if d is None else ["master" if s == d["master"] else "slave"]
            stats = [("exchanged", str(self.exchanged[s])), ("declared", self.declared[s]),
                     ("tricks", str(self.won[s])), ("total", str(self.totals[s]))]
            seats.append(self.seat(s, self.hands[s], self.counts[s], tags, stats))
        number = self.trick_no if self.trick_winner is not None else self.trick_no + 1
        return {"chapter": f"game {self.game}", "trick": number if self.plays else None, "info": info,
                "seats": seats, "on_table": trick_of(f"trick {number}", self.plays, self.trick_winner),
                "last_trick": self.last_trick, "rows": len(self.rows)}

    def score_table(self) -> dict[str, Any]:
        return {"title": "games (attacker (tricks needed), tricks taken)",
                "headers": ["game", "master", "key", "attacker", "tricks", "points", "totals"], "rows": self.rows}
