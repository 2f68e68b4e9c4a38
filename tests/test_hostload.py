"""Whose time a timeout was (issue 24, issue 34 item 5): the bot's own processes measured as the
kernel counts their threads' time, the rule that says whether the bot was starved of CPU (the
host's time) or the time was its own, the machine's load as a fact, a run's account of both
(store meta ``host``, one line of output); and, on the real machine, real bot processes: a
slow bot and a sleeping one on an idle host, a hanging one on a busy host (their own), a bot
that would answer in time starved by processes on its CPU (the host's), and a slow bot starved
the same way (its own: it ran more CPU on the decision than its clock)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from harness import PROTO_BOT, require_sandbox, write_tournament
from test_runner import ScriptedSeat

from referee import hostload
from referee.games import GAMES
from referee.games.base import Shoe
from referee.hosting import sandbox
from referee.hosting.launcher import Launcher
from referee.hostload import Reading, Spent
from referee.model import BotSpec
from referee.results.store import Store
from referee.runner import Clock, run_match


class FakeProc:
    """/proc/loadavg and /proc/pressure/cpu as files the test writes."""

    def __init__(self, tmp_path, cores: int = 2):
        self.loadavg, self.pressure = tmp_path / "loadavg", tmp_path / "pressure"
        self.stalled_us = 0
        self.monitor = hostload.Monitor(str(self.loadavg), str(self.pressure), cores=cores)
        self.set(runnable=1)

    def set(self, runnable: int, stalled_us: int = 0) -> None:
        self.stalled_us += stalled_us
        self.loadavg.write_text(f"0.50 0.40 0.30 {runnable + 1}/300 4242\n")  # the reader is running too
        self.pressure.write_text(f"some avg10=0.00 avg60=0.00 avg300=0.00 total={self.stalled_us}\n"
                                 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


def test_the_load_over_a_while_is_the_mean_of_its_samples_and_its_cpu_pressure(tmp_path):
    proc = FakeProc(tmp_path)
    proc.monitor.sample()  # before the window: the pressure's baseline
    time.sleep(0.05)
    begin = time.monotonic()
    for runnable in (3, 5, 7):
        proc.set(runnable, stalled_us=10_000)
        proc.monitor.sample()
    proc.set(9, stalled_us=10_000)
    load = proc.monitor.since(begin)  # and a sample taken now
    assert load.runnable == (3 + 5 + 7 + 9) / 4 and load.cores == 2 and load.overloaded
    assert 0 < load.pressure <= 1  # 40 ms stalled since the baseline, over about 50 ms
    assert load.describe().startswith("6 runnable tasks on 2 cores, CPU pressure ")
    assert not hostload.Load(4, 2).overloaded and hostload.Load(4.5, 2).overloaded  # more than 2 per core
    assert hostload.Load(1, 4).describe() == "1 runnable tasks on 4 cores"  # no pressure file: not said
    (tmp_path / "pressure").unlink()
    assert proc.monitor.since(time.monotonic()).pressure is None


# --- the rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize("spent, hosts, why", [
    # over 0.45 s measured of a 0.5 s clock: CPU run, the longest wait of a thread, the referee's wait
    (Spent(0.45, 0.44, 0.00, 0.0, 0.5), False, "it had the CPU, its own time"),  # computed past its clock
    (Spent(0.45, 0.001, 0.0, 0.0, 0.5), False, "not waiting for a CPU, its own time"),  # slept
    (Spent(0.45, 0.24, 0.21, 0.0, 0.5), False, "it had the CPU, its own time"),  # half a CPU or more: its own
    (Spent(0.45, 0.45, 0.40, 0.0, 0.5), False, "it had the CPU, its own time"),  # its threads crowd each other
    (Spent(0.45, 0.09, 0.35, 0.0, 0.5), True, "starved, the host's time"),
    (Spent(0.45, 0.09, 0.10, 0.0, 0.5), False, "not waiting for a CPU, its own time"),  # slept, a little starved
    (Spent(0.45, 0.0, 0.0, 0.30, 0.5), True, "the referee starved (0.300 s waiting), the host's time"),
    (Spent(0.45, 0.09, 0.35, 0.0, 0.5, total=0.30), True,
     "starved, and 0.300 s of CPU on it in all, within its clock: the host's time"),
    (Spent(0.45, 0.09, 0.35, 0.0, 0.5, total=0.90), False,  # needed more than its clock: whatever the load
     "starved, and 0.900 s of CPU on it in all, more than its clock: its own time"),
    (Spent(0.45, 0.09, 0.35, 0.0, 0.5, lowered="nice 19"), False,  # it gave its CPU away itself
     "starved at a priority it lowered itself (nice 19), its own time"),
])
def test_whose_time_a_timeout_was(spent, hosts, why):
    assert spent.hosts is hosts and spent.why() == why
    assert spent.describe().startswith(f"the bot, over its last 0.450 s: CPU {spent.ran:.3f} s, longest wait for "
                                       f"one {spent.waited:.3f} s: ")


def test_a_reading_counts_threads_born_meanwhile_and_not_a_reused_id():
    first = Reading(10.0, {1: (100, 50), 2: (7_000_000_000, 10)}, (0, 0))
    later = Reading(10.5, {1: (200_000_100, 300_000_050), 2: (5, 5), 3: (100_000_000, 0)}, (0, 40_000_000))
    spent = later.since(first, clock=0.5)
    # thread 1: 0.2 s run, 0.3 s waited; thread 2 is another under a reused id: all its (tiny) time;
    # thread 3, born meanwhile: all its time
    assert spent == Spent(0.5, (200_000_000 + 5 + 100_000_000) / 1e9, 0.3, 0.04, 0.5)
    assert Reading(11.0, {}, None).since(Reading(10.0, {}, None), 0.5) is None  # nothing found: not measured


def test_a_reading_finds_every_thread_of_a_real_process_tree(tmp_path):
    """A process with a thread computing, a thread asleep, and a child computing: without cgroups,
    its tree (/proc's children) is what is read; each thread's counters are the kernel's."""
    script = tmp_path / "tree.py"
    script.write_text(
        "import subprocess, sys, threading, time\n"
        "def spin():\n"
        "    while True: pass\n"
        "threading.Thread(target=spin, daemon=True).start()\n"
        "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n"
        "child = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(3600)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        meter = hostload.BotCpu(lambda: hostload.tree_threads(parent.pid))
        first = meter.read()
        time.sleep(0.3)
        later = meter.read()
        threads = {int(t) for t in os.listdir(f"/proc/{parent.pid}/task")} | {child}
        assert set(later.threads) == threads and len(threads) == 4
        ran = {tid: later.threads[tid][0] - first.threads[tid][0] for tid in threads}
        asleep = min(ran, key=ran.get)
        assert ran[asleep] == 0  # the sleeping thread ran nothing
        assert ran[child] > 0 and sum(1 for n in ran.values() if n > 0) >= 2  # the two spinning ones ran
        assert later.since(first, 0.5).ran == sum(ran.values()) / 1e9
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, 9)
        parent.kill()
        parent.wait()


@pytest.mark.parametrize("prefix, lowered", [([], None), (["nice", "-n", "19"], "nice 19"),
                                             (["chrt", "--idle", "0"], "SCHED_IDLE")])
def test_a_bot_that_lowered_its_own_priority_is_told_apart(prefix, lowered):
    """A real process at the referee's priority, at nice 19, under SCHED_IDLE: a bot starved at a
    priority it lowered itself is starved by its own doing."""
    process = subprocess.Popen([*prefix, sys.executable, "-c", "print(1, flush=True); import time; time.sleep(3600)"],
                               stdout=subprocess.PIPE)
    try:
        process.stdout.readline()  # python runs: nice or chrt has done its work
        meter = hostload.BotCpu(lambda: hostload.tree_threads(process.pid))
        assert meter.lowered() == lowered
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("kind", ["none", "bwrap"])
def test_a_launched_bots_meter_reads_its_process_tree_without_cgroups(tmp_path, kind):
    """Without cgroups, the launcher reads a bot's threads from its process tree: in bubblewrap,
    through the sandbox's pid namespace (bubblewrap, its init, the bot)."""
    if kind == "bwrap":
        require_sandbox()
    box = sandbox.Sandbox(kind, False)
    own = tmp_path / "bot"
    own.mkdir()
    spec = BotSpec("a", ("python", "-c", "import time; time.sleep(3600)"), str(own))
    launcher = Launcher([spec], "unix:/nowhere", {"a": "t"}, {}, None, box=box)
    launcher.start_all()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = launcher.meter("a").read().threads
            if any(b"time.sleep(3600)" in Path(f"/proc/{tid}/cmdline").read_bytes() for tid in found
                   if Path(f"/proc/{tid}/cmdline").exists()):
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the bot's process not among the threads read: {found}")
        assert launcher.bots["a"].process.pid in found  # bubblewrap (or the bot) itself
        assert launcher.meter("someone else") is None  # a bot not launched here: not measured
    finally:
        launcher.stop_all()


# --- the runner's mark -----------------------------------------------------------------------------


def _hang(decision, n):
    return asyncio.sleep(3600)


class ScriptedMeter(hostload.BotCpu):
    """A bot's readings as the test gives them: the runner's first, at the timeout, at the match's end."""

    def __init__(self, *readings: Reading):
        super().__init__(lambda: ())
        self.readings = list(readings)
        self.asked = 0

    def read(self) -> Reading:
        self.asked += 1
        return self.readings.pop(0)


def _reading(at: float, ran: float, waited: float) -> Reading:
    return Reading(at, {7: (int(ran * 1e9), int(waited * 1e9))}, None)


def test_a_timeout_is_not_the_hosts_because_the_host_was_busy(tmp_path, monkeypatch):
    """A seat that never answers, on a host with 40 runnable tasks on 2 cores: the load is said as a
    fact; with no measure of the bot (not launched here), whose time it was is not said, and the
    timeout is not marked."""
    proc = FakeProc(tmp_path)
    proc.set(40)
    monkeypatch.setattr(hostload, "monitor", lambda: proc.monitor)
    watch = hostload.HostWatch(proc.monitor)
    links = [ScriptedSeat(policy=_hang), ScriptedSeat()]
    outcome = asyncio.run(run_match("g1", GAMES["aegis"], {}, Shoe(3), links, ["a", "b"], Clock(0.05, 0.05)))
    timeout = next(f for f in outcome.record["meta"]["faults"] if f["kind"] == "timeout")
    assert "host_overloaded" not in timeout and "cpu" not in timeout
    assert timeout["detail"] == ("no answer within 0.100 s (decision time + bank); its CPU not measured (a bot not "
                                 "launched here): whose is not said; host: 40 runnable tasks on 2 cores")
    watch.played(outcome.record)
    assert watch.summary()["timeouts_unmeasured"] == {"a": 1} and watch.summary()["timeouts_hosts"] == {}
    assert watch.line().endswith("; timeouts: 1 not measured (bots not launched here): whose is not said (a 1)")
    assert "host's" not in watch.line()


@pytest.mark.parametrize("total, hosts", [(0.3, True), (1.5, False)])
def test_a_starved_bot_is_the_hosts_unless_it_ran_more_cpu_on_the_decision_than_its_clock(total, hosts):
    """The runner's readings of a hanging seat's bot: starved over the measured part (0.1 s run, 0.8 s
    waited of 1 s); by the match's end 0.3 s of CPU in all on that decision (within its 1 s clock):
    the host's, marked; 1.5 s: its own."""
    meter = ScriptedMeter(_reading(0.0, 0.0, 0.0), _reading(1.0, 0.1, 0.8), _reading(2.0, total, 0.9))
    links = [ScriptedSeat(policy=_hang), ScriptedSeat()]
    outcome = asyncio.run(run_match("g1", GAMES["aegis"], {}, Shoe(3), links, ["a", "b"], Clock(0.5, 0.5),
                                    meters=[meter, None]))
    timeout = next(f for f in outcome.record["meta"]["faults"] if f["kind"] == "timeout")
    assert timeout.get("host_overloaded", False) is hosts
    assert timeout["cpu"] == {"over_s": 1.0, "ran_s": 0.1, "waited_s": 0.8, "referee_waited_s": 0.0, "total_s": total}
    within = "within its clock: the host's time" if hosts else "more than its clock: its own time"
    assert timeout["detail"].startswith(
        f"no answer within 1.000 s (decision time + bank); the bot, over its last 1.000 s: CPU 0.100 s, longest "
        f"wait for one 0.800 s: starved, and {total:.3f} s of CPU on it in all, {within}; host: ")
    told = links[0].substitutions[0].reason  # the bot was told what was known at the timeout
    assert "starved, the host's time" in told
    assert meter.readings == []  # three readings: at 10% of the decision time, at the timeout, at the end


def test_a_decision_answered_in_time_costs_no_reading():
    meter = ScriptedMeter()
    outcome = asyncio.run(run_match("g1", GAMES["aegis"], {}, Shoe(3), [ScriptedSeat(), ScriptedSeat()], ["a", "b"],
                                    Clock(0.5, 0.5), meters=[meter, meter]))
    assert outcome.faults == [] and meter.asked == 0


def test_a_runs_account_of_the_host_counts_its_samples_and_whose_its_timeouts_were(tmp_path):
    proc = FakeProc(tmp_path)
    watch = hostload.HostWatch(proc.monitor)
    for runnable in (1, 1, 9, 12):  # two of four overloaded (more than 4 on 2 cores)
        proc.set(runnable, stalled_us=125_000)
        proc.monitor.sample()
    later = hostload.HostWatch(proc.monitor)  # a run started afterwards sees none of these
    summary = watch.summary()
    assert 0 < summary.pop("cpu_pressure") <= 1
    assert summary == {"cores": 2, "overload_per_core": 2.0, "samples": 4, "overloaded_share": 0.5,
                       "most_runnable": 12, "timeouts_hosts": {}, "timeouts_own": {}, "timeouts_unmeasured": {}}
    assert watch.line().startswith("host: more than 2 runnable tasks per core for 50% of the run (at most 12 on 2 "
                                   "cores), CPU pressure ")
    assert "fault" not in watch.line() and "timeout" not in watch.line()  # a measure, no blame
    assert later.summary()["samples"] == 0 and later.line() is None
    faults = [{"kind": "timeout", "seat": 0, "cpu": {}}, {"kind": "timeout", "seat": 1, "cpu": {}},
              {"kind": "timeout", "seat": 1, "cpu": {}, "host_overloaded": True}, {"kind": "illegal", "seat": 0}]
    watch.played({"seats": ["slow", "starved"], "meta": {"faults": faults}})
    watch.played({"seats": ["slow", "x"], "meta": {"faults": [{"kind": "timeout", "seat": 0, "cpu": {}}]}})
    assert watch.summary()["timeouts_own"] == {"slow": 2, "starved": 1}
    assert watch.line().endswith("; timeouts: 1 the host's (the bot or the referee starved of CPU: marked "
                                 "host_overloaded) (starved 1), 3 the bots' own (slow 2, starved 1)")


# --- the real machine ----------------------------------------------------------------------------

CLOCK = """
[clock]
decision_ms = 500
bank_ms = 0
"""


def _bot(name: str, *args: str) -> str:
    return f"""
[[bots]]
name = "{name}"
command = ["python", "{PROTO_BOT}", {", ".join(json.dumps(a) for a in args)}]
data = ["{PROTO_BOT}"]
"""


RANDOM = """
[[bots]]
name = "random"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
"""


@contextlib.contextmanager
def spinning(count: int, cpu: int | None = None, nice: int = 0, prefix: Sequence[str] = ()):
    """``count`` processes spinning (on CPU ``cpu`` alone, given one; at ``nice``; run by the
    command ``prefix``) until the block ends."""
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    spinners = [subprocess.Popen([*prefix, *pin, "nice", "-n", str(nice), "sh", "-c", "while :; do :; done"])
                for _ in range(count)]
    try:
        time.sleep(hostload.SAMPLE_S * 2)
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


@contextlib.contextmanager
def first_in_line():
    """Yields a command prefix that runs a command in a cgroup v1 ``cpu`` group of the highest weight
    (as root): what runs in it (a run, its bots, spinners) gets a CPU before the other work of a
    shared machine, as if alone on the host. Where no group can be made, no prefix (the host is
    what it is)."""
    parent = sandbox.cpu_parent()
    if parent is None:
        yield []
        return
    group = parent / f"test-first-in-line-{os.getpid()}"
    group.mkdir()
    (group / "cpu.shares").write_text("262144")
    try:
        yield ["sh", "-c", f'echo $$ > {group / "cgroup.procs"} && exec "$@"', "sh"]
    finally:
        for _ in range(100):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def _tournament(tmp_path: Path, tables: str, prefix: Sequence[str] = ()) -> tuple[str, list, dict]:
    """Play the tournament (aegis, one match at a time); its stderr, its records' (seats, timeout)
    pairs and the store's account of the host."""
    path = write_tournament(tmp_path / "t.toml", CLOCK + tables, game="aegis", deal_sets=1, seed=5,
                            concurrency=1)
    done = subprocess.run([*prefix, sys.executable, "-m", "referee", "tournament", str(path), "--quiet",
                           "--bootstrap", "0"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    store = Store(tmp_path / "out", create=False)
    timeouts = [(record["seats"], f) for record in (store.record(row.key) for row in store.matches())
                for f in record["meta"]["faults"] if f["kind"] == "timeout"]
    host = json.loads(store.meta("host"))
    store.close()
    return done.stderr, timeouts, host


def _host_line(stderr: str) -> str:
    return next(x for x in stderr.splitlines() if x.startswith("host: "))


@pytest.mark.e2e
def test_a_slow_bot_and_a_sleeping_bot_on_an_idle_host_time_out_on_their_own(tmp_path):
    """A bot that computes 1 s of CPU a decision on a 500 ms clock, the host its own (first in line
    for a CPU): its timeouts are its own, it had the CPU. A bot that sleeps 1 s a decision: its own,
    it was not waiting for a CPU. Nothing marked; the run's line says so, no host's fault."""
    with first_in_line() as prefix:
        stderr, timeouts, host = _tournament(tmp_path, _bot("slow", "--mode", "burn", "--cpu", "1.0")
                                             + _bot("sleepy", "--mode", "late", "--sleep", "1.0"), prefix)
    assert len(timeouts) == 4, timeouts  # each, once in each of the two matches (it plays by default then)
    for seats, fault in timeouts:
        bot, cpu = seats[fault["seat"]], fault["cpu"]
        assert "host_overloaded" not in fault, fault
        if bot == "slow":
            assert cpu["ran_s"] >= cpu["over_s"] / 2 and "it had the CPU, its own time" in fault["detail"], fault
        else:
            assert cpu["ran_s"] < cpu["over_s"] / 2 and cpu["waited_s"] < cpu["over_s"] / 2, fault
            assert "not waiting for a CPU, its own time" in fault["detail"], fault
    assert host["timeouts_own"] == {"sleepy": 2, "slow": 2} and host["timeouts_hosts"] == {}, host
    line = _host_line(stderr)
    assert line.endswith("; timeouts: 4 the bots' own (sleepy 2, slow 2)") and "host's" not in line, line


@pytest.mark.e2e
def test_on_a_busy_host_a_hanging_bots_timeouts_are_still_its_own(tmp_path):
    """Eight spinning processes per core (niced to 19: they crowd the run queue, not the other
    users) while a bot stops answering: the host was overloaded, and the run and the faults say
    so as measured, but the bot was not waiting for a CPU: its timeouts are its own, not marked."""
    cores = len(os.sched_getaffinity(0))
    with spinning(8 * cores, nice=19):
        stderr, timeouts, host = _tournament(tmp_path, _bot("hang", "--mode", "hang") + RANDOM)
    assert len(timeouts) == 2 and not any("host_overloaded" in f for _, f in timeouts), timeouts
    assert all("not waiting for a CPU, its own time; host: " in f["detail"] for _, f in timeouts), timeouts
    assert host["timeouts_own"] == {"hang": 2} and host["overloaded_share"] > 0.5, host
    assert host["most_runnable"] >= 8 * cores and host["cores"] == cores
    line = _host_line(stderr)
    assert line.startswith("host: more than 2 runnable tasks per core for ") and "host's" not in line, line
    assert line.endswith("; timeouts: 2 the bots' own (hang 2)"), line


@pytest.mark.e2e
def test_a_bot_starved_of_cpu_times_out_on_the_hosts_time(tmp_path):
    """A bot that needs 0.3 s of CPU a decision (within its 500 ms clock), bound to one CPU with
    eight processes spinning there (the run and the spinners first in line, so that this crowding
    is what the bot meets, whatever else the machine runs): it waits for the CPU more than it
    runs, its timeouts are the host's, marked so, and the run says whose."""
    cpu = min(os.sched_getaffinity(0))
    with first_in_line() as prefix, spinning(8, cpu=cpu, prefix=prefix):
        stderr, timeouts, host = _tournament(tmp_path, _bot("starved", "--mode", "burn", "--cpu", "0.3",
                                                            "--pin", str(cpu)) + RANDOM, prefix)
    assert len(timeouts) == 2, timeouts
    for _, fault in timeouts:
        cpu_spent = fault["cpu"]
        assert fault["host_overloaded"] is True, fault
        assert cpu_spent["waited_s"] >= cpu_spent["over_s"] / 2 > cpu_spent["ran_s"], fault
        assert cpu_spent["total_s"] <= 0.5 and "the host's time; host: " in fault["detail"], fault
    assert host["timeouts_hosts"] == {"starved": 2} and host["timeouts_own"] == {}, host
    assert _host_line(stderr).endswith("; timeouts: 2 the host's (the bot or the referee starved of CPU: marked "
                                       "host_overloaded) (starved 2)")


@pytest.mark.e2e
def test_a_slow_bot_starved_of_cpu_is_late_on_its_own_time(tmp_path):
    """The same CPU crowding, but the bot needs 1 s of CPU a decision: starved at its timeout, but by
    its late answer (its opponent takes 0.2 s a decision, so the match goes on) it has run more
    CPU on the decision than its clock: late whatever the load, its own time."""
    cpu = min(os.sched_getaffinity(0))
    with first_in_line() as prefix, spinning(8, cpu=cpu, prefix=prefix):
        stderr, timeouts, host = _tournament(
            tmp_path, _bot("slow", "--mode", "burn", "--cpu", "1.0", "--pin", str(cpu))
            + _bot("patient", "--mode", "late", "--sleep", "0.2"), prefix)
    assert len(timeouts) == 2 and all(seats[f["seat"]] == "slow" for seats, f in timeouts), timeouts
    for _, fault in timeouts:
        assert "host_overloaded" not in fault and fault["cpu"].get("total_s", 0) > 0.5, fault
        assert fault["cpu"]["waited_s"] >= fault["cpu"]["over_s"] / 2, fault  # starved at its timeout
        assert "more than its clock: its own time" in fault["detail"], fault
    assert host["timeouts_own"] == {"slow": 2} and host["timeouts_hosts"] == {}, host
    assert "host's" not in _host_line(stderr)
