"""Collusion between entries, from the duplicate deals: does B's presence at the table move A's
points on the same cards?

Duplicate play deals the same cards to the same seat at every table of a deal set, and an entry
plays each seat of a deal set once at each of its tables, with other table-mates each time. So the
points entry A scored from one seat of one deal set (a **cell**: the same cards) differ from table
to table only by who sat with it, where, and by chance.

1. **Presence** (:func:`presence`). Within each cell of A, A's points are compared across its
   tables (the cell's mean taken off: the cards and A's own skill cancel), and a least-squares fit
   of those differences on who was at the table gives, for every other entry B, ``θ[A][B]``: how
   many points per seat A scores with B at its table against it, against its average table-mate
   (with a fixed number of seats only such contrasts can be told: B absent means another present).
   Where the results name teams (Confirmation's *pairs*), B as A's partner is a covariate of its own.
2. **Pair effects** (:func:`pair_fit`). A strong or a disruptive entry moves every table-mate's
   points (B's column), some entries gain or lose from any company (A's row), and an entry much
   moved by company is moved most by the entries that move everyone most (Tukey's product of the
   two, one factor for all pairs). The **pair effect** ``D[A][B]`` is what that fit leaves of
   ``θ[A][B]`` (least squares weighted by how often A met B): what B's presence does to A beyond
   what it does to everyone and what everyone does to A. An entry that plays for another raises its
   beneficiary's pair effect and lowers its own against the beneficiary (it spends its points). So
   does a genuine matchup, a style that happens to suit or to exploit another: the check cannot tell
   them apart, and says what it sees for a person to review. A round robin of Confirmation seats
   some pairs always the same way round (its groups keep the file's order in every rotation), so
   that B's effect from that place (just before A, it plays before A in every trick) is part of
   their pair effect: :attr:`PairEffect.place` says so.
3. **Uncertainty** (:func:`pair_effects`). Deal sets are independent (their cards are); the matches
   of one are not. The standard error of each pair effect is the jackknife's over deal sets (the
   whole fit again without each deal set in turn), read against Student's t with ``deal sets - 1``
   degrees of freedom: a 95% interval per pair, a two-sided p-value. A pair is **flagged** when its
   p-value stays at or below ``alpha`` after Holm's correction for the number of ordered pairs
   tested: with no pair effect at all, the chance that any pair is flagged is about ``alpha`` at
   most (exactly, were the fit linear: it is, but for Tukey's one factor).

``python -m referee.tools.collusion`` measures how often that holds, and how often a colluding pair
is caught, in simulation and with real colluding bots (docs/tournaments.md). Pure: points in,
figures out, no I/O.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from referee.stats.ranks import t_cdf
from referee.stats.ratings import t_quantile

#: the family-wise error rate of the flags (Holm over the ordered pairs tested)
ALPHA = 0.05
#: the fewest deal sets the check reads (the jackknife's standard error needs a few)
MIN_DEAL_SETS = 5
#: where B sat, seen from A: against it, or as its partner
AGAINST, WITH = "against", "with"
#: the relative size of an eigenvalue below which a direction counts as not informed by the data
_RANK_TOL = 1e-9

#: a table-mate as one entry's fit sees it: its name and its side
Key = tuple[str, str]
#: a table-mate against an entry, at a place: (name, how many seats after the entry it sits)
Place = tuple[str, int]
Cells = dict[tuple[int, int], list[tuple[dict[Key, float], float]]]


class Match(NamedTuple):
    """One match as the check reads it: the entry and the points of each seat, and in a team game
    the seats of each team (partners share their points)."""

    deal_set: int
    lineup: tuple[str, ...]
    points: tuple[float, ...]
    teams: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True)
class PairEffect:
    """What B's presence at A's table (against it) does to A's points per seat, beyond B's effect on
    everyone and everyone's on A; with its 95% interval, p-value and Holm-corrected p-value."""

    entry: str          # A, whose points move
    mate: str           # B, at the table against A
    effect: float       # points per seat
    se: float
    lo: float
    hi: float
    p: float
    p_holm: float
    flagged: bool
    #: A's seats with B at the table (against it), and without
    together: int
    apart: int
    #: where B sat: how many seats after A, when it always sat there at a table of more than two
    #: (a round robin of Confirmation seats some pairs always the same way round: B's effect from
    #: that place, just before A for instance, is then part of the pair's); None otherwise
    place: int | None = None

    def to_json(self) -> dict[str, object]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Collusion:
    """The check over a tournament's matches: every ordered pair it could estimate, largest effect
    first; ``note`` says why there is none, or what was left out."""

    pairs: tuple[PairEffect, ...]
    deal_sets: int
    alpha: float
    note: str | None = None

    @property
    def flagged(self) -> list[PairEffect]:
        return [p for p in self.pairs if p.flagged]

    def to_json(self) -> dict[str, object]:
        return {"deal_sets": self.deal_sets, "alpha": self.alpha, "note": self.note,
                "tested": len(self.pairs), "flagged": [p.to_json() for p in self.flagged],
                "pairs": [p.to_json() for p in self.pairs]}


