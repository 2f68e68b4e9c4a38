"""Does the printed rank confidence hold? LOS under the null, among printed pairs, and head-to-head
intervals and bounds, measured by simulation.

    python -m referee.tools.calibration                       # the tables in docs/tournaments.md
    python -m referee.tools.calibration --part null --tables 300
    python -m referee.tools.calibration --part h2h --method old   # the head-to-head as it was

Four bots play simulated tournaments on the real schedules (``referee.tools.coverage``: 2-player
as Aegis, 4-player as Confirmation, pairs as its partnerships) in two worlds of
``referee.stats.simulation``: **project** (cards of 100 Elo a seat, normal deal effects of 100 Elo)
and **harsh** (cards of 300 Elo a seat, heavy-tailed deal effects: Student t with 3 degrees of
freedom, scale 100 Elo; about 15% draws).

``null``: four equal bots. For every ordered pair of every table, does ``P(a above b)`` (the LOS of
the joint fit, :meth:`referee.stats.ratings.Ratings.los`) reach 95%? Calibrated, that happens for 5%
of the ordered pairs (each unordered pair crosses in one direction or the other 10% of the time).

``order``: bots at 1350, 1450, 1550, 1650 ("spread", 100 Elo apart) and at 1440, 1480, 1520, 1560
("close"). Among the pairs printed at >= 95% (and >= 99%), how many are in the true order, and what
share of all pairs is printed at >= 95% (the power).

``h2h``: the head-to-head Elo difference (:func:`referee.stats.headtohead.elo_difference`) of every
pair, 2-player and 4-player, against the truth (the score a bot expects against the other, as
``elo(μ)``, measured on ``--limit`` deal sets of the same world): the coverage of all intervals,
of the printed bounds (after a sweep, ``> lo`` holds when the truth is above ``lo``), of the most
lopsided pair and of the pairs with at most two losses, with the bots spread 100 Elo apart, with a
dominant one (1350, 1450, 1550, 2150) and with one that almost never loses (2750, "crushing": its
truths rest on the few games it lost in the ``--limit`` run, and are rough).

``bounds``: the standings' bounds (a bot that scored no point, ``< hi``, or every point, ``> lo``):
how many hold the bot's true rating, for the spread bots and with the crushing one.

What a scheduler pays to call the posterior after a deal set: ``python -m referee.tools.posterior_cost``.

``--method old`` measures the methods before this tool: the fraction of bootstrap resamples for the
LOS, the two-player fit's widest-of-three interval for the head to head; ``--method flat`` the
posterior without its prior on the spread (the likelihood alone).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations

from referee.stats import headtohead
from referee.stats.ratings import Bound, Outcome, PairResult, fit, rank_posterior, rate
from referee.stats.simulation import HARSH, PROJECT, simulate_tournament
from referee.stats.sprt import elo_of
from referee.tools.coverage import KINDS, _lineups, holds

WORLDS = {"project": PROJECT, "harsh": HARSH}
NULL = {"a": 1500.0, "b": 1500.0, "c": 1500.0, "d": 1500.0}
SPREADS = {"spread": {"a": 1350.0, "b": 1450.0, "c": 1550.0, "d": 1650.0},
           "close": {"a": 1440.0, "b": 1480.0, "c": 1520.0, "d": 1560.0}}
H2H_SPREADS = {"spread": SPREADS["spread"], "dominant": {"a": 1350.0, "b": 1450.0, "c": 1550.0, "d": 2150.0},
               "crushing": {"a": 1350.0, "b": 1450.0, "c": 1550.0, "d": 2750.0}}
DEAL_SETS = (2, 3, 5, 10, 20)


def tournament(kind: str, world: str, true: dict[str, float], deal_sets: int, rng: random.Random) -> list[Outcome]:
    return simulate_tournament(true, _lineups(kind), deal_sets, rng, teams=KINDS[kind][2], **WORLDS[world])


def pair_results(outcomes: Sequence[Outcome]) -> list[PairResult]:
    """The outcomes of a kind of data without teams (2-player, 4-player): each a :class:`PairResult`."""
    pairs = [o for o in outcomes if isinstance(o, PairResult)]
    assert len(pairs) == len(outcomes)  # no teams in the kinds the head to head measures
    return pairs


def los_function(outcomes: list[Outcome], method: str, bootstrap: int, seed: int) -> Callable[[str, str], float] | None:
    """P(a above b) of a table by the method: "new" (the posterior), "flat" (the posterior without
    its prior on the spread), "old" (bootstrap fractions)."""
    if method in ("new", "flat"):
        post = rank_posterior(outcomes, spread_prior=method == "new")
        return None if post is None else post.above
    table = rate(outcomes, bootstrap=bootstrap, seed=seed)
    samples = table.samples

    def old(a: str, b: str) -> float:
        xs, ys = samples[a], samples[b]
        return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x, y in zip(xs, ys)) / len(xs)
    return old


@dataclass(frozen=True)
class NullRate:
    crossed: int
    pairs: int
    per_table: tuple[int, ...] = ()  # how many ordered pairs crossed in each table

    @property
    def pct(self) -> float:
        return 100.0 * self.crossed / self.pairs

    @property
    def se(self) -> float:
        """The standard error of :attr:`pct` (in points) from the tables' own spread: the pairs of one
        table are not independent, the tables are."""
        t = len(self.per_table)
        share = [c * t / self.pairs for c in self.per_table]  # each table's crossings, per pair
        mean = sum(share) / t
        return 100.0 * math.sqrt(sum((x - mean) ** 2 for x in share) / (t - 1) / t)


def null_rate(kind: str, world: str, deal_sets: int, tables: int, method: str = "new", bootstrap: int = 200,
              seed: int = 0, level: float = 0.95) -> NullRate:
    """How often P(a above b) >= level for an ordered pair of equal bots."""
    rng = random.Random(f"null:{kind}:{world}:{deal_sets}:{seed}")
    per_table = []
    for t in range(tables):
        los = los_function(tournament(kind, world, NULL, deal_sets, rng), method, bootstrap, t)
        assert los is not None  # method old, or 2 deal sets or more (main refuses fewer): a posterior
        per_table.append(sum(los(a, b) >= level for a, b in permutations(NULL, 2)))
    return NullRate(sum(per_table), tables * len(NULL) * (len(NULL) - 1), tuple(per_table))


@dataclass(frozen=True)
class OrderRate:
    printed95: int
    right95: int
    printed99: int
    right99: int
    pairs: int


def pct(k: int, n: int) -> str:
    """k/n in percent, "-" for none."""
    return "-" if n == 0 else f"{100.0 * k / n:.1f}"


def order_rate(kind: str, world: str, spread: str, deal_sets: int, tables: int, method: str = "new",
               bootstrap: int = 200, seed: int = 0) -> OrderRate:
    """Among pairs printed at >= 95% (99%), how many are in the true order."""
    true = SPREADS[spread]
    rng = random.Random(f"order:{kind}:{world}:{spread}:{deal_sets}:{seed}")
    p95 = r95 = p99 = r99 = pairs = 0
    for t in range(tables):
        los = los_function(tournament(kind, world, true, deal_sets, rng), method, bootstrap, t)
        assert los is not None  # as above
        for a, b in permutations(true, 2):
            p = los(a, b)
            right = true[a] > true[b]
            if p >= 0.95:
                p95 += 1
                r95 += right
            if p >= 0.99:
                p99 += 1
                r99 += right
        pairs += len(true) * (len(true) - 1) // 2
    return OrderRate(p95, r95, p99, r99, pairs)


# --- head to head ------------------------------------------------------------------------------


def h2h_truth(kind: str, world: str, true: dict[str, float], deal_sets: int,
              seed: int = 0) -> dict[tuple[str, str], float]:
    """The Elo each bot's expected score against each other bot is worth, on ``deal_sets`` deal sets."""
    rng = random.Random(f"h2h-limit:{kind}:{world}:{sorted(true.items())}:{seed}")
    points: dict[tuple[str, str], list[float]] = {}
    for o in pair_results(tournament(kind, world, true, deal_sets, rng)):
        for x, y, s in ((o.a, o.b, o.score), (o.b, o.a, 1.0 - o.score)):
            cell = points.setdefault((x, y), [0.0, 0.0])
            cell[0] += s
            cell[1] += 1
    return {pair: elo_of(w / g) for pair, (w, g) in points.items()}


