"""Adaptive scheduling against round robin, by simulation: the matches each needs to meet the same
stopping rule, how often that rule stops a run before the cap, and how often what it declares is wrong.

    python -m referee.tools.scheduling --fields even near nearer tie copy dominant --bots 4 --kinds 2-player \
        --tournaments 40                                        # docs/tournaments.md's first table (and --bots 5
                                                                # --kinds 4-player: its 4-player half)
    python -m referee.tools.scheduling --world harsh --fields near tie copy dominant --bots 4 --tournaments 20
    python -m referee.tools.scheduling --bots 8 --tournaments 20    # the even field, 2- and 4-player
    python -m referee.tools.scheduling --tie-elo 50 --fields copy tie --bots 4 --kinds 2-player --schedules adaptive

Simulated tournaments (``referee.stats.simulation``: the **project**'s world, cards of 100 Elo a seat,
which the rotations cancel, and normal deal effects of 100 Elo, which they do not; or the **harsh**
one, cards of 300 Elo a seat, heavy-tailed deal effects and draws) of bots of known strength,
2-player (Aegis's line-ups: a pair, seats swapped) and 4-player (Confirmation's: a group of four in its
four rotations). Each is played deal set by deal set until the stopping rule
(:func:`referee.competition.adaptive.verdict`, checked after every deal set, as the runner does) or
``--max-deal-sets``:

- **round robin**: every deal set played by the schedule a round robin of these bots plays
  (:func:`referee.competition.schedule.make_schedule`: every pair; every group of four, or past 70
  groups the balanced subset);
- **adaptive**: the tables :func:`referee.competition.adaptive.next_tables` chooses, the same code the
  runner calls.

The fields (``--fields``; the gaps between neighbours, down the field, repeated):

- **even** (the default): every neighbour 100 Elo apart (the search and heuristic sample bots are
  about 100 apart in the demo's tables, docs/benchmarks.md); **sample**: 50, 100 and 400 apart in turn (a bot and its
  weakened copy, search and heuristic, heuristic and random); **close**: 30 apart;
- **near**: pairs 10 Elo apart, 140 from the next pair (four bots: +145, +5, -5, -145); **nearer**:
  2.5 apart, 147.5 from the next; **tie**: pairs of equal bots, 150 from the next (+150, 0, 0,
  -150); **copy**: as tie, the second of each pair a copy of the first (the same deal effect on every
  deal set: the cards suit them alike); **dominant**: one bot 600 Elo above the next, the rest 100
  apart (it wins nearly everything: its pairs are bounds).

What a stopped run declares is each pair its rule looked at: "a above b" (wrong if b is not below a:
an exact tie is not an order) or "a, b within ±tie_elo" (wrong if they are further apart). The margin
is on the Elo scale the results measure, the expected score's: the ratings a fit of this world
converges to (:func:`measured`: the luck that does not cancel, deal effects and, at four seats, the
cards, pulls the gaps together: 150 Elo of the simulation are about 118 in the project's world, 72
in the harsh one). For each cell: the mean matches to the stop (and deal sets), the share of runs
the rule stopped before the cap, the share of those stops that declared something wrong, and the
share of all runs that did, each with its 95% Wilson interval; and adaptive's matches as a share of
round robin's.
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.competition.adaptive import Game, next_tables, verdict
from referee.competition.schedule import make_schedule
from referee.model import Round, Rule, ScheduleKind, Stop
from referee.stats.ratings import Tally, fit, rank_posterior
from referee.stats.sequences import ABOVE, WITHIN
from referee.stats.simulation import HARSH, PROJECT, simulate_tournament

KINDS: dict[str, tuple[str, dict[str, Any]]] = {"2-player": ("aegis", {}), "4-player": ("confirmation", {})}
WORLDS = {"project": PROJECT, "harsh": HARSH}
#: the gaps between neighbours (Elo): the first ones, then the rest repeated down the field
FIELDS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "even": ((), (100.0,)), "sample": ((), (50.0, 100.0, 400.0)), "close": ((), (30.0,)),
    "near": ((), (140.0, 10.0)), "nearer": ((), (147.5, 2.5)), "tie": ((), (150.0, 0.0)), "copy": ((), (150.0, 0.0)),
    "dominant": ((600.0,), (100.0,)),
}
#: the fields whose equal neighbours are copies of one another (the same deal effects)
COPIED = {"copy"}
SCHEDULES = tuple(ScheduleKind)


def field_of(name: str, bots: int) -> dict[str, float]:
    """``bots`` bots (``b01`` the strongest) whose neighbours are the field's gaps apart, centred on 1500."""
    head, cycle = FIELDS[name]
    ratings = [0.0]
    for i in range(bots - 1):
        ratings.append(ratings[-1] - (head[i] if i < len(head) else cycle[(i - len(head)) % len(cycle)]))
    centre = sum(ratings) / bots
    return {f"b{i + 1:02d}": 1500.0 + r - centre for i, r in enumerate(ratings)}


