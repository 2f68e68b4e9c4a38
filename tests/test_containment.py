"""Launched bots are contained (limits, capped logs, restarts, skipping) and a
tournament stops cleanly on SIGTERM, leaving no process behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from harness import run_cli, write_tournament

from referee.results.store import Store

pytestmark = pytest.mark.e2e


def tournament_file(tmp: Path, bots: str, deal_sets: int = 2, limits: str = "", output: str = "out",
                    clock: tuple[int, int] = (1000, 2000)) -> Path:
    tables = (f"\n[clock]\ndecision_ms = {clock[0]}\nbank_ms = {clock[1]}\n\n[limits]\n{limits}\n"
              + textwrap.dedent(bots))
    return write_tournament(tmp / "t.toml", tables, game="aegis", deal_sets=deal_sets, seed=3, concurrency=2,
                            output=output)


def run(path: Path) -> subprocess.CompletedProcess:
    return run_cli("tournament", path, "--quiet", "--bootstrap", "100")


GOOD = """
    [[bots]]
    name = "good"
    command = ["python", "-m", "sample_bots.random", "--seed", "1"]
"""


def bot_script(tmp: Path, name: str, body: str) -> str:
    path = tmp / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_a_bot_that_keeps_dying_is_restarted_then_skipped_with_the_reason(tmp_path):
    crasher = bot_script(tmp_path, "crasher", """
        import os
        from referee.bot import run_bot
        print("starting, to die at my first decision", flush=True)
        def decide(obs, legal, game):
            os._exit(7)
        run_bot(decide)
    """)
    bots = GOOD + f"""
    [[bots]]
    name = "good2"
    command = ["python", "-m", "sample_bots.random", "--seed", "2"]

    [[bots]]
    name = "crasher"
    command = ["python", "{crasher}"]
    max_restarts = 2
    """
    done = run(tournament_file(tmp_path, bots, deal_sets=3, limits="cpu_seconds = 60"))
    assert done.returncode == 4, done.stderr  # incomplete: its remaining matches were skipped
    store = Store(tmp_path / "out", create=False)
    lineups = [r.lineup for r in store.matches()]
    assert lineups.count(("good", "good2")) == 3 and lineups.count(("good2", "good")) == 3
    played_by_crasher = [r for r in store.matches() if "crasher" in r.lineup]
    missing = 12 - len(played_by_crasher)
    assert f"* bot crasher did not play {missing} of its 12 matches: it died 3 times (last: exit code 7)" \
        in done.stdout
    # the matches it was in when it died are charged to it (a seat it left, or never took)
    assert all(r.faults[r.lineup.index("crasher")]["disconnect"] + r.faults[r.lineup.index("crasher")]["no_session"]
               for r in played_by_crasher)
    assert (tmp_path / "out" / "logs" / "crasher.log").read_text().count("starting, to die") == 3


def test_memory_cpu_and_output_limits(tmp_path):
    hog = bot_script(tmp_path, "hog", """
        import os
        import sys
        from referee.bot import run_bot
        blocks = []
        def decide(obs, legal, game):
            try:
                blocks.append(bytearray(256 * 1024 * 1024))  # 256 MB more at every decision
            except MemoryError:  # the limit held; die of it (the kit would answer for a bot that raises)
                print("MemoryError", flush=True)
                os._exit(3)
            return 0
        run_bot(decide)
    """)
    spinner = bot_script(tmp_path, "spinner", """
        import sys
        sys.stdout.write("x" * 300_000)
        sys.stdout.flush()
        while True:
            pass
    """)
    hogs = GOOD + f"""
    [[bots]]
    name = "hog"
    command = ["python", "{hog}"]
    memory_mb = 700
    max_restarts = 0
    """
    # a clock long enough that under the suite's load the hog reaches its limit before its time (256 MB
    # zeroed a decision, with a few hundred others' bots on 2 cores, went past 1 s + 2 s of bank)
    done = run(tournament_file(tmp_path, hogs, deal_sets=2, output="out-hog", clock=(10000, 20000)))
    assert done.returncode == 4, done.stderr  # it died (max_restarts = 0) in its first match: incomplete
    hog_log = (tmp_path / "out-hog" / "logs" / "hog.log").read_text()
    assert "MemoryError" in hog_log or "killed" in hog_log, hog_log[-2000:]
    # (two matches start at once: it dies in one or both)
    assert re.search(r"\* bot hog did not play [23] of its 4 matches: it died 1 times", done.stdout), done.stdout

    # it spins before it ever connects: killed at its CPU limit, it stops the run before any match
    spinners = GOOD + f"""
    [[bots]]
    name = "spinner"
    command = ["python", "{spinner}"]
    cpu_seconds = 1
    log_kb = 64
    max_restarts = 0
    """
    stopped = run(tournament_file(tmp_path, spinners, deal_sets=1, output="out-spin"))
    assert stopped.returncode == 2, stopped.stderr
    assert "bot spinner ended before it connected (killed by SIGXCPU (CPU time limit))" in stopped.stderr
    logs = tmp_path / "out-spin" / "logs"
    spin_log = (logs / "spinner.log").read_text()
    assert "killed by SIGXCPU (CPU time limit)" in spin_log
    assert "bytes of output past the 64 KB cap not kept" in spin_log
    assert (logs / "spinner.log").stat().st_size < 80 * 1024


def processes_in(directory: Path) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.readlink(proc / "cwd") == str(directory):
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def test_sigterm_stops_the_tournament_the_bots_and_the_rerun_resumes(tmp_path):
    home = tmp_path / "bots-home"
    home.mkdir()
    bots = f"""
    [[bots]]
    name = "a"
    command = ["python", "-m", "sample_bots.random", "--seed", "1"]
    cwd = "{home}"

    [[bots]]
    name = "b"
    command = ["python", "-m", "sample_bots.random", "--seed", "2"]
    cwd = "{home}"
    """
    path = tournament_file(tmp_path, bots, deal_sets=40)
    proc = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(path), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = tmp_path / "out" / "results.sqlite"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (db.exists() and Store(tmp_path / "out").count() >= 4):
        time.sleep(0.05)
    assert processes_in(home), "the bots should be running"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "run the same command to resume" in err
    time.sleep(0.5)
    assert processes_in(home) == []  # no orphans
    saved = Store(tmp_path / "out").count()
    assert 4 <= saved < 80
    again = run(path)
    assert again.returncode == 0, again.stderr
    assert f"played {80 - saved} match(es) now, 80 in all" in again.stderr


def test_a_log_that_cannot_be_opened_is_a_start_that_failed_not_a_crash(tmp_path):
    from referee.hosting.launcher import Launcher
    from referee.model import BotSpec

    blocked = tmp_path / "logs"
    blocked.write_text("a file where the log directory should be")
    launcher = Launcher([BotSpec("a", ("python", "-m", "sample_bots.random"))], "127.0.0.1:1", {"a": "t"},
                        {"a": 1}, blocked)
    launcher.start_all()
    assert launcher.gone("a")
    assert launcher.status()["a"]["exits"] == ["cannot start: cannot open its log (File exists)"]
    launcher.stop_all()
