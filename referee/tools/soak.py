"""Soak test: every sample bot plays every variant, hundreds of games, through
the real referee, and every fault is counted. Exit 0 only when there is none.

    python -m referee.tools.soak                                        # random, heuristic, search; 200 games each
    python -m referee.tools.soak --bots random,heuristic --games 200 --json soak.json
    python -m referee.tools.soak --bots search --games 2 --variants confirmation/dealer-card,aegis/table
    python -m referee.tools.soak --bots search --fill heuristic --search-think-ms 5   # search in one seat of each match
    python -m referee.tools.soak --bots node --variants aegis           # needs `npm ci` in sample_bots/node
    python -m referee.tools.soak --bots evil --bot-command "evil=python tests/bots/proto_bot.py --mode illegal"
    python -m referee.tools.soak --list                                 # the variant names

Variants: Confirmation's 16 option combinations (trump ``dealer-card`` or
``random-suit``, with or without ``double``, ``blind`` and ``pairs``; 8
rounds), named like ``confirmation/random-suit+double+pairs``, and Aegis's two
(``aegis/table``, ``aegis/4plus``). ``--variants`` takes a comma-separated
list of game names, variant names or shell patterns (``'confirmation/*pairs'``).

How a run is played: for each bot and variant, N matches in which every
seat is that bot (self-play) or, with ``--fill OTHER``, one seat is the bot
(seat k of match k, in turn) and the others are OTHER (for a bot too slow to
fill every seat of hundreds of matches: search), on the default clock (``referee.runner.Clock()``:
1000 ms per decision, 10 s bank), played exactly as ``referee tournament``
plays them: a :class:`TournamentConfig` built here, ``play_schedule`` (the
in-process referee server, the :class:`Launcher` starting the bot as a real
process that talks gRPC, ``concurrency`` matches at a time) and a
:class:`Store`. ``make_schedule`` needs two bots, so the schedule is built
here from its own types: deal set k is one ``Seating`` whose line-up names
the bot in every seat (or in one). The bot is one process that plays all its
seats (the launcher gives it capacity seats x concurrency), as one bot that
fills several seats of a tournament does.

Counted per bot and variant, over the tested bot's seats only: matches,
decisions (its actions in the records), faults by kind as the runner records them (``timeout``,
``illegal``, ``malformed``, ``wrong_id``, ``disconnect``, ``no_session``, ``error``),
with the first fault details, and the decision times as the referee's clock
saw them (request sent to answer received; the record's ``meta``): the
slowest, the mean, and how many went past the decision time into the bank.
A match the launcher skipped
(its bot died too often) counts as missing, and fails the check too. The
table's ``s/game`` is the mean length of a match (from the store; with
``--concurrency`` K, K matches run at once); ``wall s`` is the time spent
on the variant, bot start included, summed over the runs on its store.

Resumable: results go to ``OUT/BOT/GAME/VARIANT/results.sqlite`` (``--out``,
default a new temporary directory); the same command with the same
``--out`` plays only what is missing (a larger ``--games`` adds matches, a
smaller one counts the first N). A changed bot command or seed is refused.

Exit codes: 0 no fault and no missing match, 1 otherwise, 2 bad usage,
130 interrupted (what finished is saved).
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import itertools
import json
import shlex
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from tabulate import tabulate

from referee import games
from referee.competition.run import claim_store, play_schedule
from referee.model import BOT_NAME, BotSpec, Schedule, Seating, TournamentConfig, deal_seed
from referee.results.store import MetaKey, Store, StoreError
from referee.runner import Clock, FaultKind

#: the checkout the tool runs from: the bots' working directory (their commands name its files)
ROOT = Path(__file__).resolve().parents[2]

BOTS = {
    "random": "python -m sample_bots.random",
    "heuristic": "python -m sample_bots.heuristic",
    "search": "python -m sample_bots.search",
    "node": "node sample_bots/node/bot.js --quiet",
}
DEFAULT_BOTS = ("random", "heuristic", "search")
NODE_MODULES = ROOT / "sample_bots" / "node" / "node_modules" / "@grpc" / "grpc-js"
FAULT_EXAMPLES = 5  # fault details kept per bot and variant


@dataclass(frozen=True)
class Variant:
    game: str
    options: dict[str, Any]

    @property
    def name(self) -> str:
        if self.game == "aegis":
            return f"aegis/{self.options['promise']}"
        flags = [k for k in ("double", "blind", "pairs") if self.options[k]]
        return "confirmation/" + "+".join([self.options["trump"], *flags])


VARIANTS = [Variant("confirmation", {"trump": trump, "double": double, "blind": blind, "pairs": pairs})
            for trump, double, blind, pairs in itertools.product(("dealer-card", "random-suit"), (False, True),
                                                                 (False, True), (False, True))]
VARIANTS += [Variant("aegis", {"promise": promise}) for promise in ("table", "4plus")]


class Usage(Exception):
    """Bad arguments: exit 2."""


def select_variants(patterns: str | None) -> list[Variant]:
    if not patterns:
        return list(VARIANTS)
    chosen = []
    for pattern in (p.strip() for p in patterns.split(",") if p.strip()):
        matched = [v for v in VARIANTS if pattern == v.game or fnmatch.fnmatchcase(v.name, pattern)]
        if not matched:
            raise Usage(f"--variants: {pattern!r} names no variant (see --list)")
        chosen += [v for v in matched if v not in chosen]
    return [v for v in VARIANTS if v in chosen]  # in the table's order


def bot_commands(names: str, extra: Sequence[str], think_ms: float | None) -> dict[str, list[str]]:
    """{bot: command}, from the built-in commands and ``--bot-command NAME=CMD``."""
    commands = {name: shlex.split(command) for name, command in BOTS.items()}
    for item in extra:
        name, sep, command = item.partition("=")
        if not sep or not BOT_NAME.match(name) or not command.strip():
            raise Usage(f"--bot-command: expected NAME=COMMAND, got {item!r}")
        commands[name] = shlex.split(command)
    if think_ms is not None:
        commands["search"] = [*commands["search"], "--think-ms", f"{think_ms:g}"]
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    if not chosen:
        raise Usage("--bots: no bot named")
    for name in chosen:
        if name not in commands:
            raise Usage(f"--bots: unknown bot {name!r} (known: {', '.join(commands)}; add one with --bot-command)")
    if "node" in chosen and commands["node"][0] == "node" and not NODE_MODULES.is_dir():
        raise Usage("--bots node: run `npm ci` in sample_bots/node first")
    return {name: commands[name] for name in dict.fromkeys(chosen)}


# --- one bot, one variant ----------------------------------------------------


def soak_config(bot: str, command: list[str], variant: Variant, games_n: int, seed: int, concurrency: int,
                out: Path, fill: tuple[str, list[str]] | None = None) -> TournamentConfig:
    options = games.GAMES[variant.game].check_options(variant.options)
    specs = [BotSpec(bot, tuple(command), cwd=str(ROOT))]
    if fill is not None:
        specs.append(BotSpec(fill[0], tuple(fill[1]), cwd=str(ROOT)))
    where = bot if fill is None else f"{bot}-with-{fill[0]}"
    return TournamentConfig(variant.game, options, tuple(specs), games_n, seed, Clock(), concurrency,
                            out / where / variant.name)


def soak_schedule(config: TournamentConfig) -> Schedule:
    """Deal set k, one match: every seat the tested bot or, with a fill bot, seat k mod n only."""
    bot = config.bots[0].name
    seats = games.GAMES[config.game].num_seats
    if len(config.bots) == 1:
        lineup = (bot,) * seats
        seatings = tuple(Seating(k, deal_seed(config.seed, k), lineup) for k in range(config.deal_sets))
        return Schedule(seatings, (lineup,), f"self-play: {bot} in every seat")
    fill = config.bots[1].name
    lineups = tuple(tuple(bot if s == k else fill for s in range(seats)) for k in range(seats))
    seatings = tuple(Seating(k, deal_seed(config.seed, k), lineups[k % seats]) for k in range(config.deal_sets))
    return Schedule(seatings, lineups, f"{bot} in one seat (in turn), {fill} in the others")


def open_soak_store(config: TournamentConfig) -> Store:
    """The variant's store; what binds it is all but the number of matches, so a
    later run with more (or fewer) matches resumes it."""
    fingerprint = json.dumps({"soak": 1, "game": config.game, "options": config.options,
                              "bots": [[b.name, list(b.command)] for b in config.bots], "seed": config.seed,
                              "clock": [config.clock.decision_s, config.clock.bank_s]}, sort_keys=True)
    return claim_store(config, fingerprint, config.describe())


def count(config: TournamentConfig, schedule: Schedule, store: Store) -> dict[str, Any]:
    """The figures of the schedule's matches that are in the store."""
    bot = config.bots[0].name
    wanted = {s.key for s in schedule.seatings}
    faults = dict.fromkeys(FaultKind, 0)
    examples: list[str] = []
    kinds_seen: set[str] = set()
    played = decisions = timed = over = 0
    slowest = spent = seconds = 0.0
    for row in store.matches():
        if row.key not in wanted:
            continue
        mine = {seat for seat, name in enumerate(row.lineup) if name == bot}
        played += 1
        seconds += row.seconds
        record = store.record(row.key)
        assert record is not None  # the key of a stored match
        meta = record.get("meta", {})
        decisions += sum(1 for seat, _ in record["actions"] if seat in mine)
        for seat in mine:
            for kind in FaultKind:
                faults[kind] += row.faults[seat].get(kind, 0)
            if seat < len(meta.get("decision_times", [])):
                t = meta["decision_times"][seat]
                timed += t["answered"]
                spent += t["total_s"]
                slowest = max(slowest, t["slowest_s"])
                over += t["over_decision_time"]
        for fault in meta.get("faults", []):
            if fault["seat"] not in mine:
                continue
            if len(examples) < FAULT_EXAMPLES or fault["kind"] not in kinds_seen:  # the first of each kind too
                kinds_seen.add(fault["kind"])
                examples.append(f"match {row.key} seat {fault['seat']} decision {fault['decision']}: "
                                f"{fault['kind']}: {fault['detail']}")
    return {
        "games": played, "decisions": decisions, "faults": faults, "fault_examples": examples,
        "timed_decisions": timed, "slowest_ms": round(slowest * 1000, 1) if timed else None,
        "mean_ms": round(spent / timed * 1000, 2) if timed else None, "over_decision_time": over,
        "seconds_per_game": round(seconds / played, 3) if played else None,
        "bot_notes": store.bot_notes(),
    }


