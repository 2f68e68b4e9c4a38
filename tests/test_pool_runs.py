"""A run that includes a reference pool (docs/pool.md): ``[pool]`` in a tournament or gauntlet file,
its bots joining as entries, the ratings on the pool's scale with its bots held at their ratings, the
run marked off-scale on a changed setting (another clock, a pool bot swapped for a stronger one),
and every mistake in the table one line, exit 2.

The pool of the end-to-end tests is made as ``pool make`` makes one: a quick run of three sample bots
(random, the heuristic weakened by 50% random moves, the heuristic), fitted by
:func:`referee.results.pool.make` from that run's results and the versions it recorded. Its bots
run from a copy of ``sample_bots`` beside the pool file (their ``cwd`` relative to it), so that a
test can swap one for a stronger bot on disk."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import sqlite3
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, invoke_cli, run_cli

from referee.competition import config as tconfig
from referee.competition import gauntlet as tgauntlet
from referee.competition import service
from referee.model import ConfigError
from referee.results import pool as tpool
from referee.results import standings
from referee.results.pool import Pool, PoolBot
from referee.results.store import MatchRow, MetaKey, Store
from referee.stats.anchored import Scale
from referee.stats.simulation import POOL, PROJECT, simulate_tournament
from referee.tools.anchoring import lineups
from referee.view.report import write_report

CLOCK = {"decision_ms": 2000, "bank_ms": 10000}
#: the pool's bots: name -> the module and arguments of ``python -m``
BOTS = {"random": "sample_bots.random --seed 1", "weak": "sample_bots.weakened --noise 0.5 --seed 2",
        "heuristic": "sample_bots.heuristic"}
SEED, DEAL_SETS = 11, 3


def tables(bots: dict[str, str], cwd: str, clock: dict[str, int] = CLOCK) -> str:
    """[clock], [limits] without a sandbox, and a [[bots]] table per bot (its files: sample_bots)."""
    out = (f'\n[clock]\ndecision_ms = {clock["decision_ms"]}\nbank_ms = {clock["bank_ms"]}\n'
           '\n[limits]\nsandbox = "none"\n')
    for name, command in bots.items():
        out += (f'\n[[bots]]\nname = "{name}"\ncommand = "python -m {command}"\ncwd = "{cwd}"\n'
                f'files = ["sample_bots"]\n')
    return out


def tournament_file(path: Path, body: str, *, deal_sets: int = DEAL_SETS, extra: str = "",
                    output: str = "out") -> Path:
    path.write_text(f'[tournament]\ngame = "aegis"\ndeal_sets = {deal_sets}\nseed = {SEED}\nconcurrency = 2\n'
                    f'output = "{output}"\n{extra}\n{body}')
    return path


class Quiet:
    """An observer that says nothing and runs the matches as a plain coroutine."""

    def say(self, line: str) -> None:
        pass

    def started(self, *args: Any) -> None:
        pass

    def playing(self, *args: Any):
        return lambda finished, total, played: None

    def watch(self, arena: Any) -> None:
        pass

    def play(self, work: Coroutine[Any, Any, int]) -> int:
        return asyncio.run(work)


def pool_from(directory: Path, names: dict[str, str], cwd: str) -> Pool:
    """The pool of a run's bots, made from its results and the versions it recorded (as ``pool make``)."""
    store = Store(directory, create=False)
    try:
        rows = list(store.matches())
        recorded = json.loads(store.meta(MetaKey.VERSIONS) or "{}")
        bots = [PoolBot(name, ("python", "-m", *command.split()), tpool.content_hash(recorded[name]), cwd,
                        ("sample_bots",)) for name, command in names.items()]
        return tpool.make("aegis", {}, CLOCK, bots, standings.pair_results_of("aegis", rows), bootstrap=200)
    finally:
        store.close()


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A directory holding ``pool.json`` and the copy of ``sample_bots`` its bots run from (``bots/``)."""
    home = tmp_path_factory.mktemp("pool")
    shutil.copytree(ROOT / "sample_bots", home / "bots" / "sample_bots",
                    ignore=shutil.ignore_patterns("__pycache__", "cpp", "go", "node", "stdio_c"))
    run = tournament_file(home / "make.toml", tables(BOTS, str(home / "bots")), output=str(home / "made"))
    outcome = service.run_tournament(service.TournamentRequest(tconfig.load(run), bootstrap=0), Quiet())
    assert outcome.exit_code == 0, outcome
    tpool.write(pool_from(home / "made", BOTS, "bots"), home / "pool.json")
    return home


def play(path: Path, *args: str) -> tuple[int, str]:
    result = invoke_cli(*args, path)
    return result.exit_code, result.output


def ratings_json(out: Path) -> dict[str, Any]:
    result = invoke_cli("ratings", out, "--format", "json", "--bootstrap", "200")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


CANDIDATE = {"mine": "sample_bots.weakened --noise 0.25 --seed 3"}


@pytest.mark.e2e  # real bot processes
def test_a_tournament_with_a_pool_is_on_its_scale(made, tmp_path):
    p = tpool.read(made / "pool.json")
    run = tournament_file(tmp_path / "t.toml", f'[pool]\nfile = "{made / "pool.json"}"\n'
                          + tables(CANDIDATE, str(ROOT)), output=str(tmp_path / "out"))
    code, output = play(run, "tournament", "--quiet", "--bootstrap", "200")
    assert code == 0, output
    header = next(line for line in output.splitlines() if line.startswith("aegis:"))
    assert f"on the scale of pool {p.short_id}, its bots held at their ratings" in header
    assert f"on the scale of pool {p.short_id}: its bots' 3 differences in this run hold" in output
    assert f"Elo (pool {p.short_id})" in output
    data = ratings_json(tmp_path / "out")
    assert data["pool"]["id"] == p.short_id and data["pool"]["verdict"] == Scale.ON
    assert data["scale"] == {"pool": p.short_id}
    assert data["pool"]["held"] == ["random", "weak", "heuristic"]
    rows = {row["name"]: row for row in data["standings"]}
    for name, rating in p.scale.ratings.items():  # the pool's bots sit at their ratings, held
        assert rows[name]["elo"] == pytest.approx(rating.elo) and rows[name]["held"] is True
        assert rows[name]["lo"] == rows[name]["hi"] == pytest.approx(rating.elo)
    mine = rows["mine"]
    assert "held" not in mine and mine["lo"] < mine["elo"] < mine["hi"]
    # the table says which bots are held; the CSV names the scale of every row
    assert "held (pool)" in invoke_cli("ratings", tmp_path / "out").output
    csv = invoke_cli("ratings", tmp_path / "out", "--format", "csv").output.splitlines()
    assert csv[0].endswith(",pool,scale,held") and all(f",{p.short_id},on-scale," in line for line in csv[1:])
    # the report: the scale above the table, the rating column on it, the pool's bots held
    page = write_report(tmp_path / "out", bootstrap=100).read_text()
    assert f'<p class="pool-scale" data-verdict="on-scale"><strong>on the scale of pool {p.short_id}: ' in page
    assert f"<th>Elo (pool {p.short_id})</th>" in page and f"on the scale of pool {p.short_id}, its bots held" in page
    assert page.count('<td class="interval">held (pool)</td>') == 3
    # the history keeps the candidate's version on the pool's scale, and no row for the pool's bots
    kept = json.loads(invoke_cli("history", tmp_path / "out", "--json").output)
    assert kept, kept
    text = invoke_cli("history", tmp_path / "out").output
    assert f"pool {p.short_id}" in text and "mine" in text
    assert not any(name in text for name in ("random", "weak", "heuristic")), text
    asked = invoke_cli("history", tmp_path / "out", "random")
    assert asked.exit_code == 2 and "'random' is a bot of the reference pool" in asked.output, asked.output


@pytest.mark.e2e
def test_another_clock_is_off_the_pools_scale(made, tmp_path):
    p = tpool.read(made / "pool.json")
    other = {"decision_ms": 1500, "bank_ms": 10000}
    run = tournament_file(tmp_path / "t.toml", f'[pool]\nfile = "{made / "pool.json"}"\n'
                          'bots = ["random", "heuristic"]\n' + tables(CANDIDATE, str(ROOT), other), deal_sets=2,
                          output=str(tmp_path / "out"))
    code, output = play(run, "tournament", "--quiet", "--bootstrap", "100")
    assert code == 0, output
    reason = (f"off-scale: this run's setting is not pool {p.short_id}'s: the clock is bank_ms=10000, "
              f"decision_ms=1500; the pool's bank_ms=10000, decision_ms=2000; these ratings are not on its scale")
    assert reason in output.splitlines()
    assert f"Elo (off pool {p.short_id}'s scale)" in output
    data = ratings_json(tmp_path / "out")
    assert data["pool"]["verdict"] == Scale.OFF and data["pool"]["reasons"][0] == reason
    assert data["pool"]["held"] == ["random", "heuristic"]  # only the bots the file takes
    # the pool the directory keeps, changed: one line, exit 2
    db = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    with db:
        config = json.loads(db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
        config["pool"]["content"]["bots"][0]["elo"] += 1
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(config),))
    db.close()
    result = invoke_cli("ratings", tmp_path / "out")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert result.output.startswith(f"Error: the pool kept in {tmp_path / 'out'} (")
    assert "changed after it was made" in result.output


@pytest.mark.e2e
def test_a_pool_bot_swapped_for_a_stronger_one_is_off_the_pools_scale(made, tmp_path):
    """The pool file as it was made; on disk, its weakened bot now plays as the heuristic does."""
    home = tmp_path / "pool"
    shutil.copytree(made / "bots", home / "bots")
    shutil.copy(made / "pool.json", home / "pool.json")
    weakened = home / "bots" / "sample_bots" / "weakened.py"
    weakened.write_text("import sys\n\nfrom sample_bots.heuristic import main\n\nif __name__ == \"__main__\":\n"
                        "    argv = sys.argv[1:]\n    del argv[argv.index('--noise'):argv.index('--noise') + 2]\n"
                        "    main(argv)\n")
    p = tpool.read(home / "pool.json")
    run = tournament_file(tmp_path / "t.toml", '[pool]\nfile = "pool/pool.json"\nbots = ["weak", "heuristic"]\n'
                          + tables(CANDIDATE, str(ROOT)), deal_sets=2, output="out")
    code, output = play(run, "tournament", "--quiet", "--bootstrap", "100")
    assert code == 0, output
    data = ratings_json(tmp_path / "out")
    store = Store(tmp_path / "out", create=False)
    try:
        now = tpool.content_hash(json.loads(store.meta(MetaKey.VERSIONS) or "{}")["weak"])
    finally:
        store.close()
    old = next(b.version for b in p.bots if b.name == "weak")
    assert now != old
    assert data["pool"]["verdict"] == Scale.OFF
    assert f"weak has version {now[:12]}; the pool's {old[:12]}" in data["pool"]["reasons"][0]
    # (the heuristic's version covers the folder too: it is named as well, its files changed)


@pytest.mark.e2e
def test_a_gauntlet_against_the_pool_prints_the_candidates_anchored_rating(made, tmp_path):
    p = tpool.read(made / "pool.json")
    run = tournament_file(tmp_path / "g.toml", '[gauntlet]\ncandidate = "mine"\n\n'
                          f'[pool]\nfile = "{made / "pool.json"}"\n' + tables(CANDIDATE, str(ROOT)), deal_sets=2,
                          output=str(tmp_path / "out"))
    code, output = play(run, "gauntlet", "--quiet", "--bootstrap", "100")
    assert code == 0, output
    lines = output.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    assert lines[verdict + 1].startswith(f"anchored to pool {p.short_id}: mine ")
    assert lines[verdict + 1].endswith(f"scale of pool {p.short_id} not checked: the pool's bots played no game "
                                       f"against each other in this run")  # a duel gauntlet: honest
    result = invoke_cli("gauntlet", "--quiet", "--bootstrap", "100", "--format", "json", run)
    data = json.loads(result.output[result.output.index("{\n"):])  # after the sandbox's warning (stderr)
    on = data["anchored"]
    assert on["pool"] == p.short_id and on["verdict"] == Scale.UNCHECKED and on["lo"] < on["elo"] < on["hi"]
    assert on["text"] == lines[verdict + 1]
    mine = next(row for row in data["standings"] if row["name"] == "mine")
    assert mine["elo"] == on["elo"]
    # --anchor on a directory of a run with a pool: one line, exit 2
    result = invoke_cli("ratings", tmp_path / "out", "--anchor", "mine=1500")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert f"are on the scale of pool {p.short_id}" in result.output


# --- the [pool] table's mistakes: one line each, exit 2 (no bot is run) ----------------------------


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Path:
    """A pool file of the house bots' names, simulated (its bots run from the checkout)."""
    home = tmp_path_factory.mktemp("simulated")
    outcomes = simulate_tournament(POOL, lineups("2-player", list(POOL)), 10, random.Random(0), **PROJECT)
    bots = [PoolBot(name, ("python", "-m", "sample_bots.random"), f"{k:x}" * 64, str(ROOT), ("sample_bots",))
            for k, name in enumerate(POOL, 1)]
    tpool.write(tpool.make("aegis", {}, CLOCK, bots, outcomes, bootstrap=50), home / "aegis.pool.json")
    return home / "aegis.pool.json"


