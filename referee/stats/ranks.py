"""Rank confidence from a rating fit: P(a above b), P(rank = k), top-k, and whether an order is settled.

Pure computation, no I/O. :func:`referee.stats.ratings.rank_posterior` builds a :class:`RankPosterior`
from outcomes (one fit, no bootstrap: cheap enough to call after every deal set);
:func:`referee.stats.ratings.rate` keeps one in :attr:`Ratings.posterior` for its LOS.

The posterior
-------------
**The likelihood.** The fitted ratings ``x̂`` are taken to be the true ratings plus an error
distributed as a multivariate **Student t** with ``D - 1`` degrees of freedom (``D`` deal sets, the
unit of resampling) and the scale matrix

    Σ_w = the smallest matrix above both Σ_info and Σ_robust (in the positive semi-definite order)

where ``Σ_info`` is the inverse observed information of the fit (independent games) and
``Σ_robust`` the cluster-robust sandwich over deal sets (how results really vary from deal to
deal), the same two that widen the rating intervals (:mod:`referee.stats.ratings`). In the
metric of ``Σ_info`` (``Σ_info = L Lᵀ``), ``M = L⁻¹ Σ_robust L⁻ᵀ = Q Λ Qᵀ`` and
``Σ_w = L Q max(Λ, 1) Qᵀ Lᵀ``: every contrast of ratings has at least the variance of each.
The t with ``D - 1`` degrees of freedom is the intervals' small-sample widening (a robust variance
from ``D`` deal sets is itself uncertain); ``Σ_info`` is the floor (after a sweep the robust
variance is zero, and the posterior must not claim certainty from that).

**The prior: how far apart the bots are.** The ratings' deviations from their average are
``Normal(0, τ²)`` each, with the spread ``τ`` unknown, uniform from 0 to ``max(2000 Elo, 10
standard errors)``, and learned from the table: bots that the results cannot tell apart are pulled
together, a field spread wide is left alone. Without it, a flat prior, the rare tables in which
close neighbours reach 95% would be wrong more than 5% of the time (the sign error of a test at
low power; docs/tournaments.md measures both). In the Helmert contrasts ``z = H x̂`` (orthonormal,
orthogonal to the average) with ``H Σ_w Hᵀ = U diag(d) Uᵀ`` and ``ω = Uᵀ z``, given ``τ`` the
contrasts' posterior is independent along ``U``: mean ``s_k ω_k`` and variance ``d_k s_k``, with
``s_k = τ² / (d_k + τ²)``; the weight of ``τ`` is its marginal likelihood
``Π_k (d_k + τ²)^(-1/2) exp(-ω_k² / 2(d_k + τ²))`` on a fine grid (:data:`TAU_POINTS` points),
averaged over :data:`TAU_NODES` nodes of equal weight at its quantiles. Given ``τ`` the
Student scale is kept (an approximation: the t does not mix exactly with a normal prior).

**What it gives.** ``P(a above b)`` = the weighted average over ``τ`` of
``T_{D-1}(mean(R_a - R_b) / sd(R_a - R_b))``, exactly (a contrast of a multivariate t is a t); any
contrast of ratings likewise (:meth:`RankPosterior.contrast`: a team's average). A difference of the
fit below :data:`ROUND_OFF_ELO` is a tie, ½: identical results give ½, never a round-off's "100%".
The probabilities of ranks (``P(rank = k)``, ``P(rank <= k)``, the joint probability of an order)
come from :data:`DRAWS` seeded, antithetic draws of the same distribution (their Monte Carlo error
is below 1.1 points). :meth:`RankPosterior.difference` gives a difference of the fit and its variance
under ``Σ_w`` alone (the likelihood, no prior): what a stopping rule's confidence sequence takes
(:mod:`referee.stats.sequences`).

**Computed with numpy**, every pair and every draw at once: a scheduler asks after every deal set
(``python -m referee.tools.posterior_cost`` measures it against the pure-Python loops it replaced).

Measured calibration: ``python -m referee.tools.calibration`` and docs/tournaments.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: differences of the fit smaller than this (Elo) are round-off: P(a above b) = 1/2
ROUND_OFF_ELO = 1e-6
#: draws of the posterior behind rank probabilities (antithetic pairs: half as many normal vectors)
DRAWS = 4000
#: the fine grid of the spread τ, and the nodes of equal weight the probabilities average over
TAU_POINTS = 1000
TAU_NODES = 16
#: the spread's prior is uniform up to the larger of these (Elo) and this many standard errors
TAU_MAX_ELO = 2000.0
TAU_MAX_SE = 10.0

Matrix = Sequence[Sequence[float]] | np.ndarray


# --- Student's t ------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                    -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def beta_cdf(x: float, a: float, b: float) -> float:
    """P(X <= x) for X ~ Beta(a, b) (a, b > 0): the regularized incomplete beta function."""
    return _betainc(a, b, x)


def beta_quantile(q: float, a: float, b: float) -> float:
    """The ``q`` quantile of Beta(a, b) (bisection, to 1e-12)."""
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _betainc(a, b, mid) < q else (lo, mid)
    return 0.5 * (lo + hi)


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``math.inf``: the normal)."""
    if math.isinf(df):
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    tail = 0.5 * _betainc(0.5 * df, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _betacf_array(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`_betacf` of every element at once (the same steps; an element stops once converged)."""
    tiny = 1e-300
    h = np.empty_like(x)
    live: np.ndarray = np.arange(x.size)  # the elements still iterating
    a, b, x = a.ravel(), b.ravel(), x.ravel()
    c = np.ones_like(x)
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / np.where(np.abs(d) > tiny, d, tiny)
    acc = d.copy()
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                    -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / np.where(np.abs(d) > tiny, d, tiny)
            c = 1.0 + num / c
            c = np.where(np.abs(c) > tiny, c, tiny)
            acc *= d * c
        going = np.abs(d * c - 1.0) >= 1e-15
        if not going.all():
            h.flat[live[~going]] = acc[~going]
            live, a, b, x, c, d, acc = (v[going] for v in (live, a, b, x, c, d, acc))
            if not live.size:
                break
    h.flat[live] = acc
    return h


def _betainc_array(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """:func:`_betainc` of every element of ``x`` (``a``, ``b`` shared)."""
    inside = (x > 0.0) & (x < 1.0)
    xs = np.where(inside, x, 0.5)
    front = np.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * np.log(xs) + b * np.log1p(-xs))
    swap = xs >= (a + 1.0) / (a + b + 2.0)
    aa, bb = np.where(swap, b, a), np.where(swap, a, b)
    cf = _betacf_array(aa, bb, np.where(swap, 1.0 - xs, xs))
    value = np.where(swap, 1.0 - front * cf / b, front * cf / a)
    return np.where(inside, value, np.where(x <= 0.0, 0.0, 1.0))


#: up to this many degrees of freedom, :func:`t_cdf_array` sums the t distribution's finite series
#: (fewer operations); beyond, it takes the incomplete beta function's continued fraction
SERIES_DF = 500


def t_cdf_array(t: np.ndarray, df: float) -> np.ndarray:
    """:func:`t_cdf` of every element of ``t`` (agreeing with it to about 1e-11)."""
    t = np.asarray(t, dtype=float)
    if math.isinf(df):
        return 0.5 * np.array([math.erfc(-v / math.sqrt(2.0)) for v in t.ravel()]).reshape(t.shape)
    if df == int(df) and df <= SERIES_DF:
        return _t_cdf_series(t, int(df))
    tail = 0.5 * _betainc_array(0.5 * df, 0.5, df / (df + t * t))
    return np.where(t > 0, 1.0 - tail, tail)


def _t_cdf_series(t: np.ndarray, df: int) -> np.ndarray:
    """Student's t distribution function for a whole number of degrees of freedom, by its finite
    series (Abramowitz and Stegun 26.7.3 and 26.7.4): with ``θ = atan(t / √df)`` and
    ``c = cos²θ``, ``P(|T| < t)`` is ``sin θ (1 + c/2 + (1·3)/(2·4) c² + ...)`` for an even ``df``,
    ``(2/π) (θ + sin θ cos θ (1 + (2/3) c + (2·4)/(3·5) c² + ...))`` for an odd one, ``df/2`` terms
    at most (the sum stops once they no longer count)."""
    c = df / (df + t * t)
    sine = t / np.sqrt(df + t * t)
    term, total = np.ones_like(t), np.ones_like(t)
    odd = df % 2 == 1
    for k in range(1, (df - 1) // 2 if odd else df // 2):
        term = term * c * ((2 * k) / (2 * k + 1) if odd else (2 * k - 1) / (2 * k))
        total += term
        if k % 8 == 0 and (term < 1e-17 * total).all():
            break
    if not odd:
        even: np.ndarray = 0.5 + 0.5 * sine * total
        return even
    theta = np.arctan(t / math.sqrt(df))
    return 0.5 + (theta + (sine * np.sqrt(c) * total if df > 1 else 0.0)) / math.pi


# --- the covariances ----------------------------------------------------------------------------


def loewner_max(info: Matrix, robust: Matrix) -> np.ndarray:
    """A factor F (Σ_w = F Fᵀ) of the smallest matrix above ``info`` (positive definite) and
    ``robust`` (positive semi-definite) in the metric of ``info`` (see the module docstring)."""
    low = np.linalg.cholesky(np.asarray(info, dtype=float))
    half = np.linalg.solve(low, np.asarray(robust, dtype=float))  # L⁻¹ R
    m = np.linalg.solve(low, half.T)  # L⁻¹ (L⁻¹ R)ᵀ = L⁻¹ R L⁻ᵀ (R symmetric)
    values, q = np.linalg.eigh(0.5 * (m + m.T))
    factor: np.ndarray = (low @ q) * np.sqrt(np.maximum(values, 1.0))
    return factor


def helmert(n: int) -> np.ndarray:
    """``n - 1`` orthonormal rows orthogonal to (1, ..., 1): the differences from the average."""
    rows = np.zeros((max(n - 1, 0), n))
    for k in range(1, n):
        rows[k - 1, :k] = 1.0
        rows[k - 1, k] = -float(k)
        rows[k - 1] /= math.sqrt(k * (k + 1))
    return rows


# --- the posterior ----------------------------------------------------------------------------


def _spread_nodes(d: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """The τ² of the spread's TAU_NODES nodes of equal weight: its posterior on a fine grid of
    TAU_POINTS values, each node at the midpoint of a quantile (a quadrature whose error on the
    probabilities is a few tenths of a point, measured against the fine grid)."""
    top = max(TAU_MAX_ELO, TAU_MAX_SE * math.sqrt(max(d.max(initial=0.0), 0.0)))
    taus = (np.arange(TAU_POINTS) + 0.5) * top / TAU_POINTS
    total = d[None, :] + (taus * taus)[:, None]
    logs = -0.5 * (np.log(total) + omega[None, :] ** 2 / total).sum(axis=1)
    weights = np.exp(logs - logs.max())
    acc = np.cumsum(weights / weights.sum())
    at = np.searchsorted(acc, (np.arange(TAU_NODES) + 0.5) / TAU_NODES, side="left")
    return taus[np.minimum(at, TAU_POINTS - 1)] ** 2  # past the end: round-off at the top


def _shrinkage(t2: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``s_k = τ² / (d_k + τ²)`` for each τ² (rows) and contrast (columns): how much of each contrast
    the prior of spread ``τ`` keeps (1 for τ = ∞, no prior)."""
    t2 = np.asarray(t2, dtype=float)[:, None]
    flat = np.isinf(t2)
    total = d[None, :] + np.where(flat, 1.0, t2)
    return np.where(flat, 1.0, np.where(total > 0, t2 / np.where(total > 0, total, 1.0), 0.0))


@dataclass(frozen=True, eq=False)
class RankPosterior:
    """The ratings' posterior (see the module docstring). ``names`` best first by the fit, its
    ``elo``; each player's row of ``Hᵀ U`` (``rows``), the eigenvalues ``d`` and coordinates
    ``omega`` of the contrasts, the spread's ``(weight, τ²)`` nodes (None: found from ``d`` and
    ``omega`` when first asked, :func:`_spread_nodes`), the degrees of freedom."""

    names: tuple[str, ...]
    elo: Any  # (n,) array
    rows: Any  # (n, n - 1) array
    d: Any  # (n - 1,) array
    omega: Any  # (n - 1,) array
    spread: tuple[tuple[float, float], ...] | None
    df: int
    seed: int = 0
    draws: int = DRAWS
    #: the fit it came from (:class:`referee.stats.ratings.Fit`, with the results), whose score tests a
    #: stopping rule asks; None for the standings' posterior
    fit: Any = field(default=None, repr=False)
    _index: dict[str, int] = field(init=False, repr=False)
    _tests: dict[tuple[str, str, float], tuple[float, float]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = len(self.names)
        for name, shape in (("elo", (n,)), ("rows", (n, max(n - 1, 0))), ("d", (max(n - 1, 0),)),
                            ("omega", (max(n - 1, 0),))):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=float).reshape(shape))
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "_index", {name: i for i, name in enumerate(self.names)})
        object.__setattr__(self, "_tests", {})

    @classmethod
    def of(cls, names: Sequence[str], elo: Sequence[float] | np.ndarray, info: Matrix, robust: Matrix, df: int,
           seed: int = 0, prior: bool = True, fit: Any = None) -> RankPosterior:
        """From the fit's ratings and its two covariances (same units); ``prior=False``: no prior
        on the spread (a flat one, ``τ = ∞``: the likelihood alone, for comparison)."""
        n = len(names)
        ratings = np.asarray(elo, dtype=float)
        order = sorted(range(n), key=lambda i: (-ratings[i], names[i]))
        f = loewner_max(info, robust)[order]  # Σ_w = F Fᵀ, best first
        x = ratings[order]
        h = helmert(n)
        hf = h @ f
        d, u = np.linalg.eigh(hf @ hf.T) if n > 1 else (np.zeros(0), np.zeros((0, 0)))
        d = np.maximum(d, 0.0)
        omega = u.T @ (h @ x)
        rows = h.T @ u
        spread = None if prior and n > 1 else ((1.0, math.inf),)  # None: the prior's, when first asked
        return cls(tuple(names[i] for i in order), x, rows, d, omega, spread, df, seed, fit=fit)

    # --- exact probabilities --------------------------------------------------------------------

    @functools.cached_property
    def _nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """The spread's weights, and the shrinkage of every contrast at each node (nodes × contrasts)."""
        spread = self.spread
        if spread is None:
            spread = tuple((1.0 / TAU_NODES, float(t2)) for t2 in _spread_nodes(self.d, self.omega))
            object.__setattr__(self, "spread", spread)
        weights = np.array([w for w, _ in spread])
        return weights, _shrinkage(np.array([t2 for _, t2 in spread]), self.d)

    def _probabilities(self, v: np.ndarray, fitted: np.ndarray) -> np.ndarray:
        """P(v · R > 0) for each contrast ``v`` (rows of ``v``: coefficients of the contrasts ``U``),
        ``fitted`` the fit's value of each (round-off: ½)."""
        weights, s = self._nodes
        mean = (v * self.omega) @ s.T  # contrasts × nodes
        var = (v * v * self.d) @ s.T
        p = np.where(var > 0, t_cdf_array(mean / np.sqrt(np.where(var > 0, var, 1.0)), self.df),
                     0.5 + np.copysign(0.5, mean))
        return np.where(np.abs(fitted) < ROUND_OFF_ELO, 0.5, p @ weights)

    def contrast(self, weights: Mapping[str, float]) -> float:
        """P(Σ weights[name] · R_name > 0): with weights summing to 0 (one team's average minus
        another's), the probability that the first side is the stronger. A fit's value of the
        contrast below :data:`ROUND_OFF_ELO` is a tie, ½."""
        c = np.zeros(len(self.names))
        for name, w in weights.items():
            c[self._index[name]] += w
        return float(self._probabilities((c @ self.rows)[None, :], np.array([c @ self.elo]))[0])

    @functools.cached_property
    def _matrix(self) -> np.ndarray:
        """P(row above column) for the players above the diagonal (the fit's order)."""
        n = len(self.names)
        i, j = np.triu_indices(n, 1)
        out = np.full((n, n), 0.5)
        out[i, j] = self._probabilities(self.rows[i] - self.rows[j], self.elo[i] - self.elo[j])
        return out

    def above(self, a: str, b: str) -> float:
        """P(a is rated above b); a tie (a difference of the fit below :data:`ROUND_OFF_ELO`) is ½."""
        i, j = self._index[a], self._index[b]
        return float(self._matrix[i, j]) if i < j else 1.0 - float(self._matrix[j, i])

    def matrix(self) -> dict[str, dict[str, float]]:
        """``out[a][b]`` = P(a above b) for every two players, best first."""
        return {a: {b: self.above(a, b) for b in self.names if b != a} for a in self.names}

    def adjacent(self) -> list[float]:
        """P(each player above the next one in the fit's order)."""
        return [self.above(a, b) for a, b in zip(self.names, self.names[1:])]

    def test(self, a: str, b: str) -> Callable[[float], tuple[float, float]]:
        """The test of ``R_a - R_b`` at a hypothesis (Elo) that a stopping rule asks
        (:data:`referee.stats.sequences.Test`): the fit's score test when the posterior has its fit
        (:meth:`referee.stats.ratings.Fit.score_test`), else the Wald test of :meth:`difference`."""
        if self.fit is not None:
            def score(c: float) -> tuple[float, float]:  # kept: the rule and the scheduler ask the same
                if (a, b, c) not in self._tests:
                    self._tests[a, b, c] = self.fit.score_test(a, b, c)
                return self._tests[a, b, c]
            return score
        diff, variance = self.difference(a, b)
        return lambda c: ((diff - c) / math.sqrt(variance), variance)

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """The fit's ``R_a - R_b`` and its variance under ``Σ_w`` (the likelihood alone, no prior on
        the spread: a stopping rule's confidence sequence takes these, :mod:`referee.stats.sequences`)."""
        i, j = self._index[a], self._index[b]
        v = self.rows[i] - self.rows[j]
        return float(self.elo[i] - self.elo[j]), float(v * v @ self.d)

    # --- draws ---------------------------------------------------------------------------------

    @functools.cached_property
    def _order(self) -> np.ndarray:
        """The players (their indices) from the best down (columns) in each draw (rows)."""
        rng = np.random.default_rng([self.seed % 2**63, 0x72616E6B])  # "rank": draws of their own stream
        half = max(1, self.draws // 2)
        weights, s = self._nodes
        if weights.min() == weights.max():  # the spread's nodes, of equal weights
            node = rng.integers(len(weights), size=half)
        else:
            node = rng.choice(len(weights), size=half, p=weights / weights.sum())
        scale = np.sqrt(self.df / rng.chisquare(self.df, size=half))
        noise = rng.standard_normal((half, len(self.d)))  # in place from here: large arrays are costly to make
        noise *= np.sqrt(self.d * s)[node]  # each draw's node's
        noise *= scale[:, None]
        spread = noise @ self.rows.T
        centre = (self.elo.mean() + (s * self.omega) @ self.rows.T)[node]  # each node's mean, per player
        x = np.empty((2 * half, len(self.names)))
        np.subtract(spread, centre, out=x[:half])  # minus the ratings, antithetic pairs: the best sorts first
        np.add(spread, centre, out=x[half:])
        np.negative(x[half:], out=x[half:])
        return np.argsort(x, axis=1, kind="stable")

    def rank_probabilities(self) -> dict[str, list[float]]:
        """``out[name][k]``: P(name has rank k + 1), from the draws."""
        n = len(self.names)
        order = self._order  # order[draw, rank] = player: count each (player, rank)
        counts = np.bincount((order * n + np.arange(n)).ravel(), minlength=n * n).reshape(n, n) / len(order)
        return {name: counts[i].tolist() for i, name in enumerate(self.names)}

    def top(self) -> dict[str, list[float]]:
        """``out[name][k]``: P(name is among the top k + 1)."""
        return {name: np.cumsum(probs).tolist() for name, probs in self.rank_probabilities().items()}

    def p_top(self, k: int) -> float:
        """The joint probability that the first ``k`` players of the fit's order are the top ``k``,
        in that order (``k = len(names)``: the whole order)."""
        k = min(k, len(self.names))
        return float((self._order[:, :k] == np.arange(k)).all(axis=1).mean())

    def settled(self, confidence: float, top: int | None = None) -> bool:
        """Whether the order is settled at ``confidence``: every adjacent pair (``top`` None), or
        the top ``top`` players and their order (jointly, :meth:`p_top`)."""
        if top is None:
            return all(p >= confidence for p in self.adjacent())
        return self.p_top(top) >= confidence
