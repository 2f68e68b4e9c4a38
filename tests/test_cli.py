"""The ``referee`` command line: replay's verdicts and exit codes, play's log and record, ``--quiet``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from harness import invoke_cli as run
from harness import require_sandbox, run_cli, sample_bots, write_tournament

from referee import files, records
from referee.cli.exits import ExitCode, exit_code_for

FIXTURES = Path(__file__).resolve().parent / "records"
GOOD = FIXTURES / "confirmation_one_round.json"


def test_exit_code_table():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 5, 6, 130]
    assert ExitCode.USAGE == click.UsageError("x").exit_code
    assert exit_code_for(files.WriteFailed("x")) is ExitCode.WRITE_FAILED
    assert exit_code_for(files.CannotWrite("x")) is ExitCode.USAGE
    assert exit_code_for(records.RecordFileError("x")) is ExitCode.USAGE
    assert exit_code_for(records.RecordError("x")) is ExitCode.CHECK_FAILED
    assert exit_code_for(records.ResultsMismatchError("k", 1, 2, None)) is ExitCode.CHECK_FAILED


def test_help_documents_exit_codes():
    result = run("--help")
    assert result.exit_code == 0
    assert "Exit codes" in result.output and "replay" in result.output and "play" in result.output


# --- replay -------------------------------------------------------------------------


def test_replay_valid():
    result = run("replay", GOOD)
    assert result.exit_code == 0, result.output
    assert "valid record" in result.stdout
    assert "alice" in result.stdout and "26" in result.stdout
    assert re.search(r"round", result.stdout)


def test_replay_valid_json():
    result = run("replay", "--json", GOOD)
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["valid"] is True and out["error"] is None
    assert out["results"]["scores"] == [26, -5, -4, -2]


def test_replay_log():
    result = run("replay", "--log", GOOD)
    assert result.exit_code == 0
    assert "trick 13:" in result.stdout and "trump: C" in result.stdout


def test_replay_illegal_action():
    result = run("replay", FIXTURES / "confirmation_dealer_bid.json")
    assert result.exit_code == 1
    assert 'action #3 (seat 0, "BID 7"): the dealer may not bid 7: the four bids would total exactly 13 ' \
           "(rule 1.4)" in result.stderr
    result = run("replay", "--json", FIXTURES / "confirmation_dealer_bid.json")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert out["valid"] is False and out["results"] is None
    assert out["error"]["kind"] == "illegal-action"
    assert {k: out["error"][k] for k in ("index", "seat", "action", "rule")} == \
        {"index": 3, "seat": 0, "action": "BID 7", "rule": "1.4"}
    assert out["error"]["reason"].startswith("the dealer may not bid 7")


def test_replay_aegis_fixture():
    result = run("replay", FIXTURES / "aegis_fifth_exchange.json")
    assert result.exit_code == 1 and "(rule 2.4)" in result.stderr


def test_replay_results_mismatch(tmp_path):
    record = records.read(GOOD)
    record["results"]["scores"][0] = 25
    path = tmp_path / "mismatch.json"
    records.write(path, record)
    result = run("replay", path)
    assert result.exit_code == 1
    assert "results mismatch at results.scores[0]: the record states 25, the replay gives 26" in result.stderr
    assert "alice" in result.stdout  # the computed results are still shown
    out = json.loads(run("replay", "--json", path).stdout)
    assert out["valid"] is False and out["results"]["scores"][0] == 26
    assert {k: out["error"][k] for k in ("kind", "key", "stated", "computed")} == \
        {"kind": "results-mismatch", "key": "results.scores[0]", "stated": 25, "computed": 26}


def test_replay_invalid_structure(tmp_path):
    record = records.read(GOOD)
    record["options"]["jokers"] = True
    path = tmp_path / "opt.json"
    records.write(path, record)
    result = run("replay", path)
    assert result.exit_code == 1
    assert "options: confirmation has no option 'jokers'" in result.stderr


def test_replay_unreadable_and_bad_json(tmp_path):
    result = run("replay", tmp_path / "nope.json")
    assert result.exit_code == 2 and "cannot read" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "referee-record",\n "version": 1\n "game": "aegis"}')
    result = run("replay", bad)
    assert result.exit_code == 2
    assert f"{bad}: line 3, column 2: not valid JSON" in result.stderr
    result = run("replay", "--json", bad)
    assert result.exit_code == 2
    out = json.loads(result.stdout)
    assert out["valid"] is False and out["error"]["kind"] == "unreadable"


def test_replay_usage_error():
    assert run("replay").exit_code == 2
    assert run("replay", GOOD, "--bogus").exit_code == 2


# --- play -------------------------------------------------------------------------


def test_play_confirmation_log_and_record(tmp_path):
    path = tmp_path / "game.json"
    result = run("play", "confirmation", "--seed", 5, "-o", "rounds=1", "--option", "trump=random-suit",
                 "--record", path)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "seed 5" in out and "rounds=1" in out and "trump=random-suit" in out
    assert "== round 1, dealer seat 0 ==" in out
    assert len(re.findall(r"^  seat \d: ", out, re.M)) == 4  # the four hands
    assert "trump: " in out and "bids: " in out and "confirmation phase 1: " in out
    assert len(re.findall(r"^trick +\d+: ", out, re.M)) == 13
    assert "final scores" in out
    record = records.read(path)
    assert record["seed"] == 5 and record["options"]["rounds"] == 1 and len(record["suits"]) == 1
    assert records.replay(record).finished
    assert run("replay", path).exit_code == 0


def test_play_aegis(tmp_path):
    path = tmp_path / "aegis.json"
    result = run("play", "aegis", "--seed", 3, "--record", path)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "draw for master" in out and "key card" in out and "declares" in out
    card = r"[2-9TJQKA][SHDC]"
    assert re.search(rf"^draw for master: seat 0 {card}, seat 1 {card} -> seat \d is master$", out, re.M)
    assert re.search(rf"^key card: {card} \(trump [SHDC]; killers {card} {card} {card}\)$", out, re.M)
    assert re.search(rf"^  seat \d: {card}", out, re.M)
    assert re.search(rf"^trick 1: seat \d leads {card} {card} -> seat \d wins$", out, re.M)
    assert "match over" in out
    rep = records.replay(records.read(path))
    assert f"{rep.results['scores'][0]}" in out


@pytest.mark.parametrize("options", [
    ["double=true"], ["blind=true"], ["pairs=true"], ["trump=random-suit"],
    ["double=true", "blind=true", "pairs=true", "trump=random-suit"],
])
def test_play_confirmation_variants_log(options):
    args = [a for o in options for a in ("-o", o)]
    result = run("play", "confirmation", "--seed", 3, "-o", "rounds=2", *args)
    assert result.exit_code == 0, result.output
    out = result.stdout
    card = r"[2-9TJQKA][SHDC]"
    trick = rf"^trick +\d+: seat \d leads {card} {card} {card} {card} -> seat \d wins$"
    assert len(re.findall(trick, out, re.M)) == 26
    assert len(re.findall(rf"^  seat \d: {card}", out, re.M)) == 8
    trump = r"drawn at random" if "trump=random-suit" in options else rf"the dealer's last card {card}"
    assert len(re.findall(rf"^trump: [SHDC] \({trump}\)$", out, re.M)) == 2
    phases = 2 if "double=true" in options else 1
    assert len(re.findall(r"^confirmation phase \d: ", out, re.M)) == 2 * phases
    assert "rounds:" not in out and "final scores" in out


def test_play_is_deterministic_and_quiet():
    a = run("play", "confirmation", "--seed", 9, "-o", "rounds=2")
    b = run("play", "confirmation", "--seed", 9, "-o", "rounds=2")
    assert a.exit_code == 0 and a.stdout == b.stdout
    quiet = run("play", "confirmation", "--seed", 9, "-o", "rounds=2", "--quiet")
    assert quiet.exit_code == 0
    assert "trick" not in quiet.stdout and "final scores" in quiet.stdout
    assert quiet.stdout.strip() in a.stdout


@pytest.mark.parametrize("args, message", [
    (["-o", "jokers=1"], "confirmation has no option 'jokers'"),
    (["-o", "rounds=zero"], "option 'rounds' must be an integer"),
    (["-o", "trump=stock"], "option 'trump' must be one of"),
    (["-o", "rounds"], "expected KEY=VALUE"),
])
def test_play_bad_option(args, message):
    result = run("play", "confirmation", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_play_unknown_game():
    assert run("play", "bridge").exit_code == 2


def test_play_unwritable_record(tmp_path):
    result = run("play", "confirmation", "--seed", 1, "-o", "rounds=1", "--quiet",
                 "--record", tmp_path / "no" / "dir.json")
    assert result.exit_code == 2 and "cannot write" in result.stderr


def test_python_dash_m():
    result = run_cli("replay", GOOD, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "valid record" in result.stdout


@pytest.mark.parametrize("bot, message", [("a b=python x.py", "Invalid value for --bot: bad bot name 'a b'"),
                                          ("a=", "Invalid value for --bot: the command is empty")])
def test_match_refuses_a_bad_bot_before_starting(bot, message):
    result = run("match", "aegis", "--bot", bot)
    assert result.exit_code == 2 and message in result.stderr


@pytest.mark.e2e
def test_match_and_sprt_keep_the_competition_advice_to_themselves(tmp_path):
    """`isolation = "match"` is advice for a competition of strangers' bots: a quick match or an
    SPRT of one's own bots does not print it; a tournament does (issue 34, item 9)."""
    from harness import run_cli

    done = run_cli("match", "aegis", "--seed", "3", "--no-log", "--bot", "a=python -m sample_bots.random",
                   "--bot", "b=python -m sample_bots.random")
    assert done.returncode == 0, done.stderr
    assert "sandbox" in done.stderr and "for entrants" not in done.stderr, done.stderr
    sprt = run_cli("sprt", "--game", "aegis", "--candidate", "h=python -m sample_bots.random --seed 1",
                   "--baseline", "r=python -m sample_bots.random --seed 1", "--seed", "5", "--max-units", "1",
                   "--output", tmp_path / "sprt")
    assert sprt.returncode in (0, 1, 3), sprt.stderr
    assert "isolation: tournament" in sprt.stderr and "for entrants" not in sprt.stderr, sprt.stderr


# --- --quiet ------------------------------------------------------------------------------------

BOTS = sample_bots(random="python -m sample_bots.random --seed 1", heuristic="python -m sample_bots.heuristic")


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
