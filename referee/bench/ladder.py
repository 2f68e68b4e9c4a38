"""The competition server's bench: the ladder's games per minute, and its pages' latency under load.

    python -m referee.bench.ladder [--entries 6] [--field thinking] [--deal-sets 16] [--per-round 4]
                                   [--no-fill] [--tournament-deal-sets 4] [--clients 200] [--seconds 20]

1. **Games per minute.** ``--entries`` uploaded bots (the sample bots: search thinking 40 ms a
   decision, random with different seeds, the heuristic) are checked, then the ladder plays rounds of
   ``--per-round`` deal sets (filled, unless ``--no-fill``: ``[ladder] fill``) until ``--deal-sets``
   are dealt, with the sandbox and ``isolation = "match"`` as strangers need. Then, with ``isolation =
   "tournament"`` (long-lived processes): the same entries in ``referee tournament``'s round robin on
   ``--tournament-deal-sets``, and the very matches the ladder played, again.
   Each is printed in games (matches) per minute, and the ladder's rate as a share of each: the round
   robin's is the issue's measure, but its matches are another mix (more or fewer with the thinking
   bots); the same matches' is like for like. The ladder's and the same matches' runs also print how
   many matches played at once on average (their matches' seconds over the run's): under
   ``"match"`` an entry plays one match at a time, which the other run does not have to.
2. **Page latency.** The site is served by Uvicorn on 127.0.0.1 while the ladder plays on;
   ``--clients`` clients at once ask for the leaderboard, its live part and its JSON for ``--seconds``
   seconds. Printed: requests, p50 and p95 latency, errors; and the timeouts charged to bots in the
   ladder matches played meanwhile, against those before (the load must cost the bots nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from referee.bench import served
from referee.competition import ladder, service
from referee.competition.ladder import Phase
from referee.hosting import uploads
from referee.model import Isolation, ScheduleKind, Seating, deal_set_seed
from referee.results.store import Store

T = TypeVar("T")

#: how often an open page asks again (the site's polling, referee/server/app.py)
POLL_S = 5.0

def competition_text(title: str, root: Path, extra: str = "", decision_ms: int = 1000,
                     per_round: int = ladder.LadderRules.deal_sets_per_round,
                     fill: bool = ladder.LadderRules.fill) -> str:
    """A competition file of Aegis: the ladder ``per_round`` deal sets a round (``fill``: filled), the sandbox as found,
    isolation = "match", random and heuristic (run from ``root``) as the house bots; ``extra``: more tables
    ([finals], [uploads]...). The bench's, and the tests' (tests/harness.py)."""
    return f"""
[competition]
title = "{title}"
state = "state"

[ladder]
deal_sets_per_round = {per_round}
fill = {str(fill).lower()}

{extra}
[tournament]
game = "aegis"
concurrency = 2
isolation = "match"

[tournament.options]
promise = "table"

[clock]
decision_ms = {decision_ms}
bank_ms = 10000

[[bots]]
name = "random"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "{root}"
files = ["sample_bots/*.py", "referee"]

