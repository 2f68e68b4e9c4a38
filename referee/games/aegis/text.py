"""Aegis as text: a match's log from its events, and its results game by game (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from referee.games.base import Event, events_text
from referee.games.text import hand_text, table


def render_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    plays: list[str] = []
    totals = [0, 0]
    for e in events:
        kind, data = e.kind, e.data
        who = seats[e.seat] if e.seat is not None else ""
        if kind == "master_draw":
            c0, c1 = data["cards"]
            yield f"draw for master: {seats[0]} {c0}, {seats[1]} {c1} -> {seats[data['master']]} is master"
        elif kind == "deal":
            yield f"== game {data['game']}: master {seats[data['master']]}, slave {seats[data['slave']]} =="
            yield f"key card: {data['key_card']} (trump {data['trump']}; killers {' '.join(data['killers'])})"
        elif kind == "hand":
            yield f"  {who}: {hand_text(data['cards'])}"
        elif kind == "stop":
            yield f"exchange round {data['round']}: master {who} stops"
        elif kind == "exchange":
            count = "declines" if data["count"] == 0 else f"exchanges {data['count']}"
            yield f"exchange round {data['round']}: {data['role']} {who} {count}"
        elif kind == "exchange_cards":
            yield f"    ({who} discards {' '.join(data['discarded'])}, draws {' '.join(data['drawn'])})"
        elif kind == "exchange_end":
            how = "the master stopped" if data["by"] == "stop" else "after 4 rounds"
            yield f"exchanges over ({how}): e = {data['e']}"
        elif kind == "declare":
            yield f"{data['role']} {who} declares {data['d']}"
        elif kind == "pass":
            yield f"{data['role']} {who} passes"
        elif kind == "attacker":
            yield f"attacker: {data['role']} {who}, needs {data['d']} tricks"
        elif kind == "play":
            if not plays:
                plays.append(f"{who} leads")
            plays.append(data["card"])
        elif kind == "trick":
            yield f"trick {data['trick']}: {' '.join(plays)} -> {who} wins"
            plays = []
        elif kind == "game_end":
            totals = [totals[0] + data["points"][0], totals[1] + data["points"][1]]
            outcome = "makes it" if data["attacker_won"] else "fails"
            bonus = [name for name in ("promise", "conquest", "save") if data[name]]
            yield (f"game {data['game']}: attacker {seats[data['attacker']]} took {data['attacker_tricks']} "
                   f"of {data['d']} and {outcome}; points {data['points'][0]}-{data['points'][1]}"
                   f"{' (' + ', '.join(bonus) + ')' if bonus else ''}; totals {totals[0]}-{totals[1]}")
        elif kind == "match_end":
            yield f"match over after {data['games']} games: {seats[data['winner']]} wins ({data['ended_by']})"
        else:
            yield from events_text([e], seats)


def render_results(results: Mapping[str, Any], seats: Sequence[str]) -> list[str]:
    rows, totals = [], [0, 0]
    for g in results["games"]:
        totals = [totals[0] + g["points"][0], totals[1] + g["points"][1]]
        slave = "pass" if g["slave_passed"] else g["d_slave"]
        rows.append([g["game"], g["master"], g["key_card"], g["e"], g["d_master"], slave,
                     f"{g['attacker']} ({g['d']})", g["tricks"][g["attacker"]],
                     f"{g['points'][0]}-{g['points'][1]}", f"{totals[0]}-{totals[1]}"])
    headers = ["game", "master", "key", "e", "d_master", "d_slave", "attacker (d)", "att. tricks",
               "points", "totals"]
    ended_by: str | None = results.get("ended_by")
    ended = None if ended_by is None else {
        "25": "25 points reached", "both-25": "both reached 25; the game's winner wins",
        "called": "a lead of 10 (called game)"}.get(ended_by, ended_by)
    return ["games:", table(headers, rows), f"match won by seat {results['winner']}: {ended}", ""]
