"""A full disk under a run (issue 24: "a full disk or a write error ends the run in one line"):
on a real small file system, a tmpfs mounted in a private mount namespace, the store, a
bot's log, ``export`` and ``view`` each meet ENOSPC. Each ends in one line with exit code 6,
no traceback; every match stored before is intact, and the same command, with room again,
plays only what is missing, to the standings of a run that never lacked room.

Needs root and ``unshare``/``mount`` (CI runs as root): skips with the reason elsewhere, fails
instead under REFEREE_REQUIRE_SANDBOX=1.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from harness import run_cli, write_tournament

from referee import records
from referee.results.store import Store

pytestmark = pytest.mark.e2e

DEAL_SETS = 6  # 12 matches of two bots: the store fills after some of them
CHATTY = """
import sys
from referee.bot import run_bot

decisions = 0


def decide(observation, legal, game):  # the first legal action, and 16 KB of output a decision at first
    global decisions
    decisions += 1
    if decisions <= 8:
        print("chatter " * 2000, flush=True)
    return 0

run_bot(decide, default_name="chatty")
"""


def require_a_small_file_system(tmp: Path) -> None:
    """Skip (fail under REFEREE_REQUIRE_SANDBOX=1) where no tmpfs can be mounted in a private mount namespace."""
    why = None
    if os.geteuid() != 0:
        why = "a tmpfs in a private mount namespace needs root"
    elif not shutil.which("unshare") or not shutil.which("mount"):
        why = "no unshare or mount command (util-linux)"
    else:
        probe = subprocess.run(["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "-o", "size=64k",
                                "tmpfs", str(tmp)], capture_output=True, text=True)
        if probe.returncode != 0:
            why = f"cannot mount a tmpfs in a private mount namespace: {probe.stderr.strip()}"
    if why is None:
        return
    if os.environ.get("REFEREE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"REFEREE_REQUIRE_SANDBOX=1 but {why}", pytrace=False)
    pytest.skip(why)


def tournament_file(directory: Path, bots: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    tables = '\n[clock]\ndecision_ms = 2000\nbank_ms = 10000\n\n[limits]\nsandbox = "none"\nlog_kb = 4096\n'
    (directory / "bots").mkdir(exist_ok=True)  # their own directory, small: a version lists its files
    for name, command in bots.items():
        tables += f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "bots"\n'
    return write_tournament(directory / "t.toml", tables, game="aegis", deal_sets=DEAL_SETS, seed=5,
                            concurrency=1, output="out")


def in_a_private_namespace(script: str, tmp: Path) -> None:
    """Run the shell ``script`` in a mount namespace of its own: what it mounts is gone after it."""
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", textwrap.dedent(script)],
                          cwd=tmp, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr


def outcome(tmp: Path, name: str) -> tuple[int, str]:
    return int((tmp / f"{name}.rc").read_text()), (tmp / f"{name}.err").read_text()


def the_one_line(stderr: str) -> str:
    """The error line of a run that stopped: exactly one, no traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def stored(directory: Path) -> dict[str, list[int]]:
    store = Store(directory, create=False)
    try:
        return {row.key: row.scores for row in store.matches()}
    finally:
        store.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """In one private mount namespace: (1) a tournament whose output directory is a 512 KB tmpfs,
    until the store cannot grow; then ``export`` and ``view`` of what it stored (read from that full
    disk) to a 24 KB tmpfs; (2) a tournament whose logs directory is a 64 KB tmpfs, with a bot that
    prints 16 KB a decision. Each one's exit code and stderr, and copies of what it left, are kept."""
    tmp = tmp_path_factory.mktemp("full")
    require_a_small_file_system(tmp)
    random = ["python", "-m", "sample_bots.random", "--seed"]
    for name in ("store", "control"):
        tournament_file(tmp / name, {"a": [*random, "1"], "b": [*random, "2"]})
    (tmp / "chatty.py").write_text(CHATTY)
    tournament_file(tmp / "logs", {"chatty": ["python", str(tmp / "chatty.py")], "b": [*random, "2"]})
    (tmp / "logs" / "out" / "logs").mkdir(parents=True)
    in_a_private_namespace("""
        set -u
        run() { name=$1; shift; "$PYTHON" -m referee "$@" > $name.out 2> $name.err; echo $? > $name.rc; }
        mkdir -p store/out && mount -t tmpfs -o size=512k tmpfs store/out
        run store tournament store/t.toml --quiet
        cp -a store/out store/left
        mkdir -p small && mount -t tmpfs -o size=24k tmpfs small
        run export export store/out --to small/export
        cp -a small/export store/exported && umount small && mount -t tmpfs -o size=24k tmpfs small
        run view view store/out --out small/report
        cp -a small/report store/viewed
        mount -t tmpfs -o size=64k tmpfs logs/out/logs
        run logs tournament logs/t.toml --quiet
    """, tmp)
    return tmp


