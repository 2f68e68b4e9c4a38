"""History over versions (referee/results/history.py): the store's schema version 2 keeps one row per
entry and version (a version-1 store migrated keeps everything; the code of version 1 refuses a
store of version 2), written where a run's standings are made and kept when ``--rerun`` drops a
version's matches; ``referee history DIR [ENTRY]`` prints it (text, JSON, one-line errors); the
report draws each entry's versions (inline SVG and the same rows as a table). End to end: a bot in a
temporary directory edited twice, each edit rerun with ``--rerun``, gives three rows and a chart
that fits 390 and 1280 px in Chromium."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import textwrap
from pathlib import Path

import pytest
from harness import ROOT, run_cli, write_tournament
from test_store_schema import connect, copy_fixture, files_in, rows_of, schema_of, version_of
from test_view_browser import browser, fits  # noqa: F401  (browser: the module's Chromium, a fixture)

from referee import games, records
from referee.cli.exits import ExitCode
from referee.model import EntryStatus
from referee.results import history, standings
from referee.results import store as store_module
from referee.results.store import SCHEMA_VERSION, Entry, NewerStore, Store, VersionRow
from referee.view import report

POOL = "e8144d8f815c"


def as_version_1(monkeypatch) -> None:
    """The store module as the code of schema version 1 had it: its migrations, its version."""
    monkeypatch.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:1])
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 1)


def version_1_store(tmp_path: Path, monkeypatch) -> Path:
    """The fixture of version 0 (tests/fixtures/store-v0) as the code of version 1 migrated it."""
    folder = copy_fixture(tmp_path, relocate=False)
    with monkeypatch.context() as m:
        as_version_1(m)
        Store(folder / "out").close()
    assert version_of(folder) == 1
    return folder


def whole(folder: Path) -> dict:
    """Everything a store holds but its history: every table's rows."""
    with connect(folder) as db:
        return {table: sorted(db.execute(f"SELECT * FROM {table}"))
                for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'history'")}


# --- the schema: version 1 -> 2 -----------------------------------------------------------------

def test_a_version_1_store_is_migrated_to_2_and_keeps_everything(tmp_path, monkeypatch):
    folder = version_1_store(tmp_path, monkeypatch)
    matches, before = rows_of(folder), whole(folder)
    Store(folder / "out").close()  # opened for writing: brought to the current version
    assert version_of(folder) == SCHEMA_VERSION == 2
    assert rows_of(folder) == matches and whole(folder) == before
    Store(tmp_path / "new").close()
    with connect(folder) as migrated, sqlite3.connect(tmp_path / "new" / "results.sqlite") as new:
        assert schema_of(migrated) == schema_of(new)
        assert migrated.execute("SELECT COUNT(*) FROM history").fetchone() == (0,)


def test_a_version_2_store_is_refused_by_the_code_of_version_1(tmp_path, monkeypatch):
    Store(tmp_path / "out").close()
    before = files_in(tmp_path / "out")
    as_version_1(monkeypatch)
    with pytest.raises(NewerStore) as refused:
        Store(tmp_path / "out", create=False)
    assert "(its results store has schema version 2; this one knows versions up to 1)" in str(refused.value)
    assert files_in(tmp_path / "out") == before


def test_history_reads_a_version_1_store_as_it_is_and_says_it_kept_none(tmp_path, monkeypatch, invoke):
    folder = version_1_store(tmp_path, monkeypatch)
    before = files_in(folder / "out")
    done = invoke("history", folder / "out")
    assert done.exit_code == 0, done.output
    assert done.output == (f"no history in {folder / 'out'}: its results store was written before referee kept one "
                           f"(schema version 1 or before); the next tournament or gauntlet run in it records its "
                           f"entries' current versions\n")
    assert json.loads(invoke("history", folder / "out", "--json").output)["kept"] is False
    after = files_in(folder / "out")
    assert after.pop("results.sqlite-wal", b"") == b""
    after.pop("results.sqlite-shm", None)
    assert after == before and version_of(folder) == 1


# --- recorded from a run's standings ------------------------------------------------------------

def play(store: Store, lineup: tuple[str, ...], deal_sets: range, salt: int = 0, seconds: float = 1.0) -> None:
    """Random Aegis matches of ``lineup`` on these deal sets, both seatings, saved as a run saves them."""
    spec = games.get("aegis")
    for k in deal_sets:
        for seats in (lineup, lineup[::-1]):
            state = spec.new({}, seed=1000 + k)
            games.play_out(state, games.random_legal(random.Random(f"{k}{seats}{salt}")))
            store.save(f"{k}:{'|'.join(seats)}", k, 1000 + k, seats, state.results(),
                       records.to_record(state, seats=seats), seconds)


def standings_of(store: Store, versions: dict[str, str | None], pool: str | None = None,
                 off_scale: bool = False) -> standings.Standings:
    """The standings of the stored matches with the entries' current versions, as a run makes them."""
    st = standings.compute("aegis", list(store.matches()), bootstrap=50)
    st.entries = [Entry(name, EntryStatus.PLAYING, None, version) for name, version in versions.items()]
    st.pool_id, st.off_scale = pool, off_scale
    return st


def test_a_versions_row_is_replaced_as_it_plays_on_and_kept_when_rerun_drops_its_matches(tmp_path):
    store = Store(tmp_path / "out")
    try:
        play(store, ("mine", "other"), range(2))
        history.record(store, standings_of(store, {"mine": "aaaaaaaaaaaa", "other": "oooooooooooo"}), now=10.0)
        first = {r.entry: r for r in store.history() or []}
        assert first["mine"].matches == 4 and first["mine"].version == "aaaaaaaaaaaa" and first["mine"].recorded == 10
        play(store, ("mine", "other"), range(2, 4))  # the same version plays on: its row is replaced
        history.record(store, standings_of(store, {"mine": "aaaaaaaaaaaa", "other": "oooooooooooo"}), now=20.0)
        rows = store.history() or []
        assert [(r.entry, r.version, r.matches, r.recorded) for r in rows] == [
            ("mine", "aaaaaaaaaaaa", 8, 20.0), ("other", "oooooooooooo", 8, 20.0)]
        assert rows[0].first_played == first["mine"].first_played < rows[0].last_played
        kept = rows[0]
        with store.db:
            store._drop("mine")  # what --rerun mine does
        play(store, ("mine", "other"), range(4), salt=1)
        history.record(store, standings_of(store, {"mine": "bbbbbbbbbbbb", "other": "oooooooooooo"}), now=30.0)
        mine = [r for r in store.history() or [] if r.entry == "mine"]
        assert mine == [kept, mine[1]] and mine[1].version == "bbbbbbbbbbbb" and mine[1].matches == 8
    finally:
        store.close()


def test_a_row_is_on_its_pools_scale_or_its_runs_field(tmp_path):
    """With a pool the row names it (and an off-scale run); without, the field, with its --anchor."""
    store = Store(tmp_path / "out")
    try:
        play(store, ("mine", "other"), range(3))
        st = standings_of(store, {"mine": "aaaaaaaaaaaa", "other": None})  # other: external, no version
        st.anchor = ("other", 1000.0)
        history.record(store, st)
        assert [(r.entry, r.scale, r.anchor, r.off_scale) for r in store.history() or []] == [
            ("mine", None, "other=1000", False)]
        history.record(store, standings_of(store, {"mine": "bbbbbbbbbbbb"}, pool=POOL, off_scale=True))
        rows = store.history() or []
        assert [(r.version, r.scale, r.anchor, r.off_scale) for r in rows] == [
            ("aaaaaaaaaaaa", None, "other=1000", False), ("bbbbbbbbbbbb", POOL, None, True)]
        shown = standings.shown_line(next(b for b in st.lines if b.name == "mine"))
        assert (rows[0].shown, rows[0].elo, rows[0].lo, rows[0].hi) == (shown.kind, shown.elo, shown.lo, shown.hi)
    finally:
        store.close()


# --- what referee history prints ----------------------------------------------------------------

def row(version: str, day: int, shown: str = "estimate", elo: float | None = 1500.0, lo: float | None = 1450.0,
        hi: float | None = 1550.0, scale: str | None = POOL, anchor: str | None = None, off_scale: bool = False,
        entry: str = "mine") -> VersionRow:
    t = 1_780_000_000.0 + day * 86_400
    return VersionRow(entry, version, t, t + 600, 40, 40, shown, elo, lo, hi, scale, anchor, off_scale, t + 700)


#: three versions of mine on a pool (the last one off its scale, the second a bound), and one on a field
ROWS = [row("v1aaaaaaaaaa", 0), row("v2bbbbbbbbbb", 3, "lower", None, 1568.0, None),
        row("v3cccccccccc", 5, elo=1602.4, lo=1551.0, hi=1651.9, off_scale=True),
        row("o1dddddddddd", 0, scale=None, anchor="other=1000", entry="other")]


@pytest.fixture
def kept(tmp_path) -> Path:
    store = Store(tmp_path / "out")
    try:
        store.save_history(ROWS)
    finally:
        store.close()
    return tmp_path / "out"


def test_history_prints_a_row_per_version_in_order_with_its_scale(kept, invoke):
    done = invoke("history", kept, "mine")
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[2] == "mine: 3 version(s)"
    table = [re.split(r"\s{2,}", line.strip()) for line in lines[5:8]]
    assert table == [
        ["1", "v1aaaaaaaaaa", "2026-05-28 20:26", "2026-05-28 20:36", "40", "40", "1500", "[1450, 1550]",
         f"pool {POOL}"],
        ["2", "v2bbbbbbbbbb", "2026-05-31 20:26", "2026-05-31 20:36", "40", "40", "> 1568", "-", f"pool {POOL}"],
        ["3", "v3cccccccccc", "2026-06-02 20:26", "2026-06-02 20:36", "40", "40", "1602", "[1551, 1652]",
         f"pool {POOL}, off-scale"]]
    assert lines[9:] == [f"scale {history.POOL_NOTE}", f"scale {history.OFF_SCALE_NOTE}"]  # no field: no field note
    every = invoke("history", kept).output
    assert "other: 1 version(s)" in every and "field (other=1000)" in every
    assert f"scale {history.FIELD_NOTE}" in every and "compares only with the other entries' rows" in every


def test_history_json(kept, invoke):
    done = invoke("history", kept, "--json")
    assert done.exit_code == 0, done.output
    out = json.loads(done.output)
    assert out["kept"] is True and [e["entry"] for e in out["entries"]] == ["mine", "other"]
    mine = out["entries"][0]["versions"]
    assert [v["version"] for v in mine] == ["v1aaaaaaaaaa", "v2bbbbbbbbbb", "v3cccccccccc"]
    assert mine[1]["rating"] == {"kind": "lower", "elo": None, "lo": 1568.0, "hi": None, "shown": "> 1568",
                                 "interval": "-"}
    assert (mine[2]["scale"], mine[2]["pool"], mine[2]["off_scale"]) == ("pool", POOL, True)
    assert mine[0]["first_played"] == "2026-05-28T20:26:40Z" and mine[0]["matches"] == 40
    other = out["entries"][1]["versions"][0]
    assert (other["scale"], other["pool"], other["anchor"]) == ("field", None, "other=1000")
    assert out["notes"] == [history.FIELD_NOTE, history.POOL_NOTE, history.OFF_SCALE_NOTE]


def test_an_empty_history_says_so(tmp_path, invoke):
    Store(tmp_path / "out").close()
    done = invoke("history", tmp_path / "out")
    assert done.exit_code == 0
    assert done.output.startswith(f"no history in {tmp_path / 'out'} yet: a tournament or gauntlet run records")


@pytest.mark.parametrize("where, entry, message", [
    ("missing", None, "{tmp}/missing: not a results directory (not found); give the output directory of a tournament, "
                      "gauntlet or sprt run"),
    ("file.txt", None, "{tmp}/file.txt: not a results directory (a file); give the output directory of"),
    ("empty", None, "{tmp}/empty: not a results directory (no results.sqlite in it)"),
    ("out", "nobody", "{tmp}/out: no entry 'nobody' in this results directory (its entries: mine, other)"),
])
def test_history_refuses_in_one_line(kept, invoke, where, entry, message):
    tmp = kept.parent
    (tmp / "file.txt").write_text("x")
    (tmp / "empty").mkdir()
    done = invoke("history", tmp / where, *([entry] if entry else []))
    assert done.exit_code == ExitCode.USAGE
    assert done.output.startswith("Error: " + message.format(tmp=tmp)), done.output
    assert done.output.count("\n") == 1


def test_history_refuses_a_store_of_a_newer_schema_in_one_line(kept, invoke):
    with sqlite3.connect(kept / "results.sqlite") as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    done = invoke("history", kept)
    assert done.exit_code == ExitCode.USAGE
    assert done.output == (f"Error: {kept}: written by a newer referee (its results store has schema version "
                           f"{SCHEMA_VERSION + 1}; this one knows versions up to {SCHEMA_VERSION}): upgrade referee "
                           f"to read or resume it; the directory is left as it is\n")


# --- the report's chart -------------------------------------------------------------------------

def test_the_report_draws_each_entry_with_two_versions_or_more(kept):
    store = Store(kept, create=False)
    try:
        found = history.of_store(store)
    finally:
        store.close()
    section = report.history_section(found or [])
    assert section.count("<svg") == 1 and 'data-entry="mine"' in section and 'data-entry="other"' not in section
    chart = section[section.index("<svg"):section.index("</svg>")]
    groups = re.findall(r'<g class="version" data-version="(\w+)" data-shown="(\w+)">', chart)
    assert groups == [("v1aaaaaaaaaa", "estimate"), ("v2bbbbbbbbbb", "lower"), ("v3cccccccccc", "estimate")]
    assert chart.count("<circle") == 2 and chart.count('class="dot off-scale"') == 1  # a bound has no point
    assert chart.count('class="bar arrow"') == 1
    assert 'aria-describedby="history-table-0"' in chart
    table = section[section.index('<table class="grid" id="history-table-0">'):]
    assert table.count("<tr data-version=") == 3 and "&gt; 1568" in table
    assert chart.count('class="trend"') == 0  # the second a bound (no point), the third off-scale: none joined
    assert report.history_section([]) == ""


@pytest.mark.parametrize("scale, joined", [(POOL, 2), (None, 0)])
def test_the_chart_joins_versions_on_one_pool_and_never_on_the_field(scale, joined):
    """Ratings on one pool's scale compare across versions: a line joins them; on each run's field they do
    not, and are drawn apart."""
    rows = tuple(row(f"v{k}aaaaaaaaaa", k, elo=1500.0 + 10 * k, scale=scale) for k in range(3))
    chart = report.history_chart(history.EntryHistory("mine", None, rows), "c", "t")
    assert chart.count('class="trend"') == joined and chart.count("<circle") == 3


# --- end to end: a bot edited twice, each version rerun -----------------------------------------

BOT = '''\
"""A random bot whose choices follow SALT: each edit of SALT is a version that plays differently."""
from referee.bot import run_bot

SALT = {salt}


def decide(observation, legal_actions, game):
    return (game.rng.randrange(len(legal_actions)) + SALT) % len(legal_actions)


if __name__ == "__main__":
    run_bot(decide, None, default_name="mine")
'''


@pytest.fixture(scope="module")
def three_versions(tmp_path_factory) -> Path:
    """A tournament (Aegis, 4 deal sets) of ``mine``, a bot in a temporary directory, against a
    sample bot; its file edited twice, each time run again with ``--rerun mine``. Its output directory.
    One match at a time, so that the random bot's draws come in one order and every run plays the same
    games (with two at once the games changed from run to run, and once the three versions' ratings
    came out equal)."""
    tmp = tmp_path_factory.mktemp("history")
    (tmp / "mine").mkdir()
    tables = textwrap.dedent("""
        [clock]
        decision_ms = 2000
        bank_ms = 10000

        [limits]
        sandbox = "none"

        [[bots]]
        name = "mine"
        command = ["python", "bot.py"]
        cwd = "mine"

        [[bots]]
        name = "random"
        command = ["python", "-m", "sample_bots.random", "--seed", "2"]
        files = ["sample_bots/random.py"]
        """)
    path = write_tournament(tmp / "t.toml", tables + f'cwd = "{ROOT}"\n', game="aegis", deal_sets=4, seed=5,
                            concurrency=1)
    for salt in (1, 2, 3):
        (tmp / "mine" / "bot.py").write_text(BOT.format(salt=salt))
        done = run_cli("tournament", path, "--quiet", "--bootstrap", "200", *(["--rerun", "mine"] if salt > 1 else []))
        assert done.returncode == 0, done.stderr
    return tmp / "out"


@pytest.mark.e2e
def test_three_versions_of_a_bot_make_three_rows(three_versions):
    with sqlite3.connect(three_versions / "results.sqlite") as db:
        seen = [v for (v,) in db.execute("SELECT id FROM bot_versions WHERE bot = 'mine' ORDER BY first_seen")]
        stored = {v for (v,) in db.execute("SELECT DISTINCT version FROM seats WHERE bot = 'mine'")}
    assert len(seen) == 3 and stored == {seen[-1]}  # --rerun dropped the first two versions' matches
    done = run_cli("history", three_versions, "mine")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2] == "mine: 3 version(s)"
    versions = [re.split(r"\s{2,}", line.strip()) for line in lines[5:8]]
    assert [v[1] for v in versions] == [seen[0], seen[1], seen[2] + " *"]
    assert [v[4] for v in versions] == ["8", "8", "8"] and {v[8] for v in versions} == {"field"}
    assert lines[9] == f"scale {history.FIELD_NOTE}"
    out = json.loads(run_cli("history", three_versions, "--json").stdout)
    assert [len(e["versions"]) for e in out["entries"]] == [3, 1]
    assert len({v["rating"]["elo"] for v in out["entries"][0]["versions"]}) > 1  # the versions played differently


