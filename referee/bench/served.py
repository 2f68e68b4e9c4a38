"""Sections 3-5: games through the real server, played by real bot processes.

The referee (a :class:`~referee.play.server.RefereeServer`) runs in this process,
so ``time.process_time()`` is the server's CPU time (its event loop and
gRPC's threads); the bots are ``python -m sample_bots.random`` processes
(the Python bot kit, answering at once), whose CPU time is read from
``/proc`` where there is one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

from referee.bench.echo import all_known, process_cpu
from referee.competition import config as tconfig
from referee.competition import run as trun
from referee.model import TournamentConfig
from referee.play.server import RefereeServer
from referee.runner import Clock

#: generous, so that a loaded machine slows the figures down rather than charging timeouts
CLOCK = Clock(decision_s=10.0, bank_s=60.0)
ROOT = Path(__file__).resolve().parents[2]


class Bots:
    """Random bot processes connected to a referee."""

    def __init__(self, server: RefereeServer, names: list[str], capacity: int = 1):
        self.server = server
        self.names = names
        self.processes = [
            subprocess.Popen([sys.executable, "-m", "sample_bots.random", "--address", server.address, "--name", name,
                              "--capacity", str(capacity), "--seed", str(i)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for i, name in enumerate(names)]

    async def connected(self, timeout: float = 30.0) -> Self:
        deadline = time.monotonic() + timeout
        arena = self.server.arena
        assert arena is not None  # the server is started before its bots
        while not all(arena.connected(name) for name in self.names):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the bots {self.names} did not connect within {timeout:.0f} s")
            await asyncio.sleep(0.05)
        return self

    def cpu(self) -> float | None:
        times = all_known([process_cpu(p.pid) for p in self.processes])
        return None if times is None else sum(times)

    def stop(self) -> None:
        for p in self.processes:
            p.kill()
            p.wait()


class Meter:
    """Wall time, the server's CPU time and the bots' over a stretch of play."""

    def __init__(self, bots: list[Bots]):
        self.bots = bots

    def __enter__(self) -> Self:
        self.start = time.perf_counter()
        self._cpu = time.process_time()
        self._bots_cpu = [b.cpu() for b in self.bots]
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.start
        self.cpu = time.process_time() - self._cpu
        before, after = all_known(self._bots_cpu), all_known([b.cpu() for b in self.bots])
        self.bots_cpu = None if before is None or after is None else sum(after) - sum(before)

    def per_decision(self, decisions: int) -> dict[str, Any]:
        return {
            "server_cpu_us_per_decision": round(self.cpu / decisions * 1e6),
            "bots_cpu_us_per_decision": None if self.bots_cpu is None else round(self.bots_cpu / decisions * 1e6),
        }


async def one_game_at_a_time(server: RefereeServer, bots: Bots, game: str, seconds: float,
                             seed: int = 0) -> dict[str, Any]:
    """Whole matches, one after the other, for about ``seconds``."""
    decisions = matches = faults = 0
    arena = server.arena
    assert arena is not None  # the server is started before its bots
    with Meter([bots]) as meter:
        while matches == 0 or time.perf_counter() - meter.start < seconds:
            out = await arena.run_match(game, {}, bots.names, seed=seed + matches, clock=CLOCK)
            decisions += len(out.state.actions)
            faults += len(out.faults)
            matches += 1
    return {"game": game, "matches": matches, "decisions": decisions, "faults": faults,
            "seconds": round(meter.wall, 3), "decisions_per_s": round(decisions / meter.wall),
            **meter.per_decision(decisions)}


async def concurrent_games(server: RefereeServer, bots: Bots, game: str, lanes: int, seconds: float,
                           seed: int = 0) -> dict[str, Any]:
    """``lanes`` games at a time for about ``seconds``: each lane plays whole
    matches back to back between two of the bots (lane i: bots i and i + 1).

    Matches run over the end of the window, so the rate counts each match's
    decisions in proportion to its time inside the window (decisions are
    spread evenly enough within a match for that)."""
    names = bots.names
    arena = server.arena
    assert arena is not None  # the server is started before its bots
    spans: list[tuple[float, float, int, int]] = []  # (start, end, decisions, faults)

    async def lane(i: int) -> None:
        lineup = [names[i % len(names)], names[(i + 1) % len(names)]]
        k = 0
        while (start := time.perf_counter()) < end_of_window:
            out = await arena.run_match(game, {}, lineup, seed=seed + 1000 * i + k, clock=CLOCK)
            spans.append((start, time.perf_counter(), len(out.state.actions), len(out.faults)))
            k += 1

    with Meter([bots]) as meter:
        end_of_window = meter.start + seconds
        await asyncio.gather(*(lane(i) for i in range(lanes)))
    window = (meter.start, end_of_window)
    counted = sum(n * overlap((s, e), window) / (e - s) for s, e, n, _ in spans)
    decisions = sum(n for _, _, n, _ in spans)
    return {"game": game, "concurrent": lanes, "matches": len(spans), "decisions": decisions,
            "faults": sum(f for *_, f in spans), "seconds": round(meter.wall, 3),
            "decisions_per_s": round(counted / seconds), **meter.per_decision(decisions)}


def overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


async def tournament(path: Path, workdir: Path,
                     change: Callable[[TournamentConfig], TournamentConfig] | None = None) -> dict[str, Any]:
    """A demo tournament, whole, through ``referee.competition.run.run`` (what
    ``referee tournament`` does): launching and containing the bots included.
    Its bots are replaced by random ones where the sample bots they name are
    not there; ``change(config)`` may return the configuration changed."""
    cfg = tconfig.load(path)
    cfg = dataclasses.replace(cfg, output=workdir / path.stem)
    if change is not None:
        cfg = change(cfg)
    missing = [b.name for b in cfg.bots if not b.external and not _runnable(b.command)]
    if missing:
        cfg = dataclasses.replace(cfg, bots=tuple(
            dataclasses.replace(b, command=("python", "-m", "sample_bots.random", "--seed", str(i)), cwd=str(ROOT))
            if b.name in missing else b for i, b in enumerate(cfg.bots)))
    store = trun.open_store(cfg)
    try:
        start = time.perf_counter()
        played = await trun.run(cfg, store)
        wall = time.perf_counter() - start
        decisions = 0
        for row in store.matches():
            record = store.record(row.key)
            assert record is not None  # the key of a stored match
            decisions += len(record["actions"])
    finally:
        store.close()
    return {"config": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path), "game": cfg.game,
            "bots": [b.name for b in cfg.bots], "random_instead_of": missing, "concurrency": cfg.concurrency,
            "matches": played, "decisions": decisions, "seconds": round(wall, 2),
            "games_per_minute": round(played / wall * 60, 1)}


def _runnable(command: tuple[str, ...]) -> bool:
    """A ``python -m MODULE`` command whose module is importable here (other commands are taken as they are)."""
    if len(command) >= 3 and command[0] in ("python", "python3") and command[1] == "-m":
        return importlib.util.find_spec(command[2]) is not None
    return True


def temporary_directory() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="referee-bench-")
