"""How well the collusion check works: how often it flags a pair when no pair plays for another, and
how often it catches a pair where one entry plays for the other.

    python -m referee.tools.collusion                       # the simulation table of docs/tournaments.md
    python -m referee.tools.collusion --bots 20 --jobs 2    # and real colluding bots, in process

Every tournament is a round robin of 6 entries on 10 deal sets (``--entries``, ``--deal-sets``),
checked by :func:`referee.stats.collusion.pair_effects` at family-wise 5%:

- **simulated** (``referee.stats.simulation.simulate_points``): the points of every seat, from the
  entries' skill, their deal form, the cards of each seat (which the rotations cancel), each
  table-mate's effect on everyone and noise, in the world of Confirmation's sample bots (``POINTS``)
  or a harsher one (heavy tails, entries of unequal spread: ``POINTS_HARSH``); Confirmation's
  line-ups (groups of four in their four rotations) and Aegis's (pairs, seats swapped, in a world of
  additive points: the method's own calibration; real Aegis points saturate, and the check is not
  made for two seats, as the real-bot row shows). The null:
  no pair effect. The colluding world: one entry (the helper) gives another (the mark) ``GAIN``
  points at every table they share, at a cost of ``COST`` of its own, what the real colluding bots
  do (``--bots`` prints it). And one null more: table-mates whose effect depends on where they sit
  (``--places``, points), which a round robin of Confirmation confounds with some pairs (the check
  cannot tell them from a pair's own effect).
- **real bots** (``--bots N``): N tournaments of the sample bots played in process (the
  engine, no referee: ``referee.tools.strength.play``), honest (the heuristic bot three times, the
  weakened one at 20% and 50% noise, the random one) and colluding (two of the heuristic bots
  replaced by ``tests/bots/colluding.py``'s mark and helper: the helper plays for the mark, by
  play alone), each seed both fields on the same deals; and the honest field in Aegis, on the
  estimator itself (why two seats are not checked).

For each: how many tournaments flagged any pair (the null) or the colluding pair (either way round),
with its 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import statistics
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.competition.schedule import make_schedule
from referee.model import deal_seed
from referee.stats.collusion import ALPHA, Match, pair_effects, presence
from referee.stats.simulation import POINTS, POINTS_AEGIS, POINTS_HARSH, simulate_points
from referee.tools.strength import load_policy, play, pool_map, wilson
from sample_bots.weakened import weakened

#: a little less than the real colluding bots do to the mark's and the helper's points per seat at a
#: table they share (a Confirmation match of 8 rounds; ``--bots`` measures it: θ, a contrast with the
#: average table-mate that takes a fifth off, +16.4 and -30.0 against -3.2 and -3.2 honest); in
#: Aegis, a match thrown: the mark wins it (about 25 points, 11 more than the heuristic bot's
#: average), the helper scores next to nothing (13 fewer)
GAIN, COST = 20.0, 30.0
THROWN = (11.0, 13.0)
#: the simulated cells: line-ups, world, what a colluding pair does (gain, cost)
CELLS: list[tuple[str, str, str, dict[str, Any], tuple[float, float]]] = [
         ("Confirmation (4 seats)", "confirmation", "sample bots", POINTS, (GAIN, COST)),
         ("Confirmation (4 seats)", "confirmation", "harsh", POINTS_HARSH, (GAIN, COST)),
         ("Aegis (2 seats)", "aegis", "additive points, a match thrown", POINTS_AEGIS, THROWN)]
#: the colluding bots, in the checkout
COLLUDING = Path(__file__).resolve().parents[2] / "tests" / "bots" / "colluding.py"
HELPER, MARK = "helper", "mark"


@dataclass
class Rate:
    """How many of ``n`` tournaments did it."""

    hits: int = 0
    n: int = 0

    def add(self, hit: bool) -> None:
        self.hits += bool(hit)
        self.n += 1

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else math.nan

    def text(self) -> str:
        lo, hi = (max(0.0, x) for x in wilson(self.hits, self.n))
        return f"{100 * self.value:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({self.hits}/{self.n})"


def names(n: int) -> list[str]:
    return [f"e{i}" for i in range(n)]


def lineups(game: str, entries: Sequence[str]) -> list[tuple[str, ...]]:
    """One deal set's line-ups of a round robin of ``entries`` (the runner's own schedule)."""
    return [s.lineup for s in make_schedule(game, {}, entries, 1, 0).seatings]


def caught(collusion: Any, pair: tuple[str, str]) -> bool:
    """Whether the check flagged the pair, either way round."""
    return any({e.entry, e.mate} == set(pair) for e in collusion.flagged)


def simulate(game: str, world: dict[str, Any], tournaments: int, seed: int, *, entries: int = 6,
             deal_sets: int = 10, collude: tuple[float, float] | None = None, alpha: float = ALPHA) -> Rate:
    """Of ``tournaments`` simulated ones: how many flag any pair (``collude`` None), or the colluding
    pair ``e0`` (helper) and ``e1`` (mark) when the helper gives the mark ``collude = (gain, cost)``."""
    who = names(entries)
    plays = lineups(game, who)
    rng = random.Random(f"collusion:{seed}:{game}:{collude is not None}")
    rate = Rate()
    for _ in range(tournaments):
        skill = {e: rng.gauss(0.0, 20.0) for e in who}
        colluders = [(who[0], who[1], *collude)] if collude else []
        matches = [Match(*m) for m in simulate_points(who, plays, deal_sets, rng, skill=skill, colluders=colluders,
                                                      **world)]
        checked = pair_effects(matches, alpha)
        rate.add(caught(checked, (who[0], who[1])) if collude else bool(checked.flagged))
    return rate


# --- real bots, in process ----------------------------------------------------------------------------


def field(collude: bool, colluding: Path = COLLUDING) -> dict[str, Any]:
    """The six entries of the real-bot tournaments: the colluding pair (or, honest, the heuristic
    bot in their places), the heuristic bot, the weakened one at 20% and 50% and the random one."""
    bots = _module(colluding)
    heuristic = load_policy("heuristic")
    return {HELPER: bots.POLICIES["helper" if collude else "honest"],
            MARK: bots.POLICIES["mark" if collude else "honest"],
            "heuristic": heuristic, "weak20": weakened(0.2), "weak50": weakened(0.5), "random": load_policy("random")}


def _module(path: Path) -> Any:
    if not path.is_file():
        raise SystemExit(f"error: no colluding bots at {path} (give --colluding PATH)")
    spec = importlib.util.spec_from_file_location("colluding", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: {path} is not a Python module (give --colluding PATH)")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_tournament(args: tuple[str, bool, int, int, dict[str, Any], str]) -> list[Match]:
    """One round robin of the real bots, in process: every deal set's line-ups played on its deals."""
    game, collude, seed, deal_sets, options, colluding = args
    policies = field(collude, Path(colluding))
    who = list(policies)
    out = []
    for k in range(deal_sets):
        shoe = deal_seed(seed, k) % (1 << 62)
        for lineup in lineups(game, who):
            bot_seed = zlib.crc32("|".join(lineup).encode())  # each table its own randomness, reproducibly
            state = play(game, options, shoe, [policies[e] for e in lineup], bot_seed=bot_seed)
            out.append(Match(k, tuple(lineup), tuple(float(t) for t in state.results()["scores"])))
    return out