def copies_of(name: str, true: dict[str, float]) -> dict[str, str]:
    """The copies of a field (copy -> original): in a copied field, an entry level with the one above."""
    if name not in COPIED:
        return {}
    names = sorted(true)
    return {b: a for a, b in zip(names, names[1:]) if true[a] == true[b]}


@functools.cache
def measured(kind: str, field: str, bots: int, world: str, deal_sets: int = 1000) -> dict[str, float]:
    """The ratings the fit of this world converges to (the fit of ``deal_sets`` deal sets of the
    round robin): the Elo scale of the expected scores, on which a margin is judged; entries of one
    rating in the simulation are of one here too (by symmetry: the fit's own noise is left out)."""
    name, options = KINDS[kind]
    true = field_of(field, bots)
    lineups = [s.lineup for s in make_schedule(name, options, sorted(true), 1, 0).seatings]
    rng = random.Random(f"measured:{kind}:{field}:{bots}:{world}")
    ratings = fit(simulate_tournament(true, lineups, deal_sets, rng, copies=copies_of(field, true), **WORLDS[world]))
    level: dict[float, list[str]] = {}
    for entry in sorted(true):
        level.setdefault(true[entry], []).append(entry)
    return {entry: sum(ratings[e] for e in level[true[entry]]) / len(level[true[entry]]) for entry in true}


def wrong(stop: Stop, true: dict[str, float], scale: dict[str, float] | None = None) -> bool:
    """Whether a stop by the rule declared something the truth does not have: an order of two entries
    the truth does not have in that order (equal entries have none), or two entries within the margin
    that are further apart on the Elo scale the results measure (``scale``: :func:`measured`; by
    default the simulation's own ratings)."""
    scale = scale or true
    for claim in stop.pairs:
        gap = true[claim.a] - true[claim.b]
        apart = abs(scale[claim.a] - scale[claim.b])
        if (claim.verdict == ABOVE and gap <= 0) or (claim.verdict == WITHIN and apart >= stop.tie_elo):
            return True
    return False


@dataclass(frozen=True)
class Run:
    """One simulated tournament: its matches and deal sets, whether the rule stopped it, and whether
    what it declared was wrong."""

    matches: int
    deal_sets: int
    settled: bool
    wrong: bool


def play(kind: str, true: dict[str, float], schedule: str, rule: Rule, rng: random.Random, seed: int,
         world: str = "project", copies: dict[str, str] | None = None, scale: dict[str, float] | None = None) -> Run:
    """A tournament of bots of Elo ``true``, deal set by deal set, until ``rule`` stops it."""
    name, options = KINDS[kind]
    game = Game.of(name, options)
    entries = sorted(true)
    fixed = [s.lineup for s in make_schedule(name, options, entries, 1, seed).seatings]
    rounds: list[Round] = []
    tally = Tally()
    matches = 0
    while True:
        posterior = rank_posterior(tally)
        stop = verdict(rule, posterior, entries, len(rounds), matches)
        if stop is not None:
            break
        if schedule == ScheduleKind.ADAPTIVE:
            tables = next_tables(game, entries, rounds, posterior, rule, seed)
            lineups = [lineup for table in tables for lineup in game.lineups(table)]
        else:
            tables, lineups = (), fixed
        tally.add(simulate_tournament(true, lineups, 1, rng, first=len(rounds), copies=copies, **WORLDS[world]))
        rounds.append(Round(len(rounds), tables))
        matches += len(lineups)
    return Run(matches, len(rounds), stop.settled, stop.settled and wrong(stop, true, scale))


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(k: int, n: int) -> str:
    """k of n in percent with its 95% Wilson interval (``-`` for none)."""
    if n == 0:
        return "-"
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


