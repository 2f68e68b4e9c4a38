"""Whose time was it? When a decision times out, the bot's own processes and the machine say
whether the bot was starved of CPU (the host's time) or the time was its own.

**The bot** (:class:`BotCpu`): every thread of a launched bot's processes, as the kernel counts
its time in ``/proc/TID/schedstat``: the CPU time it ran, and the time it was runnable but
waited for a CPU. The match runner reads them (and its own event loop thread's) only in a
decision that runs long: :data:`PROBE_AT` of its decision time after the request, then at the
timeout; what lies between is the measured part, judged so (:class:`Spent`, :data:`STARVED`):

- **the host's** (the fault is marked ``host_overloaded``) when the bot was starved: one of its
  threads waited for a CPU at least half the measured time while all of them together ran
  less than half of it, and none runs at a priority it lowered itself (a higher nice than the
  referee's, ``SCHED_IDLE``); or when the referee was: its event loop thread waited at least half.
  Unless the bot, by its late answer or the match's end, has run more CPU on that decision
  than its clock (decision time + bank): then it would have been late whatever the load;
- **the bot's own** otherwise: it had the CPU (it ran half the measured time or more), or it
  was not waiting for one (it slept, waited for a disk, a lock or the network, or was stopped);
- **not measured** (no mark, whose is not said) for a bot that no launcher of this process
  started (an external bot, every bot of a ``referee serve`` or of a remote referee).

**The machine** (:class:`Monitor`): every :data:`SAMPLE_S` seconds, in a thread of its own, its
runnable tasks (``/proc/loadavg``) and, where the kernel has it, its CPU pressure
(``/proc/pressure/cpu``: the share of time some task waited for a CPU). What it counts is the
machine's: other users' work, the runner's and the bots' own. A timeout's detail gives it as a
fact, no verdict; a run keeps its account (:class:`HostWatch`): how long more than
:data:`OVERLOAD` tasks per core were runnable, how many at most, the CPU pressure over the run,
and its timeouts by whose they were.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

SAMPLE_S = 0.25
OVERLOAD = 2.0  # runnable tasks per core past which the host is overloaded
KEEP = 4 * 60 * 10  # samples kept: the last ten minutes
#: a run's host line is printed when its host was overloaded for this share of it (or a decision timed out)
BUSY_SHARE = 0.25
#: the share of a decision's time after which the runner takes the bot's first reading (a decision
#: answered sooner costs no reading); what follows, to the timeout, is the measured part
PROBE_AT = 0.1
#: a thread waiting for a CPU this share of the measured time, the bot running less than it: starved
STARVED = 0.5


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


# --- the bot's own time ------------------------------------------------------------------------


def _schedstat(path: str) -> tuple[int, int] | None:
    """A thread's nanoseconds run on a CPU and waited for one (``/proc/.../schedstat``), None if gone."""
    try:
        with open(path, "rb") as f:
            ran, waited = f.read().split()[:2]
        return int(ran), int(waited)
    except (OSError, ValueError):
        return None


def tree_threads(pid: int) -> Iterator[int]:
    """The threads of process ``pid`` and of its descendants (their ids), as /proc finds them now
    (a process that left the tree, by a double fork, is not among them)."""
    todo = [pid]
    while todo:
        process = todo.pop()
        try:
            threads = os.listdir(f"/proc/{process}/task")
        except OSError:
            continue
        for tid in threads:
            yield int(tid)
            try:
                with open(f"/proc/{process}/task/{tid}/children", "rb") as f:
                    todo += map(int, f.read().split())
            except (OSError, ValueError):
                pass


@dataclass(frozen=True)
class Reading:
    """A bot's threads' counters at one moment (``time.monotonic()``): per thread id, nanoseconds run
    and waited for a CPU; and the reader's own thread's (the referee's event loop)."""

    at: float
    threads: dict[int, tuple[int, int]]
    referee: tuple[int, int] | None

    def since(self, first: Reading, clock: float) -> Spent | None:
        """What the bot spent from ``first`` to this reading, in a decision of ``clock`` seconds
        (decision time + bank); None if neither reading found a thread of it."""
        if not self.threads and not first.threads:
            return None
        ran = waited = 0
        for tid, (run_ns, wait_ns) in self.threads.items():
            run0, wait0 = first.threads.get(tid, (0, 0))  # a thread started meanwhile: all its time
            if run_ns < run0 or wait_ns < wait0:  # another thread under a reused id
                run0 = wait0 = 0
            ran += run_ns - run0
            waited = max(waited, wait_ns - wait0)
        referee = self.referee[1] - first.referee[1] if self.referee and first.referee else 0
        return Spent(self.at - first.at, ran / 1e9, waited / 1e9, max(0, referee) / 1e9, clock)


