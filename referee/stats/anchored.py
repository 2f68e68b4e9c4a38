"""Ratings on a reference pool's scale: the anchored fit, and the check that the scale still holds.

Pure computation, no I/O (the pool file is :mod:`referee.results.pool`; docs/pool.md). Typical use::

    scale = reference(pool_outcomes, bootstrap=1000)     # the pool's games among themselves (pool make)
    run = anchored(outcomes, scale)                      # any run that includes the pool's bots
    run.ratings.rows                                     # every rating and interval on the pool's scale
    if run.check.verdict is Scale.OFF:                   # the pool's bots did not keep their distances
        print(run.check.line("pool 3f2a9c81d0e4"))

Why a pool
----------
A plain fit (:func:`referee.stats.ratings.rate`) puts the field's average at 1500: a bot's rating
then says how it compares with that run's field, and the same bot rated in a stronger field reads
lower. A **reference pool** is a frozen set of house bots whose ratings were fitted once, among
themselves, for one game, options and clock (:func:`reference`). A run that includes them holds them
at those ratings, and every other rating is on that scale, whoever else played.

Fixed anchors, not priors
-------------------------
The pool's bots are **fixed** (:class:`referee.stats.ratings.Pin` with ``sd = 0``), as Ordo's
multi-anchor mode: the scale is *defined* by the pool's ratings, so the error of the pool's own fit is
the same offset in every run on that pool, and cancels when two runs are compared; a run's intervals
carry its own sampling error only. Normal priors around the pool's ratings (``sd`` from the pool's
intervals; ``priors=True`` here, for comparison) would add the pool's error to every interval, and
let each run's games move the anchors, which is the drift a pool exists to stop; a changed setting
would be partly absorbed instead of shown. Measured (``python -m referee.tools.anchoring``,
docs/pool.md): with fixed anchors two runs with different fields agree within their intervals at the
stated rate; priors agree as often with intervals as wide, and absorb a point or two of a changed
setting, which the check flags either way.

The check that the scale holds
------------------------------
Fixed anchors are only right if the pool's bots still play as they did when the pool was made
(another machine, another clock, a changed host, a bot swapped). :func:`check_scale` refits the
pool's bots among themselves from the run's games alone (the results between two pool bots; in a
4-player game, each pair of pool bots at the table) and compares every difference ``R_a - R_b``
with the pool's: the move ``m = d_run - d_pool`` against its standard error
``sqrt(se_run² + se_pool²)`` (each the larger of the observed-information and the cluster-robust
one, as the intervals). A difference moved when ``|m|`` exceeds the Student t quantile with ``D - 1``
degrees of freedom (``D`` the run's deal sets) at ``1 - α / (2k)``, ``k`` the pairs compared
(Bonferroni): in a run where nothing changed, the check says "off-scale" at most a share ``α = 1 -
confidence`` of the time (measured: the tool's false alarms). With one deal set, or no game between
two pool bots, it cannot check, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations
from statistics import NormalDist

from referee.stats.ratings import (
    Outcome,
    Pin,
    Ratings,
    TeamResult,
    covariances,
    rate,
    t_quantile,
)


@dataclass(frozen=True)
class PoolRating:
    """A pool bot's rating on the pool's scale and its interval from the pool's own run."""

    elo: float
    lo: float
    hi: float


@dataclass(frozen=True)
class PairDifference:
    """``R_a - R_b`` as the pool's run measured it, and its standard error (Elo)."""

    a: str
    b: str
    elo: float
    se: float


@dataclass(frozen=True)
class Reference:
    """A pool's scale: its bots' ratings (fixed in every run that includes them; their intervals at
    ``confidence`` from the pool's own run of ``deal_sets`` deal sets) and every pair's difference
    with its standard error (what :func:`check_scale` compares a run's with)."""

    ratings: Mapping[str, PoolRating]
    differences: tuple[PairDifference, ...]
    deal_sets: int
    confidence: float = 0.95

    @property
    def anchors(self) -> dict[str, float]:
        """Each pool bot's fixed rating."""
        return {name: r.elo for name, r in self.ratings.items()}

    def difference(self, a: str, b: str) -> PairDifference:
        """``R_a - R_b`` in the pool (either order)."""
        for d in self.differences:
            if (d.a, d.b) == (a, b):
                return d
            if (d.a, d.b) == (b, a):
                return PairDifference(a, b, -d.elo, d.se)
        raise KeyError(f"no difference between {a} and {b} in the pool")


