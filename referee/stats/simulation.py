"""Models of duplicate play, for simulations: of the SPRT (tests, ``python -m referee.tools.sprt_simulation``),
of rating tournaments with known true ratings (tests, ``python -m referee.tools.coverage``) and of a
reference pool and the settings it does not survive (tests, ``python -m referee.tools.anchoring``)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from statistics import NormalDist

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
                        draw_margin: float = 0.0, first: int = 0) -> list[Outcome]:
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
    deal set, each with the line-ups chosen for it: ``deal_sets=1``)."""
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


#: the harsher world of the calibration tools: strong seat luck (300 Elo a seat, which the rotations
#: cancel), heavy-tailed deal effects (Student t, 3 degrees of freedom, scale 100 Elo) and draws
#: (performances within one cell of a grid of 1.2 logits: about 15% of pairwise results)
HARSH = {"luck": 100.0, "seat_luck": 300.0, "form_df": 3.0, "draw_margin": 1.2}
#: the project's world: card effects of 100 Elo a seat and normal deal effects of 100 Elo
PROJECT = {"luck": 100.0, "seat_luck": 100.0}

#: a reference pool (:mod:`referee.stats.anchored`) as the house bots span it, in true Elo: random, the
#: heuristic bot weakened by 75% and 50% random moves (sample_bots/weakened.py), heuristic and search (the
#: README's tables: random about 750 below heuristic, search level with it to 100 above)
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
