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
from referee.results.store import Store

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
    """The competition (1 deal set), then the same directory grown (3 deal sets, a late entry), and
    the grown file from scratch elsewhere."""
    grown, scratch = tmp_path_factory.mktemp("grown"), tmp_path_factory.mktemp("scratch")
    first = run_cli("tournament", competition(grown, 1, late=False), "--bootstrap", "100")
    stored_first = Store(grown / "out", create=False)
    first_rows = list(stored_first.matches())
    stored_first.close()
    second = run_cli("tournament", competition(grown, 3, late=True), "--bootstrap", "100")
    fresh = run_cli("tournament", competition(scratch, 3, late=True), "--bootstrap", "100")
    return {"first": first, "first_rows": first_rows, "second": second, "fresh": fresh, "grown": grown,
            "scratch": scratch}


@pytest.mark.e2e
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
    assert sorted(r.key for r in runs["first_rows"]) == ["0:heuristic|random", "0:random|heuristic"]
    store = Store(runs["grown"] / "out", create=False)
    try:
        assert {e.name: e.status for e in store.entries()} == {
            "random": "playing", "broken": "did not start", "heuristic": "playing", "dies": "dead",
            "late": "playing"}
        assert any("dies" in r.lineup for r in store.matches(every=True))
        assert not any("dies" in r.lineup for r in store.matches())
    finally:
        store.close()


@pytest.mark.e2e
def test_the_grown_directory_plays_only_the_new_matches(runs):
    second = runs["second"]
    assert second.returncode == ExitCode.WITHDRAWN, second.stderr
    assert "grows: deal sets 1 -> 3; new entries: late" in second.stderr
    # 3 entries in play, 3 deal sets: 3 pairs x 2 seatings x 3 = 18, of which the first run stored 2
    assert re.search(r"16 of 18 match\(es\) to play, 2 stored; \d+ stored match\(es\) are not in this schedule",
                     second.stderr), second.stderr
    assert "played 16 match(es) now, 18 in all" in second.stderr
    assert "late entries" not in second.stderr  # broken did not start: every record was held, none shown


def test_a_late_entry_on_deal_sets_a_report_may_have_shown_is_said_in_one_line(tmp_path):
    """With a seed given in the file (no secret to keep: nothing is retired), a late entry or a new
    version on a deal set that may have been seen is said in one line; with a drawn seed, never
    (the run retires that deal set instead: tests/test_fresh_deals.py)."""
    import dataclasses

    from referee.competition import config as tconfig
    from referee.competition.run import late_entries
    from referee.model import Schedule, Seating
    from referee.results import release

    given = tconfig.load(two_bots(tmp_path))
    store = Store(tmp_path / "out")
    store.set_meta("config", json.dumps(given.describe()))
    for lineup in (("a", "b"), ("b", "a")):
        store.save(f"0:{'|'.join(lineup)}", 0, 1, lineup, {"scores": [1, 0], "placing": [1, 2]}, {}, 0.1)
    pairs = (("a", "b"), ("b", "a"), ("a", "late"), ("late", "a"), ("b", "late"), ("late", "b"))
    grown = Schedule(tuple(Seating(k, 1, lineup) for k in (0, 1) for lineup in pairs), (), "")
    assert late_entries(given, store, grown) is None  # no run recorded a schedule: nothing played before
    store.set_schedule(["0:a|b", "0:b|a", "0:a|c"])  # deal set 0 was not over: held, never shown
    release.note_seen(store)  # as a run notes what nothing holds
    assert late_entries(given, store, grown) is None
    store.set_schedule(["0:a|b", "0:b|a"])
    store.db.execute("INSERT INTO entries VALUES ('c', 2, 'did not start', 'exit code 3')")  # every record held
    release.note_seen(store)
    assert late_entries(given, store, grown) is None
    store.db.execute("DELETE FROM entries")
    release.note_seen(store)  # c is withdrawn: nothing holds deal set 0, a report may show it
    assert late_entries(given, store, grown) == (
        "late entries and new versions: late play deal set 0 played before they came and not held since: a report "
        "of this directory may already have shown their records (an entrant who read it knows those deals); the "
        "seed is given in the tournament file, so no secret deal set can take their place (leave seed out of the "
        "file: docs/security.md)")
    assert late_entries(dataclasses.replace(given, seed_drawn=True), store, grown) is None
    store.close()