[[bots]]
name = "heuristic"
command = ["python", "-m", "sample_bots.heuristic"]
cwd = "{root}"
files = ["sample_bots/*.py", "referee"]
"""


#: the fields: bots that answer at once (a match costs what starting its processes costs), or bots that
#: think as the sample search bot does (40 ms a decision), beside random and heuristic ones
FIELDS = {"instant": (("random", "'--seed', '{seed}'"), ("random", "'--seed', '{seed}'"), ("heuristic", "")),
          "thinking": (("search", "'--think-ms', '40', '--seed', '{seed}'"), ("random", "'--seed', '{seed}'"),
                       ("heuristic", ""))}


def bots(n: int, field: str = "instant") -> list[tuple[str, str]]:
    """(name, bot.py) for ``n`` entries of a field (:data:`FIELDS`), in turn, each with its own seed."""
    found = []
    kinds = FIELDS[field]
    for i in range(n):
        module, args = kinds[i % len(kinds)]
        found.append((f"e{i + 1}", f"import sys\nsys.argv[1:1] = [{args.format(seed=i + 1)}]\n"
                                   f"from sample_bots.{module} import main\nmain()\n"))
    return found


def setup(root: Path, entries: int, field: str = "instant",
          per_round: int = ladder.LadderRules.deal_sets_per_round, fill: bool = ladder.LadderRules.fill) -> Any:
    from referee.server import auth  # late: the optional server extra
    from referee.server import main as server_main  # late: the optional server extra
    from referee.server.coordinator import Coordinator  # late: the optional server extra

    path = root / "competition.toml"
    path.write_text(competition_text("Bench ladder", served.ROOT, "[uploads]\nper_hour = 1000\n", per_round=per_round,
                                     fill=fill))
    spec = ladder.load(path)
    db = server_main.open_db(spec)
    coordinator = Coordinator(spec, db)
    coordinator.move(Phase.OPEN)
    for name, code in bots(entries, field):
        db.register(name, name, None, "x", auth.token_hash(name), None)
        directory = root / "src" / name
        directory.mkdir(parents=True)
        (directory / "bot.toml").write_text('command = ["python", "bot.py"]\n')
        (directory / "bot.py").write_text(code)
        upload = root / f"{name}.tar.gz"
        upload.write_bytes(uploads.pack(directory))
        coordinator.submit(name, upload, upload.name, None)
    while coordinator.check_next():
        pass
    return coordinator


def ladder_rate(coordinator: Any, deal_sets: int) -> tuple[int, float, float]:
    """(matches, seconds, matches playing at once on average) of ladder rounds until ``deal_sets``
    deal sets are dealt."""
    start, played, busy = time.monotonic(), 0, -_match_seconds(coordinator)
    while _dealt(coordinator) < deal_sets:
        n = coordinator.ladder_round()
        played += n
        if n == 0:
            break
    seconds = time.monotonic() - start
    return played, seconds, (busy + _match_seconds(coordinator)) / seconds


def _match_seconds(coordinator: Any) -> float:
    """The seconds of every match the ladder has stored (each from when it began to play)."""
    return _in_ladder(coordinator, lambda store: sum(row.seconds for row in store.matches(every=True)), 0.0)


def _dealt(coordinator: Any) -> int:
    return _in_ladder(coordinator, Store.deal_sets_dealt, 0)


def _in_ladder(coordinator: Any, read: Callable[[Store], T], before: T) -> T:
    """``read`` of the ladder's store (``before``: none yet)."""
    out = coordinator.spec.state / "ladder"
    if not (out / "results.sqlite").exists():
        return before
    store = Store(out, create=False)
    try:
        return read(store)
    finally:
        store.close()


class _Quiet:
    def say(self, line: str) -> None:
        pass

    def started(self, *args: Any) -> None:
        pass

    def playing(self, *args: Any) -> Any:
        return lambda *a: None

    def watch(self, arena: Any) -> None:
        pass

    def play(self, work: Any) -> int:
        played: int = asyncio.run(work)
        return played


def tournament_rate(coordinator: Any, deal_sets: int, out: Path) -> tuple[int, float]:
    """(matches, seconds) of ``referee tournament``'s round robin of the same entries, long-lived bots."""
    contenders = ladder.in_play(coordinator.contenders())
    config = ladder.ladder_config(coordinator.spec, contenders, deal_sets)
    config = dataclasses.replace(config, schedule=ScheduleKind.ROUND_ROBIN, deal_sets=deal_sets,
                                 isolation=Isolation.TOURNAMENT, output=out)
    start = time.monotonic()
    outcome = service.run_tournament(service.TournamentRequest(service.prepared(config), bootstrap=50), _Quiet())
    return outcome.played, time.monotonic() - start


