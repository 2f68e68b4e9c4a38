"""The reference pool's file (referee.results.pool, docs/pool.md): made from the pool's games, written and read
back unchanged, its id a hash of the versions, the setting and the ratings, a bad file refused in one
line naming what is wrong, and a run's setting compared with the pool's."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from referee import files
from referee.results.pool import FORMAT, Pool, PoolBot, PoolFileError, content_hash, loads, make, read, write
from referee.stats.anchored import anchored
from referee.stats.simulation import POOL, PROJECT, simulate_tournament
from referee.tools.anchoring import lineups

CLOCK = {"decision_ms": 1000, "bank_ms": 10000}


def bots() -> list[PoolBot]:
    return [PoolBot(name, ("python", "-m", f"sample_bots.{name.split('-')[0]}"), f"{k:x}" * 64)
            for k, name in enumerate(POOL, 1)]


@pytest.fixture(scope="module")
def pool() -> Pool:
    outcomes = simulate_tournament(POOL, lineups("2-player", list(POOL)), 30, random.Random(0), **PROJECT)
    return make("aegis", {}, CLOCK, bots(), outcomes, bootstrap=100)


def test_a_pool_is_written_and_read_back_the_same(pool, tmp_path):
    path = tmp_path / "aegis.pool.json"
    write(pool, path)
    back = read(path)
    assert back == pool and back.id == pool.id and len(pool.id) == 64 and pool.short_id == pool.id[:12]
    data = json.loads(path.read_text())
    assert list(data)[:2] == ["format", "id"] and data["format"] == FORMAT and data["id"] == pool.id
    assert [b["name"] for b in data["bots"]] == list(POOL)
    assert len(data["differences"]) == 10
    # one bot and one difference a line
    assert sum(line.strip().startswith('{"name"') for line in path.read_text().splitlines()) == 5
    # the scale read back is the one a run is anchored to
    r = back.scale.ratings["search"]
    assert r.lo < r.elo < r.hi and round(r.elo, 2) == r.elo


def test_the_id_changes_with_a_version_the_setting_or_a_rating(pool):
    def changed(**kw) -> str:
        return Pool(**{"game": pool.game, "options": pool.options, "clock": pool.clock, "bots": pool.bots,
                       "scale": pool.scale, **kw}).id
    assert changed() == pool.id
    other = (pool.bots[0].__class__(pool.bots[0].name, pool.bots[0].command, "f" * 64),) + pool.bots[1:]
    assert changed(bots=other) != pool.id
    assert changed(clock={**CLOCK, "decision_ms": 200}) != pool.id
    assert changed(options={"rounds": 2}) != pool.id
    assert changed(game="confirmation") != pool.id
    ratings = dict(pool.scale.ratings)
    ratings["search"] = ratings["search"].__class__(ratings["search"].elo + 1, ratings["search"].lo,
                                                    ratings["search"].hi + 1)
    assert changed(scale=pool.scale.__class__(ratings, pool.scale.differences, pool.scale.deal_sets)) != pool.id


def test_a_bots_files_are_kept_and_part_of_the_id(pool, tmp_path):
    listed = (PoolBot("random", pool.bots[0].command, pool.bots[0].version, "../..",
                      ("sample_bots/__init__.py", "sample_bots/random.py")),) + pool.bots[1:]
    with_files = Pool(pool.game, pool.options, pool.clock, listed, pool.scale)
    assert with_files.id != pool.id
    write(with_files, tmp_path / "p.json")
    back = read(tmp_path / "p.json")
    assert back == with_files and back.bots[0].files == listed[0].files and back.bots[0].cwd == "../.."
    assert '"files"' not in pool.to_json()  # a pool of bots without files written as before: its id unchanged


def edited(pool: Pool, change) -> str:
    data = json.loads(pool.to_json())
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="referee-pool/0"), "not a pool file of this version: 'format' must be"),
    (lambda d: d.pop("clock"), "'clock' is missing"),
    (lambda d: d.update(game="chess"), "'game' must be one of "),
    (lambda d: d["clock"].update(bank_ms=-1), "'clock': 'bank_ms' must be a whole number of milliseconds"),
    (lambda d: d.update(deal_sets=1), "'deal_sets' must be at least 2"),
    (lambda d: d.update(confidence=True), "'confidence' must be a number"),
    (lambda d: d["bots"][1].pop("version"), "'version' is missing from bot 2 (weakened-75)"),
    (lambda d: d["bots"][1].update(version="abc"), "bot 2 (weakened-75): 'version' must be a content hash"),
    (lambda d: d["bots"][2].update(name="bad name\x1b[2J"), "bot 3 has the name 'bad name\\x1b[2J'"),
    (lambda d: d["bots"][2].update(name="random"), "bot 3 (random) repeats the name"),
    (lambda d: d["bots"][0].update(command=[]), "bot 1 (random): 'command' must be a non-empty list"),
    (lambda d: d["bots"][0].update(files="sample_bots"), "bot 1 (random): 'files' must be a list of paths"),
    (lambda d: d["bots"][0].update(elo=5000.0), "bot 1 (random) has an interval"),
    (lambda d: d["bots"][0].update(hi=float("nan")), "must be"),
    (lambda d: d.update(bots=d["bots"][:1]), "'bots' must hold at least two bots"),
    (lambda d: d["differences"].pop(), "'differences' must hold every pair of the pool's bots once (10), got 9"),
    (lambda d: d["differences"][0].update(b="nobody"), "difference 1 must name two different bots of the pool"),
    (lambda d: d["differences"][0].update(se=0), "difference 1: 'se' must be a standard error > 0"),
    (lambda d: d["bots"][4].update(elo=d["bots"][4]["elo"] + 0.5), "is not the hash of its content"),
    (lambda d: d.update(options={"rounds": 2}), "the file was changed after it was made"),
])
def test_a_bad_pool_file_is_one_error_naming_what_is_wrong(pool, change, message):
    with pytest.raises(PoolFileError) as e:
        loads(edited(pool, change), "pool file p.json")
    text = str(e.value)
    assert text.startswith("pool file p.json: ") and message in text and "\n" not in text, text
    assert "\x1b" not in text


def test_a_file_that_is_not_a_pool(tmp_path):
    for text, message in (("{", "line 1, column 2: not valid JSON"), ("[1, 2]", "a pool file is a JSON object"),
                          ("[" * 100000, "not a pool file")):
        with pytest.raises(PoolFileError, match="pool file"):
            loads(text)
        with pytest.raises(PoolFileError) as e:
            loads(text, "pool file p.json")
        assert message in str(e.value)
    with pytest.raises(PoolFileError, match=r"cannot read pool file .*missing.json: No such file"):
        read(tmp_path / "missing.json")
    (tmp_path / "latin.json").write_bytes(b"\xff\xfe")
    with pytest.raises(PoolFileError, match="cannot read pool file"):
        read(tmp_path / "latin.json")


def test_writing_where_it_cannot(pool, tmp_path, monkeypatch):
    with pytest.raises(PoolFileError, match="cannot write"):
        write(pool, tmp_path / "no such directory" / "p.json")

    def full(path, text):
        raise files.WriteFailed(f"cannot write {path}: No space left on device")
    monkeypatch.setattr(files, "write_text", full)
    with pytest.raises(files.WriteFailed):
        write(pool, tmp_path / "p.json")


def test_making_a_pool_refuses_results_that_do_not_match_its_bots():
    outcomes = simulate_tournament(POOL, lineups("2-player", list(POOL)), 5, random.Random(0), **PROJECT)
    with pytest.raises(ValueError, match="no results for extra"):
        make("aegis", {}, CLOCK, [*bots(), PoolBot("extra", ("x",), "0" * 64)], outcomes, bootstrap=10)
    with pytest.raises(ValueError, match="results of bots not in the pool: weakened-75"):
        make("aegis", {}, CLOCK, [b for b in bots() if b.name != "weakened-75"], outcomes, bootstrap=10)
    with pytest.raises(ValueError, match="distinct names"):
        make("aegis", {}, CLOCK, [*bots(), bots()[0]], outcomes, bootstrap=10)


def test_a_runs_setting_against_the_pools(pool):
    versions = {b.name: b.version for b in pool.bots}
    assert pool.mismatches("aegis", {}, CLOCK, versions) == []
    assert pool.mismatches("aegis", {}, CLOCK, {"search": versions["search"]}) == []  # the others did not play
    found = pool.mismatches("confirmation", {"rounds": 2}, {**CLOCK, "decision_ms": 200},
                            {**versions, "search": "e" * 64, "random": None})
    assert found == [
        "the game is confirmation; the pool's aegis",
        "the options are rounds=2; the pool's none",
        "the clock is bank_ms=10000, decision_ms=200; the pool's bank_ms=10000, decision_ms=1000",
        "random has no version; the pool's 111111111111",
        "search has version eeeeeeeeeeee; the pool's 555555555555",
    ]


def test_content_hash_is_the_same_bot_anywhere():
    here = {"command": ["python", "bot.py"], "cwd": "/home/a/bot",
            "files": {"/home/a/bot/bot.py": "1" * 64, "/home/a/bot/lib/x.py": "2" * 64}}
    there = {"command": ["python", "bot.py"], "cwd": "/srv/b",
             "files": {"/srv/b/bot.py": "1" * 64, "/srv/b/lib/x.py": "2" * 64}}
    assert content_hash(here) == content_hash(there)
    assert len(content_hash(here)) == 64
    assert content_hash({**here, "files": {**here["files"], "/home/a/bot/lib/x.py": "3" * 64}}) != content_hash(here)
    assert content_hash({**here, "command": ["python", "-O", "bot.py"]}) != content_hash(here)


def test_a_pool_read_from_its_file_anchors_a_run(pool, tmp_path):
    write(pool, tmp_path / "p.json")
    scale = read(tmp_path / "p.json").scale
    true = {**POOL, "x": 1500.0}
    outcomes = simulate_tournament(true, lineups("2-player", list(true)), 10, random.Random(3), **PROJECT)
    run = anchored(outcomes, scale, bootstrap=50)
    assert run.ratings["search"].elo == scale.ratings["search"].elo
    assert run.ratings["x"].plus_minus > 0 and not run.off_scale


def test_a_runs_options_with_their_defaults_written_out_are_the_pools(pool):
    """A run keeps every option with its defaults filled in; a pool made with none given is the same setting."""
    versions = {b.name: b.version for b in pool.bots}
    assert pool.mismatches("aegis", {"promise": "table"}, CLOCK, versions) == []  # Aegis's default
    assert pool.mismatches("aegis", {"promise": "4plus"}, CLOCK, versions) == [
        "the options are promise=\"4plus\"; the pool's none"]


def test_numbers_too_large_and_lone_surrogates_are_one_line(pool):
    huge = pool.to_json().replace('"confidence": 0.95', '"confidence": 1' + "0" * 400)
    surrogate = pool.to_json().replace('"sample_bots.random"', '"sample_bots.random\\ud800"', 1)
    for text, message in ((huge, "a number too large"), (surrogate, "not valid Unicode")):
        with pytest.raises(PoolFileError) as e:
            loads(text, "pool file p.json")
        assert str(e.value).startswith("pool file p.json: ") and message in str(e.value), str(e.value)


def test_a_pool_file_that_is_a_pipe_a_device_or_a_directory_is_refused_unread(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(PoolFileError) as e:
            read(path)  # neither blocks on the pipe nor reads the device for ever
        assert "not a regular file" in str(e.value) or "Is a directory" in str(e.value), str(e.value)