@pytest.mark.e2e
def test_the_grown_standings_are_those_of_a_run_from_scratch_byte_for_byte(runs):
    fresh = runs["fresh"]
    assert fresh.returncode == ExitCode.WITHDRAWN, fresh.stderr
    assert "18 in all" in fresh.stderr
    grown_code, grown = standings_json(runs["grown"])
    fresh_code, scratch = standings_json(runs["scratch"])
    assert grown_code == fresh_code == ExitCode.WITHDRAWN  # ratings says so too
    assert grown == scratch
    data = json.loads(grown)
    assert data["matches"] == 18 and data["deal_sets"] == 3
    assert [(e["name"], e["status"]) for e in data["entries"]] == [
        ("random", "playing"), ("broken", "did not start"), ("heuristic", "playing"), ("dies", "dead"),
        ("late", "playing")]
    assert all(e["version"] for e in data["entries"])
    csv = run_cli("ratings", runs["grown"] / "out", "--format", "csv", "--bootstrap", "0").stdout.splitlines()
    assert csv[0].endswith(",status,why") and csv[-2].startswith(",broken,") and "did not start" in csv[-2]


@pytest.mark.e2e
def test_the_history_keeps_which_version_played_each_match(runs, tmp_path):
    done = run_cli("export", runs["grown"] / "out", "--to", tmp_path)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "matches.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header[-3:] == ["version0", "version1", "counted"]
    rows = [dict(zip(header, line.split(","))) for line in lines[1:]]
    assert all(re.fullmatch(r"[0-9a-f]{12}", r["version0"]) and r["version1"] for r in rows)
    assert {r["counted"] for r in rows if "dies" in (r["seat0"], r["seat1"])} == {"0"}
    assert sum(r["counted"] == "1" for r in rows) == 18


# --- what a directory accepts: the file may grow, never shrink or change what shapes the results ----------


def two_bots(tmp: Path, names=("a", "b"), deal_sets=1, extra="", game="aegis", withdrawn=(),
             cwd: Path | None = None) -> Path:
    """A tournament file of random bots run in ``cwd``: by default an empty directory, for bots that
    never start (:func:`stored` makes their results up), whose versions a claim takes at once (the
    checkout, hashed and copied for each, took a second of CPU a test)."""
    if cwd is None:
        cwd = bots_home(tmp)
    tables = "\n[clock]\ndecision_ms = 1000\n"
    for name in names:
        tables += f'\n[[bots]]\nname = "{name}"\ncommand = "python -m sample_bots.random"\ncwd = "{cwd}"\n'
        if name in withdrawn:
            tables += "withdrawn = true\n"
    return write_tournament(tmp / "t.toml", tables, game=game, deal_sets=deal_sets, seed=3, concurrency=1,
                            extra=extra)


def bots_home(tmp: Path) -> Path:
    home = tmp / "bots"
    home.mkdir(exist_ok=True)
    return home


def stored(tmp: Path, config_path: Path, played=True) -> list[str]:
    """Claim the directory for this file and store a (made-up) result for every match of its
    schedule, as a run would; returns what the claim announced."""
    from referee.competition import config as tconfig
    from referee.competition import run as trun

    said: list[str] = []
    cfg = tconfig.load(config_path)
    store = trun.open_store(cfg, announce=said.append)
    try:
        schedule = trun.schedule_of(cfg, trun.out_for_good(store))
        store.set_schedule(s.key for s in schedule.seatings)
        if played:
            for s in schedule.seatings:
                if s.key not in store.done():
                    n = len(s.lineup)
                    store.save(s.key, s.deal_set, s.seed, s.lineup,
                               {"scores": list(range(n)), "placing": list(range(n, 0, -1))}, {}, 0.1)
    finally:
        store.close()
    return said