def reference(outcomes: Iterable[Outcome], *, bootstrap: int = 1000, seed: int = 0,
              confidence: float = 0.95) -> Reference:
    """The pool's scale from its bots' games among themselves (:func:`referee.stats.ratings.rate`,
    average 1500): their ratings with intervals, and every pair's difference with its standard error."""
    outcomes = list(outcomes)
    table = rate(outcomes, bootstrap=bootstrap, seed=seed, confidence=confidence)
    if not table.rows:
        raise ValueError("a pool needs results between its bots")
    if not table.identifiable:
        raise ValueError("the pool's results do not link every bot to every other: no scale can be fitted")
    if table.deal_sets < 2:
        raise ValueError("a pool needs at least two deal sets (one measures no deal-to-deal variation)")
    errors = covariances(outcomes)
    assert errors is not None  # the table has rows
    ratings = {r.name: PoolRating(r.elo, r.lo if r.lo is not None else r.elo, r.hi if r.hi is not None else r.elo)
               for r in table.rows}
    names = [r.name for r in table.rows]  # best first
    differences = tuple(PairDifference(a, b, ratings[a].elo - ratings[b].elo, errors.sd({a: 1.0, b: -1.0}))
                        for a, b in combinations(names, 2))
    return Reference(ratings, differences, table.deal_sets, confidence)


# --- the check --------------------------------------------------------------------------------


class Scale(StrEnum):
    """The verdict of :func:`check_scale`."""

    #: every difference between the pool's bots in this run is within its interval
    ON = "on-scale"
    #: at least one moved: the run's ratings are not on the pool's scale
    OFF = "off-scale"
    #: nothing to compare (no game between two pool bots, or one deal set)
    UNCHECKED = "unchecked"


@dataclass(frozen=True)
class Move:
    """How a difference between two pool bots moved: ``R_a - R_b`` in this run (``run``, standard
    error ``run_se``) and in the pool (``pool``, ``pool_se``); ``limit`` is the largest move that
    counts as within (the check's quantile times the combined standard error)."""

    a: str
    b: str
    run: float
    run_se: float
    pool: float
    pool_se: float
    limit: float

    @property
    def moved(self) -> float:
        return self.run - self.pool

    @property
    def se(self) -> float:
        return math.hypot(self.run_se, self.pool_se)

    @property
    def outside(self) -> bool:
        return abs(self.moved) > self.limit

    @property
    def ratio(self) -> float:
        """The move over its limit (above 1: outside)."""
        return abs(self.moved) / self.limit if self.limit > 0 else math.inf if self.moved else 0.0


@dataclass(frozen=True)
class ScaleCheck:
    """The verdict, every compared pair (the largest move relative to its limit first), and why it
    could not check (``reason``, for :attr:`Scale.UNCHECKED`)."""

    verdict: Scale
    moves: tuple[Move, ...] = ()
    reason: str = ""
    deal_sets: int = 0
    confidence: float = 0.95

    @property
    def worst(self) -> Move | None:
        return self.moves[0] if self.moves else None

    @property
    def moved(self) -> tuple[Move, ...]:
        """The pairs outside their interval."""
        return tuple(m for m in self.moves if m.outside)

    def line(self, pool: str = "the pool") -> str:
        """The verdict in one line (``pool``: how to name the pool, e.g. ``"pool 3f2a9c81d0e4"``)."""
        if self.verdict is Scale.UNCHECKED:
            return f"scale of {pool} not checked: {self.reason}"
        w = self.worst
        assert w is not None
        pairs = f"{len(self.moves)} difference{'s' if len(self.moves) != 1 else ''}"
        if self.verdict is Scale.ON:
            return (f"on the scale of {pool}: its bots' {pairs} in this run hold{'s' if len(self.moves) == 1 else ''} "
                    f"(the largest move: {w.a} over {w.b} {_signed(w.moved)} Elo, within ±{w.limit:.0f})")
        count = f"{len(self.moved)} of {pairs} moved" if len(self.moved) > 1 else f"1 of {pairs} moved"
        return (f"off-scale: {pool}'s bots do not keep their distances in this run ({count}): {w.a} over {w.b} "
                f"is {_signed(w.run)} Elo here, {_signed(w.pool)} in the pool (moved {_signed(w.moved)}, beyond "
                f"±{w.limit:.0f}); these ratings are not on its scale")


def _signed(elo: float) -> str:
    """An Elo difference with its sign, never ``-0``."""
    return f"{round(elo):+d}"


def _among(outcomes: Iterable[Outcome], pool: Mapping[str, object]) -> list[Outcome]:
    """The outcomes between pool bots only (a team result whose every member is one)."""
    out = []
    for o in outcomes:
        sides = (o.a, o.b) if isinstance(o, TeamResult) else ((o.a,), (o.b,))
        if all(name in pool for side in sides for name in side):
            out.append(o)
    return out