def old_difference(outcomes: Sequence[PairResult], a: str, b: str, bootstrap: int,
                   seed: int) -> headtohead.Difference:
    """The head-to-head interval before: the two-player fit's widest-of-three interval."""
    mine = [o for o in outcomes if {o.a, o.b} == {a, b}]
    row = rate(mine, anchor=(b, 0.0), bootstrap=bootstrap, seed=seed)[a]
    return headtohead.Difference(row.elo, row.lo, row.hi, None, None, row)


@dataclass
class H2HRate:
    held: int = 0
    total: int = 0
    bounds_held: int = 0
    bounds: int = 0
    lopsided_held: int = 0
    lopsided: int = 0
    few_held: int = 0
    few: int = 0


def _holds(d: headtohead.Difference, truth: float) -> bool:
    if d.bound == Bound.LOWER:
        return truth >= d.lo if d.lo is not None else True
    if d.bound == Bound.UPPER:
        return truth <= d.hi if d.hi is not None else True
    return (d.lo is None or d.lo <= truth) and (d.hi is None or truth <= d.hi)


def h2h_rate(kind: str, world: str, spread: str, deal_sets: int, tables: int, truth: dict[tuple[str, str], float],
             method: str = "new", bootstrap: int = 200, seed: int = 0) -> H2HRate:
    true = H2H_SPREADS[spread]
    lopsided = max(combinations(sorted(true), 2), key=lambda p: abs(true[p[0]] - true[p[1]]))
    rng = random.Random(f"h2h:{kind}:{world}:{spread}:{deal_sets}:{seed}")
    out = H2HRate()
    for t in range(tables):
        outcomes = pair_results(tournament(kind, world, true, deal_sets, rng))
        for a, b in combinations(sorted(true), 2):
            if true[a] < true[b]:
                a, b = b, a  # the stronger first
            d = (headtohead.elo_difference(outcomes, a, b, bootstrap, t) if method != "old"
                 else old_difference(outcomes, a, b, bootstrap, t))
            held = _holds(d, truth[a, b])
            out.held += held
            out.total += 1
            if d.bound is not None:
                out.bounds_held += held
                out.bounds += 1
            if {a, b} == set(lopsided):
                out.lopsided_held += held
                out.lopsided += 1
            if d.bound is None and 0 < d.record.losses <= 2:
                out.few_held += held
                out.few += 1
    return out


