"""A competition that lives: entries that do not start or die are withdrawn and the rest play
(absent = "withdraw", exit 5); the same directory then takes more deal sets and a late entry,
plays only the new matches, and gives the standings of a run from scratch of the grown file,
byte for byte (the golden growth test). Real bot processes, through the command line."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from harness import ROOT, run_cli, write_tournament

from referee.cli.exits import ExitCode
from referee.tournament.store import Store

CRASH_AFTER = ROOT / "tests" / "bots" / "crash_after.py"


def bots(count: Path, late: bool) -> str:
    """The sample bots, one entry that crashes at start, one that dies for good after its first game
    (counted in ``count``, outside its directory: it exits at once when started again) and, if
    ``late``, a late entry; all deterministic."""
    tables = f"""
    [clock]
    decision_ms = 5000
    bank_ms = 10000

    [limits]
    sandbox = "none"

    [[bots]]
    name = "random"
    command = ["python", "-m", "sample_bots.random", "--seed", "1"]
    cwd = "{ROOT}"

    [[bots]]
    name = "broken"
    command = ["python", "-c", "import sys; print('cannot load my weights'); sys.exit(3)"]
    cwd = "{ROOT}"

    [[bots]]
    name = "heuristic"
    command = ["python", "-m", "sample_bots.heuristic"]
    cwd = "{ROOT}"

    [[bots]]
    name = "dies"
    command = ["python", "{CRASH_AFTER}", "--after", "1"]
    cwd = "{ROOT}"
    env = {{ CRASH_COUNT_FILE = "{count}" }}
    """
    if late:
        tables += f"""
    [[bots]]
    name = "late"
    command = ["python", "-m", "sample_bots.random", "--seed", "2"]
    cwd = "{ROOT}"
    """
    return textwrap.dedent(tables)


def competition(folder: Path, deal_sets: int, late: bool) -> Path:
    folder.mkdir(exist_ok=True)
    return write_tournament(folder / "t.toml", bots(folder / "count", late), game="aegis", deal_sets=deal_sets,
                            seed=31, concurrency=1, extra='absent = "withdraw"')


def standings_json(folder: Path) -> tuple[int, str]:
    rated = run_cli("ratings", folder / "out", "--format", "json", "--bootstrap", "100")
    return rated.returncode, rated.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The competition (2 deal sets), then the same directory grown (4 deal sets, a late entry), and
    the grown file from scratch elsewhere."""
    grown, scratch = tmp_path_factory.mktemp("grown"), tmp_path_factory.mktemp("scratch")
    first = run_cli("tournament", competition(grown, 2, late=False), "--bootstrap", "100")
    stored_first = Store(grown / "out", create=False)
    first_rows = list(stored_first.matches())
    stored_first.close()
    second = run_cli("tournament", competition(grown, 4, late=True), "--bootstrap", "100")
    fresh = run_cli("tournament", competition(scratch, 4, late=True), "--bootstrap", "100")
    return {"first": first, "first_rows": first_rows, "second": second, "fresh": fresh, "grown": grown,
            "scratch": scratch}


pytestmark = pytest.mark.e2e


def test_the_entries_that_did_not_start_or_died_are_withdrawn_and_the_rest_play(runs):
    first = runs["first"]
    assert first.returncode == ExitCode.WITHDRAWN, first.stderr
    assert "Traceback" not in first.stderr
    # said as it happened, with the broken entry's last log lines
    assert re.search(r"bot broken ended before it connected \(exit code 3\): withdrawn \(absent = \"withdraw\"\)",
                     first.stderr), first.stderr
    assert "cannot load my weights" in first.stderr
    assert "withdrawn: bot dies died 4 times (last: exit code 1); not restarted; the other entries play on" \
        in first.stderr
    # the standings rank the rest, and list the others with the reason
    ranked = [line.split()[1] for line in first.stdout.splitlines() if re.match(r"\s+\d\s", line)][:2]
    assert sorted(ranked) == ["heuristic", "random"]
    assert "not ranked: broken (did not start: ended before it connected (exit code 3))" in first.stdout
    assert "not ranked: dies (dead: died 4 times (last: exit code 1); not restarted)" in first.stdout
    assert first.stderr.rstrip().splitlines()[-1] == (
        "withdrawn: bot broken did not start (ended before it connected (exit code 3)); bot dies dead (died 4 "
        "times (last: exit code 1); not restarted); the other entries played all their matches")
    # every match of the others is played and counts; the dead one's are stored, not counted
    assert sorted(r.key for r in runs["first_rows"]) == [f"{k}:{pair}" for k in (0, 1)
                                                         for pair in ("heuristic|random", "random|heuristic")]
    store = Store(runs["grown"] / "out", create=False)
    try:
        assert {e.name: e.status for e in store.entries()} == {
            "random": "playing", "broken": "did not start", "heuristic": "playing", "dies": "dead",
            "late": "playing"}
        assert any("dies" in r.lineup for r in store.matches(every=True))
        assert not any("dies" in r.lineup for r in store.matches())
    finally:
        store.close()


def test_the_grown_directory_plays_only_the_new_matches(runs):
    second = runs["second"]
    assert second.returncode == ExitCode.WITHDRAWN, second.stderr
    assert "grows: deal sets 2 -> 4; new entries: late" in second.stderr
    # 3 entries in play, 4 deal sets: 3 pairs x 2 seatings x 4 = 24, of which the first run stored 4
    assert re.search(r"20 of 24 match\(es\) to play, 4 stored; \d+ stored match\(es\) are not in this schedule",
                     second.stderr), second.stderr
    assert "played 20 match(es) now, 24 in all" in second.stderr


def test_the_grown_standings_are_those_of_a_run_from_scratch_byte_for_byte(runs):
    fresh = runs["fresh"]
    assert fresh.returncode == ExitCode.WITHDRAWN, fresh.stderr
    assert "24 in all" in fresh.stderr
    grown_code, grown = standings_json(runs["grown"])
    fresh_code, scratch = standings_json(runs["scratch"])
    assert grown_code == fresh_code == ExitCode.WITHDRAWN  # ratings says so too
    assert grown == scratch
    data = json.loads(grown)
    assert data["matches"] == 24 and data["deal_sets"] == 4
    assert [(e["name"], e["status"]) for e in data["entries"]] == [
        ("random", "playing"), ("broken", "did not start"), ("heuristic", "playing"), ("dies", "dead"),
        ("late", "playing")]
    assert all(e["version"] for e in data["entries"])
    csv = run_cli("ratings", runs["grown"] / "out", "--format", "csv", "--bootstrap", "0").stdout.splitlines()
    assert csv[0].endswith(",status,why") and csv[-2].startswith(",broken,") and "did not start" in csv[-2]


def test_the_history_keeps_which_version_played_each_match(runs, tmp_path):
    done = run_cli("export", runs["grown"] / "out", "--to", tmp_path)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "matches.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header[-3:] == ["version0", "version1", "counted"]
    rows = [dict(zip(header, line.split(","))) for line in lines[1:]]
    assert all(re.fullmatch(r"[0-9a-f]{12}", r["version0"]) and r["version1"] for r in rows)
    assert {r["counted"] for r in rows if "dies" in (r["seat0"], r["seat1"])} == {"0"}
    assert sum(r["counted"] == "1" for r in rows) == 24
