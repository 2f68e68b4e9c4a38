"""What a launched bot sees of the machine, by path (issue 24, attacks 3 and 4; referee/hosting/paths.py).

In its sandbox a bot sees its own directory, its data and the runtime every bot shares, each
resolved before it is bound. The red team's attacks, each of which worked before
(tests/bots/hostile/peek.py, in the real sandbox): a file its command names by absolute path
made a symlink to ``/etc/shadow`` (the sandbox bound ``/etc``: the bot read it) or to a file in
the runner's home (read); a ``cwd`` that is a symlink to the output directory (the mask was
skipped: the bot read ``results.sqlite``, the master seed and every deal seed) or to the
runner's home (listed, and read). Now each is refused before the first match, in one line
naming the path and where it leads (exit 2), and no process is started. A bot whose
directory holds such symlinks and follows them by relative paths (nothing it names is bound)
reaches none of it, and its victim's results equal a control run's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, require_sandbox, write_tournament

from referee import model
from referee.competition import config as tconfig
from referee.hosting import paths, sandbox
from referee.hosting.paths import bot_from_command
from referee.model import ConfigError
from referee.results.store import Store

PEEK = ROOT / "tests" / "bots" / "hostile" / "peek.py"
VICTIM = '''
[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "victim"
'''


def layout(tmp: Path) -> Path:
    """A tournament's directory: the attacker's and the victim's directories, the runner's home
    (``home``, with a secret in a subdirectory), the output directory, and the attacker's symlinks
    out of its own directory: to /etc/shadow, to the secret, to the output, the home and the victim
    (in ``attacker/``, and in the tournament's directory, which is a bot's ``cwd`` by default)."""
    for folder in ("attacker", "victim", "home/notes", "out"):
        (tmp / folder).mkdir(parents=True, exist_ok=True)
    shutil.copy(PEEK, tmp / "attacker")
    shutil.copy(PEEK, tmp)
    (tmp / "home" / "notes" / "secret.txt").write_text("the runner's secret\n")
    links = {"data.txt": Path("/etc/shadow"), "notes.txt": tmp / "home/notes/secret.txt", "out-link": tmp / "out",
             "home-link": tmp / "home", "victim-link": tmp / "victim"}
    for link, target in links.items():
        (tmp / "attacker" / link).symlink_to(target)
        (tmp / link).symlink_to(target)
    for link, target in {"attacker-out": tmp / "out", "attacker-home": tmp / "home",
                         "attacker-victim": tmp / "victim"}.items():
        (tmp / link).symlink_to(target)
    return tmp


def bot(command: list[str], cwd: str, extra: str = "") -> str:
    return f'\n[[bots]]\nname = "peek"\ncommand = {json.dumps(command)}\ncwd = "{cwd}"\n{extra}\n' + VICTIM


def tournament_file(tmp: Path, tables: str) -> Path:
    return write_tournament(tmp / "t.toml", '[limits]\nsandbox = "bwrap"\n' + tables, game="aegis", deal_sets=2,
                            seed=4242, concurrency=1, extra='isolation = "match"')


def run(tmp: Path, tables: str) -> subprocess.CompletedProcess:
    """``referee tournament`` in the real sandbox, from the tournament's directory, with the
    runner's HOME in it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp / "home"), "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "referee", "tournament", str(tournament_file(tmp, tables)),
                           "--quiet", "--bootstrap", "10"],
                          cwd=tmp, env=env, capture_output=True, text=True, timeout=300, check=False)


# --- the red team's attacks: refused before the first match -------------------------------------


