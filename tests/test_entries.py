"""Every entry accounted for: a bot that cannot start stops the run before any match; one that
dies for good mid-run leaves the run incomplete (exit 4), marked and ranked last; a changed
bot is refused in an existing output directory unless --rerun replays it. Real processes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from harness import ROOT, Bots, run_cli, write_tournament

from referee import model
from referee.cli.exits import ExitCode
from referee.hosting import versions
from referee.model import BotSpec
from referee.results import standings
from referee.results.store import MatchRow, Store

CRASH_AFTER = ROOT / "tests" / "bots" / "crash_after.py"


def tournament(tmp: Path, bots: str, *, deal_sets: int = 2, concurrency: int = 2, extra: str = "") -> Path:
    tables = "\n[clock]\ndecision_ms = 2000\nbank_ms = 10000\n\n[limits]\nsandbox = \"none\"\n" + textwrap.dedent(bots)
    return write_tournament(tmp / "t.toml", tables, game="aegis", deal_sets=deal_sets, seed=5,
                            concurrency=concurrency, extra=extra)


def random_bot(name: str, seed: int) -> str:
    return f"""
    [[bots]]
    name = "{name}"
    command = ["python", "-m", "sample_bots.random", "--seed", "{seed}"]
    cwd = "{ROOT}"
    """


def stored(tmp: Path) -> list[MatchRow]:
    store = Store(tmp / "out", create=False)
    try:
        return list(store.matches())
    finally:
        store.close()


# --- before the first match ------------------------------------------------------------


@pytest.mark.e2e
def test_a_missing_or_crashing_bot_stops_the_tournament_before_any_match(tmp_path):
    bots = random_bot("r1", 1) + random_bot("r2", 2) + """
    [[bots]]
    name = "ghost"
    command = ["no-such-bot-command", "--fast"]

    [[bots]]
    name = "broken"
    command = ["python", "-c", "import sys; print('cannot load my weights'); sys.exit(3)"]
    """
    started = time.monotonic()
    done = run_cli("tournament", tournament(tmp_path, bots), "--quiet")
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert time.monotonic() - started < 25  # not a wait for startup_s (30 s): both are known at once
    error = next(line for line in done.stderr.splitlines() if line.startswith("Error:"))
    assert "bot broken ended before it connected (exit code 3)" in error
    assert "bot ghost cannot start: command not found: no-such-bot-command" in error
    assert "no match was played" in error
    assert "last lines of" in done.stderr and "cannot load my weights" in done.stderr  # broken's log
    assert "Traceback" not in done.stderr
    assert stored(tmp_path) == []


@pytest.mark.e2e
def test_an_external_bot_is_waited_for_at_the_address_printed(tmp_path):
    bots = random_bot("r1", 1) + """
    [[bots]]
    name = "ext"
    external = true
    token = "s3cret"
    """
    path = tournament(tmp_path, bots, deal_sets=1, extra="startup_s = 1")
    late = run_cli("tournament", path, "--quiet")
    assert late.returncode == ExitCode.USAGE
    assert re.search(r"waiting up to 1 s for external bot ext to connect to 127\.0\.0\.1:\d+", late.stderr)
    assert "bot ext did not connect within 1 s: no match was played" in late.stderr
    assert stored(tmp_path) == []

    # the same, with the bot started from the line the run prints
    path.write_text(path.read_text().replace("startup_s = 1", "startup_s = 60"))
    run = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(path), "--quiet"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bots_started = None
    try:
        for line in run.stderr:
            found = re.search(r"for external bot ext to connect to (\S+) ", line)
            if found:
                bots_started = Bots(found.group(1))
                bots_started.sample("ext", "--token", "s3cret")
                break
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
        if bots_started is not None:
            bots_started.close()
    assert bots_started is not None and run.returncode == 0, err
    assert len(stored(tmp_path)) == 2 and " ext " in out


@pytest.mark.e2e
def test_a_gauntlet_and_an_sprt_with_a_missing_bot_exit_2_before_any_match(tmp_path):
    bots = random_bot("r1", 1) + """
    [[bots]]
    name = "cand"
    command = ["no-such-bot-command"]
    """
    path = tournament(tmp_path, bots + '\n[gauntlet]\ncandidate = "cand"\n')
    done = run_cli("gauntlet", path, "--quiet")
    assert done.returncode == ExitCode.USAGE and "bot cand cannot start: command not found" in done.stderr
    assert stored(tmp_path) == []
    sprt = run_cli("sprt", "--game", "aegis", "--candidate", "cand=no-such-bot-command", "--baseline",
                   "r1=python -m sample_bots.random", "--output", tmp_path / "sprt", "--quiet")
    assert sprt.returncode == ExitCode.USAGE and "bot cand cannot start: command not found" in sprt.stderr
    assert Store(tmp_path / "sprt", create=False).count() == 0


@pytest.mark.e2e
def test_match_with_an_absent_bot_exits_2_at_once():
    for command, why in [("no-such-bot-command", "bot b cannot start: command not found: no-such-bot-command"),
                         ("python -c 'import sys; sys.exit(5)'", "bot b ended before it connected (exit code 5)")]:
        started = time.monotonic()
        done = run_cli("match", "aegis", "--bot", "a=python -m sample_bots.random", "--bot", f"b={command}")
        assert done.returncode == ExitCode.USAGE, done.stderr
        assert why in done.stderr and "Traceback" not in done.stderr
        assert time.monotonic() - started < 25  # before: the 30 s connect timeout, then a "win" by default


# --- a bot that dies for good mid-run ----------------------------------------------------


@pytest.mark.e2e
def test_a_bot_that_dies_after_two_matches_leaves_the_run_incomplete(tmp_path):
    count = tmp_path / "count"
    bots = random_bot("r1", 1) + random_bot("r2", 2) + f"""
    [[bots]]
    name = "crash"
    command = ["python", "{CRASH_AFTER}", "--after", "2"]
    cwd = "{ROOT}"
    env = {{ CRASH_COUNT_FILE = "{count}" }}
    """
    path = tournament(tmp_path, bots, deal_sets=3, concurrency=1)
    done = run_cli("tournament", path, "--quiet", "--bootstrap", "50")
    assert done.returncode == ExitCode.INCOMPLETE, done.stderr
    assert "incomplete: bot crash did not play" in done.stderr
    rows = stored(tmp_path)
    theirs = [r for r in rows if "crash" in r.lineup]
    # it played its two matches (and perhaps one more, dying in it); the rest were skipped, not scored
    assert 2 <= len(theirs) <= 3 and len(rows) == 6 + len(theirs)
    missing = 12 - len(theirs)
    assert f"* bot crash did not play {missing} of its 12 matches: it died 4 times" in done.stdout
    table = [line.split() for line in done.stdout.splitlines() if re.match(r"\s+\d\s", line)]
    assert [line[1] for line in table][-1] == "crash" and table[-1][2] == "*"

    rated = run_cli("ratings", tmp_path / "out", "--format", "json", "--bootstrap", "0")
    assert rated.returncode == ExitCode.INCOMPLETE  # the standings of an incomplete run say so by their exit code too
    as_json = json.loads(rated.stdout)
    last = as_json["standings"][-1]
    assert last["name"] == "crash" and last["incomplete"].startswith("died 4 times")
    assert all("incomplete" not in line for line in as_json["standings"][:-1])
    csv = run_cli("ratings", tmp_path / "out", "--format", "csv", "--bootstrap", "0").stdout.splitlines()
    assert csv[0].endswith(",incomplete") and csv[-1].startswith("3,crash,") and "died 4 times" in csv[-1]

    # a resume while it still cannot start: stopped before any match, nothing lost, still marked
    again = run_cli("tournament", path, "--quiet", "--bootstrap", "50")
    assert again.returncode == ExitCode.USAGE and "bot crash ended before it connected" in again.stderr
    assert len(stored(tmp_path)) == len(rows)
    # once it can play again (its count reset), the same command plays what is missing: complete
    count.write_text("-100")
    fixed = run_cli("tournament", path, "--quiet", "--bootstrap", "50")
    assert fixed.returncode == ExitCode.OK, fixed.stderr
    assert f"played {missing} match(es) now, 18 in all" in fixed.stderr
    assert "*" not in fixed.stdout and "did not play" not in fixed.stdout
    assert run_cli("ratings", tmp_path / "out", "--bootstrap", "0").returncode == ExitCode.OK


def test_an_incomplete_bot_ranks_below_every_bot_that_played_all():
    rows = [MatchRow(f"{k}:{a}|{b}", k, (a, b), {"scores": [1, 0], "placing": [1, 2]})
            for k in range(3) for a, b in [("a", "b"), ("a", "c"), ("b", "c")]]
    st = standings.compute("aegis", rows, bootstrap=50)
    assert [b.name for b in st.lines] == ["a", "b", "c"] and st.lines[1].los_next is not None
    standings.mark_incomplete(st, {"a": "died 4 times", "nobody": "not in these results"})
    assert [b.name for b in st.lines] == ["b", "c", "a"] and st.incomplete == {"a": "died 4 times"}
    # b's next is still c; c's next (a) and a's (none) are no longer what their LOS compared
    assert st.lines[0].los_next is not None and st.lines[1].los_next is None is st.lines[2].los_next
    assert "a *" in standings.table(st)
    assert standings.to_json(st)["standings"][2]["incomplete"] == "died 4 times"
    assert standings.to_csv(st).splitlines()[0].endswith(",incomplete")
    complete = standings.compute("aegis", rows, bootstrap=0)
    standings.mark_incomplete(complete, {})
    assert "incomplete" not in standings.to_csv(complete) and "*" not in standings.table(complete)


# --- versions ------------------------------------------------------------------------------


def test_a_version_is_the_command_the_directory_and_every_file_of_it(tmp_path):
    (tmp_path / "bot.py").write_text("import pkg.mod\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "weights.bin").write_bytes(b"\0" * 1000)
    for skipped in (".git/HEAD", "pkg/__pycache__/mod.cpython-311.pyc", "old-run/results.sqlite", "old-run/logs/b.log",
                    "out/x"):
        (tmp_path / skipped).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / skipped).write_text("changes")
    spec = BotSpec("b", ("python", "bot.py", "--depth", "3"), str(tmp_path))
    one = versions.of(spec, hide=[tmp_path / "out"])
    assert set(one["files"]) == {str(tmp_path / f) for f in ("bot.py", "pkg/mod.py", "weights.bin")}
    # a changed imported module is a new version; a changed pyc, VCS, other run or hidden path is not
    # (the sandbox masks them: tests/test_sandbox.py)
    for skipped in (".git/HEAD", "pkg/__pycache__/mod.cpython-311.pyc", "old-run/logs/b.log", "out/x"):
        (tmp_path / skipped).write_text("changed")
    assert versions.of(spec, hide=[tmp_path / "out"]) == one
    (tmp_path / ".config").mkdir()  # another dot-directory: the sandbox shows it, so it is part of the version
    (tmp_path / ".config" / "strategy.py").write_text("")
    assert versions.changes(one, versions.of(spec, hide=[tmp_path / "out"])) == [
        f"the file {tmp_path / '.config' / 'strategy.py'}"]
    (tmp_path / ".config" / "strategy.py").unlink()
    (tmp_path / "pkg" / "mod.py").write_text("x = 2\n")
    assert versions.changes(one, versions.of(spec, hide=[tmp_path / "out"])) == [
        f"the file {tmp_path / 'pkg' / 'mod.py'}"]
    (tmp_path / "bot.py").write_text("import pkg.mod  # v2\n")
    (tmp_path / "new.py").write_text("")
    again = versions.of(BotSpec("b", ("python", "bot.py"), str(tmp_path)), [tmp_path / "out"])
    assert versions.changes(one, again) == [
        "its command", f"the files {tmp_path / 'bot.py'}, {tmp_path / 'new.py'}, {tmp_path / 'pkg' / 'mod.py'}"]
    # declared files: only those (and what the command names)
    declared = BotSpec("b", ("python", "bot.py"), str(tmp_path), files=("pkg/*.py",))
    assert set(versions.of(declared)["files"]) == {str(tmp_path / "bot.py"), str(tmp_path / "pkg" / "mod.py")}
    assert versions.of(BotSpec("e", external=True, token="t")) is None
    assert versions.short_id(one) == versions.short_id(dict(one)) and len(versions.short_id(one)) == 12


def test_the_version_cache_spares_reading_unchanged_files_and_stays_honest(tmp_path, monkeypatch):
    (tmp_path / "big.bin").write_bytes(b"a" * 100_000)
    spec = BotSpec("b", ("python", "big.bin"), str(tmp_path))
    cache: dict = {}
    first = versions.of(spec, cache=cache)
    assert cache == {}  # written a moment ago: a change in the same clock tick could keep its times
    monkeypatch.setattr(versions, "RACY_S", -1.0)
    assert versions.of(spec, cache=cache) == first and str(tmp_path / "big.bin") in cache
    opened = []
    real_open = os.open  # the one way versions reads a file
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(Path(path)) or real_open(path, *a, **k))
    assert versions.of(spec, cache=cache) == first and opened == []  # from the cache: not read
    (tmp_path / "big.bin").write_bytes(b"b" * 100_000)  # same size: its times (and ctime) change
    opened.clear()
    assert versions.changes(first, versions.of(spec, cache=cache)) == [f"the file {tmp_path / 'big.bin'}"]
    assert opened == [tmp_path / "big.bin"]


def test_a_bots_files_must_name_something(tmp_path):
    from referee.competition import config as tconfig

    path = write_tournament(tmp_path / "t.toml", """
