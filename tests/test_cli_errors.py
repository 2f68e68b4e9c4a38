"""Every mistake a user can make with the ``referee`` command: one line naming what is wrong, the
documented exit code (referee/cli/exits.py), never a Python traceback.

Each row is a mistake: the arguments (``{d}`` is a scratch directory holding the files below),
the exit code, and a fragment of the error line. Mistakes that need a bot process or a server
are tested beside their feature (tests/test_serve_cli.py, tests/test_entries.py...); the last
tests here run the command as a subprocess: ``--http`` on a port in use, ``referee view`` on
something it does not take."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from harness import invoke_cli, run_cli, sample_bots, write_tournament

from referee.cli.exits import ExitCode

GOOD_RECORD = Path(__file__).parent / "records" / "confirmation_one_round.json"

TOURNAMENT = """\
[tournament]
game = "aegis"
deal_sets = 1
seed = 1
output = "{output}"
{extra}
[[bots]]
name = "a"
command = ["python", "-m", "sample_bots.random"]
[[bots]]
name = "b"
command = ["python", "-m", "sample_bots.random"]
"""


def _record_with(**changes) -> str:
    record = json.loads(GOOD_RECORD.read_text())
    record.update(changes)
    return json.dumps(record)


def _write_files(d: Path) -> None:
    (d / "a-file").write_text("not a directory\n")
    (d / "binary.toml").write_bytes(b"\xff\xfe[tournament]\n")
    (d / "syntax.toml").write_text("[tournament\n")
    (d / "output-is-file.toml").write_text(TOURNAMENT.format(output=d / "a-file", extra=""))
    (d / "bad-option-type.toml").write_text(
        TOURNAMENT.format(output=d / "o1", extra='[tournament.options]\ndouble = "no"\n')
        .replace('"aegis"', '"confirmation"'))
    (d / "zero-deal-sets.toml").write_text(
        TOURNAMENT.format(output=d / "o2", extra="").replace("deal_sets = 1", "deal_sets = 0"))
    (d / "huge-clock.toml").write_text(
        TOURNAMENT.format(output=d / "o3", extra="[clock]\ndecision_ms = 5000000000\n"))
    (d / "deep.json").write_text('{"a": ' * 100_000 + "1" + "}" * 100_000)
    (d / "huge-int.json").write_text(_record_with(seed=12345).replace("12345", "9" * 5000))
    (d / "double-no.json").write_text(
        _record_with(options={"rounds": 1, "trump": "dealer-card", "double": "no"}))
    (d / "rounds-text.json").write_text(_record_with(options={"rounds": "1"}))
    (d / "list.json").write_text("[1, 2]")
    (d / "latin1.json").write_bytes(b'{"game": "\xe9"}')
    (d / "results").mkdir()
    (d / "results" / "results.sqlite").write_text("this is not a database\n")
    (d / "empty").mkdir()


MISTAKES = [
    # replay
    (["replay", "{d}/missing.json"], 2, "cannot read"),
    (["replay", "{d}/latin1.json"], 2, "not UTF-8 text"),
    (["replay", "{d}/deep.json"], 2, "nested too deeply"),
    (["replay", "{d}/huge-int.json"], 2, "more than 4300 digits"),
    (["replay", "{d}/list.json"], 1, "a record is a JSON object"),
    (["replay", "{d}/double-no.json"], 1, "option 'double' must be true or false, got 'no'"),
    (["replay", "{d}/rounds-text.json"], 1, "option 'rounds' must be an integer, got '1'"),
    # play
    (["play", "aegis", "-o", "nope=1"], 2, "aegis has no option 'nope'"),
    (["play", "confirmation", "-o", "rounds=0"], 2, "option 'rounds' must be at least 1"),
    (["play", "confirmation", "-o", "double=maybe"], 2, "option 'double' must be true or false"),
    # tournament files
    (["tournament", "{d}/missing.toml"], 2, "cannot read"),
    (["tournament", "{d}/binary.toml"], 2, "not UTF-8 text"),
    (["tournament", "{d}/syntax.toml"], 2, "not valid TOML"),
    (["tournament", "{d}/output-is-file.toml"], 2, "is a file, not a results directory"),
    (["tournament", "{d}/bad-option-type.toml"], 2, "option 'double' must be true or false, got 'no'"),
    (["tournament", "{d}/zero-deal-sets.toml"], 2, "deal_sets must be at least 1"),
    (["tournament", "{d}/huge-clock.toml"], 2, "clock.decision_ms must be at most 4294967295"),  # before, at play
    (["gauntlet", "{d}/zero-deal-sets.toml"], 2, "missing [gauntlet] table"),
    (["sprt", "{d}/zero-deal-sets.toml"], 2, "missing [sprt] table"),
    # results directories
    (["ratings", "{d}/empty"], 2, "no tournament results here"),
    (["ratings", "{d}/results"], 2, "cannot open the results database"),
]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("mistakes")
    _write_files(d)
    return d


@pytest.mark.parametrize(("args", "code", "fragment"), MISTAKES, ids=[" ".join(m[0]) for m in MISTAKES])
def test_a_mistake_is_one_line_and_its_exit_code(scratch, args, code, fragment):
    result = invoke_cli(*(a.format(d=scratch) for a in args))
    # click's runner catches every exception: anything but SystemExit would have been a traceback
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and fragment in lines[0], lines[0]
    assert result.exit_code == code


def test_the_deep_record_is_deeper_than_python_recurses():
    # the row above must really exercise the recursion guard
    assert 100_000 > sys.getrecursionlimit()


# --- mistakes that need the command as a subprocess --------------------------------------------

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


@pytest.mark.parametrize("command", [["sprt", "--game", "aegis", "--candidate", "a=python -m sample_bots.random",
                                      "--baseline", "b=python -m sample_bots.random"], ["pool", "make", "aegis"]])
def test_a_clock_past_the_protocols_32_bits_is_refused_before_any_match(command, tmp_path):
    """Before, a decision time over 2^32 - 1 ms started the run and failed at the first match's wire."""
    result = invoke_cli(*command, "--decision-ms", "5000000000", "--output", str(tmp_path / "o"))
    assert result.exit_code == 2 and "--decision-ms" in result.output and "5000000000" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert not (tmp_path / "o").exists()
