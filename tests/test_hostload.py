"""An overloaded host (issue 24): the monitor's samples, the runner's mark on a timeout while the
host was overloaded, a run's account of it (store meta ``host``, one line of output); and, on
the real machine, real processes overloading it while a bot times out."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time

import pytest
from harness import PROTO_BOT, run_cli, write_tournament
from test_runner import ScriptedSeat

from referee import hostload
from referee.games import GAMES
from referee.games.base import Shoe
from referee.runner import Clock, run_match
from referee.tournament.store import Store


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


def _hang(decision, n):
    return asyncio.sleep(3600)


@pytest.mark.parametrize("runnable", [40, 2])
def test_a_timeout_while_the_host_is_overloaded_is_marked_so(tmp_path, monkeypatch, runnable):
    """A seat that never answers times out; with 40 runnable tasks on 2 cores its fault says the host
    was overloaded (detail, host_overloaded); with 2, nothing is said."""
    proc = FakeProc(tmp_path)
    proc.set(runnable)
    monkeypatch.setattr(hostload, "monitor", lambda: proc.monitor)
    watch = hostload.HostWatch(proc.monitor)
    links = [ScriptedSeat(policy=_hang), ScriptedSeat()]
    outcome = asyncio.run(run_match("g1", GAMES["aegis"], {}, Shoe(3), links, ["a", "b"], Clock(0.05, 0.05)))
    timeout = next(f for f in outcome.record["meta"]["faults"] if f["kind"] == "timeout")
    watch.played(outcome.record)
    if runnable == 40:
        assert timeout["host_overloaded"] is True
        assert timeout["detail"].startswith("no answer within 0.100 s (decision time + bank); the host was "
                                            "overloaded meanwhile (40 runnable tasks on 2 cores)")
        assert watch.summary()["timeouts_while_overloaded"] == 1
        assert "1 timeout(s) happened meanwhile, marked so in their faults" in watch.line()
    else:
        assert "host_overloaded" not in timeout and timeout["detail"] == "no answer within 0.100 s (decision " \
                                                                         "time + bank)"
        assert watch.summary()["timeouts_while_overloaded"] == 0 and watch.line() is None


def test_a_runs_account_of_the_host_counts_its_samples(tmp_path):
    proc = FakeProc(tmp_path)
    watch = hostload.HostWatch(proc.monitor)
    for runnable in (1, 1, 9, 12):  # two of four overloaded (more than 4 on 2 cores)
        proc.set(runnable)
        proc.monitor.sample()
    later = hostload.HostWatch(proc.monitor)  # a run started afterwards sees none of these
    assert watch.summary() == {"cores": 2, "overload_per_core": 2.0, "samples": 4, "overloaded_share": 0.5,
                               "most_runnable": 12, "timeouts_while_overloaded": 0}
    assert watch.line() == ("host: overloaded for 50% of the run (up to 12 runnable tasks on 2 cores): time "
                            "losses then are the host's fault, not the bots'")
    assert later.summary()["samples"] == 0 and later.line() is None


# --- the real machine ----------------------------------------------------------------------------


@pytest.mark.e2e
def test_on_a_really_overloaded_host_a_bots_timeout_is_marked_and_the_run_says_so(tmp_path):
    """Eight spinning processes per core (niced to 19: they crowd the run queue, not the other
    users) while a tournament plays in which one bot stops answering: its timeout is marked, the
    run's output says the host was overloaded, and the store keeps the account."""
    cores = len(os.sched_getaffinity(0))
    spinners = [subprocess.Popen(["nice", "-n", "19", "sh", "-c", "while :; do :; done"]) for _ in range(8 * cores)]
    try:
        bots = f"""
[clock]
decision_ms = 300
bank_ms = 300

[[bots]]
name = "hang"
command = ["python", "{PROTO_BOT}", "--mode", "hang"]
data = ["{PROTO_BOT}"]

[[bots]]
name = "random"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
"""
        path = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=1, seed=5, concurrency=2)
        time.sleep(hostload.SAMPLE_S * 2)
        done = run_cli("tournament", path, "--quiet", "--bootstrap", "20", cwd=tmp_path)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert done.returncode == 0, done.stderr
    store = Store(tmp_path / "out", create=False)
    faults = [f for row in store.matches() for f in store.record(row.key)["meta"]["faults"]]
    host = json.loads(store.meta("host"))
    store.close()
    timeouts = [f for f in faults if f["kind"] == "timeout"]
    assert len(timeouts) == 2 and all(f["host_overloaded"] for f in timeouts), timeouts
    assert all("the host was overloaded meanwhile" in f["detail"] for f in timeouts)
    assert host["timeouts_while_overloaded"] == 2 and host["overloaded_share"] > 0.5, host
    assert host["most_runnable"] >= 8 * cores and host["cores"] == cores
    line = next(x for x in done.stderr.splitlines() if x.startswith("host: overloaded for "))
    assert line.endswith("2 timeout(s) happened meanwhile, marked so in their faults: time losses then are the "
                         "host's fault, not the bots'"), line
