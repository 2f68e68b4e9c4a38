"""Confidence sequences for a difference of ratings: bounds that hold at every look at once.

Pure computation, no I/O. A stopping rule (:mod:`referee.tournament.adaptive`) looks after every deal
set and stops at the first look at which its condition holds. A probability or an interval that is
right at one look (the posterior's ``P(a above b)``, a 95% interval) is then wrong far more often
than it says: for two equal bots ``P(a above b)`` wanders like a random walk and, looked at long
enough, crosses any level (the law of the iterated logarithm). A **confidence sequence** is a
sequence of intervals that hold the true difference at every look at once, with probability at
least ``1 - α``: a rule that stops on one of them errs at most ``α`` of the time, however often it
looks and whenever it stops.

The one here is Robbins' **normal mixture**. With ``Δ̂`` the fit's difference of two ratings and ``V``
its variance, in information time (``I = 1/V``) the sum ``S = I (Δ̂ - Δ)`` behaves as a Brownian
motion (deal sets are independent; the fit's estimating equation is a sum over them). The likelihood
ratio of a drift ``θ``, ``exp(θ S - θ² I / 2)``, mixed over ``θ ~ Normal(0, 1/ρ)``, is the
nonnegative martingale ``sqrt(ρ / (I + ρ)) exp(S² / 2 (I + ρ))``, and Ville's inequality (a
nonnegative martingale that starts at 1 reaches ``1/α`` with probability at most ``α``) bounds it at
every look at once:

    |Δ̂ - Δ| <= b sqrt(V),   b² = (1 + ρ V) (log(1 + 1 / (ρ V)) + 2 log(1 / α)).

``ρ = 1 / MIXTURE_ELO²``: the mixture spreads its bet over differences of about :data:`MIXTURE_ELO`
(the bound is within a few percent of its best from about a tenth to ten times that). ``V`` is the
posterior's ``Σ_w`` (:meth:`referee.stats.ranks.RankPosterior.difference`: the larger of the
observed information's and the cluster-robust covariance over deal sets), estimated from ``D`` deal
sets: as the posterior and the intervals do, the bound takes Student's t with ``D - 1`` degrees of
freedom at the normal bound's tail probability (early looks, when the variance itself is uncertain,
are the wider).

A rule states what it claims of a pair (:func:`verdict`): ``above`` (the lower bound above 0: the
order is right), ``within`` (both bounds inside ``±tie``: the difference is within the margin) or
``open``. With the level shared among every pair of the table (``α = (1 - confidence) / pairs``),
every claim of a stopped run is right at once with probability at least ``confidence``.
Measured: ``python -m referee.tools.scheduling`` and docs/tournaments.md.
"""

from __future__ import annotations

import math

from referee.stats.ranks import beta_cdf

#: the mixture's scale (Elo): the differences it is tightest for
MIXTURE_ELO = 200.0
#: what a rule may say of a pair
ABOVE, WITHIN, OPEN = "above", "within", "open"


def boundary(variance: float, alpha: float) -> float:
    """``b``: the normal mixture's bound on ``|Δ̂ - Δ|`` in standard deviations (``variance`` in Elo²)."""
    ratio = variance / (MIXTURE_ELO * MIXTURE_ELO)  # ρ V
    return math.sqrt((1.0 + ratio) * (math.log1p(1.0 / ratio) + 2.0 * math.log(1.0 / alpha)))


def tail(variance: float, alpha: float) -> float:
    """The normal tail probability beyond :func:`boundary`: what the t bound takes too."""
    return 0.5 * math.erfc(boundary(variance, alpha) / math.sqrt(2.0))


def _t_upper(t: float, df: int) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom, accurate far into the tail."""
    upper = 0.5 * beta_cdf(df / (df + t * t), 0.5 * df, 0.5)
    return upper if t > 0 else 1.0 - upper


def half_width(variance: float, df: int, alpha: float) -> float:
    """The sequence's half-width (Elo) at this look: ``q sqrt(V)``, ``q`` the Student quantile at
    the normal bound's tail (bisection on the log of ``x = df / (df + q²)``, where the incomplete
    beta function ``I_x(df/2, 1/2)`` is twice the tail)."""
    target = 2.0 * tail(variance, alpha)
    lo, hi = math.log(1e-300), 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if beta_cdf(math.exp(mid), 0.5 * df, 0.5) < target else (lo, mid)
    x = math.exp(0.5 * (lo + hi))
    return math.sqrt(df * (1.0 - x) / x) * math.sqrt(variance)


def verdict(diff: float, variance: float, df: int, alpha: float, tie: float) -> str:
    """What the sequence says of a difference ``diff`` (Elo, the first of the pair minus the second,
    ``>= 0`` in the fit's order) at this look: :data:`ABOVE` (its lower bound is above 0),
    :data:`WITHIN` (both bounds strictly inside ``±tie``) or :data:`OPEN`. Decided on tail
    probabilities, without the quantile: ``diff - q sd > 0`` exactly when ``P(T > diff / sd)`` is
    below the bound's tail."""
    sd, p = math.sqrt(variance), tail(variance, alpha)
    if _t_upper(diff / sd, df) < p:
        return ABOVE
    if tie > 0 and _t_upper((tie - diff) / sd, df) < p and _t_upper((tie + diff) / sd, df) < p:
        return WITHIN
    return OPEN


def pairs(n: int) -> int:
    """How many pairs ``n`` entries make: what the level is shared among."""
    return max(1, n * (n - 1) // 2)