# --- the fit of one entry's points on its table-mates --------------------------------------------


@dataclass
class _Sums:
    """The cell-centred normal equations of one entry's points on its table-mates' presence, by deal
    set: ``xx[k]`` and ``xy[k]`` (covariates indexed as ``keys``)."""

    keys: list[Key]
    xx: dict[int, list[list[float]]]
    xy: dict[int, list[float]]

    def total(self, leave_out: int | None = None) -> tuple[list[list[float]], list[float]]:
        n = len(self.keys)
        xx = [[0.0] * n for _ in range(n)]
        xy = [0.0] * n
        for k, m in self.xx.items():
            if k == leave_out:
                continue
            v = self.xy[k]
            for i in range(n):
                xy[i] += v[i]
                row, mi = xx[i], m[i]
                for j in range(n):
                    row[j] += mi[j]
        return xx, xy


def _mates(m: Match, s: int) -> list[tuple[str, str, int]]:
    """Seat ``s``'s table-mates (not its own copies): name, side, place (seats after ``s``)."""
    team_of = {seat: i for i, team in enumerate(m.teams or ()) for seat in team}
    out = []
    for t, mate in enumerate(m.lineup):
        if t != s and mate != m.lineup[s]:
            side = WITH if m.teams and team_of.get(t) == team_of.get(s) else AGAINST
            out.append((mate, side, (t - s) % len(m.lineup)))
    return out


def _observations(matches: Iterable[Match]) -> dict[str, Cells]:
    """For each entry, its cells (deal set, seat): the presence of each table-mate by side (1 per
    seat it holds) and the entry's points, once per seat it held."""
    out: dict[str, Cells] = defaultdict(lambda: defaultdict(list))
    for m in matches:
        for s, entry in enumerate(m.lineup):
            present: dict[Key, float] = defaultdict(float)
            for mate, side, _ in _mates(m, s):
                present[(mate, side)] += 1.0
            out[entry][(m.deal_set, s)].append((dict(present), float(m.points[s])))
    return out


def meetings(matches: Iterable[Match]) -> dict[str, dict[Place, int]]:
    """A -> (B, place) -> how many of A's seats had B against it at that place."""
    out: dict[str, dict[Place, int]] = defaultdict(lambda: defaultdict(int))
    for m in matches:
        for s, entry in enumerate(m.lineup):
            for mate, side, place in _mates(m, s):
                if side == AGAINST:
                    out[entry][(mate, place)] += 1
    return out


def _sums(cells: Cells) -> _Sums:
    keys = sorted({key for obs in cells.values() for present, _ in obs for key in present})
    index = {key: i for i, key in enumerate(keys)}
    n = len(keys)
    xx: dict[int, list[list[float]]] = {}
    xy: dict[int, list[float]] = {}
    for (k, _), obs in cells.items():
        if len(obs) < 2:
            continue
        rows = []
        for present, y in obs:
            x = [0.0] * n
            for key, count in present.items():
                x[index[key]] = count
            rows.append((x, y))
        mean_x = [sum(x[i] for x, _ in rows) / len(rows) for i in range(n)]
        mean_y = sum(y for _, y in rows) / len(rows)
        m = xx.setdefault(k, [[0.0] * n for _ in range(n)])
        v = xy.setdefault(k, [0.0] * n)
        for x, y in rows:
            d = [x[i] - mean_x[i] for i in range(n)]
            dy = y - mean_y
            nz = [i for i in range(n) if d[i]]
            for i in nz:
                v[i] += d[i] * dy
                for j in nz:
                    m[i][j] += d[i] * d[j]
    return _Sums(keys, xx, xy)


def _min_norm(xx: Sequence[Sequence[float]], xy: Sequence[float]) -> tuple[list[float], list[list[float]]]:
    """The least-squares solution of smallest norm, and the eigenvectors of the directions the data
    do not inform (its null space)."""
    n = len(xy)
    if n == 0:
        return [], []
    values, vectors = (a.tolist() for a in np.linalg.eigh(np.asarray(xx, dtype=float)))
    top = max((abs(v) for v in values), default=0.0)
    theta = [0.0] * n
    null = []
    for i, value in enumerate(values):
        u = [vectors[r][i] for r in range(n)]
        if top <= 0 or abs(value) <= _RANK_TOL * top:
            null.append(u)
            continue
        c = sum(u[r] * xy[r] for r in range(n)) / value
        for r in range(n):
            theta[r] += c * u[r]
    return theta, null


