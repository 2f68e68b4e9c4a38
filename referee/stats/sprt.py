"""The sequential probability ratio test: is a player stronger than another? Pure statistics, no I/O.

Outcomes
--------
A test counts outcomes, each with a per-game score: :data:`PENTANOMIAL` for duplicate
units of two games on the same deals (the unit's points 0, ½, 1, 1½ or 2, halved: the
five outcomes of fishtest's *pentanomial* model), :data:`TRINOMIAL` for single games
(loss, draw, win). The deals are the same for both games of a unit, so the luck of the
cards mostly cancels within the unit; the pentanomial model measures the variance of units
directly instead of assuming independent games, which is where the savings come from.

Two Elo models
--------------
The hypotheses ``H0: elo = elo0`` against ``H1: elo = elo1`` are stated in one of two units
(:class:`EloModel`), as fishtest's ``elo_model``:

- **logistic** Elo: a difference of ``elo`` gives the candidate the expected score per game
  ``s(elo) = 1 / (1 + 10 ** (-elo / 400))``;
- **normalized** Elo (fishtest's current default; M. Van den Bergh, *Normalized Elo:
  practical*): ``nelo = NELO_PER_NT * (μ - ½) / σ_pg``, the distance of the per-game score
  ``μ`` from ½ in per-game standard deviations ``σ_pg`` (``NELO_PER_NT = 800 / ln 10`` makes
  it close to logistic Elo for independent games without draws). For a pentanomial unit,
  whose mean score has the variance ``σ²``, ``σ_pg = √2 σ``: the correlation of the unit's two
  games is what makes ``σ_pg`` small. The cost of a test in games depends, to first order,
  only on its normalized bounds, whatever the draw rate or the correlation.

The test (GSPRT, as fishtest's ``LLR_logistic`` and ``LLR_normalized``)
----------------------------------------------------------------------
With ``a_i`` the per-game score of outcome ``i`` (0, ¼, ½, ¾, 1: the unit's points over
two) and ``p̂_i`` the observed frequencies of the ``N`` units, the generalized
log-likelihood ratio is

    LLR = N * Σ_i p̂_i * log(p1_i / p0_i)

where ``p0`` and ``p1`` are the **maximum-likelihood** pentanomial distributions under the
constraint of H0, resp. H1:

- logistic: the mean score is ``s(elo0)``, resp. ``s(elo1)``. By Lagrange multipliers the
  constrained MLE is ``p_i = p̂_i / (1 + x * (a_i - s))``, with ``x`` the unique root of the
  secular equation ``Σ_i p̂_i (a_i - s) / (1 + x (a_i - s)) = 0`` in the interval where every
  ``1 + x (a_i - s)`` is positive; the left side is strictly decreasing there, so a
  bracketed Newton iteration finds it (warm started from the previous unit's root, it takes
  two or three steps).
- normalized: the t-value ``(μ - ½) / σ`` of the unit is ``t = nelo / NELO_PER_NT`` times
  √2 (pentanomial; 1 for single games). The MLE (:func:`mle_with_t`, fishtest's
  ``MLE_t_value``) solves the same secular equation for shifted values
  ``a_i - ½ - t σ (1 + ((μ - a_i) / σ)²) / 2`` with ``μ``, ``σ`` of the previous iterate,
  until it stops moving (warm started from the previous unit's distributions).

As in fishtest, an outcome never observed counts 0.001 (so that the MLE exists from the
first unit). These are exact MLEs; :func:`llr_approx` gives fishtest's normal approximation
``LLR ≈ N (s1 - s0)(2 μ - s0 - s1) / (2 σ²)`` (``LLR_alt2``; for normalized Elo with
``s = ½ + nelo σ_pg / NELO_PER_NT``) for comparison; they agree closely once ``N`` is large.

The test stops at the first unit after which ``LLR >= log((1 - β) / α)``
(H1 accepted) or ``LLR <= log(β / (1 - α))`` (H0 accepted), or at the cap.

Estimates
---------
The Elo estimate is ``elo(μ)`` for the mean per-game score ``μ``, with the
95% interval ``elo(μ ± 1.96 σ / √N)`` and the likelihood of superiority
``LOS = Φ((μ - ½) / (σ / √N))``, ``σ`` being the standard deviation of the
per-unit score; the normalized Elo estimate is ``NELO_PER_NT (μ - ½) / σ_pg``
± ``NELO_PER_NT · 1.96 / √games``. These are what the counts say, **not corrected for the
stop**: a test that stops early on a lucky streak overstates the difference.

Estimates corrected for the stop (:func:`stopped_estimate`)
------------------------------------------------------------
As fishtest prints them (its ``sprt.analytics``, after M. Van den Bergh): the LLR is approximated
by a Brownian motion of drift ``(s - (s0 + s1)/2)(s1 - s0)/v`` and variance ``(s1 - s0)²/v`` per unit
(``v``: the per-unit score's variance, ``s``: the true expected score, ``s0``, ``s1`` those of the
hypotheses; fishtest's ``LLR_drift_variance_alt2``), started at 0 between the absorbing bounds
``a`` and ``b``. The test's end is the point ``(T, y)``: ``y`` the approximate LLR after the ``N``
units (``T = N``), or, for a verdict, the bound it crossed at the time the line from the origin
reaches it. The outcomes are ordered as a sequential test's are (stagewise): a worse outcome than
``(T, y)`` is a fail before ``T``, or a path still running at ``T`` below ``y`` (which takes in
every later fail and every later pass after a pass at ``T``). Its probability under the Elo ``e``,

    F(e) = P_e(exit at a by T) + P_e(alive at T, X_T < y),

falls as ``e`` grows; the corrected estimate is the median-unbiased ``e`` with ``F(e) = ½``, the 95%
interval the ``e`` with ``F(e) = 0.975`` and ``0.025``, and the LOS ``F(0)``. ``F`` comes from the
eigenfunction series of the Brownian motion killed at the bounds, or, for short times or strong
drifts (where the series converges slowly or overflows), from Siegmund's approximation by one
reflection at each bound. The estimate is in logistic Elo (the score ``s(e)``), shown in normalized
Elo too (``(s(e) - ½) / σ_pg`` scaled, ``σ_pg`` as measured). The approximation holds for
differences small against the per-game noise; far beyond the bounds it is only qualitative.
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
#: normalized Elo per unit of normalized t-value (fishtest's ``nelo_divided_by_nt``, 800 / ln 10)
NELO_PER_NT = 800.0 / math.log(10.0)
#: the largest normalized Elo of a hypothesis: the t-value MLE starts from the uniform distribution,
#: whose shifted values change sign only up to about 230 (pentanomial; 340 for single games)
MAX_NELO = 200.0


class EloModel(StrEnum):
    """The unit of the hypotheses (the values are the CLI's and the JSON's)."""

    NORMALIZED = "normalized"  # normalized Elo: the score's distance from ½ in per-game standard deviations
    LOGISTIC = "logistic"  # logistic Elo: the expected score s(elo) = 1 / (1 + 10^(-elo/400))


class Verdict(StrEnum):
    """How a test ended (the values are those of the reports and their JSON)."""

    H1 = "H1"  # the LLR reached the upper bound
    H0 = "H0"  # the LLR reached the lower bound
    INCONCLUSIVE = "inconclusive"  # the cap was reached first
    INTERRUPTED = "interrupted"  # stopped from outside before a verdict


# --- Elo and scores -------------------------------------------------------------


def expected_score(elo: float) -> float:
    """The expected score per game of a player ``elo`` points stronger (logistic Elo)."""
    odds: float = 10.0 ** (-elo / 400.0)  # a float's power of a float (mypy's ** gives Any)
    return 1.0 / (1.0 + odds)


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
    return _secular([a - s for a in values], probs, start)


def _secular(shifted: Sequence[float], probs: Sequence[float], start: float = 0.0) -> float:
    """The root ``x`` of ``Σ p_i d_i / (1 + x d_i) = 0`` (``shifted`` holds the ``d_i``) between the poles."""
    if min(probs) > 0:
        d, p = shifted, probs
    else:
        d = [di for di, q in zip(shifted, probs) if q > 0]
        p = [q for q in probs if q > 0]
    top, bottom = max(d), min(d)
    if top <= 0.0 or bottom >= 0.0:
        raise ValueError("the constraint is not strictly inside the values of positive probability")
    lo, hi = -1.0 / top, -1.0 / bottom  # the poles: the root is strictly between them
    x = start if lo < start < hi else 0.0
    pairs = list(zip(p, d))
    for _ in range(200):
        f = fp = 0.0
        for pi, di in pairs:
            t = di / (1.0 + x * di)
            f += pi * t
            fp += pi * t * t
        if f > 0.0:  # f decreases: the root is above x
            lo = x
        elif f < 0.0:
            hi = x
        else:
            return x
        new = x + f / fp  # Newton: f' = -fp
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


def games_per_outcome(values: Sequence[float]) -> int:
    """How many games one outcome stands for: 2 for a pentanomial unit, 1 for a trinomial game."""
    return (len(values) - 1) // 2


def sigma_per_game(values: Sequence[float], probs: Sequence[float]) -> float:
    """fishtest's ``sigma_pg``: the standard deviation of the score **per game**, from the
    distribution of the outcomes (a unit's mean score has the variance ``sigma_pg² / 2``)."""
    mu = sum(a * p for a, p in zip(values, probs))
    var = sum(p * (a - mu) ** 2 for a, p in zip(values, probs))
    return math.sqrt(games_per_outcome(values) * var)


def nelo_to_t(nelo: float, values: Sequence[float]) -> float:
    """The t-value ``(μ - ½) / σ`` of one outcome (σ: the outcome's standard deviation) of a
    normalized Elo: ``nelo / NELO_PER_NT`` per game, times √2 for a pentanomial unit."""
    return nelo / NELO_PER_NT * math.sqrt(games_per_outcome(values))


def mle_with_t(values: Sequence[float], probs: Sequence[float], t: float, ref: float = 0.5,
               start: Sequence[float] | None = None, x: float = 0.0) -> tuple[list[float], float]:
    """The distribution on ``values`` of t-value ``(μ - ref) / σ = t`` that maximises
    ``Σ p̂_i log p_i`` (``probs`` the observed frequencies, all positive): fishtest's
    ``MLE_t_value`` (Van den Bergh, *Normalized Elo: practical*, section 4.1). Each step solves
    the secular equation for the shifted values ``a_i - ref - t σ (1 + ((μ - a_i) / σ)²) / 2``
    with ``μ``, ``σ`` of the previous step's distribution, from ``start`` (default: uniform),
    until the distribution moves by less than 1e-10. Returns it and the last multiplier ``x``
    (``x`` and ``start`` from a previous call warm start the next)."""
    pdf = list(start) if start is not None else [1.0 / len(values)] * len(values)
    for _ in range(100):
        mu = var = 0.0
        for a, p in zip(values, pdf):
            mu += a * p
        for a, p in zip(values, pdf):
            var += p * (a - mu) * (a - mu)
        sigma = math.sqrt(var)
        half_t = 0.5 * t
        shifted = [a - ref - half_t * (sigma + (mu - a) * (mu - a) / sigma) for a in values]
        x = _secular(shifted, probs, x)
        new = [p / (1.0 + x * d) for p, d in zip(probs, shifted)]
        moved = max(abs(u - v) for u, v in zip(new, pdf))
        pdf = new
        if moved < 1e-10:
            break
    return pdf, x


def llr(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float,
        model: EloModel = EloModel.LOGISTIC) -> float:
    """The generalized log-likelihood ratio of H1 (elo1) against H0 (elo0), exact MLE (see the
    module), as fishtest's ``LLR_logistic`` or ``LLR_normalized`` for the model's Elo."""
    if model is EloModel.NORMALIZED:
        return _llr_t(counts, values, nelo_to_t(elo0, values), nelo_to_t(elo1, values))[0]
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


_Start = tuple[list[float], float]  # a distribution and a multiplier, to warm start mle_with_t


def _llr_t(counts: Sequence[float], values: Sequence[float], t0: float, t1: float,
           start: tuple[_Start, _Start] | None = None) -> tuple[float, _Start, _Start]:
    if sum(counts) <= 0:
        return 0.0, ([], 0.0), ([], 0.0)
    n, probs = _regularized(counts)
    m0 = mle_with_t(values, probs, t0, 0.5, *(start[0] if start else (None, 0.0)))
    m1 = mle_with_t(values, probs, t1, 0.5, *(start[1] if start else (None, 0.0)))
    return n * sum(p * (math.log(q1) - math.log(q0)) for p, q0, q1 in zip(probs, m0[0], m1[0])), m0, m1


def score_of(elo: float, model: EloModel, sigma_pg: float) -> float:
    """The expected score per game of a difference of ``elo`` in the model (normalized Elo needs
    the per-game standard deviation; fishtest's ``sprt.elo_to_score``)."""
    if model is EloModel.NORMALIZED:
        return 0.5 + elo / NELO_PER_NT * sigma_pg
    return expected_score(elo)


def llr_approx(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float,
               model: EloModel = EloModel.LOGISTIC) -> float:
    """The normal (Brownian) approximation ``N (s1 - s0)(2 μ - s0 - s1) / (2 σ²)`` of the LLR
    (fishtest's ``LLR_alt2``; ``μ``, ``σ²``: the mean and variance of an outcome's score), with
    ``s0``, ``s1`` the scores of elo0 and elo1 in the model, as fishtest's ``sprt`` class uses it."""
    if sum(counts) <= 0:
        return 0.0
    n, probs = _regularized(counts)
    mu = sum(a * p for a, p in zip(values, probs))
    var = sum(p * (a - mu) ** 2 for a, p in zip(values, probs))
    sigma_pg = sigma_per_game(values, probs)
    s0, s1 = score_of(elo0, model, sigma_pg), score_of(elo1, model, sigma_pg)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)