def test_a_directory_takes_a_file_that_grows_and_refuses_one_that_shrinks(tmp_path):
    from referee.results.store import StoreError

    stored(tmp_path, two_bots(tmp_path))
    assert stored(tmp_path, two_bots(tmp_path, ("a", "b", "c"), deal_sets=2)) == [
        f"{tmp_path / 'out'} grows: deal sets 1 -> 2; new entries: c"]
    assert stored(tmp_path, two_bots(tmp_path, ("a", "b", "c"), deal_sets=2, withdrawn=("c",))) == [
        f"{tmp_path / 'out'} grows: withdrawn: c"]
    # a withdrawn entry is not a version to check: its directory may change, or go
    gone = two_bots(tmp_path, ("a", "b", "c"), deal_sets=2, withdrawn=("c",))
    gone.write_text(gone.read_text().replace('withdrawn = true', f'withdrawn = true\ncwd = "{tmp_path / "gone"}"'))
    gone.write_text(gone.read_text().replace(f'cwd = "{bots_home(tmp_path)}"\nwithdrawn', 'withdrawn', 1))
    assert stored(tmp_path, gone) == []
    refusals = [  # (the file's arguments, the refusal)
        (dict(names=("a", "c"), deal_sets=2),
         f"bot b has matches stored in {tmp_path / 'out'} but is not in the tournament file: keep its [[bots]] "
         f"table (with withdrawn = true it is neither played nor ranked), or use a new output directory"),
        (dict(names=("a", "b", "c"), deal_sets=1),
         f"{tmp_path / 'out'} holds matches of deal sets 0 to 1, more than deal_sets = 1: a tournament only grows "
         f"(raise deal_sets, or use a new output directory)"),
        (dict(names=("a", "b", "c"), deal_sets=2, extra='isolation = "match"'), "(changed: isolation)"),
        (dict(names=("a", "b", "c"), deal_sets=2, extra='absent = "withdraw"'), "(changed: absent)"),
    ]
    for args, message in refusals:
        with pytest.raises(StoreError) as refused:
            stored(tmp_path, two_bots(tmp_path, **args))
        assert message in str(refused.value) and "\n" not in str(refused.value)
    seeded = two_bots(tmp_path, ("a", "b", "c"), deal_sets=2)
    seeded.write_text(seeded.read_text().replace("seed = 3", "seed = 4").replace("decision_ms = 1000",
                                                                                  "decision_ms = 900"))
    with pytest.raises(StoreError, match=r"\(changed: clock, seed\)"):
        stored(tmp_path, seeded)


def test_a_directory_holding_no_match_takes_any_file(tmp_path):
    """A failed start leaves nothing that blocks a corrected rerun (it used to be refused as
    'another tournament configuration (changed: bots)')."""
    stored(tmp_path, two_bots(tmp_path, ("a", "ghost")), played=False)
    corrected = two_bots(tmp_path, ("a", "b"), deal_sets=3, extra='isolation = "match"')
    corrected.write_text(corrected.read_text().replace("seed = 3", "seed = 9"))
    assert stored(tmp_path, corrected) == []
    store = Store(tmp_path / "out", create=False)
    try:
        assert [e.name for e in store.entries()] == ["a", "b"] and store.count() == 6
    finally:
        store.close()


