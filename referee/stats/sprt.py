"""The sequential probability ratio test: is a player stronger than another? Pure statistics, no I/O.

Outcomes
--------
A test counts outcomes, each with a per-game score: :data:`PENTANOMIAL` for duplicate
units of two games on the same deals (the unit's points 0, ½, 1, 1½ or 2, halved: the
five outcomes of fishtest's *pentanomial* model), :data:`TRINOMIAL` for single games
(loss, draw, win). The deals are the same for both games of a unit, so the luck of the
cards mostly cancels within the unit; the pentanomial model measures the variance of units
directly instead of assuming independent games, which is where the savings come from.

The test (GSPRT, as fishtest's ``LLR_logistic``)
-----------------------------------------------
Hypotheses are in logistic Elo: ``H0: elo = elo0`` against ``H1: elo = elo1``
where a difference of ``elo`` gives the candidate the expected score per game
``s(elo) = 1 / (1 + 10 ** (-elo / 400))``. With ``a_i`` the per-game score of
outcome ``i`` (0, ¼, ½, ¾, 1: the unit's points over two) and ``p̂_i`` the
observed frequencies of the ``N`` units, the generalized log-likelihood
ratio is

    LLR = N * Σ_i p̂_i * log(p1_i / p0_i)

where ``p0`` and ``p1`` are the **maximum-likelihood** pentanomial
distributions under the constraint that the mean score is ``s(elo0)``,
resp. ``s(elo1)``. By Lagrange multipliers the constrained MLE is
``p_i = p̂_i / (1 + x * (a_i - s))``, with ``x`` the unique root of the
secular equation ``Σ_i p̂_i (a_i - s) / (1 + x (a_i - s)) = 0`` in the
interval where every ``1 + x (a_i - s)`` is positive; the left side is
strictly decreasing there, so a bracketed Newton iteration finds it (warm
started from the previous unit's root, it takes two or three steps). As in
fishtest, an outcome never observed counts 0.001 (so that the MLE exists from
the first unit). This is the exact MLE, not the normal approximation
``LLR ≈ N (s1 - s0)(2 μ - s0 - s1) / (2 σ²)`` (``μ``, ``σ²``: the mean and
variance of the per-unit score), which :func:`llr_normalized` computes for
comparison; the two agree closely once ``N`` is large.

The test stops at the first unit after which ``LLR >= log((1 - β) / α)``
(H1 accepted) or ``LLR <= log(β / (1 - α))`` (H0 accepted), or at the cap.

Estimates
---------
The Elo estimate is ``elo(μ)`` for the mean per-game score ``μ``, with the
95% interval ``elo(μ ± 1.96 σ / √N)`` and the likelihood of superiority
``LOS = Φ((μ - ½) / (σ / √N))``, ``σ`` being the standard deviation of the
per-unit score. They are not corrected for the bias of the early stop (a
test that stops early on a lucky streak overstates the difference).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist

#: the per-game score of a unit's five outcomes (unit points 0, 0.5, 1, 1.5, 2, halved)
PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
#: the per-game score of one game's three outcomes (loss, draw, win)
TRINOMIAL = (0.0, 0.5, 1.0)
#: fishtest's count for an outcome never observed
EPSILON = 1e-3
Z95 = NormalDist().inv_cdf(0.975)


class Verdict(StrEnum):
    """How a test ended (the values are those of the reports and their JSON)."""

    H1 = "H1"  # the LLR reached the upper bound
    H0 = "H0"  # the LLR reached the lower bound
    INCONCLUSIVE = "inconclusive"  # the cap was reached first
    INTERRUPTED = "interrupted"  # stopped from outside before a verdict


# --- Elo and scores -------------------------------------------------------------


def expected_score(elo: float) -> float:
    """The expected score per game of a player ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of(score: float) -> float:
    """The Elo difference that gives this expected score (±inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's stopping bounds on the LLR: (accept H0 at or below, accept H1 at or above)."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


# --- the likelihood ratio ---------------------------------------------------------


def _regularized(counts: Sequence[float]) -> tuple[float, list[float]]:
    """(N, frequencies) with fishtest's EPSILON for empty outcomes."""
    reg = [max(float(c), EPSILON) for c in counts]
    n = sum(reg)
    return n, [c / n for c in reg]


def secular_root(values: Sequence[float], probs: Sequence[float], s: float, start: float = 0.0) -> float:
    """The root ``x`` of ``Σ p_i d_i / (1 + x d_i) = 0`` with ``d_i = a_i - s``, in the interval
    where every ``1 + x d_i`` (of an outcome with ``p_i > 0``) is positive.

    ``s`` must lie strictly between the smallest and the largest value of positive probability."""
    d = [a - s for a, p in zip(values, probs) if p > 0]
    p = [q for q in probs if q > 0]
    top, bottom = max(d), min(d)
    if top <= 0.0 or bottom >= 0.0:
        raise ValueError(f"the mean {s} is not strictly inside the values of positive probability")
    lo, hi = -1.0 / top, -1.0 / bottom  # the poles: the root is strictly between them
    x = start if lo < start < hi else 0.0
    for _ in range(200):
        f = fp = 0.0
        for pi, di in zip(p, d):
            t = di / (1.0 + x * di)
            f += pi * t
            fp -= pi * t * t
        if f > 0.0:  # f decreases: the root is above x
            lo = x
        elif f < 0.0:
            hi = x
        else:
            return x
        new = x - f / fp
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - x) <= 1e-13 * max(1.0, abs(x)):
            return new
        x = new
    return x


