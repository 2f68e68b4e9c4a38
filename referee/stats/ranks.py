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
fit below :data:`TIE_ELO` is a tie, ½: identical results give ½, never a round-off's "100%". The
probabilities of ranks (``P(rank = k)``, ``P(rank <= k)``, the joint probability of an order) come
from :data:`DRAWS` seeded, antithetic draws of the same distribution (their Monte Carlo error is
below 1.1 points).

Measured calibration: ``python -m referee.tools.calibration`` and docs/tournaments.md.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import mul

#: differences of ratings smaller than this (Elo) are ties: P(a above b) = 1/2
TIE_ELO = 1e-6
#: draws of the posterior behind rank probabilities (antithetic pairs: half as many normal vectors)
DRAWS = 4000
#: the fine grid of the spread τ, and the nodes of equal weight the probabilities average over
TAU_POINTS = 1000
TAU_NODES = 16
#: the spread's prior is uniform up to the larger of these (Elo) and this many standard errors
TAU_MAX_ELO = 2000.0
TAU_MAX_SE = 10.0

Matrix = list[list[float]]


# --- Student's t ------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
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


# --- small dense linear algebra (pure Python: n is the number of bots) ---------------------------


def cholesky(a: Sequence[Sequence[float]]) -> Matrix:
    """The lower factor L of a symmetric positive definite A = L Lᵀ."""
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if s <= 0.0:
                    raise ArithmeticError("matrix not positive definite")
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return low