def test_confirmation_line_ups_that_an_entry_changes_stay_stored_but_do_not_count(tmp_path):
    """Three entries fill the four seats in three line-ups; with a fourth they sit as one group of
    four: the three-entry matches stay stored, not counted, and the group's are played. From four
    entries on, a new entry keeps every stored group of four."""
    from referee.competition import config as tconfig
    from referee.competition import run as trun
    from referee.competition.schedule import missing

    stored(tmp_path, two_bots(tmp_path, ("a", "b", "c"), game="confirmation", extra="max_groups = 70"))
    four = two_bots(tmp_path, ("a", "b", "c", "d"), game="confirmation")
    schedule = trun.schedule_of(tconfig.load(four))
    store = Store(tmp_path / "out", create=False)
    try:
        assert len(store.done()) == 12 and len(missing(schedule, store.done())) == 4  # nothing stored is in it
    finally:
        store.close()
    stored(tmp_path, four)
    store = Store(tmp_path / "out", create=False)
    try:
        assert store.count(every=True) == 16 and store.count() == 4  # the group's four rotations count
        assert all(len(set(r.lineup)) == 4 for r in store.matches())
    finally:
        store.close()
    five = two_bots(tmp_path, ("a", "b", "c", "d", "e"), game="confirmation")
    store = Store(tmp_path / "out", create=False)
    try:
        grown = trun.schedule_of(tconfig.load(five))
        assert {r.key for r in store.matches()} <= {s.key for s in grown.seatings}  # every group of four stays
        assert len(missing(grown, store.done())) == len(grown.seatings) - 4
    finally:
        store.close()


@pytest.mark.e2e
def test_a_failed_start_then_the_corrected_file_plays(tmp_path):
    path = two_bots(tmp_path, ("a", "ghost"), cwd=ROOT)
    path.write_text(path.read_text().replace('name = "ghost"\ncommand = "python -m sample_bots.random"',
                                             'name = "ghost"\ncommand = "no-such-bot-command"'))
    failed = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert failed.returncode == ExitCode.USAGE and "bot ghost cannot start" in failed.stderr, failed.stderr
    fixed = two_bots(tmp_path, ("a", "b"), cwd=ROOT)
    fixed.write_text(fixed.read_text().replace("seed = 3", "seed = 5"))  # and another seed: anything goes
    done = run_cli("tournament", fixed, "--quiet", "--bootstrap", "0")
    assert done.returncode == 0, done.stderr
    assert "played 2 match(es) now, 2 in all" in done.stderr


# --- new deal sets after a drawn seed was released: a new secret seed ------------------------------