# --- estimates --------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """The candidate's mean per-game score and Elo difference, in both models, from outcome counts."""

    n: int
    score: float | None  # mean per-game score
    se: float | None  # its standard error
    elo: float | None  # logistic Elo
    elo_lo: float | None  # the 95% interval
    elo_hi: float | None
    los: float | None  # likelihood of superiority, in [0, 1]
    nelo: float | None = None  # normalized Elo
    nelo_lo: float | None = None  # the 95% interval
    nelo_hi: float | None = None


def estimate(counts: Sequence[int], values: Sequence[float] = PENTANOMIAL) -> Estimate:
    """The estimates of the module docstring: ``elo(μ)`` with ``elo(μ ± 1.96 se)``, and the
    normalized Elo ``NELO_PER_NT (μ - ½) / σ_pg`` ± ``NELO_PER_NT · 1.96 / √games`` (the same
    interval of ``μ`` divided by the per-game standard deviation; None while it is 0)."""
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
    nelo = nelo_lo = nelo_hi = None
    sigma_pg = math.sqrt(games_per_outcome(values) * var)
    if sigma_pg > 0.0:
        nelo = NELO_PER_NT * (mu - 0.5) / sigma_pg
        half = NELO_PER_NT * Z95 / math.sqrt(n * games_per_outcome(values))
        nelo_lo, nelo_hi = nelo - half, nelo + half
    return Estimate(n, mu, se, elo_of(mu), elo_of(mu - Z95 * se), elo_of(mu + Z95 * se), los, nelo, nelo_lo, nelo_hi)


