"""How fast the referee is, against what it cannot beat: ``python -m referee.bench``.

Ten sections, run in one process tree, printed as tables (and written as
JSON with ``--json FILE``):

1. **engine**: random playouts in process (the rules alone);
2. **echo**: the transport floor, a raw gRPC round trip between two Python
   processes with a real decision request (:mod:`referee.bench.echo`); and
   the same with two client processes taking turns, as one Aegis game's two
   bot processes do;
3. **referee**: whole games through the real server, one at a time, played
   by random bot processes that answer at once, against the echo measured
   in the same rounds; and (3b) the referee's own CPU per decision with the
   transport taken out (:mod:`referee.bench.inprocess`), for bots that ask
   for the game data as JSON (the default), typed, or both;
4. **concurrency**: 1, 4, 16 and 64 games at once over four bot sessions;
5. **tournament**: the demo tournaments, whole, through the code of
   ``referee tournament``;
6. **sandbox**: a bot's start-up with and without bubblewrap (and prepared beforehand,
   from its release), and (6b) what masking
   the ``__pycache__`` of a bot's own directory costs its start (:mod:`referee.bench.sandbox`);
7. **flood**: ``ListGames`` latency on a ``referee serve`` while hostile
   clients flood it with batched replies, beside control matches on a tight
   clock (:mod:`referee.bench.flood`); and (7b, ``--only strays`` alone) a
   victim's decisions and the runner's CPU while a bot's extra sessions, or a
   stdio bot's lines, send stray replies as fast as they are taken, against
   a control (:mod:`referee.bench.strays`);
8. **resources**: a victim's decisions while another bot runs 240 spinning
   processes, against a control, each bot with its CPU share; and the budget of
   a sandboxed bot's writable space, with an inode's measured kernel memory,
   and what the prelude's mounts add to a start (:mod:`referee.bench.resources`);
9. **stdio**: whole games through the server played by stdio bots behind
   the relay, against the same played by gRPC bots (:mod:`referee.bench.stdio`);
10. **isolation**: tournaments with long-lived bots, with a fresh process per
    match under the rule of before (a deal set's matches apart) and under the
    rule now (one process of a bot at a time), in games per minute
    (:mod:`referee.bench.isolation`).

With ``--only trace``, section **3c** (not run by default) times the
hand-offs of one decision on the server (:mod:`referee.bench.trace`);
``--only work`` runs section 3b alone, for ``--rounds`` rounds.

Sections 2 and 3 (``--only referee``) alternate for ``--rounds`` rounds, and
section 4 runs its numbers of games in turn for half as many rounds (rounded
up). Medians are reported, and a ratio is taken within each round before its
median, so that other work on the machine weighs on both sides alike. The
figures end with the targets of the performance issue, met or not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tabulate import tabulate

from referee.bench import echo as echo_mod
from referee.bench import engine, inprocess, resources, served
from referee.bench import isolation as isolation_mod
from referee.bench import sandbox as sandbox_mod
from referee.bench import stdio as stdio_mod
from referee.bench import strays as strays_mod
from referee.bench import trace as trace_mod
from referee.bench.resources import CLOCK_MS
from referee.games import GAMES, play_out, random_legal
from referee.play.server import RefereeServer
from referee.v1 import referee_pb2 as pb

SECTIONS = ("engine", "referee", "concurrency", "tournament", "sandbox", "flood", "resources", "stdio", "isolation")
EXTRA_SECTIONS = ("trace", "work", "strays")  # run only when asked for ("work": 3b alone, "strays": 7b alone)
TOURNAMENTS = ("examples/aegis.toml", "examples/confirmation.toml")
SERVED = ("aegis", "confirmation")  # the games of sections 3 and 3b, each with random bots in all its seats
LANES = (1, 4, 16, 64)
TYPED_FORMS = (pb.DATA_TYPED, pb.DATA_BOTH)  # section 3b beside the default JSON


def _median(rounds: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The round with the median ``key`` (the lower middle one of an even count)."""
    return sorted(rounds, key=lambda r: r[key])[(len(rounds) - 1) // 2]


def _of_echo(results: dict[str, Any], rounds: list[dict[str, Any]], key: str) -> tuple[float, float, float]:
    """A rate (``key`` of each of ``rounds``) over the echo's round trips/s of the same
    round, so that the machine's drift weighs on both: the median ratio, the lowest, the highest."""
    ratios = sorted(r[key] / e["round_trips_per_s"] for e, r in zip(results["echo"], rounds))
    return statistics.median(ratios), ratios[0], ratios[-1]


def _share_text(results: dict[str, Any], rounds: list[dict[str, Any]], key: str) -> str:
    """``_of_echo`` as a table prints it: "55% (51%-60%)"."""
    ratio, lowest, highest = _of_echo(results, rounds, key)
    return f"{ratio:.0%} ({lowest:.0%}-{highest:.0%})"


def _messages_per_decision(game: str, seed: int = 1) -> float:
    """Messages the referee sends per decision, in a seeded random match of ``game``."""
    state = GAMES[game].new({}, seed=seed)
    play_out(state, random_legal(random.Random(seed)))
    return inprocess.messages_per_decision(state)


async def transport_and_referee(rounds: int, seconds: float) -> dict[str, Any]:
    """Sections 2, 3 and 3b."""
    out: dict[str, Any] = {"echo": [], "echo_two_clients": [],
                 "messages_per_decision": {game: round(_messages_per_decision(game), 3) for game in GAMES},
                 "referee": {game: [] for game in SERVED}}
    async with echo_mod.Echo() as echo, echo_mod.Echo(clients=2) as echo_two, \
            RefereeServer(connect_timeout=30) as server:
        players = {game: served.Bots(server, [f"{game[0]}{i}" for i in range(GAMES[game].num_seats)])
                   for game in SERVED}
        try:
            for bots in players.values():
                await bots.connected()
            for r in range(rounds):
                out["echo"].append(await echo.measure(seconds))
                out["echo_two_clients"].append(await echo_two.measure(seconds))
                for game, bots in players.items():
                    out["referee"][game].append(await served.one_game_at_a_time(server, bots, game, seconds,
                                                                                seed=1000 * r))
        finally:
            for bots in players.values():
                bots.stop()
    out.update(await own_work(seconds, rounds=1))
    return out


async def own_work(seconds: float, rounds: int) -> dict[str, Any]:
    """Section 3b: the referee's own CPU per decision, in each game, for bots asking for each form
    of the game data (the forms taking turns within a round; the median round of each)."""
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for _ in range(rounds):
        for game in SERVED:
            for form in (pb.DATA_JSON, *TYPED_FORMS):
                runs.setdefault((game, form), []).append(await inprocess.referee_work(game, seconds, data_form=form))
    median = {key: _median(rs, "referee_cpu_us_per_decision") for key, rs in runs.items()}
    return {"referee_work": [median[game, pb.DATA_JSON] for game in SERVED],
            "referee_work_forms": [median[game, form] for game in SERVED for form in TYPED_FORMS]}


async def concurrency(seconds: float, rounds: int) -> list[dict[str, Any]]:
    """Section 4: each number of games at once for ``rounds`` rounds, the order
    reversed every other round."""
    measured: dict[int, list[dict[str, Any]]] = {lanes: [] for lanes in LANES}
    async with RefereeServer(connect_timeout=30) as server:
        bots = served.Bots(server, ["p0", "p1", "p2", "p3"], capacity=max(LANES) // 2)
        try:
            await bots.connected()
            await served.concurrent_games(server, bots, "aegis", len(bots.names), 0.5)  # warm up
            for r in range(rounds):
                for lanes in LANES if r % 2 == 0 else LANES[::-1]:
                    measured[lanes].append(await served.concurrent_games(server, bots, "aegis", lanes, seconds,
                                                                         seed=1000 * r))
        finally:
            bots.stop()
    return _against_one_game(measured)


def _against_one_game(measured: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per number of games at once, its median round, with its decisions/s over
    one game's in the same round: the median ratio ("vs_one") and the range."""
    out = []
    for _lanes, rows in measured.items():
        ratios = sorted(row["decisions_per_s"] / one["decisions_per_s"] for row, one in zip(rows, measured[1]))
        out.append({**_median(rows, "decisions_per_s"), "rounds": len(rows),
                    "vs_one": statistics.median(ratios), "vs_one_range": [ratios[0], ratios[-1]]})
    return out


async def tournaments() -> list[dict[str, Any]]:
    with served.temporary_directory() as tmp:
        return [await served.tournament(served.ROOT / path, Path(tmp)) for path in TOURNAMENTS]


def run(sections: tuple[str, ...], seconds: float, rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {"machine": {"python": f"{platform.python_implementation()} {platform.python_version()}",
                                 "cpus": os.cpu_count(), "load_average": _load()}}
    if "engine" in sections:
        results["engine"] = engine.run(seconds)
    if "referee" in sections:
        results.update(asyncio.run(transport_and_referee(rounds, seconds)))
    if "concurrency" in sections:
        results["concurrency"] = asyncio.run(concurrency(seconds * 2, max(1, (rounds + 1) // 2)))
    if "tournament" in sections:
        results["tournament"] = asyncio.run(tournaments())
    if "sandbox" in sections:
        results["sandbox"] = asyncio.run(sandbox_mod.measure())
    if "work" in sections and "referee" not in sections:
        results.update(asyncio.run(own_work(seconds, rounds)))
    if "trace" in sections:
        results["trace"] = trace_mod.run(seconds * 2)
    if "flood" in sections:
        from referee.bench import flood  # late: ``python -m referee.bench.flood`` runs its flooders (a second copy)

        results["flood"] = flood.measure()
        results["flood"]["without"] = flood.measure(floods=(), controls=len(results["flood"]["control"]))
    if "flood" in sections or "strays" in sections:
        results["strays"] = strays_mod.measure()
    if "resources" in sections:
        results["resources"] = resources.measure()
    if "stdio" in sections:
        results["stdio"] = stdio_mod.run(seconds, rounds)
    if "isolation" in sections:
        with served.temporary_directory() as tmp:
            results["isolation"] = asyncio.run(isolation_mod.measure(Path(tmp)))
    results["machine"]["load_average_after"] = _load()
    results["targets"] = targets(results)
    return results


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The performance issue's three targets, from the figures measured (the CPU one read two ways)."""
    found = []
    if "echo" in results:
        echo = _median(results["echo"], "round_trips_per_s")
        ref = _median(results["referee"]["aegis"], "decisions_per_s")
        ratio, lowest, highest = _of_echo(results, results["referee"]["aegis"], "decisions_per_s")
        found.append({"target": "aegis, one game at a time through the server >= 70% of the echo's round trips/s "
                                "(median over the rounds of each round's ratio)",
                      "value": round(ratio, 2), "goal": 0.7, "met": ratio >= 0.7,
                      "context": f"rounds: {lowest:.2f}-{highest:.2f}; messages from the referee per decision: "
                                 f"{results['messages_per_decision']['aegis']:g}" + _two_clients(results)})
        cpu = ref["server_cpu_us_per_decision"]
        own = {w["game"]: w["referee_cpu_us_per_decision"] for w in results["referee_work"]}
        found.append({"target": "the referee's own CPU per decision (3b: rules, JSON, messages, clock; aegis, "
                                "the costlier game) < 100 µs",
                      "value": own["aegis"], "goal": 100, "met": own["aegis"] < 100,
                      "context": f"confirmation: {own['confirmation']:g} µs"})
        found.append({"target": "the whole server process's CPU per decision, gRPC included (aegis) < 100 µs",
                      "value": cpu, "goal": 100, "met": cpu < 100,
                      "context": f"the echo's server alone: {echo['server_cpu_us_per_round_trip']} µs per round trip"})
    if "concurrency" in results:
        sixteen = next(c for c in results["concurrency"] if c["concurrent"] == 16)
        found.append({"target": "16 games at once >= 2.5x the decisions/s of one (median over the rounds of "
                                "each round's ratio)",
                      "value": round(sixteen["vs_one"], 2), "goal": 2.5, "met": sixteen["vs_one"] >= 2.5,
                      "context": "rounds: {:.2f}-{:.2f}".format(*sixteen["vs_one_range"])})
    if "flood" in results:
        latency = results["flood"]["list_games_ms"]
        found.append({"target": "ListGames under a batched-reply flood < 100 ms (the slowest of the calls)",
                      "value": latency["max"], "goal": 100, "met": latency["max"] < 100,
                      "context": f"median {latency['median']} ms, p99 {latency['p99']} ms "
                                 f"over {latency['calls']} calls; "
                                 "with no flood on the same machine: slowest "
                                 f"{results['flood']['without']['list_games_ms']['max']} ms"})
    return found


def _two_clients(results: dict[str, Any]) -> str:
    if not results.get("echo_two_clients"):
        return ""
    ratio, _, _ = _of_echo(results, results["echo_two_clients"], "round_trips_per_s")
    return f"; the echo with two clients taking turns (a referee doing nothing): {ratio:.2f}"


def report(results: dict[str, Any]) -> str:
    m = results["machine"]
    load = "/".join(map(str, m["load_average"])) if m["load_average"] else "?"
    parts = [f"{m['python']}, {m['cpus']} CPUs, load average {load} (1/5/15 min) at the start"]

    def table(title: str, rows: list[list[Any]], headers: list[str]) -> None:
        parts.append(f"\n{title}\n\n" + tabulate(rows, headers, tablefmt="github", intfmt=",", floatfmt="g"))

    if "engine" in results:
        table("1. Engine: random playouts in process, one core", [
            [r["game"], ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "defaults", r["decisions_per_s"],
             r["cpu_us_per_decision"]] for r in results["engine"]], ["game", "options", "decisions/s", "µs/decision"])
    if "echo" in results:
        echo1 = _median(results["echo"], "round_trips_per_s")
        echos = [(echo1, "100%")]
        if results.get("echo_two_clients"):
            echos.append((_median(results["echo_two_clients"], "round_trips_per_s"),
                          _share_text(results, results["echo_two_clients"], "round_trips_per_s")))
        table(f"2. Transport floor: gRPC echo between processes on loopback, {echo1['request_bytes']:,}-byte "
              f"request (median of {len(results['echo'])} rounds; two clients: taking turns, as the seats "
              f"of one aegis game)", [
                  [e["clients"], e["round_trips_per_s"], of_echo, e["median_us"], e["p99_us"],
                   e["server_cpu_us_per_round_trip"], e["client_cpu_us_per_round_trip"]] for e, of_echo in echos],
              ["clients", "round trips/s", "of echo (rounds)", "median µs", "p99 µs", "server CPU µs/round trip",
               "clients' CPU µs/round trip"])
        rows = []
        for game, rounds in results["referee"].items():
            r = _median(rounds, "decisions_per_s")
            rows.append([game, r["decisions_per_s"], _share_text(results, rounds, "decisions_per_s"),
                         results["messages_per_decision"][game], r["server_cpu_us_per_decision"],
                         r["bots_cpu_us_per_decision"], r["faults"]])
        table("3. Referee: whole games through the server, one at a time, random bot processes "
              "(median of the rounds; of echo: each round against the echo of the same round)", rows,
              ["game", "decisions/s", "of echo (rounds)", "messages/decision", "server CPU µs/decision",
               "bots' CPU µs/decision", "faults"])
    if "referee_work" in results:
        forms = {(w["game"], w["data_form"]): w["referee_cpu_us_per_decision"] for w in results["referee_work_forms"]}
        table("3b. The referee's own work, without the transport (in process), by the form of the game data the "
              "bots ask for (Hello.data_form)", [
                  [w["game"], w["referee_cpu_us_per_decision"],
                   *(forms[w["game"], pb.DataForm.Name(f)] for f in TYPED_FORMS)]
                  for w in results["referee_work"]],
              ["game", "referee CPU µs/decision: JSON (default)", "typed", "both"])
    if "trace" in results:
        for t in results["trace"]:
            table(f"3c. Where one {t['game']} decision's wall time goes on the server (one game at a time, "
                  f"{t['decisions_per_s']:,} decisions/s with the timestamps)", [
                      [f"{s['from']} -> {s['to']}", s["what"], s["median_us"], s["mean_us"]] for s in t["steps"]],
                  ["step", "what", "median µs", "mean µs"])
    if "concurrency" in results:
        table(f"4. Concurrency: aegis games at once, 4 random bot sessions (median of "
              f"{results['concurrency'][0]['rounds']} rounds; vs 1: each round against one game in the same round)", [
            [c["concurrent"], c["decisions_per_s"], "{:.2f} ({:.2f}-{:.2f})".format(c["vs_one"], *c["vs_one_range"]),
             c["server_cpu_us_per_decision"], c["bots_cpu_us_per_decision"], c["faults"]]
            for c in results["concurrency"]],
              ["games at once", "decisions/s", "vs 1 (rounds)", "server CPU µs/decision", "bots' CPU µs/decision",
               "faults"])
    if "tournament" in results:
        table("5. Tournaments, whole (referee.competition.run.run, bots launched)", [
            [t["config"], " v ".join(t["bots"]) + (f" (random for {', '.join(t['random_instead_of'])})"
                                                   if t["random_instead_of"] else ""),
             t["concurrency"], t["matches"], t["decisions"], t["seconds"], t["games_per_minute"]]
            for t in results["tournament"]],
              ["config", "bots", "at once", "matches", "decisions", "seconds", "games/minute"])
    if "sandbox" in results:
        box = results["sandbox"]
        table("6a. A launched bot's start, to its session at the referee (sample_bots.random)" + (
            f"; bubblewrap not measured: {box['bwrap_unavailable']}" if box["bwrap_unavailable"] else ""), [
            [s["sandbox"], s["starts"], s["median_ms"], f"{s['min_ms']}-{s['max_ms']}"] for s in box["startup"]],
              ["sandbox", "starts", "median ms", "range ms"])
        if (pyc := box.get("pycache")) is not None:
            table(f"6b. A bot's own {pyc['source_kb']} KB of Python (the search sample bot's modules, in its "
                  f"directory) imported in bubblewrap, its {pyc['masks']} __pycache__ masked (compiled from source) or "
                  f"shown; "
                  f"finding the masks: {pyc['walk_ms']} ms a start", [
                      [s["way"], s["starts"], s["median_ms"], f"{s['min_ms']}-{s['max_ms']}"] for s in pyc["starts"]],
                  ["__pycache__", "starts", "median ms", "range ms"])
    if "flood" in results:
        f = results["flood"]
        latency = f["list_games_ms"]
        control_faults = sum(len(m["faults"]) for m in f["control"])
        table(f"7. A batched-reply flood on a referee serve: ListGames every {f['probe_every_ms']:g} ms, "
              f"{len(f['control'])} control matches beside it on {f['control_clock_ms'][0]} ms per decision and "
              f"no bank ({control_faults} fault(s))", [
                  [f"{fl['messages']} x {fl['replies']:,} replies", len(ended["sessions"]),
                   "; ".join(sorted({s["details"].split(" (")[0] for s in ended["sessions"]})),
                   ", ".join(x["kind"] for x in hostile["faults"])]
                  for fl, ended, hostile in zip(f["floods"], f["flooders"], f["hostile"])] + [
                  ["ListGames latency", latency["calls"], f"median {latency['median']} ms, p99 {latency['p99']} ms, "
                                                          f"slowest {latency['max']} ms", ""],
                  ["the same, no flood", (calm := f["without"]["list_games_ms"])["calls"],
                   f"median {calm['median']} ms, p99 {calm['p99']} ms, slowest {calm['max']} ms",
                   f"({len(f['without']['control'])} control matches)"]],
              ["flooder", "sessions", "how its streams ended", "its seat's faults"])
    if "strays" in results:
        table(*strays_mod.table(results["strays"]))
    if "resources" in results:
        _resources_tables(results["resources"], table)
    if "stdio" in results:
        st = results["stdio"]
        missing = f"; not measured: {', '.join(st['missing'])} (no C compiler)" if st["missing"] else ""
        table(f"9. stdio bots behind the relay against gRPC bots: whole games, one at a time, bots answering at "
              f"once (median of {st['rows'][0]['rounds']} rounds; vs gRPC: each round against the gRPC bots' of the "
              f"same round; a relay's resident memory: {st['relay_rss_mb']:g} MB){missing}",
              [[r["kind"], r["game"], r["decisions_per_s"],
                "{:.0%} ({:.0%}-{:.0%})".format(r["vs_grpc"], *r["vs_grpc_range"]),
                r["server_cpu_us_per_decision"], r["bots_cpu_us_per_decision"], r["faults"]] for r in st["rows"]],
              ["bots", "game", "decisions/s", "vs gRPC (rounds)", "server CPU µs/decision", "bots' CPU µs/decision",
               "faults"])
    if "isolation" in results:
        rows, headers = isolation_mod.table(results["isolation"])
        table(f"10. isolation: long-lived bots, a fresh process per match with the rule of before (a deal set's "
              f"matches apart) and now (one process of a bot at a time); sandbox {results['isolation']['sandbox']}",
              rows, headers)
    if results["targets"]:
        table("Targets", [[t["target"], t["value"], "met" if t["met"] else "NOT met", t["context"]]
                          for t in results["targets"]], ["target", "measured", "", "for comparison"])
    return "\n".join(parts)


def _resources_tables(res: dict[str, Any], table: Callable[[str, list[list[Any]], list[str]], None]) -> None:
    fair = res["fairness"]
    share = "each bot with its CPU share (cgroup cpu)" if all(r["cpu_share"] for r in fair) else \
        "NO CPU share could be given here (no cgroup cpu controller): the attack stands"
    table(f"8a. The victim's decisions (a random bot) while another bot spins in that many processes, each in a "
          f"session of its own; {CLOCK_MS[0]} ms a decision, a {CLOCK_MS[1] / 1000:g} s bank; {share}", [
              [r["spinners"] or "0 (control)", r["decisions"], r["slowest_ms"], r["mean_ms"], r["over_decision_time"],
               r["timeouts"], r["seconds"]] for r in fair],
          ["spinners", "decisions", "slowest ms", "mean ms", "over decision time", "timeouts", "run s"])
    w = res["writable"]
    cost = f"{w['bytes_per_inode']} bytes per empty file ({w['how']})" if w["bytes_per_inode"] is not None \
        else f"{w['how']}; {w['stated_bytes_per_inode']} bytes per empty file assumed"
    table(f"8b. A sandboxed bot's writable space without a memory cgroup: /tmp and /dev/shm, each a tmpfs; "
          f"inodes: {cost}", [
              [r["file_mb"], r["tmpfs_mb"], r["inodes"], r["inodes_kernel_mb"], r["budget_mb"], r["stated_budget_mb"]]
              for r in w["rows"]],
          ["file_mb", "each tmpfs MB", "each tmpfs inodes", "its inodes' kernel MB", "budget MB (both)",
           "stated in docs MB"])
    if res["starts"] is not None:
        table("8c. A sandboxed `true`, started each way in turn", [
            [s["way"], s["starts"], s["median_ms"], f"{s['min_ms']}-{s['max_ms']}"] for s in res["starts"]],
              ["how", "starts", "median ms", "range ms"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of echo and referee, alternated (default 5)")
    parser.add_argument("--only", help=f"comma-separated sections among {', '.join(SECTIONS + EXTRA_SECTIONS)} "
                                       f"(default: all but {', '.join(EXTRA_SECTIONS)})")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--echo-client", metavar="ADDRESS", help=argparse.SUPPRESS)  # the echo's client process
    args = parser.parse_args(argv)
    if args.echo_client:
        echo_mod.client(args.echo_client)
        return
    sections = tuple(args.only.split(",")) if args.only else SECTIONS
    unknown = set(sections) - set(SECTIONS) - set(EXTRA_SECTIONS)
    if unknown:
        parser.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    results = run(sections, args.seconds, args.rounds)
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
        print(f"\n(figures written to {args.json})", file=sys.stderr)
