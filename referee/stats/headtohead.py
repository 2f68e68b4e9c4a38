"""What the rating tables print beside the ratings: head to head, game pairs, LOS, opponents.

Pure computation, no I/O. The input is the matches as the store keeps them, reduced to what
ranks the seats (``MatchSeats``: the deal set, the bot in each seat and a value per seat,
higher is better: the final score, or the placing negated).

Pairwise results
----------------
A match gives one **pairwise result** for every two seats held by different bots (win, draw or
loss by the ranking value), as the rating fit counts them (:mod:`referee.stats.ratings`): an
Aegis match gives one, a Confirmation match of four different bots six (three per bot), one of
three bots (one of them in two seats) five.

Game pairs and the pentanomial
------------------------------
Duplicate play deals every deal set to every seat, so a pairwise result of A in seat ``s``
against B in seat ``t`` has a **seat-swapped twin**: the result of the same deal set with B in
seat ``s`` and A in seat ``t`` (Aegis: the return match; Confirmation: another rotation of
the line-up). The two form a **game pair**, as fishtest's two games of one opening with the
colours reversed; A's points over the pair are 0, ½, 1, 1½ or 2, and the counts of pairs by
those points are the pair's **pentanomial**. Results are paired in the order of the matches;
a result whose twin was not played (an interrupted run, a schedule without it) stays
**unpaired** and is counted as such.

Elo difference head to head
---------------------------
From the two bots' results against each other alone (not the joint fit): the point estimate is the
Bradley-Terry fit of :func:`referee.stats.ratings.rate` for two players, with the other anchored at
0. The interval is built on the **score scale**, where the edges behave (a logit-scale interval
breaks down after a sweep or a few losses): with ``ȳ`` the first bot's points per result over
``n`` results on ``D`` deal sets, it is the Wilson score interval

    { μ : (ȳ - μ)² <= q² · φ · μ (1 - μ) / n }

mapped to Elo (``elo(μ)``), with ``q`` the Student t quantile for ``D - 1`` degrees of freedom (the
normal one with a single deal set) and ``φ`` the **design effect** of the deal sets: the
cluster-robust variance of ``ȳ`` over deal sets (``D/(D-1)`` times the spread of their points)
divided by the binomial ``ȳ(1 - ȳ)/n``, never below 1 (games of one deal set are correlated; a
sweep leaves nothing to measure it with, and counts as independent games). With a single deal set
nothing measures it: ``φ = n``, the deal set counts as one game. Near the edges the Wilson interval
is too short on its open side (one loss in 80 to a bot that almost never loses), so the interval is
the union with the exact (Clopper-Pearson) binomial interval of the effective counts
``x = ȳ n / φ`` out of ``n / φ``: ``[Beta(α/2; x, n/φ - x + 1), Beta(1 - α/2; x + 1, n/φ - x)]``.
After a sweep (``ȳ = 1`` or 0) the interval reaches ``μ = 1`` (0): infinite Elo, and the difference is
printed as a **bound** (``> +40``; :attr:`Difference.bound`). The likelihood of superiority is the
more cautious of the same two tests at ``μ = ½`` (Student's ``T_{D-1}((ȳ - ½) / √(φ / 4n))`` and the
exact binomial one), never past ½ the other way, so that the interval excludes 0 exactly when the
LOS passes 97.5% (or falls below 2.5%), and an even score is ½. Measured calibration:
``python -m referee.tools.calibration --part h2h`` and docs/tournaments.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import NamedTuple

from referee.stats import ratings
from referee.stats.ranks import beta_cdf, beta_quantile, t_cdf
from referee.stats.ratings import PairResult, Record
from referee.stats.sprt import elo_of


class MatchSeats(NamedTuple):
    """One match as the tables need it: ``rank_by[seat]`` is higher for the better seat;
    ``teams``, in a team game (Confirmation's pairs), the seats of each team."""

    deal_set: int
    lineup: tuple[str, ...]
    rank_by: tuple[float, ...]
    teams: tuple[tuple[int, ...], ...] | None = None

    def opposed(self) -> Iterator[tuple[int, int]]:
        """Every two seats (s < t) held by different bots that are not partners."""
        team_of = {s: i for i, team in enumerate(self.teams or ()) for s in team}
        for s in range(len(self.lineup)):
            for t in range(s + 1, len(self.lineup)):
                if self.lineup[s] != self.lineup[t] and (not self.teams or team_of[s] != team_of[t]):
                    yield s, t


def _score(m: MatchSeats, s: int, t: int) -> float:
    d = m.rank_by[s] - m.rank_by[t]
    return 1.0 if d > 0 else 0.0 if d < 0 else 0.5  # seat s's


def pair_results(matches: Iterable[MatchSeats]) -> list[ratings.Outcome]:
    """The results of these matches as the rating fit takes them: pairwise between seats, or, in
    a team game, between the teams (:func:`referee.stats.ratings.team_results`)."""
    out: list[ratings.Outcome] = []
    for m in matches:
        if m.teams:
            out += ratings.team_results(m.deal_set, m.lineup, m.rank_by, m.teams)
        else:
            out += ratings.pairwise_from_game(m.deal_set, m.lineup, m.rank_by)
    return out


def seat_results(matches: Iterable[MatchSeats]) -> list[PairResult]:
    """One pairwise result per two opposed seats (:meth:`MatchSeats.opposed`): what head-to-head
    records count. Without teams these are the fit's own results; in a team game each bot's
    result against each opponent (never a partner), by its team's result."""
    return [PairResult(m.deal_set, m.lineup[s], m.lineup[t], _score(m, s, t))
            for m in matches for s, t in m.opposed()]


# --- game pairs -------------------------------------------------------------------


@dataclass
class Pentanomial:
    """Game pairs of one bot against another: ``counts[k]`` pairs in which it scored k/2 points."""

    counts: list[int] = field(default_factory=lambda: [0] * 5)
    unpaired: int = 0  # pairwise results whose seat-swapped twin was not played


def game_pairs(matches: Iterable[MatchSeats]) -> dict[str, dict[str, Pentanomial]]:
    """``out[a][b]``: the pentanomial of ``a`` against ``b`` (see the module docstring); for
    every pair that met, ``out[b][a]`` is its mirror image."""
    waiting: dict[tuple[int, int, int, str, str], list[float]] = {}  # unpaired scores of the seat's bot
    out: dict[str, dict[str, Pentanomial]] = {}

    def cell(a: str, b: str) -> Pentanomial:
        return out.setdefault(a, {}).setdefault(b, Pentanomial())

    for m in matches:
        for s, t in m.opposed():
            a, b = m.lineup[s], m.lineup[t]
            score = _score(m, s, t)  # a's, in seat s
            mine, theirs = cell(a, b), cell(b, a)
            twins = waiting.get((m.deal_set, s, t, b, a))
            if twins:
                points = score + 1.0 - twins.pop(0)  # a's points over the pair
                k = round(2 * points)
                mine.counts[k] += 1
                theirs.counts[4 - k] += 1
            else:
                waiting.setdefault((m.deal_set, s, t, a, b), []).append(score)
    for (_d, _s, _t, a, b), scores in waiting.items():
        out[a][b].unpaired += len(scores)
        out[b][a].unpaired += len(scores)
    return out


# --- head to head -----------------------------------------------------------------


@dataclass
class HeadToHead:
    """One bot's results against another, and the Elo difference they show (see the module)."""

    results: int  # pairwise results
    wins: int
    draws: int
    losses: int
    score_pct: float | None
    elo: float | None  # this bot minus the other, from these results alone
    elo_lo: float | None  # the 95% interval (None without bootstrap, or on a bound's open side)
    elo_hi: float | None
    los: float | None  # likelihood that this bot is the stronger, in [0, 1] (None without bootstrap)
    pentanomial: list[int]  # game pairs scoring 0, 0.5, 1, 1.5, 2 points for this bot
    unpaired: int
    #: "lower": this bot won every result, only ``elo_lo`` means something ("> +40"); "upper": it
    #: scored no point, only ``elo_hi``; None: an estimate with an interval
    bound: str | None = None


@dataclass(frozen=True)
class Difference:
    """The Elo difference of one bot over another from their results alone (see the module)."""

    elo: float  # the two-player fit, the other bot at 0
    lo: float | None  # the interval; None: no lower end (an upper bound), or no interval (no bootstrap)
    hi: float | None
    los: float | None  # P(the first is the stronger); None without intervals
    #: "lower": a sweep by the first, only ``lo`` means something; "upper": no point, only ``hi``
    bound: str | None
    record: ratings.PlayerRating  # the first bot's row of the two-player fit (W-D-L, games)

    @property
    def plus_minus(self) -> float | None:
        return None if self.lo is None or self.hi is None else (self.hi - self.lo) / 2.0


def _wilson(y: float, k: float) -> tuple[float, float]:
    """The μ with (y - μ)² = k μ (1 - μ)."""
    centre, spread = y + k / 2.0, math.sqrt(k * y * (1.0 - y) + k * k / 4.0)
    return max(0.0, (centre - spread) / (1.0 + k)), min(1.0, (centre + spread) / (1.0 + k))


def elo_difference(outcomes: Sequence[PairResult], a: str, b: str, bootstrap: int = 1000,
                   seed: int = 0, confidence: float = 0.95) -> Difference:
    """``a``'s Elo over ``b`` from their results against each other alone (``outcomes`` may hold
    others: they are ignored), its interval and LOS. The interval needs no resampling: ``bootstrap``
    only says whether there are intervals (0: none, as for the standings) and ``seed`` is unused."""
    mine = [o for o in outcomes if {o.a, o.b} == {a, b}]
    if not mine:
        raise ValueError(f"{a} and {b} have no result against each other")
    record = ratings.rate(mine, anchor=(b, 0.0), bootstrap=0)[a]
    points: dict[int, list[float]] = {}
    for o in mine:
        cell = points.setdefault(o.deal_set, [0.0, 0.0])
        cell[0] += o.score if o.a == a else 1.0 - o.score
        cell[1] += 1.0
    n = sum(g for _, g in points.values())
    y = sum(w for w, _ in points.values()) / n
    bound = "lower" if y == 1.0 else "upper" if y == 0.0 else None
    if bootstrap <= 0:
        return Difference(record.elo, None, None, None, bound, record)
    d = len(points)
    phi = n if d == 1 else 1.0  # one deal set: its games may all be one outcome, worth a single game
    if d >= 2 and 0.0 < y < 1.0:
        robust = d / (d - 1) * sum((w - y * g) ** 2 for w, g in points.values()) / (n * n)
        phi = max(1.0, robust / (y * (1.0 - y) / n))
    tail = (1.0 - confidence) / 2.0
    q = ratings.t_quantile(1.0 - tail, d - 1) if d >= 2 else NormalDist().inv_cdf(1.0 - tail)
    mu_lo, mu_hi = _wilson(y, q * q * phi / n)
    n_eff = n / phi
    x = y * n_eff  # the exact binomial interval of the effective counts
    mu_lo = 0.0 if y == 0.0 else min(mu_lo, beta_quantile(tail, x, n_eff - x + 1.0))
    mu_hi = 1.0 if y == 1.0 else max(mu_hi, beta_quantile(1.0 - tail, x + 1.0, n_eff - x))
    lo = None if mu_lo <= 0.0 else elo_of(mu_lo)
    hi = None if mu_hi >= 1.0 else elo_of(mu_hi)
    los = 0.5
    if y != 0.5:
        student = t_cdf((y - 0.5) / math.sqrt(phi / (4.0 * n)), d - 1 if d >= 2 else math.inf)
        if y > 0.5:  # the exact test's: 1 - P(X >= x) at μ = ½ (its interval's lower end passes ½ with it)
            los = max(0.5, min(student, 1.0 - beta_cdf(0.5, x, n_eff - x + 1.0)))
        else:  # P(X <= x) at μ = ½
            los = min(0.5, max(student, 1.0 - beta_cdf(0.5, x + 1.0, n_eff - x)))
    return Difference(record.elo, lo, hi, los, bound, record)


def upper_bound(outcomes: Sequence[PairResult], a: str, b: str, confidence: float = 0.95) -> float | None:
    """The one-sided upper bound of ``a``'s Elo over ``b``: below it with probability ``confidence``
    (the upper end of the interval of :func:`elo_difference` at ``2 * confidence - 1``, whose upper
    tail is ``1 - confidence``). None: no upper bound (``a`` scored every point). It is below 0
    exactly when that function's LOS is below ``1 - confidence``: the same two tests at ``μ = ½``."""
    return elo_difference(outcomes, a, b, confidence=2.0 * confidence - 1.0).hi


def head_to_head(matches: Sequence[MatchSeats], bootstrap: int = 1000,
                 seed: int = 0) -> dict[str, dict[str, HeadToHead]]:
    """``out[a][b]`` for every two bots that met: records, Elo difference and game pairs."""
    outcomes = seat_results(matches)
    pairs = game_pairs(matches)
    records: dict[str, dict[str, Record]] = {}
    for o in outcomes:
        records.setdefault(o.a, {}).setdefault(o.b, Record()).add(o.score)
        records.setdefault(o.b, {}).setdefault(o.a, Record()).add(1.0 - o.score)
    out: dict[str, dict[str, HeadToHead]] = {}
    for a in sorted(records):
        for b in sorted(records[a]):
            if a > b:
                continue
            diff = elo_difference(outcomes, a, b, bootstrap, seed)
            for x, y, sign in ((a, b, 1.0), (b, a, -1.0)):
                rec, pen = records[x][y], pairs[x][y]
                lo, hi, bound = diff.lo, diff.hi, diff.bound
                if sign < 0:
                    lo, hi = (None if hi is None else -hi), (None if lo is None else -lo)
                    bound = None if bound is None else {"lower": "upper", "upper": "lower"}.get(bound)
                los = diff.los if sign > 0 or diff.los is None else 1.0 - diff.los
                out.setdefault(x, {})[y] = HeadToHead(
                    rec.games, rec.wins, rec.draws, rec.losses, rec.score_pct, sign * diff.elo, lo, hi,
                    los, list(pen.counts), pen.unpaired, bound)
    return out


# --- from the joint fit -------------------------------------------------------------


def los_matrix(fit: ratings.Ratings) -> dict[str, dict[str, float | None]]:
    """``out[a][b]``: the likelihood of superiority of ``a`` over ``b`` in the joint fit (the
    fraction of bootstrap resamples rating ``a`` above ``b``, as Ordo's simulated LOS), for every
    two players, best first; None without bootstrap."""
    names = [r.name for r in fit.rows]
    return {a: {b: fit.los(a, b) for b in names if b != a} for a in names}


def opponents_average(fit: ratings.Ratings) -> dict[str, float | None]:
    """Each player's opponents' average Elo, weighted by the pairwise results against each."""
    elos = fit.elos
    out: dict[str, float | None] = {}
    for name in elos:
        row = fit.head_to_head.get(name, {})
        n = sum(rec.games for rec in row.values())
        out[name] = sum(rec.games * elos[opp] for opp, rec in row.items()) / n if n else None
    return out
