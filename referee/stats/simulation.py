"""A model of duplicate play, for simulations of the SPRT (tests, ``python -m referee.tools.sprt_simulation``)."""

from __future__ import annotations

import math
from statistics import NormalDist

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


def duplicate_model_normalized(nelo: float, luck: float = 1.0, draws: float = 0.0) -> list[float]:
    """The pentanomial of :func:`duplicate_model` whose **normalized** Elo is exactly ``nelo``: the
    model at the logistic Elo that about matches it, then moved to the exact t-value (the closest
    distribution with that t-value, :func:`referee.stats.sprt.mle_with_t`)."""
    sigma_pg = sigma_per_game(PENTANOMIAL, duplicate_model(0.0, luck, draws)[0])
    penta = duplicate_model(elo_of(score_of(nelo, EloModel.NORMALIZED, sigma_pg)), luck, draws)[0]
    return mle_with_t(PENTANOMIAL, penta, nelo_to_t(nelo, PENTANOMIAL))[0]
