"""Aegis at the table: what a seat, a spectator or the referee sees, event by event
(the ``table_view`` trait; see :mod:`referee.games.view`). Pure, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.aegis.notation import HAND_SIZE
from referee.games.base import Event
from referee.games.view import Phrase, TableView, card, sorted_hand, suit


def _outcome(d: Mapping[str, Any]) -> str:
    made = "makes it" if d["attacker_won"] else "fails"
    bonus = [name for name in ("promise", "conquest", "save") if d[name]]
    return made + (f" ({', '.join(bonus)})" if bonus else "")


def _draw(d: Any, who: str, seats: Sequence[str]) -> str:
    c0, c1 = d["cards"]
    return f"draw for master: {seats[0]} {c0}, {seats[1]} {c1}: {seats[d['master']]} is master"


PHRASES: dict[str, Phrase] = {
    "master_draw": _draw,
    "deal": lambda d, who, seats: (f"game {d['game']}: master {seats[d['master']]}, key card {d['key_card']} "
                                   f"(trump {d['trump']}, killers {' '.join(d['killers'])})"),
    "hand": lambda d, who, seats: f"{who} holds {' '.join(sorted_hand(d['cards']))}",
    "stop": lambda d, who, seats: f"exchange round {d['round']}: {who} (master) stops",
    "exchange": lambda d, who, seats: (f"exchange round {d['round']}: {who} ({d['role']}) "
                                       + ("declines" if d["count"] == 0 else f"exchanges {d['count']}")),
    "exchange_cards": lambda d, who, seats: f"{who} discards {' '.join(d['discarded'])}, draws {' '.join(d['drawn'])}",
    "exchange_end": lambda d, who, seats: (f"exchanges over ("
                                           f"{'the master stopped' if d['by'] == 'stop' else 'after 4 rounds'}): "
                                           f"e = {d['e']}"),
    "declare": lambda d, who, seats: f"{who} ({d['role']}) declares {d['d']}",
    "pass": lambda d, who, seats: f"{who} ({d['role']}) passes",
    "attacker": lambda d, who, seats: f"attacker: {who} ({d['role']}), needs {d['d']} tricks",
    "play": lambda d, who, seats: f"{who} plays {d['card']}",
    "trick": lambda d, who, seats: f"trick {d['trick']}: {who} wins",
    "game_end": lambda d, who, seats: (f"game {d['game']}: attacker {seats[d['attacker']]} took {d['attacker_tricks']} "
                                       f"of {d['d']} and {_outcome(d)}; points {d['points'][0]}-{d['points'][1]}"),
    "match_end": lambda d, who, seats: f"match over after {d['games']} games: {who} wins ({d['ended_by']})",
}


class AegisView(TableView):
    """A match: the draw for master, then per game the key card, the exchanges (counts in
    public, the cards to their seat only), the declarations, the tricks and the points."""

    PHRASES = PHRASES

    def __init__(self, seats: Sequence[str], options: Mapping[str, Any]):
        super().__init__(seats, options)
        self.game = 0
        self.deal: dict[str, Any] | None = None
        self.exchanged = [0, 0]
        self.stock = 0
        self.e: int | None = None
        self.declared = ["-", "-"]
        self.attacker: dict[str, Any] | None = None
        self.totals = [0, 0]
        self.rows: list[list[Any]] = []
        self.winner: int | None = None

    def feed(self, event: Event) -> None:
        kind, data = event.kind, event.data
        if kind == "deal":
            self.game, self.deal, self.stock = data["game"], data, data["stock_size"]
            self.new_deal(HAND_SIZE)
            self.exchanged, self.e, self.declared, self.attacker = [0, 0], None, ["-", "-"], None
        elif kind == "hand":
            self.hands[event.actor] = sorted_hand(data["cards"])
        elif kind == "exchange":
            self.exchanged[event.actor] += data["count"]
            self.stock -= data["count"]
        elif kind == "exchange_cards":
            hand = self.hands[event.actor]
            if hand is not None:
                self.hands[event.actor] = sorted_hand([c for c in hand if c not in data["discarded"]] + data["drawn"])
        elif kind == "exchange_end":
            self.e = data["e"]
        elif kind == "declare":
            self.declared[event.actor] = str(data["d"])
        elif kind == "pass":
            self.declared[event.actor] = "pass"
        elif kind == "attacker":
            self.attacker = data
        elif kind == "play":
            self.play(event.actor, data["card"])
        elif kind == "trick":
            self.won_trick(event.actor, data["trick"], f"game {self.game}, trick {data['trick']}")
        elif kind == "game_end":
            self.totals = [self.totals[0] + data["points"][0], self.totals[1] + data["points"][1]]
            self.rows.append([data["game"], self.seats[data["master"]], {"c": data["key_card"]},
                              f"{self.seats[data['attacker']]} ({data['d']})",
                              f"{data['attacker_tricks']}: {_outcome(data)}",
                              f"{data['points'][0]}-{data['points'][1]}", f"{self.totals[0]}-{self.totals[1]}"])
        elif kind == "match_end":
            self.winner = event.seat

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
        seats = [self.seat(s, [] if d is None else ["master" if s == d["master"] else "slave"],
                           [("exchanged", str(self.exchanged[s])), ("declared", self.declared[s]),
                            ("tricks", str(self.won[s])), ("total", str(self.totals[s]))]) for s in range(2)]
        return {"chapter": f"game {self.game}", "info": info, "seats": seats, **self.trick_frame(),
                "rows": len(self.rows)}

    def score_table(self) -> dict[str, Any]:
        return {"title": "games (attacker (tricks needed), tricks taken)",
                "headers": ["game", "master", "key", "attacker", "tricks", "points", "totals"], "rows": self.rows}
