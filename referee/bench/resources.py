"""Section 8 of the bench: what a bot's CPU share and its bounded writable space do.

- **CPU fairness**: a small tournament on a tight clock (200 ms a decision, a 1 s bank)
  of three bots, the victim a random bot; once with an honest third bot (the control),
  once with that bot (:mod:`referee.bench.spinner`) running ``SPINNERS`` spinning
  processes, each in a session of its own, from its first decision to the end: the
  victim's slowest and mean decision, its decisions over time and its timeouts, in both.
  In the sandbox, each bot's process tree has its CPU share (cgroup cpu) where one can
  be made: without, the attack stands (the table says so);
- **writable space**: for a few ``file_mb``, the two tmpfs a sandboxed bot may write
  (size, inodes), what an empty file with a long name costs the kernel (measured in the
  real sandbox, in a memory cgroup, where one can be made), and the budget it gives;
- **start**: what the prelude's mounts add to a sandboxed process's start.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from referee.bench import served
from referee.competition import config as tconfig
from referee.competition import run as trun
from referee.hosting import sandbox
from referee.model import Limits, SandboxMode
from referee.results.store import MetaKey, Store
from referee.runner import FaultKind

SPINNERS = 240
CLOCK_MS = (200, 1000)
FILE_MBS = (64, 256)
INODE_FILES = 8000  # empty files made to measure one's kernel memory (within file_mb 64's inodes)

TOURNAMENT = """
[tournament]
game = "aegis"
deal_sets = 4
seed = 17
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
name = "third"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
cwd = "{root}"

[[bots]]
name = "spinner"
command = ["python", "-m", "referee.bench.spinner", "--spinners", "{spinners}"]
cwd = "{root}"
processes = {processes}
"""


def victim_times(out: Path, name: str = "victim") -> dict[str, Any]:
    """The bot's decisions over the run's records: slowest and mean (ms), how many went past the
    decision time, its timeouts."""
    store = Store(out, create=False)
    try:
        answered = total = slowest = over = timeouts = 0
        for row in (r for r in store.matches() if name in r.lineup):
            record = store.record(row.key)
            assert record is not None  # the key of a stored match
            seat = row.lineup.index(name)
            times = record["meta"]["decision_times"][seat]
            answered += times["answered"]
            total += times["total_s"]
            slowest = max(slowest, times["slowest_s"])
            over += times["over_decision_time"]
            timeouts += row.faults[seat].get(FaultKind.TIMEOUT, 0)
        sandbox_line = store.meta(MetaKey.SANDBOX) or ""
    finally:
        store.close()
    return {"decisions": answered, "slowest_ms": round(slowest * 1000, 1),
            "mean_ms": round(total / answered * 1000, 2) if answered else None,
            "over_decision_time": over, "timeouts": timeouts, "cpu_share": "CPU: a share per seat" in sandbox_line}


async def fairness(workdir: Path) -> list[dict[str, Any]]:
    """The control (no spinner), then SPINNERS spinners."""
    rows = []
    for spinners in (0, SPINNERS):
        folder = workdir / f"spin-{spinners}"
        folder.mkdir()
        path = folder / "t.toml"
        path.write_text(TOURNAMENT.format(decision=CLOCK_MS[0], bank=CLOCK_MS[1], root=served.ROOT, spinners=spinners,
                                          processes=SPINNERS + 64))
        cfg = tconfig.load(path)
        store = trun.open_store(cfg)
        try:
            started = time.perf_counter()
            await trun.run(cfg, store)
            seconds = time.perf_counter() - started
        finally:
            store.close()
        rows.append({"spinners": spinners, "seconds": round(seconds, 1), **victim_times(cfg.output)})
    return rows


# in the sandbox: wait, make INODE_FILES empty files with long names in /tmp, wait (the bench
# reads the memory group's usage at each wait)
INODES = """
import os, sys
print("before", flush=True); sys.stdin.readline()
for n in range({files}):
    os.close(os.open("/tmp/" + "i" * 200 + str(n), os.O_CREAT | os.O_WRONLY))