# --- the tables -----------------------------------------------------------------------------


def _timed(start: float) -> str:
    return f"({time.perf_counter() - start:.0f} s)"


def part_null(args: argparse.Namespace) -> None:
    print(f"== null: four equal bots, {args.tables} tables a cell; % of ordered pairs with P(a above b) >= 95% "
          f"(calibrated: 5) ==")
    print("| data | world | " + " | ".join(f"{d} deal sets" for d in args.deal_sets) + " |")
    print("|---|---|" + "---|" * len(args.deal_sets))
    for kind in KINDS:
        for world in WORLDS:
            start = time.perf_counter()
            cells = [null_rate(kind, world, d, args.tables, args.method, args.bootstrap, args.seed)
                     for d in args.deal_sets]
            print(f"| {kind} | {world} | " + " | ".join(f"{c.pct:.1f}" for c in cells) + f" | {_timed(start)}",
                  flush=True)
    print()


def _header(title: str, args: argparse.Namespace) -> None:
    print(f"== {title} ==")
    print("| data | world | bots | " + " | ".join(f"{d} deal sets" for d in args.deal_sets) + " |")
    print("|---|---|---|" + "---|" * len(args.deal_sets))


def part_order(args: argparse.Namespace) -> None:
    _header(f"order: {args.tables} tables a cell; % right among pairs printed at >= 95% (at >= 99%), "
            f"and % of pairs printed at >= 95%", args)
    for kind in KINDS:
        for world in WORLDS:
            for spread in [x for x in args.spreads or SPREADS if x in SPREADS]:
                start = time.perf_counter()
                cells = []
                for d in args.deal_sets:
                    r = order_rate(kind, world, spread, d, args.tables, args.method, args.bootstrap, args.seed)
                    cells.append(f"{pct(r.right95, r.printed95)} ({pct(r.right99, r.printed99)}); "
                                 f"{pct(r.printed95, r.pairs)}")
                print(f"| {kind} | {world} | {spread} | " + " | ".join(cells) + f" | {_timed(start)}", flush=True)
    print()


