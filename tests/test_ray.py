"""The Ray executor (``--executor ray``, docs/scaling.md): the [executor] table and options, the
one-line failures, and, with Ray installed (the referee[ray] extra; REFEREE_REQUIRE_RAY=1 makes
them fail instead of skipping), real runs: an embedded Ray whose worker process is killed, Ctrl-C
and a rerun, and a two-node cluster on 127.0.0.2 whose standings equal the local executor's byte
for byte, and whose worker node is killed mid-tournament."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from harness import ROOT, require_ray, require_sandbox, sample_bots, write_tournament
from test_golden import GOLDEN, snapshot

from referee.cli.options import chosen_executor
from referee.competition import config as tconfig
from referee.model import BotSpec, ConfigError, ExecutorSpec
from referee.play.executors.ray import bot_files, missing_file, rebased
from referee.results.store import Store

#: two launched bots, deterministic (a [clock] and their [[bots]] tables)
BOTS = sample_bots(random1="python -m sample_bots.random --seed 1", heuristic="python -m sample_bots.heuristic")


# --- the [executor] table and the options (no Ray needed) -------------------------------------


def test_the_executor_table_is_read_and_checked(tmp_path):
    (tmp_path / "bots").mkdir()
    path = write_tournament(tmp_path / "t.toml", BOTS + '\n[executor]\nkind = "ray"\naddress = "10.0.0.5:6379"\n'
                            'cpus = 1\nworking_dir = "bots"\n', game="aegis", deal_sets=1, seed=1, concurrency=1)
    spec = tconfig.load(path).executor
    assert spec == ExecutorSpec("ray", "10.0.0.5:6379", 1, (tmp_path / "bots").resolve())
    plain = write_tournament(tmp_path / "p.toml", BOTS, game="aegis", deal_sets=1, seed=1, concurrency=1)
    assert tconfig.load(plain).executor == ExecutorSpec()
    assert tconfig.load(plain).fingerprint() == tconfig.load(path).fingerprint()  # resume with either
    for bad, words in (('kind = "dask"', "executor.kind must be one of local, ray"),
                       ("cpus = 0", "executor.cpus must be at least 1"),
                       ('working_dir = "nowhere"', "executor.working_dir must be a directory"),
                       ("nodes = 2", "unknown key 'nodes' in [executor]")):
        write_tournament(path, BOTS + f"\n[executor]\n{bad}\n", game="aegis", deal_sets=1, seed=1, concurrency=1)
        with pytest.raises(ConfigError, match=re.escape(words)) as err:
            tconfig.load(path)
        assert f"{path}:" in str(err.value)


def test_the_command_line_overrides_the_file():
    ray = ExecutorSpec("ray", "10.0.0.5:6379", 2)
    assert chosen_executor(ray, "local", None, None).kind == "local"
    assert chosen_executor(ExecutorSpec(), None, "127.0.0.2:6390", None) == ExecutorSpec("ray", "127.0.0.2:6390")
    assert chosen_executor(ray, None, None, None) == ray
    with pytest.raises(click.UsageError, match="--address names a Ray cluster"):
        chosen_executor(ExecutorSpec(), "local", "127.0.0.2:6390", None)
    with pytest.raises(click.UsageError, match="cannot be combined with the ray executor"):
        chosen_executor(ExecutorSpec(), "ray", None, "localhost:50051")


@pytest.mark.parametrize("command", ["tournament", "gauntlet", "sprt"])
def test_without_ray_the_ray_executor_exits_2_with_one_line(tmp_path, invoke, monkeypatch, command):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where the extra is not installed
    extra = {"gauntlet": '\n[gauntlet]\ncandidate = "heuristic"\n',
             "sprt": '\n[sprt]\ncandidate = "heuristic"\n'}.get(command, "")
    path = write_tournament(tmp_path / "t.toml", BOTS + extra, game="aegis", deal_sets=1, seed=1, concurrency=1)
    if command == "sprt":  # an SPRT file has no deal_sets
        path.write_text(path.read_text().replace("deal_sets = 1\n", ""))
    result = invoke(command, path, "--executor", "ray")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert errors == ["Error: --executor ray needs Ray, an optional extra: pip install 'referee[ray]'"]


def test_bot_files_are_named_and_checked_on_the_node(tmp_path):
    (tmp_path / "bot.py").write_text("")
    bot = BotSpec("b", ("python", "bot.py", "--depth", "3"), cwd=str(tmp_path))
    assert bot_files(bot) == ("bot.py",)
    assert missing_file(bot, bot_files(bot)) is None
    (tmp_path / "bot.py").unlink()
    assert missing_file(bot, ("bot.py",)) == "its file bot.py"
    assert missing_file(BotSpec("b", ("./run-me",), cwd=str(tmp_path)), ()) == "its program ./run-me"
    assert missing_file(BotSpec("b", ("python",), cwd=str(tmp_path / "gone")), ()) == \
        f"its directory {tmp_path / 'gone'}"


def test_bots_inside_the_working_directory_are_rebased(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "bot.py").write_text("")
    bot = BotSpec("b", ("python", str(tmp_path / "bots" / "bot.py"), "-x"), cwd=str(tmp_path / "bots"))
    moved = rebased(bot, tmp_path)
    assert moved.cwd == "bots" and moved.command == ("python", "bot.py", "-x")
    outside = BotSpec("c", ("python", "x.py"), cwd="/usr")
    assert rebased(outside, tmp_path) == outside


def test_the_bots_status_of_every_worker_adds_up():
    from referee.play.executors.ray import _Statuses

    one = {"a": {"starts": 1, "exits": ["exit code 1"], "dead": None, "dropped_bytes": 5}}
    two = {"a": {"starts": 4, "exits": ["a", "b", "c"], "dead": "died 4 times", "dropped_bytes": 0},
           "b": {"starts": 1, "exits": [], "dead": None, "dropped_bytes": 0}}
    merged = _Statuses([one, two]).status()
    assert merged["a"] == {"starts": 5, "exits": ["exit code 1", "a", "b", "c"], "dead": "died 4 times",
                           "dropped_bytes": 5}
    assert merged["b"] == two["b"]


def test_an_unreachable_cluster_is_one_line_and_exit_2(tmp_path, invoke):
    require_ray()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.2", 0))
        port = s.getsockname()[1]
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=1, seed=1, concurrency=1)
    result = invoke("tournament", path, "--address", f"127.0.0.2:{port}")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert errors == [f"Error: cannot reach the Ray cluster at 127.0.0.2:{port}: Connection refused (is its head "
                      f"started, with `ray start --head --port={port}`?)"]


# --- real runs ---------------------------------------------------------------------------------


def golden_file(tmp_path: Path, game: str = "aegis", extra: str = "") -> Path:
    path = tmp_path / f"{game}.toml"
    path.write_text((GOLDEN / f"{game}.toml").read_text().replace("{root}", str(ROOT)) + extra)
    return path


def start_cli(*args, env=None) -> subprocess.Popen:
    """``referee ARGS`` in a process group of its own (as a terminal's foreground job)."""
    return subprocess.Popen([sys.executable, "-m", "referee", *map(str, args)], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def stored(directory: Path) -> int:
    """Matches in a store being written by another process (0 before it exists)."""
    try:
        with sqlite3.connect(f"file:{directory / 'results.sqlite'}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def wait_for(directory: Path, matches: int, proc: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while stored(directory) < matches:
        assert proc.poll() is None, f"the run ended first: {proc.communicate()}"
        assert time.monotonic() < deadline, f"fewer than {matches} matches stored after {timeout} s"
        time.sleep(0.05)


def ratings(directory: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "referee", "ratings", str(directory)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return out.stdout


def forget(directory: Path, n: int) -> None:
    """Take the last ``n`` matches out of a store, as if the run had stopped before them."""
    with sqlite3.connect(directory / "results.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM matches ORDER BY deal_set DESC, key DESC LIMIT ?", (n,))]
        db.executemany("DELETE FROM seats WHERE match_key = ?", [(k,) for k in keys])
        db.executemany("DELETE FROM matches WHERE key = ?", [(k,) for k in keys])


def meta(directory: Path, key: str) -> str | None:
    store = Store(directory, create=False)
    try:
        return store.meta(key)
    finally:
        store.close()


def left_running(pids, grace: float = 10.0) -> list[str]:
    """Those of ``pids`` still alive (not zombies) after up to ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while True:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
            except OSError:
                continue
            if state != "Z":
                alive.append(f"{pid} {pids[pid][:100]}")
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def descendants(root: int) -> dict[int, str]:
    """The live processes under ``root``: pid -> command line."""
    parents, commands = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            commands[int(stat.parent.name)] = (stat.parent / "cmdline").read_text().replace("\0", " ")
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = {}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found[child] = commands.get(child, "")
                frontier.append(child)
    return found


@pytest.mark.e2e
def test_embedded_ray_survives_a_dead_worker_and_resumes_with_the_local_executor(tmp_path):
    require_ray()
    # two workers of one CPU each on this machine's two cores (by default a worker takes one per seat)
    path = golden_file(tmp_path, extra='\n[executor]\nkind = "ray"\ncpus = 1\n')
    out = tmp_path / "out" / "aegis"
    proc = start_cli("tournament", path)
    wait_for(out, 1, proc)
    workers = [pid for pid, cmd in descendants(proc.pid).items() if cmd.startswith("ray::MatchWorker")]
    assert workers, descendants(proc.pid)
    os.kill(workers[0], signal.SIGKILL)  # a worker process dies mid-tournament
    wait_for(out, 12, proc)
    started = descendants(proc.pid)  # the embedded Ray, its workers and their bots
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "died" in stderr and "is played again by another worker" in stderr, stderr
    assert "played 18 match(es) now, 18 in all" in stderr
    assert ratings(out) == (GOLDEN / "aegis.ratings.txt").read_text()
    store = Store(out, create=False)
    try:
        assert snapshot(store) == (GOLDEN / "aegis.records.jsonl").read_text()  # each match once, as locally
    finally:
        store.close()
    assert meta(out, "executor").startswith("ray: 2 match worker(s) of 1 CPU(s) on 1 node(s) of an embedded Ray")
    assert not left_running(started)

    # start with ray, finish with the local executor
    forget(out, 7)
    local = subprocess.run([sys.executable, "-m", "referee", "tournament", path, "--executor", "local"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert local.returncode == 0, local.stderr
    assert "played 7 match(es) now, 18 in all" in local.stderr
    assert ratings(out) == (GOLDEN / "aegis.ratings.txt").read_text()


@pytest.mark.e2e
def test_ctrl_c_stops_the_ray_run_cleanly_and_a_rerun_resumes(tmp_path):
    require_ray()
    # a bot that sleeps 10 ms a decision: the run lasts seconds even on an idle machine, so the Ctrl-C
    # comes while matches are left (random bots alone finish 30 matches in a second there)
    slow = sample_bots(slow=f"python {ROOT / 'tests' / 'bots' / 'slow.py'} --sleep-ms 10",
                       random1="python -m sample_bots.random --seed 1")
    path = write_tournament(tmp_path / "t.toml", slow + '\n[executor]\nkind = "ray"\ncpus = 1\n', game="aegis",
                            deal_sets=6, seed=7, concurrency=2)
    out = tmp_path / "out"
    proc = start_cli("tournament", path)
    wait_for(out, 3, proc)
    started = descendants(proc.pid)
    before = stored(out)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground job
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    saved = stored(out)
    assert f"interrupted: {saved} of 12 matches are saved; run the same command to resume" in stderr
    assert saved <= before + 6, "the matches being played were stopped, no new one started"
    assert not left_running(started), "the embedded Ray, its workers and their bots are gone"
    rerun = subprocess.run([sys.executable, "-m", "referee", "tournament", path], capture_output=True, text=True,
                           cwd=ROOT, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"played {12 - saved} match(es) now, 12 in all" in rerun.stderr


@pytest.mark.e2e
def test_a_node_lacking_a_bot_stops_the_run_at_start_in_one_line(tmp_path):
    require_ray()
    path = write_tournament(tmp_path / "t.toml", BOTS + f'\n[[bots]]\nname = "mine"\ncommand = ["./my-bot"]\n'
                            f'cwd = "{tmp_path}"\n\n[executor]\nkind = "ray"\ncpus = 1\n', game="aegis",
                            deal_sets=1, seed=7, concurrency=2)
    run = subprocess.run([sys.executable, "-m", "referee", "tournament", path], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert run.returncode == 2, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "Traceback" not in run.stderr, run.stderr
    assert errors[0].startswith("Error: node ") and "lacks bot mine's files: its program ./my-bot is not there" \
        in errors[0], errors[0]


# --- a two-node cluster on 127.0.0.2 ----------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes of two CPUs each, started for these tests and stopped by their processes' ids
    (never ``ray stop``). The last test kills the worker node."""
    require_ray()
    from referee.bench.cluster import LoopbackCluster

    with LoopbackCluster(nodes=2, cpus=2) as started:
        yield started


@pytest.mark.e2e
def test_two_node_standings_equal_the_local_executors_byte_for_byte(tmp_path, cluster):
    path = golden_file(tmp_path)
    local = subprocess.run([sys.executable, "-m", "referee", "tournament", path, "--executor", "local"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert local.returncode == 0, local.stderr
    local_out = tmp_path / "local"
    (tmp_path / "out" / "aegis").rename(local_out)
    ray = subprocess.run([sys.executable, "-m", "referee", "tournament", path, "--address", cluster.address],
                         capture_output=True, text=True, cwd=ROOT, timeout=300, env=cluster.env())
    assert ray.returncode == 0, ray.stderr
    out = tmp_path / "out" / "aegis"
    assert meta(out, "executor") == f"ray: 2 match worker(s) of 2 CPU(s) on 2 node(s) of the Ray cluster at " \
                                    f"{cluster.address}"
    assert ray.stdout == local.stdout  # the standings the command prints
    assert ratings(out) == ratings(local_out)
    stores = [Store(d, create=False) for d in (out, local_out)]
    try:
        assert snapshot(stores[0]) == snapshot(stores[1])
    finally:
        for store in stores:
            store.close()

    # start with the local executor, finish on the cluster
    forget(local_out, 8)
    (tmp_path / "out" / "aegis").rename(tmp_path / "ray")
    local_out.rename(out)
    resumed = subprocess.run([sys.executable, "-m", "referee", "tournament", path, "--executor", "ray", "--address",
                              cluster.address], capture_output=True, text=True, cwd=ROOT, timeout=300,
                             env=cluster.env())
    assert resumed.returncode == 0, resumed.stderr
    assert "played 8 match(es) now, 18 in all" in resumed.stderr
    assert resumed.stdout == local.stdout


@pytest.mark.e2e
def test_the_ray_bench_runs_on_a_cluster(tmp_path, cluster):
    bench = subprocess.run([sys.executable, "-m", "referee.bench.ray", "--address", cluster.address, "--matches", "2",
                            "--rounds", "1", "--json", tmp_path / "b.json"], capture_output=True, text=True, cwd=ROOT,
                           timeout=300, env=cluster.env())
    assert bench.returncode == 0, bench.stderr
    printed = bench.stdout
    assert "ms_per_match" in printed and f"Ray cluster at {cluster.address}" in printed
    rows = json.loads((tmp_path / "b.json").read_text())["two_nodes"]
    assert [row["workers"] for row in rows] == [2, 2] and all(row["matches_per_s"] > 0 for row in rows)


@pytest.mark.e2e
def test_a_worker_node_killed_mid_tournament_loses_and_doubles_nothing(tmp_path, cluster):
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=15, seed=11, concurrency=2)
    out = tmp_path / "out"
    proc = start_cli("tournament", path, "--address", cluster.address, env=cluster.env())
    wait_for(out, 4, proc)
    cluster.kill_node(1)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "died" in stderr and "is played again by another worker" in stderr, stderr
    assert "played 30 match(es) now, 30 in all" in stderr
    from referee.competition import run as trun

    expected = {s.key for s in trun.schedule_of(tconfig.load(path)).seatings}
    with sqlite3.connect(out / "results.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM matches")]
        seats = db.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    assert sorted(keys) == sorted(expected) and seats == 2 * len(expected)


# --- only the bots' own files travel (issue 24, attack 8) --------------------------------------


SHIPPED = """
[[bots]]
name = "peek"
command = {command}

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "victim"
env = {{ VICTIM_SECRET = "{secret}" }}

[limits]
sandbox = "bwrap"

[executor]
kind = "ray"
working_dir = "."
"""
SECRET = "s3cret-of-the-victim-4d1f"


def shipped_layout(tmp: Path, honest: bool) -> Path:
    """The plainest layout: the attacker's code in the tournament's directory (its ``cwd``), which
    Ray ships (``working_dir = "."``), beside the tournament file (the seed, the victim's ``env``),
    the output directory and the victim's directory."""
    (tmp / "victim").mkdir(parents=True)
    (tmp / "victim" / "book.txt").write_text("the victim's opening book\n")
    shutil.copy(ROOT / "tests" / "bots" / "hostile" / "peek.py", tmp)
    args = ["--honest"] if honest else ["--read", "t.toml", "--store", "out/results.sqlite", "--list", ".",
                                        "--list", "out", "--list", "victim", "--read", "victim/book.txt"]
    return write_tournament(tmp / "t.toml", SHIPPED.format(command=json.dumps(["python", "peek.py", *args]),
                                                           secret=SECRET),
                            game="aegis", deal_sets=2, seed=7311, concurrency=2, extra='isolation = "match"')


def victim_rows(out: Path) -> dict:
    store = Store(out, create=False)
    try:
        return {r.key: (r.lineup.index("victim"), r.scores, r.placing, r.faults) for r in store.matches()}
    finally:
        store.close()


@pytest.mark.e2e
def test_ray_ships_only_the_bots_files_and_masks_the_rest_on_the_node(tmp_path):
    """The bots run from the copy Ray ships to the node. Before, Ray shipped the whole working
    directory, and on the node nothing was masked there: the attacker read the tournament file (the
    master seed, the victim's secret env) and the results store (the master seed) in its copy."""
    require_ray()
    require_sandbox()
    path = shipped_layout(tmp_path / "attack", honest=False)
    run = subprocess.run([sys.executable, "-m", "referee", "tournament", path, "--quiet"], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    log = "".join(p.read_text() for p in (tmp_path / "attack" / "out" / "logs").glob("worker-*/peek.log"))
    peeks = [json.loads(line[5:]) for line in log.splitlines() if line.startswith("PEEK ")]
    assert len(peeks) == 4, log
    for peek in peeks:
        assert peek["cwd"] != str(tmp_path / "attack") and "runtime_resources" in peek["cwd"]  # Ray's copy
        assert set(peek["list"]["."]["names"]) == {"peek.py", "victim"}, peek  # no t.toml, no out/
        assert peek["read"]["t.toml"] == {"error": "No such file or directory"}
        assert "error" in peek["store"]["out/results.sqlite"]
        assert peek["list"]["victim"] == {"names": []}  # shipped for the victim, masked for the attacker
        assert peek["read"]["victim/book.txt"] == {"error": "No such file or directory"}
    assert SECRET not in log and "7311" not in log
    # the control: the same tournament played here, the attacker honest (the Ray executor plays as the local one)
    control = shipped_layout(tmp_path / "control", honest=True)
    local = subprocess.run([sys.executable, "-m", "referee", "tournament", control, "--quiet", "--executor", "local"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert local.returncode == 0, local.stderr
    assert victim_rows(tmp_path / "attack" / "out") == victim_rows(tmp_path / "control" / "out")
    assert len(victim_rows(tmp_path / "control" / "out")) == 4


def test_a_symlink_out_of_a_bots_files_is_refused_before_ray_ships_it(tmp_path):
    """Ray follows symlinks: a link in the attacker's directory would ship what it leads to."""
    from referee.play.executors.ray import excludes

    for folder in ("a", "b", "out", "elsewhere"):
        (tmp_path / folder).mkdir()
    (tmp_path / "a" / "bot.py").write_text("")
    (tmp_path / "t.toml").write_text("seed = 1")
    bots = [BotSpec("a", ("python", "bot.py"), str(tmp_path / "a")), BotSpec("b", ("python", "x"), str(tmp_path / "b"))]
    hide = [tmp_path / "out", tmp_path / "t.toml"]
    assert sorted(excludes(tmp_path, bots, hide)) == ["/elsewhere", "/out", "/t.toml"]
    (tmp_path / "a" / "lib").symlink_to("/usr/bin/env")  # a file of the system's: shipped as it is
    assert sorted(excludes(tmp_path, [*bots[:1], BotSpec("c", ("x",), str(tmp_path))], hide)) == ["/out", "/t.toml"]
    for name, target in (("seed", tmp_path / "t.toml"), ("theirs", tmp_path / "b"), ("shadow", Path("/etc/shadow")),
                         ("loop", tmp_path / "a")):
        (tmp_path / "a" / name).symlink_to(target)
        with pytest.raises(ConfigError, match=rf"{tmp_path / 'a' / name} is a symlink to {target}, "):
            excludes(tmp_path, bots, hide)
        (tmp_path / "a" / name).unlink()
    (tmp_path / "odd [name]*").mkdir()
    assert "/odd[ ]\\[name\\]\\*" in excludes(tmp_path, bots, hide)
