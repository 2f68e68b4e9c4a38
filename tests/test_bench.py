"""The benchmark script runs end to end (briefly; its figures are not checked here)."""

from __future__ import annotations

import asyncio
import json

import pytest

from referee import bench


@pytest.mark.e2e
def test_a_short_benchmark_prints_its_tables_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    bench.main(["--only", "engine,referee,concurrency", "--seconds", "0.2", "--rounds", "1", "--json", str(out)])
    printed = capsys.readouterr().out
    for title in ("1. Engine", "2. Transport floor", "3. Referee", "3b.", "4. Concurrency", "Targets"):
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
    assert [c["concurrent"] for c in figures["concurrency"]] == list(bench.LANES)
    assert all(c["decisions"] > 0 and c["faults"] == 0 and c["rounds"] == 1 for c in figures["concurrency"])
    assert len(figures["targets"]) == 4


@pytest.mark.e2e
def test_the_stdio_section_sets_stdio_bots_against_grpc_bots(tmp_path, capsys, monkeypatch):
    from referee.bench import stdio

    monkeypatch.setattr(stdio, "GAMES", ("aegis",))  # one game is enough here: fewer processes to start
    out = tmp_path / "stdio.json"
    bench.main(["--only", "stdio", "--seconds", "0.1", "--rounds", "1", "--json", str(out)])
    assert "9. stdio bots behind the relay against gRPC bots" in capsys.readouterr().out
    figures = json.loads(out.read_text())["stdio"]
    rows = figures["rows"]
    assert {r["kind"] for r in rows} >= {"grpc", "stdio (Python bot)"} and 10 < figures["relay_rss_mb"] < 500
    assert all(r["decisions"] > 0 and r["faults"] == 0 and r["bots_cpu_us_per_decision"] for r in rows)


@pytest.mark.e2e
def test_the_strays_section_sets_a_flooding_entrant_against_an_honest_one(tmp_path, capsys, monkeypatch):
    """Section 7b, briefly (one deal set, the gRPC rows): its table, the victim's decisions the same in
    both rows (the entrant plays the first legal action, or has it played for it), and the flooding
    entrant's sessions closed by the referee (a seat they held, a disconnect; one none came to in
    time, no_session)."""
    from referee.bench import strays

    monkeypatch.setattr(strays, "RUNS", strays.RUNS[:2])
    monkeypatch.setattr(strays, "DEAL_SETS", 1)
    out = tmp_path / "strays.json"
    bench.main(["--only", "strays", "--json", str(out)])
    assert "7b. Stray replies from a bot's extra sessions" in capsys.readouterr().out
    control, flood = json.loads(out.read_text())["strays"]["rows"]
    assert (control["run"], flood["run"]) == ("control", "gRPC strays")
    assert control["decisions"] == flood["decisions"] > 0 and control["entrant_faults"] == {}
    assert flood["sessions"]["closed"] >= 1 and set(flood["entrant_faults"]) <= {"disconnect", "no_session"}, flood


@pytest.mark.e2e
def test_the_trace_section_times_each_hand_off_and_unwraps_the_server(tmp_path, capsys):
    from referee.play import arena

    before = (arena.Session.on_reply, arena.Session.send, arena.Session.next_message, arena.SessionSeat.decide)
    out = tmp_path / "trace.json"
    bench.main(["--only", "trace", "--seconds", "0.2", "--json", str(out)])
    assert "3c. Where one aegis decision" in capsys.readouterr().out
    for game in json.loads(out.read_text())["trace"]:
        assert [s["from"] for s in game["steps"]] == ["request written", "reply read", "runner resumed",
                                                       "request queued"]
        assert all(s["count"] > 10 and s["median_us"] > 0 for s in game["steps"])
    assert (arena.Session.on_reply, arena.Session.send, arena.Session.next_message,
            arena.SessionSeat.decide) == before