def part_h2h(args: argparse.Namespace) -> None:
    _header(f"head to head: {args.tables} tables a cell; coverage % of the 95% intervals: all pairs; "
            f"printed bounds [how many]; the most lopsided pair; pairs with 1-2 losses [how many]", args)
    for kind in ("2-player", "4-player"):
        for world in WORLDS:
            for spread in [x for x in args.spreads or H2H_SPREADS if x in H2H_SPREADS]:
                start = time.perf_counter()
                truth = h2h_truth(kind, world, H2H_SPREADS[spread], args.limit, args.seed)
                cells = []
                for d in args.deal_sets:
                    r = h2h_rate(kind, world, spread, d, args.tables, truth, args.method, args.bootstrap, args.seed)
                    cells.append(f"{pct(r.held, r.total)}; {pct(r.bounds_held, r.bounds)} [{r.bounds}]; "
                                 f"{pct(r.lopsided_held, r.lopsided)}; {pct(r.few_held, r.few)} [{r.few}]")
                print(f"| {kind} | {world} | {spread} | " + " | ".join(cells) + f" | {_timed(start)}", flush=True)
    print()


def standings_bounds(kind: str, world: str, spread: str, deal_sets: int, tables: int, bootstrap: int,
                     seed: int = 0) -> tuple[int, int]:
    """How many of the standings' bounds (a bot with no point, or every point: ``< hi``, ``> lo``)
    hold the bot's true rating (the joint fit's limit, ``referee.tools.coverage``), and how many were
    printed."""
    true = H2H_SPREADS[spread]
    rng = random.Random(f"limit:{kind}:{world}:{spread}:{seed}")
    truth = fit(tournament(kind, world, true, 2000, rng))
    rng = random.Random(f"bounds:{kind}:{world}:{spread}:{deal_sets}:{seed}")
    held = printed = 0
    for t in range(tables):
        for row in rate(tournament(kind, world, true, deal_sets, rng), bootstrap=bootstrap, seed=t).rows:
            if row.bound is not None:
                printed += 1
                held += holds(row, truth[row.name])
    return held, printed


def part_bounds(args: argparse.Namespace) -> None:
    _header(f"the standings' bounds: {args.tables} tables a cell, {args.bootstrap} bootstrap resamples; "
            f"% of printed bounds holding the true rating [how many printed]", args)
    for kind in KINDS:
        for spread in [x for x in args.spreads or ("spread", "crushing") if x in H2H_SPREADS]:
            start = time.perf_counter()
            cells = []
            for d in args.deal_sets:
                held, printed = standings_bounds(kind, "project", spread, d, args.tables, args.bootstrap, args.seed)
                cells.append(f"{pct(held, printed)} [{printed}]")
            print(f"| {kind} | project | {spread} | " + " | ".join(cells) + f" | {_timed(start)}", flush=True)
    print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--part", choices=("null", "order", "h2h", "bounds", "all"), default="all")
    parser.add_argument("--tables", type=int, default=1000, help="simulated tournaments a cell (default 1000)")
    parser.add_argument("--deal-sets", type=int, nargs="+", default=list(DEAL_SETS))
    parser.add_argument("--method", choices=("new", "flat", "old"), default="new")
    parser.add_argument("--bootstrap", type=int, default=200, help="resamples of --method old (default 200)")
    parser.add_argument("--limit", type=int, default=4000, help="deal sets that measure the head-to-head truths")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--spreads", nargs="+", choices=sorted({*SPREADS, *H2H_SPREADS}),
                        help="the bots of the order and h2h parts (default: all of each)")
    args = parser.parse_args(argv)
    if args.method != "old" and min(args.deal_sets) < 2:
        parser.error("--deal-sets: 2 or more with --method new or flat (the posterior needs two deal sets)")
    started = time.perf_counter()
    for part, run in (("null", part_null), ("order", part_order), ("h2h", part_h2h), ("bounds", part_bounds)):
        if args.part in (part, "all"):
            run(args)
    print(f"wall {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
