"""Section 6 of the bench: what containing the bots costs.

- **start-up**: a launched bot's process from its start to its session at the
  referee (interpreter, bot kit, gRPC connect), with and without bubblewrap;
  the difference is what the sandbox adds to every start.

What a fresh process per match costs a whole tournament is section 8's
(:mod:`referee.bench.isolation`).
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from pathlib import Path

from referee.runner import Clock
from referee.tournament import sandbox
from referee.tournament.config import BotSpec
from referee.tournament.executors import LocalExecutor

from referee.bench import served

BOT = BotSpec("probe", ("python", "-m", "sample_bots.random"), str(served.ROOT))


async def startups(modes: list[str], starts: int, logs: Path) -> list[dict]:
    """Per sandbox mode: median and range of ``starts`` starts, in ms, from the process's start to
    its session; the modes take turns, so that the machine's drift weighs on each alike."""
    executors = [LocalExecutor("aegis", {}, Clock(), [BOT], {BOT.name: 1}, log_dir=logs / mode, sandbox=mode,
                               isolation="match") for mode in modes]
    times: list[list[float]] = [[] for _ in modes]
    async with contextlib.AsyncExitStack() as stack:
        for executor in executors:
            await stack.enter_async_context(executor)
        for i in range(starts):
            for executor, measured in zip(executors, times):
                measured.append(await _start_once(executor, f"probe#{i}"))
    return [{"sandbox": ex.sandbox.kind, "starts": starts, "median_ms": round(statistics.median(t), 1),
             "min_ms": round(min(t), 1), "max_ms": round(max(t), 1)} for ex, t in zip(executors, times)]


async def _start_once(executor: LocalExecutor, name: str) -> float:
    arena, launcher = executor.referee.arena, executor.launcher
    started = time.perf_counter()
    executor._admit(name, name)
    launcher.start_for_match(BOT.name, name, name, 1)
    while not arena.connected(name):
        if launcher.gone(name):
            raise RuntimeError(f"the probe bot did not start ({executor.sandbox.kind}): see its log")
        await asyncio.sleep(0.002)
    elapsed = (time.perf_counter() - started) * 1000
    launcher.retire(name)
    executor._dismiss(name)
    return elapsed


async def measure(starts: int = 20) -> dict:
    unavailable = sandbox.probe()
    modes = ["none"] + (["bwrap"] if unavailable is None else [])
    with served.temporary_directory() as tmp:
        return {"startup": await startups(modes, starts, Path(tmp) / "logs"), "bwrap_unavailable": unavailable}
