"""GameEnd reaches every seat in every mode before its process is stopped: long-lived bots
(isolation = "tournament"), a process per match (isolation = "match": the referee ends its
session after its GameEnds, and it has a grace to end by itself), and ``referee match``; and
a healthy bot's stop makes no kill noise. Real processes, through the command line."""

from __future__ import annotations

import re

import pytest
from harness import ROOT, run_cli, sample_bots, write_tournament

from referee.hosting.launcher import GAME_END_GRACE_S

pytestmark = pytest.mark.e2e

RECORDER = ROOT / "tests" / "bots" / "game_end_bot.py"
BOTS = sample_bots(a=f"python {RECORDER}", b=f"python {RECORDER}")  # in the sandbox, where it works


def game_ends(text: str) -> list[tuple[str, str]]:
    return re.findall(r"game end: (\S+) seat (\d)", text)


@pytest.mark.parametrize("isolation", ["tournament", "match"])
def test_every_seat_gets_its_game_end_before_its_process_is_stopped(tmp_path, isolation):
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=1, seed=4, concurrency=2,
                            extra=f'isolation = "{isolation}"')
    done = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert done.returncode == 0, done.stderr
    for bot in "ab":
        log = (tmp_path / "out" / "logs" / f"{bot}.log").read_text()
        # 2 matches, each with this bot in one seat: 2 game ends, each once
        assert sorted(game_ends(log)) == sorted(set(game_ends(log))) and len(game_ends(log)) == 2, log
        assert "killed by" not in log and "--- ended: " not in log, log  # no kill noise, no death
        ends = log.count("--- ended after its session: exit code 0")  # it ended by itself, in its grace
        assert ends == (2 if isolation == "match" else 1), log
    assert GAME_END_GRACE_S <= 2  # short, as docs/tournaments.md says


def test_referee_match_gives_both_bots_their_game_end_and_stops_them_quietly():
    done = run_cli("match", "aegis", "--seed", "3", "--no-log", "--bot", f"a=python {RECORDER}",
                   "--bot", f"b=python {RECORDER}")
    assert done.returncode == 0, done.stderr
    assert sorted(seat for _, seat in game_ends(done.stderr)) == ["0", "1"], done.stderr
    assert "---" not in done.stderr, done.stderr  # no start, stop or "killed by SIGTERM" lines for healthy bots