[[bots]]
name = "a"
command = "python a.py"
files = ["src/*.py"]

[[bots]]
name = "b"
command = "python b.py"
""", game="aegis", deal_sets=1, seed=1, concurrency=1)
    with pytest.raises(model.ConfigError, match=r"t.toml:\d+: bot 'a': files entry 'src/\*.py' matches nothing"):
        tconfig.load(path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("")
    assert tconfig.load(path).bots[0].files == ("src/*.py",)


@pytest.mark.e2e
def test_a_changed_bot_is_refused_and_rerun_replays_its_matches(tmp_path):
    script = tmp_path / "mybot.py"
    script.write_text("from sample_bots.random import main\nmain()\n")
    bots = random_bot("r1", 1) + random_bot("r2", 2) + f"""
    [[bots]]
    name = "mine"
    command = ["python", "{script}", "--seed", "7"]
    env = {{ PYTHONPATH = "{ROOT}" }}
    """
    path = tournament(tmp_path, bots, deal_sets=1)
    first = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert first.returncode == 0, first.stderr
    before = {r.key: r.results for r in stored(tmp_path)}
    assert len(before) == 6

    script.write_text(script.read_text() + "# version 2\n")
    refused = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert refused.returncode == ExitCode.USAGE
    assert refused.stderr.strip().splitlines()[-1] == (
        f"Error: bot mine changed since its matches in {tmp_path / 'out'} were played (the file {script}): "
        f"give --rerun mine to play its matches again, or use a new output directory")
    assert {r.key: r.results for r in stored(tmp_path)} == before

    bad = run_cli("tournament", path, "--quiet", "--rerun", "yours")
    assert bad.returncode == ExitCode.USAGE and "--rerun yours: no such bot" in bad.stderr

    rerun = run_cli("tournament", path, "--quiet", "--bootstrap", "0", "--rerun", "mine")
    assert rerun.returncode == 0, rerun.stderr
    assert "--rerun mine: its 4 stored match(es) are dropped, to be played again" in rerun.stderr
    assert "played 4 match(es) now, 6 in all" in rerun.stderr
    after = {r.key: r.results for r in stored(tmp_path)}
    assert after.keys() == before.keys()
    # the same version again: resumed as usual, nothing to play
    same = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert same.returncode == 0 and "played 0 match(es) now, 6 in all" in same.stderr

    # a directory written before versions were kept: the bots as they are now are recorded
    store = Store(tmp_path / "out", create=False)
    with store.db:
        store.db.execute("DELETE FROM meta WHERE key = 'versions'")
    store.close()
    script.write_text(script.read_text() + "# version 3\n")
    old = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert old.returncode == 0 and "played 0 match(es) now" in old.stderr
    store = Store(tmp_path / "out", create=False)
    recorded = json.loads(store.meta("versions"))["mine"]
    store.close()
    assert recorded["files"] == {str(script): hashlib.sha256(script.read_bytes()).hexdigest()}


@pytest.mark.e2e
def test_a_changed_imported_module_is_refused_as_a_changed_bot(tmp_path):
    bot = tmp_path / "mybot"
    bot.mkdir()
    (bot / "main.py").write_text("import helper  # noqa\nfrom sample_bots.random import main\nmain()\n")
    (bot / "helper.py").write_text("VERSION = 1\n")
    bots = random_bot("r1", 1) + f"""
    [[bots]]
    name = "mine"
    command = ["python", "main.py", "--seed", "7"]
    cwd = "{bot}"
    env = {{ PYTHONPATH = "{ROOT}" }}
    """
    path = tournament(tmp_path, bots, deal_sets=1)
    assert run_cli("tournament", path, "--quiet", "--bootstrap", "0").returncode == 0
    (bot / "helper.py").write_text("VERSION = 2\n")  # the entry point and the command are as they were
    refused = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert refused.returncode == ExitCode.USAGE
    assert refused.stderr.strip().splitlines()[-1] == (
        f"Error: bot mine changed since its matches in {tmp_path / 'out'} were played (the file "
        f"{bot / 'helper.py'}): give --rerun mine to play its matches again, or use a new output directory")
    rerun = run_cli("tournament", path, "--quiet", "--bootstrap", "0", "--rerun", "mine")
    assert rerun.returncode == 0 and "played 2 match(es) now, 2 in all" in rerun.stderr, rerun.stderr


def test_the_store_refuses_a_changed_bot_and_drops_its_matches_on_rerun(tmp_path):
    from referee.results.store import StoreError

    (tmp_path / "bot.py").write_text("v1\n")
    mine, other = BotSpec("mine", ("python", "bot.py"), str(tmp_path)), BotSpec("other", ("python", "-c", "x"))
    store = Store(tmp_path / "out")
    assert store.claim("{}", {}, [mine, other]) == {}
    results = {"scores": [1, 0], "placing": [1, 2]}
    store.save("0:mine|other", 0, 1, ("mine", "other"), results, {}, 0.1)
    store.save("0:other|other", 0, 1, ("other", "other"), results, {}, 0.1)
    (tmp_path / "bot.py").write_text("v2\n")
    with pytest.raises(StoreError, match=r"^bot mine changed since its matches in .* were played \(the file "
                                         r"/.*/bot.py\): give --rerun mine"):
        store.claim("{}", {}, [mine, other])
    assert store.count() == 2
    said = []
    assert store.claim("{}", {}, [mine, other], rerun=["mine"], announce=said.append) == {"mine": 1}
    assert store.done() == {"0:other|other"} and said == [
        "--rerun mine: its 1 stored match(es) are dropped, to be played again"]
    assert store.claim("{}", {}, [mine, other]) == {}  # the new version is the one recorded
    store.close()
