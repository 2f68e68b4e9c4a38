"""``referee serve``: the standalone server, driven from outside with RunMatch."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time

import grpc
import pytest
from harness import PROTO_BOT, ROOT, run_cli, write_tournament

from referee import records
from referee.results.store import Store
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

pytestmark = pytest.mark.e2e


def test_serve_logs_sessions_and_outcomes_and_runs_matches(tmp_path):
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('b = "two"\n')
    log = open(tmp_path / "serve.log", "w+")
    server = subprocess.Popen([sys.executable, "-m", "referee", "serve", "--port", "0", "--token", "a=one",
                               "--tokens-file", str(tokens), "--admin-token", "adm"],
                              stderr=log, stdout=log)
    bots = []
    try:
        address = None
        for _ in range(200):
            found = re.search(r"listening on (\S+)", (tmp_path / "serve.log").read_text())
            if found:
                address = found.group(1)
                break
            time.sleep(0.05)
        assert address, (tmp_path / "serve.log").read_text()
        bots = [subprocess.Popen([sys.executable, str(PROTO_BOT), "--address", address, "--name", name, "--token", tok])
                for name, tok in (("a", "one"), ("b", "two"))]
        with grpc.insecure_channel(address) as channel:
            response = pb_grpc.RefereeStub(channel).RunMatch(
                pb.RunMatchRequest(admin_token="adm", game="aegis", lineup=["a", "b"], seed=9), timeout=60)
        results = json.loads(response.results_json)
        assert records.replay(json.loads(response.record_json)).results["scores"] == results["scores"]
    finally:
        for p in bots + [server]:
            p.terminate()
            p.wait(10)
    text = (tmp_path / "serve.log").read_text()
    assert "bot 'a' connected" in text and "bot 'b' connected" in text
    assert re.search(r"game \S+ over: scores \[\d+, \d+\]", text), text


def _serve(tmp_path, *args: str):
    """``referee serve`` on a free port; returns the process, its address and its log's path."""
    log_path = tmp_path / "serve.log"
    server = subprocess.Popen([sys.executable, "-m", "referee", "serve", "--port", "0", *args],
                              stderr=open(log_path, "w"), stdout=subprocess.DEVNULL)
    for _ in range(400):
        found = re.search(r"listening on (\S+)", log_path.read_text())
        if found:
            return server, found.group(1), log_path
        time.sleep(0.05)
    server.kill()
    raise AssertionError(log_path.read_text())


REMOTE_BOTS = """
[clock]
decision_ms = 2000
bank_ms = 10000

[[bots]]
name = "a"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "{root}"
token = "one"

[[bots]]
name = "b"
command = ["python", "-m", "sample_bots.heuristic"]
cwd = "{root}"
token = "two"
"""


def test_tournaments_one_after_another_and_at_once_share_one_server(tmp_path):
    server, address, _ = _serve(tmp_path, "--token", "a=one", "--token", "b=two", "--admin-token", "adm")
    try:
        files = [write_tournament(tmp_path / f"t{i}.toml", REMOTE_BOTS.format(root=ROOT), game="aegis", deal_sets=2,
                                  seed=5, concurrency=2, output=f"out{i}") for i in range(4)]
        # one after another, then two at once
        first = run_cli("tournament", files[0], "--server", address, "--admin-token", "adm", "--quiet")
        second = run_cli("tournament", files[1], "--server", address, "--admin-token", "adm", "--quiet")
        together = [subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(f), "--server", address,
                                      "--admin-token", "adm", "--quiet"], cwd=ROOT, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) for f in files[2:]]
        at_once = [p.communicate(timeout=300) + (p.returncode,) for p in together]
    finally:
        server.terminate()
        server.wait(10)
    for done in (first, second):
        assert done.returncode == 0, done.stderr
    for _out, err, code in at_once:
        assert code == 0, err
    for i in range(4):
        store = Store(tmp_path / f"out{i}", create=False)
        try:
            rows = list(store.matches())
            assert len(rows) == 4  # 2 deal sets x 2 seatings
            for row in rows:
                assert records.replay(store.record(row.key)).results["scores"] == row.results["scores"]
                # no seat charged: each run is seated on its own bots (NAME#RUN), never on the other
                # run's, which are stopped when that run ends
                assert all(sum(seat.values()) == 0 for seat in row.results["faults"]), row.results
                assert store.record(row.key)["seats"] == list(row.lineup)
        finally:
            store.close()


# --- every failure of `serve` and of `--server`: one line, no traceback, the documented exit code ---------------

def _serve_fails(tmp_path, *args: str, unprivileged: bool = False) -> subprocess.CompletedProcess:
    """``referee serve ARGS``, which must fail at once (``unprivileged``: root without the
    capability to bind a low port; still root, so it reads a checkout in a private directory)."""
    command = [sys.executable, "-m", "referee", "serve", *args]
    if unprivileged:
        command = ["setpriv", "--bounding-set=-net_bind_service", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)


def _taken_port():
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    return taken


SERVE_FAILURES = {
    "port in use": (lambda tmp, port: ["--port", str(port)], "Address already in use"),
    "address not assignable": (lambda tmp, port: ["--host", "192.0.2.1"], "Cannot assign requested address"),
    "unknown host": (lambda tmp, port: ["--host", "no-such-host.invalid"], "cannot resolve 'no-such-host.invalid'"),
    "unix socket in a missing directory": (lambda tmp, port: ["--port", "0", "--unix", str(tmp / "none" / "s")],
                                           "No such file or directory"),
    "unreadable tokens file": (lambda tmp, port: ["--tokens-file", str(tmp)], "--tokens-file"),
    "tokens file not TOML": (lambda tmp, port: ["--tokens-file", str(_file(tmp / "t.toml", "a = \n"))],
                             "Invalid value (at line 1"),
    "a token that is not a string": (lambda tmp, port: ["--tokens-file", str(_file(tmp / "t.toml", "a = 3\n"))],
                                     "the token of a must be a string"),
}


