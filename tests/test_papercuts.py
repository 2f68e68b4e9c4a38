"""The papercuts of issue 25, each with its test: ``--http`` on a busy port (one line, exit 2,
nothing left behind), ``--quiet`` (only results and errors), ``referee view`` on something that is
neither a record nor a results directory, the game-pair counts of four seats in rotation, and the
gauntlet's verdict for CI. (No kill noise for healthy bots: tests/test_game_end.py.)"""

from __future__ import annotations

import re
import socket

import pytest
from harness import require_sandbox, run_cli, sample_bots, write_tournament

from referee.cli.exits import ExitCode
from referee.competition import gauntlet
from referee.results import standings
from referee.results.store import MatchRow

BOTS = sample_bots(random="python -m sample_bots.random --seed 1", heuristic="python -m sample_bots.heuristic")


@pytest.fixture
def busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.mark.e2e
def test_http_on_a_busy_port_is_one_line_exit_2_and_leaves_nothing(tmp_path, busy_port):
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=1, seed=2, concurrency=1)
    done = run_cli("tournament", path, "--http", busy_port)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr.strip().splitlines() == [
        f"Error: --http {busy_port}: cannot listen on 127.0.0.1:{busy_port}: Address already in use"], done.stderr
    assert not (tmp_path / "out").exists()  # no results.sqlite, no logs
    serve = run_cli("serve", "--port", "0", "--http", busy_port, timeout=60)
    assert serve.returncode == ExitCode.USAGE
    assert serve.stderr.strip().splitlines()[-1] == (
        f"Error: --http {busy_port}: cannot listen on 127.0.0.1:{busy_port}: Address already in use"), serve.stderr
    assert "Traceback" not in serve.stderr


def _but_the_host(stderr: str) -> list[str]:
    """Its lines but the one about the machine, which --quiet keeps too (a loaded host, when the
    suite runs tests side by side)."""
    return [line for line in stderr.splitlines() if not line.startswith("host: ")]


@pytest.mark.e2e
def test_quiet_prints_only_results_and_errors(tmp_path):
    require_sandbox()  # sandboxed: no risk to name, so no sandbox line at all
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=1, seed=2, concurrency=1)
    done = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert done.returncode == 0, done.stderr
    assert _but_the_host(done.stderr) == ["played 2 match(es) now, 2 in all"], done.stderr
    assert "heuristic" in done.stdout  # the standings
    sprt = run_cli("sprt", "--game", "aegis", "--candidate", "a=python -m sample_bots.random", "--baseline",
                   "b=python -m sample_bots.random --seed 2", "--max-units", "1", "--seed", "3", "--quiet")
    assert sprt.returncode == ExitCode.INCONCLUSIVE, sprt.stderr
    assert _but_the_host(sprt.stderr) == [], sprt.stderr  # no sandbox line, no bot start or stop lines
    assert "verdict:" in sprt.stdout


def test_view_of_something_else_says_what_it_takes(tmp_path):
    (tmp_path / "typo.toml").write_text("[tournament]\ngame = \"aegis\"\n")
    done = run_cli("view", tmp_path / "typo.toml")
    assert done.returncode == ExitCode.USAGE
    assert done.stderr.strip() == (f"Error: {tmp_path / 'typo.toml'}: neither a game record (a JSON file, "
                                   f"docs/records.md) nor a results directory (a tournament file? view its output "
                                   f"directory)")
    done = run_cli("view", tmp_path)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr.strip() == f"Error: {tmp_path}: neither a game record nor a results directory (no " \
                                  f"results.sqlite in it)"


def test_four_seats_in_rotation_pair_only_opposite_seats_and_the_table_says_so():
    lineup = ("a", "b", "c", "d")
    rotations = [lineup[r:] + lineup[:r] for r in range(4)]
    rows = [MatchRow(f"{k}:{'|'.join(line)}", k, line, {"scores": [4, 3, 2, 1], "placing": [1, 2, 3, 4]})
            for k in range(2) for line in rotations]
    st = standings.compute("confirmation", rows, bootstrap=0)
    opposite, neighbours = st.head_to_head["a"]["c"], st.head_to_head["a"]["b"]
    assert sum(opposite.pentanomial) == 4 and opposite.unpaired == 0  # a in seat s, c in s+2: twins
    assert sum(neighbours.pentanomial) == 0 and neighbours.unpaired == 8  # never swapped by a rotation
    text = standings.report(st)
    assert "four seats in rotation swap only opposite seats: neighbours have no game pairs" in text
    aegis = standings.compute("aegis", [MatchRow(f"0:{x}|{y}", 0, (x, y), {"scores": [1, 0], "placing": [1, 2]})
                                        for x, y in (("a", "b"), ("b", "a"))], bootstrap=0)
    assert "unpaired:" not in standings.report(aegis)  # said only where some result is unpaired


def test_the_gauntlet_verdict_fails_a_candidate_worse_at_the_chosen_confidence():
    def versus(baseline: str, elo: float, lo: float, hi: float, los: float | None,
               upper: float | None) -> gauntlet.Versus:
        return gauntlet.Versus(baseline, 10, 10, 2, 0, 8, 20.0, elo, lo, hi, (hi - lo) / 2, los, -3.0, None, upper)

    rows = [versus("heuristic", -120.0, -250.0, -10.0, 0.01, -31.0), versus("random", -20.0, -150.0, 110.0, 0.3, 90.0),
            versus("search", -120.0, -250.0, -10.0, None, None)]
    verdict = gauntlet.verdict("mine", rows, 0.95)
    assert verdict.worse == ["heuristic"]
    assert verdict.text == ("mine is worse than heuristic (Elo -120, at most -31 at 95% one-sided; LOS 1.0%) at 95% "
                            "confidence: a failed check (exit code 1); not judged (no LOS: --bootstrap 0 or no "
                            "result): search")
    assert gauntlet.verdict("mine", rows[1:2], 0.95).text == (
        "mine is worse than no baseline at 95% confidence: every one-sided upper bound is above 0 (the lowest: "
        "random, Elo -20, at most +90 at 95% one-sided; LOS 30.0%)")


@pytest.mark.e2e
def test_a_gauntlet_exits_1_when_the_candidate_is_worse(tmp_path):
    path = write_tournament(tmp_path / "g.toml", BOTS + '\n[gauntlet]\ncandidate = "random"\n', game="aegis",
                            deal_sets=5, seed=2, concurrency=2)
    worse = run_cli("gauntlet", path, "--quiet", "--bootstrap", "200")
    assert worse.returncode == ExitCode.CHECK_FAILED, worse.stdout + worse.stderr
    assert re.search(r"verdict: random is worse than heuristic \((Elo [-<\d ]+, )?at most -\d+ at 95% one-sided; "
                     r"LOS \d+\.\d%\) at 95% confidence", worse.stdout), worse.stdout
    lenient = run_cli("gauntlet", path, "--quiet", "--bootstrap", "200", "--confidence", "0.9999")
    assert lenient.returncode == 0, lenient.stdout
    assert "verdict: random is worse than no baseline at 99.99% confidence" in lenient.stdout
