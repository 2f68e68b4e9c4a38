"""Elo ratings from pairwise and team results: a joint maximum-likelihood fit with intervals over deal sets.

Pure computation, no I/O.  Typical use::

    outcomes = []
    for game in games:                       # 4-player Confirmation: 6 pairwise outcomes per game
        outcomes += pairwise_from_game(game.deal_set, game.seats, game.results["scores"])
    for match in matches:                    # 2-player Aegis: one outcome per match
        outcomes += pairwise_from_placing(match.deal_set, match.seats, match.results["placing"])
    for game in pairs_games:                 # partners (Confirmation's pairs): one team result per game
        outcomes += team_results(game.deal_set, game.seats, game.results["scores"], game.results["teams"])
    table = rate(outcomes, bootstrap=1000, seed=0)
    table.warnings                           # sentences to print with the table (few deal sets, ...)
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
(10 straight wins give a difference of 580.5 Elo, not infinity: ``fit`` of ten wins of one
player over another; tests/test_ratings.py checks the figure).

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

Pinned players (a reference pool's scale)
-----------------------------------------
``pins`` holds some players at given ratings: the scale of a reference pool
(:mod:`referee.stats.anchored`). A :class:`Pin` with ``sd = 0`` is **fixed**: its rating is not fitted,
and the others are fitted by the same Newton steps on the free block of the gradient and the Hessian
(every rating then means something on the pins' scale, not only differences). A pin with ``sd > 0``
is a normal prior ``Normal(elo, sd²)`` on that player instead of its virtual draw. The free players
keep their virtual draw, against a virtual opponent at the pins' average. A fixed player's interval
has zero width; every other interval is that player's on the pins' scale (the square root of its
own variance, no difference taken), and the posterior (LOS) covers the free players only.

Teams (partners)
----------------
In a team game (Confirmation's ``pairs`` variant) the two partners share one score, so comparing
them would add a false draw, and comparing each with each opponent would count one result
several times. A :class:`TeamResult` is one result between two teams, and a team plays at the
average of its members' ratings:

    P(team A beats team B) = σ(mean(x_a for a in A) - mean(x_b for b in B))

so a team of two 1600s against two 1400s expects the score of a 1600 against a 1400. Every
outcome is a *contrast* ``c`` (a pairwise result is ``e_a - e_b``) with ``P = σ(c · x)``, and the
gradient and Hessian above become ``Σ c (w - n p)`` and ``Σ n p (1 - p) c cᵀ``. Individual
ratings are identified only when the contrasts span every difference between players (rank
``n - 1``): with the same partnerships throughout (a+c against b+d, always) only the team
difference is measured, and :attr:`Ratings.identifiable` is False.

Confidence intervals
--------------------
Games played on the same deal set are correlated (the same cards suit some bots better), so the
unit of resampling is the deal set, not the game. An interval is the widest of three:

- the **bootstrap over deal sets**: draw as many deal sets as there are, with replacement, keep
  all the outcomes of every drawn deal set (as many times as it was drawn), refit, anchor the same
  way, and repeat ``bootstrap`` times; the (1-confidence)/2 and (1+confidence)/2 percentiles of a
  player's resampled ratings.
- the **observed-information** interval ``elo ± z·sd`` (the inverse Hessian of the penalised
  likelihood at the fit): with few deal sets that all go the same way (a 20-0 record) every
  resample is identical and the bootstrap alone would claim certainty.
- the **cluster-robust** interval ``elo ± t·sd``, ``sd`` from the sandwich ``A⁻¹ B A⁻¹`` where
  ``B`` is the spread of the deal sets' score vectors (``D/(D-1)`` times the sum of their centred
  outer products, ``D`` deal sets) and ``t`` the Student quantile with ``D - 1`` degrees of
  freedom. With few deal sets the bootstrap degenerates (two deal sets have three distinct
  resamples) and the observed information ignores the deal-to-deal variation; this interval
  accounts for both, at the price of being wide (``t`` is 12.7 at two deal sets, 2.26 at ten).

Measured coverage: ``python -m referee.tools.coverage`` and docs/tournaments.md.

Rank confidence
---------------
The likelihood of superiority ``LOS(a, b)``, P(rank = k) and top-k come from the ratings'
posterior (:mod:`referee.stats.ranks`): a multivariate Student t likelihood with ``D - 1`` degrees
of freedom around the fit, its scale the smallest matrix above both the observed-information and
the cluster-robust covariances, the same two that widen the intervals, and a prior on how far apart
the bots are, learned from the table (the raw bootstrap's fraction of resamples was overconfident
with few deal sets, and decided ties by round-off).
:func:`rank_posterior` gives it without a bootstrap (one fit), for a scheduler. With one deal
set nothing measures the deal-to-deal variation: :attr:`Ratings.intervals_trusted` is False.
With an ``anchor`` bot, that bot's interval has zero width and the others' intervals are
relative to it.

Bounds
------
A player who scored no point at all (or every point) has no finite maximum-likelihood rating:
its estimate comes from the prior. Its row's ``bound`` is ``"upper"`` (the rating is below
``hi``, and ``elo`` and ``lo`` say nothing) or ``"lower"`` (above ``lo``). On that side every
deal set went the same way, so the robust interval is empty and the bootstrap degenerate: the
observed-information half-width takes Student's ``t`` (``D - 1`` degrees of freedom) there too,
since the games of a deal set may be one outcome as much as independent ones (with 4 players at
2 deal sets the normal one held the truth in 1 printed bound of 9).
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import pairwise
from operator import mul
from typing import NamedTuple

import numpy as np

from referee.stats import ranks

#: Elo points per natural-log unit of odds: R = x * ELO_PER_LOGIT
ELO_PER_LOGIT = 400.0 / math.log(10.0)
DEFAULT_AVERAGE = 1500.0
_VALID_SCORES = (0.0, 0.5, 1.0)
#: Newton steps up to this size (in logits; 0.25 ≈ 43 Elo for every player) skip the line search
_SMALL_STEP = 0.25
#: fewer deal sets than this: :attr:`Ratings.warnings` says the intervals are wide and provisional
FEW_DEAL_SETS = 10


class PairResult(NamedTuple):
    """One pairwise result: ``score`` is 1 if ``a`` beat ``b``, 0.5 for a draw, 0 if ``b`` beat ``a``."""

    deal_set: int
    a: str
    b: str
    score: float


class TeamResult(NamedTuple):
    """One result between two teams of partners (``score`` as in :class:`PairResult`): a team
    plays at the average of its members' ratings (see "Teams" in the module docstring)."""

    deal_set: int
    a: tuple[str, ...]
    b: tuple[str, ...]
    score: float


