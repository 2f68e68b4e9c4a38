"""Does a rating mean the same in another run? Ratings anchored to a reference pool, measured by simulation.

    python -m referee.tools.anchoring                      # the tables in docs/pool.md
    python -m referee.tools.anchoring --part agree --trials 100 --deal-sets 10

The pool is five house bots of known strength (``referee.stats.simulation.POOL``: random, the
heuristic bot weakened by 75% and 50% random moves, heuristic, search), made as ``referee pool make``
makes one: the pool plays itself (a round robin) on ``--pool-deal-sets`` deal sets and is fitted
(:func:`referee.stats.anchored.reference`); a new pool every ``--runs-per-pool`` trials. Games come from
``referee.stats.simulation`` on the real schedules, **2-player** as Aegis and **4-player** as
Confirmation, in two worlds: **project** (cards of 100 Elo a seat, normal deal effects of 100 Elo) and
**harsh** (cards of 300 Elo a seat, heavy-tailed deal effects, about 15% draws).

``agree``: a bot (the candidate, true 1500) is measured in two independent runs with different other
entrants: run A with two strong ones (1850, 1950), run B with two weak ones (1050, 1150); each run is a
round robin of the candidate, its two entrants and the pool on ``--deal-sets`` deal sets. Do the
candidate's two ratings agree within their intervals: does the 95% interval of their difference (each
side's half-widths combined, ``sqrt(h_A² + h_B²)``) hold 0? Rated four ways: **fixed** (the pool's
bots fixed at their ratings: :func:`referee.stats.anchored.rate_anchored`), **priors** (normal priors
around them instead, for comparison), **pool, no anchors** (the pool's bots as ordinary entrants, the
run's average at 1500) and **no pool** (the candidate and its two entrants alone, average 1500: the
fields' difference shows). Also: how often the scale check (:func:`referee.stats.anchored.check_scale`)
calls these runs, in the pool's own world, off-scale (false alarms; at most 5% by design).

``changed``: the same run A on a changed setting (``SWAPPED``: the search bot swapped for one 200 Elo
stronger; ``SHORTER_CLOCK``: the search bot 200 Elo weaker), the pool file unchanged: how often the
check flags it off-scale, and how far the candidate's anchored rating moved (the same run with the
same random draws in the unchanged world as the reference), fixed and with priors.

``cost``: the candidate against the pool alone, as a gauntlet (2-player: against each pool bot in both
seats; 4-player: at the table with every three of the pool's bots, in every rotation): the mean
half-width of its anchored 95% interval by deal sets, and the deal sets at which it is ±50 (``--target``;
between the two measured points that bracket it, a straight line in log-log), for a candidate in the
pool's range (1500) and one above its strongest (1900).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from referee import games
from referee.competition.schedule import make_schedule, rotations
from referee.stats.anchored import Reference, Scale, check_scale, rate_anchored, reference
from referee.stats.ratings import Outcome, PlayerRating, rate
from referee.stats.simulation import HARSH, POOL, PROJECT, SHORTER_CLOCK, SWAPPED, shifted, simulate_tournament
from referee.tools.coverage import KINDS as ALL_KINDS

KINDS = {kind: ALL_KINDS[kind] for kind in ("2-player", "4-player")}
WORLDS = {"project": PROJECT, "harsh": HARSH}
CANDIDATE = "candidate"
FIELDS = {"strong": {"strong-1": 1850.0, "strong-2": 1950.0}, "weak": {"weak-1": 1050.0, "weak-2": 1150.0}}
CHANGES = {"swapped": SWAPPED, "shorter clock": SHORTER_CLOCK}
METHODS = ("fixed", "priors", "pool, no anchors", "no pool")
DEAL_SETS = (5, 20)
CHANGED_DEAL_SETS = (5, 10, 20, 40)
POOL_DEAL_SETS = 100
COST_DEAL_SETS = (5, 10, 20, 40, 80, 160)


def lineups(kind: str, names: Sequence[str], max_groups: int = 70) -> list[tuple[str, ...]]:
    """The line-ups of one deal set of a round robin of ``names`` (the real schedule: past ``max_groups``
    groups of four, a balanced subset)."""
    game, options, _ = KINDS[kind]
    return [s.lineup for s in make_schedule(game, options, sorted(names), 1, 0, max_groups).seatings]


def gauntlet(kind: str, candidate: str, pool: Sequence[str]) -> list[tuple[str, ...]]:
    """The line-ups of one deal set of ``candidate`` against the pool alone, as ``referee gauntlet`` seats
    it: a duel with each pool bot (2 seats), or at the table with every group of the pool's bots
    (lineup = "field", more seats), every rotation."""
    game, options, _ = KINDS[kind]
    spec = games.get(game)
    if spec.num_seats == 2:
        groups = [g for b in pool for g in spec.seat_groups([candidate, b], options, 70)[0]]
    else:
        groups = [(candidate, *rivals) for rivals in itertools.combinations(pool, spec.num_seats - 1)]
    return [lineup for g in groups for lineup in rotations(g)]


def play(kind: str, world: str, true: dict[str, float], tables: list[tuple[str, ...]], deal_sets: int,
         rng: random.Random) -> list[Outcome]:
    return simulate_tournament(true, tables, deal_sets, rng, **WORLDS[world])


def make_pool(kind: str, world: str, deal_sets: int, rng: random.Random, bootstrap: int) -> Reference:
    """A pool as ``referee pool make`` makes one: its bots' round robin, fitted."""
    outcomes = play(kind, world, dict(POOL), lineups(kind, list(POOL)), deal_sets, rng)
    return reference(outcomes, bootstrap=bootstrap, seed=rng.randrange(2**31))


