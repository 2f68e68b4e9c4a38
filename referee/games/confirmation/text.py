"""Confirmation as text: a game's log from its events, and its results round by round (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from referee.games.base import Event, events_text
from referee.games.text import hand_text, table


def render_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    bids: list[str] = []
    plays: list[str] = []
    choices: list[str] = []
    for e in events:
        kind, data = e.kind, e.data
        if kind == "round":
            yield f"== round {data['round']}, dealer {seats[data['dealer']]} =="
        elif kind == "deal":
            yield f"  {seats[e.actor]}: {hand_text(data)}"
        elif kind == "trump":
            how = f"the dealer's last card {data['card']}" if data["card"] is not None else "drawn at random"
            yield f"trump: {data['suit']} ({how})"
        elif kind == "bid":
            bids.append(f"{seats[e.actor]} {data}")
            if len(bids) == 4:
                yield "bids: " + ", ".join(bids)
                bids = []
        elif kind == "play":
            if not plays:
                plays.append(f"{seats[e.actor]} leads")
            plays.append(data)
        elif kind == "trick":
            yield f"trick {data:2}: {' '.join(plays)} -> {seats[e.actor]} wins"
            plays = []
        elif kind == "choice":
            choices.append(f"{seats[e.actor]} {data['choice']}")
            if len(choices) == 4:
                yield f"confirmation phase {data['phase']}: " + ", ".join(choices)
                choices = []
        elif kind == "score":
            yield f"round {data['round']} scored:"
            rows = [[seats[s], data["final_bids"][s], "/".join(_choice_names(data, s)), data["tricks"][s],
                     f"{data['points'][s]:+d}", data["totals"][s]] for s in range(4)]
            yield table(["seat", "bid", "choices", "tricks", "points", "total"], rows)
        elif kind == "end":
            pass  # the final table follows the log
        else:
            yield from events_text([e], seats)


def _choice_names(summary: Mapping[str, Any], seat: int) -> list[str]:
    """A seat's choices in a round's summary, each revision with its number (a summary written
    before ``phase_bids`` was kept shows the bare words)."""
    numbers = summary.get("phase_bids", [[]] * 4)[seat]
    words = summary["choices"][seat]
    if len(numbers) != len(words):
        return list(words)
    return [w if w == "CONFIRM" else f"{w} {n}" for w, n in zip(words, numbers)]


def _bid_chain(summary: Mapping[str, Any], seat: int) -> list[int]:
    """The bid as made, then each number the seat revised to (the final bid last)."""
    bid, final = summary["bids"][seat], summary["final_bids"][seat]
    numbers = summary.get("phase_bids", [[]] * 4)[seat]
    if len(numbers) != len(summary["choices"][seat]):
        return [bid] if bid == final else [bid, final]
    return [bid, *(n for w, n in zip(summary["choices"][seat], numbers) if w != "CONFIRM")]


def render_results(results: Mapping[str, Any], seats: Sequence[str]) -> list[str]:
    rows = []
    for r in results["rounds"]:
        row = [r["round"], r["dealer"], r["trump"]]
        for s in range(4):
            choices = "/".join("C" if c == "CONFIRM" else "R" for c in r["choices"][s])
            bids = ">".join(map(str, _bid_chain(r, s)))
            row.append(f"{bids} {choices} t{r['tricks'][s]} {r['points'][s]:+d} ={r['totals'][s]}")
        rows.append(row)
    key = "cell: bid[>revised...] choices(C=confirm R=revise) t<tricks> points =total"
    if "teams" in results:
        key += "; pairs: partners 0+2 and 1+3 share the team's points"
    return ["rounds:", table(["round", "dealer", "trump", *seats], rows), key, ""]