def soak_one(bot: str, command: list[str], variant: Variant, games_n: int, args: argparse.Namespace) -> dict[str, Any]:
    config = soak_config(bot, command, variant, games_n, args.seed, args.concurrency, args.out, args.fill_with)
    schedule = soak_schedule(config)
    store = open_soak_store(config)
    try:
        started = time.monotonic()
        try:
            asyncio.run(play_schedule(config, lambda out: schedule, store))
        finally:  # the wall time of every run on this store, interrupted ones included
            wall = float(store.meta(MetaKey.WALL_S) or 0) + time.monotonic() - started
            store.set_meta(MetaKey.WALL_S, str(wall))
        figures = count(config, schedule, store)
    finally:
        store.close()
    return {"bot": bot, "variant": variant.name, "game": variant.game, "options": config.options,
            "command": command, "fill": args.fill, "requested": games_n, **figures, "wall_s": round(wall, 1),
            "output": str(config.output)}


def failed(run: dict[str, Any]) -> bool:
    return run["games"] < run["requested"] or any(run["faults"].values())


# --- output ------------------------------------------------------------------


def table(runs: list[dict[str, Any]]) -> str:
    """One row per bot and variant, and a total row per bot."""
    headers = ["bot", "variant", "games", "decisions", *FaultKind, "slowest ms", "mean ms", "> 1 s",
               "s/game", "wall s"]
    rows = []
    for bot in dict.fromkeys(r["bot"] for r in runs):
        mine = [r for r in runs if r["bot"] == bot]
        rows += [[bot, r["variant"], f"{r['games']}/{r['requested']}", r["decisions"],
                  *(r["faults"][k] for k in FaultKind), r["slowest_ms"], r["mean_ms"], r["over_decision_time"],
                  r["seconds_per_game"], r["wall_s"]] for r in mine]
        if len(mine) > 1:
            rows.append([bot, "(all)", f"{sum(r['games'] for r in mine)}/{sum(r['requested'] for r in mine)}",
                         sum(r["decisions"] for r in mine), *(sum(r["faults"][k] for r in mine) for k in FaultKind),
                         max((r["slowest_ms"] or 0.0) for r in mine), None,
                         sum(r["over_decision_time"] for r in mine), None, round(sum(r["wall_s"] for r in mine), 1)])
    return tabulate(rows, headers, disable_numparse=True)