@dataclass(frozen=True)
class Cell:
    kind: str
    bots: int
    field: str
    schedule: str
    runs: tuple[Run, ...]

    @property
    def matches(self) -> float:
        return sum(r.matches for r in self.runs) / len(self.runs)

    @property
    def deal_sets(self) -> float:
        return sum(r.deal_sets for r in self.runs) / len(self.runs)

    @property
    def settled(self) -> int:
        return sum(r.settled for r in self.runs)

    @property
    def wrong(self) -> int:
        return sum(r.wrong for r in self.runs)

    def stopped(self) -> str:
        return f"{self.settled} of {len(self.runs)}"

    def error(self) -> str:
        """Wrong among the stops by the rule."""
        return rate(self.wrong, self.settled)

    def error_all(self) -> str:
        """Wrong among every run (a run at the cap declares nothing)."""
        return rate(self.wrong, len(self.runs))


def measure(kind: str, bots: int, field: str, schedule: str, rule: Rule, tournaments: int, seed: int,
            world: str = "project") -> Cell:
    true = field_of(field, bots)
    copies, scale = copies_of(field, true), measured(kind, field, bots, world)
    runs = tuple(play(kind, true, schedule, rule, random.Random(f"scheduling:{kind}:{bots}:{field}:{world}:{seed}:{t}"),
                      seed + t, world, copies, scale) for t in range(tournaments))
    return Cell(kind, bots, field, schedule, runs)


HEADER = ("| data | bots | field | schedule | matches (deal sets) | stopped by the rule | wrong, of the stops "
          "| wrong, of all runs | matches / round robin |\n|---|---|---|---|---|---|---|---|---|")


def row(cell: Cell, against: Cell | None = None) -> str:
    share = f"{100 * cell.matches / against.matches:.0f}%" if against is not None else ""
    return (f"| {cell.kind} | {cell.bots} | {cell.field} | {cell.schedule} | {cell.matches:.0f} ({cell.deal_sets:.1f}) "
            f"| {cell.stopped()} | {cell.error()} | {cell.error_all()} | {share} |")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--bots", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--kinds", nargs="+", choices=sorted(KINDS), default=list(KINDS))
    parser.add_argument("--fields", nargs="+", choices=list(FIELDS), default=["even"])
    parser.add_argument("--world", choices=sorted(WORLDS), default="project")
    parser.add_argument("--schedules", nargs="+", choices=SCHEDULES, default=list(SCHEDULES))
    parser.add_argument("--stop", default="order", help='"order" or "top:K"')
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--tie-elo", type=float, default=Rule().tie_elo)
    parser.add_argument("--max-deal-sets", type=int, default=400)
    parser.add_argument("--tournaments", type=int, default=60, help="simulated tournaments a cell")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rule = Rule.parse(args.stop, args.confidence, args.max_deal_sets, args.tie_elo)
    print(f"{rule.describe()}; {args.tournaments} tournaments a cell, the {args.world} world")
    print()
    print(HEADER)
    for kind in args.kinds:
        for bots in args.bots:
            for field in args.fields:
                start = time.perf_counter()
                cells = {s: measure(kind, bots, field, s, rule, args.tournaments, args.seed, args.world)
                         for s in args.schedules}
                for s, cell in cells.items():
                    print(row(cell, cells.get(ScheduleKind.ROUND_ROBIN) if s != ScheduleKind.ROUND_ROBIN else None),
                          flush=True)
                print(f"({kind}, {bots} bots, {field}: {time.perf_counter() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
