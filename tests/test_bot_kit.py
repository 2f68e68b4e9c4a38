"""The Python bot kit (referee.bot) with the random sample bot, end to end."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import textwrap
import time

from referee.server import RefereeServer


def launch(address, name, *args, module="sample_bots.random"):
    return subprocess.Popen([sys.executable, "-m", module, "--address", address, "--name", name, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.communicate()


def test_one_process_plays_every_seat_of_several_games_at_once():
    async def main():
        async with RefereeServer() as server:
            bot = launch(server.address, "solo", "--capacity", "8", "--seed", "1")
            try:
                games = [server.arena.run_match("confirmation", {"rounds": 1}, ["solo"] * 4, seed=s) for s in range(2)]
                return await asyncio.gather(*games)
            finally:
                stop([bot])

    for out in asyncio.run(main()):
        assert out.state.is_terminal() and out.faults == []


def test_seeded_bots_replay_the_same_game():
    async def main():
        scores = []
        for _ in range(2):
            async with RefereeServer() as server:
                bots = [launch(server.address, n, "--seed", "7") for n in "ab"]
                try:
                    out = await server.arena.run_match("aegis", {}, ["a", "b"], seed=3, game_id="same")
                    scores.append(out.state.actions)
                finally:
                    stop(bots)
        return scores

    first, second = asyncio.run(main())
    assert first == second


def test_the_bot_waits_for_the_referee_and_reconnects():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"127.0.0.1:{port}"
    bots = [launch(address, n, "--retry-for", "20", "--games", "2") for n in "ab"]
    time.sleep(0.5)  # the bots start first and retry

    async def main():
        for _ in range(2):  # the second server is a restart: the bots come back by themselves
            async with RefereeServer(port=port) as server:
                out = await server.arena.run_match("aegis", {}, ["a", "b"], seed=1)
                assert out.faults == []

    try:
        asyncio.run(main())
        codes = [p.wait(20) for p in bots]
    finally:
        stop(bots)
    assert codes == [0, 0]


def test_a_decide_that_raises_costs_a_decision_not_the_game(tmp_path):
    (tmp_path / "buggy.py").write_text(textwrap.dedent("""
        from referee.bot import run_bot
        def decide(observation, legal, game):
            if len(game.events) % 3 == 0:
                raise RuntimeError("oops")
            return legal[-1]
        run_bot(decide, default_name="buggy")
    """))

    async def main():
        async with RefereeServer() as server:
            bots = [subprocess.Popen([sys.executable, str(tmp_path / "buggy.py"), "--address", server.address,
                                      "--name", n], stderr=subprocess.PIPE, text=True) for n in "ab"]
            try:
                return await server.arena.run_match("aegis", {}, ["a", "b"], seed=2)
            finally:
                stop(bots)

    out = asyncio.run(main())
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
