"""Section 6 of the bench: what containing the bots costs.

- **start-up**: a launched bot's process from its start to its session at the
  referee (interpreter, bot kit, gRPC connect), with and without bubblewrap;
  the difference is what the sandbox adds to every start. And a process
  prepared beforehand (as the next match's is under isolation = "match",
  :mod:`referee.hosting.starter`), from its release to its session: what is
  left of a start on the match's way.
- **__pycache__ masked** (6b): the sandbox masks the ``__pycache__`` of a bot's own
  directory (its version leaves them out), so Python compiles the bot's modules from source
  at every start. Measured on the search sample bot's modules copied into a bot's own
  directory, compiled beforehand: its start (interpreter and imports, in bubblewrap) with
  the masks, against the same command with its ``__pycache__`` shown (the rule of before);
  and what finding the masks costs (a walk of the bot's directory, at every start). A sample
  bot run as ``python -m sample_bots.X`` loads from the runtime, whose pycs are not masked:
  nothing changes for it.

What a fresh process per match costs a whole tournament is section 8's
(:mod:`referee.bench.isolation`).
"""

from __future__ import annotations

import asyncio
import compileall
import contextlib
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from referee.bench import served
from referee.hosting import sandbox, versions
from referee.model import BotSpec, Isolation, SandboxMode
from referee.play.executors import LocalExecutor
from referee.runner import Clock

BOT = BotSpec("probe", ("python", "-m", "sample_bots.random"), str(served.ROOT))


#: how long a prepared process waits before it is released, in the bench: time enough to be ready
PREPARED_S = 0.5


async def startups(modes: list[SandboxMode], starts: int, logs: Path) -> list[dict[str, Any]]:
    """Per sandbox mode, and per mode for a process prepared beforehand (isolation = "match": the
    next match's, started held while the last one plays, :mod:`referee.hosting.starter`): median
    and range of ``starts`` starts, in ms, from the process's start (the prepared one's release,
    :data:`PREPARED_S` after its start) to its session; all take turns, so that the machine's drift
    weighs on each alike."""
    executors = [LocalExecutor("aegis", {}, Clock(), [BOT], {BOT.name: 1}, log_dir=logs / mode, sandbox=mode,
                               isolation=Isolation.MATCH) for mode in modes]
    ways = [(executor, prepared) for executor in executors for prepared in (False, True)]
    times: list[list[float]] = [[] for _ in ways]
    async with contextlib.AsyncExitStack() as stack:
        for executor in executors:
            await stack.enter_async_context(executor)
        for i in range(starts):
            for (executor, prepared), measured in zip(ways, times):
                measured.append(await _start_once(executor, f"probe#{i}", prepared))
    return [{"sandbox": _kind(ex) + (", prepared (from its release)" if prepared else ""), "starts": starts,
             "median_ms": round(statistics.median(t), 1), "min_ms": round(min(t), 1), "max_ms": round(max(t), 1)}
            for (ex, prepared), t in zip(ways, times)]


def _kind(executor: LocalExecutor) -> str:
    """The kind of sandbox the bots of an executor (entered) run in."""
    assert executor.sandbox is not None  # set on entering the executor
    return executor.sandbox.kind


async def _start_once(executor: LocalExecutor, name: str, prepared: bool = False) -> float:
    arena, launcher = executor.referee.arena, executor.launcher
    assert arena is not None and launcher is not None  # the executor is entered
    executor._admit(name, name, 1)
    if prepared:
        launcher.start_for_match(BOT.name, name, name, 1, held=True)
        await asyncio.sleep(PREPARED_S)
        started = time.perf_counter()
        launcher.release(name)
    else:
        started = time.perf_counter()
        launcher.start_for_match(BOT.name, name, name, 1)
    while not arena.connected(name):
        if launcher.gone(name):
            raise RuntimeError(f"the probe bot did not start ({_kind(executor)}): see its log")
        await asyncio.sleep(0.002)
    elapsed = (time.perf_counter() - started) * 1000
    launcher.retire(name)
    executor._dismiss(name)
    return elapsed


#: what the bot of 6b imports at its start: the search sample bot, from its own directory
PYCACHE_IMPORT = "import sample_bots.search, sys; assert sample_bots.__file__.startswith(sys.argv[1])"


def pycache_cost(starts: int = 20) -> dict[str, Any]:
    """Section 6b: the search sample bot's modules in a bot's own directory, started in bubblewrap
    with its ``__pycache__`` masked and shown in turn (median and range in ms), and the walk that
    finds the masks (median ms)."""
    with served.temporary_directory() as tmp:
        bot = Path(tmp) / "bot"
        shutil.copytree(served.ROOT / "sample_bots", bot / "sample_bots",
                        ignore=shutil.ignore_patterns("__pycache__", "cpp", "go", "node", "stdio_c"))
        compileall.compile_dir(bot, quiet=1)
        masked = sandbox.bwrap_command([sys.executable, "-c", PYCACHE_IMPORT, str(bot)], cwd=bot, socket_dir=None)
        ways = {"masked (now)": masked, "shown (before)": _pycache_shown(masked)}
        times: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(starts):
            for way, argv in ways.items():
                started = time.perf_counter()
                subprocess.run(argv, check=True, capture_output=True, timeout=60)
                times[way].append((time.perf_counter() - started) * 1000)
        walks: list[float] = []
        for _ in range(starts):
            started = time.perf_counter()
            versions.view(bot)
            walks.append((time.perf_counter() - started) * 1000)
        source = sum(p.stat().st_size for p in (bot / "sample_bots").glob("*.py"))
    return {"source_kb": round(source / 1024), "masks": (len(masked) - len(ways["shown (before)"])) // 6,
            "walk_ms": round(statistics.median(walks), 2),
            "starts": [{"way": way, "starts": starts, "median_ms": round(statistics.median(t), 1),
                        "min_ms": round(min(t), 1), "max_ms": round(max(t), 1)} for way, t in times.items()]}


def _pycache_shown(argv: list[str]) -> list[str]:
    """A bubblewrap command without its masks of ``__pycache__`` (``--size 4096 --tmpfs P
    --remount-ro P``): what the sandbox showed before they were masked."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--size" and argv[i + 2] == "--tmpfs" and Path(argv[i + 3]).name == "__pycache__":
            i += 6
            continue
        out.append(argv[i])
        i += 1
    return out


async def measure(starts: int = 20) -> dict[str, Any]:
    unavailable = sandbox.probe()
    modes = [SandboxMode.NONE] + ([SandboxMode.BWRAP] if unavailable is None else [])
    with served.temporary_directory() as tmp:
        startup = await startups(modes, starts, Path(tmp) / "logs")
    return {"startup": startup, "bwrap_unavailable": unavailable,
            "pycache": pycache_cost(starts) if unavailable is None else None}
