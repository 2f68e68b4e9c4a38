"""Hostile entrants against the sandbox (issue 14; docs/security.md).

Each test is one attack, by a real bot process on the bot kit
(tests/bots/hostile/attacker.py), in a real tournament of three bots: the
attacker, a victim and a third, on a few deal sets of Aegis. The attacker plays
the first legal action throughout, which is also what the referee plays for a
seat that faults or has no bot: so a CONTROL run, in which the same attacker
plays honestly, must give the victim exactly the same results (its rows in the
store: scores, placings, faults per match), whatever the attack did to the
attacker itself. On top of that, each test checks the attack's own evidence:
what the attacker reports it achieved (``ATTACK {json}`` lines in its log), and
what the test sees from outside (a canary port, a port the attacker listens
on, processes left behind).

The sandbox mode is ``bwrap`` (the test skips with one line where bubblewrap
does not work; fails there under REFEREE_REQUIRE_SANDBOX=1).
``REFEREE_ATTACK_SANDBOX=none`` runs the same tests without the sandbox, to see
the assertions catch the attacks that then succeed (most of these tests fail
then, by design: docs/security.md lists which).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import ROOT, require_cgroups, require_sandbox, write_tournament

from referee.hosting import sandbox
from referee.results.store import Store

pytestmark = pytest.mark.e2e

SANDBOX = os.environ.get("REFEREE_ATTACK_SANDBOX", "bwrap")
HOSTILE = ROOT / "tests" / "bots" / "hostile"
ADMIN_TOKEN = "admin-" + uuid.uuid4().hex  # in the runner's environment, as with `--server`
SEED = 731_902                           # the master seed: no attacker may learn it
DEAL_SETS = 2
VICTIM_MATCHES = 2 * DEAL_SETS * 2       # two opponents, each deal set twice (seats swapped)
PROCESSES, FILE_MB, MEMORY_MB = 64, 64, 1536  # the attacker's limits in the resource attacks
VICTIM_LATE = 1.5  # seconds: when the victim starts, in the attack on its start
BOOK, BOOK_TEXT = "book.txt", "the victim's opening book: lead the ace of spades\n"  # in its directory
# Without the sandbox nothing stops a fork bomb: on a shared machine that run forks 1,000, not 10,000
FORKS = 1_000 if SANDBOX == "none" else 10_000
# a runner that sees no cgroup hierarchy: a tmpfs over it, in a mount namespace of its own
HIDE_CGROUPS = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                'mount -t tmpfs -o size=64k referee-no-cgroups /sys/fs/cgroup && exec "$@"', "hide-cgroups"]


@pytest.fixture(autouse=True)
def sandbox_works():
    if SANDBOX != "none":
        require_sandbox()


@dataclass
class Run:
    """One tournament, finished: the runner's exit and output, the attacker's log and
    reports, the victim's results, the launched bots' status, what was left running."""

    directory: Path
    returncode: int
    stdout: str
    stderr: str
    log: str
    victim: dict
    launcher: dict
    sandbox: str
    isolation: str
    leftovers: list[str]

    @property
    def reports(self) -> list[dict]:
        return [json.loads(line.split("ATTACK ", 1)[1]) for line in self.log.splitlines() if "ATTACK {" in line]

    def of(self, attack: str) -> list[dict]:
        return [r for r in self.reports if r["attack"] == attack]

    def ran(self, attack: str) -> list[dict]:
        """The reports of an attack, which must have run (else the test proves nothing)."""
        found = self.of(attack)
        crashed = self.of("crashed")
        assert found, f"the attack {attack!r} did not report (crashed: {crashed}); log:\n{self.log[-3000:]}"
        return found


def marked(mark: str) -> list[int]:
    """Processes whose command line carries the mark (what an attacker run left behind)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and proc.name != str(os.getpid()):
            try:
                if mark.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def tournament(tmp: Path, attack: list[str], attacker_limits: dict | None = None,
               during: Callable[[subprocess.Popen, Path], None] | None = None, victim_late: float = 0,
               isolation: str = "tournament", clock: tuple[int, int] = (5000, 30000),
               hide_cgroups: bool = False, accept: tuple[str, ...] = ()) -> Run:
    """``referee tournament`` of attacker (running ``attack``: its arguments), victim and third,
    run from the tournament's directory with only PATH, HOME, LANG and the admin token in its
    environment. The layout is the plainest one, and the worst for the wall: the attacker's
    code lies in the tournament's directory, its ``cwd`` by default, beside the tournament
    file and the output directory; the other bots' directories are under it. ``victim_late``:
    the victim starts that many seconds after the others, and gives up after 2 s without
    the referee (the launcher restarts it). ``isolation``: the tournament's; ``clock``: its
    decision and bank times in ms. ``hide_cgroups``: the runner sees no cgroup hierarchy (a
    tmpfs over /sys/fs/cgroup in a private mount namespace, as root; a user other than root
    cannot make groups anyway), as on a cgroup-v2 host or for a runner that is not root; ``accept``:
    the whole-bot limits the file accepts per process there (``[limits] accept_per_process``)."""
    if SANDBOX != "none":  # here too: the controls are fixtures of a wider scope than sandbox_works
        require_sandbox()
    mark = uuid.uuid4().hex[:20]  # not 32 hex digits: it would look like a token
    tmp.mkdir(parents=True, exist_ok=True)
    for name in ("victim", "third", "home"):
        (tmp / name).mkdir(exist_ok=True)
    (tmp / "victim" / BOOK).write_text(BOOK_TEXT)
    for code in HOSTILE.glob("*.py"):
        shutil.copy(code, tmp)
    out = tmp / "out"
    path = tmp / "t.toml"
    hints = [out, path, tmp / "victim" / BOOK, tmp / "victim"]  # where a reader of the docs would look
    command = ["python", "attacker.py", "--mark", mark, "--victim", "victim", "--victim", "third",
               *(arg for hint in hints for arg in ("--hint", str(hint))), *attack]
    extra = "".join(f"{key} = {value}\n" for key, value in (attacker_limits or {}).items())
    victim = ["python", "-m", "sample_bots.random", "--seed", "1"]
    if victim_late:
        script = f'sleep {victim_late}; exec {sys.executable} -m sample_bots.random --seed 1 --retry-for 2 "$@"'
        victim = ["sh", "-c", script, "victim"]
    tables = f"""
[clock]
decision_ms = {clock[0]}
bank_ms = {clock[1]}

[limits]
sandbox = "{SANDBOX}"
{f"accept_per_process = {json.dumps(list(accept))}" if accept else ""}

[[bots]]
name = "attacker"
command = {json.dumps(command)}
max_restarts = 50
{extra}
[[bots]]
name = "victim"
command = {json.dumps(victim)}
cwd = "victim"

[[bots]]
name = "third"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
cwd = "third"
"""
    write_tournament(path, tables, game="aegis", deal_sets=DEAL_SETS, seed=SEED, concurrency=2, output="out",
                     extra=f'isolation = "{isolation}"')
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp / "home"), "LANG": "C.UTF-8",
           "REFEREE_ADMIN_TOKEN": ADMIN_TOKEN}
    runner = [sys.executable, "-m", "referee", "tournament", str(path), "--quiet", "--bootstrap", "20"]
    if hide_cgroups and os.getuid() == 0:
        runner = [*HIDE_CGROUPS, *runner]
    proc = subprocess.Popen(runner, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if during is not None:
            during(proc, out)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    time.sleep(0.5)  # a process being stopped: its last moments
    leftovers = []
    for pid in marked(mark):
        try:
            command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            leftovers.append(f"{pid} {command[:200]}")
            os.kill(pid, 9)  # the test cleans up what the sandbox failed to
        except OSError:
            pass
    log_path = out / "logs" / "attacker.log"
    return Run(tmp, proc.returncode, stdout, stderr, log_path.read_text(errors="replace") if log_path.exists() else "",
               victim_results(out), json.loads(meta(out, "launcher") or "{}"), meta(out, "sandbox") or "", isolation,
               leftovers)


def victim_results(out: Path) -> dict:
    """The victim's rows in the store: per match, from the match's results and from the seats table."""
    if not (out / "results.sqlite").exists():
        return {}
    store = Store(out, create=False)
    try:
        rows = {}
        for row in store.matches():
            if "victim" in row.lineup:
                seat = row.lineup.index("victim")
                rows[row.key] = (seat, row.scores[seat], row.placing[seat], dict(row.faults[seat]))
    finally:
        store.close()
    db = sqlite3.connect(out / "results.sqlite")
    try:
        seats = db.execute("SELECT match_key, seat, score, place FROM seats WHERE bot = 'victim'").fetchall()
    finally:
        db.close()
    return {"matches": rows, "seats": sorted(seats)}


def meta(out: Path, key: str) -> str | None:
    """What the store says of the run: ``launcher`` (JSON: the bots' starts and deaths), ``sandbox``."""
    if not (out / "results.sqlite").exists():
        return None
    store = Store(out, create=False)
    try:
        return store.meta(key)
    finally:
        store.close()


@pytest.fixture(scope="module")
def control(tmp_path_factory) -> Run:
    """The attacker plays honestly: the victim's results as they must be."""
    run = tournament(tmp_path_factory.mktemp("control"), ["--honest"])
    assert run.returncode == 0, run.stderr
    assert run.reports == []
    assert len(run.victim["matches"]) == VICTIM_MATCHES, run.stdout
    return run


def assert_victim_unharmed(run: Run, control: Run, same_limits: bool = True) -> None:
    """The tournament finished, in the sandbox asked for, and the victim's results are exactly
    the control's: every match played, the same scores and placings, no fault; its process
    never died (with isolation = "match": one process per match, none died). ``same_limits``:
    the limits held as in the control (False: a run without cgroups, against a control with)."""
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.sandbox.startswith(f"sandbox: {SANDBOX}"), run.sandbox
    assert run.sandbox == control.sandbox or not same_limits, run.sandbox
    assert run.victim == control.victim, "the victim's results differ from the control run's"
    assert all(sum(faults.values()) == 0 for *_, faults in run.victim["matches"].values())
    victim = run.launcher.get("victim", {})
    # with "match": a new process per match, and the start-up check's trial process
    starts = 1 if run.isolation == "tournament" else VICTIM_MATCHES + 1
    assert victim.get("starts") == starts and not victim.get("exits") and not victim.get("dead"), victim


# --- secrets ----------------------------------------------------------------------------------


def test_reading_command_lines_environments_and_memory_finds_no_token(tmp_path, control):
    run = tournament(tmp_path, ["--attack", "tokens"])
    for report in run.ran("tokens"):
        assert report["accepted"] == [], "tokens found in other processes were accepted by the referee"
        assert "REFEREE_ADMIN_TOKEN" not in report["own_environ"]
        assert not [f for f in report["findings"] if f.get("value") == ADMIN_TOKEN], "the admin token was found"
        assert not [f for f in report["findings"] if f["where"].endswith("/cmdline")], report["findings"]
    assert ADMIN_TOKEN not in run.log
    assert_victim_unharmed(run, control)


def test_a_session_under_the_victims_name_is_refused(tmp_path, control):
    run = tournament(tmp_path, ["--attack", "steal"])
    for report in run.ran("steal"):
        assert report["tried"] >= 9 and report["accepted"] == [], report
    assert_victim_unharmed(run, control)


def test_the_local_referee_lets_no_bot_list_or_watch_games(tmp_path, control):
    """Its own match's record would give away the cards of the seat-swapped twin: the in-process
    referee of a local tournament answers no ListGames and no Spectate, token or not
    (tests/test_records_held_attacks.py: a `referee serve` with public spectators, whose records are held)."""
    run = tournament(tmp_path, ["--attack", "spectate"])
    for report in run.ran("spectate"):
        assert report["listed"] == [] and report["records"] == {}, report
        assert set(report["refused"].values()) == {"UNAUTHENTICATED", "PERMISSION_DENIED"}, report["refused"]
    assert run.of("spectate-held") == []
    assert_victim_unharmed(run, control)


# --- the output directory and the tournament file ---------------------------------------------


def test_the_store_the_tournament_file_and_other_bots_files_cannot_be_opened(tmp_path, control):
    run = tournament(tmp_path, ["--attack", "files"])
    reports = run.ran("files")
    store, toml = str(tmp_path / "out" / "results.sqlite"), str(tmp_path / "t.toml")
    book = str(tmp_path / "victim" / BOOK)
    for report in reports:
        assert store in report["stores"] and toml in report["files"] and book in report["foreign"] \
            and str(ROOT / "referee") in report["shared"], "the attacker did not try the real paths"
        assert report["succeeded"] == [], report["succeeded"]
        assert not any(r.get("seed") for r in report["files"].values())
        assert not any(r.get("forged") for r in report["stores"].values())
    assert str(SEED) not in json.dumps(reports)
    assert (tmp_path / "victim" / BOOK).read_text() == BOOK_TEXT
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == [BOOK]
    assert_victim_unharmed(run, control)


# --- other bots' processes --------------------------------------------------------------------


def test_killing_the_other_bots_fails(tmp_path, control):
    run = tournament(tmp_path, ["--attack", "kill"])
    reports = run.ran("kill")
    assert sum(r["killed"] for r in reports) == 0, [r["outcomes"] for r in reports if r["killed"]]
    assert_victim_unharmed(run, control)


# --- the network ------------------------------------------------------------------------------


class Canary:
    """Sockets the test listens on, which no bot should reach: a TCP port on 127.0.0.1, the
    same port in UDP, and an abstract Unix socket (which belongs to the host's network
    namespace); what reached them."""

    def __init__(self):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.tcp.getsockname()[1]))
        self.abstract_name = f"referee-canary-{uuid.uuid4().hex[:12]}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract_name)
        self.unix.listen(4)
        self.reached: list[bytes] = []
        self.stop = threading.Event()
        self.watchers = [threading.Thread(target=self._watch, args=(s,)) for s in (self.tcp, self.udp, self.unix)]

    def __enter__(self):
        for sock in (self.tcp, self.udp, self.unix):
            sock.settimeout(0.2)
        for watcher in self.watchers:
            watcher.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for watcher in self.watchers:
            watcher.join()
        for sock in (self.tcp, self.udp, self.unix):
            sock.close()

    def _watch(self, sock: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                if sock.type == socket.SOCK_DGRAM:
                    self.reached.append(sock.recv(100))
                    continue
                conn, _ = sock.accept()
                self.reached.append(conn.recv(100))
                conn.close()
            except OSError:
                pass

    def args(self) -> list[str]:
        return ["--canary-port", str(self.tcp.getsockname()[1]), "--canary-abstract", self.abstract_name]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_connection_out_and_no_listening_on_the_host(tmp_path, control):
    listen_port = free_port()
    knocked = []

    def knock(proc, out):  # while the tournament runs: is the attacker's port open on the host?
        while proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", listen_port), timeout=0.2):
                    knocked.append(listen_port)
            except OSError:
                pass
            time.sleep(0.1)
    with Canary() as canary:
        run = tournament(tmp_path, ["--attack", "net", "--listen-port", str(listen_port), *canary.args()],
                         during=knock)
    for report in run.ran("net"):
        assert report["connected"] == [], report["outcomes"]
    assert canary.reached == [], "the attacker reached the test's canary sockets"
    assert knocked == [] and run.of("net-accept") == [], "the attacker's port was reachable from the host"
    assert_victim_unharmed(run, control)


# --- resources: limits charged to the attacker ------------------------------------------------


def test_a_fork_bomb_hits_the_process_limit(tmp_path, control):
    require_cgroups()  # without, the limit holds per process only (RLIMIT_NPROC, which root ignores)
    run = tournament(tmp_path, ["--attack", "fork", "--forks", str(FORKS)], {"processes": PROCESSES})
    run.ran("fork-start")
    # the attacker may die of the cap before it can report (its kit cannot start a thread): the
    # charge below says the limit held either way; a report, if any, must show it held
    for bomb in run.of("fork"):
        assert bomb["forked"] < PROCESSES and "EAGAIN" in (bomb["error"] or ""), bomb
    assert f"reached its limit of {PROCESSES} processes" in run.log  # charged to it, in its log
    assert run.leftovers == []
    assert_victim_unharmed(run, control)


@pytest.mark.parametrize("signals", ["python", "native"])
def test_writing_a_gigabyte_hits_the_file_size_limit(tmp_path, control, signals):
    """One file as large as it goes, then more files in every writable place: at most
    file_mb in its scratch (/tmp) and as much in /dev/shm, nothing elsewhere. A Python bot
    ignores SIGXFSZ (Python does): its write fails with EFBIG. A native program does not:
    SIGXFSZ kills it, its death charged to it under the standings."""
    args = ["--attack", "write", "--write-dir", str(tmp_path / "home")]
    args += ["--native-signals"] if signals == "native" else []
    run = tournament(tmp_path, args, {"file_mb": FILE_MB})
    run.ran("write-start")
    for write in run.of("write"):  # stopped by a limit: file_mb in its scratch, as much in /dev/shm
        assert set(write["places"]) <= {"/tmp", "/dev/shm"}, write["places"]
        assert all(mb <= FILE_MB for mb in write["places"].values()), write["places"]
        assert any(e.startswith(("EFBIG", "ENOSPC")) for e in write["errors"].values()), write["errors"]
    if signals == "python":
        assert run.of("write"), run.log[-2000:]
    else:
        assert "killed by SIGXFSZ" in run.log and not run.of("write"), run.log[-2000:]
        assert "bot attacker: died" in run.stdout and "SIGXFSZ" in run.stdout, run.stdout
    assert_victim_unharmed(run, control)


def test_memory_across_children_hits_the_whole_bot_limit(tmp_path, control):
    require_cgroups()  # without, memory_mb holds per process only: that is what this attack beats
    run = tournament(tmp_path, ["--attack", "memory", "--children", "4", "--child-mb", str(MEMORY_MB * 4 // 10)],
                     {"memory_mb": MEMORY_MB, "processes": PROCESSES})
    run.ran("memory-start")
    for memory in run.of("memory"):
        assert memory["held_mb"] < MEMORY_MB, memory
    assert run.of("memory") or "killed by SIGKILL" in run.log, run.log[-2000:]
    assert f"over its memory limit of {MEMORY_MB} MB" in run.log  # charged to it, in its log
    assert run.leftovers == []
    assert_victim_unharmed(run, control)


# --- the referee's socket, shared by every bot -----------------------------------------------


@pytest.fixture(scope="module")
def control_late(tmp_path_factory) -> Run:
    """The control for an attack on the victim's start: the victim starts late, the attacker plays honestly."""
    run = tournament(tmp_path_factory.mktemp("control-late"), ["--honest"], victim_late=VICTIM_LATE)
    assert run.returncode == 0, run.stderr
    assert len(run.victim["matches"]) == VICTIM_MATCHES, run.stdout
    return run


def test_a_connection_flood_does_not_lock_the_victim_out(tmp_path, control_late):
    """40 processes open 1,000 silent connections each to the referee (the runner may hold
    20,000 descriptors here) before the victim starts: the victim must still get in and play."""
    run = tournament(tmp_path, ["--attack", "connections", "--children", "40", "--forks", "40000"],
                     victim_late=VICTIM_LATE)
    run.ran("connections")
    assert_victim_unharmed(run, control_late)


# --- no orphans -------------------------------------------------------------------------------


@pytest.mark.parametrize("isolation", ["tournament", "match"])
def test_a_double_forked_setsid_child_is_gone_after_the_run(tmp_path, control, isolation):
    """With isolation = "match" the attacker is a new process in every match, and leaves a
    child in every one: all are gone."""
    run = tournament(tmp_path, ["--attack", "orphan"], isolation=isolation)
    # with "match", one per match, and perhaps one of the start-up check's trial process (stopped once connected)
    expected = {1} if isolation == "tournament" else {2 * DEAL_SETS * 2, 2 * DEAL_SETS * 2 + 1}
    assert len(run.ran("orphan")) in expected, run.of("orphan")
    assert run.leftovers == [], "processes the attacker left behind survived the tournament"
    assert_victim_unharmed(run, control)


# --- writable space and CPU (issue 24, attacks 6 and 7) -----------------------------------------

FILL_MB = 64  # the attacker's file_mb in the writing attack (its memory_mb: MEMORY_MB)
SPINNERS = 240


def attacker_pids(tmp: Path) -> list[int]:
    """The attacker's processes of the tournament in ``tmp``, as the host sees them (not bubblewrap's,
    which may be setting the sandbox up)."""
    found = []
    for pid in marked(str(tmp / "out")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"attacker.py" in cmdline and not cmdline.startswith(b"bwrap"):
                found.append(pid)
        except OSError:
            pass
    return found


def sandbox_mounts(pid: int) -> dict[str, tuple[str, bool, str]]:
    """The mounts a sandboxed process sees ({mount point: (type, writable, options)}), from its
    /proc/PID/mountinfo: the kernel's account, not the process's. Empty for a process that is
    not in a sandbox (its root is no tmpfs: bubblewrap's helper outside, or the prelude)."""
    found = {}
    try:
        lines = Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        head, tail = line.split(" - ", 1)
        fields, (fstype, _, options) = head.split(), tail.split(" ", 2)
        found[fields[4]] = (fstype, "rw" in fields[5].split(","), options)
    return found if found.get("/", ("",))[0] == "tmpfs" else {}

def test_without_cgroups_what_a_bot_writes_and_holds_stays_within_its_budget(tmp_path, control):
    """Attack 6: no cgroup (hidden), file_mb = 64 (and memory_mb = 1536). The attacker writes
    files of 64 MB wherever it can (the sandbox's root and new directories in it included),
    then empty files with long names, then SysV shared memory and memfd files, and holds it
    all. It holds at most the budget of docs/tournaments.md; from outside, every writable
    mount of its sandbox is a tmpfs with a size and an inode count within it."""
    mounts: dict[str, tuple[str, bool, str]] = {}

    def look(proc, out):
        while proc.poll() is None:
            for pid in attacker_pids(tmp_path):
                mounts.update(sandbox_mounts(pid))
            time.sleep(0.2)
    run = tournament(tmp_path, ["--attack", "fill", "--file-mb", str(FILL_MB), "--write-mb", "1024",
                                "--files", "100000"], {"file_mb": FILL_MB, "memory_mb": MEMORY_MB},
                     during=look, hide_cgroups=True, accept=("memory_mb",))
    assert "memory per process" in run.sandbox and "CPU: no share" in run.sandbox, run.sandbox
    budget = sandbox.Writable.of(FILL_MB)
    for fill in run.ran("fill"):
        assert fill["held_mb"] <= 2 * FILL_MB, fill
        assert all(_under(p, "/tmp", "/dev/shm") for p in [*fill["files_mb"], *fill["inodes"]]), fill
        assert sum(fill["inodes"].values()) <= 2 * budget.inodes, fill
    writable = {point: (fstype, options) for point, (fstype, rw, options) in mounts.items()
                if rw and fstype not in ("proc", "devtmpfs", "devpts")}  # /dev/null, /dev/zero...; /dev/pts
    assert "/" in mounts and set(writable) == {"/tmp", "/dev/shm"}, mounts
    for fstype, options in writable.values():
        sizes = dict(o.partition("=")[::2] for o in options.split(","))
        assert fstype == "tmpfs" and int(sizes["size"].rstrip("k")) << 10 == budget.mb << 20, writable
        assert int(sizes["nr_inodes"]) == budget.inodes, writable
    assert_victim_unharmed(run, control, same_limits=False)


WHOLE_PROCESSES, WHOLE_MEMORY_MB = 256, 512  # attack 6 of issue 35


def test_without_cgroups_the_whole_bot_limits_hold_or_the_run_is_refused(tmp_path, control):
    """Attack 6 (issue 35): a runner that is root, with no cgroup (hidden, as on a cgroup-v2 host
    or in a container), and ``processes = 256``, ``memory_mb = 512`` in the file. Before, both
    held per process only, silently: 300 of 300 forks, 2,400 MB held. Now the run that cannot
    hold memory_mb for the whole bot says so in one line and plays nothing; the organiser who
    accepts it per process (``accept_per_process = ["memory_mb"]``) gets what the runner can hold:
    the bot runs under a uid of its own, so RLIMIT_NPROC stops its forks at 256, and no process
    of it holds more than 512 MB."""
    limits = {"processes": WHOLE_PROCESSES, "memory_mb": WHOLE_MEMORY_MB}
    refused = tournament(tmp_path / "refused", ["--attack", "fork", "--forks", "300"], limits, hide_cgroups=True)
    assert refused.returncode == 2, refused.stderr[-2000:]
    errors = [line for line in refused.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "memory_mb = 512 (bot attacker) cannot hold for the whole bot here" in errors[0] \
        and 'accept_per_process = ["memory_mb"]' in errors[0] and "processes" not in errors[0], errors
    assert refused.victim.get("matches", {}) == {} and refused.log == "", "nothing was to be played"
    run = tournament(tmp_path / "accepted", ["--attack", "fork", "--forks", "300", "--attack", "memory", "--children",
                                             "3", "--child-mb", str(WHOLE_MEMORY_MB + 88)], limits,
                     hide_cgroups=True, accept=("memory_mb",))
    assert "memory per process" in run.sandbox and "processes per bot (RLIMIT_NPROC, a uid of its own)" in run.sandbox
    forks = run.ran("fork")
    assert all(f["forked"] < WHOLE_PROCESSES and "EAGAIN" in (f["error"] or "") for f in forks), forks
    for memory in run.ran("memory"):  # each child past 512 MB: refused its block, per process
        assert memory["held_mb"] == 0 and set(memory["outcomes"]) == {"MemoryError"}, memory
    assert run.leftovers == []
    assert_victim_unharmed(run, control, same_limits=False)


def test_spinning_processes_do_not_starve_the_victim(tmp_path, control):
    """Attack 7: 240 processes, each in a session of its own, spin from the attacker's first
    session to its end, on a clock of 200 ms per decision and a 1 s bank. Each bot's process
    tree has its CPU share (cgroup cpu): the victim's decisions are no slower than its bank
    allows (no fault), its results equal the control's. From outside: the spinners ran."""
    require_cgroups(cpu=True)
    spinning = []

    def count(proc, out):
        while proc.poll() is None:
            spinning.append(sum(_running(pid) for pid in attacker_pids(tmp_path)))
            time.sleep(0.2)
    run = tournament(tmp_path, ["--attack", "spin", "--children", str(SPINNERS)], {"processes": SPINNERS + 60},
                     during=count, clock=(200, 1000))
    assert [r["started"] for r in run.ran("spin")] == [SPINNERS], run.of("spin")
    assert max(spinning) >= SPINNERS // 2, spinning  # seen running from outside
    assert "CPU: a share per seat" in run.sandbox, run.sandbox
    assert run.leftovers == []
    assert_victim_unharmed(run, control)


def _under(path: str, *places: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in places)


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "R"
    except OSError:
        return False


# --- the referee's work: stray replies (issue 35, item 7) -------------------------------------

STRAY_SESSIONS = 8
ALLOWANCE = 16  # the messages that answer no request a session may send (docs/protocol.md §2)


def attacker_faults(out: Path) -> list[dict]:
    """The attacker's faults, as every match's record keeps them (kind, detail...)."""
    store = Store(out, create=False)
    try:
        faults = []
        for row in store.matches():
            if "attacker" in row.lineup:
                seats = {n for n, name in enumerate(row.lineup) if name == "attacker"}
                faults += [f for f in store.record(row.key)["meta"]["faults"] if f["seat"] in seats]
        return faults
    finally:
        store.close()


def most_open_at_once(reports: list[dict]) -> int:
    """The most flooding sessions open at the same time, from the attacker's reports in their order:
    each Welcome opens one, each end closes one (the ends of those the runner closes at the end of the
    run may go unreported: the count is then an upper bound)."""
    open_, most = 0, 0
    for r in reports:
        if r["attack"] == "strays-open" and r["kind"] == "welcome":
            open_ += 1
        elif r["attack"] == "strays" and not r["refusal"]:
            open_ -= 1
        most = max(most, open_)
    return most


def test_stray_replies_cost_the_flooder_its_session_and_sessions_beyond_its_seats_are_refused(tmp_path, control):
    """Issue 35, item 7. The attacker is given 2 seats at once (two matches); its own session says it
    plays 1, leaving room for one session of its own. From its Welcome it opens 8 sessions more at a
    time, again and again: each, once it holds a seat, answers its requests and sends replies for a
    game nobody plays as fast as its stream takes them (referee/bench/stray_bots.py). The referee
    lets no more of them in than its seats allow (one beside its own session; two once the runner has
    closed that one at the end): the others wait for a place, then are refused (TOO_MANY_SESSIONS, if
    the run lasts the 10 s they wait). The one that floods is closed past the allowance
    (RESOURCE_EXHAUSTED, with the reason), and the seat it held is a disconnect charged to the
    attacker, with that reason. The victim's results equal the control's."""
    run = tournament(tmp_path, ["--attack", "strays", "--children", str(STRAY_SESSIONS), "--kit-capacity", "1"])
    opened = run.ran("strays-open")
    assert most_open_at_once(run.reports) <= 2, [r for r in run.reports if r["attack"].startswith("strays")][:20]
    refused = [r["text"] for r in opened if r["kind"] == "refusal"]
    assert all(text.startswith("TOO_MANY_SESSIONS: bot 'attacker' plays at most 2 seat(s) at once") for text in refused)
    ended = run.ran("strays")
    reason = f"closed by the referee: {ALLOWANCE + 1} messages that answer no request"
    closed = [r for r in ended if r["status"] == "RESOURCE_EXHAUSTED"]
    assert closed and all(r["details"].startswith(reason) and r["requests"] >= 1 for r in closed), ended
    charged = [f for f in attacker_faults(tmp_path / "out") if f["kind"] == "disconnect"]
    assert charged and all(reason in f["detail"] for f in charged), charged
    assert_victim_unharmed(run, control)
