"""Section 7b (``--only strays``; also run by ``--only flood``): stray replies, as fast as the stream
takes them, against the victim's decisions and the runner's CPU.

The attack of issue 35 (the wall, round 4, item 7): a bot opens sessions beyond the one it plays
with, and each sends replies that answer no request (for a game it does not play) as fast as its
stream takes them; or a stdio bot writes such lines as fast as its pipe takes them. Every such
message is work for the runner's one event loop, outside the bot's CPU share, while its opponent
decides on a tight clock.

Here a small tournament (Aegis, the runner in this process, the bots in their sandbox) of two bots,
the victim (a random bot) and the entrant, is played in turn:

- **control**: the entrant plays the first legal action and nothing else (over gRPC; and
  ``stdio control``: the same behind the stdio relay);
- **gRPC strays**: the entrant's own session says it plays 1 seat (it is given 2: two matches at
  once), leaving room for one session more; from its first decision ``SESSIONS`` more threads each
  open a session (capacity 1) and, from its Welcome, send stray replies without end; a session
  refused or closed comes back at once;
- **stdio strays**: a stdio bot that, from its first request, writes stray lines without end
  besides its answers.

The figures: the victim's slowest and mean decision, its decisions past the decision time, its
timeouts; the runner's own CPU (this process: the referee, the launcher, the store; not the bots');
the entrant's faults; what its sessions met (opened, refused, closed by
the referee, strays sent). The machine's load average is printed with them: they move with it.

The bots: :mod:`referee.bench.stray_bots` (gRPC), :mod:`referee.bench.stray_stdio`.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.bench import served
from referee.bench.resources import victim_times
from referee.competition import config as tconfig
from referee.competition import run as trun
from referee.hosting import sandbox
from referee.model import SandboxMode
from referee.results.store import Store

SESSIONS = 8                    # flooding sessions the gRPC entrant opens, each in a thread of its own
CLOCK_MS = (200, 300)           # the issue's: 200 ms a decision, a 300 ms bank
DEAL_SETS = 16
GRPC = ["python", "-m", "referee.bench.stray_bots"]
STDIO = ["python", "-P", "referee/bench/stray_stdio.py"]  # from the root, its cwd: a script, not the package

TOURNAMENT = """
[tournament]
game = "aegis"
deal_sets = {deal_sets}
seed = 23
concurrency = 2
output = "out"

[clock]
decision_ms = {decision}
bank_ms = {bank}

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "{root}"

[[bots]]
name = "entrant"
command = {command}
cwd = "{root}"
protocol = "{protocol}"
max_restarts = 1000
"""


# --- the measurement --------------------------------------------------------------------------

#: the rows: (label, the entrant's command, its protocol)
RUNS = (
    ("control", GRPC, "grpc"),
    ("gRPC strays", [*GRPC, "--sessions", str(SESSIONS)], "grpc"),
    ("stdio control", STDIO, "stdio"),
    ("stdio strays", [*STDIO, "--flood"], "stdio"),
)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _cpu() -> float:
    """This process's CPU seconds, all its threads (not its children: the bots)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def entrant_faults(out: Path) -> dict[str, int]:
    """The entrant's faults over the run, by kind (those at 0 left out)."""
    store = Store(out, create=False)
    try:
        total: dict[str, int] = {}
        for row in store.matches():
            for seat, name in enumerate(row.lineup):
                if name == "entrant":
                    for kind, n in row.faults[seat].items():
                        if n:
                            total[kind] = total.get(kind, 0) + n
        return total
    finally:
        store.close()


def sessions_met(out: Path) -> dict[str, Any] | None:
    """The last STRAYS line of the entrant's log (what its flooding sessions met), if any."""
    log = out / "logs" / "entrant.log"
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("STRAYS {")] \
        if log.exists() else []
    return json.loads(lines[-1].split(" ", 1)[1]) if lines else None


async def one_run(folder: Path, command: list[str], protocol: str, deal_sets: int) -> dict[str, Any]:
    """One tournament in ``folder``, this process its runner: the victim's decisions, the CPU, the faults."""
    folder.mkdir()
    path = folder / "t.toml"
    path.write_text(TOURNAMENT.format(deal_sets=deal_sets, decision=CLOCK_MS[0], bank=CLOCK_MS[1],
                                      root=served.ROOT, command=json.dumps(command), protocol=protocol))
    cfg = tconfig.load(path)
    store = trun.open_store(cfg)
    load = _load()
    cpu, started = _cpu(), time.perf_counter()
    try:
        await trun.run(cfg, store)
    finally:
        store.close()
    return {"seconds": round(time.perf_counter() - started, 1), "load_average": load,
            "runner_cpu_s": round(_cpu() - cpu, 2), **victim_times(cfg.output),
            "entrant_faults": entrant_faults(cfg.output),
            "sessions": sessions_met(cfg.output)}


def measure(deal_sets: int | None = None, runs: Sequence[tuple[str, list[str], str]] | None = None) -> dict[str, Any]:
    """Each run of ``runs`` (by default RUNS) in turn, in a fresh directory, each of ``deal_sets`` (by
    default DEAL_SETS)."""
    deal_sets, runs, rows = deal_sets or DEAL_SETS, runs or RUNS, []
    with served.temporary_directory() as tmp:
        for n, (label, command, protocol) in enumerate(runs):
            rows.append({"run": label, **asyncio.run(one_run(Path(tmp) / f"run{n}", command, protocol, deal_sets))})
    return {"rows": rows, "clock_ms": list(CLOCK_MS), "deal_sets": deal_sets, "sessions": SESSIONS,
            "sandbox": sandbox.resolve(SandboxMode.AUTO).describe(), "load_average_after": _load()}


def table(figures: dict[str, Any]) -> tuple[str, list[list[Any]], list[str]]:
    """The title, rows and headers of the bench's table 7b."""
    title = (f"7b. Stray replies from a bot's extra sessions ({figures['sessions']} flooding threads) or from a "
             f"stdio bot's lines, as fast as they are taken: the victim's decisions ({figures['clock_ms'][0]} ms a "
             f"decision, a {figures['clock_ms'][1]} ms bank), the runner's own CPU; {figures['deal_sets']} deal sets "
             f"of Aegis, 2 at once; {figures['sandbox']}")
    rows = []
    for r in figures["rows"]:
        met = r["sessions"]
        sessions = (f"{met['opened']} opened, {met['refused']} refused, {met['closed']} closed, "
                    f"{met['strays']:,} strays taken") if met else ""
        faults = ", ".join(f"{kind} {n}" for kind, n in sorted(r["entrant_faults"].items())) or "none"
        rows.append([r["run"], r["decisions"], r["slowest_ms"], r["mean_ms"], r["over_decision_time"], r["timeouts"],
                     r["runner_cpu_s"], r["seconds"], "/".join(map(str, r["load_average"])), faults, sessions])
    headers = ["entrant", "victim decisions", "slowest ms", "mean ms", "past decision time", "timeouts",
               "runner CPU s", "run s", "load average at its start", "entrant's faults", "its flooding sessions"]
    return title, rows, headers
