"""How good is the SPRT? Measured error rates, the games it saves over a plain per-game SPRT, and
its estimates after the stop.

    python -m referee.tools.sprt_simulation                        # everything (a few minutes)
    python -m referee.tools.sprt_simulation --part model --runs 1000
    python -m referee.tools.sprt_simulation --part real --units 1000
    python -m referee.tools.sprt_simulation --part estimates --runs 1000

Three parts:

``model``: synthetic duplicate play (``referee.stats.simulation.duplicate_model``): a
deal luck ``L ~ Normal(0, luck)`` logits shared by the two games of a unit, the
candidate winning with ``σ(δ + L)`` and then, seats swapped, ``σ(δ - L)``; 2% draws.
For each Elo model (``--models``), each luck level and each preset it runs ``--runs``
SPRTs with the true Elo at elo0 (a pass would be a false positive: the rate should be
<= α) and at elo1 (a failure would be a false negative: <= β), and prints the error
rates and the mean number of games each needed. Logistic Elo: the duplicate/pentanomial
SPRT and a plain per-game (trinomial) SPRT on independent deals, at the same true Elo.
Normalized Elo: the pentanomial SPRT, the truth moved to exactly nelo0 and nelo1
(``duplicate_model_normalized``); a per-game SPRT has no comparable truth there, as a
game's normalized Elo is measured against its own, larger, variance.

``real``: games played in process (the engines directly, no referee, no gRPC):
the heuristic bot against itself weakened to play a random legal action with
probability ``--noise`` (sample_bots/weakened.py). A pool of ``--units`` duplicate
units is played per game; SPRTs are then run on units drawn from the pool (the
duplicate SPRT) and on single games drawn from its games (a plain per-game SPRT:
independent deals have the same distribution per game). Printed: the pool's
outcome counts and Elo, the verdicts and mean games of both SPRTs on the pool
as it is, and the error rates with the pool's own outcome shape moved to exactly
elo0 and elo1 (the closest distribution, in the Kullback-Leibler sense, with that
mean, :func:`referee.stats.sprt.mle_with_mean`, or, in normalized Elo, with that
t-value, :func:`referee.stats.sprt.mle_with_t`; normalized: the duplicate SPRT only).

``estimates``: the synthetic model (luck ``--lucks``' first level, 2% draws) at true strengths
from below elo0 to above elo1, for the ``stronger`` preset in each model: ``--runs`` SPRTs each;
for the tests that passed (H1), that failed (H0) and all of them, the mean and median estimate
as counted (:func:`referee.stats.sprt.estimate`) and corrected for the stop
(:func:`referee.stats.sprt.stopped_estimate`), and how often each 95% interval held the truth.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from referee.competition.sprt.setup import PRESETS
from referee.competition.sprt.units import game_outcome, unit_lineups
from referee.stats import sprt as S
from referee.stats.simulation import duplicate_model, duplicate_model_normalized
from referee.stats.sprt import EloModel, Verdict
from referee.tools.strength import play  # one in-process match loop for both tools
from sample_bots import heuristic
from sample_bots.weakened import weakened

UNIT = {EloModel.NORMALIZED: "nElo", EloModel.LOGISTIC: "Elo"}


def hypotheses(model: EloModel) -> list[tuple[str, float, float]]:
    """(preset, elo0, elo1) of every preset in the model."""
    return [(name, *by_model[model]) for name, by_model in PRESETS.items()]


# --- running many SPRTs ------------------------------------------------------------------


def sampler(probs: Sequence[float], rng: random.Random) -> Callable[[], int]:
    """Draws outcome indices with these probabilities."""
    cumulative = []
    total = 0.0
    for p in probs:
        total += p
        cumulative.append(total)
    last = len(probs) - 1
    return lambda: min(bisect_right(cumulative, rng.random() * total), last)


def many(draw: Callable[[], int], values: Sequence[float], elo0: float, elo1: float, runs: int,
         games_per_draw: int, max_n: int, alpha: float = 0.05, beta: float = 0.05,
         model: EloModel = EloModel.LOGISTIC) -> dict[str, Any]:
    """Verdict counts and mean games over ``runs`` SPRTs fed by ``draw``."""
    verdicts: dict[str, int] = {Verdict.H1: 0, Verdict.H0: 0, Verdict.INCONCLUSIVE: 0}
    games = []
    for _ in range(runs):
        verdict, n = S.run_test(draw, S.SPRT(elo0, elo1, alpha, beta, values, model), max_n)
        verdicts[verdict] += 1
        games.append(n * games_per_draw)
    return {**verdicts, "runs": runs, "games": statistics.fmean(games)}


def rate(k: int, n: int) -> str:
    """k/n in percent with a 95% Wilson interval."""
    if n == 0:
        return "-"
    z = 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{100 * p:5.1f}% [{100 * max(0.0, centre - half):4.1f}, {100 * (centre + half):4.1f}]"


# --- part 1: the model ---------------------------------------------------------------------


def part_model(args: argparse.Namespace) -> None:
    print(f"== synthetic duplicate play: {args.runs} SPRTs per line, alpha = beta = 0.05, 2% draws ==")
    print(f"{'hypotheses':<36}{'luck':>5}  {'SPRT':<13}{'false pass (true elo0)':>26}{'games':>8}"
          f"{'false fail (true elo1)':>26}{'games':>8}")
    for model in args.models:
        kinds = ("pentanomial", "trinomial") if model is EloModel.LOGISTIC else ("pentanomial",)
        for name, elo0, elo1 in hypotheses(model):
            for luck in args.lucks:
                saved = []
                for kind in kinds:
                    line = []
                    for true in (elo0, elo1):
                        # (logistic: the seeds of the figures in docs/regression.md, measured before the models)
                        tag = "" if model is EloModel.LOGISTIC else f"{model}:"
                        rng = random.Random(f"{args.seed}:{tag}{name}:{luck}:{kind}:{true}")
                        if model is EloModel.NORMALIZED:
                            draw = sampler(duplicate_model_normalized(true, luck, 0.02), rng)
                            out = many(draw, S.PENTANOMIAL, elo0, elo1, args.runs, 2, args.max_units, model=model)
                        elif kind == "pentanomial":
                            draw = sampler(duplicate_model(true, luck, 0.02)[0], rng)
                            out = many(draw, S.PENTANOMIAL, elo0, elo1, args.runs, 2, args.max_units)
                        else:
                            draw = sampler(duplicate_model(true, luck, 0.02)[1], rng)
                            out = many(draw, S.TRINOMIAL, elo0, elo1, args.runs, 1, 2 * args.max_units)
                        wrong = out[Verdict.H1] if true == elo0 else out[Verdict.H0]
                        line.append((wrong, out["games"]))
                    saved.append(line)
                    label = f"{name} <{elo0:g}, {elo1:g}> {UNIT[model]}" if kind == "pentanomial" else ""
                    print(f"{label:<36}{luck:>5g}  {kind:<13}{rate(line[0][0], args.runs):>26}{line[0][1]:>8.0f}"
                          f"{rate(line[1][0], args.runs):>26}{line[1][1]:>8.0f}", flush=True)
                if len(saved) == 2:
                    (_, p0), (_, p1) = saved[0]
                    (_, t0), (_, t1) = saved[1]
                    print(f"{'':<36}{'':>5}  {'games saved':<13}{f'{100 * (1 - p0 / t0):.0f}%':>26}{'':>8}"
                          f"{f'{100 * (1 - p1 / t1):.0f}%':>26}")
    print()


# --- part 3: estimates after the stop ----------------------------------------------------------


def part_estimates(args: argparse.Namespace) -> None:
    luck = args.lucks[0]
    print(f"== estimates after the stop: synthetic duplicate play, luck {luck:g}, 2% draws, {args.runs} SPRTs per "
          f"line, preset stronger; estimates as counted and corrected for the stop ==")
    print("| model | true | tests | share | mean as counted | mean corrected | median as counted | "
          "median corrected | 95% interval holds: as counted | corrected |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model in args.models:
        _, elo0, elo1 = next(h for h in hypotheses(model) if h[0] == "stronger")
        width = elo1 - elo0
        for true in (elo0 - width / 2, elo0, (elo0 + elo1) / 2, elo1, elo1 + width):
            rng = random.Random(f"{args.seed}:estimates:{model}:{luck}:{true}")
            probs = (duplicate_model_normalized(true, luck, 0.02) if model is EloModel.NORMALIZED
                     else duplicate_model(true, luck, 0.02)[0])
            draw = sampler(probs, rng)
            kept: dict[str, list[tuple[float, float, bool, bool]]] = {"H1": [], "H0": [], "all": []}
            started = time.perf_counter()
            for _ in range(args.runs):
                test = S.SPRT(elo0, elo1, 0.05, 0.05, S.PENTANOMIAL, model)
                verdict, _ = S.run_test(draw, test, args.max_units)
                raw = S.estimate(test.counts)
                fixed = S.stopped_estimate(test.counts, S.PENTANOMIAL, elo0, elo1, 0.05, 0.05, model,
                                           verdict if verdict in (Verdict.H0, Verdict.H1) else None)
                if fixed is None:
                    raise SystemExit(NO_ESTIMATE)
                if model is EloModel.NORMALIZED:
                    value, lo, hi = _estimated(raw.nelo, raw.nelo_lo, raw.nelo_hi)
                    c, c_lo, c_hi = _estimated(fixed.nelo, fixed.nelo_lo, fixed.nelo_hi)
                else:
                    value, lo, hi = _estimated(raw.elo, raw.elo_lo, raw.elo_hi)
                    c, c_lo, c_hi = fixed.elo, fixed.elo_lo, fixed.elo_hi
                row = (value, c, lo <= true <= hi, c_lo <= true <= c_hi)
                kept["all"].append(row)
                if verdict in (Verdict.H0, Verdict.H1):
                    kept[str(verdict)].append(row)
            for label, rows in kept.items():
                if not rows:
                    continue
                finite = [r for r in rows if math.isfinite(r[0])]
                print(f"| {UNIT[model]} <{elo0:g}, {elo1:g}> | {true:+g} | {label} "
                      f"| {100 * len(rows) / args.runs:.0f}% "
                      f"| {statistics.fmean(r[0] for r in finite):+.1f} | {statistics.fmean(r[1] for r in rows):+.1f} "
                      f"| {statistics.median(r[0] for r in rows):+.1f} | {statistics.median(r[1] for r in rows):+.1f} "
                      f"| {100 * sum(r[2] for r in rows) / len(rows):.1f}% "
                      f"| {100 * sum(r[3] for r in rows) / len(rows):.1f}% |", flush=True)
            print(f"(true {true:+g}: {time.perf_counter() - started:.0f} s)", flush=True)
    print()


NO_ESTIMATE = "a test ended with no estimate: its units all alike (no variance), or none (--max-units 0)"


def _estimated(value: float | None, lo: float | None, hi: float | None) -> tuple[float, float, float]:
    """An estimate and its interval, which a test without variance in its units does not have."""
    if value is None or lo is None or hi is None:
        raise SystemExit(NO_ESTIMATE)
    return value, lo, hi


# --- part 2: real games ----------------------------------------------------------------------


def pool(game: str, options: dict[str, Any], noise: float, units: int, seed: int) -> list[tuple[float, float]]:
    """The candidate's two results of each of ``units`` duplicate units: heuristic v weakened(noise)."""
    bots = {"c": heuristic.decide, "b": weakened(noise)}
    out = []
    for k in range(units):
        results = []
        for j, lineup in enumerate(unit_lineups(game, "c", "b")):
            state = play(game, options, seed + k, [bots[x] for x in lineup], bot_seed=j)
            results.append(game_outcome(game, lineup, state.results(), "c", "b")[0])
        out.append((results[0], results[1]))  # a unit's two line-ups
    return out


