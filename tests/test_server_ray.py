"""``referee server --executor ray`` on a loopback cluster of two nodes: the worker node dies mid-ladder
(SIGKILL to all its processes, as a machine that loses power); each match it was playing is played again
elsewhere and every result is stored exactly once, each record verified."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from harness import require_ray, require_server
from test_server_process import Server, bot_dir, register, stored, submit

require_server()

from referee import records  # noqa: E402

pytestmark = pytest.mark.e2e


def players(matches: list[tuple[str, str]]) -> set[str]:
    """The entries of the stored matches (each key is ``DEAL_SET:NAME|NAME``)."""
    return {name for key, _ in matches for name in key.split(":", 1)[1].split("|")}


def test_a_worker_node_lost_mid_ladder_loses_and_doubles_nothing(tmp_path: Path) -> None:
    require_ray()
    from referee.bench.cluster import LoopbackCluster

    with LoopbackCluster(nodes=2, cpus=2) as cluster:
        server = Server(tmp_path)
        try:
            # four entries: two matches of disjoint pairs play at once (an entry plays one match at a time
            # under isolation = "match"), so that both nodes' workers are playing when one node dies
            printed = server.start("--open", "--invites", "4", "--executor", "ray", "--address", cluster.address,
                                   env=cluster.env())
            invites = re.findall(r"invite code: (\S+)", printed)
            good = bot_dir(tmp_path / "good", "from sample_bots.random import main\nmain()\n")
            for name, invite in zip(("alice", "bob", "carol", "dave"), invites):
                done = submit(server, register(server.url, invite, name), good)
                assert done.returncode == 0, done.stdout + done.stderr
            deadline = time.monotonic() + 300
            entries = {"alice", "bob", "carol", "dave"}
            while not entries <= players(stored(server.ladder())) and time.monotonic() < deadline:
                time.sleep(0.2)  # every entry has played: the rounds play two matches at once from now on
            cluster.kill_node(1)
            lost_at = len(stored(server.ladder()))
            while len(stored(server.ladder())) < lost_at + 6 and time.monotonic() < deadline + 300:
                time.sleep(0.5)
            server.kill(signal.SIGTERM)
        finally:
            if server.process is not None and server.process.poll() is None:
                server.kill()
    log = server.log.read_text()
    after = stored(server.ladder())
    keys = [k for k, _ in after]
    assert len(keys) >= lost_at + 6, log  # the ladder went on without the node
    assert len(keys) == len(set(keys))
    with sqlite3.connect(server.ladder()) as conn:
        assert conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 2 * len(keys)
    for key, record in after:
        assert records.replay(json.loads(record)).finished, key
    assert "played again by another worker" in log or "died" in log, log
