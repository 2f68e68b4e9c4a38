"""The Python bot kit (referee.bot) with the random sample bot, end to end."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from harness import Bots, serve

from referee.play.server import RefereeServer


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
def test_a_decide_that_raises_costs_a_decision_not_the_game_and_is_charged_as_an_error(tmp_path):
    """Issue 34, item 2: the kit answers what decide raised; the referee plays the first legal action
    and charges an error fault (the bot is broken, not weak), and the seat goes on being asked."""
    (tmp_path / "buggy.py").write_text(textwrap.dedent("""
        from referee.bot import run_bot
        def decide(observation, legal, game):
            if len(game.events) % 3 == 0:
                raise RuntimeError("oops")
            return legal[-1]
        run_bot(decide, default_name="buggy")
    """))

    async def main(server, bots):
        procs = [bots.script(tmp_path / "buggy.py", n) for n in "ab"]
        out = await server.arena.run_match("aegis", {}, ["a", "b"], seed=2)
        for proc in procs:
            proc.kill()
        return out, [proc.communicate()[1] for proc in procs]

    out, logs = serve(main)
    assert out.state.is_terminal() and out.faults
    assert {f.kind for f in out.faults} == {"error"}
    assert all(f.detail.startswith("the bot's own code failed: 'RuntimeError: oops (at buggy.py:") for f in out.faults)
    counted = [c["error"] for c in out.results["faults"]]
    assert sum(counted) == len(out.faults)  # every one counted (and kept: fewer than 50 a seat)
    assert sum(counted) < len(out.state.actions)  # only the decisions that raised were substituted
    for log, n in zip(logs, counted):  # the first tracebacks in full, then a line each
        assert log.count("Traceback (most recent call last)") == min(n, 3), log[-2000:]
        assert log.count("decide raised") == n


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


# --- the token by descriptor, Unix addresses -----------------------------------------

def start_with_token_pipe(address: str, name: str, token: str, *args: str) -> subprocess.Popen:
    """The random sample bot given its token as the launcher gives it: the first line of a pipe
    whose read end it inherits, named by --token-fd (the token is on no command line)."""
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "sample_bots.random", "--address", address, "--name", name,
                                 "--token-fd", str(read_end), *args], pass_fds=(read_end,),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(read_end)
    with os.fdopen(write_end, "w") as pipe:
        pipe.write(token + "\n")
    return proc


def stderr_of(argv_tail: list[str], **popen) -> tuple[int, str]:
    """The random sample bot's exit code and stderr, run with ``argv_tail``."""
    done = subprocess.run([sys.executable, "-m", "sample_bots.random", *argv_tail], capture_output=True, text=True,
                          timeout=60, check=False, **popen)
    return done.returncode, done.stderr


@pytest.mark.e2e
def test_the_token_is_read_from_an_inherited_descriptor():
    """Both bots are admitted only with the right tokens, which reached them through pipes."""
    async def main():
        async with RefereeServer(tokens={"a": "secret-a", "b": "secret-b"}) as server:
            procs = [start_with_token_pipe(server.address, n, f"secret-{n}", "--games", "1") for n in "ab"]
            try:
                out = await server.arena.run_match("aegis", {}, ["a", "b"], seed=4)
                codes = [await asyncio.to_thread(p.wait, 20) for p in procs]
            finally:
                for p in procs:
                    if p.poll() is None:
                        p.kill()
                    p.communicate()
            return out, codes, [p.args for p in procs]

    out, codes, argvs = asyncio.run(main())
    assert out.state.is_terminal() and out.faults == []
    assert codes == [0, 0]
    assert not any("secret" in word for argv in argvs for word in argv)


@pytest.mark.e2e
def test_a_wrong_token_from_the_descriptor_is_refused():
    async def main():
        async with RefereeServer(tokens={"a": "secret-a"}) as server:
            proc = start_with_token_pipe(server.address, "a", "not-it", "--retry-for", "5")
            try:
                _, err = await asyncio.to_thread(proc.communicate, timeout=30)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
            return proc.returncode, err

    code, err = asyncio.run(main())
    assert code == 3 and "refused" in err, err


def test_token_and_token_fd_together_are_a_one_line_usage_error():
    code, err = stderr_of(["--name", "x", "--token", "t", "--token-fd", "0"])
    assert code == 2
    assert err.strip() == "x: give --token or --token-fd, not both"


def test_an_unreadable_token_fd_is_a_one_line_error():
    code, err = stderr_of(["--name", "x", "--token-fd", "97"])
    assert code == 2
    assert err.strip() == "x: cannot read the token from --token-fd 97: Bad file descriptor"


def test_token_from_fd_reads_the_first_line_and_closes_the_descriptor():
    from referee.bot import token_from_fd

    read_end, write_end = os.pipe()
    os.write(write_end, b"  s3cret \nnot this\n")
    os.close(write_end)
    assert token_from_fd(read_end) == "s3cret"
    with pytest.raises(OSError):
        os.fstat(read_end)


@pytest.mark.e2e
def test_bots_play_through_a_unix_socket():
    """``--address unix:PATH`` (here a Relay's socket in front of the referee's TCP port)."""
    from referee.hosting.relay import Relay

    async def main():
        async with RefereeServer() as server, Relay(server.address) as relay:
            bots = Bots(relay.address)
            try:
                for n in "ab":
                    bots.sample(n, "--seed", "3")
                return relay.address, await server.arena.run_match("aegis", {}, ["a", "b"], seed=5)
            finally:
                bots.close()

    address, out = asyncio.run(main())
    assert address.startswith("unix:/")
    assert out.state.is_terminal() and out.faults == []


def test_no_referee_at_a_unix_address_is_said_where_and_why_then_given_up_in_one_line(tmp_path):
    missing = tmp_path / "none.sock"
    code, err = stderr_of(["--name", "x", "--address", f"unix:{missing}", "--retry-for", "1"])
    assert code == 4
    first, *_, last = err.strip().splitlines()
    assert f"x: cannot reach the referee at unix:{missing} (connection: UNAVAILABLE: " in first
    assert "No such file or directory" in first and first.endswith("trying again for 1 s")
    assert last == f"x: no referee at unix:{missing} for 1 s (connection: UNAVAILABLE); giving up"
    assert "--address" not in err  # it was given one: no hint about a missing address


def test_a_bot_given_no_address_says_it_tried_the_default_and_why():
    """Issue 34, item 2: a bot that drops the launcher's arguments tries the default address; its
    log says so at once (not an empty log) and what to do."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 50051)) == 0:
            pytest.skip("something listens at the default address, 127.0.0.1:50051, on this machine")
    code, err = stderr_of(["--name", "x", "--retry-for", "0.5"])
    assert code == 4
    first, hint, *_, last = err.strip().splitlines()
    assert "x: cannot reach the referee at 127.0.0.1:50051 (connection: UNAVAILABLE: " in first
    assert hint.endswith('x: no --address given, so it tried the default: a launched bot gets --address and the '
                         'rest appended to its command, for run_bot to read in sys.argv (pass them on: '
                         'run_bot(decide, rest)); under protocol = "stdio" it gets none: this kit speaks gRPC')
    assert last == "x: no referee at 127.0.0.1:50051 for 0.5 s (connection: UNAVAILABLE); giving up"
