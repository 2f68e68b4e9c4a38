"""The sandbox of launched bots (issue 14), the mechanism: how the mode resolves, the bubblewrap
command, what a bot sees inside (real processes in the real sandbox), its token, the limits of
its whole process tree, and that nothing it started outlives it. The attacks themselves, with
control runs, are tests/test_sandbox_attacks.py's."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import pytest
from harness import PROTO_BOT, ROOT, require_cgroups, require_sandbox, run_cli, write_tournament

from referee import hostload
from referee.competition import config as tconfig
from referee.hosting import sandbox, versions
from referee.hosting.launcher import Launcher
from referee.model import BotSpec, ConfigError, Limits
from referee.results.store import Store
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

SPY = ROOT / "tests" / "bots" / "sandbox_spy.py"
TOKEN = "tok-" + "5a" * 14
BOTS = """
[[bots]]
name = "a"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]

[[bots]]
name = "b"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
"""


# --- the mode and the tournament file -------------------------------------------------------


def test_the_limits_table_reads_the_sandbox_and_the_new_limits(tmp_path):
    path = write_tournament(tmp_path / "t.toml", '[limits]\nsandbox = "none"\nprocesses = 64\nfile_mb = 8\n'
                            'open_files = 100\n' + BOTS + 'file_mb = 1\n', game="aegis", deal_sets=1, seed=1,
                            concurrency=1)
    cfg = tconfig.load(path)
    assert cfg.sandbox == "none"
    assert cfg.bots[0].limits == Limits(processes=64, file_mb=8, open_files=100)
    assert cfg.bots[1].limits == Limits(processes=64, file_mb=1, open_files=100)
    assert tconfig.load(write_tournament(tmp_path / "u.toml", BOTS, game="aegis", deal_sets=1, seed=1,
                                         concurrency=1)).sandbox == "auto"


def test_a_bad_sandbox_names_its_line_and_is_not_a_bot_key(tmp_path):
    path = write_tournament(tmp_path / "t.toml", '[limits]\nsandbox = "docker"\n' + BOTS, game="aegis",
                            deal_sets=1, seed=1, concurrency=1)
    with pytest.raises(ConfigError, match=r't.toml:\d+: limits.sandbox must be one of auto, bwrap, none'):
        tconfig.load(path)
    path.write_text(path.read_text().replace('sandbox = "docker"', "") + 'sandbox = "none"\n')
    with pytest.raises(ConfigError, match="unknown key 'sandbox' in \\[bots\\]"):
        tconfig.load(path)


def test_auto_without_bubblewrap_runs_without_saying_so_in_one_line(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda: "bubblewrap is not installed (apt-get install bubblewrap)")
    box = sandbox.resolve("auto")
    assert box.kind == "none" and not box.isolated
    assert "\n" not in box.warning and "not installed" in box.warning and "tokens" in box.warning
    assert sandbox.resolve("none").warning.startswith("sandbox: none (as asked): ")
    with pytest.raises(sandbox.SandboxUnavailable, match='sandbox = "bwrap" but bubblewrap is not installed'):
        sandbox.resolve("bwrap")


def test_bwrap_where_it_cannot_work_exits_2_with_one_line(tmp_path, monkeypatch, invoke):
    monkeypatch.setattr(sandbox, "probe", lambda: "bubblewrap does not work here (no user namespaces)")
    path = write_tournament(tmp_path / "t.toml", '[limits]\nsandbox = "bwrap"\n' + BOTS, game="aegis",
                            deal_sets=1, seed=1, concurrency=1)
    result = invoke("tournament", path, "--quiet")
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert errors == ['Error: sandbox = "bwrap" but bubblewrap does not work here (no user namespaces)']
    assert Store(tmp_path / "out").count() == 0


# --- the bubblewrap command ---------------------------------------------------------------


def test_the_bubblewrap_command_mounts_in_order_and_masks_what_a_bot_must_not_see(tmp_path):
    bots = tmp_path / "bots"
    out, other, own = bots / "out", bots / "other", bots / "own"
    for folder in (out, other, own):
        folder.mkdir(parents=True)
    tournament = bots / "t.toml"
    tournament.write_text("seed = 1")
    sockets = tmp_path / "sock"
    argv = sandbox.bwrap_command(["python", "x.py"], cwd=own.parent, socket_dir=sockets,
                                 hide=[out, tournament], apart=[other, tmp_path], env={"MINE": "1"}, scratch_mb=8)
    assert argv[0] == "bwrap" and argv[-3:] == ["--", "python", "x.py"]
    for flag in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in argv

    def at(*words: str) -> int:
        return next(i for i in range(len(argv)) if argv[i:i + len(words)] == list(words))

    # /tmp (the scratch, 8 MB) before the bot's directory under it; masks after what they hide in
    assert at("--size", str(8 << 20), "--tmpfs", "/tmp") < at("--ro-bind", str(bots), str(bots))
    assert at("--ro-bind", str(bots), str(bots)) < at("--tmpfs", str(out), "--remount-ro", str(out))
    assert at("--ro-bind", str(bots), str(bots)) < at("--tmpfs", str(other))
    assert at("--ro-bind", str(bots), str(bots)) < at("--ro-bind", "/dev/null", str(tournament))
    assert str(tmp_path) not in [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]  # holds the bot's own
    assert argv[at("--ro-bind", str(sockets)) + 2] == sandbox.SOCKET_DIR
    assert argv[at("--chdir") + 1] == str(bots)
    env = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}
    assert env == {"PATH": sandbox.PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                   "MINE": "1"}
    assert "--share-net" in sandbox.bwrap_command(["true"], cwd=own, socket_dir=None)  # no socket: TCP


def test_a_launched_command_carries_no_token_and_no_admin_token_is_inherited(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_ADMIN_TOKEN", "admin-secret")
    spec = BotSpec("a", ("python", "-m", "sample_bots.random"), str(tmp_path), {"MINE": "1"})
    for box in (sandbox.Sandbox("none", False), sandbox.Sandbox("bwrap", False)):
        launcher = Launcher([spec], "127.0.0.1:1", {"a": TOKEN}, {"a": 2}, None, box=box, socket_dir=tmp_path)
        command = launcher.command(launcher.bots["a"])
        assert TOKEN not in " ".join(command)
        assert command[-8:] == ["--address", "127.0.0.1:1", "--name", "a", "--token-fd", "3", "--capacity", "2"]
        env = launcher.environment(spec)
        assert "REFEREE_ADMIN_TOKEN" not in env and TOKEN not in json.dumps(env)
        # its env is set by the prelude just before its own command, in either box (no step of ours has it)
        assert "MINE" not in env and "MINE" not in command[:command.index(json.dumps({"env": {"MINE": "1"}}))]
        at = command.index(json.dumps({"env": {"MINE": "1"}}))
        assert command[at - 3:at] == ["-I", "-S", str(sandbox.PRELUDE)]
        assert command[at + 1:at + 3] == [sys.executable, "-m"]


# --- real processes in the real sandbox -----------------------------------------------------


def token_anywhere() -> list[str]:
    """Processes of this machine whose command line or environment holds TOKEN."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        for part in ("cmdline", "environ"):
            try:
                if TOKEN.encode() in (proc / part).read_bytes():
                    found.append(f"{proc.name}/{part}")
            except OSError:
                pass
    return found


