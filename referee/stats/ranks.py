"""Rank confidence from a rating fit: P(a above b), P(rank = k), top-k, and whether an order is settled.

Pure computation, no I/O. :func:`referee.stats.ratings.rank_posterior` builds a :class:`RankPosterior`
from outcomes (one fit, no bootstrap: cheap enough to call after every deal set);
:func:`referee.stats.ratings.rate` keeps one in :attr:`Ratings.posterior` for its LOS.

The posterior
-------------
The ratings are taken to be distributed as a **multivariate Student t** centred on the fit, with
``D - 1`` degrees of freedom (``D`` deal sets, the unit of resampling) and the scale matrix

    Σ_w = the smallest matrix above both Σ_info and Σ_robust (in the positive semi-definite order)

where ``Σ_info`` is the inverse observed information of the fit (independent games) and
``Σ_robust`` the cluster-robust sandwich over deal sets (how results really vary from deal to
deal), the same two that widen the rating intervals (:mod:`referee.stats.ratings`). In the
metric of ``Σ_info`` (``Σ_info = L Lᵀ``), ``M = L⁻¹ Σ_robust L⁻ᵀ = Q Λ Qᵀ`` and
``Σ_w = L Q max(Λ, 1) Qᵀ Lᵀ``: every contrast of ratings has at least the variance of each.

- The t with ``D - 1`` degrees of freedom is the small-sample widening of the intervals (a
  robust variance from ``D`` deal sets is itself uncertain); as ``D`` grows it becomes a normal.
- ``Σ_info`` is the floor: when every deal set went the same way (a sweep) the robust variance
  is zero, and the posterior must not claim certainty from that.

Then, exactly, ``P(a above b) = T_{D-1}((R_a - R_b) / sd(R_a - R_b))`` (a contrast of a multivariate
t is a univariate t). A difference below :data:`TIE_ELO` is a tie, ½: identical results give ½,
never a round-off's "100%". The probabilities of ranks (``P(rank = k)``, ``P(rank <= k)``, the
joint probability of an order) come from :data:`DRAWS` seeded, antithetic draws of the same
distribution (their Monte Carlo error is below 1.1 points; a pair's printed LOS is the exact value).

Measured calibration: ``python -m referee.tools.calibration`` and docs/tournaments.md.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import mul

#: differences of ratings smaller than this (Elo) are ties: P(a above b) = 1/2
TIE_ELO = 1e-6
#: draws of the posterior behind rank probabilities (antithetic pairs: half as many normal vectors)
DRAWS = 4000

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


@dataclass(frozen=True)
class RankPosterior:
    """The ratings' posterior (see the module docstring): ``names`` best first, their ``elo``,
    a factor ``F`` of the scale matrix (Elo; ``Σ_w = F Fᵀ``) and the degrees of freedom."""

    names: tuple[str, ...]
    elo: tuple[float, ...]
    factor: tuple[tuple[float, ...], ...]
    df: int
    seed: int = 0
    draws: int = DRAWS
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {name: i for i, name in enumerate(self.names)})

    @classmethod
    def of(cls, names: Sequence[str], elo: Sequence[float], info: Sequence[Sequence[float]],
           robust: Sequence[Sequence[float]], df: int, seed: int = 0) -> RankPosterior:
        """From the fit's ratings and the two covariances (same units), sorted best first."""
        factor = loewner_max(info, robust)
        order = sorted(range(len(names)), key=lambda i: (-elo[i], names[i]))
        return cls(tuple(names[i] for i in order), tuple(elo[i] for i in order),
                   tuple(tuple(factor[i]) for i in order), df, seed)

    def sd(self, a: str, b: str) -> float:
        """The scale of ``R_a - R_b``."""
        fa, fb = self.factor[self._index[a]], self.factor[self._index[b]]
        return math.sqrt(sum((x - y) ** 2 for x, y in zip(fa, fb)))

    def above(self, a: str, b: str) -> float:
        """P(a is rated above b), exactly; a tie (a difference below :data:`TIE_ELO`) is ½."""
        d = self.elo[self._index[a]] - self.elo[self._index[b]]
        if abs(d) < TIE_ELO:
            return 0.5
        sd = self.sd(a, b)
        return t_cdf(d / sd, self.df) if sd > 0 else (1.0 if d > 0 else 0.0)

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
        n = len(self.names)
        out = []
        for _ in range(max(1, self.draws // 2)):
            z = [rng.gauss(0.0, 1.0) for _ in range(n)]
            w = math.sqrt(self.df / rng.gammavariate(0.5 * self.df, 2.0))
            shift = [w * sum(map(mul, row, z)) for row in self.factor]
            for sign in (1.0, -1.0):
                x = [e + sign * s for e, s in zip(self.elo, shift)]
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