def _interval(r: PlayerRating) -> tuple[float, float, float]:
    """A rating's interval: (lo, hi, half-width). The ratings compared here are made with a bootstrap
    (``main`` refuses --bootstrap 0), which gives each one."""
    assert r.lo is not None and r.hi is not None and r.plus_minus is not None
    return r.lo, r.hi, r.plus_minus


def agree(a: PlayerRating, b: PlayerRating) -> bool:
    """Whether the 95% interval of ``a - b`` holds 0: each side's half-width toward the other combined
    (``sqrt(h_a² + h_b²)``, independent runs)."""
    d = a.elo - b.elo
    (a_lo, a_hi, _), (b_lo, b_hi, _) = _interval(a), _interval(b)
    half = math.hypot(a.elo - a_lo, b_hi - b.elo) if d >= 0 else math.hypot(a_hi - a.elo, b.elo - b_lo)
    return abs(d) <= half


@dataclass
class Tally:
    """One way of rating: in how many pairs of runs the candidate's ratings agreed, their mean
    difference (A - B) and the mean half-width of its interval."""

    agreed: int = 0
    pairs: int = 0
    difference: float = 0.0
    half_width: float = 0.0

    def add(self, a: PlayerRating, b: PlayerRating) -> None:
        self.agreed += agree(a, b)
        self.pairs += 1
        self.difference += a.elo - b.elo
        self.half_width += (_interval(a)[2] + _interval(b)[2]) / 2

    @property
    def pct(self) -> float:
        return 100.0 * self.agreed / self.pairs

    def __str__(self) -> str:
        return f"{self.pct:.1f}; {self.difference / self.pairs:+.0f}; ±{self.half_width / self.pairs:.0f}"


@dataclass
class Agreement:
    methods: dict[str, Tally] = field(default_factory=lambda: {m: Tally() for m in METHODS})
    false_alarms: int = 0
    checked: int = 0

    @property
    def false_alarm_pct(self) -> float:
        return 100.0 * self.false_alarms / self.checked if self.checked else math.nan