def progress_line(i: int, total: int, run: dict[str, Any]) -> str:
    faults = sum(run["faults"].values())
    kinds = ", ".join(f"{k} {n}" for k, n in run["faults"].items() if n) or "none"
    return (f"[{i}/{total}] {run['bot']} {run['variant']}: {run['games']}/{run['requested']} games, "
            f"{run['decisions']} decisions, {faults} fault(s) ({kinds}), slowest {run['slowest_ms']} ms, "
            f"{run['wall_s']} s")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="soak.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", default=",".join(DEFAULT_BOTS),
                   help=f"comma-separated bots (default {','.join(DEFAULT_BOTS)}; known: {', '.join(BOTS)})")
    p.add_argument("--bot-command", action="append", default=[], metavar="NAME=CMD",
                   help="define or override a bot's command (run from the repository root); repeatable")
    p.add_argument("--games", type=int, default=200, help="matches per bot per Confirmation variant (default 200)")
    p.add_argument("--games-aegis", type=int, default=None, help="matches per bot per Aegis variant (default --games)")
    p.add_argument("--variants", default=None, help="comma-separated games, variant names or patterns (default all)")
    p.add_argument("--concurrency", type=int, default=2, help="matches at once (default 2)")
    p.add_argument("--fill", default=None, metavar="BOT",
                   help="the tested bot plays one seat of each match (in turn), BOT the others (default: every seat)")
    p.add_argument("--search-think-ms", type=float, default=None,
                   help="--think-ms for the search bot (default: the bot's own, 150 ms)")
    p.add_argument("--seed", type=int, default=1, help="master seed of the deals (default 1)")
    p.add_argument("--out", type=Path, default=None, help="where stores and logs go (default a new temporary dir)")
    p.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    p.add_argument("--list", action="store_true", help="print the variant names and exit")
    args = p.parse_args(argv)
    if args.games_aegis is None:
        args.games_aegis = args.games
    for flag, value, low in (("--games", args.games, 1), ("--games-aegis", args.games_aegis, 1),
                             ("--concurrency", args.concurrency, 1), ("--seed", args.seed, 0)):
        if value < low:
            p.error(f"{flag} must be at least {low}")
    if args.search_think_ms is not None and args.search_think_ms <= 0:
        p.error("--search-think-ms must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)  # exits 2 on bad arguments
    if args.list:
        print("\n".join(v.name for v in VARIANTS))
        return 0
    try:
        variants = select_variants(args.variants)
        commands = bot_commands(args.bots, args.bot_command, args.search_think_ms)
        args.fill_with = None
        if args.fill is not None:
            args.fill_with = (args.fill, bot_commands(args.fill, args.bot_command, args.search_think_ms)[args.fill])
            if args.fill in commands:
                raise Usage(f"--fill: {args.fill} is also a bot under test")
    except Usage as err:
        print(f"soak.py: error: {err}", file=sys.stderr)
        return 2
    args.out = (args.out or Path(tempfile.mkdtemp(prefix="soak-"))).resolve()
    clock = Clock()
    plan = [(bot, variant) for bot in commands for variant in variants]
    print(f"soak: {len(commands)} bot(s) x {len(variants)} variant(s)"
          f"{f', each in one seat, {args.fill} in the others' if args.fill else ' in self-play'}; "
          f"{args.games} match(es) per Confirmation "
          f"variant, {args.games_aegis} per Aegis variant; clock {clock.decision_s * 1000:g} ms + "
          f"{clock.bank_s * 1000:g} ms bank; concurrency {args.concurrency}; results in {args.out}", file=sys.stderr)
    previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops cleanly, like Ctrl-C
    runs: list[dict[str, Any]] = []
    try:
        for i, (bot, variant) in enumerate(plan, 1):
            games_n = args.games_aegis if variant.game == "aegis" else args.games
            run = soak_one(bot, commands[bot], variant, games_n, args)
            runs.append(run)
            print(progress_line(i, len(plan), run), file=sys.stderr, flush=True)
    except StoreError as err:
        print(f"soak.py: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ninterrupted: what finished is saved in {args.out}; run again with --out {args.out} to resume",
              file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)

    bad = [r for r in runs if failed(r)]
    print(table(runs))
    for r in bad:
        for line in r["fault_examples"] + r["bot_notes"]:
            print(f"  {r['bot']} {r['variant']}: {line}")
    print(f"\n{'FAIL' if bad else 'OK'}: {sum(r['games'] for r in runs)} matches, "
          f"{sum(r['decisions'] for r in runs)} decisions, {sum(sum(r['faults'].values()) for r in runs)} fault(s), "
          f"{sum(r['requested'] - r['games'] for r in runs)} missing; results in {args.out}")
    if args.json:
        args.json.write_text(json.dumps({
            "ok": not bad, "clock": {"decision_ms": clock.decision_s * 1000, "bank_ms": clock.bank_s * 1000},
            "seed": args.seed, "concurrency": args.concurrency, "out": str(args.out), "runs": runs,
        }, indent=2) + "\n")
    return 1 if bad else 0


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
