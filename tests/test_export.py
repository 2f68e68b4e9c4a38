"""Games out of a results directory: ``referee export`` (a record per match, matches.csv) and
``referee replay DIR MATCH_ID``. Stores are filled in process with random matches here; the
end-to-end tests export what real tournament, gauntlet and sprt runs stored."""

from __future__ import annotations

import csv
import json
import random
import sqlite3
from pathlib import Path

import pytest
from harness import run_cli, sample_bots, write_tournament

from referee import games, records
from referee.results.store import Store
from referee.runner import FaultKind


def fill_store(directory: Path, game: str, lineups: list[tuple[str, ...]], deal_sets: int = 2,
               options: dict | None = None) -> Store:
    """A store holding random matches of every line-up on every deal set, as a run saves them."""
    spec = games.get(game)
    store = Store(directory)
    for k in range(deal_sets):
        for lineup in lineups:
            state = spec.new(options or {}, seed=1000 + k)
            games.play_out(state, games.random_legal(random.Random(f"{k}{lineup}")))
            faults = [dict.fromkeys(FaultKind, 0) for _ in lineup]
            faults[0]["timeout"] = k  # some faults to count
            results = {**state.results(), "faults": faults}
            record = records.to_record(state, seats=lineup)
            record["meta"] = {"game_id": f"{k}:{'|'.join(lineup)}", "faults": []}
            store.save(f"{k}:{'|'.join(lineup)}", k, 1000 + k, lineup, json.loads(json.dumps(results)), record,
                       0.25 + k)
    return store


def stored_without_faults(results: dict) -> dict:
    return {key: value for key, value in results.items() if key != "faults"}


def check_export(directory: Path, invoke, out: Path | None = None) -> list[dict[str, str]]:
    """Export DIRECTORY; every record must replay (exit 0) to the stored result, matches.csv must
    hold one row per stored match with its stored values. Returns the csv rows."""
    args = ["export", str(directory)] + (["--to", str(out)] if out else [])
    done = invoke(*args)
    assert done.exit_code == 0, done.output
    out = out or directory / "export"
    store = Store(directory, create=False)
    try:
        rows = list(store.matches())
        numbers = store.numbers()
        assert f"{len(rows)} match record(s) and matches.csv written to {out}" in done.output
        with open(out / "matches.csv", newline="") as f:
            table = list(csv.DictReader(f))
        assert len(table) == len(rows) > 0
        by_key = {line["key"]: line for line in table}
        assert sorted(int(line["match"]) for line in table) == sorted(numbers.values())
        for row in rows:
            line = by_key[row.key]
            assert int(line["match"]) == numbers[row.key] and int(line["deal_set"]) == row.deal_set
            seats = range(len(row.lineup))
            assert [line[f"seat{i}"] for i in seats] == list(row.lineup)
            assert [int(line[f"score{i}"]) for i in seats] == row.scores
            assert [int(line[f"place{i}"]) for i in seats] == row.placing
            assert [int(line[f"faults{i}"]) for i in seats] == [sum(f.values()) for f in row.faults]
            assert [{k: int(line[f"{k}{i}"]) for k in FaultKind} for i in seats] == row.faults  # each kind
            assert float(line["seconds"]) == pytest.approx(row.seconds, abs=1e-3)
            path = out / line["record"]
            replayed = invoke("replay", str(path))
            assert replayed.exit_code == 0, replayed.output
            assert "valid record" in replayed.output
            record = records.read(path)
            assert record["results"] == stored_without_faults(row.results)
            assert records.replay(record).results == stored_without_faults(row.results)
            assert record["seats"] == list(row.lineup)
            assert record["meta"]["match"] == numbers[row.key] and record["meta"]["key"] == row.key
    finally:
        store.close()
    return table