Outcome = PairResult | TeamResult
#: an outcome as the fit sees it: ((player index, coefficient), ...) with P(score 1) = σ(c · x)
Contrast = tuple[tuple[int, float], ...]


class Pin(NamedTuple):
    """A player held on a given scale (see "Pinned players"): its rating, and the standard deviation
    (Elo) of a normal prior around it; 0: fixed at that rating."""

    elo: float
    sd: float = 0.0


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


def team_results(deal_set: int, names_by_seat: Sequence[str], scores_by_seat: Sequence[float],
                 teams: Sequence[Sequence[int]]) -> list[Outcome]:
    """The outcomes of one team game: each pair of teams (``teams``: the seats of each) compared by
    the best score of its seats (partners share their score), never partners with each other.

    A team whose seats all hold one bot is that bot, so two such teams give a :class:`PairResult`;
    otherwise a :class:`TeamResult` (members sorted).  Two teams of the same bots measure nothing
    and give no outcome."""
    if len(names_by_seat) != len(scores_by_seat):
        raise ValueError(f"{len(names_by_seat)} names but {len(scores_by_seat)} scores")
    sides = [tuple(sorted(names_by_seat[s] for s in team)) for team in teams]
    scores = [max(scores_by_seat[s] for s in team) for team in teams]
    out: list[Outcome] = []
    for s in range(len(teams)):
        for t in range(s + 1, len(teams)):
            a, b = sides[s], sides[t]
            if Counter(a) == Counter(b):
                continue
            d = scores[s] - scores[t]
            score = 1.0 if d > 0 else 0.0 if d < 0 else 0.5
            if len(set(a)) == 1 and len(set(b)) == 1:
                out.append(PairResult(deal_set, a[0], b[0], score))
            else:
                out.append(TeamResult(deal_set, a, b, score))
    return out


def _team_name(side: str | tuple[str, ...]) -> str:
    return "+".join(side) if isinstance(side, tuple) else f"{side}+{side}"


def as_teams(outcomes: Iterable[Outcome]) -> list[PairResult]:
    """The outcomes with every team as one player named by its members (``"a+c"``; a bot
    partnered with its own copy is ``"a+a"``)."""
    return [PairResult(o.deal_set, _team_name(o.a), _team_name(o.b), o.score) for o in outcomes]


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


class Bound(StrEnum):
    """A rating (or a difference) known on one side only: after every point scored, or none."""

    LOWER = "lower"  # every point scored: above ``lo`` only
    UPPER = "upper"  # no point scored: below ``hi`` only

    @property
    def flipped(self) -> Bound:
        """The bound of the other side's difference (a over b's LOWER is b over a's UPPER)."""
        return Bound.UPPER if self is Bound.LOWER else Bound.LOWER


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
    #: "upper": no point scored, the rating is only known to be below ``hi`` (``elo`` and ``lo`` come
    #: from the prior); "lower": every point scored, above ``lo``; None: an estimate
    bound: Bound | None = None


@dataclass
class Ratings:
    """The result of :func:`rate`: ``rows`` best first, and the head-to-head records
    (``head_to_head[row][col]``: the row player's record against the column player)."""

    rows: list[PlayerRating]
    head_to_head: dict[str, dict[str, Record]]
    bootstrap: int
    confidence: float
    samples: dict[str, list[float]] = field(default_factory=dict, repr=False)  # bootstrap ratings per player
    deal_sets: int = 0
    #: False when the results cannot separate every player's rating (partners who never change:
    #: only the teams are measured); the ratings are then the prior's split and mean nothing
    identifiable: bool = True
    #: False when no interval can account for the deal-to-deal variation (one deal set)
    intervals_trusted: bool = True
    #: sentences a reader of the table must see (few deal sets, unidentifiable ratings)
    warnings: list[str] = field(default_factory=list)
    #: the ratings' posterior (:mod:`referee.stats.ranks`): LOS, rank probabilities; None without
    #: bootstrap or with one deal set
    posterior: ranks.RankPosterior | None = field(default=None, repr=False)

    def __getitem__(self, name: str) -> PlayerRating:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    @property
    def elos(self) -> dict[str, float]:
        return {row.name: row.elo for row in self.rows}

    def los(self, a: str, b: str) -> float | None:
        """Likelihood of superiority: P(a is rated above b) in the ratings' posterior (a multivariate
        Student t over deal sets, :mod:`referee.stats.ranks`; a tie is ½); None without it, and for a
        fixed pinned player (see "Pinned players")."""
        if self.posterior is None or a not in self.posterior.names or b not in self.posterior.names:
            return None
        return self.posterior.above(a, b)


# --- the fit ----------------------------------------------------------------


def _check(outcomes: Iterable[Outcome]) -> list[Outcome]:
    return [_checked(o) for o in outcomes]


def _checked(o: Outcome) -> Outcome:
    """The outcome as a :class:`PairResult` or :class:`TeamResult`, or ValueError saying what is wrong."""
    if isinstance(o, TeamResult):
        if not o.a or not o.b:
            raise ValueError(f"a team needs a member: {o}")
        if Counter(o.a) == Counter(o.b):
            raise ValueError(f"a team against the same team: {o}")
    else:
        o = PairResult(*o)
        if o.a == o.b:
            raise ValueError(f"outcome of {o.a!r} against itself: {o}")
    if o.score not in _VALID_SCORES:
        raise ValueError(f"score must be 1, 0.5 or 0: {o}")
    return o


def _members(o: Outcome) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (o.a, o.b) if isinstance(o, TeamResult) else ((o.a,), (o.b,))


def _index(outcomes: Sequence[Outcome]) -> tuple[list[str], dict[str, int]]:
    names = sorted({name for o in outcomes for side in _members(o) for name in side})
    return names, {name: i for i, name in enumerate(names)}


def _contrast(o: Outcome, index: Mapping[str, int]) -> tuple[Contrast, float]:
    """The outcome as (contrast, score), oriented so that the first coefficient is positive."""
    if not isinstance(o, TeamResult):  # the common case, the same result without the general loop
        i, j = index[o.a], index[o.b]
        return (((i, 1.0), (j, -1.0)), o.score) if i < j else (((j, 1.0), (i, -1.0)), 1.0 - o.score)
    a, b = _members(o)
    coef: dict[int, float] = {}
    for side, sign in ((a, 1.0), (b, -1.0)):
        for name in side:
            coef[index[name]] = coef.get(index[name], 0.0) + sign / len(side)
    c = tuple(sorted((i, v) for i, v in coef.items() if v != 0.0))
    if c[0][1] < 0:
        return tuple((i, -v) for i, v in c), 1.0 - o.score
    return c, o.score


