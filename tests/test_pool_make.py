"""``referee pool make`` and ``referee pool show`` (docs/pool.md), and the pools the project ships.

A tiny real run (three house bots, two deal sets, a short clock) writes a pool file that reads, whose
bots' versions are those its run recorded, and the same command resumes it (after an interruption
too, which writes no pool). Every user mistake is one line and exit 2. Each shipped pool reads, names
the house bots as :data:`referee.competition.pools.HOUSE` does, and holds the versions the sample
bots' files have now: a sample bot changed without its pool remade fails here.
"""

from __future__ import annotations

import ast
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import ROOT, run_cli

from referee import games
from referee.competition import pools
from referee.hosting import versions
from referee.model import BotSpec
from referee.results import pool as poolfile
from referee.results.store import MetaKey, Store
from referee.stats.simulation import POOL, PROJECT, simulate_tournament
from referee.tools.anchoring import lineups

#: the tiny pool: three house bots (no search bot: the quickest), two deal sets, a short clock
TINY = ("--bot", "random", "--bot", "weakened-75", "--bot", "heuristic", "--deal-sets", "2",
        "--decision-ms", "500", "--bank-ms", "2000", "--seed", "7", "--concurrency", "3", "--quiet")


def made_versions(results: Path) -> dict[str, str]:
    """Each bot's content hash from the version its run recorded."""
    store = Store(results, create=False)
    try:
        return {name: poolfile.content_hash(v) for name, v in json.loads(store.meta(MetaKey.VERSIONS)).items()}
    finally:
        store.close()


@pytest.mark.e2e
def test_pool_make_writes_a_pool_of_the_run_and_resumes_it(tmp_path):
    out, results = tmp_path / "aegis.pool.json", tmp_path / "run"
    done = run_cli("pool", "make", "aegis", "--output", out, "--results", results, *TINY)
    assert done.returncode == 0, done.stderr
    made = poolfile.read(out)
    assert [b.name for b in made.bots] == ["random", "weakened-75", "heuristic"]
    assert {b.name: b.version for b in made.bots} == made_versions(results)
    assert made.game == "aegis" and made.clock == {"decision_ms": 500, "bank_ms": 2000}
    assert made.options == games.get("aegis").check_options({}) and made.scale.deal_sets == 2
    home = pools.sample_bots_home()
    assert all((out.parent / b.cwd).resolve() == home for b in made.bots)  # relative to the pool file
    assert f"wrote {out}: pool {made.short_id}" in done.stdout and made.id in done.stdout
    assert "played 12 match(es) now, 12 in all" in done.stderr  # 3 pairs x 2 seatings x 2 deal sets
    # the same command: nothing to play, the same pool
    text = out.read_text()
    out.unlink()
    again = run_cli("pool", "make", "aegis", "--output", out, "--results", results, *TINY)
    assert again.returncode == 0, again.stderr
    assert "played 0 match(es) now, 12 in all" in again.stderr and out.read_text() == text
    # pool show prints the same table
    shown = run_cli("pool", "show", out)
    assert shown.returncode == 0 and shown.stdout.strip() in done.stdout
    # another game into the same results directory: refused, one line, before anything is played
    other = run_cli("pool", "make", "confirmation", "--output", tmp_path / "c.json", "--results", results, *TINY)
    assert other.returncode == 2 and other.stderr.count("\n") == 1 and "Error:" in other.stderr
    assert not (tmp_path / "c.json").exists()


