"""Twin matches cannot be played by two live processes of one bot (the red team's attack).

Under isolation = "match" every match gets fresh bot processes, each in its own sandbox; the
red team's bot (tests/bots/hostile/twinlock.py) still learned its opponent's hand in 88 of 88
deals, because a deal set's two seat-swapped matches played at the same time and its two
processes passed their hands through file locks on the program file they both see. The
defence: no two matches of one deal set play at once (Executor.play_all). Here the attack
runs in a real tournament under bubblewrap, and must learn nothing; a control run, where the
same bot plays honestly (its play is the same: always the first legal action), must give the
victim exactly the same results."""

from __future__ import annotations

import json
import shutil

import pytest
from harness import ROOT, require_sandbox, run_cli, write_tournament

from referee.tournament.store import Store

pytestmark = pytest.mark.e2e

BOTS = """
[clock]
decision_ms = 3000
bank_ms = 10000

[limits]
sandbox = "bwrap"

[[bots]]
name = "twinlock"
command = {command}
cwd = "attacker"

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "victim"
"""


def tournament(tmp, honest: bool) -> tuple[list[dict], dict[str, tuple]]:
    """(the attacker's LEARNED reports, the victim's results per match)."""
    for name in ("attacker", "victim"):
        (tmp / name).mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "bots" / "hostile" / "twinlock.py", tmp / "attacker")
    command = ["python", "twinlock.py", *(["--honest"] if honest else [])]
    path = write_tournament(tmp / "t.toml", BOTS.format(command=json.dumps(command)), game="aegis", deal_sets=3,
                            seed=8, concurrency=2, extra='isolation = "match"')
    run = run_cli("tournament", path, "--quiet", "--bootstrap", "20", timeout=400)
    assert run.returncode == 0, run.stderr
    reports = [json.loads(line.split(" ", 1)[1]) for log in (tmp / "out" / "logs").glob("twinlock*.log")
               for line in log.read_text().splitlines() if line.startswith("LEARNED ")]
    store = Store(tmp / "out", create=False)
    try:
        victim = {row.key: (row.lineup.index("victim"), row.scores, row.placing, row.faults) for row in store.matches()}
    finally:
        store.close()
    return reports, victim


def test_twin_processes_of_one_bot_never_play_at_once(tmp_path):
    require_sandbox()
    reports, victim = tournament(tmp_path / "attack", honest=False)
    _, control = tournament(tmp_path / "control", honest=True)
    assert len(victim) == 6  # 3 deal sets, both ways round
    deals = {(r["game_id"], r["deal"]) for r in reports}
    assert len(deals) >= 6 * 3  # the attack reported on every deal it played (Aegis: 3+ deals a match)
    assert [r for r in reports if r["opponent_hand"] is not None] == []  # it learned no card
    assert victim == control
