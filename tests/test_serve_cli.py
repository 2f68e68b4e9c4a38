"""``referee serve``: the standalone server, driven from outside with RunMatch."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import grpc
import pytest
from harness import PROTO_BOT

from referee import records
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
