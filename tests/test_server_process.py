"""``referee server`` as a real process, with ``referee submit`` from bots' directories: a version
whose validation fails makes submit exit 1 with the log, a good one exits 0; the coordinator killed
with SIGKILL mid-ladder and started again loses no stored result, counts none twice, and the ladder
resumes."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import PASSWORD, competition_file, require_server

require_server()

import httpx  # noqa: E402

from referee import records  # noqa: E402

pytestmark = pytest.mark.e2e

COMPETITION = competition_file("Process ladder")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, tmp_path: Path) -> None:
        self.file = tmp_path / "competition.toml"
        self.file.write_text(COMPETITION)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *extra: str, env: dict[str, str] | None = None) -> str:
        out = open(self.log, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "referee", "server", str(self.file), "--port",
                                         str(self.port), *extra], stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/", timeout=2).status_code == 200:
                    return self.log.read_text()
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, self.log.read_text()
            time.sleep(0.2)
        raise AssertionError("the server did not answer: " + self.log.read_text())

    def kill(self, sig: int = signal.SIGKILL) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, sig)
        self.process.wait(timeout=60)

    def ladder(self) -> Path:
        return self.file.parent / "state" / "ladder" / "results.sqlite"


def stored(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return list(conn.execute("SELECT key, record FROM matches"))


def register(url: str, invite: str, name: str) -> str:
    client = httpx.Client(base_url=url)
    page = client.get("/register").text
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    reply = client.post("/register", data={"csrf": token, "invite": invite, "name": name, "password": PASSWORD})
    assert reply.status_code == 200, reply.text[:500]
    return re.search(r"keep it secret\): ([A-Za-z0-9_\-]+)", reply.text).group(1)


def bot_dir(path: Path, body: str) -> Path:
    path.mkdir()
    (path / "bot.toml").write_text('command = ["python", "bot.py"]\n')
    (path / "bot.py").write_text(body)
    return path


def organise(server: Server, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee", "organise", "--server", server.url, "--token", token,
                           *args], capture_output=True, text=True, timeout=120)


def submit(server: Server, token: str, directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee", "submit", str(directory), "--server", server.url,
                           "--token", token, "--timeout", "300"], capture_output=True, text=True, timeout=400)


@pytest.fixture
def server(tmp_path: Path):
    s = Server(tmp_path)
    yield s
    if s.process is not None and s.process.poll() is None:
        s.kill()


def test_submit_and_a_sigkill_mid_ladder(server: Server, tmp_path: Path) -> None:
    printed = server.start("--open", "--invites", "2")
    invites = re.findall(r"invite code: (\S+)", printed)
    assert len(invites) == 2
    alice, bob = register(server.url, invites[0], "alice"), register(server.url, invites[1], "bob")
    good = bot_dir(tmp_path / "good", "from sample_bots.random import main\nmain()\n")
    crash = bot_dir(tmp_path / "crash", "import sys\nprint('crashing on purpose')\nsys.exit(9)\n")

    failed = submit(server, bob, crash)
    assert failed.returncode == 1, failed.stderr
    assert "validation failed" in failed.stderr and "--- validation log ---" in failed.stdout
    bad_token = submit(server, "not-a-token", good)
    assert bad_token.returncode == 2 and "no valid API token" in bad_token.stderr

    for token in (alice, bob):
        ok = submit(server, token, good)
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert "accepted" in ok.stderr

    deadline = time.monotonic() + 300
    while len(stored(server.ladder())) < 6 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(stored(server.ladder())) >= 6, server.log.read_text()
    server.kill(signal.SIGKILL)  # mid-ladder: a round is being played
    before = dict(stored(server.ladder()))

    server.start()
    deadline = time.monotonic() + 300
    while len(stored(server.ladder())) < len(before) + 4 and time.monotonic() < deadline:
        time.sleep(0.5)
    organiser = re.search(r"token = (\S+)", (server.file.parent / "state" / "server" / "organiser.txt").read_text())
    code = organise(server, organiser.group(1), "invite", "--team", "acme")
    assert code.returncode == 0 and re.fullmatch(r"[A-Z0-9]{4}(-[A-Z0-9]{4})+\n", code.stdout), code.stderr
    assert organise(server, alice, "invite").returncode == 2  # an entrant's token is not the organiser's
    moved = organise(server, organiser.group(1), "move", "frozen")
    assert moved.returncode == 0 and moved.stdout == "the competition is frozen\n", moved.stderr
    back = organise(server, organiser.group(1), "move", "open")
    assert back.returncode == 2 and "only finals follows" in back.stderr, back.stderr
    server.kill(signal.SIGTERM)
    after = stored(server.ladder())
    keys = [k for k, _ in after]
    assert len(keys) == len(set(keys))  # none counted twice
    assert set(before) <= set(keys)  # none lost
    assert len(keys) >= len(before) + 4, server.log.read_text()  # the ladder resumed
    with sqlite3.connect(server.ladder()) as conn:
        seats = conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    assert seats == 2 * len(keys)
    for key, record in after:
        assert records.replay(json.loads(record)).finished, key
