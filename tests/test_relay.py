"""referee.hosting.relay: a local Unix socket forwarded to a referee's HOST:PORT."""

from __future__ import annotations

import asyncio
import stat

import pytest
from harness import Bots

from referee.hosting.relay import Relay
from referee.play.server import RefereeServer


async def echo_server() -> tuple[asyncio.AbstractServer, str, list[str]]:
    """A TCP server that answers every line upper-cased; ``events`` says when its connections end."""
    events: list[str] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            writer.write(line.upper())
            await writer.drain()
        events.append("closed by the client")
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"127.0.0.1:{port}", events


def test_bytes_go_both_ways_and_a_close_on_either_side_closes_the_other():
    async def main():
        server, target, events = await echo_server()
        async with server, Relay(target) as relay:
            mode = stat.S_IMODE(relay.path.stat().st_mode)
            reader, writer = await asyncio.open_unix_connection(relay.path)
            writer.write(b"hello\nagain\n")
            lines = [await reader.readline(), await reader.readline()]
            writer.close()  # the bot leaves: the relay closes its connection to the target
            for _ in range(100):
                if events:
                    break
                await asyncio.sleep(0.02)
            path = relay.path
        return lines, events, mode, path

    lines, events, mode, path = asyncio.run(main())
    assert lines == [b"HELLO\n", b"AGAIN\n"]
    assert events == ["closed by the client"]
    assert mode == 0o666
    assert not path.exists() and not path.parent.exists()


def test_the_bot_side_is_closed_when_the_target_closes_or_is_not_there(tmp_path):
    async def main():
        async def hang_up(reader, writer):
            writer.write(b"bye\n")
            writer.close()

        server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server, Relay(f"127.0.0.1:{port}", tmp_path / "r.sock") as relay:
            reader, writer = await asyncio.open_unix_connection(relay.path)
            hung_up = await asyncio.wait_for(reader.read(), 5)  # everything until the end
            writer.close()
        server.close()
        await server.wait_closed()
        async with Relay(f"127.0.0.1:{port}", tmp_path / "r.sock") as relay:  # nothing listens there now
            reader, writer = await asyncio.open_unix_connection(relay.path)
            nothing = await asyncio.wait_for(reader.read(), 5)
            writer.close()
        return hung_up, nothing

    hung_up, nothing = asyncio.run(main())
    assert hung_up == b"bye\n" and nothing == b""
    assert not (tmp_path / "r.sock").exists()


def test_leaving_closes_the_connections_still_open():
    async def main():
        server, target, events = await echo_server()
        async with server:
            async with Relay(target) as relay:
                reader, writer = await asyncio.open_unix_connection(relay.path)
                writer.write(b"x\n")
                await reader.readline()
            end = await asyncio.wait_for(reader.read(), 5)
            writer.close()
            for _ in range(100):
                if events:
                    break
                await asyncio.sleep(0.02)
        return end, events

    assert asyncio.run(main()) == (b"", ["closed by the client"])


@pytest.mark.parametrize("target", ["localhost", "unix:/tmp/x.sock", "host:port", ":50051"])
def test_a_target_that_is_not_host_port_is_refused(target):
    with pytest.raises(ValueError, match="HOST:PORT"):
        Relay(target)


@pytest.mark.e2e
def test_bots_on_the_relay_play_a_match_on_a_referee_listening_on_tcp():
    async def main():
        async with RefereeServer(tokens={"a": "ta", "b": "tb"}) as server, Relay(server.address) as relay:
            bots = Bots(relay.address)
            try:
                bots.sample("a", "--token", "ta", "--seed", "1")
                bots.sample("b", "--token", "tb", "--seed", "2", module="sample_bots.heuristic")
                matches = [await server.arena.run_match("aegis", {}, ["a", "b"], seed=s) for s in (7, 8)]
                return relay.address, server.address, matches
            finally:
                bots.close()

    address, tcp, matches = asyncio.run(main())
    assert address.startswith("unix:/") and not tcp.startswith("unix:")
    for out in matches:
        assert out.state.is_terminal() and out.faults == []
        assert out.seat_names == ("a", "b")


def test_connections_past_the_cap_are_closed_as_they_come():
    async def main():
        server, target, _ = await echo_server()
        async with server, Relay(target, max_connections=2) as relay:
            kept = [await asyncio.open_unix_connection(relay.path) for _ in range(2)]
            for reader, writer in kept:
                writer.write(b"hi\n")
                assert await reader.readline() == b"HI\n"  # both are forwarded
            reader, writer = await asyncio.open_unix_connection(relay.path)
            try:
                third = await asyncio.wait_for(reader.read(), 5)  # closed at once: end of stream
            except ConnectionResetError:
                third = b""
            kept[0][1].close()
            await asyncio.sleep(0.2)
            reader, writer = await asyncio.open_unix_connection(relay.path)  # room again
            writer.write(b"again\n")
            return third, await reader.readline()

    assert asyncio.run(main()) == (b"", b"AGAIN\n")