class BotCpu:
    """A launched bot's processes, read as the kernel counts their threads' time. ``threads``: the
    ids of its threads now (its cgroup's, or its process tree's, :func:`tree_threads`)."""

    def __init__(self, threads: Callable[[], Iterable[int]]):
        self.threads = threads

    def read(self) -> Reading:
        """Its threads' counters now, and the calling thread's (never raises: what is gone is left out)."""
        found = {}
        try:
            tids = list(self.threads())
        except (OSError, ValueError):
            tids = []
        for tid in tids:
            if (counts := _schedstat(f"/proc/{tid}/schedstat")) is not None:
                found[tid] = counts
        return Reading(time.monotonic(), found, _schedstat("/proc/thread-self/schedstat"))

    def spent(self, first: Reading, clock: float) -> Spent | None:
        """What it spent from ``first`` until now (:meth:`Reading.since`); if it was starved, with
        the priority it lowered itself, if it did (:meth:`lowered`)."""
        spent = self.read().since(first, clock)
        if spent is not None and spent.starved:
            spent = dataclasses.replace(spent, lowered=self.lowered())
        return spent

    def lowered(self) -> str | None:
        """``nice N`` or ``SCHED_IDLE`` if a thread of the bot runs at a lower priority than the calling
        thread (which the bot can do, and which starves it on a busy host by its own doing); else None."""
        mine = _priority("/proc/thread-self/stat")
        try:
            tids = list(self.threads())
        except (OSError, ValueError):
            return None
        for tid in tids:
            theirs = _priority(f"/proc/{tid}/stat")
            if mine is None or theirs is None:
                continue
            if theirs[1] == SCHED_IDLE != mine[1]:
                return "SCHED_IDLE"
            if theirs[0] > mine[0]:
                return f"nice {theirs[0]}"
        return None


SCHED_IDLE = 5  # the scheduling policy of a thread that runs only when nothing else wants a CPU


