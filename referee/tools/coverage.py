"""Do the printed 95% rating intervals hold the true ratings 95% of the time? Measured by simulation.

    python -m referee.tools.coverage                                  # the table in docs/tournaments.md
    python -m referee.tools.coverage --tournaments 50 --bootstrap 100 # quicker, rougher

Four bots of known Elo (1350, 1450, 1550, 1650: average 1500, as the fit's) play simulated
tournaments on the real schedules (``referee.competition.schedule``): **2-player** as Aegis
(each pair, every deal set, seats swapped), **4-player** as Confirmation (the group of four in its
four rotations: six pairwise results a game) and **pairs** as Confirmation's pairs variant (the
three partnerships, each in four rotations: one team result a game). Games come from
``referee.stats.simulation.simulate_tournament``: the Bradley-Terry model exactly for any two
seats, card effects of 100 Elo per seat (which the rotations cancel), and per-deal effects: each
bot's form on a deal set ``~ Normal(0, luck)`` Elo, shared by all its games on it (0: none;
100: strong). Those effects shrink the Elo differences that games show (the average of
``σ(Δ + noise)`` is nearer 1/2 than ``σ(Δ)``), so the *true* rating of a case, the one every
rating system estimates, is what the fit converges to with unlimited deal sets of the same
world: measured once per case on ``--limit`` deal sets (printed). For each case the tool rates
``--tournaments`` tournaments with :func:`referee.stats.ratings.rate` and prints how often an
interval held the truth (a bound, "< hi" or "> lo", holds it when it lies on the stated side),
the mean half-width, and how many intervals were flagged as untrustworthy
(``Ratings.intervals_trusted``).
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from referee.competition.schedule import make_schedule
from referee.stats.ratings import Bound, PlayerRating, fit, rate
from referee.stats.simulation import simulate_tournament

TRUE = {"a": 1350.0, "b": 1450.0, "c": 1550.0, "d": 1650.0}
#: the schedule of each kind of data: (game, options, teams of seats or None)
KINDS = {
    "2-player": ("aegis", {}, None),
    "4-player": ("confirmation", {}, None),
    "pairs": ("confirmation", {"pairs": True}, ((0, 2), (1, 3))),  # RULES 1.8: seats 0+2 and 1+3
}
DEAL_SETS = (2, 5, 10, 20)
LUCKS = (0.0, 100.0)


@dataclass(frozen=True)
class Coverage:
    kind: str
    deal_sets: int
    luck: float
    covered: int
    total: int
    mean_half_width: float
    flagged: int  # intervals in tables with intervals_trusted False

    @property
    def pct(self) -> float:
        return 100.0 * self.covered / self.total


def holds(row: PlayerRating, truth: float) -> bool:
    """Whether the printed interval (or bound) holds the true rating."""
    lo, hi = row.lo, row.hi
    assert lo is not None and hi is not None  # rated with a bootstrap (main refuses --bootstrap 0)
    if row.bound == Bound.UPPER:
        return truth <= hi
    if row.bound == Bound.LOWER:
        return truth >= lo
    return lo <= truth <= hi


def _lineups(kind: str) -> list[tuple[str, ...]]:
    game, options, _ = KINDS[kind]
    return [s.lineup for s in make_schedule(game, options, sorted(TRUE), deal_sets=1, seed=0).seatings]


def limit(kind: str, luck: float, deal_sets: int = 4000, seed: int = 0) -> dict[str, float]:
    """The ratings the fit converges to in this world (``deal_sets`` deal sets of it)."""
    rng = random.Random(f"coverage-limit:{kind}:{luck}:{seed}")
    return fit(simulate_tournament(TRUE, _lineups(kind), deal_sets, rng, luck=luck, teams=KINDS[kind][2]))


def measure(kind: str, deal_sets: int, luck: float, tournaments: int, bootstrap: int, seed: int = 0,
            true: dict[str, float] | None = None) -> Coverage:
    """Coverage of ``true`` (by default :func:`limit`) by the intervals of ``tournaments`` tournaments."""
    true = true or limit(kind, luck, seed=seed)
    lineups, teams = _lineups(kind), KINDS[kind][2]
    rng = random.Random(f"coverage:{kind}:{deal_sets}:{luck}:{seed}")
    covered = total = flagged = 0
    width = 0.0
    for t in range(tournaments):
        outcomes = simulate_tournament(TRUE, lineups, deal_sets, rng, luck=luck, teams=teams)
        table = rate(outcomes, bootstrap=bootstrap, seed=t)
        for row in table.rows:
            covered += holds(row, true[row.name])
            total += 1
            assert row.plus_minus is not None  # rated with a bootstrap, as above
            width += row.plus_minus
            flagged += not table.intervals_trusted
    return Coverage(kind, deal_sets, luck, covered, total, width / total, flagged)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tournaments", type=int, default=200, help="simulated tournaments per case")
    parser.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples per table")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=4000, help="deal sets that measure each case's true ratings")
    args = parser.parse_args(argv)
    if args.bootstrap < 1:
        parser.error("--bootstrap must be at least 1: the intervals measured come from it")
    print(f"bots at {', '.join(f'{k} {v:.0f}' for k, v in TRUE.items())}; {args.tournaments} tournaments "
          f"per case, {args.bootstrap} bootstrap resamples; coverage of the 95% intervals")
    print(f"{'data':<10} {'deal effects':>12} {'deal sets':>9} {'coverage %':>10} {'mean ±':>7} {'flagged':>7}")
    for kind in KINDS:
        for luck in LUCKS:
            true = limit(kind, luck, args.limit, args.seed)
            print(f"{kind}, deal effects {luck:.0f} Elo: true ratings "
                  + ", ".join(f"{k} {v:.0f}" for k, v in sorted(true.items())))
            for d in DEAL_SETS:
                start = time.perf_counter()
                c = measure(kind, d, luck, args.tournaments, args.bootstrap, args.seed, true)
                label = "none" if luck == 0 else f"{luck:.0f} Elo"
                print(f"{kind:<10} {label:>12} {d:>9} {c.pct:>10.1f} {c.mean_half_width:>7.0f} {c.flagged:>7}"
                      f"   ({c.covered}/{c.total}, {time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