def same_matches_rate(coordinator: Any) -> tuple[int, float, float]:
    """(matches, seconds, matches playing at once on average) of the very matches the ladder has played
    (their deal sets, deals and line-ups, the same uploaded versions, the same sandbox and clock), played
    again by one executor with long-lived processes (``isolation = "tournament"``) and as many at once:
    the ladder's rate without a process per match. (No store, no rounds: what only the ladder pays counts
    against it.)"""
    from referee.play.executors.local import LocalExecutor  # late: grpc

    contenders = ladder.in_play(coordinator.contenders())
    # its bots, deals and clock (how many deal sets it would play does not matter here)
    config = service.prepared(ladder.ladder_config(coordinator.spec, contenders, 2))
    store = Store(coordinator.spec.state / "ladder", create=False)
    try:
        rows = list(store.matches())
    finally:
        store.close()
    seatings = [Seating(r.deal_set, deal_set_seed(config.seed, config.later_seeds, r.deal_set), r.lineup) for r in rows]
    bots = [b for b in config.bots if any(b.name in s.lineup for s in seatings)]
    capacity = dict.fromkeys((b.name for b in bots), config.concurrency)

    busy: list[float] = []

    async def play() -> float:
        with tempfile.TemporaryDirectory(prefix="referee-bench-same-") as logs:
            async with LocalExecutor(config.game, config.options, config.clock, bots, capacity, log_dir=Path(logs),
                                     sandbox=config.sandbox, isolation=Isolation.TOURNAMENT) as executor:
                start = time.monotonic()
                await executor.play_all(seatings, config.concurrency, lambda played: busy.append(played.seconds))
                return time.monotonic() - start

    seconds = asyncio.run(play())
    return len(seatings), seconds, sum(busy) / seconds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(coordinator: Any) -> Iterator[str]:
    import uvicorn  # late: the optional server extra

    from referee.server.app import create_app  # late: the optional server extra
    from referee.server.main import secret_of  # late: the optional server extra

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(coordinator, secret_of(coordinator.db)), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="off", backlog=4096))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


async def _load(url: str, clients: int, seconds: float, period: float) -> tuple[list[float], int]:
    """Each client asks for a page every ``period`` seconds (0: again as soon as answered), from a random start."""
    import httpx  # late: the optional server extra

    paths = ("/", "/fragment/leaderboard", "/api/leaderboard")
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:
        end = time.monotonic() + seconds

        async def one(i: int) -> None:
            nonlocal errors
            k = i
            if period:
                await asyncio.sleep(random.uniform(0, period))
            while time.monotonic() < end:
                start = time.monotonic()
                try:
                    reply = await client.get(paths[k % len(paths)])
                    if reply.status_code != 200:
                        errors += 1
                except httpx.HTTPError:
                    errors += 1
                latencies.append(time.monotonic() - start)
                k += 1
                if period:
                    await asyncio.sleep(max(0.0, period - (time.monotonic() - start)))
        await asyncio.gather(*(one(i) for i in range(clients)))
    return latencies, errors


def _timeouts(coordinator: Any) -> tuple[int, int]:
    """(matches, timeouts charged) in the ladder so far."""
    store = Store(coordinator.spec.state / "ladder", create=False)
    try:
        rows = list(store.matches(every=True))
    finally:
        store.close()
    return len(rows), sum(int(seat.get("timeout", 0)) for r in rows for seat in r.results.get("faults") or [])


def page_latency(coordinator: Any, clients: int, seconds: float, period: float) -> dict[str, float]:
    stop = threading.Event()

    def play() -> None:
        while not stop.is_set():
            if coordinator.ladder_round() == 0:
                time.sleep(0.2)

    matches0, timeouts0 = _timeouts(coordinator)
    ladder_thread = threading.Thread(target=play, daemon=True)
    ladder_thread.start()
    with serving(coordinator) as url:
        # the clients in a process of their own, as a browser's are: they do not share the server's interpreter
        done = subprocess.run([sys.executable, "-m", "referee.bench.ladder", "--load", url, "--clients", str(clients),
                               "--seconds", str(seconds), "--period", str(period)], capture_output=True, text=True,
                              check=True)
    stop.set()
    ladder_thread.join()
    matches1, timeouts1 = _timeouts(coordinator)
    figures: dict[str, float] = json.loads(done.stdout)
    return {**figures, "matches_meanwhile": matches1 - matches0, "timeouts_meanwhile": timeouts1 - timeouts0,
            "timeouts_before": timeouts0, "matches_before": matches0}


