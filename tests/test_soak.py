"""referee.tools.soak: self-play through the real referee, every fault counted.

A tiny run (one match each of one Confirmation and one Aegis variant) must
report what it played and zero faults; a bot that answers illegal actions
must be counted and make the check fail.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from referee.runner import FaultKind
from referee.tools import soak

VARIANTS = "confirmation/random-suit+double+blind+pairs,aegis/4plus"



def run(tmp_path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "soak.json"
    code = soak.main(["--games", "1", "--games-aegis", "1", "--variants", VARIANTS, "--out", str(tmp_path / "out"),
                      "--json", str(out), *args])
    return code, json.loads(out.read_text())


@pytest.mark.e2e
def test_the_random_bot_plays_both_games_without_a_fault(tmp_path, capsys):
    code, report = run(tmp_path, "--bots", "random")
    assert code == 0, capsys.readouterr()
    assert report["ok"] is True
    assert report["clock"] == {"decision_ms": 1000.0, "bank_ms": 10000.0}
    assert [(r["bot"], r["variant"]) for r in report["runs"]] == [
        ("random", "confirmation/random-suit+double+blind+pairs"), ("random", "aegis/4plus")]
    for r in report["runs"]:
        assert r["games"] == r["requested"] == 1
        assert r["decisions"] > 0 and r["timed_decisions"] == r["decisions"]
        assert r["faults"] == dict.fromkeys(FaultKind, 0)
        assert 0 < r["slowest_ms"] < 1000
    err = capsys.readouterr().err
    assert "[1/2] random confirmation/random-suit+double+blind+pairs: 1/1 games" in err
    assert "[2/2] random aegis/4plus: 1/1 games" in err
    # run again on the same directory: nothing is played twice, the figures are the same
    again_code, again = run(tmp_path, "--bots", "random")
    assert again_code == 0
    assert [(r["games"], r["decisions"]) for r in again["runs"]] == [(r["games"], r["decisions"])
                                                                    for r in report["runs"]]


@pytest.mark.e2e
def test_illegal_actions_are_counted_and_fail_the_check(tmp_path, capsys):
    code, report = run(tmp_path, "--bots", "evil", "--bot-command",
                       "evil=python tests/bots/proto_bot.py --mode illegal --after 2")
    assert code == 1
    assert report["ok"] is False
    for r in report["runs"]:
        assert r["games"] == 1
        assert r["faults"]["illegal"] > 0
        assert sum(r["faults"].values()) == r["faults"]["illegal"]
        assert "illegal" in r["fault_examples"][0]
    assert "FAIL" in capsys.readouterr().out


def test_bad_usage_exits_2(capsys):
    assert soak.main(["--bots", "nobody"]) == 2
    assert soak.main(["--variants", "poker"]) == 2
    assert soak.main(["--bot-command", "no equals sign", "--bots", "random"]) == 2


@pytest.mark.e2e
def test_with_a_fill_bot_only_the_tested_seat_is_counted(tmp_path):
    # the illegal bot plays one seat; the random bot fills the others and is not charged or counted
    code, report = run(tmp_path, "--bots", "evil", "--fill", "random", "--bot-command",
                       "evil=python tests/bots/proto_bot.py --mode illegal --after 2")
    assert code == 1
    for r in report["runs"]:
        assert r["fill"] == "random" and r["games"] == 1
        assert sum(r["faults"].values()) == r["faults"]["illegal"] > 0
        assert all(" seat 0 " in line for line in r["fault_examples"])  # match 0: the tested bot is in seat 0
        assert 0 < r["decisions"] == r["timed_decisions"]
        with sqlite3.connect(Path(r["output"]) / "results.sqlite") as db:
            (record,), = db.execute("SELECT record FROM matches").fetchall()
        actions = json.loads(record)["actions"]
        assert r["decisions"] == sum(1 for seat, _ in actions if seat == 0) < len(actions)
    assert soak.main(["--bots", "random", "--fill", "random"]) == 2