def test_one_game_is_set_against_the_echo_of_its_own_round():
    # per round: 60/100, 100/200, 240/300 -> 0.6, 0.5, 0.8; the medians taken apart would give 100/200
    results = {"echo": [{"round_trips_per_s": e, "server_cpu_us_per_round_trip": 170} for e in (100, 200, 300)],
               "referee": {"aegis": [{"decisions_per_s": d, "server_cpu_us_per_decision": 350}
                                     for d in (60, 100, 240)]},
               "messages_per_decision": {"aegis": 1.03},
               "referee_work": [{"game": "aegis", "referee_cpu_us_per_decision": 68},
                                {"game": "confirmation", "referee_cpu_us_per_decision": 50}]}
    assert bench._of_echo(results, results["referee"]["aegis"], "decisions_per_s") == (0.6, 0.5, 0.8)
    one_game = bench.targets(results)[0]
    assert (one_game["value"], one_game["met"]) == (0.6, False)
    assert one_game["context"].startswith("rounds: 0.50-0.80")
    results["referee"]["aegis"][0]["decisions_per_s"] = 75  # 0.75 now the median
    assert bench.targets(results)[0]["met"] is True


def test_games_at_once_are_set_against_one_game_of_the_same_round():
    def rows(*rates):
        return [{"decisions_per_s": rate} for rate in rates]
    # 16 at once per round: 300/100, 500/200, 1000/250 -> 3.0, 2.5, 4.0; the medians taken apart would give 2.5
    table = bench._against_one_game({1: rows(100, 200, 250), 16: rows(300, 500, 1000)})
    assert [(c["rounds"], c["vs_one"], c["vs_one_range"]) for c in table] == [(3, 1.0, [1.0, 1.0]),
                                                                              (3, 3.0, [2.5, 4.0])]
    assert table[1]["decisions_per_s"] == 500  # the median round


