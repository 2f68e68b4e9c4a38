"""Adaptive scheduling against round robin, by simulation: the matches each needs to meet the same
stopping rule, and how often the order that rule declares is wrong.

    python -m referee.tools.scheduling                          # the table in docs/tournaments.md
    python -m referee.tools.scheduling --fields sample --tournaments 40 --bots 4 8
    python -m referee.tools.scheduling --uncorrected            # the rule without sharing its level

Simulated tournaments (``referee.stats.simulation``, the project's world: cards of 100 Elo a seat,
which the rotations cancel, and normal deal effects of 100 Elo, which they do not) of 4, 8 and 16
bots of known strength, 2-player (Aegis's line-ups: a pair, seats swapped) and 4-player
(Confirmation's: a group of four in its four rotations). Each is played deal set by deal set until
the stopping rule (:func:`referee.tournament.adaptive.verdict`, checked after every deal set, as the
runner does) or ``--max-deal-sets``:

- **round robin**: every deal set played by the schedule a round robin of these bots plays
  (:func:`referee.tournament.schedule.make_schedule`: every pair; every group of four, or past 70
  groups the balanced subset);
- **adaptive**: the tables :func:`referee.tournament.adaptive.next_tables` chooses, the same code the
  runner calls.

The fields (``--fields``) have the spreads of real play: **even** (the default), every neighbour
100 Elo apart (the search and heuristic sample bots are about 100 apart in the README's tables);
**sample**, neighbours 50, 100 and 400 Elo apart in turn (a bot and its weakened copy, 30 to 60 Elo
in docs/regression.md; search and heuristic; heuristic and random, 400 to 500); **close**, every
neighbour 30 Elo apart (revisions of one bot), where a rule checked after every deal set is most
likely to stop on a wrong order.

For each cell: the mean matches to the stop (and deal sets), the share of round robin's matches
adaptive needs, how many tournaments stopped by the rule before the cap, and of those how often the
declared order (``order``: the whole order; ``top:K``: the top K in order) was not the true one, with
its 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from referee.stats.ratings import rank_posterior
from referee.stats.simulation import PROJECT, simulate_tournament
from referee.tournament.adaptive import Game, Round, Rule, next_tables, verdict
from referee.tournament.schedule import make_schedule

KINDS = {"2-player": ("aegis", {}), "4-player": ("confirmation", {})}
#: the gaps between neighbours (Elo), repeated down the field
FIELDS = {"sample": (50.0, 100.0, 400.0), "even": (100.0,), "close": (30.0,)}
SCHEDULES = ("round-robin", "adaptive")


def field_of(name: str, bots: int) -> dict[str, float]:
    """``bots`` bots (``b01`` the strongest) whose neighbours are the field's gaps apart, centred on 1500."""
    gaps = FIELDS[name]
    ratings = [0.0]
    for i in range(bots - 1):
        ratings.append(ratings[-1] - gaps[i % len(gaps)])
    centre = sum(ratings) / bots
    return {f"b{i + 1:02d}": 1500.0 + r - centre for i, r in enumerate(ratings)}


@dataclass(frozen=True)
class Run:
    """One simulated tournament: its matches and deal sets, whether the rule stopped it, and whether
    the order it declared was wrong."""

    matches: int
    deal_sets: int
    settled: bool
    wrong: bool


def play(kind: str, true: dict[str, float], schedule: str, rule: Rule, rng: random.Random, seed: int) -> Run:
    """A tournament of bots of Elo ``true``, deal set by deal set, until ``rule`` stops it."""
    name, options = KINDS[kind]
    game = Game.of(name, options)
    entries = sorted(true)
    fixed = [s.lineup for s in make_schedule(name, options, entries, 1, seed).seatings]
    rounds: list[Round] = []
    outcomes: list = []
    matches = 0
    while True:
        posterior = rank_posterior(outcomes) if outcomes else None
        stop = verdict(rule, posterior, entries, len(rounds), matches)
        if stop is not None:
            break
        if schedule == "adaptive":
            tables = next_tables(game, entries, rounds, posterior, rule, seed)
            lineups = [lineup for table in tables for lineup in game.lineups(table)]
        else:
            tables, lineups = (), fixed
        outcomes += simulate_tournament(true, lineups, 1, rng, first=len(rounds), **PROJECT)
        rounds.append(Round(len(rounds), tables))
        matches += len(lineups)
    truth = sorted(entries, key=lambda n: -true[n])
    declared = list(posterior.names) if posterior is not None else []
    k = len(entries) if rule.top is None else rule.top
    return Run(matches, len(rounds), stop.settled, stop.settled and declared[:k] != truth[:k])


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


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

    def error(self) -> str:
        lo, hi = wilson(self.wrong, self.settled)
        rate = 100 * self.wrong / self.settled if self.settled else 0.0
        return f"{rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def measure(kind: str, bots: int, field: str, schedule: str, rule: Rule, tournaments: int, seed: int) -> Cell:
    true = field_of(field, bots)
    runs = tuple(play(kind, true, schedule, rule, random.Random(f"scheduling:{kind}:{bots}:{field}:{seed}:{t}"),
                      seed + t) for t in range(tournaments))
    return Cell(kind, bots, field, schedule, runs)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--bots", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--kinds", nargs="+", choices=sorted(KINDS), default=list(KINDS))
    parser.add_argument("--fields", nargs="+", choices=sorted(FIELDS), default=["even"])
    parser.add_argument("--stop", default="order", help='"order" or "top:K"')
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--max-deal-sets", type=int, default=400)
    parser.add_argument("--tournaments", type=int, default=60, help="simulated tournaments a cell")
    parser.add_argument("--uncorrected", action="store_true",
                        help="each adjacent pair at --confidence itself, not shared among the pairs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rule = Rule.parse(args.stop, args.confidence, args.max_deal_sets)
    if args.uncorrected:
        rule = Rule(rule.top, rule.confidence, rule.max_deal_sets, shared=False)
    print(f"stop = {rule.name}, confidence {rule.confidence:.0%}"
          f"{' (uncorrected: each pair at it)' if args.uncorrected else ''}, at most {rule.max_deal_sets} deal sets; "
          f"{args.tournaments} tournaments a cell, the project's world")
    print()
    print("| data | bots | field | round robin: matches (deal sets) | wrong | adaptive: matches (deal sets) | wrong "
          "| adaptive / round robin | stopped by the rule (rr, adaptive) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in args.kinds:
        for bots in args.bots:
            for field in args.fields:
                start = time.perf_counter()
                rr, ad = (measure(kind, bots, field, s, rule, args.tournaments, args.seed) for s in SCHEDULES)
                print(f"| {kind} | {bots} | {field} | {rr.matches:.0f} ({rr.deal_sets:.1f}) | {rr.error()} "
                      f"| {ad.matches:.0f} ({ad.deal_sets:.1f}) | {ad.error()} | {100 * ad.matches / rr.matches:.0f}% "
                      f"| {rr.settled}, {ad.settled} of {args.tournaments} |", flush=True)
                print(f"({kind}, {bots} bots, {field}: {time.perf_counter() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
