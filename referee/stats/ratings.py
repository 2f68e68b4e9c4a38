"""Elo ratings from pairwise results: a joint maximum-likelihood fit with bootstrap intervals.

Pure computation, no I/O.  Typical use::

    outcomes = []
    for game in games:                       # 4-player Confirmation: 6 pairwise outcomes per game
        outcomes += pairwise_from_game(game.deal_set, game.seats, game.results["scores"])
    for match in matches:                    # 2-player Aegis: one outcome per match
        outcomes += pairwise_from_placing(match.deal_set, match.seats, match.results["placing"])
    table = rate(outcomes, bootstrap=1000, seed=0)
    for row in table.rows:                   # best first
        print(row.name, round(row.elo), f"±{row.plus_minus:.0f}", f"{row.score_pct:.1f}%")

The model (Bradley–Terry on the Elo scale, as Ordo and BayesElo use)
--------------------------------------------------------------------
Every player ``i`` has a rating ``R_i`` and

    P(i beats j) = 1 / (1 + 10 ** (-(R_i - R_j) / 400))

so 400 Elo is odds of 10 to 1 and 400*log10(3) ≈ 190.8 Elo is a 75 % expected score.  A draw
counts as half a win and half a loss: with ``s`` the score of an outcome (1, 0.5 or 0) the
log-likelihood of all results is

    L(R) = Σ_outcomes  s * log p(a, b) + (1 - s) * log(1 - p(a, b))

and the ratings are the ``R`` that maximise it **jointly** over every result, so a player's
rating accounts for the strength of the opponents it met (unlike the pooled score %, which
rewards a player who happened to meet weak opponents).  ``L`` only depends on the results
through, for each pair, the number of games ``n_ij`` and the points ``w_ij`` that ``i``
scored against ``j``; the fit works on those aggregated counts.

The prior: one virtual draw per player
--------------------------------------
Without help, a player who won (or lost) every game has no finite maximum-likelihood rating,
and the overall level of the ratings is undetermined.  Like BayesElo's prior we add virtual
games: each player gets ``prior`` (default 1) virtual *draws* against a virtual opponent
whose rating is fixed at the centre of the scale.  That is the log-density
``prior/2 * (log p + log(1 - p))`` per player, which is concave, maximal when the player
is level with the centre and fixes the level of the ratings.  It keeps every rating finite
and only shrinks ratings very slightly: with 1000 games between two players (75 % score)
the difference moves by about 0.1 Elo.  With few games it matters more, as it should
(10 straight wins gives a difference of about 490 Elo, not infinity).

The fit: Newton's method
------------------------
In natural logit units ``x_i = R_i * ln(10) / 400`` and with ``p_ij = σ(x_i - x_j)``, the
gradient and the negative Hessian of the penalised log-likelihood are

    g_i  = Σ_j (w_ij - n_ij p_ij)            + prior * (1/2 - σ(x_i))
    A_ii = Σ_j n_ij p_ij (1 - p_ij)          + prior * σ(x_i) (1 - σ(x_i))
    A_ij = -n_ij p_ij (1 - p_ij)                                (i ≠ j)

``A`` is symmetric positive definite (diagonally dominant thanks to the prior), so the
objective is strictly concave with a unique maximum, and each Newton step ``A⁻¹ g`` is an
ascent direction.  A big step (some rating moving by more than about 43 Elo) is halved until
the objective increases, so the iteration makes progress from any start; once the steps are
small Newton converges quadratically and they are taken whole.  From zero it takes about 5 to 8
steps; the bootstrap refits start from the full fit and take about 3.

Anchoring
---------
Only rating differences mean anything.  The fitted ratings are shifted so that their average is
1500 (``average``), or so that one bot has a given rating (``anchor=("BOT", 1800)``).

Confidence intervals: bootstrap over deal sets
----------------------------------------------
Games played on the same deal set are correlated (the same cards suit some bots better), so
the unit of resampling is the deal set, not the game: draw as many deal sets as there are,
with replacement, keep all the outcomes of every drawn deal set (as many times as it was
drawn), refit, anchor the same way, and repeat ``bootstrap`` times.  The interval of a player
is the (1-confidence)/2 and (1+confidence)/2 percentiles of its resampled ratings and
``plus_minus`` is half its width.  The resamples also give the likelihood of superiority,
``LOS(a, b)``: the fraction of resamples in which ``a`` is rated above ``b``.
The interval is never narrower than the normal interval from the observed information (the
inverse Hessian of the penalised likelihood at the fit): with few deal sets that all go the
same way (a 20-0 record) every resample is identical and the bootstrap alone would claim
certainty.
With an ``anchor`` bot, that bot's interval has zero width and the others' intervals are
relative to it.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from operator import mul
from typing import NamedTuple

#: Elo points per natural-log unit of odds: R = x * ELO_PER_LOGIT
ELO_PER_LOGIT = 400.0 / math.log(10.0)
DEFAULT_AVERAGE = 1500.0
_VALID_SCORES = (0.0, 0.5, 1.0)
#: Newton steps up to this size (in logits; 0.25 ≈ 43 Elo for every player) skip the line search
_SMALL_STEP = 0.25


class PairResult(NamedTuple):
    """One pairwise result: ``score`` is 1 if ``a`` beat ``b``, 0.5 for a draw, 0 if ``b`` beat ``a``."""

    deal_set: int
    a: str
    b: str
    score: float


# --- building outcomes ------------------------------------------------------


def pairwise_from_game(deal_set: int, names_by_seat: Sequence[str],
                       scores_by_seat: Sequence[float]) -> list[PairResult]:
    """The pairwise outcomes of one multi-player game (4-player Confirmation: up to 6).

    Every pair of seats is compared by final score (higher wins, equal is a draw).  A bot
    that fills several seats (fewer than four bots in the tournament) is never compared
    with itself; its other seats' comparisons with other bots are all kept.
    """
    if len(names_by_seat) != len(scores_by_seat):
        raise ValueError(f"{len(names_by_seat)} names but {len(scores_by_seat)} scores")
    out = []
    for s in range(len(names_by_seat)):
        for t in range(s + 1, len(names_by_seat)):
            if names_by_seat[s] == names_by_seat[t]:
                continue
            d = scores_by_seat[s] - scores_by_seat[t]
            out.append(PairResult(deal_set, names_by_seat[s], names_by_seat[t],
                                  1.0 if d > 0 else 0.0 if d < 0 else 0.5))
    return out


def pairwise_from_placing(deal_set: int, names_by_seat: Sequence[str],
                          placing_by_seat: Sequence[int]) -> list[PairResult]:
    """Like :func:`pairwise_from_game` but from 1-based places (lower is better, equal places
    are a draw), as in a game's ``results["placing"]``.  For a 2-player Aegis match this is the
    one outcome of the match (the placing follows the winner even when the match ended early)."""
    return pairwise_from_game(deal_set, names_by_seat, [-p for p in placing_by_seat])


# --- tallies ----------------------------------------------------------------


@dataclass
class Record:
    """Pairwise games, wins, draws and losses (of one player, or of a row player against a column player)."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score_pct(self) -> float | None:
        """Points per game in percent (None with no games)."""
        return 100.0 * self.points / self.games if self.games else None

    def add(self, score: float) -> None:
        self.games += 1
        if score == 1.0:
            self.wins += 1
        elif score == 0.0:
            self.losses += 1
        else:
            self.draws += 1