def agreement(kind: str, world: str, deal_sets: int, trials: int, *, pool_deal_sets: int = POOL_DEAL_SETS,
              bootstrap: int = 200, seed: int = 0, methods: Sequence[str] = METHODS, runs_per_pool: int = 1,
              max_groups: int = 70) -> Agreement:
    """The ``agree`` part for one cell (see the module docstring): a new pool every ``runs_per_pool``
    pairs of runs; ``max_groups``: the runs' schedule (4-player: a balanced subset past it)."""
    rng = random.Random(f"agree:{kind}:{world}:{deal_sets}:{seed}")
    out = Agreement()
    runs = {}
    for name, entrants in FIELDS.items():
        with_pool = {**POOL, CANDIDATE: 1500.0, **entrants}
        alone = {CANDIDATE: 1500.0, **entrants}
        runs[name] = (with_pool, lineups(kind, list(with_pool), max_groups), alone, lineups(kind, list(alone)))
    for t in range(trials):
        if t % runs_per_pool == 0:
            ref = make_pool(kind, world, pool_deal_sets, rng, bootstrap)
        tables: dict[str, dict[str, PlayerRating]] = {m: {} for m in methods}
        for name, (with_pool, schedule, alone, alone_schedule) in runs.items():
            outcomes = play(kind, world, with_pool, schedule, deal_sets, rng)
            if "fixed" in methods:
                tables["fixed"][name] = rate_anchored(outcomes, ref, bootstrap=bootstrap, seed=t)[CANDIDATE]
            if "priors" in methods:
                tables["priors"][name] = rate_anchored(outcomes, ref, bootstrap=bootstrap, seed=t,
                                                       priors=True)[CANDIDATE]
            if "pool, no anchors" in methods:
                tables["pool, no anchors"][name] = rate(outcomes, bootstrap=bootstrap, seed=t)[CANDIDATE]
            if "no pool" in methods:
                tables["no pool"][name] = rate(play(kind, world, alone, alone_schedule, deal_sets, rng),
                                               bootstrap=bootstrap, seed=t)[CANDIDATE]
            check = check_scale(outcomes, ref)
            out.checked += check.verdict is not Scale.UNCHECKED
            out.false_alarms += check.verdict is Scale.OFF
        for m in methods:
            out.methods[m].add(tables[m]["strong"], tables[m]["weak"])
    return out


def fields_difference(kind: str, world: str, limit: int = 2000, seed: int = 0) -> float:
    """What the fields' difference does to the candidate's rating without a pool: its rating with the
    weak entrants minus with the strong ones, each fitted on ``limit`` deal sets (negative: A - B)."""
    rng = random.Random(f"fields:{kind}:{world}:{seed}")
    elo = {}
    for name, entrants in FIELDS.items():
        alone = {CANDIDATE: 1500.0, **entrants}
        table = rate(play(kind, world, alone, lineups(kind, list(alone)), limit, rng), bootstrap=0)
        elo[name] = table[CANDIDATE].elo
    return elo["strong"] - elo["weak"]


@dataclass
class Detection:
    flagged: int = 0
    checked: int = 0
    runs: int = 0
    moved_fixed: float = 0.0
    moved_priors: float = 0.0

    @property
    def pct(self) -> float:
        return 100.0 * self.flagged / self.runs


def detection(kind: str, world: str, change: str, deal_sets: int, trials: int, *,
              pool_deal_sets: int = POOL_DEAL_SETS, bootstrap: int = 200, seed: int = 0,
              runs_per_pool: int = 1) -> Detection:
    """The ``changed`` part for one cell: run A on a changed setting against the pool as it was made (a
    new pool every ``runs_per_pool`` runs)."""
    rng = random.Random(f"changed:{kind}:{world}:{change}:{deal_sets}:{seed}")
    true = {**POOL, CANDIDATE: 1500.0, **FIELDS["strong"]}
    changed = shifted(true, CHANGES[change])
    schedule = lineups(kind, list(true))
    out = Detection()
    for t in range(trials):
        if t % runs_per_pool == 0:
            ref = make_pool(kind, world, pool_deal_sets, rng, bootstrap)
        draws = rng.randrange(2**63)
        before = play(kind, world, true, schedule, deal_sets, random.Random(draws))
        after = play(kind, world, changed, schedule, deal_sets, random.Random(draws))  # the same draws
        check = check_scale(after, ref)
        out.runs += 1
        out.checked += check.verdict is not Scale.UNCHECKED
        out.flagged += check.verdict is Scale.OFF
        for priors in (False, True):
            moved = (rate_anchored(after, ref, bootstrap=0, priors=priors)[CANDIDATE].elo
                     - rate_anchored(before, ref, bootstrap=0, priors=priors)[CANDIDATE].elo)
            if priors:
                out.moved_priors += moved / trials
            else:
                out.moved_fixed += moved / trials
    return out