def load(url: str, clients: int, seconds: float, period: float) -> dict[str, float]:
    """``clients`` clients at once against the site at ``url`` for ``seconds``: requests, p50, p95, errors."""
    latencies, errors = asyncio.run(_load(url, clients, seconds, period))
    ordered = sorted(latencies)
    return {"requests": len(ordered), "errors": errors, "rps": len(ordered) / seconds,
            "p50_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * ordered[int(0.95 * (len(ordered) - 1))]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.bench.ladder", description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=6)
    parser.add_argument("--field", choices=sorted(FIELDS), default="thinking",
                        help="bots that think 40 ms a decision (search) beside quick ones, or only quick ones")
    parser.add_argument("--deal-sets", type=int, default=16,
                        help="the ladder's deal sets: four rounds of four, the first a warm-up (no ranking yet)")
    parser.add_argument("--per-round", type=int, default=ladder.LadderRules.deal_sets_per_round,
                        help="the ladder's deal_sets_per_round")
    parser.add_argument("--no-fill", action="store_true", help="the ladder's rounds unfilled ([ladder] fill = false)")
    parser.add_argument("--tournament-deal-sets", type=int, default=4,
                        help="the round robin's deal sets (its rate does not change with its length)")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--period", type=float, default=POLL_S,
                        help="each client asks every this many seconds, as an open page polls (0: without a pause)")
    parser.add_argument("--load", metavar="URL", help=argparse.SUPPRESS)  # the clients' process (part 2)
    args = parser.parse_args(argv)
    if args.load:
        print(json.dumps(load(args.load, args.clients, args.seconds, args.period)))
        return
    if args.entries < 2 or args.deal_sets < 2 or args.tournament_deal_sets < 1 or args.clients < 1 or args.seconds <= 0:
        parser.error("--entries and --deal-sets at least 2, --tournament-deal-sets and --clients at least 1, "
                     "--seconds above 0")
    with tempfile.TemporaryDirectory(prefix="referee-bench-ladder-") as tmp:
        root = Path(tmp)
        coordinator = setup(root, args.entries, args.field, args.per_round, not args.no_fill)
        try:
            matches, seconds, at_once = ladder_rate(coordinator, args.deal_sets)
            box = coordinator.spec.house.sandbox
            print(f"{args.entries} entries ({args.field}); ladder, isolation = \"match\", sandbox {box}: "
                  f"{matches} matches in {seconds:.1f} s = {60 * matches / seconds:.1f} games/min, "
                  f"{at_once:.2f} playing at once on average")
            t_matches, t_seconds = tournament_rate(coordinator, args.tournament_deal_sets,
                                                   root / "tournament")
            print(f"referee tournament, isolation = \"tournament\": {t_matches} matches in {t_seconds:.1f} s = "
                  f"{60 * t_matches / t_seconds:.1f} games/min")
            ratio = (matches / seconds) / (t_matches / t_seconds) if t_matches else float("nan")
            print(f"the ladder's rate is {100 * ratio:.0f}% of the tournament's")
            s_matches, s_seconds, s_at_once = same_matches_rate(coordinator)
            same = (matches / seconds) / (s_matches / s_seconds) if s_matches else float("nan")
            print(f"the ladder's {s_matches} matches again, isolation = \"tournament\": {s_seconds:.1f} s = "
                  f"{60 * s_matches / s_seconds:.1f} games/min, {s_at_once:.2f} playing at once on average; "
                  f"the ladder's rate is {100 * same:.0f}% of that")
            figures = page_latency(coordinator, args.clients, args.seconds, args.period)
            each = f"each every {args.period:g} s" if args.period else "each again as soon as answered"
            print(f"pages: {args.clients} clients ({each}) for {args.seconds:g} s while the ladder plays: "
                  f"{figures['requests']} requests ({figures['rps']:.0f}/s), p50 {figures['p50_ms']:.0f} ms, "
                  f"p95 {figures['p95_ms']:.0f} ms, {figures['errors']} errors; ladder matches meanwhile "
                  f"{figures['matches_meanwhile']}, timeouts charged meanwhile {figures['timeouts_meanwhile']} "
                  f"(before: {figures['timeouts_before']} in {figures['matches_before']})")
        finally:
            coordinator.db.close()


if __name__ == "__main__":
    main()
