"""Models of duplicate play, for simulations: of the SPRT (tests, ``python -m referee.tools.sprt_simulation``),
of rating tournaments with known true ratings (tests, ``python -m referee.tools.coverage``) and of a
reference pool and the settings it does not survive (tests, ``python -m referee.tools.anchoring``)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import TypedDict

from referee.stats.ratings import ELO_PER_LOGIT, Outcome, pairwise_from_game, team_results
from referee.stats.sprt import (
    PENTANOMIAL,
    TRINOMIAL,
    EloModel,
    elo_of,
    expected_score,
    mle_with_mean,
    mle_with_t,
    nelo_to_t,
    score_of,
    sigma_per_game,
)


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def duplicate_model(elo: float, luck: float = 1.0, draws: float = 0.0,
                    points: int = 200) -> tuple[list[float], list[float]]:
    """The outcome distributions of a simple model of duplicate play whose expected score is
    exactly ``s(elo)``: (pentanomial of a unit, trinomial of one game).

    Each unit draws a deal luck ``L ~ Normal(0, luck)`` (in logits); the candidate wins the
    first game with probability ``σ(δ + L)`` and the swapped game with ``σ(δ - L)`` (the same
    cards, the other side), each game being a draw with probability ``draws`` instead. ``δ``
    is solved so that the mean score is ``s(elo)``. ``luck = 0`` gives independent games; the
    larger ``luck``, the more the two games of a unit split 1-1 and the more duplicate play
    gains. The trinomial is the distribution of one game alone (the same for both seats)."""
    if luck < 0 or not 0.0 <= draws < 1.0:
        raise ValueError("luck must be >= 0 and draws in [0, 1)")
    target = expected_score(elo)
    normal = NormalDist()
    lucks = [luck * normal.inv_cdf((k + 0.5) / points) for k in range(points)]

    def dists(delta: float) -> tuple[list[float], list[float]]:
        penta = [0.0] * 5
        tri = [0.0] * 3
        for swing in lucks:
            g1 = _game(_logistic(delta + swing), draws)
            g2 = _game(_logistic(delta - swing), draws)
            for i, p in enumerate(g1):
                tri[i] += 0.5 * p / points
                for j, q in enumerate(g2):
                    penta[i + j] += p * q / points
            for i, q in enumerate(g2):
                tri[i] += 0.5 * q / points
        return penta, tri

    lo, hi = -30.0, 30.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        tri = dists(mid)[1]
        if tri[1] * 0.5 + tri[2] < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    penta, tri = dists(0.5 * (lo + hi))
    # the last digits: tilt onto the exact mean (a no-op up to rounding)
    penta = mle_with_mean(PENTANOMIAL, penta, target)[0]
    tri = mle_with_mean(TRINOMIAL, tri, target)[0]
    return penta, tri


def _game(p_win: float, draws: float) -> tuple[float, float, float]:
    return (1.0 - draws) * (1.0 - p_win), draws, (1.0 - draws) * p_win


def _gumbel(rng: random.Random) -> float:
    return -math.log(-math.log(rng.random() or 1e-300))


def simulate_tournament(true: Mapping[str, float], lineups: Sequence[Sequence[str]], deal_sets: int,
                        rng: random.Random, *, luck: float = 0.0, seat_luck: float = 100.0,
                        teams: Sequence[Sequence[int]] | None = None, form_df: float | None = None,
                        draw_margin: float = 0.0, first: int = 0,
                        copies: Mapping[str, str] | None = None) -> list[Outcome]:
    """The outcomes of a duplicate tournament between bots of known Elo ``true``: every deal set
    played by every line-up of ``lineups`` (the schedule's seatings of one deal set).

    On each deal set every bot gets a *deal effect* ``~ Normal(0, luck)`` Elo, shared by all its
    games on that deal set (the cards suit it or not: what duplicate play cannot cancel), and every
    seat a card effect ``~ Normal(0, seat_luck)`` Elo (what the seat rotations cancel). A seat's
    performance in a game is the sum of its bot's rating and these effects, plus standard Gumbel
    noise in logits; the seats rank by performance. Two seats therefore compare exactly as the
    Bradley-Terry model says (the difference of two Gumbels is logistic), and the games of a deal
    set are correlated as real ones are. With ``teams`` (seats of each team) a team's performance is
    the average of its members' ratings and deal effects, plus its seats' card effects, plus the
    noise, as :class:`referee.stats.ratings.TeamResult` models; the outcomes are then team results.

    A harsher world (:data:`HARSH`): ``form_df`` draws the deal effects from a Student t with that
    many degrees of freedom (scale ``luck``: heavy tails, a bot's occasional disaster or triumph),
    and ``draw_margin`` (logits) makes two performances in the same cell of a grid that wide a
    draw (equal scores). The deal sets are numbered from ``first`` (a tournament played deal set by
    deal set, each with the line-ups chosen for it: ``deal_sets=1``). ``copies`` (copy -> original):
    entries that are copies of another, of its rating, whose deal effect is the original's on every
    deal set (the cards suit them alike); only the noise of each game is their own."""
    normal = rng.gauss

    def form_of(rating: float) -> float:
        shock = normal(0.0, luck)
        if form_df is not None:  # a normal over the root of a chi-square: Student's t
            shock /= math.sqrt(rng.gammavariate(0.5 * form_df, 2.0) / form_df)
        return (rating + shock) / ELO_PER_LOGIT

    def grid(value: float) -> float:
        return math.floor(value / draw_margin) if draw_margin > 0 else value

    out: list[Outcome] = []
    for d in range(first, first + deal_sets):
        form = {name: form_of(r) for name, r in true.items()}
        for copy, original in (copies or {}).items():
            form[copy] = form[original]
        seats = max(len(lineup) for lineup in lineups)
        cards = [normal(0.0, seat_luck) / ELO_PER_LOGIT for _ in range(seats)]
        for lineup in lineups:
            if teams is None:
                perf = [grid(form[bot] + cards[s] + _gumbel(rng)) for s, bot in enumerate(lineup)]
                out += pairwise_from_game(d, lineup, perf)
            else:
                perf = [0.0] * len(lineup)
                for team in teams:
                    value = grid(sum(form[lineup[s]] for s in team) / len(team) + sum(cards[s] for s in team)
                                 + _gumbel(rng))
                    for s in team:
                        perf[s] = value
                out += team_results(d, lineup, perf, teams)
    return out


class World(TypedDict, total=False):
    """Settings of :func:`simulate_tournament` that make a world, given as ``**world``."""

    luck: float
    seat_luck: float
    form_df: float | None
    draw_margin: float


#: the harsher world of the calibration tools: strong seat luck (300 Elo a seat, which the rotations
#: cancel), heavy-tailed deal effects (Student t, 3 degrees of freedom, scale 100 Elo) and draws
#: (performances within one cell of a grid of 1.2 logits: about 15% of pairwise results)
HARSH: World = {"luck": 100.0, "seat_luck": 300.0, "form_df": 3.0, "draw_margin": 1.2}
#: the project's world: card effects of 100 Elo a seat and normal deal effects of 100 Elo
PROJECT: World = {"luck": 100.0, "seat_luck": 100.0}

#: a reference pool (:mod:`referee.stats.anchored`) as the house bots span it, in true Elo: random, the
#: heuristic bot weakened by 75% and 50% random moves (sample_bots/weakened.py), heuristic and search (the
#: demo's tables in docs/benchmarks.md: random about 750 below heuristic, search level with it to 100 above)
POOL = {"random": 1000.0, "weakened-75": 1250.0, "weakened-50": 1450.0, "heuristic": 1700.0, "search": 1750.0}
#: settings a pool's scale does not survive, as shifted strengths (the scale check must flag them): one of
#: its bots swapped for a stronger one; a shorter clock, which costs the bot that thinks against it (search)
#: and none of the others
SWAPPED = {"search": 200.0}
SHORTER_CLOCK = {"search": -200.0}


def shifted(true: Mapping[str, float], shifts: Mapping[str, float]) -> dict[str, float]:
    """The true ratings ``true`` with ``shifts`` added: a changed setting as shifted strengths."""
    return {name: r + shifts.get(name, 0.0) for name, r in true.items()}


def duplicate_model_normalized(nelo: float, luck: float = 1.0, draws: float = 0.0) -> list[float]:
    """The pentanomial of :func:`duplicate_model` whose **normalized** Elo is exactly ``nelo``: the
    model at the logistic Elo that about matches it, then moved to the exact t-value (the closest
    distribution with that t-value, :func:`referee.stats.sprt.mle_with_t`)."""
    sigma_pg = sigma_per_game(PENTANOMIAL, duplicate_model(0.0, luck, draws)[0])
    penta = duplicate_model(elo_of(score_of(nelo, EloModel.NORMALIZED, sigma_pg)), luck, draws)[0]
    return mle_with_t(PENTANOMIAL, penta, nelo_to_t(nelo, PENTANOMIAL))[0]


# --- points at the table, and a colluding pair (the collusion check: referee.stats.collusion) -------


#: the points world of the collusion check, in points per seat of a Confirmation match of 8 rounds as the
#: heuristic sample bots score them (``python -m referee.tools.collusion --measure`` prints the figures):
#: a seat's points vary by 33 between the tables of one cell (same cards, other table-mates), 15 between
#: the cells; a table-mate moves them by a few points
POINTS = {"noise": 33.0, "cards": 15.0, "form": 5.0, "mates": 4.0, "places": 0.0, "seat_mates": 3.0}
#: a harsher one: heavy tails (Student t, 3 degrees of freedom), entries whose points vary from 10 to 50
POINTS_HARSH = {**POINTS, "tails": 3.0, "spread": (10.0, 50.0)}
#: Aegis's world, in points of a match as the sample bots score them (heuristic, weakened, random: a
#: seat's points vary by about 5 between its tables of one cell, by 3 between cells)
POINTS_AEGIS = {"noise": 5.5, "cards": 3.0, "form": 1.0, "mates": 2.0, "places": 0.0, "seat_mates": 1.0}


def simulate_points(entries: Sequence[str], lineups: Sequence[Sequence[str]], deal_sets: int, rng: random.Random, *,
                    noise: float = 33.0, cards: float = 15.0, form: float = 5.0, mates: float = 4.0,
                    places: float = 0.0, seat_mates: float = 3.0, tails: float | None = None,
                    spread: tuple[float, float] | None = None, skill: Mapping[str, float] | None = None,
                    colluders: Sequence[tuple[str, str, float, float]] = (),
                    first: int = 0) -> list[tuple[int, tuple[str, ...], tuple[float, ...]]]:
    """The points of every seat of a duplicate tournament (every deal set played by every line-up of
    ``lineups``): ``(deal set, line-up, points by seat)`` per match.

    A seat's points are its entry's ``skill`` (default 0), plus its deal form (``~ Normal(0, form)``
    per entry and deal set), plus the cards (``~ Normal(0, cards)`` per deal set and seat: what the
    rotations cancel), plus each table-mate's effect on any table-mate (``~ Normal(0, mates)`` per
    entry, drawn once: a disruptive entry, a soft one) and on whoever sits where it sits from them
    (``~ Normal(0, places)`` per entry and place, drawn once: just before a seat, a weak entry plays
    before it in every trick), plus that table-mate's effect on the cards of
    this seat from where it sits (``~ Normal(0, seat_mates)`` per deal set, seat, table-mate and the
    seat it holds: correlated within a deal set, as real tables are), plus the seat's noise (``~
    Normal(0, noise)``; with ``tails`` a Student t of that many degrees of freedom, scaled to the same
    spread; with ``spread`` each entry's noise drawn uniformly in that range). No pair of entries has an
    effect of its own, unless ``colluders``: each ``(helper, mark, gain, cost)`` gives the mark
    ``gain`` points and the helper ``-cost`` at every table the two share: the helper plays for the
    mark (the others' points as they would be)."""
    normal = rng.gauss
    skill = skill or {}
    effect = {e: normal(0.0, mates) for e in entries}
    seats = max(len(lineup) for lineup in lineups)
    place = {(e, p): normal(0.0, places) for e in entries for p in range(1, seats)}
    scale = {e: rng.uniform(*spread) if spread else noise for e in entries}

    def draw(sd: float) -> float:
        if tails is None:
            return normal(0.0, sd)
        chi = rng.gammavariate(0.5 * tails, 2.0) / tails
        return normal(0.0, sd) / math.sqrt(chi) * math.sqrt((tails - 2.0) / tails)

    out = []
    for k in range(first, first + deal_sets):
        shape = {e: normal(0.0, form) for e in entries}
        card = [normal(0.0, cards) for _ in range(seats)]
        where: dict[tuple[int, str, int], float] = {}
        for lineup in lineups:
            points = []
            for s, a in enumerate(lineup):
                value = skill.get(a, 0.0) + shape[a] + card[s] + draw(scale[a])
                for t, b in enumerate(lineup):
                    if b == a:
                        continue
                    value += effect[b] + place[(b, (t - s) % len(lineup))]
                    if (s, b, t) not in where:
                        where[(s, b, t)] = normal(0.0, seat_mates)
                    value += where[(s, b, t)]
                points.append(value)
            for helper, mark, gain, cost in colluders:
                if helper in lineup and mark in lineup:
                    for s, e in enumerate(lineup):
                        points[s] += gain if e == mark else -cost if e == helper else 0.0
            out.append((k, tuple(lineup), tuple(points)))
    return out