def _counts(outcomes: Iterable[Outcome], index: Mapping[str, int]) -> dict[Contrast, list[float]]:
    """{contrast: [points of its positive side, games]}."""
    counts: dict[Contrast, list[float]] = {}
    for o in outcomes:
        c, s = _contrast(o, index)
        entry = counts.setdefault(c, [0.0, 0.0])
        entry[0] += s
        entry[1] += 1.0
    return counts


def _log_sigmoid(z: float) -> float:
    """log(1 / (1 + e^-z)) without overflow."""
    return -math.log1p(math.exp(-z)) if z >= 0 else z - math.log1p(math.exp(z))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _dot(c: Contrast, x: Sequence[float]) -> float:
    return sum(v * x[i] for i, v in c)


Rows = Sequence[tuple[Contrast, float, float]]  # (contrast, points of its positive side, games)
#: pins as the fit sees them: player index -> (centre, standard deviation) in logits (0: fixed)
LogitPins = Mapping[int, tuple[float, float]]


def _objective(x: Sequence[float], rows: Rows, prior: float, pins: LogitPins | None = None) -> float:
    total = 0.0
    for c, w, n in rows:
        d = _dot(c, x)
        total += w * _log_sigmoid(d) + (n - w) * _log_sigmoid(-d)
    half = 0.5 * prior
    for i, xi in enumerate(x):
        if pins and i in pins:  # a normal prior (a fixed player's term is a constant: left out)
            mu, sd = pins[i]
            total -= 0.5 * ((xi - mu) / sd) ** 2 if sd > 0 else 0.0
        else:
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


def _information(n: int, rows: Rows, prior: float, x: Sequence[float],
                 grad: list[float] | None = None, pins: LogitPins | None = None) -> list[list[float]]:
    """The negative Hessian of the penalised log-likelihood at ``x`` (and its gradient into ``grad``).
    A fixed player's row and column hold its games only (no prior term): the fit leaves them out."""
    a = [[0.0] * n for _ in range(n)]
    for i, xi in enumerate(x):
        if pins and i in pins:
            mu, sd = pins[i]
            if sd > 0:
                a[i][i] = 1.0 / (sd * sd)
                if grad is not None:
                    grad[i] = (mu - xi) / (sd * sd)
            elif grad is not None:
                grad[i] = 0.0
            continue
        p = _sigmoid(xi)
        a[i][i] = prior * p * (1.0 - p)
        if grad is not None:
            grad[i] = prior * (0.5 - p)
    for c, w, g in rows:
        p = _sigmoid(_dot(c, x))
        h = g * p * (1.0 - p)
        if grad is not None:
            r = w - g * p
            for i, v in c:
                grad[i] += v * r
        for i, v in c:
            row = a[i]
            for j, u in c:
                row[j] += h * v * u
    return a


def _free(n: int, pins: LogitPins | None) -> list[int]:
    """The players a fit moves: all but the fixed pins."""
    return [i for i in range(n) if not (pins and i in pins and pins[i][1] == 0)]


def _fit_logits(n: int, rows: Rows, prior: float, start: Sequence[float] | None = None, tol: float = 1e-6,
                max_iter: int = 100, pins: LogitPins | None = None) -> list[float]:
    """Maximise the penalised log-likelihood (see the module docstring) by damped Newton steps;
    returns the logits ``x`` (centred on the virtual opponent at 0, not yet anchored). ``pins``: the
    fixed players stay at their centre, the Newton steps move the others (see "Pinned players")."""
    if prior <= 0:
        raise ValueError("prior must be positive (it fixes the level and keeps ratings finite)")
    x = list(start) if start is not None else [0.0] * n
    for i, (mu, sd) in (pins or {}).items():
        if sd == 0:
            x[i] = mu
    free = _free(n, pins)
    if not free:
        return x
    value: float | None = None  # the objective at x, when known
    for _ in range(max_iter):
        grad = [0.0] * n
        a = _information(n, rows, prior, x, grad, pins)
        if len(free) == n:
            step = _solve_spd(a, grad)
        else:  # the free block of the Newton system; the fixed players do not move
            step = [0.0] * n
            free_step = _solve_spd([[a[i][j] for j in free] for i in free], [grad[i] for i in free])
            for i, si in zip(free, free_step):
                step[i] = si
        size = max(map(abs, step), default=0.0)
        if size <= _SMALL_STEP:
            # near the maximum, where Newton converges quadratically: take the full step
            x = [xi + si for xi, si in zip(x, step)]
            value = None
        else:
            # a big step: halve it until the objective does not decrease (it is concave, so this ends)
            if value is None:
                value = _objective(x, rows, prior, pins)
            t = 1.0
            while True:
                trial = [xi + t * si for xi, si in zip(x, step)]
                new_value = _objective(trial, rows, prior, pins)
                if new_value >= value - 1e-12 * abs(value) or t < 1e-8:
                    break
                t *= 0.5
            x, value, size = trial, new_value, size * t
        if size < tol:
            break
    return x


def _rank(vectors: Iterable[Sequence[float]], tol: float = 1e-9) -> int:
    """The rank of a set of vectors (Gaussian elimination with partial pivoting)."""
    m = [list(v) for v in vectors]
    rank = 0
    cols = len(m[0]) if m else 0
    for col in range(cols):
        pivot = max(range(rank, len(m)), key=lambda r: abs(m[r][col]), default=None)
        if pivot is None or abs(m[pivot][col]) <= tol:
            continue
        m[rank], m[pivot] = m[pivot], m[rank]
        for r in range(rank + 1, len(m)):
            f = m[r][col] / m[rank][col]
            if f:
                m[r] = [a - f * b for a, b in zip(m[r], m[rank])]
        rank += 1
    return rank


def _identifiable(n: int, contrasts: Iterable[Contrast], pinned: Collection[int] = ()) -> bool:
    """Whether the contrasts measure every difference between the ``n`` players (rank n - 1); with
    ``pinned`` players, every other player's rating on their scale (each is linked to a pinned one:
    the contrasts' rank over the others is their number)."""
    keep = [i for i in range(n) if i not in pinned]
    dense = []
    for c in contrasts:
        coef = dict(c)
        dense.append([coef.get(i, 0.0) for i in keep])
    return _rank(dense) == (len(keep) if pinned else n - 1)


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """The inverse of a symmetric positive definite matrix (its columns, which equal its rows)."""
    n = len(a)
    return [_solve_spd([row[:] for row in a], [1.0 if k == j else 0.0 for k in range(n)]) for j in range(n)]


