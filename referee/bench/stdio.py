"""Section 8 of the bench: what the stdio relay costs (``python -m referee.bench --only stdio``).

Whole games, one at a time, through the real server, played by bots that answer at once: the
Python bot kit's random bot over gRPC (``sample_bots.random``, as in section 3), and stdio bots
behind the relay (:mod:`referee.hosting.stdio`), started as the launcher starts them (without
the sandbox, which adds nothing per decision): the C stdio bot (``sample_bots/stdio_c``, built
here if it is not; a fast bot, so that what is measured is the relay) and the Python one
(``sample_bots.stdio_random``). The kinds take turns for ``rounds`` rounds; the medians are
reported, with each stdio round's decisions/s over the gRPC round's beside it. The bots' CPU
time counts each relay with its bot.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import sys
from typing import Any

from referee.bench import served
from referee.bench.echo import all_known, process_cpu
from referee.games import GAMES as GAMES_BY_NAME
from referee.hosting.launcher import STDIO_RELAY
from referee.play.server import RefereeServer

GAMES = ("aegis", "confirmation")
C_BOT = served.ROOT / "sample_bots" / "stdio_c"


class StdioBots(served.Bots):
    """Stdio bots behind the relay, one relay process per seat, connected to a referee."""

    def __init__(self, server: RefereeServer, names: list[str], command: list[str]):
        self.server = server
        self.names = names
        self.processes = [
            subprocess.Popen([*STDIO_RELAY, "--address", server.address, "--name", name, "--", *command],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for name in names]

    def cpu(self) -> float | None:
        """The relays' CPU time and their bots'."""
        total = 0.0
        for p in self.processes:
            pids = [p.pid, *_children(p.pid)]
            times = all_known([process_cpu(pid) for pid in pids])
            if times is None:
                return None
            total += sum(times)
        return total


    def relay_rss_mb(self) -> float | None:
        """The median resident memory of the relays (their bots not counted), in MB."""
        sizes = all_known([_rss_kb(p.pid) for p in self.processes])
        return None if sizes is None else round(statistics.median(sizes) / 1024, 1)


def _rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return None


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def c_bot() -> list[str] | None:
    """The C stdio bot's command, built if need be; None where no C compiler is there."""
    if not (C_BOT / "bot").exists():
        if shutil.which("make") is None or shutil.which("cc") is None:
            return None
        subprocess.run(["make", "-s", "-C", str(C_BOT)], check=True, capture_output=True)
    return [str(C_BOT / "bot")]


async def measure(seconds: float, rounds: int) -> dict[str, Any]:
    kinds: dict[str, list[str] | None] = {"stdio (C bot)": c_bot(),
                                          "stdio (Python bot)": [sys.executable, "-m", "sample_bots.stdio_random"]}
    out: dict[str, Any] = {"kinds": ["grpc"] + [k for k, c in kinds.items() if c],
                           "missing": [k for k, c in kinds.items() if not c], "rows": []}
    async with RefereeServer(connect_timeout=30) as server:
        players = {}
        try:
            for game in GAMES:
                seats = GAMES_BY_NAME[game].num_seats
                players[("grpc", game)] = served.Bots(server, [f"g{game[0]}{i}" for i in range(seats)])
                for n, (kind, command) in enumerate(kinds.items()):
                    if command:
                        players[(kind, game)] = StdioBots(server, [f"s{n}{game[0]}{i}" for i in range(seats)],
                                                          command)
            for bots in players.values():
                await bots.connected()
            measured: dict[tuple[str, str], list[dict[str, Any]]] = {key: [] for key in players}
            for r in range(rounds):
                for (kind, game), bots in players.items():
                    measured[(kind, game)].append(await served.one_game_at_a_time(server, bots, game, seconds,
                                                                                  seed=1000 * r))
            out["relay_rss_mb"] = statistics.median(
                [rss for bots in players.values() if isinstance(bots, StdioBots) and (rss := bots.relay_rss_mb())]
                or [0])
        finally:
            for bots in players.values():
                bots.stop()
    for (kind, game), rows in measured.items():
        grpc_rows = measured[("grpc", game)]
        ratios = sorted(row["decisions_per_s"] / g["decisions_per_s"] for row, g in zip(rows, grpc_rows))
        median = sorted(rows, key=lambda row: row["decisions_per_s"])[(len(rows) - 1) // 2]
        out["rows"].append({"kind": kind, **median, "rounds": len(rows), "vs_grpc": statistics.median(ratios),
                            "vs_grpc_range": [ratios[0], ratios[-1]]})
    return out


def run(seconds: float, rounds: int) -> dict[str, Any]:
    return asyncio.run(measure(seconds, rounds))
