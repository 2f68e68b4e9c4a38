"""The benchmark script runs end to end (briefly; its figures are not checked here)."""

from __future__ import annotations

import json

from referee import bench


def test_a_short_benchmark_prints_its_tables_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    bench.main(["--only", "engine,referee", "--seconds", "0.2", "--rounds", "1", "--json", str(out)])
    printed = capsys.readouterr().out
    for title in ("1. Engine", "2. Transport floor", "3. Referee", "3b.", "Targets"):
        assert title in printed
    figures = json.loads(out.read_text())
    assert {r["game"] for r in figures["engine"]} == {"aegis", "confirmation"}
    assert figures["echo"][0]["round_trips"] > 0 and figures["echo"][0]["clients"] == 1
    two = figures["echo_two_clients"][0]
    assert two["clients"] == 2 and two["round_trips"] > 0 and two["client_cpu_us_per_round_trip"] is not None
    assert all(1 < m < 1.2 for m in figures["messages_per_decision"].values())  # a request per decision, and few more
    for game in ("aegis", "confirmation"):
        played = figures["referee"][game][0]
        assert played["decisions"] > 0 and played["faults"] == 0
    assert len(figures["targets"]) == 3