@pytest.mark.parametrize("attack", ["shadow", "home-file", "cwd-output", "cwd-home", "cwd-victim"])
def test_a_symlink_that_leads_out_is_refused_before_the_first_match(tmp_path, attack, invoke, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the runner's home
    tmp = layout(tmp_path)
    peek = str(tmp / "peek.py")  # outside the symlinked cwd: named as its data
    tables, expected = {
        "shadow": (bot(["python", "peek.py", "--read", str(tmp / "attacker/data.txt")], "attacker"),
                   f"its command names {tmp}/attacker/data.txt, which leads to /etc/shadow, outside its directory"),
        "home-file": (bot(["python", "peek.py", "--read", str(tmp / "attacker/notes.txt")], "attacker"),
                      f"which leads to {tmp}/home/notes/secret.txt, outside its directory"),
        "cwd-output": (bot(["python", peek, "--store", "results.sqlite"], "attacker-out", f'data = ["{peek}"]'),
                       f"its cwd {tmp}/attacker-out (resolved: {tmp}/out) is inside the output directory"),
        "cwd-home": (bot(["python", peek, "--list", "."], "attacker-home", f'data = ["{peek}"]'),
                     f"its cwd {tmp}/attacker-home (resolved: {tmp}/home) leads into the home directory"),
        "cwd-victim": (bot(["python", peek, "--list", "."], "attacker-victim", f'data = ["{peek}"]'),
                       f"its cwd {tmp}/attacker-victim (resolved: {tmp}/victim) leads into bot victim's files"),
    }[attack]
    done = invoke("tournament", tournament_file(tmp, tables), "--quiet")
    assert done.exit_code == 2, done.output
    errors = [line for line in done.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and expected in errors[0], done.output
    assert "Traceback" not in done.output
    assert not (tmp / "out" / "logs").exists() and not (tmp / "out" / "results.sqlite").exists()  # nothing started


# --- what a bot reaches through symlinks in its own directory -----------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """The attacker, in the tournament's directory (its ``cwd`` by default: the plainest layout),
    follows its symlinks by relative paths (its command names none of them by absolute path, so
    the tournament is accepted) and reads the shared data it is given, elsewhere; and the control,
    where it only plays."""
    require_sandbox()
    shared = tmp_path_factory.mktemp("shared")
    (shared / "table.txt").write_text("an endgame table for every bot\n")
    found = {}
    for kind in ("attack", "control"):
        tmp = layout(tmp_path_factory.mktemp(kind))
        for link in (tmp / "data.txt", tmp / "attacker" / "data.txt"):  # to /etc/shadow, out of its directory:
            link.unlink()  # a bot holding one is refused before its first match (tests/test_versions.py)
        args = ["--honest"] if kind == "control" else [
            "--read", "data.txt", "--read", "notes.txt", "--read", "home/notes/secret.txt", "--read", "t.toml",
            "--list", "out-link", "--store", "out-link/results.sqlite", "--list", "home-link", "--list", "victim-link",
            "--read", str(shared / "table.txt")]
        done = run(tmp, bot(["python", "peek.py", *args], ".", f'data = ["{shared}"]'))
        assert done.returncode == 0, done.stderr
        log = (tmp / "out" / "logs" / "peek.log").read_text()
        store = Store(tmp / "out", create=False)
        try:
            victim = {r.key: (r.lineup.index("victim"), r.scores, r.placing, r.faults) for r in store.matches()}
        finally:
            store.close()
        found[kind] = {"peeks": [json.loads(line[5:]) for line in log.splitlines() if line.startswith("PEEK ")],
                       "victim": victim, "shared": shared}
    return found


@pytest.mark.e2e
def test_symlinks_in_its_own_directory_lead_nowhere_and_its_data_is_readable(runs):
    attack = runs["attack"]
    assert len(attack["peeks"]) == 4  # every match
    for peek in attack["peeks"]:
        read, listed, stores = peek["read"], peek["list"], peek["store"]
        assert read["data.txt"] == {"error": "No such file or directory"}  # /etc is not there
        assert read["notes.txt"] == read["home/notes/secret.txt"] == {"error": "No such file or directory"}
        # its directory is the copy of its files taken with its version: none of these is in it
        assert read["t.toml"] == {"error": "No such file or directory"}  # the tournament file
        missing = {"error": "No such file or directory"}
        assert listed["out-link"] == listed["home-link"] == listed["victim-link"] == missing
        assert "error" in stores["out-link/results.sqlite"]
        assert read[str(attack["shared"] / "table.txt")]["head"] == "an endgame table for every bot\n"
    assert "4242" not in json.dumps(attack["peeks"]) and "root:" not in json.dumps(attack["peeks"])


@pytest.mark.e2e
def test_the_victims_results_equal_the_control_runs(runs):
    assert len(runs["attack"]["victim"]) == 4
    assert runs["attack"]["victim"] == runs["control"]["victim"]
    assert runs["control"]["peeks"] == []


# --- the checks, one by one (config.py, paths.py) -------------------------------------------------


def load(tmp: Path, tables: str, extra: str = "") -> model.TournamentConfig:
    return tconfig.load(write_tournament(tmp / "t.toml", tables, game="aegis", deal_sets=1, seed=1, concurrency=1,
                                         extra=extra))


def two_bots(first: str = "", second: str = "") -> str:
    return (f'[[bots]]\nname = "a"\ncommand = ["python", "-m", "sample_bots.random"]\ncwd = "a"\n{first}\n'
            f'[[bots]]\nname = "b"\ncommand = ["python", "-m", "sample_bots.random"]\ncwd = "b"\n{second}\n')


@pytest.fixture
def tour(tmp_path) -> Path:
    for folder in ("a", "b", "a/nets", "shared", "out", "home"):
        (tmp_path / folder).mkdir()
    (tmp_path / "a" / "nets" / "big.onnx").write_text("weights")
    return tmp_path


def test_data_is_resolved_per_bot_and_for_every_bot(tour):
    (tour / "shared-link").symlink_to(tour / "shared")
    cfg = load(tour, two_bots('data = ["a/nets/big.onnx"]'), extra='data = ["shared-link"]')
    a, b = cfg.bots
    assert a.data == (str(tour / "a/nets/big.onnx"), str(tour / "shared"))  # a symlink of the organiser's: followed
    assert b.data == (str(tour / "shared"),)


@pytest.mark.parametrize("data, error", [
    ('"shared"', r"t.toml:\d+: bot 'a': data must be a list of paths"),
    ('["nowhere"]', r"t.toml:\d+: bot 'a': data: .*/nowhere does not exist"),
    ('["out/x"]', r"does not exist"),
    ('["out"]', r"t.toml:\d+: bot 'a': its data .*/out is inside the output directory .*/out, which no bot may read"),
    ('["t.toml"]', r"bot 'a': its data .*/t.toml is the tournament file, which no bot may read"),
])
def test_bad_data_is_refused_in_one_line(tour, data, error):
    with pytest.raises(ConfigError, match=error):
        load(tour, two_bots(f"data = {data}"))


def test_a_data_symlink_may_not_lead_into_a_home_or_another_bots_files(tour, monkeypatch):
    monkeypatch.setenv("HOME", str(tour / "home"))
    (tour / "a" / "tables").symlink_to(tour / "home")
    with pytest.raises(ConfigError, match=r"bot 'a': its data .*/a/tables \(resolved: .*/home\) leads into the "
                                          r"home directory"):
        load(tour, two_bots('data = ["a/tables"]'))
    (tour / "a" / "theirs").symlink_to(tour / "b")
    with pytest.raises(ConfigError, match=r"bot 'a': its data .*/a/theirs \(resolved: .*/b\) leads into bot b's"):
        load(tour, two_bots('data = ["a/theirs"]'))
    load(tour, two_bots('data = ["b", "a/theirs"]'))  # b's directory given to a as it is: a sees it anyway


def test_a_cwd_inside_the_output_or_a_home_is_refused_but_nested_directories_are_not(tour, monkeypatch):
    monkeypatch.setenv("HOME", str(tour / "home"))
    with pytest.raises(ConfigError, match=r"bot 'a': its cwd .*/out is inside the output directory"):
        load(tour, two_bots().replace('cwd = "a"', 'cwd = "out"'))
    with pytest.raises(ConfigError, match=r"bot 'a': its cwd .*/home is a home directory"):
        load(tour, two_bots().replace('cwd = "a"', 'cwd = "home"'))
    (tour / "home" / "compo").mkdir()
    load(tour, two_bots().replace('cwd = "a"', 'cwd = "home/compo"'))  # written there: the organiser's layout
    (tour / "a" / "inner").mkdir()
    cfg = load(tour, two_bots().replace('cwd = "b"', 'cwd = "a/inner"'))  # nested bots' directories, as written
    assert [b.cwd for b in cfg.bots] == [str(tour / "a"), str(tour / "a" / "inner")]
    cfg = load(tour, two_bots().replace('cwd = "b"', 'cwd = "a"'))  # two bots sharing one directory
    assert cfg.bots[0].cwd == cfg.bots[1].cwd


def test_a_command_naming_a_path_outside_its_bot_is_refused_unless_it_is_data(tour):
    table = tour / "shared" / "table.txt"
    table.write_text("x")
    command = f'command = ["python", "-m", "sample_bots.random", "--book", "{table}"]'
    with pytest.raises(ConfigError, match=rf"t.toml:\d+: bot 'a': its command names {table} outside its directory "
                                          rf"{tour / 'a'} and its data"):
        load(tour, two_bots().replace('command = ["python", "-m", "sample_bots.random"]\ncwd = "a"',
                                      f'{command}\ncwd = "a"'))
    cfg = load(tour, two_bots('data = ["shared"]').replace('command = ["python", "-m", "sample_bots.random"]\n'
                                                           'cwd = "a"', f'{command}\ncwd = "a"'))
    assert cfg.bots[0].data == (str(tour / "shared"),)
    (tour / "a" / "run").symlink_to("/usr/bin/true")  # a program named by a path: inside the runtime, fine
    load(tour, two_bots().replace('command = ["python", "-m", "sample_bots.random"]\ncwd = "a"',
                                  'command = ["./run"]\ncwd = "a"'))
    (tour / "a" / "go").symlink_to(tour / "b")  # leads into another bot's directory
    with pytest.raises(ConfigError, match=rf"names {tour / 'a' / 'go' / 'x'}, which leads to {tour / 'b' / 'x'}"):
        load(tour, two_bots().replace('command = ["python", "-m", "sample_bots.random"]\ncwd = "a"',
                                      'command = ["./go/x"]\ncwd = "a"'))


def test_an_external_bot_has_no_data(tour):
    tables = two_bots() + '\n[[bots]]\nname = "ext"\nexternal = true\ntoken = "t"\ndata = ["shared"]\n'
    with pytest.raises(ConfigError, match=r"bot 'ext' is external: it runs on its owner's machine"):
        load(tour, tables)


def test_the_sandbox_binds_the_directory_and_data_not_what_the_command_names(tour):
    peek = tour / "a" / "peek.py"
    peek.write_text("pass")
    argv = sandbox.bwrap_command(["python", str(peek), str(tour / "a" / "nets" / "big.onnx")], cwd=tour / "a",
                                 socket_dir=None, data=[tour / "shared"], hide=[tour / "out"])
    binds = {argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"}
    assert {str(tour / "a"), str(tour / "shared")} <= binds and str(tour / "a" / "nets") not in binds
    with pytest.raises(sandbox.PathRefused, match=f"{tour / 'out'} lies inside {tour / 'out'}"):
        sandbox.bwrap_command(["true"], cwd=tour / "out", socket_dir=None, hide=[tour / "out"])
    (tour / "a" / "shadow").symlink_to("/etc/shadow")  # changed since the tournament file was checked
    with pytest.raises(sandbox.PathRefused, match="which leads to /etc/shadow"):
        sandbox.bwrap_command(["cat", str(tour / "a" / "shadow")], cwd=tour / "a", socket_dir=None)


def test_a_match_command_sees_the_directories_it_names():
    spec = bot_from_command("mine", f"python {ROOT / 'tests' / 'bots' / 'memory_bot.py'} --x /nowhere")
    assert spec.data == (str(ROOT / "tests" / "bots"),)
    assert paths.outside(spec.command, Path("/"), [Path(p) for p in spec.data]) is None


def test_a_match_program_outside_the_current_directory_runs_in_its_own(tmp_path, monkeypatch):
    """``referee match --bot g=/srv/g/bot``: its directory is the program's (as resolved), which its
    sandbox shows, and nothing it names lies outside it; a program inside the current directory,
    the runtime's, or one that is not there keeps the current directory (issue 34, item 4)."""
    here, own = tmp_path / "here", tmp_path / "g"
    here.mkdir()
    own.mkdir()
    program = own / "bot"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    (here / "link").symlink_to(program)
    (here / "mine").write_text("#!/bin/sh\n")
    monkeypatch.chdir(here)
    for written in (str(program), "../g/bot", "./link"):
        spec = bot_from_command("g", f"{written} --weights w.bin")
        assert (spec.command, spec.cwd) == ((str(program), "--weights", "w.bin"), str(own)), written
        assert paths.outside(spec.command, Path(spec.cwd), [Path(p) for p in spec.data]) is None
    for command in ("./mine", f"{sys.executable} -m sample_bots.random", "/usr/bin/env true", "/no/such/bot"):
        spec = bot_from_command("g", command)
        assert (spec.command, spec.cwd) == (tuple(command.split()), None), command


def test_a_match_program_right_in_a_home_is_refused_in_one_line(tmp_path, monkeypatch, invoke):
    (tmp_path / "bot").write_text("#!/bin/sh\n")
    monkeypatch.setattr(paths, "homes", lambda: {tmp_path})
    why = f"its program {tmp_path / 'bot'} lies in the home directory {tmp_path}, which its sandbox would show whole"
    with pytest.raises(ValueError, match=why):
        bot_from_command("g", str(tmp_path / "bot"))
    result = invoke("match", "aegis", "--bot", f"g={tmp_path / 'bot'}", "--bot", "r=python -m sample_bots.random")
    assert result.exit_code == 2 and f"Invalid value for --bot: {why}" in result.output, result.output