print("after", flush=True); sys.stdin.readline()
"""


def inode_cost() -> tuple[float | None, str]:
    """Bytes of kernel memory per empty file (a 200-character name) in a sandboxed bot's scratch,
    from its memory group's usage; None (and why) where it cannot be measured."""
    if sandbox.probe() is not None or sandbox.cgroup_parents() is None:
        return None, "not measured: needs bubblewrap and a memory cgroup"
    box = sandbox.resolve(SandboxMode.BWRAP)
    tree = sandbox.ProcessTree.make(f"referee-bench-inodes-{id(box)}", Limits())
    if tree is None:
        return None, "not measured: no cgroup could be made here"
    command = sandbox.bwrap_command([sys.executable, "-c", INODES.format(files=INODE_FILES)], cwd=Path("/"),
                                    socket_dir=None, scratch_mb=64, staged=box.staged)
    usage = next(d for d in tree.dirs if tree.has("memory") and (d / "memory.usage_in_bytes").exists())
    proc = subprocess.Popen(sandbox.limited(command, Limits(), tree, None, scratch_mb=64, staged=box.staged),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None  # both pipes
    try:
        seen: list[int] = []
        for _ in ("before", "after"):
            proc.stdout.readline()
            seen.append(int((usage / "memory.usage_in_bytes").read_text()))
            proc.stdin.write("\n")
            proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        tree.remove()
    return (seen[1] - seen[0]) / INODE_FILES, f"measured: {INODE_FILES} empty files in a sandboxed bot's scratch"


def writable() -> dict[str, Any]:
    cost, how = inode_cost()
    per_file = cost if cost is not None else sandbox.INODE_KB * 1024
    rows = []
    for mb in FILE_MBS:
        space = sandbox.Writable.of(mb)
        rows.append({"file_mb": mb, "tmpfs_mb": space.mb, "inodes": space.inodes,
                     "inodes_kernel_mb": round(space.inodes * per_file / 2**20, 1),
                     "budget_mb": round(2 * (space.mb + space.inodes * per_file / 2**20), 1),
                     "stated_budget_mb": round(space.budget_mb, 1)})
    return {"bytes_per_inode": round(cost) if cost is not None else None, "how": how,
            "stated_bytes_per_inode": round(sandbox.INODE_KB * 1024), "rows": rows}


STARTS = 30


def start_costs() -> list[dict[str, Any]] | None:
    """A sandboxed ``true``, ``STARTS`` times each way in turn: bubblewrap alone; through the prelude
    (which also refuses memfd and SysV IPC here: no memory group) with bubblewrap's own tmpfs; through
    the prelude mounting the tmpfs with their inode counts and the overlays of what the bot sees; and,
    as root, under a uid of its own too (as a bot starts: its user namespace, and the prelude again
    inside, which becomes that uid). Median and range, ms."""
    if sandbox.probe() is not None:
        return None
    plain = sandbox.bwrap_command(["true"], cwd=Path("/"), socket_dir=None, scratch_mb=64)
    staged = sandbox.bwrap_command(["true"], cwd=Path("/"), socket_dir=None, scratch_mb=64, staged=True)
    ways = {"bubblewrap alone": plain,
            "prelude, bubblewrap's tmpfs": sandbox.limited(plain, Limits(), None, None, scratch_mb=64),
            "prelude, its tmpfs and overlays": sandbox.limited(staged, Limits(), None, None, scratch_mb=64,
                                                               staged=True, own_uid=False)}
    if os.getuid() == 0:
        ways["prelude, tmpfs, overlays, a uid of its own"] = sandbox.limited(staged, Limits(), None, None,
                                                                             scratch_mb=64, staged=True)
    times: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(STARTS):
        for way, command in ways.items():
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times[way].append((time.perf_counter() - started) * 1000)
    return [{"way": way, "starts": STARTS, "median_ms": round(sorted(t)[len(t) // 2], 1),
             "min_ms": round(min(t), 1), "max_ms": round(max(t), 1)} for way, t in times.items()]


def measure() -> dict[str, Any]:
    with served.temporary_directory() as tmp:
        return {"fairness": asyncio.run(fairness(Path(tmp))), "writable": writable(), "starts": start_costs(),
                "sandbox": sandbox.resolve(SandboxMode.AUTO).describe()}