@pytest.mark.e2e
def test_the_sandbox_section_times_a_bot_start_in_each_mode(tmp_path):
    from referee.bench import sandbox as bench_sandbox
    from referee.hosting import sandbox

    modes = ["none"] + (["bwrap"] if sandbox.probe() is None else [])
    rows = asyncio.run(bench_sandbox.startups(modes, 2, tmp_path))
    ways = [way for mode in modes for way in (mode, f"{mode}, prepared (from its release)")]
    assert [r["sandbox"] for r in rows] == ways
    assert all(r["starts"] == 2 and 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"] for r in rows)
    assert not list(tmp_path.rglob("*.log")) or all("stopped after its match" in p.read_text()
                                                     for p in tmp_path.rglob("*.log"))


@pytest.mark.e2e
def test_the_sandbox_section_times_a_start_with_the_bots_pycache_masked_and_shown():
    from harness import require_sandbox

    from referee.bench import sandbox as bench_sandbox

    require_sandbox()
    cost = bench_sandbox.pycache_cost(starts=1)
    assert cost["masks"] == 1 and cost["source_kb"] > 50 and cost["walk_ms"] >= 0
    assert [s["way"] for s in cost["starts"]] == ["masked (now)", "shown (before)"]
    assert all(s["starts"] == 1 and s["median_ms"] > 0 for s in cost["starts"])
    results = {"machine": {"python": "CPython", "cpus": 2, "load_average": [1.0, 1.0, 1.0]}, "targets": [],
               "sandbox": {"startup": [], "bwrap_unavailable": None, "pycache": cost}}
    assert "6b. A bot's own" in bench.report(results) and "| masked (now) " in bench.report(results)


def test_the_resources_section_prints_the_victims_decisions_the_budget_and_the_starts():
    fair = [{"spinners": n, "decisions": 805, "slowest_ms": ms, "mean_ms": 0.9, "over_decision_time": 0,
             "timeouts": 0, "seconds": 2.0, "cpu_share": share} for n, ms, share in ((0, 9.0, True), (240, 42.0, True))]
    rows = [{"file_mb": 64, "tmpfs_mb": 64, "inodes": 8192, "inodes_kernel_mb": 9.4, "budget_mb": 146.8,
             "stated_budget_mb": 148.8}]
    results = {"machine": {"python": "CPython", "cpus": 2, "load_average": [1.0, 1.0, 1.0]}, "targets": [],
               "resources": {"fairness": fair, "starts": None, "sandbox": "sandbox: bwrap",
                             "writable": {"bytes_per_inode": 1206, "how": "measured", "stated_bytes_per_inode": 1331,
                                          "rows": rows}}}
    printed = bench.report(results)
    assert "8a." in printed and "each bot with its CPU share" in printed and "| 240 " in printed
    assert "8b." in printed and "1206 bytes per empty file" in printed and "8c." not in printed
    fair[1]["cpu_share"] = False
    assert "NO CPU share could be given here" in bench.report(results)


def test_the_inode_cost_is_not_measured_where_no_cgroup_can_be_made(tmp_path, monkeypatch):
    """Section 8b where the cgroup hierarchies are there but no group can be made in them
    (``ProcessTree.make`` gives None): the cost is "not measured", the section goes on (it used to
    stop on an AttributeError)."""
    from referee.bench import resources
    from referee.hosting import sandbox

    monkeypatch.setattr(sandbox, "probe", lambda: None)  # bubblewrap taken as working
    monkeypatch.setattr(sandbox, "cgroup_parents", lambda: {"memory": tmp_path / "gone" / "memory"})
    monkeypatch.setattr(sandbox, "cpu_parent", lambda: None)
    assert sandbox.ProcessTree.make("referee-test", sandbox.Limits()) is None  # the group's mkdir fails
    cost, how = resources.inode_cost()
    assert cost is None and how.startswith("not measured")
    assert resources.writable()["bytes_per_inode"] is None


def test_the_work_section_measures_each_form_of_the_game_data(tmp_path, capsys):
    out = tmp_path / "work.json"
    bench.main(["--only", "work", "--seconds", "0.05", "--rounds", "1", "--json", str(out)])
    printed = capsys.readouterr().out
    assert "3b. The referee's own work" in printed and "3. Referee" not in printed
    figures = json.loads(out.read_text())
    assert [(w["game"], w["data_form"]) for w in figures["referee_work"]] == [("aegis", "DATA_JSON"),
                                                                              ("confirmation", "DATA_JSON")]
    assert [(w["game"], w["data_form"]) for w in figures["referee_work_forms"]] == [
        (g, f) for g in ("aegis", "confirmation") for f in ("DATA_TYPED", "DATA_BOTH")]
    assert all(w["decisions"] > 0 and w["referee_cpu_us_per_decision"] > 0
               for w in figures["referee_work"] + figures["referee_work_forms"])


def test_the_isolation_section_keeps_the_rule_of_before_in_the_bench_only():
    from referee.bench import isolation
    from referee.model import BotSpec, Seating
    from referee.play.executors import LocalExecutor
    from referee.runner import Clock

    executor = LocalExecutor("aegis", {}, Clock(), [BotSpec("a", ("x",)), BotSpec("b", ("x",))], {}, isolation="match")
    seating = Seating(3, 1, ("a", "b"))
    now = {("deal set", 3), ("bot", "a"), ("bot", "b")}
    assert executor._holds(seating) == now
    with isolation.rule("match, before"):
        assert executor._holds(seating) == {("deal set", 3)}
    assert executor._holds(seating) == now
    rows = [{"tournament": "t", "way": way, "concurrency": 4, "matches": 6, "seconds": s, "games_per_minute": g,
             "cpu_s_per_match": c}
            for way, s, g, c in (("tournament", 1.0, 360.0, 0.1), ("match, before", 3.0, 120.0, 0.4),
                                 ("match", 6.0, 60.0, 0.38))]
    table, headers = isolation.table({"rows": rows, "sandbox": "bwrap"})
    assert headers[-2:] == ["vs match, before", "machine CPU s/match"]
    assert [row[-2:] for row in table] == [["3.00", 0.1], ["1.00", 0.4], ["0.50", 0.38]]
    assert 0 < isolation.machine_cpu() <= isolation.machine_cpu()  # CPU-seconds so far: they only grow