# --- the test ---------------------------------------------------------------------


class SPRT:
    """The state of one test: outcome counts, the LLR and its bounds.

    ``values`` are the per-game scores of the outcomes (:data:`PENTANOMIAL` for duplicate
    units, :data:`TRINOMIAL` for single games); :meth:`add` takes an outcome's index.
    ``elo0`` and ``elo1`` are in the ``model``'s Elo."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
                 values: Sequence[float] = PENTANOMIAL, model: EloModel = EloModel.LOGISTIC):
        model = EloModel(model)
        check_hypotheses(elo0, elo1, alpha, beta, model)
        self.elo0, self.elo1, self.alpha, self.beta = float(elo0), float(elo1), float(alpha), float(beta)
        self.model = model
        self.values = tuple(values)
        self.counts = [0] * len(self.values)
        self.s0, self.s1 = expected_score(elo0), expected_score(elo1)  # logistic: the scores of H0 and H1
        self.t0, self.t1 = nelo_to_t(elo0, self.values), nelo_to_t(elo1, self.values)  # normalized: t-values
        self.lower, self.upper = bounds(alpha, beta)
        self._x: tuple[float, float] = (0.0, 0.0)  # warm starts of the logistic MLEs
        self._pdfs: tuple[_Start, _Start] | None = None  # and of the normalized ones
        self._llr: float | None = 0.0

    @property
    def n(self) -> int:
        return sum(self.counts)

    def add(self, outcome: int) -> None:
        self.counts[outcome] += 1
        self._llr = None

    def llr(self) -> float:
        if self._llr is None:
            if self.model is EloModel.NORMALIZED:
                self._llr, p0, p1 = _llr_t(self.counts, self.values, self.t0, self.t1, self._pdfs)
                self._pdfs = (p0, p1)
            else:
                self._llr, x0, x1 = _llr(self.counts, self.values, self.s0, self.s1, self._x)
                self._x = (x0, x1)
        return self._llr

    def llr_approx(self) -> float:
        """The normal approximation of :meth:`llr` (:func:`llr_approx`)."""
        return llr_approx(self.counts, self.values, self.elo0, self.elo1, self.model)

    def verdict(self) -> Verdict | None:
        """H1 or H0 once the LLR has crossed a bound, else None."""
        value = self.llr()
        if value >= self.upper:
            return Verdict.H1
        if value <= self.lower:
            return Verdict.H0
        return None


def check_hypotheses(elo0: float, elo1: float, alpha: float, beta: float,
                     model: EloModel = EloModel.LOGISTIC) -> None:
    """Raises ValueError unless elo0 < elo1 and 0 < α, β with α + β < 1, and, in normalized Elo,
    both within ±:data:`MAX_NELO`."""
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise ValueError(f"elo0 must be less than elo1, got elo0 = {elo0}, elo1 = {elo1}")
    if model is EloModel.NORMALIZED and max(abs(elo0), abs(elo1)) > MAX_NELO:
        raise ValueError(f"normalized Elo hypotheses must lie within ±{MAX_NELO:g} (a larger difference is "
                         f"decided in a few dozen units anyway), got elo0 = {elo0}, elo1 = {elo1}")
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


# --- estimates corrected for the stop ----------------------------------------------


def _exp_phi(log_factor: float, z: float) -> float:
    """``exp(log_factor) * Φ(z)`` without overflow (Φ's lower tail taken in logs)."""
    if z > -30.0:
        phi = 0.5 * math.erfc(-z / math.sqrt(2.0))
        return 0.0 if phi == 0.0 else math.exp(min(700.0, log_factor + math.log(phi)))
    log_phi = -0.5 * z * z - math.log(-z) - 0.5 * math.log(2.0 * math.pi) + math.log1p(-1.0 / (z * z))
    return math.exp(min(700.0, log_factor + log_phi))


def _sine_integral(c: float, k: float, u: float) -> float:
    """∫_0^u e^(c z) sin(k z) dz."""
    return (math.exp(c * u) * (c * math.sin(k * u) - k * math.cos(k * u)) + k) / (c * c + k * k)


def worse_outcome(a: float, b: float, drift: float, variance: float, t: float, y: float) -> float:
    """For a Brownian motion from 0 with this drift and variance per unit of time, absorbed at
    ``a < 0 < b``: the probability of an outcome worse than ending at ``(t, y)``, ``a <= y <= b``
    (exit at ``a`` by ``t``, or alive at ``t`` below ``y``; see the module docstring)."""
    width = b - a
    gamma = drift / variance
    if variance * t / (width * width) < 1e-2 or abs(gamma * width) > 15.0:
        # Siegmund: one reflection at each bound (short times, strong drifts)
        sd = math.sqrt(variance * t)
        z = (y - drift * t) / sd
        za = (-y + drift * t + 2.0 * a) / sd
        zb = (y - drift * t - 2.0 * b) / sd
        value = _exp_phi(0.0, z) + _exp_phi(2.0 * gamma * a, za) - _exp_phi(2.0 * gamma * b, zb)
        return min(1.0, max(0.0, value))
    # the series: the motion shifted to [0, width], started at x0 = -a
    x0, y0 = -a, y - a
    if abs(gamma * width) < 1e-9:
        exit_a = 1.0 - x0 / width

        def exit_a_integral(k: float) -> float:  # ∫_0^w sin(k z) (1 - z / w) dz
            return 1.0 / k - math.sin(k * width) / (k * k * width)
    else:
        e = math.exp(-2.0 * gamma * width)
        exit_a = (math.exp(-2.0 * gamma * x0) - e) / (1.0 - e)

        def exit_a_integral(k: float) -> float:  # ∫_0^w e^(γz) sin(k z) P_z(exit at 0) dz
            return (_sine_integral(-gamma, k, width) - e * _sine_integral(gamma, k, width)) / (1.0 - e)
    base = 0.5 * gamma * gamma * variance
    total = 0.0
    for n in range(1, 10_000):
        k = n * math.pi / width
        decay = math.exp(-(0.5 * k * k * variance + base) * t)
        term = decay * math.sin(k * x0) * (_sine_integral(gamma, k, y0) - exit_a_integral(k))
        total += term
        if decay < 1e-14:
            break
    value = exit_a + 2.0 / width * math.exp(-gamma * x0) * total
    return min(1.0, max(0.0, value))


@dataclass(frozen=True)
class StoppedEstimate:
    """The estimates of a test corrected for its stop (:func:`stopped_estimate`): logistic and
    normalized Elo, each with its 95% interval, and the LOS; ``clamped`` when the LLR overshot its
    bound by more than 3% (the Brownian approximation is then rougher)."""

    elo: float
    elo_lo: float
    elo_hi: float
    los: float
    nelo: float | None
    nelo_lo: float | None
    nelo_hi: float | None
    clamped: bool


def stopped_estimate(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float,
                     alpha: float, beta: float, model: EloModel = EloModel.LOGISTIC,
                     verdict: Verdict | None = None, confidence: float = 0.95) -> StoppedEstimate | None:
    """The median-unbiased Elo estimate, its interval and the LOS of a test that ended with these
    ``counts`` (the verdict, if any, places the end on its bound), by the Brownian approximation of
    the module docstring; None before the first outcome or without variance."""
    if sum(counts) <= 0:
        return None
    n, probs = _regularized(counts)
    mu = sum(a * p for a, p in zip(values, probs))
    var = sum(p * (a - mu) ** 2 for a, p in zip(values, probs))
    if var <= 0.0:
        return None
    sigma_pg = sigma_per_game(values, probs)
    s0, s1 = score_of(elo0, model, sigma_pg), score_of(elo1, model, sigma_pg)
    lower, upper = bounds(alpha, beta)
    slope = (mu - (s0 + s1) / 2.0) * (s1 - s0) / var
    t, y = n, n * slope
    clamped = y > 1.03 * upper or y < 1.03 * lower
    end = upper if verdict is Verdict.H1 or y > upper else lower if verdict is Verdict.H0 or y < lower else None
    if end is not None:
        y = end
        if slope * end > 0:
            t = min(n, end / slope)
    variance = (s1 - s0) ** 2 / var

    def worse(elo: float) -> float:
        drift = (expected_score(elo) - (s0 + s1) / 2.0) * (s1 - s0) / var
        return worse_outcome(lower, upper, drift, variance, t, y)

    def solve(p: float) -> float:  # the Elo at which a worse outcome has probability p (worse falls)
        lo, hi = -1000.0, 1000.0
        if worse(lo) <= p:
            return lo
        if worse(hi) >= p:
            return hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if worse(mid) > p else (lo, mid)
        return 0.5 * (lo + hi)

    tail = (1.0 - confidence) / 2.0
    elo, elo_lo, elo_hi = solve(0.5), solve(1.0 - tail), solve(tail)

    def normalized(e: float) -> float | None:
        return None if sigma_pg <= 0 else NELO_PER_NT * (expected_score(e) - 0.5) / sigma_pg

    return StoppedEstimate(elo, elo_lo, elo_hi, worse(0.0), normalized(elo), normalized(elo_lo), normalized(elo_hi),
                           clamped)