def check_scale(outcomes: Iterable[Outcome], ref: Reference, *, confidence: float = 0.95) -> ScaleCheck:
    """Refit the pool's bots among themselves from this run's games and compare every difference with
    the pool's (see "The check that the scale holds"): off-scale when any moved outside its interval,
    the family of pairs held at ``confidence``."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    errors = covariances(_among(outcomes, ref.ratings))
    if errors is None or len(errors.names) < 2:
        return ScaleCheck(Scale.UNCHECKED, reason="the pool's bots played no game against each other in this run",
                          confidence=confidence)
    if errors.deal_sets < 2:
        return ScaleCheck(Scale.UNCHECKED, reason="one deal set measures no deal-to-deal variation",
                          deal_sets=errors.deal_sets, confidence=confidence)
    order = sorted(errors.names, key=lambda name: -ref.ratings[name].elo)  # the pool's order: a over b
    pairs = list(combinations(order, 2))
    q = t_quantile(1.0 - (1.0 - confidence) / (2 * len(pairs)), errors.deal_sets - 1)
    moves = []
    for a, b in pairs:
        pool = ref.difference(a, b)
        run_se = errors.sd({a: 1.0, b: -1.0})
        moves.append(Move(a, b, errors.elos[a] - errors.elos[b], run_se, pool.elo, pool.se,
                          q * math.hypot(run_se, pool.se)))
    moves.sort(key=lambda m: (-m.ratio, m.a, m.b))
    verdict = Scale.OFF if any(m.outside for m in moves) else Scale.ON
    return ScaleCheck(verdict, tuple(moves), deal_sets=errors.deal_sets, confidence=confidence)


# --- the anchored fit -------------------------------------------------------------------------


@dataclass(frozen=True)
class Anchored:
    """A run's ratings on the pool's scale (the pool's bots held at their ratings) and the check."""

    ratings: Ratings
    check: ScaleCheck

    @property
    def off_scale(self) -> bool:
        return self.check.verdict is Scale.OFF


def pins(ref: Reference, *, priors: bool = False) -> dict[str, Pin]:
    """The pool's bots as pins: fixed at their ratings; with ``priors``, normal priors whose standard
    deviation is the pool interval's (its half-width over the normal quantile), for comparison."""
    if not priors:
        return {name: Pin(r.elo) for name, r in ref.ratings.items()}
    z = NormalDist().inv_cdf((1.0 + ref.confidence) / 2.0)
    return {name: Pin(r.elo, max((r.hi - r.lo) / (2.0 * z), 1e-6)) for name, r in ref.ratings.items()}


def rate_anchored(outcomes: Iterable[Outcome], ref: Reference, *, bootstrap: int = 1000, seed: int | None = 0,
                  confidence: float = 0.95, priors: bool = False) -> Ratings:
    """The rating table on the pool's scale: the pool's bots held at their ratings (those that played
    in this run), every other rating and interval fitted on that scale (bootstrap over deal sets,
    widened for small samples: :func:`referee.stats.ratings.rate`). Raises ValueError when no pool bot
    played."""
    table = rate(list(outcomes), bootstrap=bootstrap, seed=seed, confidence=confidence, pins=pins(ref, priors=priors))
    unlinked = _unlinked(table, ref)
    if unlinked:
        table.warnings.append(f"not linked to the pool by any game (their ratings mean nothing on its scale): "
                              f"{', '.join(unlinked)}")
    return table


def _unlinked(table: Ratings, ref: Reference) -> list[str]:
    """The players with no chain of games to a pool bot."""
    reached = {name for name in table.head_to_head if name in ref.ratings}
    frontier = list(reached)
    while frontier:
        for other in table.head_to_head[frontier.pop()]:
            if other not in reached:
                reached.add(other)
                frontier.append(other)
    return sorted(set(table.head_to_head) - reached)


def anchored(outcomes: Iterable[Outcome], ref: Reference, *, bootstrap: int = 1000, seed: int | None = 0,
             confidence: float = 0.95) -> Anchored:
    """A run that includes the pool: its ratings on the pool's scale (:func:`rate_anchored`) and the
    check that the scale holds in it (:func:`check_scale`)."""
    outcomes = list(outcomes)
    return Anchored(rate_anchored(outcomes, ref, bootstrap=bootstrap, seed=seed, confidence=confidence),
                    check_scale(outcomes, ref, confidence=confidence))