def cost(kind: str, world: str, candidate: float, deal_sets: int, trials: int, *,
         pool_deal_sets: int = POOL_DEAL_SETS, bootstrap: int = 200, seed: int = 0) -> float:
    """The mean half-width of a candidate's anchored 95% interval after ``deal_sets`` deal sets of a
    gauntlet against the pool."""
    rng = random.Random(f"cost:{kind}:{world}:{candidate}:{deal_sets}:{seed}")
    true = {**POOL, CANDIDATE: candidate}
    schedule = gauntlet(kind, CANDIDATE, list(POOL))
    ref = make_pool(kind, world, pool_deal_sets, rng, bootstrap)  # one pool: the width hardly depends on it
    total = 0.0
    for t in range(trials):
        row = rate_anchored(play(kind, world, true, schedule, deal_sets, rng), ref, bootstrap=bootstrap, seed=t)
        total += _interval(row[CANDIDATE])[2]
    return total / trials


def deal_sets_for(target: float, deal_sets: Sequence[int], halves: Sequence[float]) -> float | None:
    """The deal sets at which the half-width reaches ``target``: between the two measured points that
    bracket it, a straight line in log-log (the half-width goes about as ``1/sqrt(deal sets)``); None
    when no measured point reaches it."""
    points = list(zip(deal_sets, halves))
    for (d1, h1), (d2, h2) in itertools.pairwise(points):
        if h1 > target >= h2:
            slope = math.log(h2 / h1) / math.log(d2 / d1)
            return d1 * math.exp(math.log(target / h1) / slope)
    return float(points[0][0]) if points and points[0][1] <= target else None


# --- the tables ---------------------------------------------------------------------------------


def _timed(start: float) -> str:
    return f"({time.perf_counter() - start:.0f} s)"


def part_agree(args: argparse.Namespace) -> None:
    print(f"== agree: {args.trials} pairs of runs a cell (a new pool of {args.pool_deal_sets} deal sets every "
          f"{args.runs_per_pool}); "
          f"for each way of rating: % of pairs whose ratings of the candidate agree within their 95% intervals "
          f"(target: at least 95); mean difference A - B; mean ± ==")
    print("| data | world | deal sets | " + " | ".join(METHODS) + " | without a pool, in the limit | "
          "scale check: false alarms % |")
    print("|---|---|---|" + "---|" * len(METHODS) + "---|---|")
    for kind in args.kinds:
        for world in args.worlds:
            limit = fields_difference(kind, world, seed=args.seed)
            for d in args.deal_sets:
                start = time.perf_counter()
                r = agreement(kind, world, d, args.trials, pool_deal_sets=args.pool_deal_sets,
                              bootstrap=args.bootstrap, seed=args.seed, runs_per_pool=args.runs_per_pool)
                print(f"| {kind} | {world} | {d} | " + " | ".join(str(r.methods[m]) for m in METHODS)
                      + f" | {limit:+.0f} | {r.false_alarm_pct:.1f} | {_timed(start)}", flush=True)
    print()


