"""A bot's next process is prepared while its last one plays (isolation = "match"), and runs
nothing of the bot's until the last one is gone (referee/hosting/starter.py, Executor._prepare).

The starter alone, as a real process with its token's pipe at descriptor 3: nothing of the bot
runs before the token comes, none if it never comes, and a bot run in place (warm) sees what the
same command run directly would (its argv, ``__name__``, ``sys.path[0]``, its token). Then real
tournaments of a bot that logs when its code first ran and when it ended
(tests/bots/lifetime.py): its processes' code never overlaps, though the next process began
(prepared) while the last one played. The hostile bot that plants code to run early:
tests/test_twins_apart.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import ROOT, require_sandbox, run_cli, write_tournament

from referee.results.store import Store

PROBE = """
import json, os, sys
open(os.path.join(os.environ["OUT"], "ran"), "w").close()
token = os.read(3, 100).decode()
print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0], "token": token,
                  "warm": "grpc" in sys.modules, "grpc": getattr(sys.modules.get("grpc"), "__file__", None)}))
if len(sys.argv) > 1 and sys.argv[1] == "exit":
    sys.exit(int(sys.argv[2]))
"""


def clean_environment(**more: str) -> dict[str, str]:
    """This process's environment without the PYTHON* variables that make the starter run a bot cold."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}, **more}


def start(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], int]:
    """The starter for ``argv``; returns it and the write end of its token's pipe (descriptor 3)."""
    reader, writer = os.pipe()
    process = subprocess.Popen([sys.executable, "-I", "-m", "referee.hosting.starter", "--", *argv], cwd=cwd,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               close_fds=False, preexec_fn=lambda: os.dup2(reader, 3))
    os.close(reader)
    return process, writer


def give(writer: int, token: str) -> None:
    os.write(writer, f"{token}\n".encode())
    os.close(writer)


def probe_dir(tmp: Path) -> Path:
    bot = tmp / "bot"
    bot.mkdir()
    (bot / "probe.py").write_text(PROBE)
    (bot / "probe_mod.py").write_text(PROBE)
    return bot


def direct(argv: list[str], cwd: Path, env: dict[str, str], token: str = "t0k") -> dict:
    """The same command run directly, its token at descriptor 3."""
    reader, writer = os.pipe()
    give(writer, token)
    run = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, close_fds=False,
                         preexec_fn=lambda: os.dup2(reader, 3), timeout=60, check=True)
    os.close(reader)
    return json.loads(run.stdout)


@pytest.mark.parametrize("form", [["probe.py", "a", "b"], ["-m", "probe_mod", "a", "b"], ["-P", "probe.py", "x"]])
def test_a_prepared_process_runs_nothing_of_the_bot_before_its_token_then_runs_it_as_the_command_would(tmp_path, form):
    bot = probe_dir(tmp_path)
    env = clean_environment(OUT=str(tmp_path))
    argv = [sys.executable, *form]
    process, writer = start(argv, bot, env)
    time.sleep(1.5)  # long enough for the starter to import the kit and wait
    assert process.poll() is None, process.communicate()
    assert not (tmp_path / "ran").exists(), "the bot's code ran before its token came"
    give(writer, "t0k")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    warm = json.loads(out)
    assert (tmp_path / "ran").exists()
    assert warm.pop("warm") is True, "run in place, the kit imported beforehand"
    warm.pop("grpc")
    (tmp_path / "ran").unlink()
    cold = direct(argv, bot, env)
    assert cold.pop("warm") is False and cold.pop("grpc") is None
    assert warm == cold, "run in place, the bot sees what the command run directly sees"
    assert warm["token"] == "t0k\n"


def test_a_directory_run_as_a_script_runs_cold_as_its_command_would(tmp_path):
    bot = probe_dir(tmp_path)
    (bot / "app").mkdir()
    (bot / "app" / "__main__.py").write_text(PROBE)
    env = clean_environment(OUT=str(tmp_path))
    argv = [sys.executable, "app", "x"]
    process, writer = start(argv, bot, env)
    give(writer, "t0k")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert json.loads(out) == direct(argv, bot, env) and json.loads(out)["warm"] is False


def test_a_prepared_process_without_its_token_ends_having_run_nothing(tmp_path):
    bot = probe_dir(tmp_path)
    process, writer = start([sys.executable, "probe.py"], bot, clean_environment(OUT=str(tmp_path)))
    time.sleep(0.5)
    os.close(writer)  # the launcher discards it
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (0, "", "")
    assert not (tmp_path / "ran").exists()


def test_a_bot_whose_directory_would_give_a_module_of_the_kit_runs_cold(tmp_path):
    bot = probe_dir(tmp_path)
    (bot / "grpc").mkdir()
    (bot / "grpc" / "__init__.py").write_text("")  # its own grpc, first on its path
    env = clean_environment(OUT=str(tmp_path))
    process, writer = start([sys.executable, "probe.py"], bot, env)
    give(writer, "t0k")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    seen = json.loads(out)
    assert seen["warm"] is False and seen["grpc"] is None, "nothing imported for it: it finds its own grpc"