def load_error(tmp_path: Path, pool_table: str, bots: dict[str, str] = CANDIDATE, gauntlet: str = "") -> str:
    path = tournament_file(tmp_path / "t.toml", gauntlet + pool_table + tables(bots, str(ROOT)))
    with pytest.raises(ConfigError) as err:
        (tgauntlet.load if gauntlet else tconfig.load)(path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{path}:")
    return text


def test_a_pools_bots_join_the_run_as_entries(simulated, tmp_path):
    path = tournament_file(tmp_path / "t.toml", f'[pool]\nfile = "{simulated}"\nbots = ["search", "random"]\n'
                           + tables(CANDIDATE, str(ROOT)))
    cfg = tconfig.load(path)
    assert [b.name for b in cfg.bots] == ["mine", "random", "search"]  # the pool's order
    assert cfg.pool is not None and cfg.pool.bots == ("random", "search") and cfg.pool.file == simulated
    random_bot = cfg.bots[1]
    assert random_bot.command == ("python", "-m", "sample_bots.random") and random_bot.cwd == str(ROOT)
    assert random_bot.files == ("sample_bots",) and random_bot.limits == cfg.bots[0].limits
    assert cfg.describe()["pool"]["content"]["id"] == tpool.read(simulated).id  # the directory keeps the scale
    every = tconfig.load(tournament_file(tmp_path / "t.toml", f'[pool]\nfile = "{simulated}"\n'
                                         + tables(CANDIDATE, str(ROOT))))
    assert [b.name for b in every.bots] == ["mine", *POOL]
    assert "pool" not in tconfig.load(tournament_file(tmp_path / "t.toml", tables(
        {**CANDIDATE, "other": "sample_bots.random"}, str(ROOT)))).describe()  # without a pool: as before


def test_a_pool_bots_cwd_is_relative_to_the_pool_file(simulated, tmp_path):
    p = tpool.read(simulated)
    (tmp_path / "pools" / "bots").mkdir(parents=True)
    (tmp_path / "pools" / "bots" / "sample_bots").mkdir()
    moved = Pool(p.game, p.options, p.clock, tuple(PoolBot(b.name, b.command, b.version, "bots", ("sample_bots",))
                                                   for b in p.bots), p.scale)
    tpool.write(moved, tmp_path / "pools" / "p.json")
    cfg = tconfig.load(tournament_file(tmp_path / "t.toml", '[pool]\nfile = "pools/p.json"\n'
                                       + tables(CANDIDATE, str(ROOT))))
    assert {b.cwd for b in cfg.bots[1:]} == {str(tmp_path / "pools" / "bots")}
    unset = Pool(p.game, p.options, p.clock, tuple(PoolBot(b.name, b.command, b.version) for b in p.bots), p.scale)
    tpool.write(unset, tmp_path / "pools" / "p.json")
    cfg = tconfig.load(tmp_path / "t.toml")
    assert {b.cwd for b in cfg.bots[1:]} == {str(tmp_path)}  # null: the tournament file's directory


def test_a_missing_pool_file_is_one_line(tmp_path):
    text = load_error(tmp_path, '[pool]\nfile = "nowhere.json"\n')
    assert text.endswith(f"t.toml:9: cannot read pool file {tmp_path / 'nowhere.json'}: No such file or directory")


def test_a_pool_file_changed_after_it_was_made_is_one_line(simulated, tmp_path):
    data = json.loads(simulated.read_text())
    data["bots"][0]["elo"] += 1
    (tmp_path / "p.json").write_text(json.dumps(data))
    text = load_error(tmp_path, '[pool]\nfile = "p.json"\n')
    assert "the file was changed after it was made" in text and f"pool file {tmp_path / 'p.json'}" in text


def test_a_pool_file_that_is_not_json_is_one_line(tmp_path):
    (tmp_path / "p.json").write_text("{ not json")
    assert "not valid JSON" in load_error(tmp_path, '[pool]\nfile = "p.json"\n')


def test_a_pool_bot_named_as_an_entry_is_one_line(simulated, tmp_path):
    text = load_error(tmp_path, f'[pool]\nfile = "{simulated}"\n', {"heuristic": "sample_bots.heuristic"})
    assert text.endswith("pool bot 'heuristic' has the name of a [[bots]] entry: rename the entry, or leave the "
                         "pool's out with pool.bots")
    assert ":19: " in text  # the entry's name
    # left out with bots: no clash
    tconfig.load(tournament_file(tmp_path / "t.toml", f'[pool]\nfile = "{simulated}"\nbots = ["random"]\n'
                                 + tables({"heuristic": "sample_bots.heuristic"}, str(ROOT))))


def test_an_unknown_pool_bot_is_one_line(simulated, tmp_path):
    p = tpool.read(simulated)
    text = load_error(tmp_path, f'[pool]\nfile = "{simulated}"\nbots = ["random", "alphazero"]\n')
    assert text.endswith(f"t.toml:10: pool.bots: 'alphazero' is not a bot of pool {p.short_id} (its bots: "
                         f"{', '.join(POOL)})")
    assert "pool.bots must be a list" in load_error(tmp_path, f'[pool]\nfile = "{simulated}"\nbots = []\n')
    assert "named twice" in load_error(tmp_path, f'[pool]\nfile = "{simulated}"\nbots = ["random", "random"]\n')
    assert "unknown key 'deal_sets' in [pool]" in load_error(tmp_path, f'[pool]\nfile = "{simulated}"\ndeal_sets = 3\n')
    assert "pool.file must be the path" in load_error(tmp_path, "[pool]\nfile = 3\n")


def test_a_gauntlets_candidate_cannot_be_a_pool_bot(simulated, tmp_path):
    text = load_error(tmp_path, f'[pool]\nfile = "{simulated}"\nbots = ["random"]\n',
                      gauntlet='[gauntlet]\ncandidate = "random"\n\n')
    assert "gauntlet.candidate 'random' is a bot of the pool" in text


def test_a_pool_with_anchor_is_one_line_and_nothing_is_written(simulated, tmp_path):
    path = tournament_file(tmp_path / "t.toml", f'[pool]\nfile = "{simulated}"\n' + tables(CANDIDATE, str(ROOT)),
                           output=str(tmp_path / "out"))
    for command in ("tournament", "gauntlet"):
        if command == "gauntlet":
            path.write_text('[gauntlet]\ncandidate = "mine"\n\n' + path.read_text())
        result = invoke_cli(command, "--anchor", "random=1000", path)
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
        assert result.output == (f"Error: --anchor random=1000: {path} has a [pool], whose scale its ratings are on: "
                                 f"leave --anchor out, or the [pool] table\n")
        assert not (tmp_path / "out").exists()


# --- the standings on a pool's scale, from made-up results (no bot run) -------------------------


def rows_of(outcomes, first: int = 0) -> list[MatchRow]:
    """Aegis matches of the simulated pairwise results (the winner placed first)."""
    out = []
    for k, o in enumerate(outcomes, first):
        placing = [1, 2] if o.score == 1.0 else [2, 1] if o.score == 0.0 else [1, 1]
        out.append(MatchRow(f"{o.deal_set}:{k}", o.deal_set, (o.a, o.b), {"scores": [0, 0], "placing": placing}))
    return out


@pytest.fixture(scope="module")
def scaled() -> tuple[Pool, list[MatchRow]]:
    pool = tpool.make("aegis", {}, CLOCK, [PoolBot(n, ("x",), "0" * 64) for n in POOL],
                      simulate_tournament(POOL, lineups("2-player", list(POOL)), 30, random.Random(1), **PROJECT),
                      bootstrap=50)
    strengths = {**POOL, "mine": 1600.0, "yours": 1300.0}
    run = simulate_tournament(strengths, lineups("2-player", list(strengths)), 8, random.Random(2), **PROJECT)
    return pool, rows_of(run)


def test_the_standings_hold_the_pools_bots_and_name_the_pool(scaled):
    pool, rows = scaled
    st = standings.compute("aegis", rows, bootstrap=50, pool=pool)
    assert st.pool_id == pool.short_id and st.pool is not None and st.pool.held == tuple(POOL)
    assert st.off_scale is (st.pool.verdict == Scale.OFF)
    for line in st.lines:
        if line.name in POOL:
            assert line.elo == pytest.approx(pool.scale.ratings[line.name].elo)
            assert standings.elo_cells(line, st) == (f"{line.elo:.0f}", standings.HELD)
    assert st.notes[0] == st.pool.reasons[0] and st.pool.reasons[-1].startswith(
        ("on the scale of pool", "off-scale: pool"))
    text = standings.report(st, ranks=True)
    assert f"on the scale of pool {pool.short_id}, its bots held at their ratings" in text.splitlines()[0]
    assert "P(rank) %" in text  # the rank probabilities of the bots not held
    assert set(st.rank_probabilities) == {"mine", "yours"}
    data = standings.to_json(st)
    assert data["pool"] == {"id": pool.short_id, "verdict": st.pool.verdict, "reasons": list(st.pool.reasons),
                            "held": list(POOL)}


def test_a_mismatch_marks_the_standings_off_scale_whatever_the_check(scaled):
    pool, rows = scaled
    st = standings.compute("aegis", rows, bootstrap=50, pool=pool, mismatches=["the clock is x; the pool's y"])
    assert st.off_scale and st.pool is not None and st.pool.verdict == Scale.OFF
    assert st.pool.reasons[0] == (f"off-scale: this run's setting is not pool {pool.short_id}'s: the clock is x; "
                                  f"the pool's y; these ratings are not on its scale")
    assert len(st.pool.reasons) == 2  # the check's line as well
    assert standings.elo_header(st) == f"Elo (off pool {pool.short_id}'s scale)"


def test_results_without_a_pool_bot_are_not_on_its_scale(scaled):
    pool, _ = scaled
    strengths = {"a": 1400.0, "b": 1600.0}
    rows = rows_of(simulate_tournament(strengths, lineups("2-player", list(strengths)), 4, random.Random(3),
                                       **PROJECT))
    st = standings.compute("aegis", rows, bootstrap=0, pool=pool)
    assert st.off_scale and st.pool is not None and st.pool.held == ()
    assert "none of" in st.pool.reasons[0] and "field's average" in st.pool.reasons[0]
    assert sum(b.elo for b in st.lines if b.elo is not None) / 2 == pytest.approx(1500)


def test_the_standings_without_a_pool_are_as_before(scaled):
    _, rows = scaled
    st = standings.compute("aegis", rows, bootstrap=0)
    assert st.pool is None and st.pool_id is None and not st.off_scale
    assert standings.elo_header(st) == "Elo" and "pool" not in standings.to_json(st)


# --- an SPRT against one of the pool's bots ----------------------------------------------------


@pytest.mark.e2e
def test_an_sprt_with_pool_prints_the_candidates_rating_anchored_to_the_baseline(made):
    """``--pool FILE``, the baseline one of its bots by name (run from the pool's copy of the bots: its
    version is the pool's): after the verdict, the candidate on the pool's scale; the scale not checked."""
    p = tpool.read(made / "pool.json")
    heuristic = p.scale.ratings["heuristic"].elo
    result = run_cli("sprt", "--game", "aegis", "--candidate", "mine=python -m sample_bots.weakened --noise 0.25",
                     "--baseline", "heuristic=python -m sample_bots.heuristic", "--pool", made / "pool.json",
                     "--max-units", "3", "--seed", "5", "--decision-ms", "2000", "--quiet", cwd=made / "bots")
    assert result.returncode in (0, 1, 3), result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("verdict: ")
    assert lines[2].startswith(f"on the scale of pool {p.short_id}, anchored to its bot heuristic alone "
                               f"({heuristic:.0f}): mine ")
    assert lines[2].endswith(f"; scale of pool {p.short_id} not checked: the pool's bots played no game against "
                             f"each other in this run")


@pytest.mark.e2e
def test_an_sprt_file_with_a_pool_on_another_clock_is_off_its_scale(made, tmp_path):
    """An SPRT file whose [pool] gives the baseline (its bot as the pool pins it), its clock not the pool's."""
    p = tpool.read(made / "pool.json")
    path = tmp_path / "s.toml"
    path.write_text(f'[tournament]\ngame = "aegis"\nseed = {SEED}\nconcurrency = 2\n\n[sprt]\ncandidate = "mine"\n'
                    f'max_units = 3\n\n[pool]\nfile = "{made / "pool.json"}"\nbots = ["heuristic"]\n'
                    + tables(CANDIDATE, str(ROOT), {"decision_ms": 1500, "bank_ms": 10000}))
    result = invoke_cli("sprt", "--quiet", "--format", "json", path)
    assert result.exit_code in (0, 1, 3), result.output
    on = json.loads(result.output[result.output.index("{\n"):])["anchored"]
    assert on["pool"] == p.short_id and on["anchor"] == "heuristic" and on["verdict"] == Scale.OFF
    assert on["lo"] < on["elo"] < on["hi"]
    assert on["reasons"][0] == (f"off-scale: this run's setting is not pool {p.short_id}'s: the clock is "
                                f"bank_ms=10000, decision_ms=1500; the pool's bank_ms=10000, decision_ms=2000; this "
                                f"rating is not on its scale")


def test_sprt_pool_mistakes_are_one_line(simulated, tmp_path):
    args = ("sprt", "--game", "aegis", "--candidate", "mine=python -m sample_bots.random", "--max-units", "1")
    result = invoke_cli(*args, "--baseline", "other=python -m sample_bots.random", "--pool", simulated)
    assert result.exit_code == 2 and "the baseline 'other' is not a bot of pool" in result.output
    assert result.output.strip().splitlines()[-1].startswith("Error: Invalid value for --pool: ")
    # a candidate with a pool bot's name would be held at that bot's rating
    result = invoke_cli("sprt", "--game", "aegis", "--candidate", "random=python -m sample_bots.heuristic",
                        "--baseline", "search=python -m sample_bots.random", "--max-units", "1", "--pool", simulated)
    assert result.exit_code == 2 and "the candidate 'random' has the name of a bot of pool" in result.output, \
        result.output
    (tmp_path / "p.json").write_text("[]")
    result = invoke_cli(*args, "--baseline", "random=python -m sample_bots.random", "--pool", tmp_path / "p.json")
    assert result.exit_code == 2 and f"pool file {tmp_path / 'p.json'}" in result.output
    # a game whose SPRT scores two seats' total: another scale than the pool's pairwise one
    result = invoke_cli("sprt", "--game", "confirmation", "--candidate", "mine=python -m sample_bots.random",
                        "--baseline", "random=python -m sample_bots.random", "--pool", simulated)
    assert result.exit_code == 2 and "a pool's scale is fitted on pairwise results" in result.output
    # an SPRT file's [pool]: the baseline is its bot, the candidate one of the [[bots]]
    path = tournament_file(tmp_path / "s.toml", f'[sprt]\ncandidate = "random"\n\n[pool]\nfile = "{simulated}"\n'
                           f'bots = ["random"]\n' + tables({"mine": "sample_bots.random"}, str(ROOT)))
    text = path.read_text().replace("deal_sets = 3\n", "")
    path.write_text(text)
    result = invoke_cli("sprt", path)
    assert result.exit_code == 2 and "with a [pool], the baseline is its bot" in result.output


def four_seat_rows(strengths: dict[str, float], deal_sets: int, rng: random.Random) -> list[MatchRow]:
    """Confirmation-like matches (four seats, rated by score): every group of four in its four rotations,
    each seat's score its strength's share plus the deal's luck."""
    from itertools import combinations

    rows = []
    for k in range(deal_sets):
        for group in combinations(sorted(strengths), 4):
            for r in range(4):
                lineup = group[r:] + group[:r]
                scores = [round(strengths[b] / 100 + rng.gauss(0, 3)) for b in lineup]
                placing = [1 + sum(o > s for o in scores) for s in scores]
                rows.append(MatchRow(f"{k}:{'|'.join(lineup)}", k, lineup, {"scores": scores, "placing": placing}))
    return rows


def test_a_four_seat_game_checks_the_scale_where_pool_bots_share_a_table():
    rng = random.Random(4)
    pool_bots = {"p1": 1000.0, "p2": 1300.0, "p3": 1500.0, "p4": 1700.0}
    pool = tpool.make("confirmation", {}, CLOCK, [PoolBot(n, ("x",), "0" * 64) for n in pool_bots],
                      standings.pair_results_of("confirmation", four_seat_rows(pool_bots, 20, rng)), bootstrap=50)
    run = four_seat_rows({**pool_bots, "mine": 1400.0}, 6, rng)
    st = standings.compute("confirmation", run, bootstrap=50, pool=pool)
    assert st.pool is not None and st.pool.held == tuple(pool_bots) and st.pool.verdict == Scale.ON
    assert st.pool.reasons[0].startswith(f"on the scale of pool {pool.short_id}: its bots' 6 differences in this run ")
    assert {b.name: b.elo for b in st.lines if b.name in pool_bots} == pytest.approx(
        {n: r.elo for n, r in pool.scale.ratings.items()})
    # the same run with one pool bot far stronger than its pool rating: its distances moved
    swapped = four_seat_rows({**pool_bots, "p1": 1900.0, "mine": 1400.0}, 6, random.Random(5))
    off = standings.compute("confirmation", swapped, bootstrap=50, pool=pool)
    assert off.off_scale and off.pool is not None and off.pool.reasons[0].startswith("off-scale: pool ")


@pytest.mark.e2e  # real bot processes, the shipped pool
def test_a_confirmation_run_with_three_of_the_shipped_pools_bots_keeps_its_scale(tmp_path):
    """Four seats, three of them the shipped Confirmation pool's bots (as recorded by this run, their
    versions are the pool file's: no mismatch), a candidate at every table: the ratings are on the
    pool's scale and the scale is checked, every pair of pool bots sharing each table."""
    shipped = ROOT / "referee" / "pools" / "confirmation.pool.json"
    p = tpool.read(shipped)
    options = "".join(f"{key} = {json.dumps(value)}\n" for key, value in p.options.items())
    run = tmp_path / "t.toml"
    run.write_text(f'[tournament]\ngame = "confirmation"\ndeal_sets = 3\nseed = {SEED}\nconcurrency = 2\n'
                   f'output = "{tmp_path / "out"}"\n\n[tournament.options]\n{options}\n'
                   f'[pool]\nfile = "{shipped}"\nbots = ["random", "weakened-75", "heuristic"]\n'
                   f'\n[clock]\ndecision_ms = {p.clock["decision_ms"]}\nbank_ms = {p.clock["bank_ms"]}\n'
                   f'\n[[bots]]\nname = "mine"\ncommand = "python -m sample_bots.weakened --noise 0.25 --seed 3"\n')
    code, output = play(run, "tournament", "--quiet", "--bootstrap", "200")
    assert code == 0, output
    data = ratings_json(tmp_path / "out")
    assert data["pool"]["id"] == p.short_id, data["pool"]
    assert [r for r in data["pool"]["reasons"] if "3 differences" not in r] == [], data["pool"]  # no mismatch
    assert data["pool"]["held"] == ["random", "weakened-75", "heuristic"]
    assert data["pool"]["verdict"] in (Scale.ON, Scale.OFF)  # checked: the pool's bots met at every table
    assert f"pool {p.short_id}" in output and "not checked" not in output, output
    rows = {row["name"]: row for row in data["standings"]}
    assert rows["heuristic"]["elo"] == pytest.approx(p.scale.ratings["heuristic"].elo)
    assert rows["mine"]["lo"] < rows["mine"]["elo"] < rows["mine"]["hi"]