def part_changed(args: argparse.Namespace) -> None:
    print(f"== changed: {args.trials} runs a cell (run A on a changed setting, the pool as it was made, a new pool "
          f"every {args.runs_per_pool} runs): % flagged "
          f"off-scale; how far the candidate's anchored rating moved, fixed / with priors ==")
    print("| data | world | change | " + " | ".join(f"{d} deal sets" for d in args.changed_deal_sets) + " |")
    print("|---|---|---|" + "---|" * len(args.changed_deal_sets))
    for kind in args.kinds:
        for world in args.worlds:
            for change in CHANGES:
                start = time.perf_counter()
                cells = []
                for d in args.changed_deal_sets:
                    r = detection(kind, world, change, d, args.trials, pool_deal_sets=args.pool_deal_sets,
                                  bootstrap=args.bootstrap, seed=args.seed, runs_per_pool=args.runs_per_pool)
                    cells.append(f"{r.pct:.1f}; {r.moved_fixed:+.0f} / {r.moved_priors:+.0f}")
                print(f"| {kind} | {world} | {change} | " + " | ".join(cells) + f" | {_timed(start)}", flush=True)
    print()


def part_cost(args: argparse.Namespace) -> None:
    print(f"== cost: {args.cost_trials} gauntlets against the pool a cell; the candidate's mean ± (95%) by deal sets, "
          f"and the deal sets for ±{args.target:.0f} (between the two that bracket it, log-log) ==")
    print("| data | world | candidate | " + " | ".join(f"{d} deal sets" for d in args.cost_deal_sets)
          + f" | ±{args.target:.0f} at |")
    print("|---|---|---|" + "---|" * len(args.cost_deal_sets) + "---|")
    for kind in args.kinds:
        for world in args.worlds:
            for candidate in (1500.0, 1900.0):
                start = time.perf_counter()
                halves = [cost(kind, world, candidate, d, args.cost_trials, pool_deal_sets=args.pool_deal_sets,
                               bootstrap=args.bootstrap, seed=args.seed) for d in args.cost_deal_sets]
                needed = deal_sets_for(args.target, args.cost_deal_sets, halves)
                per_deal_set = len(gauntlet(kind, CANDIDATE, list(POOL)))
                enough = "-" if needed is None else f"{needed:.0f} ({needed * per_deal_set:.0f} matches)"
                print(f"| {kind} | {world} | {candidate:.0f} | " + " | ".join(f"±{h:.0f}" for h in halves)
                      + f" | {enough} | {_timed(start)}", flush=True)
    print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--part", choices=("agree", "changed", "cost", "all"), default="all")
    parser.add_argument("--trials", type=int, default=200, help="pairs of runs (agree), runs (changed) a cell "
                        "(default 200)")
    parser.add_argument("--cost-trials", type=int, default=50, help="gauntlets a cell of the cost part (default 50)")
    parser.add_argument("--deal-sets", type=int, nargs="+", default=list(DEAL_SETS), help="deal sets of a run (agree)")
    parser.add_argument("--changed-deal-sets", type=int, nargs="+", default=list(CHANGED_DEAL_SETS))
    parser.add_argument("--cost-deal-sets", type=int, nargs="+", default=list(COST_DEAL_SETS))
    parser.add_argument("--pool-deal-sets", type=int, default=POOL_DEAL_SETS, help="deal sets of the pool's own run")
    parser.add_argument("--runs-per-pool", type=int, default=5, help="pairs of runs (agree), runs (changed) that "
                        "share a pool before a new one is made (default 5)")
    parser.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples of a table (default 200)")
    parser.add_argument("--target", type=float, default=50.0, help="the half-width of the cost part (default 50)")
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS))
    parser.add_argument("--worlds", nargs="+", choices=list(WORLDS), default=list(WORLDS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.bootstrap < 1:
        parser.error("--bootstrap must be at least 1: the intervals compared come from it")
    started = time.perf_counter()
    for part, run in (("agree", part_agree), ("changed", part_changed), ("cost", part_cost)):
        if args.part in (part, "all"):
            run(args)
    print(f"wall {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