def bots(tournaments: int, seed: int, deal_sets: int, rounds: int, jobs: int, colluding: Path) -> None:
    """The real-bot rows: Confirmation's honest and colluding fields, each on the same seeds; and the
    honest field in Aegis."""
    started = time.monotonic()
    runs = pool_map(real_tournament, [("aegis", False, seed + i, deal_sets, {}, str(colluding))
                                      for i in range(tournaments)], jobs)
    rate = Rate()
    for matches in runs:
        rate.add(bool(pair_effects(matches).flagged))
    print(f"real bots, Aegis, honest, on their points: any pair flagged in {rate.text()} (points saturate: the "
          f"check is not made for two seats); {(time.monotonic() - started) / max(1, tournaments):.0f} s a "
          f"tournament", flush=True)
    for collude in (False, True):
        started = time.monotonic()
        runs = pool_map(real_tournament, [("confirmation", collude, seed + i, deal_sets, {"rounds": rounds},
                                           str(colluding)) for i in range(tournaments)], jobs)
        rate = Rate()
        gains = []
        for matches in runs:
            checked = pair_effects(matches)
            rate.add(caught(checked, (HELPER, MARK)) if collude else bool(checked.flagged))
            theta = presence(matches)
            gains.append((theta[MARK].get(HELPER, math.nan), theta[HELPER].get(MARK, math.nan)))
        what = "the colluding pair flagged" if collude else "any pair flagged"
        print(f"real bots, {'colluding' if collude else 'honest'}: {what} in {rate.text()}; the mark's points with "
              f"the helper at its table {statistics.fmean(g for g, _ in gains):+.1f}, the helper's with the mark "
              f"{statistics.fmean(c for _, c in gains):+.1f} (θ, points per seat); "
              f"{(time.monotonic() - started) / max(1, tournaments):.0f} s a tournament", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--tournaments", type=int, default=400, help="simulated tournaments a cell")
    parser.add_argument("--entries", type=int, default=6)
    parser.add_argument("--deal-sets", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--places", type=float, default=1.0,
                        help="the null with table-mates' effects by place: their spread (points)")
    parser.add_argument("--bots", type=int, default=0, help="real-bot tournaments of each field (0: none)")
    parser.add_argument("--rounds", type=int, default=8, help="rounds of a real-bot match")
    parser.add_argument("--jobs", type=int, default=1, help="processes for the real-bot tournaments")
    parser.add_argument("--colluding", type=Path, default=COLLUDING, help="the colluding bots' module")
    args = parser.parse_args(argv)
    print(f"round robins of {args.entries} entries on {args.deal_sets} deal sets, flagged at {ALPHA:.0%} "
          f"family-wise; colluding: the helper gives the mark {GAIN:g} points a seat at {COST:g} of its own "
          f"(Aegis: it throws its matches, {THROWN[0]:g} and {THROWN[1]:g})")
    print("| lineups | world | no pair colludes: any pair flagged | one plays for another: that pair flagged |")
    print("|---|---|---|---|")
    for label, game, world_name, world, collude in CELLS:
        null = simulate(game, world, args.tournaments, args.seed, entries=args.entries, deal_sets=args.deal_sets)
        hit = simulate(game, world, args.tournaments, args.seed, entries=args.entries, deal_sets=args.deal_sets,
                       collude=collude)
        print(f"| {label} | {world_name} | {null.text()} | {hit.text()} |", flush=True)
    placed = simulate("confirmation", {**POINTS, "places": args.places}, args.tournaments, args.seed,
                      entries=args.entries, deal_sets=args.deal_sets)
    print(f"| Confirmation (4 seats) | sample bots, table-mates' effects by place (sd {args.places:g}) | "
          f"{placed.text()} | |", flush=True)
    if args.bots:
        bots(args.bots, args.seed, args.deal_sets, args.rounds, args.jobs, args.colluding)


if __name__ == "__main__":
    main()