def _inverse_free(a: list[list[float]], free: Sequence[int]) -> list[list[float]]:
    """The inverse of the ``free`` block of ``a``, with zero rows and columns for the others (fixed
    players: no variance)."""
    n = len(a)
    block = _inverse([[a[i][j] for j in free] for i in free])
    out = [[0.0] * n for _ in range(n)]
    for r, i in enumerate(free):
        for c, j in enumerate(free):
            out[i][j] = block[r][c]
    return out


def _anchored_sd(cov: Sequence[Sequence[float]], anchor: int | None) -> list[float]:
    """Standard deviations (Elo) of the anchored ratings, from a covariance of the logits."""
    n = len(cov)
    out = []
    for i in range(n):
        if anchor is None:  # r_i = x_i - mean(x)
            c = [(1.0 if k == i else 0.0) - 1.0 / n for k in range(n)]
        else:  # r_i = x_i - x_anchor
            c = [(1.0 if k == i else 0.0) - (1.0 if k == anchor else 0.0) for k in range(n)]
        var = sum(c[j] * sum(cov[j][k] * c[k] for k in range(n)) for j in range(n))
        out.append(math.sqrt(max(var, 0.0)) * ELO_PER_LOGIT)
    return out


def _sandwich(cov: Sequence[Sequence[float]], scores: Sequence[Sequence[float]]) -> list[list[float]]:
    """The cluster-robust covariance ``cov · B · cov``, ``B`` the spread of the clusters' score
    vectors (``D/(D-1)`` times the sum of their centred outer products); needs D >= 2."""
    d, n = len(scores), len(cov)
    mean = [sum(s[i] for s in scores) / d for i in range(n)]
    # cov · (s - mean) for every cluster: B's factors, mapped through cov
    mapped = [[sum(cov[i][k] * (s[k] - mean[k]) for k in range(n)) for i in range(n)] for s in scores]
    scale = d / (d - 1)
    return [[scale * sum(m[i] * m[j] for m in mapped) for j in range(n)] for i in range(n)]


def _t_density(t: float, df: int) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=64)
def t_quantile(q: float, df: int) -> float:
    """The ``q`` quantile (q > 1/2) of Student's t with ``df`` degrees of freedom (to about 1e-7)."""
    if df == 1:
        return math.tan(math.pi * (q - 0.5))
    if df == 2:
        return (2 * q - 1) / math.sqrt(2 * q * (1 - q))

    def cdf(t: float, steps: int = 400) -> float:  # Simpson's rule from 0
        h = t / steps
        total = _t_density(0.0, df) + _t_density(t, df)
        total += sum((4 if k % 2 else 2) * _t_density(k * h, df) for k in range(1, steps))
        return 0.5 + total * h / 3

    lo, hi = 0.0, 50.0
    while hi - lo > 1e-8:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return 0.5 * (lo + hi)


def _anchor_shift(elos: Sequence[float], names: Sequence[str], index: Mapping[str, int],
                  anchor: tuple[str, float] | None, average: float) -> float:
    if anchor is None:
        return average - sum(elos) / len(elos)
    bot, rating = anchor
    if bot not in index:
        raise ValueError(f"anchor {bot!r} is not among the players: {', '.join(names)}")
    return rating - elos[index[bot]]


@dataclass(frozen=True)
class _Scale:
    """How a fit's logits become the table's ratings: shifted so that their average is ``average``,
    or so that ``anchor`` has its rating; or, with ``pins`` (logits), on the pins' scale, logit 0
    being ``centre`` (their average rating)."""

    names: Sequence[str]
    index: Mapping[str, int]
    anchor: tuple[str, float] | None = None
    average: float = DEFAULT_AVERAGE
    pins: LogitPins | None = None
    centre: float = 0.0

    @classmethod
    def of(cls, names: Sequence[str], index: Mapping[str, int], anchor: tuple[str, float] | None,
           average: float, pins: Mapping[str, Pin] | None) -> _Scale:
        if not pins:
            return cls(names, index, anchor, average)
        if anchor is not None:
            raise ValueError("an anchor bot and pinned players cannot be combined: pin the anchor too")
        for name, pin in pins.items():
            if not (math.isfinite(pin[0]) and math.isfinite(pin[1]) and pin[1] >= 0):
                raise ValueError(f"a pin needs a finite rating and a standard deviation >= 0: {name} {pin}")
        present = {index[name]: Pin(*pin) for name, pin in pins.items() if name in index}
        if not present:
            raise ValueError(f"none of the pinned players ({', '.join(sorted(pins))}) is among the players: "
                             f"{', '.join(names)}")
        centre = sum(p.elo for p in present.values()) / len(present)
        logits = {i: ((p.elo - centre) / ELO_PER_LOGIT, p.sd / ELO_PER_LOGIT) for i, p in present.items()}
        return cls(names, index, pins=logits, centre=centre)

    def ratings(self, x: Sequence[float]) -> list[float]:
        elos = [self.centre + xi * ELO_PER_LOGIT for xi in x]
        if self.pins:
            return elos
        shift = _anchor_shift(elos, self.names, self.index, self.anchor, self.average)
        return [e + shift for e in elos]

    @property
    def free(self) -> list[int]:
        """The players whose rating is fitted (all but the fixed pins)."""
        return _free(len(self.names), self.pins)

    def inverse(self, information: list[list[float]]) -> list[list[float]]:
        """The covariance of the logits from the information (a fixed player's rows are zero)."""
        free = self.free
        return _inverse(information) if len(free) == len(self.names) else _inverse_free(information, free)

    def sd(self, cov: Sequence[Sequence[float]]) -> list[float]:
        """The standard deviations (Elo) of the table's ratings from a covariance of the logits: of a
        pinned scale's ratings themselves; of the differences from the average or the anchor."""
        if self.pins:
            return [math.sqrt(max(cov[i][i], 0.0)) * ELO_PER_LOGIT for i in range(len(cov))]
        return _anchored_sd(cov, self.index[self.anchor[0]] if self.anchor else None)