@pytest.mark.e2e
@pytest.mark.parametrize("width", [390, 1280])
def test_the_report_shows_the_chart_of_three_versions_in_chromium(browser, three_versions, tmp_path,  # noqa: F811
                                                                  width):
    done = run_cli("view", three_versions, "--out", tmp_path / "report")
    assert done.returncode == 0, done.stderr
    page = browser.new_page(viewport={"width": width, "height": 800})
    try:
        page.goto((tmp_path / "report" / "index.html").as_uri())
        fits(page)
        chart = page.locator("section.history[data-entry='mine'] svg.history-chart")
        chart.scroll_into_view_if_needed()
        assert chart.is_visible()
        box = chart.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width and box["height"] > 150
        points = chart.locator("g.version circle.dot")
        assert points.count() == 3 and chart.locator("g.version").count() == 3
        xs = []
        for k in range(3):
            point = points.nth(k).bounding_box()
            assert point is not None
            assert box["x"] <= point["x"] <= point["x"] + point["width"] <= box["x"] + box["width"]
            xs.append(point["x"])
        assert xs == sorted(xs) and min(b - a for a, b in zip(xs, xs[1:])) > 20  # in order, apart
        label = chart.locator("text.tick").first.bounding_box()
        assert label is not None and label["height"] >= 10  # readable: the labels are not shrunk past 10 px
        assert page.locator("section.history[data-entry='random']").count() == 0  # one version: no chart
        rows = page.locator("#history-table-0 tbody tr")
        assert rows.count() == 3 and chart.get_attribute("aria-describedby") == "history-table-0"
    finally:
        page.close()
