"""Tournaments from the command line: config checks, a real run, resume after
kill -9, the stored ratings."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import ROOT, run_cli, write_tournament

from referee import model
from referee.competition import config as tconfig
from referee.results.store import Store

BOTS = """
[[bots]]
name = "r1"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "{root}"

[[bots]]
name = "r2"
command = "python -m sample_bots.random --seed 2"
cwd = "{root}"

[[bots]]
name = "r3"
command = ["python", "-m", "sample_bots.random", "--seed", "3"]
cwd = "{root}"
"""
CLOCK = """
[clock]
decision_ms = 2000
bank_ms = 10000
"""


def write_config(tmp: Path, game="aegis", deal_sets=4, extra="", output="out", options="", name="t.toml") -> Path:
    return write_tournament(tmp / name, CLOCK + BOTS.format(root=ROOT), game=game, deal_sets=deal_sets, seed=11,
                            concurrency=3, output=output, extra=extra, options=options)


# --- the configuration ----------------------------------------------------------


@pytest.mark.parametrize("change, message", [
    (("deal_sets = 4", "deal_sets = 4\nrounds = 3"), r"t.toml:5: unknown key 'rounds' in \[tournament\]"),
    (("deal_sets = 4", "deal_sets = 0"), r"t.toml:4: tournament.deal_sets must be at least 1"),
    (("deal_sets = 4", 'deal_sets = "many"'), r"t.toml:4: tournament.deal_sets must be an integer"),
    (('game = "aegis"', 'game = "chess"'), r"t.toml:3: tournament.game must be one of aegis, confirmation"),
    (("bank_ms = 10000", "bank_ms = 10000\nbanks = 1"), r"t.toml:16: unknown key 'banks' in \[clock\]"),
    (('name = "r2"', 'name = "r2"\ncomand = "x"'), r"unknown key 'comand' in \[bots\]"),
    (('name = "r3"', 'name = "r1"'), r"bot name 'r1' is used twice"),
    (("[tournament.options]", "[tournament.options]\npromise = \"sometimes\""),
     r"t.toml:\d+: tournament.options: option 'promise' must be one of"),
    (("[tournament.options]", "[tournament.options]\nrounds = 2"), r"aegis has no option 'rounds'"),
    (('name = "r3"\ncommand = ["python", "-m", "sample_bots.random", "--seed", "3"]', 'name = "r3"\nexternal = true'),
     r"bot 'r3' is external: give it a token"),
    (("deal_sets = 4", "deal_sets = 4\ntitle = 2026"),
     r"t.toml:5: tournament.title must be one line of text, got 2026"),
    (("deal_sets = 4", 'deal_sets = 4\ntitle = "  "'), r"t.toml:5: tournament.title must be one line of text, got"),
    (("deal_sets = 4", 'deal_sets = 4\ntitle = "Spring\\ncup"'),
     r"t.toml:5: tournament.title must be one line of text: it holds the control character U\+000A at character 7"),
    (("deal_sets = 4", f'deal_sets = 4\ntitle = "{"x" * 121}"'),
     r"t.toml:5: tournament.title must be at most 120 characters, got 121"),
    (("deal_sets = 4", 'deal_sets = 4\ndescription = "a\\u001b[2Jb"'),
     r"t.toml:5: tournament.description must be text: it holds the control character U\+001B at character 2"),
    (("deal_sets = 4", f'deal_sets = 4\ndescription = "{"x" * 4001}"'),
     r"t.toml:5: tournament.description must be at most 4000 characters, got 4001"),
])
def test_config_errors_name_the_line_and_the_reason(tmp_path, change, message, invoke):
    path = write_config(tmp_path)
    text = path.read_text()
    assert change[0] in text
    path.write_text(text.replace(change[0], change[1], 1))
    with pytest.raises(model.ConfigError, match=message):
        tconfig.load(path)
    result = invoke("tournament", str(path))
    assert result.exit_code == 2 and "Error:" in result.output


def test_a_good_config_reads_back():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        cfg = tconfig.load(write_config(Path(tmp), game="confirmation", options="pairs = true"))
    assert cfg.game == "confirmation" and cfg.options["pairs"] is True and cfg.options["rounds"] == 8
    assert [b.name for b in cfg.bots] == ["r1", "r2", "r3"] and cfg.bots[1].command[0] == "python"
    assert cfg.clock.decision_s == 2.0 and cfg.concurrency == 3
    assert cfg.title is cfg.description is None and "title" not in cfg.describe()


def test_a_title_and_a_description_are_kept_as_written(tmp_path):
    text = 'title = "Spring <cup> 2026"\ndescription = """\nFirst & only.\n\n\tSecond paragraph.\n"""'
    cfg = tconfig.load(write_config(tmp_path, extra=text))
    assert cfg.title == "Spring <cup> 2026" and cfg.description == "First & only.\n\n\tSecond paragraph."
    described = cfg.describe()
    assert (described["title"], described["description"], described["seed_drawn"]) == (cfg.title, cfg.description,
                                                                                       False)
    assert "title" not in cfg.fingerprint()  # a title changes nothing of the results: a rerun may retitle


# --- running ----------------------------------------------------------------------


@pytest.mark.e2e
def test_tournament_runs_stores_and_rates(tmp_path):
    path = write_config(tmp_path, game="confirmation", deal_sets=2, options="rounds = 1")
    done = run_cli("tournament", str(path), "--quiet", "--bootstrap", "200")
    assert done.returncode == 0, done.stderr
    assert "r1" in done.stdout and "Head to head" in done.stdout and "Seat bias" in done.stdout
    store = Store(tmp_path / "out", create=False)
    rows = list(store.matches())
    assert len(rows) == 2 * 3 * 4  # deal sets x line-ups of 3 bots x rotations
    assert all(sum(sum(f.values()) for f in r.faults) == 0 for r in rows)
    from referee import records
    for row in rows[:4]:
        assert records.replay(store.record(row.key)).results["scores"] == row.scores
    as_json = json.loads(run_cli("ratings", str(tmp_path / "out"), "--format", "json", "--bootstrap", "200").stdout)
    assert [s["name"] for s in as_json["standings"]] and as_json["matches"] == 24
    csv_out = run_cli("ratings", str(tmp_path / "out"), "--format", "csv", "--anchor", "r1=2000").stdout
    assert csv_out.splitlines()[0].startswith("rank,name,elo")
    assert any(line.split(",")[1] == "r1" and float(line.split(",")[2]) == 2000 for line in csv_out.splitlines()[1:])
    # the same command again: nothing left to play, the same table
    again = run_cli("tournament", str(path), "--quiet", "--bootstrap", "200")
    assert again.returncode == 0 and "played 0 match(es) now, 24 in all" in again.stderr
    assert again.stdout == done.stdout


@pytest.mark.e2e
def test_changing_the_config_of_an_existing_directory_is_refused(tmp_path):
    path = write_config(tmp_path, deal_sets=1)
    assert run_cli("tournament", str(path), "--quiet", "--bootstrap", "0").returncode == 0
    path.write_text(path.read_text().replace("seed = 11", "seed = 12"))
    refused = run_cli("tournament", str(path), "--quiet")
    assert refused.returncode == 2
    assert "holds the results of another tournament configuration (changed: seed)" in refused.stderr


@pytest.mark.e2e
def test_resume_after_kill_9_gives_the_identical_table(tmp_path):
    whole = write_config(tmp_path, deal_sets=6, output="whole", name="whole.toml")
    cut = write_config(tmp_path, deal_sets=6, output="cut", name="cut.toml")
    reference = run_cli("tournament", str(whole), "--quiet", "--bootstrap", "300")
    assert reference.returncode == 0, reference.stderr

    proc = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(cut), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    db = tmp_path / "cut" / "results.sqlite"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if db.exists() and Store(tmp_path / "cut").count() >= 8:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the runner and the bots it launched, mid-run
    proc.wait()
    partial = Store(tmp_path / "cut").count()
    assert 8 <= partial < 36
    assert not Store(tmp_path / "cut").seed_released()  # a run killed mid-way has not ended: no seed printed

    resumed = run_cli("tournament", str(cut), "--quiet", "--bootstrap", "300")
    assert resumed.returncode == 0, resumed.stderr
    # the killed run held the directory's lock: the kernel let go of it, and the rerun takes it over
    assert f"taking over from a run that ended without letting go (pid {proc.pid} on " in resumed.stderr
    assert f"played {36 - partial} match(es) now, 36 in all" in resumed.stderr
    assert resumed.stdout == reference.stdout
    assert Store(tmp_path / "cut").seed_released()


@pytest.mark.e2e
def test_match_command_plays_one_match(tmp_path):
    out = run_cli("match", "aegis", "--bot", "a=python -m sample_bots.random", "--bot",
                  "b=python -m sample_bots.random", "--seed", "4", "--record", str(tmp_path / "m.json"))
    assert out.returncode == 0, out.stderr
    assert "final scores" in out.stdout and "fault" not in out.stdout
    assert run_cli("replay", str(tmp_path / "m.json")).returncode == 0


@pytest.mark.e2e
def test_without_a_seed_the_deals_come_from_128_bits_of_entropy_kept_for_the_resume(tmp_path):
    path = write_config(tmp_path, deal_sets=1)
    path.write_text(path.read_text().replace("seed = 11\n", ""))
    first = run_cli("tournament", path, "--bootstrap", "10")  # not --quiet: the header says how the seed came
    assert first.returncode == 0, first.stderr
    assert "seed drawn from the system's entropy (128 bits; printed at the end)" in first.stderr
    seed = int(re.search(r"master seed: (\d+) \(seed = \1 in the file plays these deals again\)",
                         first.stderr).group(1))
    assert seed.bit_length() > 64  # 128 random bits: below 2**64 once in 2**64 runs
    store = Store(tmp_path / "out", create=False)
    try:
        assert store.config()["seed"] == seed and store.config()["seed_drawn"] is True
        assert store.seed_released()  # the run ended, and printed it
        assert all(row.deal_set == 0 for row in store.matches())
    finally:
        store.close()
    again = run_cli("tournament", path, "--quiet", "--bootstrap", "10")  # a rerun resumes on the same deals
    assert again.returncode == 0, again.stderr
    assert "played 0 match(es) now" in again.stderr and f"master seed: {seed} " in again.stderr
    other = tmp_path / "other"
    other.mkdir()
    second = write_config(other, deal_sets=1)
    second.write_text(second.read_text().replace("seed = 11\n", ""))
    elsewhere = run_cli("tournament", second, "--quiet", "--bootstrap", "10")
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert int(re.search(r"master seed: (\d+)", elsewhere.stderr).group(1)) != seed  # a new run, new deals
