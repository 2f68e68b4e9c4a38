"""isolation = "match": a launched bot plays every match in a fresh process with a fresh
scratch, so nothing it learned (a hand of a duplicate deal, say) survives to the next one.
The control, isolation = "tournament", shows the same bot remembering."""

from __future__ import annotations

import re

import pytest
from harness import ROOT, require_sandbox, run_cli, write_tournament

from referee.results.store import Store

pytestmark = pytest.mark.e2e

BOTS = f"""
[clock]
decision_ms = 5000
bank_ms = 10000

[[bots]]
name = "memory"
command = ["python", "{ROOT / 'tests' / 'bots' / 'memory_bot.py'}"]
cwd = "{ROOT}"

[[bots]]
name = "other"
command = ["python", "-m", "sample_bots.random", "--seed", "3"]
cwd = "{ROOT}"
"""


def run(tmp_path, isolation: str):
    path = write_tournament(tmp_path / f"{isolation}.toml", BOTS, game="aegis", deal_sets=3, seed=8,
                            concurrency=2, output=f"out-{isolation}", extra=f'isolation = "{isolation}"')
    done = run_cli("tournament", path, "--quiet", "--bootstrap", "10")
    assert done.returncode == 0, done.stderr
    log = (tmp_path / f"out-{isolation}" / "logs" / "memory.log").read_text()
    memories = [(int(a), int(b)) for a, b in re.findall(r"memory: games_before=(\d+) marks=(\d+)", log)]
    store = Store(tmp_path / f"out-{isolation}", create=False)
    try:
        rows = list(store.matches())
        meta = store.meta("isolation")
    finally:
        store.close()
    return done, memories, rows, meta, log


def test_under_match_isolation_no_bot_carries_anything_to_its_next_match(tmp_path):
    require_sandbox()
    done, memories, rows, meta, log = run(tmp_path, "match")
    assert len(rows) == 6 and meta == "match"
    assert "isolation: match" not in done.stderr  # --quiet: no sandbox line
    assert len(memories) == 6, log  # one report per match: each in a process of its own
    assert memories == [(0, 0)] * 6, log  # no earlier game in the process, no mark in the scratch
    assert log.count("--- ended after its session: exit code 0") == 6  # its GameEnd, then its own end
    assert all(sum(row.faults[row.lineup.index("memory")].values()) == 0 for row in rows)


def test_the_control_a_long_lived_bot_remembers(tmp_path):
    done, memories, rows, meta, log = run(tmp_path, "tournament")
    assert len(rows) == 6 and meta == "tournament"
    assert len(memories) == 6
    assert max(before for before, _ in memories) >= 1 and max(marks for _, marks in memories) >= 1, log


def test_match_isolation_is_refused_on_a_remote_referee(tmp_path):
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=1, seed=8, concurrency=1,
                            extra='isolation = "match"')
    done = run_cli("tournament", path, "--server", "127.0.0.1:1", "--admin-token", "x", "--quiet")
    assert done.returncode == 2 and "needs the in-process referee" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_isolation_names_its_line(tmp_path):
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=1, seed=8, concurrency=1,
                            extra='isolation = "never"')
    done = run_cli("tournament", path, "--quiet")
    assert done.returncode == 2, done.stderr
    assert re.search(r"t.toml:\d+: tournament.isolation must be one of tournament, match, got 'never'", done.stderr)