@pytest.mark.parametrize("variable", ["PYTHONHASHSEED", "PYTHONPATH"])
def test_an_interpreter_variable_the_starter_cannot_honour_makes_the_bot_run_cold(tmp_path, variable):
    bot = probe_dir(tmp_path)
    env = clean_environment(OUT=str(tmp_path), **{variable: "0" if variable == "PYTHONHASHSEED" else str(bot)})
    process, writer = start([sys.executable, "probe.py"], bot, env)
    give(writer, "t0k")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert json.loads(out)["warm"] is False


def test_a_bot_run_in_place_ends_with_its_own_exit_code_and_traceback(tmp_path):
    bot = probe_dir(tmp_path)
    env = clean_environment(OUT=str(tmp_path))
    process, writer = start([sys.executable, "probe.py", "exit", "3"], bot, env)
    give(writer, "t0k")
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 3 and json.loads(out)["warm"] is True
    (bot / "boom.py").write_text("raise RuntimeError('boom')\n")
    process, writer = start([sys.executable, "boom.py"], bot, env)
    give(writer, "t0k")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1 and err.rstrip().endswith("RuntimeError: boom")


# --- in real tournaments -------------------------------------------------------------------

def play(tmp: Path, tables: str, deal_sets: int, seed: int) -> Store:
    """A tournament of Aegis (``tables``), isolation = "match", two matches at once; its store. Unsandboxed,
    the bots inherit this environment: without PYTHON* variables, as a sandbox's."""
    path = write_tournament(tmp / "t.toml", tables, game="aegis", deal_sets=deal_sets, seed=seed, concurrency=2,
                            extra='isolation = "match"')
    run = run_cli("tournament", path, "--quiet", "--bootstrap", "20", timeout=400, env=clean_environment())
    assert run.returncode == 0, run.stderr
    return Store(tmp / "out", create=False)


#: the clock and the sandbox of the tournaments below
HEADER = """
[clock]
decision_ms = 3000
bank_ms = 10000

[limits]
sandbox = "{sandbox}"
"""

TABLES = HEADER + """
[[bots]]
name = "lifetime"
command = ["python", "lifetime.py"]
cwd = "lifetime"

[[bots]]
name = "b"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "{root}"

[[bots]]
name = "c"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
cwd = "{root}"
"""


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_no_two_processes_of_a_bot_run_its_code_at_once_though_the_next_is_prepared_meanwhile(tmp_path, sandbox):
    if sandbox == "bwrap":
        require_sandbox()
    (tmp_path / "lifetime").mkdir()
    (tmp_path / "lifetime" / "lifetime.py").write_text((ROOT / "tests" / "bots" / "lifetime.py").read_text())
    store = play(tmp_path, TABLES.format(sandbox=sandbox, root=ROOT), deal_sets=3, seed=5)
    try:
        played = sum(1 for row in store.matches() if "lifetime" in row.lineup)
    finally:
        store.close()
    reports = [json.loads(line.split(" ", 1)[1]) for line in
               (tmp_path / "out" / "logs" / "lifetime.log").read_text().splitlines() if line.startswith("LIFETIME ")]
    runs = sorted((r["first"], r["began"], r["warm"]) for r in reports if "first" in r)
    lasts = sorted(r["last"] for r in reports if "last" in r)
    # the first process is the start-up check's, stopped once connected (it says no "last")
    assert played == 12 and len(runs) == played + 1 and len(lasts) == played
    runs = runs[1:]
    events = sorted([(first, "first") for first, _, _ in runs] + [(last, "last") for last in lasts])
    assert [kind for _, kind in events] == ["first", "last"] * len(runs), \
        "a process of the bot ran its code while another one still did"
    prepared = [i for i in range(1, len(runs)) if runs[i][1] < lasts[i - 1]]
    assert prepared, "no process was prepared while the last one played: the test proves nothing"
    assert all(runs[i][2] for i in prepared), "a process prepared meanwhile had the kit imported (warm)"



KINDS = HEADER + """
[[bots]]
name = "stdio"
command = ["python", "-m", "sample_bots.stdio_random"]
protocol = "stdio"
cwd = "{root}"

[[bots]]
name = "cold"
command = ["python", "-u", "-m", "sample_bots.random", "--seed", "3"]
cwd = "{root}"

[[bots]]
name = "b"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "{root}"
"""


def test_a_stdio_bot_and_a_command_run_cold_play_every_match_from_prepared_processes(tmp_path):
    """The stdio relay runs in its prepared process (warm), and a command the starter cannot run in
    place (``python -u``) is exec'd after its token, in bubblewrap: every match played, no fault, no death."""
    require_sandbox()
    store = play(tmp_path, KINDS.format(sandbox="bwrap", root=ROOT), deal_sets=2, seed=6)
    try:
        rows = list(store.matches())
        launcher = json.loads(store.meta("launcher"))
    finally:
        store.close()
    assert len(rows) == 12 and sum(n for row in rows for seat in row.faults for n in seat.values()) == 0
    for bot in ("stdio", "cold", "b"):
        assert launcher[bot]["starts"] == 8 + 1 and launcher[bot]["exits"] == [], launcher[bot]