def mle_with_mean(values: Sequence[float], probs: Sequence[float], s: float,
                  start: float = 0.0) -> tuple[list[float], float]:
    """The distribution on ``values`` of mean ``s`` that maximises ``Σ p̂_i log p_i`` (the
    constrained MLE for observed frequencies ``probs``), and its multiplier ``x``."""
    x = secular_root(values, probs, s, start)
    return [p / (1.0 + x * (a - s)) for a, p in zip(values, probs)], x


def llr(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (elo1) against H0 (elo0), exact MLE (see the module)."""
    return _llr(counts, values, expected_score(elo0), expected_score(elo1))[0]


def _llr(counts: Sequence[float], values: Sequence[float], s0: float, s1: float,
         start: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float, float]:
    if sum(counts) <= 0:
        return 0.0, 0.0, 0.0
    n, probs = _regularized(counts)
    x0 = secular_root(values, probs, s0, start[0])
    x1 = secular_root(values, probs, s1, start[1])
    total = sum(p * (math.log1p(x0 * (a - s0)) - math.log1p(x1 * (a - s1))) for a, p in zip(values, probs))
    return n * total, x0, x1


def llr_normalized(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float) -> float:
    """The normal approximation ``N (s1 - s0)(2 μ - s0 - s1) / (2 σ²)`` of :func:`llr`."""
    if sum(counts) <= 0:
        return 0.0
    n, probs = _regularized(counts)
    mu = sum(a * p for a, p in zip(values, probs))
    var = sum(p * (a - mu) ** 2 for a, p in zip(values, probs))
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)


# --- estimates --------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """The candidate's mean per-game score and Elo difference from outcome counts."""

    n: int
    score: float | None  # mean per-game score
    se: float | None  # its standard error
    elo: float | None
    elo_lo: float | None  # the 95% interval
    elo_hi: float | None
    los: float | None  # likelihood of superiority, in [0, 1]


def estimate(counts: Sequence[int], values: Sequence[float] = PENTANOMIAL) -> Estimate:
    n = sum(counts)
    if n == 0:
        return Estimate(0, None, None, None, None, None, None)
    mu = sum(a * c for a, c in zip(values, counts)) / n
    var = sum(c * (a - mu) ** 2 for a, c in zip(values, counts)) / n
    se = math.sqrt(var / n)
    if se > 0.0:
        los = NormalDist().cdf((mu - 0.5) / se)
    else:
        los = 1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5
    return Estimate(n, mu, se, elo_of(mu), elo_of(mu - Z95 * se), elo_of(mu + Z95 * se), los)


# --- the test ---------------------------------------------------------------------


class SPRT:
    """The state of one test: outcome counts, the LLR and its bounds.

    ``values`` are the per-game scores of the outcomes (:data:`PENTANOMIAL` for duplicate
    units, :data:`TRINOMIAL` for single games); :meth:`add` takes an outcome's index."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
                 values: Sequence[float] = PENTANOMIAL):
        check_hypotheses(elo0, elo1, alpha, beta)
        self.elo0, self.elo1, self.alpha, self.beta = float(elo0), float(elo1), float(alpha), float(beta)
        self.values = tuple(values)
        self.counts = [0] * len(self.values)
        self.s0, self.s1 = expected_score(elo0), expected_score(elo1)
        self.lower, self.upper = bounds(alpha, beta)
        self._x = (0.0, 0.0)
        self._llr: float | None = 0.0

    @property
    def n(self) -> int:
        return sum(self.counts)

    def add(self, outcome: int) -> None:
        self.counts[outcome] += 1
        self._llr = None

    def llr(self) -> float:
        if self._llr is None:
            self._llr, x0, x1 = _llr(self.counts, self.values, self.s0, self.s1, self._x)
            self._x = (x0, x1)
        return self._llr

    def verdict(self) -> Verdict | None:
        """H1 or H0 once the LLR has crossed a bound, else None."""
        value = self.llr()
        if value >= self.upper:
            return Verdict.H1
        if value <= self.lower:
            return Verdict.H0
        return None


def check_hypotheses(elo0: float, elo1: float, alpha: float, beta: float) -> None:
    """Raises ValueError unless elo0 < elo1 and 0 < α, β with α + β < 1."""
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise ValueError(f"elo0 must be less than elo1, got elo0 = {elo0}, elo1 = {elo1}")
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"alpha and beta must be in (0, 1) with alpha + beta < 1, got {alpha}, {beta}")


def run_test(draw: Callable[[], int], sprt: SPRT, max_n: int) -> tuple[Verdict, int]:
    """Feed outcomes from ``draw()`` (an outcome index) until a verdict or ``max_n``; the
    verdict (H1, H0 or inconclusive) and how many were used. For simulations."""
    for _ in range(max_n):
        sprt.add(draw())
        verdict = sprt.verdict()
        if verdict is not None:
            return verdict, sprt.n
    return Verdict.INCONCLUSIVE, sprt.n