def orphans(marker: str) -> list[str]:
    """The sleeping grandchildren the spy leaves (``--then orphan --marker MARKER``)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
            if b"time.sleep(600)" in cmdline and marker.encode() in cmdline:
                found.append(proc.name)
        except OSError:
            pass
    return found


class Spy:
    """tests/bots/sandbox_spy.py launched by a Launcher in ``box``, from ``tmp/bots``: beside it
    ``out/`` (with a results.sqlite), ``t.toml`` and ``other/`` (another bot's directory), all
    to be hidden; a listening Unix socket in the socket directory."""

    def __init__(self, tmp: Path, box: sandbox.Sandbox, *args: str, limits: Limits = Limits(),
                 max_restarts: int = 0):
        self.tmp = tmp
        self.bots = tmp / "bots"
        (self.bots / "out").mkdir(parents=True)
        (self.bots / "out" / "results.sqlite").write_text("results")
        (self.bots / "t.toml").write_text("seed = 1")
        (self.bots / "other").mkdir()
        (self.bots / "other" / "secret.py").write_text("x = 1")
        self.sockets = tmp / "sock"
        (self.sockets / "spy").mkdir(parents=True)  # the spy's own door: sock/spy/referee.sock
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(str(self.sockets / "spy" / sandbox.SOCKET_NAME))
        self.listener.listen()
        os.chmod(self.sockets / "spy" / sandbox.SOCKET_NAME, 0o666)
        spec = BotSpec("spy", ("python", str(SPY), *args), str(self.bots), {"BOT_SETTING": "on"},
                       limits=dataclasses.replace(limits, max_restarts=max_restarts), data=(str(SPY),))
        address = f"unix:{sandbox.SOCKET_DIR}/{sandbox.SOCKET_NAME}"
        self.launcher = Launcher([spec], address, {"spy": TOKEN}, {"spy": 1}, tmp / "logs", box=box,
                                 socket_dir=self.sockets, hide=[self.bots / "out", self.bots / "t.toml",
                                                                self.bots / "other"])
        self.launcher.start_all()

    @property
    def process(self):
        return self.launcher.bots["spy"].process

    def wait(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.process.poll() is not None, "the spy should have ended"

    def stop(self) -> dict:
        self.launcher.stop_all()
        self.listener.close()
        return self.launcher.status()["spy"]

    def log(self) -> str:
        return (self.tmp / "logs" / "spy.log").read_text()

    def seen(self) -> dict:
        line = next(line for line in self.log().splitlines() if line.startswith("SPY {"))
        return json.loads(line[4:])


@pytest.fixture
def bwrap() -> sandbox.Sandbox:
    require_sandbox()
    return sandbox.resolve("bwrap")


@pytest.mark.e2e
def test_what_a_bot_sees_in_the_sandbox(tmp_path, bwrap, monkeypatch):
    monkeypatch.setenv("REFEREE_ADMIN_TOKEN", "admin-secret")
    host = socket.create_server(("127.0.0.1", 0))  # a port of this machine the bot must not reach
    port = host.getsockname()[1]
    bots = tmp_path / "bots"
    spy = Spy(tmp_path, bwrap, "--look", str(bots / "out"), "--look", str(bots / "t.toml"),
              "--look", str(bots / "other"), "--look", os.path.relpath(Path.home(), bots), "--tcp", str(port),
              "--then", "exit")  # the home by a relative path: a command may name by absolute path only its own
    leaks = []
    while spy.process.poll() is None:  # from outside, while it runs: the token in no process's argv or env
        leaks += token_anywhere()
        time.sleep(0.01)
    spy.wait()
    status = spy.stop()
    host.close()
    assert status["exits"] == ["exit code 0"], spy.log()
    assert leaks == []
    seen = spy.seen()
    assert seen["token_length"] == len(TOKEN) and not seen["token_in_proc"]
    assert seen["argv"][seen["argv"].index("--token-fd") + 1] == "3"
    assert len(set(seen["fds"]) - {0, 1, 2, 3}) <= 1  # and the one listing them
    assert seen["env"] == {"PATH": sandbox.PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                           "LC_ALL": "C.UTF-8", "BOT_SETTING": "on", "PWD": str(bots)}  # PWD: bwrap's --chdir
    assert seen["interfaces"] == ["lo"] and seen["tcp"] == "Connection refused"
    assert seen["socket"] == [sandbox.SOCKET_NAME]
    assert len(seen["processes"]) == 2 and all("bwrap" in p or "sandbox_spy" in p for p in seen["processes"])
    assert seen["cwd"] == str(bots)
    assert seen["write"] == {str(bots): "Read-only file system", sys.prefix: "Read-only file system", "/tmp": "yes"}
    look = seen["look"]
    assert look[str(bots / "out")] == {"dir": []}  # the output directory: an empty, read-only tmpfs
    assert look[str(bots / "t.toml")] == {"error": "Permission denied"}  # the tournament file: /dev/null, nodev
    assert look[str(bots / "other")] == {"dir": []}  # another bot's directory
    home = look[os.path.relpath(Path.home(), bots)]
    assert home.get("dir", []) == [p for p in home.get("dir", []) if str(Path.home() / p) in sys.base_prefix]


@pytest.mark.e2e
def test_without_a_sandbox_the_token_and_the_admin_token_stay_out_of_sight(tmp_path, monkeypatch):
    monkeypatch.setenv("REFEREE_ADMIN_TOKEN", "admin-secret")
    spy = Spy(tmp_path, sandbox.Sandbox("none", cgroups=sandbox.cgroup_parents() is not None), "--then", "exit")
    leaks = []
    while spy.process.poll() is None:
        leaks += token_anywhere()
        time.sleep(0.01)
    spy.wait()
    assert spy.stop()["exits"] == ["exit code 0"], spy.log()
    seen = spy.seen()
    assert leaks == [] and seen["token_length"] == len(TOKEN)
    assert "REFEREE_ADMIN_TOKEN" not in seen["env"] and seen["env"]["BOT_SETTING"] == "on"


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_nothing_a_bot_started_outlives_it(tmp_path, mode):
    """A grandchild in its own session (setsid, then a double fork) is gone once its bot has
    died and been restarted, and after the end."""
    if mode == "bwrap":
        require_sandbox()
    else:
        require_cgroups()  # without a sandbox, only a cgroup finds a process that left the session
    marker = f"orphan-marker-{os.getpid()}-{mode}"
    spy = Spy(tmp_path, sandbox.resolve(mode), "--then", "orphan", "--marker", marker, max_restarts=1)
    spy.wait()
    assert spy.launcher.ensure_running(["spy"]) == []  # restarted: what the first one left is gone
    assert _gone_soon(marker)
    spy.wait()
    status = spy.stop()
    assert status["exits"] == ["exit code 5", "exit code 5"], spy.log()
    assert _gone_soon(marker)


@pytest.mark.e2e
def test_without_cgroups_the_session_is_swept(tmp_path):
    """No sandbox, no cgroup: a child that left the bot's process group (not its session) is
    still found, by its session, and killed."""
    marker = f"orphan-marker-{os.getpid()}-session"
    spy = Spy(tmp_path, sandbox.Sandbox("none", cgroups=False), "--then", "group", "--marker", marker)
    spy.wait()
    assert orphans(marker), "the child should still run before the sweep"
    status = spy.stop()
    assert status["exits"] == ["exit code 5"], spy.log()
    assert _gone_soon(marker)


def _gone_soon(marker: str) -> bool:
    deadline = time.monotonic() + 2
    while orphans(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return orphans(marker) == []


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_the_whole_bot_has_a_process_limit(tmp_path, mode):
    require_sandbox() if mode == "bwrap" else None
    require_cgroups()
    spy = Spy(tmp_path, sandbox.resolve(mode), "--then", "fork", "--count", "200", limits=Limits(processes=40))
    spy.wait()
    status = spy.stop()
    assert status["exits"] == ["exit code 6 (reached its limit of 40 processes)"], spy.log()
    stopped = next(line for line in spy.log().splitlines() if line.startswith("SPY fork stopped after"))
    assert int(stopped.split()[4].rstrip(":")) < 40


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_the_whole_bot_has_a_memory_limit(tmp_path, mode):
    """Two children hold 90 MB each, each under the per-process limit; the bot grows until the
    three together pass 300 MB: the kernel kills it, and its death says why."""
    require_sandbox() if mode == "bwrap" else None
    require_cgroups()
    spy = Spy(tmp_path, sandbox.resolve(mode), "--then", "memory", "--count", "2", "--size-mb", "90",
              limits=Limits(memory_mb=300))
    spy.wait()
    status = spy.stop()
    assert status["exits"] == ["killed by SIGKILL (over its memory limit of 300 MB)"], spy.log()


@pytest.mark.e2e
def test_file_size_and_scratch_are_limited(tmp_path, bwrap):
    spy = Spy(tmp_path, bwrap, "--then", "write", "--size-mb", "5", limits=Limits(file_mb=2))
    spy.wait()
    status = spy.stop()
    assert status["exits"] == ["exit code 1"], spy.log()
    assert "wrote it all" not in spy.log()
    assert "File too large" in spy.log() or "No space left on device" in spy.log()


@pytest.mark.e2e
def test_a_sandboxed_tournament_plays_through_the_socket_and_records_its_sandbox(tmp_path, monkeypatch):
    require_sandbox()
    monkeypatch.setenv("REFEREE_ADMIN_TOKEN", "admin-secret")
    bots = f"""
[limits]
sandbox = "bwrap"

[[bots]]
name = "spy"
command = ["python", "{SPY}", "--look", "{tmp_path / 'out'}", "--look", "{tmp_path / 't.toml'}"]
data = ["{SPY}"]
token = "{TOKEN}"

[[bots]]
name = "random"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
"""
    path = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=2, seed=5, concurrency=2)
    done = run_cli("tournament", path, "--quiet", "--bootstrap", "50")
    assert done.returncode == 0, done.stderr
    assert "sandbox: none" not in done.stderr  # a line only when bots run without one
    store = Store(tmp_path / "out", create=False)
    assert store.meta("sandbox").startswith("sandbox: bwrap")
    rows = list(store.matches())
    assert len(rows) == 4 and all(sum(f.values()) == 0 for r in rows for f in r.results["faults"])
    line = next(x for x in (tmp_path / "out" / "logs" / "spy.log").read_text().splitlines() if x.startswith("SPY {"))
    seen = json.loads(line[4:])
    # its directory is the copy of its files taken with its version, which holds neither
    assert seen["look"] == {str(tmp_path / "out"): {"error": "No such file or directory"},
                            str(tmp_path / "t.toml"): {"error": "No such file or directory"}}
    assert "admin-secret" not in line and TOKEN not in line


@pytest.mark.e2e
def test_referee_serve_also_listens_on_a_unix_socket(tmp_path):
    """``referee serve --unix PATH``: bots play through the socket (mode 0666), removed at the end."""
    path = tmp_path / "referee.sock"
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, "-m", "referee", "serve", "--port", "0", "--unix", str(path),
                                   "--token", "a=one", "--token", "b=two", "--admin-token", "adm"],
                                  stdout=out, stderr=out)
    bots = []
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"listening on (\S+) and unix:", log.read_text())) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert found, log.read_text()
        assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o666
        bots = [subprocess.Popen([sys.executable, str(PROTO_BOT), "--address", f"unix:{path}", "--name", name,
                                  "--token", token]) for name, token in (("a", "one"), ("b", "two"))]
        with grpc.insecure_channel(found.group(1)) as channel:
            response = pb_grpc.RefereeStub(channel).RunMatch(
                pb.RunMatchRequest(admin_token="adm", game="aegis", lineup=["a", "b"], seed=9), timeout=60)
        assert sorted(json.loads(response.results_json)["placing"]) == [1, 2]
    finally:
        for bot in bots:
            bot.terminate()
            bot.wait(10)
        server.send_signal(signal.SIGINT)
        server.wait(10)
    assert not path.exists()


@pytest.mark.e2e
def test_another_bots_code_named_by_absolute_path_is_masked(tmp_path, bwrap):
    """The red team's finding: a victim that runs ``python /abs/victim_code/victim.py`` from another
    directory had its code directory (and its opening book) readable to a bot in the tournament's
    directory, which only masked the other bots' working directories. Now a bot sees what its
    command names outside its directory only as its data, and other bots' data are masked."""
    tour = tmp_path / "tour"
    code = tour / "victim_code"
    code.mkdir(parents=True)
    (code / "victim.py").write_text("pass\n")
    (code / "book.txt").write_text("the victim's opening book\n")
    (tour / "victim_run").mkdir()
    look = ("import os, sys; d = sys.argv[1]\n"
            "try: print(sorted(os.listdir(d)))\nexcept OSError as e: print(e.strerror)")
    attacker = BotSpec("attacker", ("python", "-c", look, "victim_code"), str(tour))  # relative: found at run time
    victim = BotSpec("victim", ("python", str(code / "victim.py")), str(tour / "victim_run"), data=(str(code),))
    launcher = Launcher([attacker, victim], "unix:/nowhere", {"attacker": "a", "victim": "v"},
                        {"attacker": 1, "victim": 1}, tmp_path / "logs", box=bwrap)
    seen = subprocess.run(_prelude(launcher, "attacker"), capture_output=True, text=True, timeout=30)
    assert seen.stdout.strip() == "[]", seen.stdout + seen.stderr  # an empty, read-only tmpfs
    # two versions of one bot side by side both see it, as their data
    old = BotSpec("old", ("python", "-c", look, str(code), str(code / "victim.py")), str(tour / "victim_run"),
                  data=(str(code),))
    launcher = Launcher([victim, old], "unix:/nowhere", {"old": "o", "victim": "v"},
                        {"old": 1, "victim": 1}, tmp_path / "logs", box=bwrap)
    seen = subprocess.run(_prelude(launcher, "old"), capture_output=True, text=True, timeout=30)
    assert seen.stdout.strip() == "['book.txt', 'victim.py']", seen.stdout + seen.stderr
    # without it as data, the command is refused: it names a path outside the bot's own
    launcher = Launcher([dataclasses.replace(old, data=())], "unix:/nowhere", {"old": "o"}, {"old": 1}, None, box=bwrap)
    with pytest.raises(sandbox.PathRefused, match=f"its command names {code} outside its directory"):
        launcher.command(launcher.bots["old"])


#: a bot that prints every file it sees under its directory (a link as itself), one JSON list
WALK = ("import json, os\nseen = []\nfor top, dirs, names in os.walk('.'):\n"
        "    seen += [os.path.normpath(os.path.join(top, n)) for n in names + [d for d in dirs "
        "if os.path.islink(os.path.join(top, d))]]\nprint(json.dumps(sorted(seen)))")


@pytest.mark.e2e
def test_a_bot_sees_of_its_directory_exactly_what_its_version_covers(tmp_path, bwrap):
    """Red team finding 2, the mechanism: masked in the sandbox and left out of the version,
    ``__pycache__``, version control and another run's output; a dot-directory is in both; with
    ``files`` declared, only those (and what the command names) are shown, a link as a link; the
    same when its data holds its directory."""
    own = tmp_path / "own"
    for name in ("bot.py", "lib/m.py", "lib/__pycache__/m.cpython-311.pyc", ".git/HEAD", ".svn/entries",
                 ".config/strategy.py", "old-run/results.sqlite", "old-run/seeds.txt", "notes.txt", "out/x"):
        (own / name).parent.mkdir(parents=True, exist_ok=True)
        (own / name).write_text(name)
    (own / "lib" / "up").symlink_to("..")
    for files, data in (((), ()), (("lib", ".config/*.py"), ()), ((), (str(tmp_path),))):  # data holding it too
        spec = BotSpec("walker", ("python", "-c", WALK, "bot.py"), str(own), files=files, data=data)
        launcher = Launcher([spec], "unix:/nowhere", {"walker": "w"}, {"walker": 1}, None, box=bwrap,
                            hide=[own / "out"])
        seen = subprocess.run(_prelude(launcher, "walker"), capture_output=True, text=True, timeout=30)
        assert seen.returncode == 0, seen.stderr
        version = versions.of(spec, hide=[own / "out"])
        assert {str(own / p) for p in json.loads(seen.stdout)} == set(version["files"])
        expected = {"lib/m.py", "lib/up", ".config/strategy.py", "bot.py"} | ({"notes.txt"} if not files else set())
        assert set(json.loads(seen.stdout)) == expected


@pytest.mark.e2e
def test_a_process_for_one_match_is_gone_with_its_whole_sandbox_once_retired(tmp_path, bwrap):
    """Without cgroups too: retire returns only once the sandbox's pid namespace is gone (the
    runner waits for its init), so the bot's next process never meets a child of the last one."""
    marker = f"retired-marker-{os.getpid()}"
    code = "import os, time; os.fork(); time.sleep(300)"  # two processes, both sleeping
    spec = BotSpec("sleeper", ("python", "-c", code, marker), str(tmp_path))
    launcher = Launcher([spec], "unix:/nowhere", {"sleeper": "t"}, {"sleeper": 1}, tmp_path / "logs",
                        box=dataclasses.replace(bwrap, cgroups=False))
    for n in range(5):
        name = f"sleeper#{n}"
        launcher.start_for_match("sleeper", name, "t", 1)
        deadline = time.monotonic() + 20
        while len(marked(marker, bot_only=True)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        inside = marked(marker)  # both bubblewraps (the sandbox's init among them) and the bot's two
        assert len(inside) == 4, (tmp_path / "logs" / "sleeper.log").read_text()
        launcher.retire(name)
        assert [pid for pid in inside if alive(pid)] == [], f"start {n}: the retired sandbox still runs"
    launcher.stop_all()


def alive(pid: int) -> bool:
    """Not exited (a zombie has: it holds nothing, and waits for its parent to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def marked(marker: str, bot_only: bool = False) -> list[int]:
    """Live processes (not zombies) whose command line carries ``marker`` (``bot_only``: not bubblewrap's,
    nor the prelude's, which starts it and, inside, the bot)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
            ours = cmdline.startswith(b"bwrap") or str(sandbox.PRELUDE).encode() in cmdline.split(b"\0")[:4]
            if marker.encode() in cmdline and not (bot_only and ours) and \
                    (proc / "stat").read_text().rpartition(")")[2].split()[0] != "Z":
                found.append(int(proc.name))
        except OSError:
            pass
    return found


# --- the writable space, CPU shares, memory outside the address space (issue 24) -------------

# in the sandbox: what each place lets it write, and how many empty files fit in its scratch
LOOK_WRITABLE = """
import errno, json, os
seen = {}
for place in ("/", "/tmp", "/dev/shm", "/dev", "/usr"):
    try:
        with open(os.path.join(place, "probe"), "w"):
            pass
        seen[place] = "yes"
    except OSError as err:
        seen[place] = errno.errorcode[err.errno]
files = {}
for place in ("/tmp", "/dev/shm"):
    stats, n = os.statvfs(place), 0
    there, device = 0, os.stat(place).st_dev  # what is there in its file system: the probe, mount points
    for top, dirs, names in os.walk(place):
        there += len(dirs) + len(names)
        dirs[:] = [d for d in dirs if os.stat(os.path.join(top, d)).st_dev == device]
    try:
        while n < 100000:
            os.close(os.open(f"{place}/empty-{n}", os.O_CREAT | os.O_WRONLY))
            n += 1
    except OSError as err:
        files[place] = [n, errno.errorcode[err.errno], stats.f_files, stats.f_ffree, stats.f_blocks * stats.f_frsize,
                        there]
print(json.dumps({"write": seen, "files": files}))
"""


def _seen_in_sandbox(tmp_path: Path, box: sandbox.Sandbox, file_mb: int) -> dict:
    spec = BotSpec("look", ("python", "-c", LOOK_WRITABLE), str(tmp_path), limits=Limits(file_mb=file_mb))
    launcher = Launcher([spec], "unix:/nowhere", {"look": "x"}, {"look": 1}, tmp_path / "logs", box=box)
    done = subprocess.run(_prelude(launcher, "look")[:-8], capture_output=True, text=True, timeout=60)  # no kit args
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.e2e
def test_a_bot_writes_only_its_scratch_and_dev_shm_each_of_a_size_and_an_inode_count(tmp_path, bwrap):
    """The root, /dev and everything bound are read-only; /tmp and /dev/shm are tmpfs of file_mb
    with 128 inodes per MB (at least 1,024), mounted by the prelude (bubblewrap 0.8 has no inode
    option): as many empty files fit as the inode count leaves."""
    assert bwrap.staged, sandbox.staging_probe()
    seen = _seen_in_sandbox(tmp_path, bwrap, file_mb=16)
    assert seen["write"] == {"/": "EROFS", "/tmp": "yes", "/dev/shm": "yes", "/dev": "EROFS", "/usr": "EROFS"}, seen
    want = sandbox.Writable.of(16)
    assert want == sandbox.Writable(16, 2048)
    for place in ("/tmp", "/dev/shm"):
        made, error, inodes, free, size, there = seen["files"][place]
        assert (error, inodes, size) == ("ENOSPC", want.inodes, 16 << 20), seen
        # less its root and what was there: the probe, the mount points of the bot's directory
        assert made == free == want.inodes - 1 - there, seen
    assert sorted(p.name for p in sandbox.staging_dir().iterdir()) == []  # mounted only in the bot's namespace


@pytest.mark.e2e
def test_without_the_prelude_the_bubblewrap_command_does_not_run(tmp_path, bwrap):
    """The sources bubblewrap binds as the bot's tmpfs exist only in the prelude's mount namespace:
    run without it, the command fails rather than bind an unbounded host directory."""
    command = sandbox.bwrap_command(["true"], cwd=tmp_path, socket_dir=None, scratch_mb=1, staged=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "Can't find source path" in done.stderr, done.stderr
    assert subprocess.run(sandbox.limited(command, Limits(), None, None, scratch_mb=1, staged=True),
                          timeout=30).returncode == 0


def _unprivileged_python() -> list[str]:
    """How to run a Python as a user other than root: as it is (not root), or with setpriv as
    nobody, with an interpreter nobody can run (this one may live in root's home)."""
    if os.getuid() != 0:
        return [sys.executable]
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    for python in ("/usr/bin/python3", sys.executable):
        try:
            if subprocess.run([*nobody, python, "-I", "-S", "-c", ""], capture_output=True, timeout=30).returncode == 0:
                return [*nobody, python]
        except OSError:
            pass
    why = "no Python that a user other than root may run (/usr/bin/python3: apt-get install python3-minimal)"
    if os.environ.get("REFEREE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"REFEREE_REQUIRE_SANDBOX=1 but {why}", pytrace=False)
    pytest.skip(why)


@pytest.mark.e2e
def test_the_prelude_mounts_the_tmpfs_for_a_user_other_than_root_too(tmp_path, bwrap, monkeypatch):
    """As another user, the prelude makes a user namespace of its own to mount them in, and
    bubblewrap maps the bot back to that user: it writes its scratch, up to the inode count, and
    nothing else. (As root, with setpriv to nobody; a shell as the bot: the interpreter may be
    out of nobody's reach.)"""
    python = _unprivileged_python()
    uid = os.getuid() if os.getuid() != 0 else 65534
    script = ('id -u; n=0; while true > /tmp/f$n 2>/dev/null; do n=$((n+1)); done; echo $n; '
              '{ true > /x; } 2>/dev/null || echo read-only; true > /dev/shm/y && echo shm')
    with monkeypatch.context() as patch:  # the command as that user would make it
        patch.setattr(os, "getuid", lambda: uid)
        patch.setattr(os, "getgid", lambda: uid)
        patch.setattr(sandbox.paths, "runtime", lambda: ())
        command = sandbox.bwrap_command(["sh", "-c", script], cwd=Path("/"), socket_dir=None, scratch_mb=1,
                                        staged=True)
        full = sandbox.limited(command, Limits(processes=0), None, None, scratch_mb=1, staged=True)
    assert command[command.index("--uid") + 1] == str(uid)
    with tempfile.TemporaryDirectory() as place:  # the prelude where that user may read it (a clone may not be)
        os.chmod(place, 0o755)
        at = full.index(str(sandbox.PRELUDE))
        prelude = shutil.copy(full[at], place)
        os.chmod(prelude, 0o644)
        done = subprocess.run([*python, *full[1:at], prelude, *full[at + 1:]], capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(uid), str(sandbox.MIN_INODES - 1), "read-only", "shm"], done.stdout


MEMFD_AND_SYSV = """
import ctypes, errno, os
try:
    os.close(os.memfd_create("x"))
    memfd = "yes"
except OSError as err:
    memfd = errno.errorcode[err.errno]
libc = ctypes.CDLL(None, use_errno=True)
key = libc.shmget(0, ctypes.c_size_t(1 << 20), 0o1600)
sysv = "yes" if key >= 0 else errno.errorcode[ctypes.get_errno()]
if key >= 0:
    libc.shmctl(key, 0, None)  # IPC_RMID
print(memfd, sysv)
"""


@pytest.mark.e2e
def test_where_no_memory_group_holds_a_bot_memfd_and_sysv_ipc_are_refused():
    """Memory they hold lies outside any address space: without a memory cgroup the prelude's
    seccomp filter refuses them (ENOSYS); in a memory group they work, charged to it."""
    bare = sandbox.limited([sys.executable, "-c", MEMFD_AND_SYSV], Limits(), None, None)
    assert subprocess.run(bare, capture_output=True, text=True, timeout=30).stdout.split() == ["ENOSYS", "ENOSYS"]
    require_cgroups()
    tree = sandbox.ProcessTree.make(f"referee-{os.getpid()}-test-memfd", Limits())
    try:
        grouped = sandbox.limited([sys.executable, "-c", MEMFD_AND_SYSV], Limits(), tree, None)
        assert subprocess.run(grouped, capture_output=True, text=True, timeout=30).stdout.split() == ["yes", "yes"]
    finally:
        tree.remove()


KEYRINGS = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
key = libc.syscall(add_key, b"user", b"referee-test", b"x", ctypes.c_size_t(1), ctypes.c_int(-3))
print("yes" if key > 0 else errno.errorcode[ctypes.get_errno()], end=" ")
ring = libc.syscall(keyctl, 0, ctypes.c_int(-3), 0)  # KEYCTL_GET_KEYRING_ID of the session keyring
print("yes" if ring > 0 else errno.errorcode[ctypes.get_errno()])
"""


@pytest.mark.e2e
def test_the_kernels_keyrings_are_refused_to_every_bot_with_a_memory_group_or_without():
    """A session keyring is shared by every process of a login or a service, the runner's
    included: add_key and keyctl are refused (ENOSYS) to every launched bot (red team, round 4)."""
    bare = sandbox.limited([sys.executable, "-c", KEYRINGS], Limits(), None, None)
    assert subprocess.run(bare, capture_output=True, text=True, timeout=30).stdout.split() == ["ENOSYS", "ENOSYS"]
    outside = subprocess.run([sys.executable, "-c", KEYRINGS], capture_output=True, text=True, timeout=30)
    assert outside.stdout.split()[1] == "yes"  # the runner itself may: the filter is what refuses them
    require_cgroups()
    tree = sandbox.ProcessTree.make(f"referee-{os.getpid()}-test-keys", Limits())
    try:
        grouped = sandbox.limited([sys.executable, "-c", KEYRINGS], Limits(), tree, None)
        assert subprocess.run(grouped, capture_output=True, text=True, timeout=30).stdout.split() == ["ENOSYS",
                                                                                                     "ENOSYS"]
    finally:
        tree.remove()


def test_each_bot_tree_has_a_cpu_share_per_seat_it_plays():
    require_cgroups(cpu=True)
    tree = sandbox.ProcessTree.make(f"referee-{os.getpid()}-test-cpu", Limits(), seats=3)
    try:
        cpu = next(d for d in tree.dirs if tree.has("cpu") and (d / "cpu.shares").exists())
        assert (cpu / "cpu.shares").read_text().strip() == str(3 * sandbox.SHARES_PER_SEAT)
    finally:
        tree.remove()
    assert not any(d.exists() for d in tree.dirs)


#: a process that spins on CPU 0 for up to a minute
SPIN = ("import os, time\nos.sched_setaffinity(0, {0})\nend = time.monotonic() + 60\n"
        "while time.monotonic() < end:\n    pass\n")


def test_a_tree_waiting_for_its_matchs_turn_has_only_the_cpu_the_playing_bots_leave():
    """The processes of a match prepared ahead (isolation = "match": they start while others play) have
    the least CPU share until their turn: a spinner waiting beside a spinner playing, both on one CPU,
    gets next to nothing; once its match plays, half."""
    require_cgroups(cpu=True)
    waiting = sandbox.ProcessTree.make(f"referee-{os.getpid()}-test-waiting", Limits(), waiting=True)
    playing = sandbox.ProcessTree.make(f"referee-{os.getpid()}-test-playing", Limits())
    spinners = []
    try:
        cpu = next(d for d in waiting.dirs if (d / "cpu.shares").exists())
        assert (cpu / "cpu.shares").read_text().strip() == str(sandbox.SHARES_WAITING)
        for tree in (waiting, playing):
            spinners.append(subprocess.Popen(sandbox.limited([sys.executable, "-c", SPIN], Limits(), tree, None)))
        time.sleep(1.0)  # both started and pinned
        meters = [hostload.BotCpu(tree.threads) for tree in (waiting, playing)]  # as the referee meters bots

        def ran(seconds: float = 2.0) -> list[float]:
            first = [m.read() for m in meters]
            time.sleep(seconds)
            return [m.read().since(f, seconds).ran for m, f in zip(meters, first)]

        used = ran()
        assert used[0] < 0.1 * used[1], f"waiting {used[0]:.2f} s of CPU, playing {used[1]:.2f} s"
        waiting.playing()
        assert (cpu / "cpu.shares").read_text().strip() == str(sandbox.SHARES_PER_SEAT)
        used = ran()
        assert 0.5 < used[0] / used[1] < 2, f"both playing: {used[0]:.2f} and {used[1]:.2f} s of CPU"
    finally:
        for p in spinners:
            p.kill()
            p.wait()
        waiting.remove()
        playing.remove()


def test_the_sandbox_line_says_where_cpu_shares_and_inode_counts_are_missing():
    full = sandbox.Sandbox("bwrap", True, None, cpu=True, staged=True, own_uid=True).describe()
    assert "CPU: a share per seat (cgroup cpu)" in full and "128 inodes per MB" in full and "\n" not in full
    assert "apart: a uid and inodes of its own (locks stay in its sandbox)" in full
    own = sandbox.Sandbox("bwrap", False, None, staged=True, own_uid=True).describe()
    assert "memory per process" in own and "processes per bot (RLIMIT_NPROC, a uid of its own)" in own
    bare = sandbox.Sandbox("bwrap", False, None, cpu=False, staged=False).describe()
    assert "CPU: no share per bot (no cgroup cpu controller this process may use)" in bare
    assert "with no inode limit" in bare and "memfd and SysV IPC refused" in bare
    assert "apart: locks refused (its files are not inodes of its own here)" in bare
    assert "writable" not in sandbox.Sandbox("none", False).describe()  # without a sandbox: wherever it may

def _prelude(launcher: Launcher, name: str) -> list[str]:
    """A launched bot's whole command: its bubblewrap command started by the prelude (which mounts
    its tmpfs, which bubblewrap binds), with no limit."""
    bot = launcher.bots[name]
    return sandbox.limited(launcher.command(bot), Limits(), None, None, scratch_mb=bot.spec.limits.file_mb,
                           staged=launcher.box.staged)


# --- apart: no channel between two sandboxes, limits in every mode (issue 35) ----------------------

LOCKS_AND_NOTICES = """
import ctypes, errno, fcntl, os, struct
libc = ctypes.CDLL(None, use_errno=True)
def tried(call):
    try:
        call()
        return "yes"
    except OSError as err:
        return errno.errorcode[err.errno]
fd = os.open(os.environ.get("TMPDIR", "/tmp"), os.O_RDONLY)
lock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 1, 0)
seen = {"flock": tried(lambda: fcntl.flock(fd, fcntl.LOCK_SH)),
        "setlk": tried(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lock)),
        "ofd": tried(lambda: fcntl.fcntl(fd, fcntl.F_OFD_GETLK, lock)),
        "lease": tried(lambda: fcntl.fcntl(fd, fcntl.F_GETLEASE)),
        "notify": tried(lambda: fcntl.fcntl(fd, fcntl.F_NOTIFY, 1)),
        "getfl": tried(lambda: fcntl.fcntl(fd, fcntl.F_GETFL)),
        "inotify": "yes" if libc.inotify_init1(0) >= 0 else errno.errorcode[ctypes.get_errno()]}
print(" ".join(f"{k}={v}" for k, v in seen.items()))
"""


def test_where_a_sandboxs_files_are_not_its_own_inodes_locks_are_refused():
    """No mount namespace of its own (not staged: a plain process here): every lock call fails
    with ENOLCK (a lock on a file another sandbox shows would cross); inotify, leases and dnotify
    are refused to every bot; fcntl's other commands work."""
    bare = sandbox.limited([sys.executable, "-c", LOCKS_AND_NOTICES], Limits(), None, None)
    seen = subprocess.run(bare, capture_output=True, text=True, timeout=30, check=False)
    assert seen.stdout.split() == ["flock=ENOLCK", "setlk=ENOLCK", "ofd=ENOLCK", "lease=ENOSYS", "notify=ENOSYS",
                                   "getfl=yes", "inotify=ENOSYS"], seen.stderr
    outside = subprocess.run([sys.executable, "-c", LOCKS_AND_NOTICES], capture_output=True, text=True, timeout=30,
                             check=False)
    assert "flock=yes" in outside.stdout and "inotify=yes" in outside.stdout  # the filter is what refuses them


SHOW_SELF = """
import fcntl, json, os, struct, time
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
null = os.stat("/dev/null")
path = os.environ["SHARED"]
fd = os.open(path, os.O_RDONLY)
probe = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 7, 1, 0)
other = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, probe))[0] != fcntl.F_UNLCK
fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 7, 1, 0))
print(json.dumps({"uid": os.getuid(), "caps": status["CapEff"].strip(), "secret": open("secret.txt").read(),
                  "locked_by_another": other, "null": [null.st_dev, null.st_ino]}), flush=True)
time.sleep(float(os.environ["HOLD"]))
"""


@pytest.mark.e2e
def test_two_sandboxes_share_no_inode_and_no_uid(tmp_path, bwrap):
    """As root: a lock one sandbox holds on a file every sandbox shows (one of the referee's
    modules) is not seen from another, nor their /dev/null; each bot runs as uid 1000 of its own
    user namespace, which is a uid of its own outside (drawn from BOT_UIDS), with only
    CAP_DAC_READ_SEARCH there: it still reads a file of mode 0600 in its directory."""
    if os.getuid() != 0:
        pytest.skip("a uid of its own per bot needs a runner that is root")
    assert bwrap.own_uid, sandbox.staging_probe(own_uid=True)
    (tmp_path / "secret.txt").write_text("mine")
    (tmp_path / "secret.txt").chmod(0o600)
    shared = str(ROOT / "referee" / "cards.py")
    started, seen, outside = [], [], []
    for hold in ("30", "30"):  # both alive while the second is looked at (then stopped, below)
        spec = BotSpec("b", (sys.executable, "-c", SHOW_SELF), str(tmp_path), {"SHARED": shared, "HOLD": hold})
        launcher = Launcher([spec], "unix:/nowhere", {"b": "x"}, {"b": 1}, None, box=bwrap)
        command = launcher.command(launcher.bots["b"])[:-8]  # no kit arguments
        started.append(subprocess.Popen(sandbox.limited(command, Limits(), None, None, staged=True),
                                        stdout=subprocess.PIPE, text=True))
        seen.append(json.loads(started[-1].stdout.readline()))
        outside.append({int(line.split()[1]) for pid in marked(SHOW_SELF[:40], bot_only=True)
                        for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Uid:")})
    for process in started:
        process.terminate()
        process.wait(30)
    assert [s["locked_by_another"] for s in seen] == [False, False]  # the first one's lock stays in its sandbox
    assert seen[0]["null"] != seen[1]["null"]
    assert all(s["uid"] == sandbox.BOT_UID_INSIDE and s["caps"] == "0000000000000004" and s["secret"] == "mine"
               for s in seen), seen
    uids = [u for found in outside for u in found]
    assert all(u in sandbox.BOT_UIDS for u in uids) and len(set(uids)) == 2, outside


def test_a_whole_bot_limit_the_runner_cannot_hold_is_refused_unless_accepted(tmp_path):
    """Where no cgroup holds a bot, memory_mb (and, for a bot that would run as root, processes)
    holds per process only: a file that sets it stops the run in one line, unless it accepts it;
    the defaults, which no file wrote, are only said in the sandbox line."""
    no_cgroups = sandbox.Sandbox("bwrap", cgroups=False, staged=True, own_uid=os.getuid() == 0)
    path = write_tournament(tmp_path / "t.toml", '[limits]\nmemory_mb = 512\n' + BOTS, game="aegis", deal_sets=1,
                            seed=1, concurrency=1)
    bots = tconfig.load(path).bots
    assert bots[0].limits.written == ("memory_mb",) and bots[0].limits == Limits(memory_mb=512)
    refusal = r'^memory_mb = 512 \(bots a, b\) cannot hold for the whole bot here: no memory cgroup .*' \
              r'accept_per_process = \["memory_mb"\]'
    with pytest.raises(sandbox.LimitUnbounded, match=refusal):
        sandbox.check_bounded(no_cgroups, bots)
    sandbox.check_bounded(dataclasses.replace(no_cgroups, cgroups=True), bots)  # a cgroup holds it
    sandbox.check_bounded(no_cgroups, tconfig.load(write_tournament(tmp_path / "d.toml", BOTS, game="aegis",
                                                                    deal_sets=1, seed=1, concurrency=1)).bots)
    accepting = 'memory_mb = 512\naccept_per_process = ["memory_mb"]\n'
    path.write_text(path.read_text().replace("memory_mb = 512\n", accepting))
    sandbox.check_bounded(no_cgroups, tconfig.load(path).bots)
    if os.getuid() == 0:  # processes: bound by RLIMIT_NPROC under a uid of its own, not for a bot that runs as root
        assert sandbox.unbounded(no_cgroups) == {"memory_mb": "no memory cgroup this runner may make (cgroup v1, "
                                                              "as root)"}
        assert "processes" in sandbox.unbounded(sandbox.Sandbox("none", cgroups=False))
    path.write_text(path.read_text().replace('["memory_mb"]', '["cpu_seconds"]'))
    with pytest.raises(ConfigError, match=r"limits.accept_per_process must be a list of 'memory_mb', 'processes'"):
        tconfig.load(path)
