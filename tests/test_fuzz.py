"""Fuzzing (hypothesis): random and malformed input at the engines and at the
server. No crash, no hang, a clear error each time."""

from __future__ import annotations

import asyncio
import random
import threading

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import GAMES
from referee.games.base import GameError, IllegalActionError
from referee.play.server import RefereeServer
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

# --- engines ------------------------------------------------------------------------

ACTION_INTS = st.one_of(st.integers(-5, 120), st.integers(-(2**70), 2**70), st.just(1 << 52),
                        st.integers(0, 2**52 - 1).map(lambda m: (1 << 52) | m))


#: a game, its seed, and attempts at it: (seat, action code, action text)
ATTEMPTS = dict(game=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 10**6),
                attempts=st.lists(st.tuples(st.integers(-2, 5), ACTION_INTS, st.text(max_size=20)), min_size=1,
                                  max_size=60))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(**ATTEMPTS)
def test_engines_refuse_random_actions_cleanly(game, seed, attempts):
    refuse_cleanly(game, seed, attempts)


@settings(max_examples=40, deadline=None)
@given(**ATTEMPTS)
def test_engines_refuse_random_actions_cleanly_quick(game, seed, attempts):
    """The same on 40 examples, for the fast loop."""
    refuse_cleanly(game, seed, attempts)


def refuse_cleanly(game: str, seed: int, attempts: list[tuple[int, int, str]]) -> None:
    """Each attempt, by code then by text, is applied or refused with a clear error that leaves
    the state as it was."""
    state = GAMES[game].new({}, seed=seed)
    rng = random.Random(seed)
    for seat, code, text in attempts:
        if state.is_terminal():
            break
        before = state.observation(0), len(state.events), len(state.actions)
        for attempt in (lambda: state.apply(seat, code), lambda: state.apply(seat, state.parse_action(text))):  # noqa: B023 (called in this iteration)
            try:
                attempt()
            except GameError as err:  # IllegalActionError, NotYourTurnError, ActionSyntaxError
                assert str(err)
                if isinstance(err, IllegalActionError):
                    assert err.rule
                assert (state.observation(0), len(state.events), len(state.actions)) == before
            else:
                before = state.observation(0), len(state.events), len(state.actions)
        # and a legal move, so that the game advances
        acting = state.to_act()
        if acting:
            s = rng.choice(acting)
            state.apply(s, rng.choice(state.legal_actions(s)))


# --- the server ---------------------------------------------------------------------


class LiveServer:
    """One referee on a background loop for all examples."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = RefereeServer(tokens={"fuzz": "tok"}, connect_timeout=0.5, spectator_token="watch")
        self.loop.run_until_complete(self.server.start())
        self.ready.set()
        self.loop.run_forever()

    def stop(self):
        asyncio.run_coroutine_threadsafe(self.server.stop(0), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


SERVER = None


def server() -> LiveServer:
    global SERVER
    if SERVER is None:
        SERVER = LiveServer()
    return SERVER


def teardown_module():
    if SERVER is not None:
        SERVER.stop()


def send_raw(address: str, chunks: list[bytes]) -> list[bytes]:
    """Open a Play stream, send raw byte messages, read what comes back (with a deadline)."""
    with grpc.insecure_channel(address) as channel:
        raw = channel.stream_stream("/referee.v1.Referee/Play", request_serializer=lambda b: b,
                                    response_deserializer=lambda b: b)
        got = []
        try:
            for reply in raw(iter(chunks), timeout=2):
                got.append(reply)
        except grpc.RpcError as err:
            assert err.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.CANCELLED,
                                  grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNKNOWN), err
        return got


def alive(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        return isinstance(pb_grpc.RefereeStub(channel).ListGames(pb.ListGamesRequest(token="watch"), timeout=5),
                          pb.ListGamesResponse)


hello = pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name="fuzz", token="tok")).SerializeToString()
replies = st.builds(
    lambda rid, gid, seat, name, index, use_index: pb.BotMessage(action=pb.ActionReply(
        request_id=rid, game_id=gid, seat=seat, **({"index": index} if use_index else {"name": name}))
    ).SerializeToString(),
    st.integers(0, 2**64 - 1), st.text(max_size=30), st.integers(0, 2**32 - 1), st.text(max_size=40),
    st.integers(0, 2**32 - 1), st.booleans())
hellos = st.builds(
    lambda v, name, tok, cap: pb.BotMessage(hello=pb.Hello(protocol_version=v, bot_name=name, token=tok,
                                                           capacity=cap)).SerializeToString(),
    st.integers(0, 2**32 - 1), st.text(max_size=30), st.text(max_size=30), st.integers(0, 2**32 - 1))


@pytest.mark.e2e
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.one_of(st.binary(max_size=64), hellos, replies),
       rest=st.lists(st.one_of(st.binary(max_size=64), replies, hellos), max_size=8))
def test_server_survives_random_messages(first, rest):
    live = server()
    got = send_raw(live.server.address, [first, *rest])
    for message in got:  # whatever came back is a well-formed referee message
        kind = pb.RefereeMessage.FromString(message).WhichOneof("kind")
        assert kind in ("welcome", "refusal")
    assert alive(live.server.address)


@pytest.mark.e2e
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(junk=st.lists(st.one_of(replies, st.binary(max_size=32)), min_size=1, max_size=20))
def test_a_session_sending_junk_after_hello_is_handled(junk):
    live = server()
    got = send_raw(live.server.address, [hello, *junk])
    assert pb.RefereeMessage.FromString(got[0]).WhichOneof("kind") == "welcome"
    assert alive(live.server.address)