@pytest.mark.e2e
def test_deal_sets_added_after_the_drawn_seed_was_printed_are_dealt_from_a_new_secret_seed(tmp_path):
    """A run with a drawn seed ends by printing it (and the report shows it): deal sets added to the
    directory after that would be dealt from a seed anyone may know. They get a new secret seed,
    kept in the store, printed (and shown) only when the run that plays them ends; the old deal sets
    keep theirs, and a resumed run the same seeds."""
    from referee.model import deal_seed

    def file(deal_sets: int, b_withdrawn: bool = False) -> Path:
        path = tmp_path / "t.toml"
        path.write_text(textwrap.dedent(f"""
        [tournament]
        game = "aegis"
        deal_sets = {deal_sets}
        concurrency = 2
        output = "out"

        [limits]
        sandbox = "none"

        [[bots]]
        name = "a"
        command = ["python", "-m", "sample_bots.random", "--seed", "1"]
        cwd = "{ROOT}"

        [[bots]]
        name = "b"
        command = ["python", "-m", "sample_bots.random", "--seed", "2"]
        cwd = "{ROOT}"
        withdrawn = {str(b_withdrawn).lower()}
        """))
        return path

    def seeds(done) -> tuple[int, list[tuple[int, int]]]:
        """The master seed a run printed at its end, and the later ones (first deal set, seed)."""
        (line,) = [line for line in done.stderr.splitlines() if line.startswith("master seed: ")]
        return (int(line.split()[2]),
                [(int(k), int(s)) for k, s in re.findall(r"deal sets from (\d+) on: seed (\d+)", line)])

    first = run_cli("tournament", file(1), "--quiet", "--bootstrap", "20", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    master, none = seeds(first)
    assert none == []
    grown = run_cli("tournament", file(2), "--quiet", "--bootstrap", "20", cwd=tmp_path)
    assert grown.returncode == 0, grown.stderr
    again_master, [(from_set, later)] = seeds(grown)
    assert again_master == master and from_set == 1 and later != master
    store = Store(tmp_path / "out", create=False)
    try:
        dealt = {row.deal_set: json.loads(store.db.execute("SELECT seed FROM matches WHERE key = ?",
                                                            (row.key,)).fetchone()[0]) for row in store.matches()}
        assert store.config()["later_seeds"] == [[1, later]] and store.seed_released()
    finally:
        store.close()
    assert dealt == {0: deal_seed(master, 0), 1: deal_seed(later, 1)}
    again = run_cli("tournament", file(2), "--quiet", "--bootstrap", "20", cwd=tmp_path)  # nothing new: same seeds
    assert again.returncode == 0 and seeds(again) == seeds(grown), again.stderr
    # a run that grows but deals nothing (b withdrawn: no match) draws the next seed and prints it not
    idle = run_cli("tournament", file(3, b_withdrawn=True), "--quiet", "--bootstrap", "20", cwd=tmp_path)
    assert seeds(idle) == seeds(grown), idle.stderr
    store = Store(tmp_path / "out", create=False)
    try:
        [_, (from_two, unprinted)] = store.config()["later_seeds"]
    finally:
        store.close()
    assert from_two == 2 and str(unprinted) not in idle.stderr
    played = run_cli("tournament", file(3), "--quiet", "--bootstrap", "20", cwd=tmp_path)  # that secret deals it
    assert played.returncode == 0 and seeds(played) == (master, [(1, later), (2, unprinted)]), played.stderr


@pytest.mark.e2e
def test_a_drawn_seed_is_not_printed_while_an_entry_did_not_start(tmp_path):
    """It deals every deal set the entry will play when it comes back (red team finding 3); and
    the report holds the deal sets it would come back to play, not those it played before."""
    late = ["python", "-c", "import os, runpy, sys\nif os.environ.get('FAIL'): sys.exit(3)\n"
            "runpy.run_module('sample_bots.random', run_name='__main__')"]  # its env is not in its version

    def competition(deal_sets: int, late_starts: bool) -> Path:
        tables = '\n[limits]\nsandbox = "none"\n' + "".join(
            f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{ROOT}"\n' for name, command in (
                ("a", ["python", "-m", "sample_bots.random", "--seed", "1"]),
                ("b", ["python", "-m", "sample_bots.random", "--seed", "2"]), ("late", late)))
        tables += "" if late_starts else 'env = { FAIL = "1" }\n'
        path = write_tournament(tmp_path / "t.toml", tables, game="aegis", deal_sets=deal_sets, seed=1,
                                concurrency=1, extra='absent = "withdraw"')
        path.write_text(path.read_text().replace("seed = 1\n", ""))
        return path

    first = run_cli("tournament", competition(1, late_starts=True), "--quiet", "--bootstrap", "0")
    assert first.returncode == 0 and re.search(r"master seed: \d+ ", first.stderr), first.stderr
    grown = run_cli("tournament", competition(2, late_starts=False), "--quiet", "--bootstrap", "0")
    assert grown.returncode == ExitCode.WITHDRAWN, grown.stderr  # late did not start: a and b play deal set 1
    assert ("master seed: not printed: it deals every deal set, and records are held while late did not start"
            in grown.stderr) and "seed 1" not in grown.stderr and "deal sets from 1 on: seed" not in grown.stderr
    viewed = run_cli("view", tmp_path / "out", "--bootstrap", "0")
    assert viewed.returncode == 0 and "report: 2 match record(s) held while late did not start" in viewed.stderr
    replays = sorted(p.name for p in (tmp_path / "out" / "report" / "replays").iterdir())
    assert replays == ["0_a,b.html", "0_b,a.html"]  # deal set 0, which late played: its replays are shown
    again = run_cli("tournament", competition(2, late_starts=True), "--quiet", "--bootstrap", "0")  # it comes back
    assert again.returncode == 0, again.stderr
    assert re.search(r"master seed: \d+ .*deal sets from 1 on: seed \d+", again.stderr), again.stderr