def fit(outcomes: Iterable[Outcome], anchor: tuple[str, float] | None = None, *,
        average: float = DEFAULT_AVERAGE, prior: float = 1.0,
        pins: Mapping[str, Pin] | None = None) -> dict[str, float]:
    """The maximum-likelihood Elo ratings (with ``prior`` virtual draws per player, see the module
    docstring), shifted so that their mean is ``average``, or so that ``anchor[0]`` is rated ``anchor[1]``;
    or with ``pins``: the pinned players held (see "Pinned players"), the others fitted on their scale."""
    outcomes = _check(outcomes)
    if not outcomes:
        return {}
    names, index = _index(outcomes)
    scale = _Scale.of(names, index, anchor, average, pins)
    rows = [(c, w, g) for c, (w, g) in _counts(outcomes, index).items()]
    elos = scale.ratings(_fit_logits(len(names), rows, prior, pins=scale.pins))
    return dict(zip(names, elos))


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) with linear interpolation between order statistics."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (pos - lo) * (sorted_values[hi] - sorted_values[lo])


def _tallies(outcomes: Sequence[Outcome],
             names: Sequence[str]) -> tuple[dict[str, Record], dict[str, dict[str, Record]]]:
    """Each player's record, and each against each: a team result counts once for every member
    (not one who is on both teams), and once against every opponent; never between partners."""
    totals = {name: Record() for name in names}
    h2h: dict[str, dict[str, Record]] = {name: {} for name in names}
    for o in outcomes:
        a, b = _members(o)
        mine, theirs = set(a) - set(b), set(b) - set(a)
        for p in mine:
            totals[p].add(o.score)
        for q in theirs:
            totals[q].add(1.0 - o.score)
        for p in mine:
            for q in theirs:
                h2h[p].setdefault(q, Record()).add(o.score)
                h2h[q].setdefault(p, Record()).add(1.0 - o.score)
    return totals, h2h


def _warnings(deal_sets: int, identifiable: bool, bootstrap: int) -> list[str]:
    out = []
    if not identifiable:
        out.append("individual ratings cannot be identified from these results (the same partnerships "
                   "throughout, or players never linked by any game): only the teams are measured")
    if bootstrap > 0 and deal_sets == 1:
        out.append("1 deal set: no interval can measure how results vary from deal to deal; "
                   "the intervals cannot be trusted")
    elif bootstrap > 0 and deal_sets < FEW_DEAL_SETS:
        out.append(f"only {deal_sets} deal sets (fewer than {FEW_DEAL_SETS}): the intervals are widened for the "
                   f"small sample (Student t, {deal_sets - 1} degree(s) of freedom) and the order is provisional")
    return out


_Columns = dict[Contrast, tuple[list[int], list[float], list[float]]]


def _columns(outcomes: Sequence[Outcome], index: Mapping[str, int]) -> tuple[_Columns, int]:
    """Per deal set: for each contrast, the deal sets it occurs in (0 to D - 1), and its points and
    games in each; and D."""
    deal_sets = sorted({o.deal_set for o in outcomes})
    d_index = {d: k for k, d in enumerate(deal_sets)}
    per_deal: list[list[Outcome]] = [[] for _ in deal_sets]
    for o in outcomes:
        per_deal[d_index[o.deal_set]].append(o)
    columns: _Columns = {}
    for k, group in enumerate(per_deal):
        for c, (w, g) in _counts(group, index).items():
            ks, ws, gs = columns.setdefault(c, ([], [], []))
            ks.append(k)
            ws.append(w)
            gs.append(g)
    return columns, len(deal_sets)


def _robust(cov: Sequence[Sequence[float]], columns: _Columns, x: Sequence[float], n_deals: int) -> list[list[float]]:
    """The cluster-robust covariance (logits) of the fit at ``x``: the sandwich of the deal sets'
    parts of the gradient (needs two deal sets)."""
    n = len(x)
    scores = [[0.0] * n for _ in range(n_deals)]  # each deal set's part of the gradient
    for c, (ks, ws, gs) in columns.items():
        p = _sigmoid(_dot(c, x))
        for k, w, g in zip(ks, ws, gs):
            r = w - g * p
            for i, v in c:
                scores[k][i] += v * r
    return _sandwich(cov, scores)


def _posterior(names: Sequence[str], elos: Sequence[float] | np.ndarray, cov: ranks.Matrix,
               robust: ranks.Matrix, n_deals: int, seed: int | None,
               spread_prior: bool = True, fit: Fit | None = None) -> ranks.RankPosterior:
    scale = ELO_PER_LOGIT * ELO_PER_LOGIT
    return ranks.RankPosterior.of(names, elos, np.asarray(cov) * scale, np.asarray(robust) * scale, n_deals - 1,
                                  seed or 0, spread_prior, fit)


