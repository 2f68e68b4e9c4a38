"""Is this machine overloaded? On an overloaded host, time losses are the host's fault, not the bot's.

A :class:`Monitor` samples, every :data:`SAMPLE_S` seconds in a thread of its own, the
machine's runnable tasks (``/proc/loadavg``) and, where the kernel has it, its CPU
pressure (``/proc/pressure/cpu``: the share of time some task waited for a CPU). Nothing
is read on a decision's path: the match runner asks :meth:`Monitor.since` only when a
decision has run out of time, and marks the timeout when the host was overloaded
meanwhile: more than :data:`OVERLOAD` runnable tasks per core, so that a runnable task got
less than half a core. A run keeps its account (:class:`HostWatch`): how long the host was
overloaded, how loaded at worst, how many timeouts happened meanwhile.

What it counts is the machine's: other users' work, the runner's, and the bots' own
processes too (a bot that spins in many processes overloads the host; its CPU share keeps
the other bots' decisions on time, docs/tournaments.md).
"""

from __future__ import annotations

import collections
import json
import os
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

SAMPLE_S = 0.25
OVERLOAD = 2.0  # runnable tasks per core past which the host is overloaded
KEEP = 4 * 60 * 10  # samples kept: the last ten minutes


@dataclass(frozen=True)
class Load:
    """The machine over a while: runnable tasks (on average, the sampler not counted), its cores,
    and the share of the time some task waited for a CPU (None where the kernel does not say)."""

    runnable: float
    cores: int
    pressure: float | None = None

    @property
    def overloaded(self) -> bool:
        return self.runnable > OVERLOAD * self.cores

    def describe(self) -> str:
        pressure = f", CPU pressure {self.pressure:.0%}" if self.pressure is not None else ""
        return f"{self.runnable:.0f} runnable tasks on {self.cores} cores{pressure}"


@dataclass(frozen=True)
class Sample:
    at: float  # time.monotonic()
    runnable: int
    stalled_us: int | None  # /proc/pressure/cpu's "some total", microseconds


class Monitor:
    """Samples the machine's load from ``loadavg`` and ``pressure`` (files as /proc has them)."""

    def __init__(self, loadavg: str = "/proc/loadavg", pressure: str = "/proc/pressure/cpu",
                 cores: int | None = None, period: float = SAMPLE_S):
        self.loadavg, self.pressure, self.period = loadavg, pressure, period
        self.cores = cores or len(os.sched_getaffinity(0))
        self.samples: collections.deque[Sample] = collections.deque(maxlen=KEEP)
        self.watches: weakref.WeakSet[HostWatch] = weakref.WeakSet()  # told of every sample
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> Monitor:
        """Sample from now on (once; a daemon thread)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="referee-hostload", daemon=True)
                self._thread.start()
        return self

    def _run(self) -> None:
        while True:
            self.sample()
            time.sleep(self.period)

    def sample(self) -> Sample:
        """Read the machine's load now, and keep it."""
        try:
            with open(self.loadavg) as f:
                runnable = max(0, int(f.read().split()[3].split("/")[0]) - 1)  # less the reader
        except (OSError, ValueError, IndexError):
            runnable = 0
        stalled = None
        try:
            with open(self.pressure) as f:
                stalled = int(f.readline().rsplit("total=", 1)[1])
        except (OSError, ValueError, IndexError):
            pass
        sample = Sample(time.monotonic(), runnable, stalled)
        with self._lock:
            self.samples.append(sample)
            watches = list(self.watches)
        for watch in watches:
            watch.seen(sample, runnable > OVERLOAD * self.cores)
        return sample

    def since(self, start: float) -> Load:
        """The load from ``start`` (``time.monotonic()``) until now: the samples taken meanwhile and
        one taken now."""
        self.sample()  # the one taken now: within is never empty
        with self._lock:
            within = [s for s in self.samples if start <= s.at]
            before = [s for s in self.samples if s.at < start]
        runnable = sum(s.runnable for s in within) / len(within)
        first, last = (before[-1] if before else within[0]), within[-1]
        pressure = None
        if first.stalled_us is not None and last.stalled_us is not None and last.at > first.at:
            pressure = min(1.0, (last.stalled_us - first.stalled_us) / 1e6 / (last.at - first.at))
        return Load(runnable, self.cores, pressure)


_MONITOR: Monitor | None = None
_MONITOR_LOCK = threading.Lock()


def monitor() -> Monitor:
    """This process's monitor, sampling from its first use."""
    global _MONITOR
    with _MONITOR_LOCK:
        if _MONITOR is None:
            _MONITOR = Monitor()
    return _MONITOR.start()


class HostWatch:
    """A run's account of the host: the monitor's samples from its start, and the timeouts its
    matches marked as happening on an overloaded host (from their records)."""

    def __init__(self, watched: Monitor | None = None):
        self.monitor = watched or monitor()
        self.samples = self.overloaded = self.most_runnable = self.timeouts = 0
        self._lock = threading.Lock()
        self.monitor.watches.add(self)

    def seen(self, sample: Sample, overloaded: bool) -> None:
        with self._lock:
            self.samples += 1
            self.overloaded += overloaded
            self.most_runnable = max(self.most_runnable, sample.runnable)

    def played(self, record: dict[str, Any]) -> None:
        """A match's record: count its timeouts marked as the host's."""
        marked = sum(1 for f in record.get("meta", {}).get("faults", ()) if f.get("host_overloaded"))
        with self._lock:
            self.timeouts += marked

    def summary(self) -> dict[str, Any]:
        """For the store's ``meta`` key ``host``."""
        with self._lock:
            share = self.overloaded / self.samples if self.samples else 0.0
            return {"cores": self.monitor.cores, "overload_per_core": OVERLOAD, "samples": self.samples,
                    "overloaded_share": round(share, 3), "most_runnable": self.most_runnable,
                    "timeouts_while_overloaded": self.timeouts}

    def to_json(self) -> str:
        return json.dumps(self.summary(), sort_keys=True)

    def line(self) -> str | None:
        """The run's one line about the host, when it was overloaded for a quarter of the run or
        while a decision timed out; else None."""
        s = self.summary()
        if not s["timeouts_while_overloaded"] and s["overloaded_share"] < 0.25:
            return None
        timeouts = s["timeouts_while_overloaded"]
        marked = f"; {timeouts} timeout(s) happened meanwhile, marked so in their faults" if timeouts else ""
        return (f"host: overloaded for {s['overloaded_share']:.0%} of the run (up to {s['most_runnable']} runnable "
                f"tasks on {s['cores']} cores){marked}: time losses then are the host's fault, not the bots'")
