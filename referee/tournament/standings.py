"""Standings from stored results: the Elo table, head to head, seat bias.

A match enters the rating fit as the pairwise results between its seats,
ranked as the game's spec says (``rated_by``): by placing (Aegis: one result
each, by the match winner) or by final score (Confirmation: equal scores are
draws). A match whose results name teams (``results["teams"]``: Confirmation's
pairs) gives one result between the teams instead, never one between partners,
and the standings add a table of the partnerships. Intervals: ``ratings.rate``.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tabulate import tabulate

from referee import games
from referee.games import RatedBy
from referee.stats import ratings
from referee.tournament.store import MatchRow


@dataclass
class BotLine:
    name: str
    elo: float
    plus_minus: float | None
    lo: float | None
    hi: float | None
    matches: int
    score_pct: float | None
    wins: int
    draws: int
    losses: int
    mean_points: float | None
    timeouts: int
    illegal: int
    disconnects: int
    los_next: float | None
    bound: str | None = None  # "upper": only known to be below hi; "lower": above lo (ratings.PlayerRating)


@dataclass
class Standings:
    game: str
    lines: list[BotLine]
    head_to_head: dict[str, dict[str, ratings.Record]]
    seat_bias: list[dict[str, Any]]
    matches: int
    deal_sets: int
    bootstrap: int
    notes: list[str] = field(default_factory=list)
    #: the partnerships rated as players (team games only: Confirmation's pairs), else None
    teams: ratings.Ratings | None = None
    identifiable: bool = True  # False: the bots' ratings cannot be told apart (ratings.Ratings)
    intervals_trusted: bool = True  # False: no interval can be trusted (one deal set)


def pair_results_of(game: str, rows: Iterable[MatchRow]) -> list[ratings.Outcome]:
    out: list[ratings.Outcome] = []
    by_placing = games.get(game).rated_by is RatedBy.PLACING
    for row in rows:
        ranks = [-p for p in row.placing] if by_placing else row.scores
        if row.results.get("teams"):
            out += ratings.team_results(row.deal_set, row.lineup, ranks, row.results["teams"])
        else:
            out += ratings.pairwise_from_game(row.deal_set, row.lineup, ranks)
    return out


def compute(game: str, rows: list[MatchRow], anchor: tuple[str, float] | None = None, bootstrap: int = 1000,
            seed: int = 0) -> Standings:
    outcomes = pair_results_of(game, rows)
    fit = ratings.rate(outcomes, anchor=anchor, bootstrap=bootstrap, seed=seed)
    teams = None
    if any(isinstance(o, ratings.TeamResult) for o in outcomes):
        teams = ratings.rate_teams(outcomes, fit, seed=seed)
    matches: dict[str, int] = defaultdict(int)
    points: dict[str, list[int]] = defaultdict(list)
    faults: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seats = len(rows[0].lineup) if rows else 0
    by_seat: list[list[tuple[int, int]]] = [[] for _ in range(seats)]
    for row in rows:
        for bot in set(row.lineup):
            matches[bot] += 1
        for seat, bot in enumerate(row.lineup):
            points[bot].append(row.scores[seat])
            for kind, n in row.faults[seat].items():
                faults[bot][kind] += n
            by_seat[seat].append((row.scores[seat], row.placing[seat]))
    lines = []
    for r in fit.rows:
        f = faults[r.name]
        pts = points[r.name]
        line = BotLine(r.name, r.elo, r.plus_minus, r.lo, r.hi, matches[r.name], r.score_pct, r.wins, r.draws,
                       r.losses, sum(pts) / len(pts) if pts else None, f["timeout"],
                       f["illegal"] + f["malformed"] + f["wrong_id"], f["disconnect"] + f["no_session"],
                       r.los_next, r.bound)
        if not fit.identifiable:  # the prior's split of the teams' ratings: print none
            line.elo = line.plus_minus = line.lo = line.hi = line.los_next = None
        lines.append(line)
    bias = [{"seat": s, "games": len(v), "mean_points": sum(p for p, _ in v) / len(v) if v else None,
             "first_place_pct": 100 * sum(1 for _, place in v if place == 1) / len(v) if v else None}
            for s, v in enumerate(by_seat)]
    return Standings(game, lines, fit.head_to_head, bias, len(rows), len({r.deal_set for r in rows}), bootstrap,
                     [f"warning: {w}" for w in fit.warnings], teams, fit.identifiable, fit.intervals_trusted)


def _f(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _elo(b: BotLine | ratings.PlayerRating) -> tuple[str, str]:
    """The Elo and ± cells: a bound ("< 1306") for a bot that scored no point or every point."""
    if b.bound == "upper" and b.hi is not None:
        return f"< {b.hi:.0f}", "-"
    if b.bound == "lower" and b.lo is not None:
        return f"> {b.lo:.0f}", "-"
    return _f(b.elo), _f(b.plus_minus)


def table(st: Standings) -> str:
    rows = [[rank, b.name, *_elo(b), b.matches, _f(b.score_pct, 1),
             f"{b.wins}-{b.draws}-{b.losses}", _f(b.mean_points, 2), f"{b.timeouts}/{b.illegal}/{b.disconnects}"]
            for rank, b in enumerate(st.lines, 1)]
    headers = ["rank", "bot", "Elo", "±", "games", "score %", "W-D-L", "pts/game", "faults t/i/d"]
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                    colalign=("right", "left", "right", "right", "right", "right", "right", "right", "right"))


def team_table(teams: ratings.Ratings) -> str:
    """The partnerships (``ratings.rate_teams``); no Elo where even the teams cannot be compared."""
    rows = [[rank, r.name, *(_elo(r) if teams.identifiable else ("-", "-")), r.games, _f(r.score_pct, 1),
             f"{r.wins}-{r.draws}-{r.losses}"] for rank, r in enumerate(teams.rows, 1)]
    return tabulate(rows, headers=["rank", "team", "Elo", "±", "games", "score %", "W-D-L"], tablefmt="simple",
                    disable_numparse=True, colalign=("right", "left", "right", "right", "right", "right", "right"))


def _teams_part(st: Standings) -> list[str]:
    if st.teams is None:
        return []
    how = ("the average of its members'" if any(b.elo is not None for b in st.lines)
           else "each team rated as one player" if st.teams.identifiable
           else "none, the teams that met never link up")
    return ["", f"Partnerships (team against team; a team's Elo: {how}):", team_table(st.teams)]


def cross_table(st: Standings) -> str:
    names = [b.name for b in st.lines]
    rows = []
    for a in names:
        row = [a]
        for b in names:
            rec = st.head_to_head.get(a, {}).get(b)
            row.append("" if a == b else "-" if rec is None or not rec.games else f"{rec.score_pct:.0f}% ({rec.games})")
        rows.append(row)
    return tabulate(rows, headers=["vs →", *names], tablefmt="simple", disable_numparse=True)


def bias_table(st: Standings) -> str:
    label = games.get(st.game).first_place_label
    rows = [[s["seat"], s["games"], _f(s["mean_points"], 2), _f(s["first_place_pct"], 1)] for s in st.seat_bias]
    return tabulate(rows, headers=["seat", "games", "mean points", label], tablefmt="simple", disable_numparse=True)


def report(st: Standings) -> str:
    parts = [
        f"{st.game}: {st.matches} match(es) on {st.deal_sets} deal set(s); Elo by Bradley-Terry maximum "
        f"likelihood, average 1500, ± = half the 95% interval ({st.bootstrap} bootstrap resamples of deal sets, "
        f"widened for small samples)",
        *st.notes,
        "",
        table(st),
        *_teams_part(st),
        "",
        "Head to head (row's score against column, pairwise games):",
        cross_table(st),
        "",
        "Seat bias (" + games.get(st.game).seat_order + "):",
        bias_table(st),
    ]
    return "\n".join(parts)


def to_json(st: Standings) -> dict[str, Any]:
    return {
        "game": st.game, "matches": st.matches, "deal_sets": st.deal_sets, "bootstrap": st.bootstrap,
        "identifiable": st.identifiable, "intervals_trusted": st.intervals_trusted, "notes": st.notes,
        "standings": [{"rank": i, **b.__dict__} for i, b in enumerate(st.lines, 1)],
        "head_to_head": {a: {b: rec.__dict__ for b, rec in row.items()} for a, row in st.head_to_head.items()},
        "seat_bias": st.seat_bias,
        **({"teams": [{"rank": i, **r.__dict__} for i, r in enumerate(st.teams.rows, 1)]} if st.teams else {}),
    }


def to_csv(st: Standings) -> str:
    buf = io.StringIO()
    fields = ["rank", *BotLine.__dataclass_fields__]
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    for i, b in enumerate(st.lines, 1):
        writer.writerow({"rank": i, **b.__dict__})
    return buf.getvalue()
