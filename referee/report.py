"""Text output: match logs, result tables. Shared by the commands of referee/cli/."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tabulate import tabulate

from referee import cards
from referee.games.base import PUBLIC, Event, GameState

def format_options(options: dict[str, Any]) -> str:
    return " ".join(f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in options.items())


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return tabulate(rows, headers=list(headers), tablefmt="simple")


def hand_text(hand: Iterable[str]) -> str:
    """A hand (card names, as the engines' events give them) by suit (S H D C), high cards first,
    suits apart."""
    by_suit: dict[str, list[str]] = {suit: [] for suit in cards.SUITS}
    for name in sorted(hand, key=cards.parse, reverse=True):
        by_suit[name[-1]].append(name)
    return "  ".join(" ".join(group) for group in by_suit.values() if group) or "-"


def final_table(results: dict[str, Any], seats: Sequence[str]) -> list[str]:
    if list(seats) == default_seat_names(len(seats)):
        rows = [[i, results["scores"][i], results["placing"][i]] for i in range(len(seats))]
        return ["final scores:", table(["seat", "score", "place"], rows)]
    rows = [[i, name, results["scores"][i], results["placing"][i]] for i, name in enumerate(seats)]
    return ["final scores:", table(["seat", "name", "score", "place"], rows)]


def default_seat_names(n: int) -> list[str]:
    return [f"seat {i}" for i in range(n)]


def results_report(game: str, results: dict[str, Any] | None, seats: Sequence[str]) -> list[str]:
    """The results as text: the game's own detail table, then the final scores."""
    if results is None:
        return ["(the game is not over)"]
    detail = _RESULT_DETAILS.get(game)
    lines = detail(results, seats) if detail else []
    return lines + final_table(results, seats)


def _confirmation_rounds(results: dict[str, Any], seats: Sequence[str]) -> list[str]:
    rows = []
    for r in results["rounds"]:
        row = [r["round"], r["dealer"], r["trump"]]
        for s in range(4):
            bid, final = r["bids"][s], r["final_bids"][s]
            choices = "/".join("C" if c == "CONFIRM" else "R" for c in r["choices"][s])
            bids = str(bid) if bid == final else f"{bid}>{final}"
            row.append(f"{bids} {choices} t{r['tricks'][s]} {r['points'][s]:+d} ={r['totals'][s]}")
        rows.append(row)
    key = "cell: bid[>revised] choices(C=confirm R=revise) t<tricks> points =total"
    if "teams" in results:
        key += "; pairs: partners 0+2 and 1+3 share the team's points"
    return ["rounds:", table(["round", "dealer", "trump", *seats], rows), key, ""]


def _aegis_games(results: dict[str, Any], seats: Sequence[str]) -> list[str]:
    rows, totals = [], [0, 0]
    for g in results["games"]:
        totals = [totals[0] + g["points"][0], totals[1] + g["points"][1]]
        slave = "pass" if g["slave_passed"] else g["d_slave"]
        rows.append([g["game"], g["master"], g["key_card"], g["e"], g["d_master"], slave,
                     f"{g['attacker']} ({g['d']})", g["tricks"][g["attacker"]],
                     f"{g['points'][0]}-{g['points'][1]}", f"{totals[0]}-{totals[1]}"])
    headers = ["game", "master", "key", "e", "d_master", "d_slave", "attacker (d)", "att. tricks",
               "points", "totals"]
    ended = {"25": "25 points reached", "both-25": "both reached 25; the game's winner wins",
             "called": "a lead of 10 (called game)"}.get(results.get("ended_by"), results.get("ended_by"))
    return ["games:", table(headers, rows), f"match won by seat {results['winner']}: {ended}", ""]


_RESULT_DETAILS: dict[str, Callable[[dict[str, Any], Sequence[str]], list[str]]] = {
    "confirmation": _confirmation_rounds,
    "aegis": _aegis_games,
}


# --- the log of a match, from its events --------------------------------------


def game_log(state: GameState, seats: Sequence[str]) -> list[str]:
    """A readable log of everything that happened (the referee's view: every hand).

    The engines' events already name cards (``"AS"``) and suits (``"S"``), so
    the log prints them as they are."""
    writer = _LOGS.get(state.game, _generic_log)
    return list(writer(state.events, seats))


def _generic_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    for e in events:
        who = f" {seats[e.seat]}" if e.seat is not None else ""
        to = "" if e.to == PUBLIC else f" (to {seats[e.to]})"
        yield f"{e.kind}{who}{to}: {json.dumps(e.data)}"


def _confirmation_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    bids: list[str] = []
    plays: list[str] = []
    choices: list[str] = []
    for e in events:
        kind, data = e.kind, e.data
        if kind == "round":
            yield f"== round {data['round']}, dealer {seats[data['dealer']]} =="
        elif kind == "deal":
            yield f"  {seats[e.seat]}: {hand_text(data)}"
        elif kind == "trump":
            how = f"the dealer's last card {data['card']}" if data["card"] is not None else "drawn at random"
            yield f"trump: {data['suit']} ({how})"
        elif kind == "bid":
            bids.append(f"{seats[e.seat]} {data}")
            if len(bids) == 4:
                yield "bids: " + ", ".join(bids)
                bids = []
        elif kind == "play":
            if not plays:
                plays.append(f"{seats[e.seat]} leads")
            plays.append(data)
        elif kind == "trick":
            yield f"trick {data:2}: {' '.join(plays)} -> {seats[e.seat]} wins"
            plays = []
        elif kind == "choice":
            choices.append(f"{seats[e.seat]} {data['choice']}")
            if len(choices) == 4:
                yield f"confirmation phase {data['phase']}: " + ", ".join(choices)
                choices = []
        elif kind == "score":
            yield f"round {data['round']} scored:"
            rows = [[seats[s], data["final_bids"][s], "/".join(data["choices"][s]), data["tricks"][s],
                     f"{data['points'][s]:+d}", data["totals"][s]] for s in range(4)]
            yield table(["seat", "bid", "choices", "tricks", "points", "total"], rows)
        elif kind == "end":
            pass  # the final table follows the log
        else:
            yield from _generic_log([e], seats)


def _aegis_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
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
            yield from _generic_log([e], seats)


_LOGS: dict[str, Callable[[Sequence[Event], Sequence[str]], Iterator[str]]] = {
    "confirmation": _confirmation_log,
    "aegis": _aegis_log,
}