@dataclass
class PlayerRating:
    """One row of the rating table."""

    name: str
    elo: float
    lo: float | None  # interval bounds (None without bootstrap)
    hi: float | None
    plus_minus: float | None  # (hi - lo) / 2
    games: int
    wins: int
    draws: int
    losses: int
    score_pct: float | None
    los_next: float | None = None  # LOS over the next row (the next lower rated player), in [0, 1]


@dataclass
class Ratings:
    """The result of :func:`rate`: ``rows`` best first, and the head-to-head records
    (``head_to_head[row][col]``: the row player's record against the column player)."""

    rows: list[PlayerRating]
    head_to_head: dict[str, dict[str, Record]]
    bootstrap: int
    confidence: float
    samples: dict[str, list[float]] = field(default_factory=dict, repr=False)  # bootstrap ratings per player

    def __getitem__(self, name: str) -> PlayerRating:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    @property
    def elos(self) -> dict[str, float]:
        return {row.name: row.elo for row in self.rows}

    def los(self, a: str, b: str) -> float | None:
        """Likelihood of superiority: the fraction of bootstrap resamples in which ``a`` is
        rated above ``b`` (ties count half); None without bootstrap."""
        if not self.samples:
            return None
        xs, ys = self.samples[a], self.samples[b]
        return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x, y in zip(xs, ys)) / len(xs)