@pytest.mark.parametrize("game, lineups, options", [
    ("aegis", [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a")], {}),
    ("confirmation", [("a", "b", "c", "d"), ("b", "c", "d", "a")], {"rounds": 2}),
])
def test_every_exported_record_replays_to_the_stored_result(tmp_path, invoke, game, lineups, options):
    fill_store(tmp_path / "out", game, lineups, options=options).close()
    table = check_export(tmp_path / "out", invoke)
    assert [line["match"] for line in table] == [str(n) for n in range(1, len(table) + 1)]
    # exporting again replaces the files, and --to writes elsewhere
    check_export(tmp_path / "out", invoke)
    check_export(tmp_path / "out", invoke, out=tmp_path / "elsewhere" / "games")


def test_replay_reads_a_match_from_the_results_directory(tmp_path, invoke):
    fill_store(tmp_path / "out", "aegis", [("a", "b"), ("b", "a")]).close()
    assert invoke("export", str(tmp_path / "out")).exit_code == 0
    for match_id in ("1", "2", "3", "4", "1:b|a"):
        direct = invoke("replay", str(tmp_path / "out"), match_id)
        assert direct.exit_code == 0, direct.output
        number = Store(tmp_path / "out", create=False).number(match_id) if ":" in match_id else int(match_id)
        from_file = invoke("replay", str(tmp_path / "out" / "export" / f"match-{number:04d}.json"))
        assert direct.output == from_file.output
    as_json = json.loads(invoke("replay", str(tmp_path / "out"), "2", "--json").output)
    assert as_json["valid"] is True and as_json["results"]["scores"]


def test_a_stored_record_that_does_not_match_its_result_fails_the_replay(tmp_path, invoke):
    fill_store(tmp_path / "out", "aegis", [("a", "b")], deal_sets=1).close()
    db = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    record = json.loads(db.execute("SELECT record FROM matches").fetchone()[0])
    record["results"]["scores"][0] += 1
    with db:
        db.execute("UPDATE matches SET record = ?", (json.dumps(record),))
    db.close()
    failed = invoke("replay", str(tmp_path / "out"), "1")
    assert failed.exit_code == 1 and "results.scores[0]" in failed.output


def test_a_match_stored_without_a_record_is_in_the_csv_only(tmp_path, invoke):
    store = fill_store(tmp_path / "out", "aegis", [("a", "b")], deal_sets=1)
    store.save("1:a|b", 1, 7, ("a", "b"), {"scores": [10, 0], "placing": [1, 2]}, {}, 0.0)
    store.close()
    done = invoke("export", str(tmp_path / "out"))
    assert done.exit_code == 0, done.output
    assert "1 match record(s) and matches.csv" in done.output
    assert "1 match(es) stored without a game record (e.g. 1:a|b): in matches.csv only" in done.output
    with open(tmp_path / "out" / "export" / "matches.csv", newline="") as f:
        assert [(line["key"], line["record"]) for line in csv.DictReader(f)] == \
            [("0:a|b", "match-0001.json"), ("1:a|b", "")]
    assert sorted(p.name for p in (tmp_path / "out" / "export").iterdir()) == ["match-0001.json", "matches.csv"]


@pytest.mark.parametrize("args, message", [
    (["export", "{tmp}/nothing"], "{tmp}/nothing: not a results directory (not found)"),
    (["export", "{tmp}/file.txt"], "{tmp}/file.txt: not a results directory (a file)"),
    (["export", "{tmp}/empty"], "{tmp}/empty: not a results directory (no results.sqlite in it)"),
    (["export", "{tmp}/out", "--to", "{tmp}/file.txt"], "{tmp}/file.txt: exists and is not a directory"),
    (["replay", "{tmp}/out", "9"], "no match '9' in {tmp}/out (its matches: numbered 1 to 2); the ids are the "
                                    "first column of matches.csv from `referee export {tmp}/out` (its number) or "
                                    "the second (its key, DEALSET:BOT|BOT..., as the report, the logs and --verbose "
                                    "name it)"),
    (["replay", "{tmp}/out"], "{tmp}/out is a directory: give a match id too"),
    (["replay", "{tmp}/empty", "1"], "{tmp}/empty: not a results directory"),
])
def test_mistakes_get_one_line_and_exit_2(tmp_path, invoke, args, message):
    fill_store(tmp_path / "out", "aegis", [("a", "b")], deal_sets=2).close()
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    done = invoke(*[a.format(tmp=tmp_path) for a in args])
    assert done.exit_code == 2, done.output
    assert done.output.startswith("Error: " + message.format(tmp=tmp_path)), done.output
    assert done.output.count("\n") == 1 and "Traceback" not in done.output
    assert (tmp_path / "file.txt").read_text() == "x"


def test_a_missing_match_names_the_numbers_there_are_when_a_rerun_left_gaps(tmp_path, invoke):
    """--rerun drops a bot's stored matches and their numbers are not used again: the error names the
    ranges of numbers that exist, not one range over the gaps."""
    store = fill_store(tmp_path / "out", "aegis", [("a", "b"), ("a", "c"), ("b", "c")], deal_sets=2)
    with store.db:
        store._drop("c")  # what claiming with --rerun c does
    store.save("0:a|c", 0, 1000, ("a", "c"), {"scores": [10, 0], "placing": [1, 2]}, {}, 0.0)
    store.close()
    done = invoke("replay", str(tmp_path / "out"), "2")
    assert done.exit_code == 2, done.output
    assert f"no match '2' in {tmp_path}/out (its matches: numbered 1, 4 to 5);" in done.output, done.output


# --- what real runs stored ---------------------------------------------------------------

BOTS = sample_bots(r1="python -m sample_bots.random --seed 1", h="python -m sample_bots.heuristic",
                   r2="python -m sample_bots.random --seed 2")


@pytest.mark.e2e
def test_export_of_a_tournament_a_gauntlet_and_an_sprt(tmp_path, invoke):
    path = write_tournament(tmp_path / "t.toml", BOTS, game="confirmation", deal_sets=1, seed=3,
                            concurrency=3, output="tour", options="rounds = 1")
    assert run_cli("tournament", path, "--quiet", "--bootstrap", "0").returncode == 0
    check_export(tmp_path / "tour", invoke)

    gauntlet = write_tournament(tmp_path / "g.toml", BOTS + '\n[gauntlet]\ncandidate = "h"\n',
                                game="aegis", deal_sets=2, seed=3, concurrency=2, output="gaunt")
    done = run_cli("gauntlet", gauntlet, "--quiet", "--bootstrap", "0")
    assert done.returncode == 0, done.stderr
    check_export(tmp_path / "gaunt", invoke)

    sprt = run_cli("sprt", "--game", "aegis", "--candidate", "h=python -m sample_bots.heuristic",
                   "--baseline", "r=python -m sample_bots.random", "--seed", "5", "--max-units", "3",
                   "--output", tmp_path / "sprt", "--quiet", "--verbose")
    assert sprt.returncode in (0, 1, 3), sprt.stderr
    table = check_export(tmp_path / "sprt", invoke)
    # --verbose: a line per match, by its id and its number in the store
    finished = [line for line in sprt.stderr.splitlines() if line.startswith("Finished match ")]
    assert sorted(finished) == sorted(
        f"Finished match {line['key']} (aegis, no. {line['match']}): "
        f"{line['seat0']} {line['score0']} – {line['seat1']} {line['score1']}" for line in table)
