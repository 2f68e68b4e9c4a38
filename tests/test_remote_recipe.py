"""docs/tournaments.md's recipe for remote bots on ``referee serve``, run as written: the token
file, the server, two bots started by hand, the tournament file of external bots, and the run
against the server. Only the addresses and the output directory change."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time

import pytest
from harness import ROOT, run_cli

from referee import records
from referee.results.store import Store

pytestmark = pytest.mark.e2e

DOC = ROOT / "docs" / "tournaments.md"


def _recipe() -> dict[str, str]:
    """The recipe's code blocks by name (``<!-- recipe: NAME -->`` before each)."""
    found = re.findall(r"<!-- recipe: (\S+) -->\s*```\w*\n(.*?)```", DOC.read_text(), re.S)
    return {name: "\n".join(line.strip() for line in body.splitlines()) + "\n" for name, body in found}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _referee_args(line: str) -> list[str]:
    """A ``referee ...`` or ``python ...`` line of the recipe as the arguments of this interpreter."""
    words = shlex.split(line)
    return [sys.executable, "-m", "referee", *words[1:]] if words[0] == "referee" else [sys.executable, *words[1:]]


def test_the_remote_bots_recipe_runs_as_written(tmp_path):
    recipe = _recipe()
    assert set(recipe) == {"tokens.toml", "serve", "bots", "remote.toml", "run"}
    port = _free_port()
    address = f"127.0.0.1:{port}"

    def here(text: str) -> str:
        return (text.replace("referee.example.org:50051", address)
                .replace("--host 0.0.0.0 --port 50051", f"--host 127.0.0.1 --port {port}"))

    (tmp_path / "tokens.toml").write_text(recipe["tokens.toml"])
    (tmp_path / "remote.toml").write_text(recipe["remote.toml"].replace('"out/remote"', '"results"'))
    export, serve = recipe["serve"].strip().splitlines()
    assert export.startswith("export REFEREE_ADMIN_TOKEN=")
    env = {**os.environ, "REFEREE_ADMIN_TOKEN": "a-test-admin-token"}
    log = open(tmp_path / "serve.log", "w")
    processes = [subprocess.Popen(_referee_args(here(serve)), cwd=tmp_path, env=env, stdout=log, stderr=log)]
    try:
        deadline = time.monotonic() + 30
        while "listening on" not in (tmp_path / "serve.log").read_text():
            assert time.monotonic() < deadline and processes[0].poll() is None, (tmp_path / "serve.log").read_text()
            time.sleep(0.05)
        for line in here(recipe["bots"]).strip().splitlines():
            processes.append(subprocess.Popen(_referee_args(line), cwd=ROOT, env=env,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        run = run_cli(*_referee_args(here(recipe["run"]).strip())[3:], "--quiet", timeout=240,
                      cwd=tmp_path, env=env)
    finally:
        for p in reversed(processes):
            p.terminate()
            p.wait(10)
    assert run.returncode == 0, run.stderr
    store = Store(tmp_path / "results", create=False)
    try:
        rows = list(store.matches())
        assert len(rows) == 8  # 4 deal sets, each twice with the seats swapped
        assert {name for row in rows for name in row.lineup} == {"alice", "bob"}
        for row in rows:
            assert records.replay(store.record(row.key)).results["scores"] == row.results["scores"]
    finally:
        store.close()
    assert "bot 'alice' connected" in (tmp_path / "serve.log").read_text()