def _file(path, text: str):
    path.write_text(text)
    return path


def _one_error_line(done: subprocess.CompletedProcess, code: int, words: str) -> None:
    """Exit ``code``, no traceback, and one line ``Error: ...`` naming ``words`` (besides it, a command
    may have said what it was doing: a tournament's header, the server's log)."""
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and words in errors[0], done.stderr


@pytest.mark.parametrize("case", sorted(SERVE_FAILURES))
def test_each_failure_of_serve_is_one_line_and_exit_2(tmp_path, case):
    args, words = SERVE_FAILURES[case]
    with _taken_port() as taken:
        done = _serve_fails(tmp_path, *args(tmp_path, taken.getsockname()[1]))
    _one_error_line(done, 2, words)
    # nothing else but the server's own log lines (dated): not grpc's
    assert all(line.startswith("Error:") or re.match(r"\d{4}-\d\d-\d\d ", line)
               for line in done.stderr.splitlines()), done.stderr


def test_a_low_port_without_the_privilege_is_one_line_and_exit_2(tmp_path):
    import os
    import shutil

    if os.geteuid() == 0:  # root may bind it: try without the capability to
        if shutil.which("setpriv") is None:
            pytest.skip("running as root and setpriv is not there to drop the privilege")
        done = _serve_fails(tmp_path, "--port", "80", "--token", "a=b", unprivileged=True)
    else:
        done = _serve_fails(tmp_path, "--port", "80", "--token", "a=b")
    _one_error_line(done, 2, "Permission denied")


class _Refusing(pb_grpc.RefereeServicer):
    """A referee that refuses every match, as one that does not know the game would."""

    def RunMatch(self, request, context):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "unknown game 'aegis'")


def _remote_command(tmp_path, command: str) -> list[str]:
    """The arguments of ``command`` (tournament, gauntlet, sprt) for a two-bot aegis run."""
    if command == "sprt":
        return ["sprt", "--game", "aegis", "--candidate", "a=python -m sample_bots.random --seed 1",
                "--baseline", "b=python -m sample_bots.heuristic", "--max-units", "2", "--quiet"]
    extra = '\n[gauntlet]\ncandidate = "a"\n' if command == "gauntlet" else ""
    path = write_tournament(tmp_path / f"{command}.toml", extra + REMOTE_BOTS.format(root=ROOT), game="aegis",
                            deal_sets=1, seed=5, concurrency=1, output=str(tmp_path / "out"))
    return [command, str(path), "--quiet"]


REMOTE_FAILURES = {
    "unreachable server": ("nobody", "adm", "cannot reach the referee at"),
    "wrong admin token": ("serve", "nope", "refused the admin token"),
    "refused match": ("refusing", "adm", "refused the match: unknown game 'aegis'"),
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """A ``referee serve`` (admin token "adm"), a referee that refuses every match, and an
    address where nothing listens: their addresses by name."""
    import socket
    from concurrent import futures

    server, address, _ = _serve(tmp_path_factory.mktemp("serve"), "--admin-token", "adm")
    refusing = grpc.server(futures.ThreadPoolExecutor(2))
    pb_grpc.add_RefereeServicer_to_server(_Refusing(), refusing)
    refusing_port = refusing.add_insecure_port("127.0.0.1:0")
    refusing.start()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections to it are refused
    try:
        yield {"serve": address, "refusing": f"127.0.0.1:{refusing_port}",
               "nobody": f"127.0.0.1:{closed.getsockname()[1]}"}
    finally:
        closed.close()
        refusing.stop(0)
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("command", ["tournament", "gauntlet", "sprt"])
@pytest.mark.parametrize("case", sorted(REMOTE_FAILURES))
def test_each_failure_of_server_is_one_line_and_exit_2(tmp_path, servers, command, case):
    where, token, words = REMOTE_FAILURES[case]
    done = run_cli(*_remote_command(tmp_path, command), "--server", servers[where], "--admin-token", token)
    _one_error_line(done, 2, words)


def _stored(out) -> int:
    """How many matches the run has stored so far (0 before its store is there)."""
    try:
        with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_server_dying_mid_run_is_one_line_exit_2_and_keeps_the_matches_played(tmp_path):
    server, address, _ = _serve(tmp_path, "--admin-token", "adm")
    path = write_tournament(tmp_path / "t.toml", REMOTE_BOTS.format(root=ROOT), game="aegis", deal_sets=20, seed=5,
                            concurrency=1, output=str(tmp_path / "out"))
    run = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(path), "--server", address,
                            "--admin-token", "adm", "--quiet"], cwd=ROOT, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(1200):  # the first match is stored: the server dies (its "over" line comes before)
            if _stored(tmp_path / "out") or run.poll() is not None:
                break
            time.sleep(0.05)
    finally:
        server.kill()
        server.wait(10)
    out, err = run.communicate(timeout=120)
    _one_error_line(subprocess.CompletedProcess(run.args, run.returncode, out, err), 2,
                    f"cannot reach the referee at {address}")
    store = Store(tmp_path / "out", create=False)
    try:
        played = list(store.matches())
    finally:
        store.close()
    assert 1 <= len(played) < 40
