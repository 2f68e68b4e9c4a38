"""How strong is a bot? Duplicate matches in process, no referee, no gRPC.

    python -m referee.tools.strength --game confirmation --games 200 --seed 1
    python -m referee.tools.strength --game confirmation --games 50 --variants     # every option combination
    python -m referee.tools.strength --game aegis --games 200 --seed 1
    python -m referee.tools.strength --bot search --against heuristic --rollouts 100 --lineups 2v2 --jobs 2

The engine is played directly; each seat's policy is called as a bot would
be, ``decide(observation, legal_names, view)`` with a :class:`referee.bot.GameView`
built in process. By default the heuristic bot (``sample_bots.heuristic``)
plays the random bot (``sample_bots.random``); ``--bot`` and ``--against``
take any module with a ``decide`` function.

Duplicate deals remove most of the luck of the cards:

* Confirmation, 2 v 2: per deal set (one seed = ``--rounds`` deals), the bot
  sits at seats 0 and 2 against the other at 1 and 3, then the same deals are
  played again with the seats swapped. The figure per deal set is the bot's
  mean points per round minus the other's; the table gives its mean and a
  95% interval (mean ± 1.96 standard errors over the deal sets).
* Confirmation, 1 v 3: the bot at each seat in turn (four plays of the same
  deals) against three of the other.
* Aegis: each seed is a match played twice, the bot at seat 0 then seat 1
  (same draw, same deals in order while the roles alternate alike). The match
  win rate has a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
import math
import multiprocessing
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bot import GameView
from referee.games import GAMES, play_out
from referee.games.aegis.match import AegisMatch
from referee.games.base import GameState
from referee.games.confirmation.rules import Confirmation
from referee.play.wire import options_text

Policy = Callable[[dict[str, Any], list[str], GameView], "str | int"]

VARIANTS = [dict(zip(("trump", "double", "blind", "pairs"), combo))
            for combo in itertools.product(("dealer-card", "random-suit"), (False, True), (False, True),
                                           (False, True))]


def _load_module(module: str) -> Any:
    if module.endswith(".py"):  # a bot's own file, wherever it is
        spec = importlib.util.spec_from_file_location(Path(module).stem, module)
        if spec is None or spec.loader is None or not Path(module).is_file():
            raise SystemExit(f"error: no bot file {module}")
        bot = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bot)
        return bot
    if "." not in module and importlib.util.find_spec(f"sample_bots.{module}") is not None:
        module = f"sample_bots.{module}"
    return importlib.import_module(module)


def load_policy(module: str, think_ms: float | None = None, rollouts: int | None = None) -> Policy:
    """``decide`` of a module: a file ending in ``.py`` is loaded from that path; a bare name
    is looked up in ``sample_bots`` first (``heuristic`` means ``sample_bots.heuristic``), then as
    a module of its own.

    A searching bot's module (one with ``Settings`` and ``policy``, as
    ``sample_bots.search``) plays with ``think_ms`` and ``rollouts`` when
    either is given (``think_ms=None``: the module's default)."""
    bot = _load_module(module)
    if hasattr(bot, "Settings") and (think_ms is not None or rollouts is not None):
        settings = bot.Settings(rollouts=rollouts) if think_ms is None else bot.Settings(think_ms, rollouts)
        searching: Policy = bot.policy(settings)
        return searching
    decide: Policy = bot.decide
    return decide


@dataclass
class Timing:
    """Decision times of one policy (seconds)."""

    times: list[float] = field(default_factory=list)

    def summary(self) -> str:
        if not self.times:
            return "no decisions"
        ordered = sorted(self.times)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (f"{len(ordered)} decisions: mean {statistics.fmean(ordered) * 1e3:.3f} ms, "
                f"p99 {p99 * 1e3:.3f} ms, max {ordered[-1] * 1e3:.3f} ms")


def play(game: str, options: dict[str, Any], seed: int, seats: Sequence[Policy], bot_seed: int = 0,
         timings: Sequence[Timing | None] | None = None) -> GameState:
    """Play one match in process; returns the finished engine state."""
    spec = GAMES[game]
    state = spec.new(options, seed=seed)
    text = options_text(state.options)
    views = [GameView(f"{game}-{seed}", game, text, s, [f"seat{s}" for s in range(len(seats))], 0, 0,
                      rng=random.Random(f"{bot_seed}:{seed}:{s}")) for s in range(len(seats))]

    def choose(state: GameState, seat: int) -> int:
        legal = state.legal_actions(seat)
        names = [state.action_name(a) for a in legal]
        view = views[seat]
        view.legal_codes = legal
        clock = time.perf_counter()
        choice = seats[seat](state.observation(seat), names, view)
        timing = timings[seat] if timings else None
        if timing is not None:
            timing.times.append(time.perf_counter() - clock)
        if isinstance(choice, int) and not isinstance(choice, bool):
            return legal[choice]
        return legal[names.index(str(choice))]  # a name not in the list (a bool too) is a bug: let it raise

    play_out(state, choose)
    return state


# --- in parallel (--jobs) ---------------------------------------------------------

def pool_map(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int = 1) -> list[Any]:
    """``[fn(x) for x in items]``, over ``jobs`` forked processes (``--jobs``) when more than 1 (the order kept)."""
    if jobs <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with multiprocessing.get_context("fork").Pool(min(jobs, len(items))) as pool:
        return pool.map(fn, items, chunksize=1)


# --- statistics -----------------------------------------------------------------


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """(mean, half-width of the 95% interval) over independent values."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, float("nan")
    return m, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def wilson(wins: float, n: int) -> tuple[float, float]:
    """95% Wilson interval of a proportion."""
    if n == 0:
        return float("nan"), float("nan")
    z = 1.96
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


# --- Confirmation ---------------------------------------------------------------


@dataclass
class ConfirmationFigures:
    """Per deal set: the bot's and the other's mean points per round."""

    bot: list[float] = field(default_factory=list)
    other: list[float] = field(default_factory=list)

    def add(self, bot: float, other: float) -> None:
        self.bot.append(bot)
        self.other.append(other)

    def diffs(self) -> list[float]:
        return [b - o for b, o in zip(self.bot, self.other)]


def confirmation_deal_set(bot: Policy, other: Policy, options: dict[str, Any], seed: int, lineup: str,
                          timing: Timing | None = None) -> tuple[float, float]:
    """(bot, other) mean points per seat-round over the plays of one deal set.

    ``lineup`` "2v2": BOBO then OBOB; "1v3": the bot at each seat in turn."""
    if lineup == "2v2":
        patterns: list[tuple[bool, ...]] = [(True, False, True, False), (False, True, False, True)]
    else:
        patterns = [tuple(s == k for s in range(4)) for k in range(4)]
    bot_points: list[float] = []
    other_points: list[float] = []
    for n, pattern in enumerate(patterns):
        seats = [bot if b else other for b in pattern]
        timings = [timing if b else None for b in pattern]
        state = play("confirmation", options, seed, seats, bot_seed=n, timings=timings)
        assert isinstance(state, Confirmation)  # the game played
        rounds = state.rounds
        for s, is_bot in enumerate(pattern):
            (bot_points if is_bot else other_points).append(state.totals[s] / rounds)
    return statistics.fmean(bot_points), statistics.fmean(other_points)


def measure_confirmation(bot: Policy, other: Policy, options: dict[str, Any], games: int, seed: int,
                         lineup: str, timing: Timing | None = None, jobs: int = 1) -> ConfirmationFigures:
    figures = ConfirmationFigures()
    items = [(bot, other, options, seed + i, lineup) for i in range(games)]
    for pair, times in pool_map(_confirmation_job, items, jobs):
        figures.add(*pair)
        if timing is not None:
            timing.times += times
    return figures


def _confirmation_job(item: tuple[Policy, Policy, dict[str, Any], int, str]) -> tuple[tuple[float, float], list[float]]:
    bot, other, options, seed, lineup = item
    timing = Timing()
    return confirmation_deal_set(bot, other, options, seed, lineup, timing), timing.times


def confirmation_row(label: str, figures: ConfirmationFigures) -> str:
    diff, half = mean_interval(figures.diffs())
    return (f"{label:<44}{len(figures.bot):>6}{statistics.fmean(figures.bot):>9.2f}"
            f"{statistics.fmean(figures.other):>9.2f}{diff:>9.2f}  [{diff - half:6.2f}, {diff + half:6.2f}]")


CONFIRMATION_HEADER = (f"{'Confirmation (points per round)':<44}{'sets':>6}{'bot':>9}{'other':>9}"
                       f"{'diff':>9}  95% interval")


def describe(options: dict[str, Any]) -> str:
    flags = [k for k in ("double", "blind", "pairs") if options.get(k)]
    trump = "random-suit" if options.get("trump") == "random-suit" else "dealer-card"
    return ",".join([trump, *flags])


def run_confirmation(args: argparse.Namespace, bot: Policy, other: Policy, timing: Timing) -> None:
    base = {"rounds": args.rounds, **args.options}
    print(CONFIRMATION_HEADER)
    for lineup in args.lineups.split(","):
        figures = measure_confirmation(bot, other, base, args.games, args.seed, lineup, timing, args.jobs)
        print(confirmation_row(f"{lineup} {describe(base)}", figures))
    if args.variants:
        combined = ConfirmationFigures()
        for variant in VARIANTS:
            options = {**base, **variant}
            figures = measure_confirmation(bot, other, options, args.variant_games, args.seed, "2v2", timing,
                                           args.jobs)
            print(confirmation_row(f"2v2 {describe(options)}", figures))
            combined.bot += figures.bot
            combined.other += figures.other
        print(confirmation_row("2v2 all 16 variants combined", combined))


# --- Aegis ----------------------------------------------------------------------


@dataclass
class AegisFigures:
    wins: float = 0.0
    matches: int = 0
    games: int = 0
    point_diffs: list[float] = field(default_factory=list)


def measure_aegis(bot: Policy, other: Policy, options: dict[str, Any], games: int, seed: int,
                  timing: Timing | None = None, jobs: int = 1) -> AegisFigures:
    """Each seed a match played twice, the bot at seat 0 and then at seat 1."""
    figures = AegisFigures()
    items = [(bot, other, options, seed + i) for i in range(games)]
    for matches, times in pool_map(_aegis_job, items, jobs):
        for won, num_games, diff in matches:
            figures.matches += 1
            figures.games += num_games
            figures.wins += won
            figures.point_diffs.append(diff)
        if timing is not None:
            timing.times += times
    return figures


def _aegis_job(item: tuple[Policy, Policy, dict[str, Any], int]) -> tuple[list[tuple[bool, int, int]], list[float]]:
    """One seed's match pair: (bot won, games, bot's points minus the other's) per match, and the bot's times."""
    bot, other, options, seed = item
    timing = Timing()
    matches = []
    for bot_seat in (0, 1):
        seats = [bot, other] if bot_seat == 0 else [other, bot]
        timings = [timing, None] if bot_seat == 0 else [None, timing]
        state = play("aegis", options, seed, seats, bot_seed=bot_seat, timings=timings)
        assert isinstance(state, AegisMatch)  # the game played
        matches.append((state.winner == bot_seat, len(state.games),
                        state.totals[bot_seat] - state.totals[1 - bot_seat]))
    return matches, timing.times


def run_aegis(args: argparse.Namespace, bot: Policy, other: Policy, timing: Timing) -> None:
    figures = measure_aegis(bot, other, args.options, args.games, args.seed, timing, args.jobs)
    rate = figures.wins / figures.matches
    lo, hi = wilson(figures.wins, figures.matches)
    diff, half = mean_interval(figures.point_diffs)
    print(f"{'Aegis':<12}{'matches':>8}{'games':>7}{'win rate':>10}  95% interval    points diff/match")
    print(f"{'bot v other':<12}{figures.matches:>8}{figures.games:>7}{rate:>10.3f}  [{lo:.3f}, {hi:.3f}]"
          f"   {diff:+.2f} ± {half:.2f}")


# --- command line -----------------------------------------------------------------


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        out[key] = value
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--game", choices=("confirmation", "aegis", "all"), default="all")
    parser.add_argument("--games", type=int, default=100, help="deal sets (Confirmation) / match pairs (Aegis)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first deal set")
    parser.add_argument("--rounds", type=int, default=4, help="Confirmation rounds per deal set (default 4)")
    parser.add_argument("--variants", action="store_true", help="also every Confirmation option combination")
    parser.add_argument("--variant-games", type=int, default=25, help="deal sets per variant (default 25)")
    parser.add_argument("--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
                        help="a rule option for every match (repeatable)")
    parser.add_argument("--bot", default="heuristic", help="module of the measured bot (default heuristic)")
    parser.add_argument("--against", default="random", help="module of the opponent (default random)")
    parser.add_argument("--lineups", default="2v2,1v3", help="Confirmation line-ups to play (default 2v2,1v3)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1: in this process)")
    parser.add_argument("--rollouts", type=int, default=None,
                        help="fixed budget of a searching bot (sample_bots.search): samples per decision")
    parser.add_argument("--think-ms", type=float, default=None,
                        help="time budget of a searching bot per decision, in ms")
    args = parser.parse_args(argv)
    args.options = parse_options(args.options)
    bot, other = (load_policy(name, args.think_ms, args.rollouts) for name in (args.bot, args.against))
    timing = Timing()
    started = time.perf_counter()
    print(f"{args.bot} v {args.against}, seed {args.seed}")
    if args.game in ("confirmation", "all"):
        run_confirmation(args, bot, other, timing)
    if args.game in ("aegis", "all"):
        if args.game == "all":
            print()
        aegis_options = {k: v for k, v in args.options.items() if k in GAMES["aegis"].options}
        run_aegis(argparse.Namespace(**{**vars(args), "options": aegis_options}), bot, other, timing)
    print(f"\n{args.bot} decision time: {timing.summary()}; wall {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