def _solve_lower(low: Matrix, b: Sequence[float]) -> list[float]:
    y = list(b)
    for i in range(len(y)):
        y[i] = (y[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    return y


def symmetric_eigen(a: Sequence[Sequence[float]], sweeps: int = 60) -> tuple[list[float], Matrix]:
    """Eigenvalues and eigenvectors (the columns of Q) of a symmetric matrix (cyclic Jacobi)."""
    n = len(a)
    m = [list(row) for row in a]
    q = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for _ in range(sweeps):
        off = sum(m[i][j] ** 2 for i in range(n) for j in range(i + 1, n))
        if off <= 1e-30 * max(1e-300, sum(m[i][i] ** 2 for i in range(n))):
            break
        for p in range(n - 1):
            for r in range(p + 1, n):
                if abs(m[p][r]) < 1e-300:
                    continue
                theta = (m[r][r] - m[p][p]) / (2.0 * m[p][r])
                t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):  # columns p, r of m
                    mkp, mkr = m[k][p], m[k][r]
                    m[k][p], m[k][r] = c * mkp - s * mkr, s * mkp + c * mkr
                for k in range(n):  # rows p, r
                    mpk, mrk = m[p][k], m[r][k]
                    m[p][k], m[r][k] = c * mpk - s * mrk, s * mpk + c * mrk
                for k in range(n):
                    qkp, qkr = q[k][p], q[k][r]
                    q[k][p], q[k][r] = c * qkp - s * qkr, s * qkp + c * qkr
    return [m[i][i] for i in range(n)], q


def loewner_max(info: Sequence[Sequence[float]], robust: Sequence[Sequence[float]]) -> Matrix:
    """A factor F (Σ_w = F Fᵀ) of the smallest matrix above ``info`` (positive definite) and
    ``robust`` (positive semi-definite) in the metric of ``info`` (see the module docstring)."""
    n = len(info)
    low = cholesky(info)
    # M = L⁻¹ R L⁻ᵀ: solve for L⁻¹ R (columns), then again for the transpose
    half = [_solve_lower(low, [robust[i][j] for i in range(n)]) for j in range(n)]  # half[j] = L⁻¹ R e_j
    m = [_solve_lower(low, [half[j][i] for j in range(n)]) for i in range(n)]  # m[i] = L⁻¹ (row i of L⁻¹ R)
    m = [[0.5 * (m[i][j] + m[j][i]) for j in range(n)] for i in range(n)]
    values, q = symmetric_eigen(m)
    scale = [math.sqrt(max(v, 1.0)) for v in values]
    lq = [[sum(low[i][k] * q[k][j] for k in range(i + 1)) for j in range(n)] for i in range(n)]
    return [[lq[i][j] * scale[j] for j in range(n)] for i in range(n)]


# --- the posterior ----------------------------------------------------------------------------


def helmert(n: int) -> Matrix:
    """``n - 1`` orthonormal rows orthogonal to (1, ..., 1): the differences from the average."""
    rows = []
    for k in range(1, n):
        v = [1.0] * k + [-float(k)] + [0.0] * (n - k - 1)
        norm = math.sqrt(k * (k + 1))
        rows.append([x / norm for x in v])
    return rows


def _spread_weights(d: Sequence[float], omega: Sequence[float]) -> list[tuple[float, float]]:
    """(weight, τ²) nodes of the spread's posterior: its distribution on a fine grid of TAU_POINTS
    values, then TAU_NODES nodes of equal weight at the midpoints of its quantiles (a quadrature
    whose error on the probabilities is a few tenths of a point, measured against the fine grid)."""
    top = max(TAU_MAX_ELO, TAU_MAX_SE * math.sqrt(max(d, default=0.0)))
    taus = [(g + 0.5) * top / TAU_POINTS for g in range(TAU_POINTS)]
    logs = [-0.5 * sum(math.log(dk + t * t) + wk * wk / (dk + t * t) for dk, wk in zip(d, omega)) for t in taus]
    peak = max(logs)
    weights = [math.exp(lg - peak) for lg in logs]
    total = sum(weights)
    nodes, acc, k = [], 0.0, 0
    for tau, w in zip(taus, weights):
        acc += w / total
        while k < TAU_NODES and acc >= (k + 0.5) / TAU_NODES:
            nodes.append((1.0 / TAU_NODES, tau * tau))
            k += 1
    nodes += [(1.0 / TAU_NODES, taus[-1] ** 2)] * (TAU_NODES - k)  # round-off at the top
    return nodes


def _shrinkage(t2: float, d: Sequence[float]) -> list[float]:
    """``s_k = τ² / (d_k + τ²)``: how much of each contrast the prior of spread ``τ`` keeps."""
    if math.isinf(t2):
        return [1.0] * len(d)
    return [t2 / (dk + t2) if dk + t2 > 0 else 0.0 for dk in d]


@dataclass(frozen=True)
class RankPosterior:
    """The ratings' posterior (see the module docstring). ``names`` best first by the fit, its
    ``elo``; each player's row of ``Hᵀ U`` (``rows``), the eigenvalues ``d`` and coordinates
    ``omega`` of the contrasts, the spread's ``(weight, τ²)`` nodes, the degrees of freedom."""

    names: tuple[str, ...]
    elo: tuple[float, ...]
    rows: tuple[tuple[float, ...], ...]
    d: tuple[float, ...]
    omega: tuple[float, ...]
    spread: tuple[tuple[float, float], ...]
    df: int
    seed: int = 0
    draws: int = DRAWS
    _index: dict[str, int] = field(init=False, repr=False, compare=False)
    _above: dict[tuple[str, str], float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {name: i for i, name in enumerate(self.names)})
        object.__setattr__(self, "_above", {})

    @classmethod
    def of(cls, names: Sequence[str], elo: Sequence[float], info: Sequence[Sequence[float]],
           robust: Sequence[Sequence[float]], df: int, seed: int = 0, prior: bool = True) -> RankPosterior:
        """From the fit's ratings and its two covariances (same units); ``prior=False``: no prior
        on the spread (a flat one, ``τ = ∞``: the likelihood alone, for comparison)."""
        n = len(names)
        order = sorted(range(n), key=lambda i: (-elo[i], names[i]))
        factor = loewner_max(info, robust)
        f = [factor[i] for i in order]  # Σ_w = F Fᵀ, best first
        x = [elo[i] for i in order]
        h = helmert(n)
        hf = [[sum(h[a][i] * f[i][k] for i in range(n)) for k in range(n)] for a in range(n - 1)]
        m = [[sum(map(mul, hf[a], hf[b])) for b in range(n - 1)] for a in range(n - 1)]
        d, u = symmetric_eigen(m) if n > 1 else ([], [])
        d = [max(v, 0.0) for v in d]
        z = [sum(map(mul, h[a], x)) for a in range(n - 1)]
        omega = [sum(u[a][k] * z[a] for a in range(n - 1)) for k in range(n - 1)]
        rows = [tuple(sum(h[a][i] * u[a][k] for a in range(n - 1)) for k in range(n - 1)) for i in range(n)]
        spread = tuple(_spread_weights(d, omega)) if prior and n > 1 else ((1.0, math.inf),)
        return cls(tuple(names[i] for i in order), tuple(x), tuple(rows), tuple(d), tuple(omega), spread, df, seed)

    def contrast(self, weights: Mapping[str, float]) -> float:
        """P(Σ weights[name] · R_name > 0): with weights summing to 0 (one team's average minus
        another's), the probability that the first side is the stronger. A fit's value of the
        contrast below :data:`TIE_ELO` is a tie, ½."""
        fitted = sum(c * self.elo[self._index[name]] for name, c in weights.items())
        if abs(fitted) < TIE_ELO:
            return 0.5
        v = [0.0] * len(self.d)
        for name, c in weights.items():
            for k, r in enumerate(self.rows[self._index[name]]):
                v[k] += c * r
        p = 0.0
        for weight, t2 in self.spread:
            s = _shrinkage(t2, self.d)
            mean = sum(vk * sk * wk for vk, sk, wk in zip(v, s, self.omega))
            var = sum(vk * vk * dk * sk for vk, dk, sk in zip(v, self.d, s))
            p += weight * (t_cdf(mean / math.sqrt(var), self.df) if var > 0 else 0.5 + math.copysign(0.5, mean))
        return p

    def above(self, a: str, b: str) -> float:
        """P(a is rated above b); a tie (a difference of the fit below :data:`TIE_ELO`) is ½."""
        if b < a:
            return 1.0 - self.above(b, a)
        if (a, b) not in self._above:
            self._above[a, b] = self.contrast({a: 1.0, b: -1.0})
        return self._above[a, b]

    def matrix(self) -> dict[str, dict[str, float]]:
        """``out[a][b]`` = P(a above b) for every two players, best first."""
        return {a: {b: self.above(a, b) for b in self.names if b != a} for a in self.names}

    def adjacent(self) -> list[float]:
        """P(each player above the next one in the fit's order)."""
        return [self.above(a, b) for a, b in zip(self.names, self.names[1:])]

    @functools.cached_property
    def _ranks(self) -> list[list[int]]:
        """The rank (0 best) of every player in each draw."""
        rng = random.Random(f"ranks:{self.seed}")
        n, m = len(self.names), len(self.d)
        cumulative = list(accumulate(w for w, _ in self.spread))
        centre = sum(self.elo) / n
        out = []
        for _ in range(max(1, self.draws // 2)):
            t2 = rng.choices([t for _, t in self.spread], cum_weights=cumulative)[0]
            s = _shrinkage(t2, self.d)
            scale = math.sqrt(self.df / rng.gammavariate(0.5 * self.df, 2.0))
            noise = [scale * math.sqrt(dk * sk) * rng.gauss(0.0, 1.0) for dk, sk in zip(self.d, s)]
            mean = [sk * wk for sk, wk in zip(s, self.omega)]
            for sign in (1.0, -1.0):
                theta = [mean[k] + sign * noise[k] for k in range(m)]
                x = [centre + sum(map(mul, row, theta)) for row in self.rows]
                order = sorted(range(n), key=lambda i: -x[i])
                rank = [0] * n
                for r, i in enumerate(order):
                    rank[i] = r
                out.append(rank)
        return out

    def rank_probabilities(self) -> dict[str, list[float]]:
        """``out[name][k]``: P(name has rank k + 1), from the draws."""
        n = len(self.names)
        counts = [[0] * n for _ in range(n)]
        for rank in self._ranks:
            for i, r in enumerate(rank):
                counts[i][r] += 1
        total = len(self._ranks)
        return {name: [c / total for c in counts[i]] for i, name in enumerate(self.names)}

    def top(self) -> dict[str, list[float]]:
        """``out[name][k]``: P(name is among the top k + 1)."""
        out = {}
        for name, probs in self.rank_probabilities().items():
            acc, cum = 0.0, []
            for p in probs:
                acc += p
                cum.append(acc)
            out[name] = cum
        return out

    def p_top(self, k: int) -> float:
        """The joint probability that the first ``k`` players of the fit's order are the top ``k``,
        in that order (``k = len(names)``: the whole order)."""
        k = min(k, len(self.names))
        return sum(all(rank[i] == i for i in range(k)) for rank in self._ranks) / len(self._ranks)

    def settled(self, confidence: float, top: int | None = None) -> bool:
        """Whether the order is settled at ``confidence``: every adjacent pair (``top`` None), or
        the top ``top`` players and their order (jointly, :meth:`p_top`)."""
        if top is None:
            return all(p >= confidence for p in self.adjacent())
        return self.p_top(top) >= confidence