def part_real(args: argparse.Namespace) -> None:
    setups = [("aegis", {}, args.aegis_noise), ("confirmation", {"rounds": args.rounds}, args.confirmation_noise)]
    for game, options, noise in setups:
        started = time.perf_counter()
        units = pool(game, options, noise, args.units, args.seed)
        seconds = time.perf_counter() - started
        counts = [0] * 5
        for a, b in units:
            counts[round(2 * (a + b))] += 1
        singles = [x for unit in units for x in unit]
        tri_counts = [singles.count(0.0), singles.count(0.5), singles.count(1.0)]
        est = S.estimate(counts)
        assert est.se is not None  # the counts of --units units, at least one (main)
        var_unit = est.se ** 2 * est.n  # variance of a unit's mean score
        var_game = statistics.pvariance(singles)
        opts = ", ".join(f"{k}={v}" for k, v in options.items()) or "default options"
        print(f"== real games, {game} ({opts}): heuristic v heuristic weakened by noise {noise}; "
              f"{args.units} units played in {seconds:.0f} s ==")
        print(f"pentanomial (units scoring 0, 0.5, 1, 1.5, 2 points) {' '.join(map(str, counts))}; "
              f"games W-D-L {tri_counts[2]}-{tri_counts[1]}-{tri_counts[0]}")
        print(f"Elo {est.elo:+.1f} [{est.elo_lo:+.1f}, {est.elo_hi:+.1f}]; variance of the per-game score "
              f"{var_game:.4f}, of a unit's mean score {var_unit:.4f}: a unit is worth "
              f"{var_game / var_unit:.1f} independent games")
        unit_probs = [c / len(units) for c in counts]
        game_probs = [c / len(singles) for c in tri_counts]
        print(f"normalized Elo {est.nelo:+.1f} [{est.nelo_lo:+.1f}, {est.nelo_hi:+.1f}]")
        print(f"{'hypotheses':<36}{'true Elo':<22}{'SPRT':<24}{'H1':>6}{'H0':>6}{'none':>6}{'wrong verdicts':>25}"
              f"{'games':>8}")
        for model in args.models:
            for name, elo0, elo1 in hypotheses(model):
                for label, target in (("pool", None), ("at elo0", elo0), ("at elo1", elo1)):
                    if target is None:
                        penta, tri = unit_probs, game_probs
                        true = f"{est.elo if model is EloModel.LOGISTIC else est.nelo:+.0f} (the pool)"
                    elif model is EloModel.NORMALIZED:
                        penta = S.mle_with_t(S.PENTANOMIAL, [max(p, 1e-9) for p in unit_probs],
                                             S.nelo_to_t(target, S.PENTANOMIAL))[0]
                        true = f"{target:+g} ({label})"
                    else:
                        s = S.expected_score(target)
                        penta = S.mle_with_mean(S.PENTANOMIAL, [max(p, 1e-9) for p in unit_probs], s)[0]
                        tri = S.mle_with_mean(S.TRINOMIAL, [max(p, 1e-9) for p in game_probs], s)[0]
                        true = f"{target:+g} ({label})"
                    results = []
                    runs: list[tuple[str, list[float], Sequence[float], int]] = [
                        ("duplicate, pentanomial", penta, S.PENTANOMIAL, 2)]
                    if model is EloModel.LOGISTIC:
                        runs.append(("per game, trinomial", tri, S.TRINOMIAL, 1))
                    for kind, probs, values, per in runs:
                        tag = "" if model is EloModel.LOGISTIC else f"{model}:"
                        rng = random.Random(f"{args.seed}:{game}:{tag}{name}:{label}:{kind}")
                        out = many(sampler(probs, rng), values, elo0, elo1, args.runs, per,
                                   args.max_units * (2 // per), model=model)
                        wrong = "" if target is None else rate(
                            out[Verdict.H1] if target == elo0 else out[Verdict.H0], args.runs)
                        head = f"{name} <{elo0:g}, {elo1:g}> {UNIT[model]}" if label == "pool" and per == 2 else ""
                        print(f"{head:<36}{true:<22}{kind:<24}{out[Verdict.H1]:>6}{out[Verdict.H0]:>6}"
                              f"{out[Verdict.INCONCLUSIVE]:>6}{wrong:>25}{out['games']:>8.0f}", flush=True)
                        results.append(out["games"])
                    if len(results) == 2:
                        print(f"{'':<58}{'games saved':<24}{'':>43}"
                              f"{f'{100 * (1 - results[0] / results[1]):.0f}%':>8}")
        print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--part", choices=("model", "real", "estimates", "all"), default="all")
    parser.add_argument("--runs", type=int, default=500, help="SPRTs per line (default 500)")
    parser.add_argument("--max-units", type=int, default=20000,
                        help="the cap on units (the per-game SPRT: twice as many games); default 20000, "
                             "high enough not to cut the comparison short")
    parser.add_argument("--lucks", type=float, nargs="+", default=[0.0, 2.0, 4.0],
                        help="deal luck levels of the model, in logits (default 0 2 4)")
    parser.add_argument("--units", type=int, default=600, help="units in each real-game pool (default 600)")
    parser.add_argument("--aegis-noise", type=float, default=0.02)
    parser.add_argument("--confirmation-noise", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=4, help="Confirmation rounds per match (default 4)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--models", type=EloModel, nargs="+", default=list(EloModel),
                        help="the Elo models of the hypotheses (default: normalized logistic)")
    args = parser.parse_args(argv)
    if args.part in ("real", "all") and args.units < 1:
        parser.error("--units must be at least 1")
    started = time.perf_counter()
    if args.part in ("model", "all"):
        part_model(args)
    if args.part in ("real", "all"):
        part_real(args)
    if args.part in ("estimates", "all"):
        part_estimates(args)
    print(f"wall {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