# --- the fit ----------------------------------------------------------------


def _check(outcomes: Iterable[PairResult]) -> list[PairResult]:
    checked = []
    for o in outcomes:
        o = PairResult(*o)
        if o.a == o.b:
            raise ValueError(f"outcome of {o.a!r} against itself: {o}")
        if o.score not in _VALID_SCORES:
            raise ValueError(f"score must be 1, 0.5 or 0: {o}")
        checked.append(o)
    return checked


def _index(outcomes: Sequence[PairResult]) -> tuple[list[str], dict[str, int]]:
    names = sorted({o.a for o in outcomes} | {o.b for o in outcomes})
    return names, {name: i for i, name in enumerate(names)}


def _pair_counts(outcomes: Iterable[PairResult], index: Mapping[str, int]) -> dict[tuple[int, int], list[float]]:
    """{(i, j) with i < j: [points of i against j, games]}."""
    counts: dict[tuple[int, int], list[float]] = {}
    for o in outcomes:
        i, j, s = index[o.a], index[o.b], o.score
        if i > j:
            i, j, s = j, i, 1.0 - s
        c = counts.setdefault((i, j), [0.0, 0.0])
        c[0] += s
        c[1] += 1.0
    return counts


def _log_sigmoid(z: float) -> float:
    """log(1 / (1 + e^-z)) without overflow."""
    return -math.log1p(math.exp(-z)) if z >= 0 else z - math.log1p(math.exp(z))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _objective(x: Sequence[float], pairs: Sequence[tuple[int, int, float, float]], prior: float) -> float:
    total = 0.0
    for i, j, w, n in pairs:
        d = x[i] - x[j]
        total += w * _log_sigmoid(d) + (n - w) * _log_sigmoid(-d)
    half = 0.5 * prior
    for xi in x:
        total += half * (_log_sigmoid(xi) + _log_sigmoid(-xi))
    return total


