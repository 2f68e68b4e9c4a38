"""What the ratings' posterior costs a scheduler that looks after every deal set, per table, and the
same figures from another checkout of the code (the one before a change) side by side.

    python -m referee.tools.posterior_cost                          # this checkout
    python -m referee.tools.posterior_cost --before /work/main      # and another one, with the ratio

A **table** is what a look at the results costs: the posterior from the outcomes
(:func:`referee.stats.ratings.rank_posterior`: the fit, its two covariances, the spread's grid), every
pairwise probability (``matrix()``), the rank probabilities (``rank_probabilities()``, 4,000 draws)
and the joint probability of the whole order (``p_top``). The tables are 2-player round robins of 4,
8 and 16 bots 25 Elo apart, after 5 and 20 deal sets (``referee.stats.simulation``, the project's
world). Each figure is the least CPU time (``time.process_time``) of ``--repeat`` runs, so that the
machine's other work counts as little as it can; the load average is printed with them. With
``--before``, the other checkout's code computes the same tables in a process of its own
(``PYTHONPATH``), in turns with this one (``--rounds``: before, now, before, now, ..., the least of
all its rounds for each, so that a change of the machine's load falls on both), and the tool prints
how far apart the two are: the pairwise probabilities
(computed exactly: they agree to round-off) and the rank probabilities (from draws: they agree to
their Monte Carlo error, the draws being a different stream).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.stats.ratings import Outcome, rank_posterior
from referee.stats.simulation import PROJECT, simulate_tournament

TABLES = tuple((bots, deal_sets) for bots in (4, 8, 16) for deal_sets in (5, 20))


def outcomes_of(bots: int, deal_sets: int) -> list[Outcome]:
    true = {f"bot{i:02d}": 1500.0 + 25 * i for i in range(bots)}
    lineups = [(a, b) for a in true for b in true if a != b]
    return simulate_tournament(true, lineups, deal_sets, random.Random(bots), **PROJECT)


def measure(repeat: int) -> list[dict[str, Any]]:
    """Each table's least CPU time (seconds) and its figures (the pairwise and rank probabilities)."""
    out = []
    for bots, deal_sets in TABLES:
        outcomes = outcomes_of(bots, deal_sets)
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            posterior = rank_posterior(outcomes)
            assert posterior is not None  # TABLES: 5 deal sets or more, never fewer than two
            matrix = posterior.matrix()
            ranks = posterior.rank_probabilities()
            posterior.p_top(bots)
            best = min(best, time.process_time() - start)
        out.append({"bots": bots, "deal_sets": deal_sets, "results": len(outcomes), "seconds": best,
                    "matrix": matrix, "ranks": ranks})
    return out


def measure_in(checkout: Path, repeat: int) -> list[dict[str, Any]]:
    """:func:`measure` with the code of another checkout (its ``referee`` package first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, __file__, "--json", "--repeat", str(repeat)], env=env, cwd=checkout,
                          capture_output=True, text=True, check=True)
    figures: list[dict[str, Any]] = json.loads(done.stdout)
    return figures


def _least(a: list[dict[str, Any]] | None, b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each table's least time of two measurements (its figures, the first's)."""
    return b if a is None else [{**x, "seconds": min(x["seconds"], y["seconds"])} for x, y in zip(a, b)]


def _apart(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> float:
    return max(abs(a[x][y] - b[x][y]) for x in a for y in a[x])


def _apart_ranks(a: dict[str, list[float]], b: dict[str, list[float]]) -> float:
    return max(abs(p - q) for name in a for p, q in zip(a[name], b[name]))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--before", type=Path, help="another checkout (its directory) to measure side by side")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each table; the least time counts")
    parser.add_argument("--rounds", type=int, default=3, help="with --before: turns of each checkout")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the other checkout's process
    args = parser.parse_args(argv)
    if args.before and args.rounds < 1:
        parser.error("--rounds must be at least 1 with --before")
    if args.json:
        print(json.dumps(measure(args.repeat)))
        return
    load = os.getloadavg()
    before, now = None, None if args.before else measure(args.repeat)
    for _ in range(args.rounds if args.before else 0):
        before = _least(before, measure_in(args.before, args.repeat))
        now = _least(now, measure(args.repeat))
    runs = args.repeat * (args.rounds if args.before else 1)
    print(f"CPU time per table, the least of {runs} runs{' in turns' if args.before else ''}; "
          f"load average {load[0]:.1f}, {load[1]:.1f}, "
          f"{load[2]:.1f} (1, 5, 15 minutes) at the start, {os.getloadavg()[0]:.1f} at the end")
    assert now is not None  # measured once, or in each of the rounds (at least one)
    if before is None:
        print("| bots | deal sets | results | per table |\n|---|---|---|---|")
        for t in now:
            print(f"| {t['bots']} | {t['deal_sets']} | {t['results']} | {1000 * t['seconds']:.1f} ms |")
        return
    print("| bots | deal sets | results | before | now | faster | pairwise probabilities apart "
          "| rank probabilities apart |\n|---|---|---|---|---|---|---|---|")
    for old, new in zip(before, now):
        print(f"| {new['bots']} | {new['deal_sets']} | {new['results']} | {1000 * old['seconds']:.1f} ms "
              f"| {1000 * new['seconds']:.1f} ms | {old['seconds'] / new['seconds']:.0f}x "
              f"| {_apart(old['matrix'], new['matrix']):.1e} | {_apart_ranks(old['ranks'], new['ranks']):.3f} |")


if __name__ == "__main__":
    main()