@pytest.mark.e2e
def test_an_interrupted_make_writes_no_pool_and_keeps_its_results(tmp_path):
    out, results = tmp_path / "p.json", tmp_path / "run"
    args = ["pool", "make", "aegis", "--output", str(out), "--results", str(results), "--bot", "random",
            "--bot", "weakened-75", "--bot", "heuristic", "--deal-sets", "3", "--decision-ms", "500", "--bank-ms",
            "2000", "--seed", "7", "--concurrency", "1", "--quiet"]  # one match at a time: 18 of them
    proc = subprocess.Popen([sys.executable, "-m", "referee", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None and not _stored(results):
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    if proc.returncode == 0:
        pytest.fail("the run ended before it could be interrupted")
    assert proc.returncode == 130 and "interrupted:" in err and not out.exists()
    saved = _stored(results)
    assert saved >= 1
    done = run_cli("pool", "make", *args[2:])
    assert done.returncode == 0, done.stderr
    assert f"played {18 - saved} match(es) now, 18 in all" in done.stderr
    assert {b.name: b.version for b in poolfile.read(out).bots} == made_versions(results)


def _stored(results: Path) -> int:
    if not (results / "results.sqlite").exists():
        return 0
    store = Store(results, create=False)
    try:
        return store.count()
    finally:
        store.close()


# --- one line, exit 2 --------------------------------------------------------------------------


def _tampered(tmp_path: Path) -> Path:
    """A pool file (of simulated games) whose deal sets were edited after it was made."""
    outcomes = simulate_tournament(POOL, lineups("2-player", list(POOL)), 10, random.Random(0), **PROJECT)
    bots = [poolfile.PoolBot(name, ("python", "-m", "x"), "ab" * 32) for name in POOL]
    made = poolfile.make("aegis", {}, {"decision_ms": 1000, "bank_ms": 10000}, bots, outcomes, bootstrap=20)
    path = tmp_path / "t.json"
    path.write_text(made.to_json().replace('"deal_sets": 10', '"deal_sets": 11', 1))
    return path


@pytest.mark.parametrize("args, message", [
    (["show", "{tmp}/none.json"], "cannot read pool file {tmp}/none.json: No such file or directory"),
    (["show", "{tmp}/bad.json"], "pool file {tmp}/bad.json: line 1, column 1: not valid JSON"),
    (["show", "{tmp}/t.json"], "is not the hash of its content"),
    (["make", "aegis", "-o", "rounds=2"], "aegis has no option 'rounds'"),
    (["make", "confirmation", "-o", "rounds=zero"], "option 'rounds'"),
    (["make", "aegis", "--output", "{tmp}/no/such/dir/p.json"], "cannot write the pool file"),
    (["make", "aegis", "--bot", "random", "--bot", "nobody"], "no house bot 'nobody' (the house pool: random, "),
    (["make", "aegis", "--bot", "random"], "a pool needs at least two bots, got random"),
    # before: every match was played, then the pool file could not be written over the results directory
    (["make", "aegis", "--output", "{tmp}/same", "--results", "{tmp}/same"], "would be in its run's results directory"),
])
def test_each_mistake_is_one_line_and_exit_2(tmp_path, monkeypatch, invoke, args, message):
    (tmp_path / "bad.json").write_text("not json")
    _tampered(tmp_path)
    monkeypatch.chdir(tmp_path)  # the default output and results would land here; none must
    result = invoke("pool", *[a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert message.format(tmp=tmp_path) in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "t.json"]  # nothing made, nothing played


def test_results_default_beside_the_pool_file():
    from referee.cli.pool import default_results
    assert default_results(Path("pools/aegis.pool.json")) == Path("pools/aegis.pool.results")
    assert default_results(Path("mine")) == Path("mine.results")


# --- the pools the project ships ---------------------------------------------------------------


def current_version(pool_file: Path, bot: poolfile.PoolBot) -> str:
    """The content hash of a pool bot as its files are now (as a run records its version)."""
    spec = BotSpec(bot.name, bot.command, str((pool_file.parent / (bot.cwd or ".")).resolve()), files=bot.files)
    version = versions.of(spec)
    assert version is not None
    return poolfile.content_hash(version)


@pytest.mark.parametrize("game", sorted(games.GAMES))
def test_each_shipped_pool_reads_and_holds_the_sample_bots_as_they_are(game):
    path = pools.shipped(game)
    assert path.is_file(), f"no pool shipped for {game}: run `make pools` (referee pool make {game})"
    made = poolfile.read(path)
    assert made.game == game
    house = {b.name: b for b in pools.HOUSE}
    assert [b.name for b in made.bots] == list(house)
    for bot in made.bots:
        assert (bot.command, bot.files) == (house[bot.name].command, house[bot.name].files), \
            f"{path.name}: {bot.name} is not the house bot of referee/competition/pools.py: remake it (make pools)"
        assert (path.parent / bot.cwd).resolve() == pools.sample_bots_home()
        assert current_version(path, bot) == bot.version, (
            f"{path.name}: {bot.name}'s files changed since the pool was made (version {bot.version[:12]}): "
            f"remake the shipped pools with `make pools` (referee pool make {game} ...)")


def _imports(module: str) -> set[str]:
    """The ``sample_bots`` modules ``module`` imports, itself and them too (by their source's import
    statements, as files relative to the directory holding sample_bots)."""
    home = pools.sample_bots_home()
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        path = home / (name.replace(".", "/") + ".py")
        if name in seen or not path.is_file():
            continue
        seen.add(name)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "sample_bots":
                todo += [f"sample_bots.{a.name}" for a in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sample_bots."):
                todo.append(node.module or "")
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("sample_bots.")]
    return {f"{name.replace('.', '/')}.py" for name in seen} | {"sample_bots/__init__.py"}


@pytest.mark.parametrize("bot", pools.HOUSE, ids=lambda b: b.name)
def test_each_house_bots_files_are_exactly_the_sample_bots_modules_it_imports(bot):
    module = bot.command[bot.command.index("-m") + 1]
    assert set(bot.files) == _imports(module) and len(set(bot.files)) == len(bot.files)


def test_a_bot_whose_directory_lies_in_the_interpreters_prefix_counts_its_declared_files(tmp_path, monkeypatch):
    """A normal install puts the sample bots in site-packages, inside the interpreter's prefix: the files
    a house bot declares there are its version, as in a checkout (else a shipped pool's versions would
    hold in an editable install only). A virtual environment inside a bot's directory stays out."""
    site = tmp_path / "prefix" / "lib" / "site-packages"
    (site / "pkg").mkdir(parents=True)
    for name in ("__init__.py", "bot.py", "helper.py"):
        (site / "pkg" / name).write_text(f"# {name}\n")
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "prefix"))
    spec = BotSpec("b", ("python", "-m", "pkg.bot"), str(site), files=("pkg/__init__.py", "pkg/helper.py"))
    version = versions.of(spec)
    assert version is not None
    assert sorted(Path(p).name for p in version["files"]) == ["__init__.py", "bot.py", "helper.py"]
    # the same bot in a checkout (not in the prefix) hashes the same
    checkout = tmp_path / "checkout"
    (checkout / "pkg").mkdir(parents=True)
    for name in ("__init__.py", "bot.py", "helper.py"):
        (checkout / "pkg" / name).write_text(f"# {name}\n")
    there = versions.of(BotSpec("b", spec.command, str(checkout), files=spec.files))
    assert there is not None and poolfile.content_hash(there) == poolfile.content_hash(version)
    # a virtual environment inside a bot's directory is still the runtime, not the bot's
    monkeypatch.setattr(sys, "prefix", str(checkout / "pkg"))
    inside = versions.of(BotSpec("b", spec.command, str(checkout), files=("pkg",)))
    assert inside is not None and sorted(Path(p).name for p in inside["files"]) == ["bot.py"]