def _presence(sums: _Sums, leave_out: int | None = None) -> dict[str, float]:
    """θ of one entry: B -> its points per seat with B against it, against its average opponent;
    only the B the data inform (the contrast with the average has no part in the null space)."""
    xx, xy = sums.total(leave_out)
    theta, null = _min_norm(xx, xy)
    group = [i for i, (_, side) in enumerate(sums.keys) if side == AGAINST]
    if len(group) < 2:
        return {}
    mean = sum(theta[i] for i in group) / len(group)
    out = {}
    for i in group:
        c = [0.0] * len(sums.keys)
        for j in group:
            c[j] = -1.0 / len(group)
        c[i] += 1.0
        if all(abs(sum(u[r] * c[r] for r in range(len(c)))) < 1e-6 for u in null):
            out[sums.keys[i][0]] = theta[i] - mean
    return out


def presence(matches: Iterable[Match]) -> dict[str, dict[str, float]]:
    """θ[A][B]: how many points per seat A scores with B at its table against it, against its
    average opponent, on the same cards (see the module docstring); only the pairs the matches
    inform."""
    return {entry: _presence(_sums(cells)) for entry, cells in _observations(matches).items()}


# --- the pair effects ------------------------------------------------------------------------------


def pair_fit(theta: Mapping[str, Mapping[str, float]], met: Mapping[str, Mapping[Place, int]],
             tol: float = 1e-12) -> dict[str, dict[str, float]]:
    """The pair effects: what is left of each ``θ[a][b]`` (``D[a][b]``) after the least-squares fit

        θ[a][b] ≈ r[a] + c[b] + λ · (r[a] - r̄) · (c[b] - c̄)

    over the pairs given, each weighted by how often A met B (``met``): ``r`` is A's row (θ is a
    contrast within it, and some entries gain or lose from any company), ``c`` what B does to
    everyone, and the product, with its one factor ``λ`` (Tukey's one degree of freedom for
    non-additivity), that an entry much moved by company is moved most by the entries that move
    everyone most (a random bot spoils a careful bidder's points more than a careless one's). The
    additive part by conjugate gradients on its normal equations (its residuals are unique whatever
    the directions the pairs do not inform), ``λ`` by least squares on what it leaves; ``r̄`` and
    ``c̄`` are the weighted means over the pairs."""
    index: dict[tuple[str, str], int] = {}
    rows: list[tuple[list[tuple[int, float]], float, float]] = []
    cells = []
    for a, row in theta.items():
        for b, v in row.items():
            weight = float(sum(w for (mate, _), w in met.get(a, {}).items() if mate == b))
            if weight:
                rows.append(([(index.setdefault(("r", a), len(index)), 1.0),
                              (index.setdefault(("c", b), len(index)), 1.0)], v, weight))
                cells.append((a, b))
    if not rows:
        return {}
    x = _least_squares(rows, len(index), tol)
    total = sum(w for _, _, w in rows)
    r_bar = sum(w * x[index[("r", a)]] for (a, _), (_, _, w) in zip(cells, rows)) / total
    c_bar = sum(w * x[index[("c", b)]] for (_, b), (_, _, w) in zip(cells, rows)) / total
    left = [v - sum(coef * x[i] for i, coef in cols) for cols, v, _ in rows]
    product = [(x[index[("r", a)]] - r_bar) * (x[index[("c", b)]] - c_bar) for a, b in cells]
    norm = sum(w * z * z for (_, _, w), z in zip(rows, product))
    lam = sum(w * e * z for (_, _, w), e, z in zip(rows, left, product)) / norm if norm > 1e-12 * total else 0.0
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (a, b), e, z in zip(cells, left, product):
        out[a][b] = e - lam * z
    return dict(out)