def test_a_full_store_ends_the_run_in_one_line_exit_6_and_the_rerun_plays_only_what_is_missing(runs):
    code, stderr = outcome(runs, "store")
    line = the_one_line(stderr)
    assert code == 6, stderr
    assert line.startswith(f"Error: cannot write {runs / 'store' / 'out' / 'results.sqlite'} (") and \
        "database or disk is full" in line and "stored are intact: make room and run the same command again" in line
    left = runs / "store" / "left"
    db = sqlite3.connect(left / "results.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    before = stored(left)
    assert 0 < len(before) < 2 * DEAL_SETS and f"the {len(before)} match(es) stored are intact" in line
    control = run_cli("tournament", runs / "control" / "t.toml", "--quiet", "--bootstrap", "50")
    assert control.returncode == 0, control.stderr
    whole = stored(runs / "control" / "out")
    assert all(whole[key] == scores for key, scores in before.items())  # intact: as a run with room stored them
    store = Store(left, create=False)
    try:  # each one whole: its record replays to its stored results
        assert all(records.replay(store.record(row.key)).results["scores"] == row.scores for row in store.matches())
    finally:
        store.close()
    shutil.rmtree(runs / "store" / "out")  # the tmpfs's mount point; what the run left, there again, with room
    left.rename(runs / "store" / "out")
    resumed = run_cli("tournament", runs / "store" / "t.toml", "--quiet", "--bootstrap", "50")
    assert resumed.returncode == 0, resumed.stderr
    assert f"played {2 * DEAL_SETS - len(before)} match(es) now, {2 * DEAL_SETS} in all" in resumed.stderr
    assert resumed.stdout == control.stdout


def test_export_and_view_on_a_full_disk_end_in_one_line_exit_6_leaving_no_partial_file(runs):
    code, stderr = outcome(runs, "export")
    line = the_one_line(stderr)
    assert code == 6 and "No space left on device" in line and "the results store is untouched" in line, stderr
    written = sorted((runs / "store" / "exported").iterdir())
    assert all(p.name.startswith("match-") and p.suffix == ".json" for p in written)  # no partial file, no csv
    assert written and f"the {len(written)} record(s) before it are written" in line
    for path in written:
        records.replay(records.read(path))  # each one whole
    code, stderr = outcome(runs, "view")
    line = the_one_line(stderr)
    assert code == 6 and "No space left on device" in line and "make room and run view again" in line, stderr
    assert not [p for p in (runs / "store" / "viewed").rglob("*") if ".partial" in p.name]


def test_a_full_disk_under_a_bots_log_ends_the_run_in_one_line_exit_6(runs):
    code, stderr = outcome(runs, "logs")
    line = the_one_line(stderr)
    assert code == 6, stderr
    assert line.startswith(f"Error: cannot write {runs / 'logs' / 'out' / 'logs'}/") and "No space left" in line
    before = stored(runs / "logs" / "out")  # the store was not on the full disk
    assert 0 < len(before) < 2 * DEAL_SETS and f"the {len(before)} match(es) stored are intact" in line
    resumed = run_cli("tournament", runs / "logs" / "t.toml", "--quiet", "--bootstrap", "0")
    assert resumed.returncode == 0, resumed.stderr
    assert f"played {2 * DEAL_SETS - len(before)} match(es) now, {2 * DEAL_SETS} in all" in resumed.stderr
    after = stored(runs / "logs" / "out")
    assert {key: after[key] for key in before} == before
