"""Confidence sequences for a difference of ratings: bounds that hold at every look at once.

Pure computation, no I/O. A stopping rule (:mod:`referee.competition.adaptive`) looks after every deal
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
from collections.abc import Callable
from enum import StrEnum

from referee.stats.ranks import beta_cdf

#: the mixture's scale (Elo): the differences it is tightest for
MIXTURE_ELO = 100.0


class PairVerdict(StrEnum):
    """What a rule may say of a pair (:func:`verdict`)."""

    ABOVE = "above"  # ordered: the first above the second
    WITHIN = "within"  # inside the margin
    OPEN = "open"  # neither yet


#: the verdicts by name (the scheduler's and the rules' spelling)
ABOVE, WITHIN, OPEN = PairVerdict.ABOVE, PairVerdict.WITHIN, PairVerdict.OPEN


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
    """The sequence's half-width (Elo) at this look, for a difference of the fit and its variance:
    ``q sqrt(V)``, ``q`` the Student quantile at the normal bound's tail (bisection on the log of
    ``x = df / (df + q²)``, where the incomplete beta function ``I_x(df/2, 1/2)`` is twice the tail)."""
    target = 2.0 * tail(variance, alpha)
    lo, hi = math.log(1e-300), 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if beta_cdf(math.exp(mid), 0.5 * df, 0.5) < target else (lo, mid)
    x = math.exp(0.5 * (lo + hi))
    return math.sqrt(df * (1.0 - x) / x) * math.sqrt(variance)


#: a test of a difference at a hypothesis ``Δ = c`` (Elo): its statistic ``z`` (positive when the
#: results put the difference above ``c``) and the variance (Elo²) of the difference's estimate there
Test = Callable[[float], tuple[float, float]]


def wald(diff: float, variance: float) -> Test:
    """The test of a difference of the fit and its variance: ``z = (diff - c) / sd``."""
    return lambda c: ((diff - c) / math.sqrt(variance), variance)


def rejects(z: float, variance: float, df: int, alpha: float) -> bool:
    """Whether a statistic is past the sequence's bound at this look: ``P(T > z)`` (Student, ``df``
    degrees of freedom) below the bound's tail for this variance."""
    return _t_upper(z, df) < tail(variance, alpha)


def verdict(test: Test, estimate: float, df: int, alpha: float, tie: float) -> PairVerdict:
    """What the sequence says of a difference (the first of the pair minus the second, ``estimate``
    the fit's, ``>= 0`` in the fit's order) at this look: :data:`ABOVE` (the hypothesis ``Δ = 0``,
    and with it every ``Δ <= 0``, rejected upwards), :data:`WITHIN` (``Δ = tie`` rejected downwards
    and ``Δ = -tie`` upwards: the difference is strictly inside ``±tie``) or :data:`OPEN`."""
    z, variance = test(0.0)
    if rejects(z, variance, df, alpha):
        return ABOVE
    if 0 < tie and abs(estimate) < tie:
        z, variance = test(tie)
        if rejects(-z, variance, df, alpha):
            z, variance = test(-tie)
            if rejects(z, variance, df, alpha):
                return WITHIN
    return OPEN


def edge(test: Test, inside: float, outside: float, df: int, alpha: float) -> float:
    """Where the test turns between a hypothesis it does not reject (``inside``: the fit's estimate)
    and one it rejects (``outside``: 0 for an order, ``±tie`` for a margin), by bisection to 0.01
    Elo: the bound a claim proved (the order's "at least this far above", the margin's ends)."""
    outward = 1.0 if outside > inside else -1.0
    while abs(outside - inside) > 0.01:
        mid = 0.5 * (inside + outside)
        z, variance = test(mid)
        inside, outside = (inside, mid) if rejects(-outward * z, variance, df, alpha) else (mid, outside)
    return 0.5 * (inside + outside)


def pairs(n: int) -> int:
    """How many pairs ``n`` entries make: what the level is shared among."""
    return max(1, n * (n - 1) // 2)
