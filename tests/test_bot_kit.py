"""The Python bot kit (referee.bot) with the random sample bot, end to end."""

from __future__ import annotations

import asyncio
import socket
import textwrap
import time

import pytest
from harness import Bots, serve

from referee.server import RefereeServer


@pytest.mark.e2e
def test_one_process_plays_every_seat_of_several_games_at_once():
    async def main(server, bots):
        bots.sample("solo", "--capacity", "8", "--seed", "1")
        games = [server.arena.run_match("confirmation", {"rounds": 1}, ["solo"] * 4, seed=s) for s in range(2)]
        return await asyncio.gather(*games)

    for out in serve(main):
        assert out.state.is_terminal() and out.faults == []


@pytest.mark.e2e
def test_seeded_bots_replay_the_same_game():
    async def main(server, bots):
        for n in "ab":
            bots.sample(n, "--seed", "7")
        out = await server.arena.run_match("aegis", {}, ["a", "b"], seed=3, game_id="same")
        return out.state.actions

    first, second = serve(main), serve(main)
    assert first == second


@pytest.mark.e2e
def test_the_bot_waits_for_the_referee_and_reconnects():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bots = Bots(f"127.0.0.1:{port}")
    procs = [bots.sample(n, "--retry-for", "20", "--games", "2") for n in "ab"]
    time.sleep(0.5)  # the bots start first and retry

    async def main():
        for _ in range(2):  # the second server is a restart: the bots come back by themselves
            async with RefereeServer(port=port) as server:
                out = await server.arena.run_match("aegis", {}, ["a", "b"], seed=1)
                assert out.faults == []

    try:
        asyncio.run(main())
        codes = [p.wait(20) for p in procs]
    finally:
        bots.close()
    assert codes == [0, 0]


@pytest.mark.e2e
def test_a_decide_that_raises_costs_a_decision_not_the_game(tmp_path):
    (tmp_path / "buggy.py").write_text(textwrap.dedent("""
        from referee.bot import run_bot
        def decide(observation, legal, game):
            if len(game.events) % 3 == 0:
                raise RuntimeError("oops")
            return legal[-1]
        run_bot(decide, default_name="buggy")
    """))

    async def main(server, bots):
        for n in "ab":
            bots.script(tmp_path / "buggy.py", n)
        return await server.arena.run_match("aegis", {}, ["a", "b"], seed=2)

    out = serve(main)
    assert out.state.is_terminal() and out.faults == []


def test_events_are_kept_as_text_and_parsed_in_order_when_read():
    from referee.bot import GameView
    from referee.v1 import referee_pb2 as pb

    view = GameView("g", "aegis", {}, 0, ["a", "b"], 1000, 10000)
    view.receive_events([pb.GameEvent(index=0, kind="deal", actor=-1, data_json='{"hand":["AS"]}'),
                         pb.GameEvent(index=1, kind="play", actor=1, data_json='"2C"')])
    assert view.events == [{"index": 0, "kind": "deal", "actor": -1, "data": {"hand": ["AS"]}},
                           {"index": 1, "kind": "play", "actor": 1, "data": "2C"}]
    view.receive_events([pb.GameEvent(index=2, kind="stop", actor=0, data_json="null")])
    assert [e["index"] for e in view.events] == [0, 1, 2] and view.events[2]["data"] is None
