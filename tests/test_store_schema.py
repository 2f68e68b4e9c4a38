"""The results store's schema version and its migrations (referee/results/store.py), on a results
directory written by the code before the store had a version (tests/fixtures/store-v0: an
interrupted tournament, 10 of its 24 matches stored; its README says how it was made). The readers
read it as it is; a tournament resumes it and grows it, and leaves it at the current version; a
store of a newer version is refused in one line and left as it is; a migration that fails or is
killed half-way leaves the store as it was."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import ROOT, run_cli

from referee.cli.exits import ExitCode
from referee.results import store as store_module
from referee.results.store import SCHEMA_VERSION, Store, StoreError

FIXTURE = ROOT / "tests" / "fixtures" / "store-v0"
#: where the fixture was made: the absolute paths its store records begin so (its make.py)
MADE_AT = "/tmp/referee-store-v0"
#: the fixture's stored matches, and all its tournament file schedules
STORED, SCHEDULED = 10, 24


def copy_fixture(tmp_path: Path, relocate: bool = True) -> Path:
    """A copy of the fixture in ``tmp_path``; with ``relocate``, as if it had been made there: the
    paths its store records (the bots' versions and the tournament's description, the cache of files
    hashed) begin with the copy's folder instead of :data:`MADE_AT` (a run refuses bots found
    elsewhere than their versions say, as for any results directory moved with its bots). Written
    with sqlite3 itself: the store's version and everything else stay as they are."""
    folder = tmp_path / "store-v0"
    shutil.copytree(FIXTURE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    with connect(folder) as db:
        recorded = json.loads(db.execute("SELECT value FROM meta WHERE key = 'versions'").fetchone()[0])
        for name, version in recorded.items():  # the fixture's bots are as its store says
            for path, digest in version["files"].items():
                mine = FIXTURE / Path(path).relative_to(MADE_AT)
                assert hashlib.sha256(mine.read_bytes()).hexdigest() == digest, \
                    f"{mine} (bot {name}) was edited: restore it (tests/fixtures/store-v0/README.md)"
        if relocate:
            db.execute("UPDATE meta SET value = replace(value, ?, ?)", (MADE_AT, str(folder)))
            db.execute("UPDATE bot_versions SET version = replace(version, ?, ?)", (MADE_AT, str(folder)))
            db.execute("UPDATE digests SET path = replace(path, ?, ?)", (MADE_AT, str(folder)))
    return folder


@contextlib.contextmanager
def connect(folder: Path) -> Iterator[sqlite3.Connection]:
    """The store of a fixture's copy opened with sqlite3 alone (no migration): what the ``with``
    did is committed (not when it raised), and the store closed."""
    db = sqlite3.connect(folder / "out" / "results.sqlite")
    try:
        yield db
        db.commit()
    finally:
        db.close()


def version_of(folder: Path) -> int:
    with connect(folder) as db:
        return db.execute("PRAGMA user_version").fetchone()[0]


def rows_of(folder: Path) -> dict[str, dict]:
    """Every stored match, whole (its number, its row and its seats' rows, by column), by key."""
    with connect(folder) as db:
        db.row_factory = sqlite3.Row
        seats: dict[str, list[dict]] = {}
        for row in db.execute("SELECT * FROM seats ORDER BY match_key, seat"):
            seats.setdefault(row["match_key"], []).append(dict(row))
        return {row["key"]: {**dict(row), "seats": seats.get(row["key"])}
                for row in db.execute("SELECT rowid AS number, * FROM matches")}


def schema_of(db: sqlite3.Connection) -> list[tuple]:
    """The tables, indexes and columns of a store, and its version."""
    tables = sorted(db.execute("SELECT type, name, tbl_name FROM sqlite_master"))
    columns = {name: sorted(db.execute(f"PRAGMA table_info({name})")) for kind, name, _ in tables if kind == "table"}
    return [tables, columns, db.execute("PRAGMA user_version").fetchone()[0]]


def files_in(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def grown_file(folder: Path) -> Path:
    """The fixture's tournament file with a fifth deal set and a late entry (the same frozen bot,
    another seed)."""
    path = folder / "tournament.toml"
    text = path.read_text()
    assert "deal_sets = 4 " in text
    path.write_text(text.replace("deal_sets = 4 ", "deal_sets = 5 ") + textwrap.dedent("""
        [[bots]]
        name = "late"
        command = ["python", "bot.py", "--seed", "3"]
        cwd = "bots/random"
        """))
    return path


# --- read as it is ------------------------------------------------------------------------------


@pytest.mark.e2e
def test_the_readers_read_a_version_0_store_as_it_is(tmp_path):
    """ratings gives the standings the code that wrote the store gave (the fixture's standings.json);
    export, view and replay read it; none writes a byte of it (it stays at version 0: a reader
    writes nothing, so a results directory on a full disk still reads)."""
    folder = copy_fixture(tmp_path, relocate=False)
    out = folder / "out"
    before = files_in(out)
    rated = run_cli("ratings", out, "--format", "json", "--bootstrap", "100")
    assert rated.returncode == 0, rated.stderr
    assert rated.stdout == (FIXTURE / "standings.json").read_text()
    exported = run_cli("export", out, "--to", tmp_path / "export")
    assert exported.returncode == 0, exported.stderr
    assert len(list((tmp_path / "export").glob("match-*.json"))) == STORED
    viewed = run_cli("view", out, "--out", tmp_path / "report")
    assert viewed.returncode == 0, viewed.stderr
    assert (tmp_path / "report" / "index.html").is_file()
    replayed = run_cli("replay", out, "1")
    assert replayed.returncode == 0, replayed.stderr
    assert files_in(out) == before  # each command a process of its own: its store closed when it ends
    assert version_of(folder) == 0


def test_ratings_in_this_process_reads_a_version_0_store_as_it_is(tmp_path, invoke):
    """The quick version of the test above, for the fast loop: ratings alone, in this process, where
    the store may still be open (its write-ahead log and index beside it): the log holds nothing."""
    folder = copy_fixture(tmp_path, relocate=False)
    out = folder / "out"
    before = files_in(out)
    rated = invoke("ratings", out, "--format", "json", "--bootstrap", "100")
    assert rated.exit_code == 0, rated.output
    assert rated.stdout == (FIXTURE / "standings.json").read_text()
    after = files_in(out)
    assert after.pop("results.sqlite-wal", b"") == b""
    after.pop("results.sqlite-shm", None)
    assert after == before
    assert version_of(folder) == 0


def test_a_reader_migrates_a_version_0_store_it_cannot_read_as_it_is(tmp_path):
    """A store of version 0 written before the bots' versions and the bot's own errors were kept
    (``seats`` without its ``version`` and ``error`` columns): a reader migrates it first, as a
    reader of such a store made the columns before; every match stays, the new counts 0."""
    folder = copy_fixture(tmp_path, relocate=False)
    before = rows_of(folder)
    with connect(folder) as db:
        kept = [c[1] for c in db.execute("PRAGMA table_info(seats)") if c[1] not in ("version", "error")]
        db.execute(f"CREATE TABLE old AS SELECT {', '.join(kept)} FROM seats")
        db.execute("DROP TABLE seats")
        db.execute("ALTER TABLE old RENAME TO seats")
    store = Store(folder / "out", create=False)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert len(list(store.matches())) == STORED
    finally:
        store.close()
    assert rows_of(folder) == {key: {**row, "seats": [{**seat, "version": None} for seat in row["seats"]]}
                               for key, row in before.items()}


# --- resumed and grown --------------------------------------------------------------------------


@pytest.mark.e2e
def test_a_version_0_store_resumes_playing_exactly_the_missing_matches(tmp_path):
    folder = copy_fixture(tmp_path)
    before = rows_of(folder)
    assert len(before) == STORED and version_of(folder) == 0
    run = run_cli("tournament", folder / "tournament.toml", "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert f"{SCHEDULED - STORED} of {SCHEDULED} match(es) to play, {STORED} stored" in run.stderr
    assert f"played {SCHEDULED - STORED} match(es) now, {SCHEDULED} in all" in run.stderr
    after = rows_of(folder)
    with connect(folder) as db:
        schedule = {row[0] for row in db.execute("SELECT key FROM schedule")}
    assert after.keys() == schedule and len(schedule) == SCHEDULED
    assert {key: after[key] for key in before} == before  # every stored match as it was, its number too
    assert version_of(folder) == SCHEMA_VERSION


@pytest.mark.e2e
def test_a_version_0_store_grows_by_a_deal_set_and_an_entry(tmp_path):
    folder = copy_fixture(tmp_path)
    before = rows_of(folder)
    run = run_cli("tournament", grown_file(folder), "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert "grows: deal sets 4 -> 5; new entries: late" in run.stderr
    # 4 entries: 6 pairs x 2 seatings x 5 deal sets
    assert f"played {60 - STORED} match(es) now, 60 in all" in run.stderr
    after = rows_of(folder)
    assert len(after) == 60 and {key: after[key] for key in before} == before
    assert version_of(folder) == SCHEMA_VERSION
    rated = run_cli("ratings", folder / "out", "--format", "json", "--bootstrap", "0")
    assert rated.returncode == 0, rated.stderr
    table = json.loads(rated.stdout)
    assert table["matches"] == 60
    assert sorted(line["name"] for line in table["standings"]) == ["heuristic", "late", "random", "random2"]


def test_a_migrated_store_has_the_schema_of_a_new_one(tmp_path):
    """Opened for writing, a store of version 0 is brought to the current version, with the
    tables, columns and indexes a new store is made with, and every match kept."""
    folder = copy_fixture(tmp_path, relocate=False)
    before = rows_of(folder)
    Store(folder / "out").close()
    Store(tmp_path / "new").close()
    with connect(folder) as migrated, sqlite3.connect(tmp_path / "new" / "results.sqlite") as new:
        assert schema_of(migrated) == schema_of(new)
        assert schema_of(new)[-1] == SCHEMA_VERSION == len(store_module.MIGRATIONS)
    assert rows_of(folder) == before


# --- refused, and left as it was ----------------------------------------------------------------


def e2e(*args):
    return pytest.param(*args, marks=pytest.mark.e2e)


@pytest.mark.parametrize("command", [  # each command a process: the first in the fast loop, the others e2e
    ["ratings", "{out}"], e2e(["export", "{out}", "--to", "{tmp}/export"]),
    e2e(["view", "{out}", "--out", "{tmp}/report"]), e2e(["replay", "{out}", "1"]),
    e2e(["tournament", "{folder}/tournament.toml"])])
def test_a_store_of_a_newer_version_is_refused_in_one_line_and_left_as_it_is(tmp_path, command):
    folder = copy_fixture(tmp_path)
    with connect(folder) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = files_in(folder)
    args = [a.format(out=folder / "out", tmp=tmp_path, folder=folder) for a in command]
    refused = run_cli(*args)
    assert refused.returncode == ExitCode.USAGE
    assert refused.stderr.strip() == (
        f"Error: {folder / 'out'}: written by a newer referee (its results store has schema version "
        f"{SCHEMA_VERSION + 1}; this one knows versions up to {SCHEMA_VERSION}): upgrade referee to read or "
        f"resume it; the directory is left as it is")
    assert files_in(folder) == before


def failing(db: sqlite3.Connection) -> None:
    """A migration that changes much (a table's definition first: outside a transaction, that would
    be written at once), then fails."""
    db.execute("DROP TABLE entries")
    db.execute("CREATE INDEX seats_by_bot ON seats (bot)")
    db.execute("DELETE FROM seats")
    db.execute("DROP TABLE matches")
    raise sqlite3.OperationalError("no such column: planted")


def test_a_migration_that_fails_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    folder = copy_fixture(tmp_path, relocate=False)
    before = files_in(folder / "out")
    monkeypatch.setattr(store_module, "MIGRATIONS", (*store_module.MIGRATIONS, failing))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(StoreError) as refused:
        Store(folder / "out")
    assert str(refused.value) == (
        f"{folder / 'out' / 'results.sqlite'}: cannot bring the results store to schema version "
        f"{SCHEMA_VERSION + 1}: no such column: planted; it is left as it was")
    assert files_in(folder / "out") == before
    assert version_of(folder) == 0


#: a process that migrates a store with one more migration, which has deleted every match when it
#: says so and waits to be killed
KILLED_MIDWAY = """
import sys, time
from pathlib import Path
from referee.results import store

def midway(db):
    db.execute("DROP TABLE entries")
    db.execute("DELETE FROM seats")
    db.execute("DELETE FROM matches")
    print("midway", flush=True)
    time.sleep(600)

store.MIGRATIONS = (*store.MIGRATIONS, midway)
store.SCHEMA_VERSION = len(store.MIGRATIONS)
store.Store(Path(sys.argv[1]))
"""


def test_a_migration_killed_midway_leaves_the_store_as_it_was(tmp_path):
    folder = copy_fixture(tmp_path, relocate=False)
    before = rows_of(folder)
    with connect(folder) as db:
        schema = schema_of(db)
    migrating = subprocess.Popen([sys.executable, "-c", KILLED_MIDWAY, str(folder / "out")], stdout=subprocess.PIPE,
                                 text=True)
    try:
        assert migrating.stdout.readline() == "midway\n"
    finally:
        migrating.send_signal(signal.SIGKILL)
        migrating.communicate()
    assert rows_of(folder) == before
    with connect(folder) as db:
        assert schema_of(db) == schema
    # and the real migrations then take it, whole
    store = Store(folder / "out")
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert len(list(store.matches())) == STORED
    finally:
        store.close()