def _priority(path: str) -> tuple[int, int] | None:
    """A thread's nice value and scheduling policy (``/proc/.../stat``), None if gone."""
    try:
        with open(path, "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[16]), int(fields[38])
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Spent:
    """A bot over the measured part of a decision that timed out (``over`` seconds, to the timeout):
    the CPU all its threads ran, the longest any of them waited for a CPU, how long the referee's
    own thread waited; the decision's ``clock`` (decision time + bank); and, once known, the CPU
    the bot ran on it in all (``total``: by its late answer or the match's end, from the first reading)."""

    over: float
    ran: float
    waited: float
    referee_waited: float
    clock: float
    total: float | None = None
    lowered: str | None = None  # starved at a priority it lowered itself: "nice 19", "SCHED_IDLE"

    @property
    def starved(self) -> bool:
        """The bot wanted a CPU and did not get it: a thread of it waited at least half the time,
        and it ran less than half."""
        return self.waited >= STARVED * self.over and self.ran < STARVED * self.over

    @property
    def referee_starved(self) -> bool:
        return self.referee_waited >= STARVED * self.over

    @property
    def past_clock(self) -> bool:
        """It ran more CPU on the decision than its clock: late whatever the load."""
        return self.total is not None and self.total > self.clock

    @property
    def hosts(self) -> bool:
        """The time lost is the host's: the bot (at a priority it did not lower itself), or the
        referee, was starved of CPU, and the bot did not run more CPU on the decision than its clock."""
        return ((self.starved and not self.lowered) or self.referee_starved) and not self.past_clock

    def why(self) -> str:
        bot_starved = self.starved and not self.lowered
        if not (bot_starved or self.referee_starved):
            if self.starved:
                return f"starved at a priority it lowered itself ({self.lowered}), its own time"
            if self.ran >= STARVED * self.over:
                return "it had the CPU, its own time"
            return "not waiting for a CPU, its own time"
        who = "starved" if bot_starved else f"the referee starved ({self.referee_waited:.3f} s waiting)"
        if self.total is None:
            return f"{who}, the host's time"
        within = "more than" if self.past_clock else "within"
        whose = "its own time" if self.past_clock else "the host's time"
        return f"{who}, and {self.total:.3f} s of CPU on it in all, {within} its clock: {whose}"

    def describe(self) -> str:
        return (f"the bot, over its last {self.over:.3f} s: CPU {self.ran:.3f} s, longest wait for one "
                f"{self.waited:.3f} s: {self.why()}")

    def to_dict(self) -> dict[str, float]:
        """For the fault's ``cpu`` key."""
        out = {"over_s": round(self.over, 3), "ran_s": round(self.ran, 3), "waited_s": round(self.waited, 3),
               "referee_waited_s": round(self.referee_waited, 3)}
        if self.total is not None:
            out["total_s"] = round(self.total, 3)
        return out


class HostWatch:
    """A run's account of the host: the monitor's samples from its start (runnable tasks, CPU
    pressure), and its matches' timeouts by whose they were (from their records)."""

    def __init__(self, watched: Monitor | None = None):
        self.monitor = watched or monitor()
        self.samples = self.overloaded = self.most_runnable = 0
        #: the timeouts by whose they were ("hosts", "own", "unmeasured"), and of which bot
        self.timeouts: dict[str, collections.Counter[str]] = {w: collections.Counter() for w in WHOSE}
        self._first: Sample | None = None  # the first and the last sample with a CPU pressure
        self._last: Sample | None = None
        self._lock = threading.Lock()
        self.monitor.watches.add(self)

    def seen(self, sample: Sample, overloaded: bool) -> None:
        with self._lock:
            self.samples += 1
            self.overloaded += overloaded
            self.most_runnable = max(self.most_runnable, sample.runnable)
            if sample.stalled_us is not None:
                self._first, self._last = self._first or sample, sample

    def played(self, record: dict[str, Any]) -> None:
        """A match's record: count its timeouts, the host's (marked), the bots' own (measured, not
        marked) and those not measured, by bot."""
        seats = record.get("seats") or []
        with self._lock:
            for fault in record.get("meta", {}).get("faults", ()):
                if fault.get("kind") == "timeout":
                    whose = "hosts" if fault.get("host_overloaded") else "own" if "cpu" in fault else "unmeasured"
                    seat = fault.get("seat", -1)
                    self.timeouts[whose][seats[seat] if 0 <= seat < len(seats) else "?"] += 1

    def pressure(self) -> float | None:
        """The share of the run's time some task waited for a CPU (None where the kernel does not say)."""
        first, last = self._first, self._last
        if first is None or last is None or last.at <= first.at:
            return None
        assert first.stalled_us is not None and last.stalled_us is not None  # seen() keeps only such samples
        return min(1.0, (last.stalled_us - first.stalled_us) / 1e6 / (last.at - first.at))

    def summary(self) -> dict[str, Any]:
        """For the store's ``meta`` key ``host``."""
        with self._lock:
            share = self.overloaded / self.samples if self.samples else 0.0
            pressure = self.pressure()
            return {"cores": self.monitor.cores, "overload_per_core": OVERLOAD, "samples": self.samples,
                    "overloaded_share": round(share, 3), "most_runnable": self.most_runnable,
                    "cpu_pressure": None if pressure is None else round(pressure, 3),
                    **{f"timeouts_{whose}": dict(sorted(self.timeouts[whose].items())) for whose in WHOSE}}

    def to_json(self) -> str:
        return json.dumps(self.summary(), sort_keys=True)

    def line(self) -> str | None:
        """The run's one line about the host, when a decision timed out or the host was overloaded
        for :data:`BUSY_SHARE` of the run; else None. It says what was measured, and whose each
        timeout was by the rule of :class:`Spent`, by bot."""
        s = self.summary()
        counted = {whose: sum(s[f"timeouts_{whose}"].values()) for whose in WHOSE}
        if not any(counted.values()) and s["overloaded_share"] < BUSY_SHARE:
            return None
        pressure = f", CPU pressure {s['cpu_pressure']:.0%}" if s["cpu_pressure"] is not None else ""
        line = (f"host: more than {OVERLOAD:g} runnable tasks per core for {s['overloaded_share']:.0%} of the run "
                f"(at most {s['most_runnable']} on {s['cores']} cores){pressure}")
        if not any(counted.values()):
            return line
        parts = [f"{counted[whose]} {WHOSE[whose]} ({_by_bot(s[f'timeouts_{whose}'])})"
                 for whose in WHOSE if counted[whose]]
        return f"{line}; timeouts: {', '.join(parts)}"


#: the timeouts of a run's account, and what its line calls them
WHOSE = {"hosts": "the host's (the bot or the referee starved of CPU: marked host_overloaded)",
         "own": "the bots' own",
         "unmeasured": "not measured (bots not launched here): whose is not said"}
#: the most bots a host line names for each kind of timeout
NAMED = 5


def _by_bot(counts: dict[str, int]) -> str:
    """``a 3, b 1``: the bots with the most first, at most :data:`NAMED` of them."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    named = ", ".join(f"{name} {n}" for name, n in ranked[:NAMED])
    return named + (f" and {len(ranked) - NAMED} more" if len(ranked) > NAMED else "")