def _least_squares(rows: Sequence[tuple[list[tuple[int, float]], float, float]], n: int, tol: float) -> list[float]:
    """min Σ w (y - Σ coef · x[i])² by conjugate gradients on the normal equations, from zero."""
    def normal(x: Sequence[float]) -> list[float]:
        out = [0.0] * n
        for cols, _, w in rows:
            value = w * sum(coef * x[i] for i, coef in cols)
            for i, coef in cols:
                out[i] += coef * value
        return out

    b = [0.0] * n
    for cols, y, w in rows:
        for i, coef in cols:
            b[i] += w * coef * y
    x = [0.0] * n
    r = b[:]
    p = r[:]
    rr = sum(v * v for v in r)
    stop = tol * max(1.0, rr)
    for _ in range(10 * n + 10):
        if rr <= stop:
            break
        ap = normal(p)
        alpha = rr / sum(pi * api for pi, api in zip(p, ap))
        x = [xi + alpha * pi for xi, pi in zip(x, p)]
        r = [ri - alpha * api for ri, api in zip(r, ap)]
        new = sum(v * v for v in r)
        p = [ri + new / rr * pi for ri, pi in zip(r, p)]
        rr = new
    return x


def _effects(sums: Mapping[str, _Sums], met: Mapping[str, Mapping[Place, int]],
             leave_out: int | None = None) -> dict[str, dict[str, float]]:
    """The pair effects of the entries' fits (:func:`pair_fit`), without deal set ``leave_out``."""
    return pair_fit({entry: _presence(s, leave_out) for entry, s in sums.items()}, met)


def holm(p: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (each at most 1, monotone in the order of the p-values)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out = [1.0] * len(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def _counts(matches: Sequence[Match]) -> dict[tuple[str, str], tuple[int, int]]:
    """(A, B) -> [A's seats with B at the table against it, A's seats without B]."""
    seats: dict[str, int] = defaultdict(int)
    together: dict[tuple[str, str], int] = defaultdict(int)
    for m in matches:
        team_of = {s: i for i, team in enumerate(m.teams or ()) for s in team}
        for s, a in enumerate(m.lineup):
            seats[a] += 1
            mates = {b for t, b in enumerate(m.lineup)
                     if t != s and b != a and not (m.teams and team_of.get(t) == team_of.get(s))}
            for b in mates:
                together[(a, b)] += 1
    return {(a, b): (n, seats[a] - n) for (a, b), n in together.items()}


def pair_effects(matches: Iterable[Match], alpha: float = ALPHA, min_deal_sets: int = MIN_DEAL_SETS) -> Collusion:
    """Every ordered pair's effect (see the module docstring), its jackknife interval over deal
    sets, and the pairs flagged at family-wise error ``alpha`` (Holm)."""
    matches = list(matches)
    deal_sets = sorted({m.deal_set for m in matches})
    k = len(deal_sets)
    if k < min_deal_sets:
        return Collusion((), k, alpha, f"{k} deal set(s): the check needs at least {min_deal_sets}")
    sums = {entry: _sums(cells) for entry, cells in _observations(matches).items()}
    met = meetings(matches)
    full = _effects(sums, met)
    leave = [_effects(sums, met, d) for d in deal_sets]
    counts = _counts(matches)
    found = []
    for a, row in full.items():
        for b, value in row.items():
            again = [x[a][b] for x in leave if b in x.get(a, {})]
            if len(again) < k:  # some deal set holds all that informs it: no standard error
                continue
            mean = sum(again) / k
            se = math.sqrt((k - 1) / k * sum((x - mean) ** 2 for x in again))
            found.append((a, b, value, se))
    if not found:
        return Collusion((), k, alpha, "no pair of entries met at some tables and not at others")
    df = k - 1
    q = t_quantile(0.975, df)
    wide = max(len(m.lineup) for m in matches) > 2
    ps = [_p_value(value, se, df) for _, _, value, se in found]
    adjusted = holm(ps)
    pairs = [PairEffect(a, b, value, se, value - q * se, value + q * se, p, p_adj, p_adj <= alpha,
                        *counts.get((a, b), (0, 0)), _one_place(met, a, b, wide))
             for (a, b, value, se), p, p_adj in zip(found, ps, adjusted)]
    pairs.sort(key=lambda e: (e.p_holm, e.p, -abs(e.effect), e.entry, e.mate))
    return Collusion(tuple(pairs), k, alpha)


def _one_place(met: Mapping[str, Mapping[Place, int]], a: str, b: str, wide: bool) -> int | None:
    """The one place B sat at relative to A at tables of more than two (``wide``); None: several."""
    places = {place for (mate, place), n in met.get(a, {}).items() if mate == b and n}
    return next(iter(places)) if wide and len(places) == 1 else None


def _p_value(value: float, se: float, df: int) -> float:
    if se <= 0:
        return 1.0 if abs(value) < 1e-12 else 0.0
    return min(1.0, 2.0 * (1.0 - t_cdf(abs(value) / se, df)))