class Tally:
    """Outcomes gathered for the scheduler's fit, as arrays: for every deal set and contrast, the
    points of its positive side and the games. :meth:`add` takes more (a deal set just played), so
    that a scheduler looking after every deal set does not read the earlier ones again."""

    def __init__(self, outcomes: Iterable[Outcome] = ()) -> None:
        self.index: dict[str, int] = {}  # every player, in the order first seen
        self._contrasts: dict[Contrast, int] = {}
        self._rows: list[np.ndarray] = []  # chunks of (deal set, contrast, points of its positive side)
        self._deals: set[int] = set()
        self.add(outcomes)

    def add(self, outcomes: Iterable[Outcome]) -> None:
        outcomes = list(outcomes)
        kinds = set(map(type, outcomes))
        teams = [o for o in outcomes if isinstance(o, TeamResult)] if TeamResult in kinds else []
        pairs = [o for o in outcomes if not isinstance(o, TeamResult)] if teams else outcomes
        if pairs:
            self._add_pairs(pairs, checked=kinds <= {PairResult})
        for o in map(_checked, teams):
            for name in (*o.a, *o.b):
                self.index.setdefault(name, len(self.index))
            c, score = _contrast(o, self.index)
            self._rows.append(np.array([[o.deal_set, self._contrasts.setdefault(c, len(self._contrasts)), score]]))
            self._deals.add(o.deal_set)

    def _add_pairs(self, pairs: Sequence[Outcome], checked: bool) -> None:
        """Pairwise results, all at once (a bad one: :func:`_checked`'s error); ``checked``: all of them
        :class:`PairResult` (four fields each), else plain tuples, whose length is checked first."""
        if not checked and set(map(len, pairs)) != {4}:
            _check(pairs)
        deal, a, b, score = zip(*pairs)
        for name in dict.fromkeys((*a, *b)):
            self.index.setdefault(name, len(self.index))
        first = np.fromiter(map(self.index.__getitem__, a), np.int64, len(a))
        second = np.fromiter(map(self.index.__getitem__, b), np.int64, len(b))
        points = np.asarray(score, dtype=float)
        bad = (first == second) | ~np.isin(points, _VALID_SCORES)
        if bad.any():
            _checked(pairs[int(np.argmax(bad))])
        lo, hi = np.minimum(first, second), np.maximum(first, second)  # the contrast e_lo - e_hi
        codes, which = np.unique(lo * len(self.index) + hi, return_inverse=True)
        ids = np.array([self._contrasts.setdefault(((int(c) // len(self.index), 1.0), (int(c) % len(self.index), -1.0)),
                                                   len(self._contrasts)) for c in codes])
        self._rows.append(np.column_stack([np.asarray(deal, dtype=float), ids[which],
                                           np.where(first == lo, points, 1.0 - points)]))
        self._deals.update(deal)

    @property
    def deal_sets(self) -> int:
        return len(self._deals)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The contrasts (a row each, a column per player), and for every (deal set, contrast) cell:
        its deal set (numbered from 0), its contrast, its points and its games."""
        contrasts = np.zeros((len(self._contrasts), len(self.index)))
        for c, k in self._contrasts.items():
            for i, v in c:
                contrasts[k, i] = v
        rows = np.concatenate(self._rows) if self._rows else np.zeros((0, 3))
        if len(self._rows) > 1:
            self._rows = [rows]
        _, deal = np.unique(rows[:, 0], return_inverse=True)
        cells, which = np.unique(deal * len(contrasts) + rows[:, 1].astype(np.int64), return_inverse=True)
        return (contrasts, cells // len(contrasts), cells % len(contrasts), np.bincount(which, rows[:, 2]),
                np.bincount(which).astype(float))


def _log_sigmoid_array(z: np.ndarray) -> np.ndarray:
    log: np.ndarray = -np.logaddexp(0.0, -z)
    return log


def _sigmoid_array(z: np.ndarray) -> np.ndarray:
    return 0.5 + 0.5 * np.tanh(0.5 * z)  # = 1 / (1 + e^-z), without overflow


def _newton(contrasts: np.ndarray, points: np.ndarray, games: np.ndarray, prior: float,
            lift: tuple[np.ndarray, np.ndarray] | None = None,
            start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_fit_logits` with numpy (the same damped Newton steps): the logits ``x`` that maximise
    the penalised log-likelihood (``points`` and ``games``: each contrast's over all deal sets), and
    its information and gradient at ``x``. ``lift`` ``(M, o)``: the maximum over ``x = M θ + o``
    only (a hypothesis that fixes a difference), from ``start`` (logits: the unconstrained fit)."""
    if prior <= 0:
        raise ValueError("prior must be positive (it fixes the level and keeps ratings finite)")

    def objective(x: np.ndarray) -> float:
        z = contrasts @ x
        return float(points @ _log_sigmoid_array(z) + (games - points) @ _log_sigmoid_array(-z)
                     + 0.5 * prior * (_log_sigmoid_array(x) + _log_sigmoid_array(-x)).sum())

    def information(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p, q = _sigmoid_array(contrasts @ x), _sigmoid_array(x)
        grad = contrasts.T @ (points - games * p) + prior * (0.5 - q)
        a = (contrasts.T * (games * p * (1.0 - p))) @ contrasts
        a.flat[::len(a) + 1] += prior * q * (1.0 - q)  # the diagonal
        return a, grad

    def lifted(theta: np.ndarray) -> np.ndarray:
        return theta if lift is None else lift[0] @ theta + lift[1]

    def newton_step(x: np.ndarray) -> tuple[np.ndarray, float]:
        """The Newton step (in θ) at ``x``, and the largest move of a logit it makes."""
        a, grad = information(x)
        if lift is not None:
            a, grad = lift[0].T @ a @ lift[0], lift[0].T @ grad
        try:
            step = np.linalg.solve(a, grad)
        except np.linalg.LinAlgError:  # far out (a hypothesis thousands of Elo away): what can be solved
            step = np.linalg.lstsq(a, grad, rcond=None)[0]
        return step, float(np.abs(step if lift is None else lift[0] @ step).max(initial=0.0))

    if lift is None:
        theta = np.zeros(contrasts.shape[1])
    else:
        theta = np.linalg.lstsq(lift[0], (np.zeros(contrasts.shape[1]) if start is None else start) - lift[1],
                                rcond=None)[0]
    value = None
    for _ in range(100):
        x = lifted(theta)
        step, size = newton_step(x)
        if size <= _SMALL_STEP:  # near the maximum: the full step
            theta, value = theta + step, None
        else:  # a big step: halved until the objective does not decrease
            value = objective(x) if value is None else value
            t = 1.0
            while True:
                trial = theta + t * step
                new_value = objective(lifted(trial))
                if new_value >= value - 1e-12 * abs(value) or t < 1e-8:
                    break
                t *= 0.5
            theta, value, size = trial, new_value, size * t
        if size < 1e-6:
            break
    x = lifted(theta)
    return (x, *information(x))


@dataclass(frozen=True, eq=False)
class Fit:
    """The scheduler's fit of a :class:`Tally` (with numpy): the posterior's ratings and covariances,
    and the score test of a difference of two ratings that a stopping rule asks
    (:meth:`score_test`)."""

    names: list[str]
    contrasts: np.ndarray  # a row per contrast, a column per player
    deal: np.ndarray  # for each (deal set, contrast) cell: its deal set, contrast, points, games
    which: np.ndarray
    points: np.ndarray
    games: np.ndarray
    deal_sets: int
    prior: float
    x: np.ndarray = field(init=False)  # the logits
    information: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        x, information, _ = _newton(self.contrasts, *self._totals(), self.prior)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "information", information)

    @classmethod
    def of(cls, tally: Tally, prior: float = 1.0) -> Fit:
        return cls(list(tally.index), *tally.arrays(), tally.deal_sets, prior)

    def _totals(self) -> tuple[np.ndarray, np.ndarray]:
        k = len(self.contrasts)
        return np.bincount(self.which, self.points, k), np.bincount(self.which, self.games, k)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Each deal set's part of the gradient of the log-likelihood at ``x`` (deal sets × players)."""
        residual = self.points - self.games * _sigmoid_array(self.contrasts[self.which] @ x)
        k = len(self.contrasts)
        by_deal: np.ndarray = np.bincount(self.deal * k + self.which, residual, self.deal_sets * k) \
            .reshape(self.deal_sets, k) @ self.contrasts
        return by_deal

    def covariances(self) -> tuple[np.ndarray, np.ndarray]:
        """The inverse information and the cluster-robust sandwich over deal sets (logits)."""
        cov = np.linalg.inv(self.information)
        scores = self.scores(self.x)
        mapped = (scores - scores.mean(axis=0)) @ cov
        return cov, self.deal_sets / (self.deal_sets - 1) * mapped.T @ mapped

    def score_test(self, a: str, b: str, elo: float) -> tuple[float, float]:
        """The cluster-robust score test of ``R_a - R_b = elo``: its statistic ``z`` (positive when the
        results put the difference above ``elo``), and the variance (Elo²) of the difference's
        estimate at the hypothesis. The fit is redone with the difference fixed; ``z`` is the score
        of the difference there, with the other ratings' part projected out, over its standard
        deviation: the larger of its spread over deal sets and its information (the floor the
        posterior keeps, :mod:`referee.stats.ranks`). Unlike the difference of the fit over its
        standard deviation (the Wald statistic), it does not lose its way when one entry won every
        game against the other: a sweep is the most decisive record, not one whose estimate runs
        off to where its information vanishes."""
        n, i, j = len(self.names), self.names.index(a), self.names.index(b)
        m = np.delete(np.eye(n), i, axis=1)  # θ: every logit but a's; x_a = x_b + elo
        m[i, j - (j > i)] = 1.0
        offset = np.zeros(n)
        offset[i] = elo / ELO_PER_LOGIT
        x, information, grad = _newton(self.contrasts, *self._totals(), self.prior, (m, offset), self.x)
        nuisance = m.T @ information @ m
        towards = np.linalg.lstsq(nuisance, m.T @ information[:, i], rcond=None)[0]  # a's direction on the others
        efficient = information[i, i] - information[i] @ m @ towards  # the difference's own information
        score = grad[i] - grad @ m @ towards
        parts = self.scores(x)
        parts = parts[:, i] - parts @ m @ towards
        spread = self.deal_sets / (self.deal_sets - 1) * float(((parts - parts.mean()) ** 2).sum())
        variance = max(spread, efficient)
        if not (efficient > 0 and math.isfinite(score) and math.isfinite(variance)):
            return 0.0, math.inf  # so far out that nothing is left to measure: no evidence either way
        return float(score / math.sqrt(variance)), variance / efficient ** 2 * ELO_PER_LOGIT ** 2


@dataclass(frozen=True)
class Covariances:
    """A fit's ratings (their average ``DEFAULT_AVERAGE``) and two covariances of their errors (Elo²,
    rows and columns in the order of ``names``): the observed information's, and the cluster-robust
    one over deal sets (None with one deal set), the two that widen the rating intervals."""

    names: tuple[str, ...]
    elos: dict[str, float]
    info: tuple[tuple[float, ...], ...]
    robust: tuple[tuple[float, ...], ...] | None
    deal_sets: int

    def sd(self, weights: Mapping[str, float]) -> float:
        """The standard error (Elo) of ``Σ weights[name] · R_name`` (a difference: ``{a: 1, b: -1}``):
        the larger of the two covariances' (as the intervals take the wider)."""
        c = [weights.get(name, 0.0) for name in self.names]

        def variance(m: Sequence[Sequence[float]]) -> float:
            total: float = sum(ci * sum(map(mul, row, c)) for ci, row in zip(c, m))
            return total
        return math.sqrt(max(variance(self.info), variance(self.robust) if self.robust else 0.0, 0.0))


def covariances(outcomes: Iterable[Outcome], *, prior: float = 1.0) -> Covariances | None:
    """The fit of ``outcomes`` and its two covariances (one fit, no bootstrap); None without outcomes."""
    outcomes = _check(outcomes)
    if not outcomes:
        return None
    names, index = _index(outcomes)
    n = len(names)
    rows = [(c, w, g) for c, (w, g) in _counts(outcomes, index).items()]
    columns, n_deals = _columns(outcomes, index)
    x_hat = _fit_logits(n, rows, prior)
    cov = _inverse(_information(n, rows, prior, x_hat))
    scale = ELO_PER_LOGIT * ELO_PER_LOGIT

    def elo2(m: Sequence[Sequence[float]]) -> tuple[tuple[float, ...], ...]:
        return tuple(tuple(v * scale for v in row) for row in m)
    robust = elo2(_robust(cov, columns, x_hat, n_deals)) if n_deals >= 2 else None
    elos = _Scale(names, index).ratings(x_hat)
    return Covariances(tuple(names), dict(zip(names, elos)), elo2(cov), robust, n_deals)


def rank_posterior(outcomes: Iterable[Outcome] | Tally, seed: int = 0, *, prior: float = 1.0,
                   spread_prior: bool = True) -> ranks.RankPosterior | None:
    """The ratings' posterior (:mod:`referee.stats.ranks`: P(a above b), P(rank = k), top-k, settled
    orders, differences and score tests for a stopping rule) from these outcomes (or a :class:`Tally`
    of them), without a bootstrap: one fit (:class:`Fit`) and its two covariances, with numpy. None
    with fewer than two deal sets (nothing measures how results vary from deal to deal).
    ``spread_prior=False`` leaves out the prior on the spread (for comparison)."""
    tally = outcomes if isinstance(outcomes, Tally) else Tally(outcomes)
    if tally.deal_sets < 2:
        return None
    fit = Fit.of(tally, prior)
    cov, robust = fit.covariances()
    return _posterior(fit.names, fit.x * ELO_PER_LOGIT, cov, robust, tally.deal_sets, seed, spread_prior, fit)


def rate(outcomes: Iterable[Outcome], anchor: tuple[str, float] | None = None, bootstrap: int = 1000,
         seed: int | None = 0, confidence: float = 0.95, *, average: float = DEFAULT_AVERAGE,
         prior: float = 1.0, pins: Mapping[str, Pin] | None = None) -> Ratings:
    """The rating table: the fit of :func:`fit`, intervals (``bootstrap`` resamples of deal sets,
    0 for no intervals; ``seed`` makes them reproducible), tallies and head-to-head records.
    ``pins``: some players held on a given scale (see "Pinned players"; pinned players absent from
    ``outcomes`` are left out, and at least one must be present)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    outcomes = _check(outcomes)
    if not outcomes:
        return Ratings([], {}, bootstrap, confidence)
    names, index = _index(outcomes)
    n = len(names)
    totals, h2h = _tallies(outcomes, names)

    # the point estimate
    scale = _Scale.of(names, index, anchor, average, pins)
    rows = [(c, w, g) for c, (w, g) in _counts(outcomes, index).items()]
    x_hat = _fit_logits(n, rows, prior, pins=scale.pins)
    elos = scale.ratings(x_hat)

    columns, n_deals = _columns(outcomes, index)

    # the bootstrap over deal sets
    samples: dict[str, list[float]] = {}
    if bootstrap > 0:
        rng = random.Random(seed)
        boot: list[list[float]] = [[] for _ in names]
        for _ in range(bootstrap):
            times = [0] * n_deals  # how often each deal set is drawn
            for k in rng.choices(range(n_deals), k=n_deals):
                times[k] += 1
            resampled = []
            for c, (ks, ws, gs) in columns.items():
                m = [times[k] for k in ks]
                g = sum(map(mul, m, gs))
                if g:
                    resampled.append((c, sum(map(mul, m, ws)), g))
            b_elos = scale.ratings(_fit_logits(n, resampled, prior, start=x_hat, pins=scale.pins))
            for i, e in enumerate(b_elos):
                boot[i].append(e)
        samples = {name: boot[i] for i, name in enumerate(names)}

    # the half-widths of the observed-information and the cluster-robust intervals
    q_lo, q_hi = (1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0
    half = [0.0] * n
    bound_half = half  # a bound's: the observed information with Student's t too (see "Bounds")
    posterior = None
    if samples:
        cov = scale.inverse(_information(n, rows, prior, x_hat, pins=scale.pins))
        z = statistics.NormalDist().inv_cdf(q_hi)
        info = scale.sd(cov)
        half = bound_half = [z * s for s in info]
        if n_deals >= 2:
            robust_cov = _robust(cov, columns, x_hat, n_deals)
            tq = t_quantile(q_hi, n_deals - 1)
            robust = scale.sd(robust_cov)
            half = [max(h, tq * s) for h, s in zip(half, robust)]
            bound_half = [max(h, tq * s) for h, s in zip(half, info)]
            free = scale.free  # the posterior of the fitted players (a fixed one has no error)
            if len(free) >= 2:
                posterior = _posterior([names[i] for i in free], [elos[i] for i in free], _block(cov, free),
                                       _block(robust_cov, free), n_deals, seed)

    out = []
    for i, name in enumerate(names):
        t = totals[name]
        bound = None
        if scale.pins and i in scale.pins:
            pass  # held on the scale: its rating is given, never a bound
        elif t.games and t.points == 0:
            bound = Bound.UPPER
        elif t.games and t.points == t.games:
            bound = Bound.LOWER
        lo = hi = pm = None
        if samples:
            ordered = sorted(samples[name])
            lo = min(_percentile(ordered, q_lo), elos[i] - (bound_half if bound == Bound.LOWER else half)[i])
            hi = max(_percentile(ordered, q_hi), elos[i] + (bound_half if bound == Bound.UPPER else half)[i])
            pm = (hi - lo) / 2.0
        out.append(PlayerRating(name, elos[i], lo, hi, pm, t.games, t.wins, t.draws, t.losses, t.score_pct,
                                bound=bound))
    out.sort(key=lambda r: (-r.elo, r.name))
    identifiable = _identifiable(n, columns, scale.pins or ())
    result = Ratings(out, h2h, bootstrap, confidence, samples, n_deals, identifiable,
                     not (samples and n_deals < 2), _warnings(n_deals, identifiable, bootstrap), posterior)
    for upper, lower in pairwise(out):
        upper.los_next = result.los(upper.name, lower.name)
    return result


def _block(matrix: Sequence[Sequence[float]], keep: Sequence[int]) -> list[list[float]]:
    return [[matrix[i][j] for j in keep] for i in keep]


def _interval(row: PlayerRating) -> tuple[float, float]:
    """A row's interval (lo, hi), set in a table with bootstrap samples (every row has one there)."""
    assert row.lo is not None and row.hi is not None
    return row.lo, row.hi


def rate_teams(outcomes: Iterable[Outcome], players: Ratings, seed: int | None = 0) -> Ratings:
    """The partnerships' table (team games): each team's record, team against team, and its Elo.

    Where the players' ratings are identified (``players``: :func:`rate` of the same outcomes) a
    team's Elo is the average of its members' (the model's team strength) and its interval is
    the bootstrap's for that average, widened by the average of the members' widenings (the
    standard deviation of an average is at most the average of the standard deviations). Where
    they are not, the teams are rated as players (:func:`rate` of :func:`as_teams`), which
    measures the teams that met (and says when even they cannot be compared)."""
    outcomes = _check(outcomes)
    if not players.identifiable:
        return rate(as_teams(outcomes), bootstrap=players.bootstrap, seed=seed, confidence=players.confidence)
    members = {_team_name(side): side if isinstance(side, tuple) else (side, side)
               for o in outcomes for side in (o.a, o.b)}
    records = rate(as_teams(outcomes), bootstrap=0)
    q_lo, q_hi = (1.0 - players.confidence) / 2.0, (1.0 + players.confidence) / 2.0
    samples: dict[str, list[float]] = {}
    rows = []
    for r in records.rows:
        team = [players[m] for m in members[r.name]]
        elo = sum(m.elo for m in team) / len(team)
        lo = hi = pm = None
        if players.samples:
            means = [sum(xs) / len(xs) for xs in zip(*(players.samples[m.name] for m in team))]
            samples[r.name] = means
            ordered = sorted(means)
            lo = min(_percentile(ordered, q_lo), elo - sum(m.elo - _interval(m)[0] for m in team) / len(team))
            hi = max(_percentile(ordered, q_hi), elo + sum(_interval(m)[1] - m.elo for m in team) / len(team))
            pm = (hi - lo) / 2.0
        rows.append(PlayerRating(r.name, elo, lo, hi, pm, r.games, r.wins, r.draws, r.losses, r.score_pct))
    rows.sort(key=lambda r: (-r.elo, r.name))
    result = Ratings(rows, records.head_to_head, players.bootstrap, players.confidence, samples,
                     players.deal_sets, True, players.intervals_trusted, [])
    if players.posterior is not None:  # a team plays at its members' average: a contrast of their posterior
        for upper, lower in pairwise(rows):
            weights: dict[str, float] = {}
            for side, sign in ((members[upper.name], 1.0), (members[lower.name], -1.0)):
                for m in side:
                    weights[m] = weights.get(m, 0.0) + sign / len(side)
            upper.los_next = players.posterior.contrast(weights)
    return result