def _solve_spd(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve A y = b for a symmetric positive definite A (Cholesky; A is overwritten)."""
    n = len(b)
    for k in range(n):
        row_k = a[k]
        d = row_k[k] - sum(v * v for v in row_k[:k])
        if d <= 0.0:
            raise ArithmeticError("matrix not positive definite")
        d = math.sqrt(d)
        row_k[k] = d
        for i in range(k + 1, n):
            row_i = a[i]
            row_i[k] = (row_i[k] - sum(map(mul, row_i[:k], row_k[:k]))) / d
    y = list(b)
    for i in range(n):  # L z = b
        y[i] = (y[i] - sum(map(mul, a[i][:i], y[:i]))) / a[i][i]
    for i in reversed(range(n)):  # L^T y = z
        column = [a[k][i] for k in range(i + 1, n)]
        y[i] = (y[i] - sum(map(mul, column, y[i + 1:]))) / a[i][i]
    return y


def _fit_logits(n: int, pairs: Sequence[tuple[int, int, float, float]], prior: float,
                start: Sequence[float] | None = None, tol: float = 1e-6, max_iter: int = 100) -> list[float]:
    """Maximise the penalised log-likelihood (see the module docstring) by damped Newton steps.

    ``pairs`` holds (i, j, points of i against j, games) with i < j; returns the logits ``x``
    (centred on the virtual opponent at 0, not yet anchored)."""
    if prior <= 0:
        raise ValueError("prior must be positive (it fixes the level and keeps ratings finite)")
    x = list(start) if start is not None else [0.0] * n
    value: float | None = None  # the objective at x, when known
    for _ in range(max_iter):
        grad = [0.0] * n
        a = [[0.0] * n for _ in range(n)]
        for i, xi in enumerate(x):
            p = _sigmoid(xi)
            grad[i] = prior * (0.5 - p)
            a[i][i] = prior * p * (1.0 - p)
        for i, j, w, g in pairs:
            p = _sigmoid(x[i] - x[j])
            r = w - g * p
            grad[i] += r
            grad[j] -= r
            h = g * p * (1.0 - p)
            a[i][i] += h
            a[j][j] += h
            a[i][j] -= h
            a[j][i] -= h
        step = _solve_spd(a, grad)
        size = max(map(abs, step), default=0.0)
        if size <= _SMALL_STEP:
            # near the maximum, where Newton converges quadratically: take the full step
            x = [xi + si for xi, si in zip(x, step)]
            value = None
        else:
            # a big step: halve it until the objective does not decrease (it is concave, so this ends)
            if value is None:
                value = _objective(x, pairs, prior)
            t = 1.0
            while True:
                trial = [xi + t * si for xi, si in zip(x, step)]
                new_value = _objective(trial, pairs, prior)
                if new_value >= value - 1e-12 * abs(value) or t < 1e-8:
                    break
                t *= 0.5
            x, value, size = trial, new_value, size * t
        if size < tol:
            break
    return x


def _laplace_sd(n: int, pairs: Sequence[tuple[int, int, float, float]], prior: float, x: Sequence[float],
                anchor: int | None) -> list[float]:
    """Standard deviations (Elo) of the anchored ratings from the observed information
    (the inverse Hessian of the penalised log-likelihood at the fit)."""
    def information() -> list[list[float]]:
        a = [[0.0] * n for _ in range(n)]
        for i, xi in enumerate(x):
            p = _sigmoid(xi)
            a[i][i] = prior * p * (1.0 - p)
        for i, j, _w, g in pairs:
            p = _sigmoid(x[i] - x[j])
            h = g * p * (1.0 - p)
            a[i][i] += h
            a[j][j] += h
            a[i][j] -= h
            a[j][i] -= h
        return a

    cov = [_solve_spd(information(), [1.0 if k == j else 0.0 for k in range(n)]) for j in range(n)]
    out = []
    for i in range(n):
        if anchor is None:  # r_i = x_i - mean(x)
            c = [(1.0 if k == i else 0.0) - 1.0 / n for k in range(n)]
        else:  # r_i = x_i - x_anchor
            c = [(1.0 if k == i else 0.0) - (1.0 if k == anchor else 0.0) for k in range(n)]
        var = sum(c[j] * sum(cov[j][k] * c[k] for k in range(n)) for j in range(n))
        out.append(math.sqrt(max(var, 0.0)) * ELO_PER_LOGIT)
    return out


def _anchor_shift(elos: Sequence[float], names: Sequence[str], index: Mapping[str, int],
                  anchor: tuple[str, float] | None, average: float) -> float:
    if anchor is None:
        return average - sum(elos) / len(elos)
    bot, rating = anchor
    if bot not in index:
        raise ValueError(f"anchor {bot!r} is not among the players: {', '.join(names)}")
    return rating - elos[index[bot]]


def fit(outcomes: Iterable[PairResult], anchor: tuple[str, float] | None = None, *,
        average: float = DEFAULT_AVERAGE, prior: float = 1.0) -> dict[str, float]:
    """The maximum-likelihood Elo ratings (with ``prior`` virtual draws per player, see the module
    docstring), shifted so that their mean is ``average``, or so that ``anchor[0]`` is rated ``anchor[1]``."""
    outcomes = _check(outcomes)
    if not outcomes:
        return {}
    names, index = _index(outcomes)
    pairs = [(i, j, w, g) for (i, j), (w, g) in _pair_counts(outcomes, index).items()]
    elos = [xi * ELO_PER_LOGIT for xi in _fit_logits(len(names), pairs, prior)]
    shift = _anchor_shift(elos, names, index, anchor, average)
    return {name: elos[i] + shift for i, name in enumerate(names)}


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) with linear interpolation between order statistics."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (pos - lo) * (sorted_values[hi] - sorted_values[lo])


def rate(outcomes: Iterable[PairResult], anchor: tuple[str, float] | None = None, bootstrap: int = 1000,
         seed: int | None = 0, confidence: float = 0.95, *, average: float = DEFAULT_AVERAGE,
         prior: float = 1.0) -> Ratings:
    """The rating table: the fit of :func:`fit`, bootstrap intervals over deal sets (``bootstrap``
    resamples, 0 for none; ``seed`` makes them reproducible), tallies and head-to-head records."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    outcomes = _check(outcomes)
    if not outcomes:
        return Ratings([], {}, bootstrap, confidence)
    names, index = _index(outcomes)
    n = len(names)

    # tallies
    totals = {name: Record() for name in names}
    h2h: dict[str, dict[str, Record]] = {name: {} for name in names}
    for o in outcomes:
        totals[o.a].add(o.score)
        totals[o.b].add(1.0 - o.score)
        h2h[o.a].setdefault(o.b, Record()).add(o.score)
        h2h[o.b].setdefault(o.a, Record()).add(1.0 - o.score)

    # the point estimate
    counts = _pair_counts(outcomes, index)
    pairs = [(i, j, w, g) for (i, j), (w, g) in counts.items()]
    x_hat = _fit_logits(n, pairs, prior)
    elos = [xi * ELO_PER_LOGIT for xi in x_hat]
    shift = _anchor_shift(elos, names, index, anchor, average)
    elos = [e + shift for e in elos]

    # the bootstrap over deal sets, on per-deal-set pair counts
    samples: dict[str, list[float]] = {}
    if bootstrap > 0:
        deal_sets = sorted({o.deal_set for o in outcomes})
        d_index = {d: k for k, d in enumerate(deal_sets)}
        per_deal: list[list[PairResult]] = [[] for _ in deal_sets]
        for o in outcomes:
            per_deal[d_index[o.deal_set]].append(o)
        # for each pair: the deal sets it occurs in, and its points and games in each
        columns: dict[tuple[int, int], tuple[list[int], list[float], list[float]]] = {}
        for k, group in enumerate(per_deal):
            for key, (w, g) in _pair_counts(group, index).items():
                ks, ws, gs = columns.setdefault(key, ([], [], []))
                ks.append(k)
                ws.append(w)
                gs.append(g)
        rng = random.Random(seed)
        n_deals = len(deal_sets)
        boot: list[list[float]] = [[] for _ in names]
        for _ in range(bootstrap):
            times = [0] * n_deals  # how often each deal set is drawn
            for k in rng.choices(range(n_deals), k=n_deals):
                times[k] += 1
            resampled = []
            for (i, j), (ks, ws, gs) in columns.items():
                m = [times[k] for k in ks]
                g = sum(map(mul, m, gs))
                if g:
                    resampled.append((i, j, sum(map(mul, m, ws)), g))
            b_elos = [xi * ELO_PER_LOGIT for xi in _fit_logits(n, resampled, prior, start=x_hat)]
            b_shift = _anchor_shift(b_elos, names, index, anchor, average)
            for i, e in enumerate(b_elos):
                boot[i].append(e + b_shift)
        samples = {name: boot[i] for i, name in enumerate(names)}

    rows = []
    q_lo, q_hi = (1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0
    if samples:
        z = statistics.NormalDist().inv_cdf(q_hi)
        sd = _laplace_sd(n, pairs, prior, x_hat, index[anchor[0]] if anchor else None)
    for i, name in enumerate(names):
        lo = hi = pm = None
        if samples:
            ordered = sorted(samples[name])
            lo, hi = _percentile(ordered, q_lo), _percentile(ordered, q_hi)
            # never narrower than the observed-information interval: when every deal set
            # gives the same result (say 20-0) the bootstrap alone would claim certainty
            lo, hi = min(lo, elos[i] - z * sd[i]), max(hi, elos[i] + z * sd[i])
            pm = (hi - lo) / 2.0
        t = totals[name]
        rows.append(PlayerRating(name, elos[i], lo, hi, pm, t.games, t.wins, t.draws, t.losses, t.score_pct))
    rows.sort(key=lambda r: (-r.elo, r.name))
    result = Ratings(rows, h2h, bootstrap, confidence, samples)
    for upper, lower in pairwise(rows):
        upper.los_next = result.los(upper.name, lower.name)
    return result
