"""End to end: a real referee server on loopback, real bot processes
(tests/bots/proto_bot.py, written against the generated stubs)."""

from __future__ import annotations

import asyncio
import json
from itertools import product

import grpc
import pytest
from harness import serve

from referee import records
from referee.games import GAMES
from referee.play import wire
from referee.play.arena import Arena
from referee.runner import Clock
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc


def assert_replays(outcome):
    replay = records.replay(json.loads(json.dumps(outcome.record)))
    assert replay.results == outcome.state.results()


CONFIRMATION_VARIANTS = [
    {"rounds": 1, "double": d, "blind": b, "pairs": p, "trump": t}
    for d, b, p, t in product([False, True], [False, True], [False, True], ["dealer-card", "random-suit"])
]


@pytest.mark.e2e
def test_both_games_every_variant_play_to_the_end_and_replay():
    async def test(server, bots):
        for i, name in enumerate("abcd"):
            bots.proto(name, "--capacity", "24", "--seed", str(i), *(["--by-index"] if i % 2 else []))
        matches = [server.arena.run_match("confirmation", opts, list("abcd"), seed=n)
                   for n, opts in enumerate(CONFIRMATION_VARIANTS)]
        matches += [server.arena.run_match("aegis", {"promise": p}, ["a", "b"], seed=7) for p in ("table", "4plus")]
        matches.append(server.arena.run_match("confirmation", {}, list("dcba"), seed=99))  # a whole 8-round game
        return await asyncio.gather(*matches)

    outcomes = serve(test)
    assert len(outcomes) == 19
    for out in outcomes:
        assert out.state.is_terminal()
        assert out.faults == [], out.faults
        assert_replays(out)
    assert len(outcomes[-1].results["rounds"]) == 8


def run_with_faulty(mode: str, game: str = "confirmation", extra=(), clock=Clock(1.0, 2.0), seat=1,
                    connect_timeout=10.0):
    names = ["good0", "bad", "good2", "good3"][: GAMES[game].num_seats]
    if game == "aegis":
        names = ["good0", "bad"]

    async def test(server, bots):
        for i, name in enumerate(names):
            if name == "bad":
                if mode != "absent":
                    bots.proto(name, "--mode", mode, "--after", "2", *extra)
            else:
                bots.proto(name, "--seed", str(i))
        return await server.arena.run_match(game, {"rounds": 1} if game == "confirmation" else {},
                                            names, seed=5, clock=clock)

    out = serve(test, connect_timeout=connect_timeout)
    assert out.state.is_terminal()
    bad_seat = names.index("bad")
    assert {f.seat for f in out.faults} == {bad_seat}, out.faults
    for seat, counts in enumerate(out.results["faults"]):
        if seat != bad_seat:
            assert sum(counts.values()) == 0
    assert_replays(out)
    return out, bad_seat


@pytest.mark.e2e
@pytest.mark.parametrize("mode, kind", [
    ("illegal", "illegal"), ("garbage", "malformed"), ("badindex", "malformed"), ("wrongid", "wrong_id"),
])
def test_bad_answers_are_substituted_and_charged_to_the_right_seat(mode, kind):
    out, bad = run_with_faulty(mode)
    kinds = {f.kind for f in out.faults}
    assert kinds == {kind}
    assert out.results["faults"][bad][kind] == len(out.faults) >= 1


@pytest.mark.e2e
def test_an_illegal_answer_names_the_rule_it_breaks():
    out, _ = run_with_faulty("illegal", game="aegis")
    assert all("rule 2." in f.detail for f in out.faults), [f.detail for f in out.faults]


@pytest.mark.e2e
def test_a_late_bot_spends_its_bank_then_is_defaulted():
    out, bad = run_with_faulty("late", extra=("--sleep", "0.4"), clock=Clock(0.1, 0.5))
    assert [f.kind for f in out.faults] == ["timeout"]


@pytest.mark.e2e
def test_a_bot_that_disconnects_mid_game():
    out, bad = run_with_faulty("disconnect")
    assert [f.kind for f in out.faults] == ["disconnect"]


@pytest.mark.e2e
def test_a_bot_that_sends_undecodable_bytes():
    out, bad = run_with_faulty("rawgarbage", game="aegis")
    assert [f.kind for f in out.faults] == ["disconnect"]


@pytest.mark.e2e
def test_a_bot_that_never_connects():
    out, bad = run_with_faulty("absent", game="aegis", connect_timeout=1.0)
    assert [f.kind for f in out.faults] == ["no_session"]


@pytest.mark.e2e
def test_tokens_and_versions_are_checked():
    async def test(server, bots):
        wrong = bots.proto("alice", token="nope")
        old = bots.proto("alice", "--version", "0", token="s3cret")
        unknown = bots.proto("mallory", token="s3cret")
        loop = asyncio.get_running_loop()
        codes = [await loop.run_in_executor(None, p.wait, 20) for p in (wrong, old, unknown)]
        errs = [p.stderr.read() for p in (wrong, old, unknown)]
        bots.proto("alice", token="s3cret")
        bots.proto("bob", token="hunter2")
        out = await server.arena.run_match("aegis", {}, ["alice", "bob"], seed=1)
        return codes, errs, out

    codes, errs, out = serve(test, tokens={"alice": "s3cret", "bob": "hunter2"})
    assert codes == [3, 3, 3]
    assert "wrong token" in errs[0] and "version 0" in errs[1] and "mallory" in errs[2]
    assert out.faults == []


@pytest.mark.e2e
def test_a_session_acts_only_for_its_own_seats():
    """A reply naming a seat the session does not play is never applied; it is charged. (Tried at
    the first three requests only: each is a message more than the session was asked for, and past
    the allowance those close the session: test_unasked_messages_past_the_allowance_close_the_session.)"""
    async def test(server, bots):
        bots.proto("b")
        channel = grpc.aio.insecure_channel(server.address)
        stub = pb_grpc.RefereeStub(channel)
        outbox: asyncio.Queue = asyncio.Queue()
        await outbox.put(pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name="a", capacity=1)))

        async def messages():
            while (m := await outbox.get()) is not None:
                yield m

        call = stub.Play(messages())
        match = asyncio.create_task(server.arena.run_match("aegis", {}, ["a", "b"], seed=3))
        tries = 3
        async for message in call:
            if message.WhichOneof("kind") == "request":
                req = message.request
                other = 1 - req.seat
                # try to act for the opponent, then answer our own request properly
                if tries:
                    tries -= 1
                    await outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=req.request_id + 1,
                                                                         game_id=req.game_id, seat=other, index=0)))
                await outbox.put(pb.BotMessage(action=pb.ActionReply(request_id=req.request_id,
                                                                     game_id=req.game_id, seat=req.seat, index=0)))
            if message.WhichOneof("kind") == "game_end":
                break
        await outbox.put(None)
        out = await match
        await channel.close()
        return out

    out = serve(test)
    assert out.state.is_terminal()
    # every attempt to act for the opponent was refused and charged to the session's own seat
    assert {(f.seat, f.kind) for f in out.faults} == {(0, "wrong_id")}
    assert out.results["faults"][1] == dict.fromkeys(out.results["faults"][1], 0)
    assert "does not play" in out.faults[0].detail


@pytest.mark.e2e
def test_spectators_see_public_events_then_the_record():
    async def test(server, bots):
        for name in "ab":
            bots.proto(name)
        match = asyncio.create_task(server.arena.run_match("aegis", {}, ["a", "b"], seed=4, game_id="watched"))
        while "watched" not in server.arena.matches:
            await asyncio.sleep(0.01)
        channel = grpc.aio.insecure_channel(server.address)
        stub = pb_grpc.RefereeStub(channel)
        seen = [m async for m in stub.Spectate(pb.SpectateRequest(game_id="watched"))]
        listing = await stub.ListGames(pb.ListGamesRequest())
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            [m async for m in stub.Spectate(pb.SpectateRequest(game_id="nope"))]
        await channel.close()
        return await match, seen, listing, missing.value.code()

    out, seen, listing, missing = serve(test)
    kinds = [m.WhichOneof("kind") for m in seen]
    assert kinds[0] == "game_start" and kinds[-2:] == ["game_end", "record_json"]
    events = [m.event for m in seen if m.WhichOneof("kind") == "event"]
    public = out.state.public_events()
    assert [(e.kind, json.loads(e.data_json)) for e in events] == [(e.kind, e.data) for e in public]
    assert len(public) < len(out.state.events)  # hands and exchanges were private
    assert json.loads(seen[-1].record_json)["actions"] == records.to_record(out.state)["actions"]
    assert [g.game_id for g in listing.games] == ["watched"] and listing.games[0].finished
    assert missing == grpc.StatusCode.NOT_FOUND


@pytest.mark.e2e
def test_health_and_reflection():
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    async def test(server, bots):
        channel = grpc.aio.insecure_channel(server.address)
        health = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="referee.v1.Referee"))
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)

        async def ask():
            yield reflection_pb2.ServerReflectionRequest(list_services="")

        services = [r async for r in stub.ServerReflectionInfo(ask())]
        await channel.close()
        return health.status, [s.name for s in services[0].list_services_response.service]

    status, names = serve(test)
    assert status == 1  # SERVING
    assert "referee.v1.Referee" in names and "grpc.health.v1.Health" in names


@pytest.mark.e2e
def test_run_match_rpc_needs_the_admin_token():
    async def test(server, bots):
        for name in "ab":
            bots.proto(name)
        channel = grpc.aio.insecure_channel(server.address)
        stub = pb_grpc.RefereeStub(channel)
        request = pb.RunMatchRequest(game="aegis", lineup=["a", "b"], seed=3)
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await stub.RunMatch(request)
        request.admin_token = "root"
        response = await stub.RunMatch(request)
        request.game = "chess"
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await stub.RunMatch(request)
        await channel.close()
        return denied.value.code(), response, bad.value

    denied, response, bad = serve(test, admin_token="root")
    assert denied == grpc.StatusCode.PERMISSION_DENIED
    assert json.loads(response.faults_json) == []
    record = json.loads(response.record_json)
    assert records.replay(record).results["scores"] == json.loads(response.results_json)["scores"]
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT and "chess" in bad.details()


def test_a_batching_session_gets_what_is_queued_in_one_message_and_others_one_by_one():
    async def drain(batching: bool) -> list:
        arena = Arena()
        session = arena.open_session(pb.Hello(protocol_version=1, bot_name="b", batching=batching))
        first, second = (wire.welcome(f"s{i}", "test") for i in range(2))
        session.send(first)
        session.send(second)
        session.close()
        out = []
        while (message := await session.next_message()) is not None:
            out.append(message)
        return out

    batched = asyncio.run(drain(True))
    assert [m.WhichOneof("kind") for m in batched] == ["batch"]
    assert [m.welcome.session_id for m in batched[0].batch.messages] == ["s0", "s1"]
    alone = asyncio.run(drain(False))
    assert [m.welcome.session_id for m in alone] == ["s0", "s1"]


def test_a_batch_may_answer_only_open_requests_and_a_second_oversized_one_closes_the_session():
    from referee.play.arena import SessionSeat
    from referee.runner import Decision, GameInfo

    async def go():
        arena = Arena()
        session = arena.open_session(pb.Hello(protocol_version=1, bot_name="b", batching=True, capacity=2))
        charged: list[str] = []
        seat = SessionSeat(session, lambda: None)
        seat.report_stray = charged.append
        session.reserved += 1
        await seat.start(GameInfo("g", "aegis", {}, 0, ("b", "c"), Clock()))
        asking = asyncio.create_task(seat.decide(Decision(7, "g", 0, {}, (0,), ("PASS",), 1.0, 1.0)))
        await asyncio.sleep(0)
        reply = pb.ActionReply(request_id=7, game_id="g", seat=0, name="PASS")
        assert session.open_requests == 1
        assert session.on_replies([reply, reply], batched=True)  # two replies, one request open: not read
        assert not asking.done() and len(charged) == 1
        assert "a batch of 2 replies with 1 request(s) open: ignored" in charged[0]
        assert session.on_replies([reply], batched=True)  # as many as are open: read
        assert (await asking).name == "PASS" and session.open_requests == 0
        assert session.on_replies([reply], batched=False)  # one reply alone is not a batch: a stray, charged
        assert len(charged) == 2 and "no request is open" in charged[1]
        assert not session.on_replies([reply, reply], batched=True)  # the second oversized batch
        arena.close_session(session)
        return session.expelled, session.closed

    expelled, closed = asyncio.run(go())
    assert closed and expelled == "closed by the referee: a second oversized batch (a batch of 2 replies with 0 " \
                                  "request(s) open)"


def test_a_claim_waits_without_polling_gone_and_stops_when_woken():
    """gone() is asked when the claim starts and each time it is woken, not on a timer."""
    async def go():
        arena, asked, dead = Arena(), [], [False]

        def gone(bot: str) -> bool:
            asked.append(bot)
            return dead[0]

        loop = asyncio.get_running_loop()
        claim = asyncio.create_task(arena.claim("b", loop.time() + 30, gone))
        await asyncio.sleep(0.6)
        assert not claim.done() and asked == ["b"]
        dead[0] = True
        arena.wake()
        assert await asyncio.wait_for(claim, 1) is None
        return asked

    assert asyncio.run(go()) == ["b", "b"]


def test_a_bot_admitted_for_one_match_is_refused_once_dismissed():
    from referee.play.arena import RefusalReason, Refused

    async def go():
        arena = Arena(tokens={"a": "s3cret"})
        hello = pb.Hello(protocol_version=wire.PROTOCOL_VERSION, bot_name="a#1", token="t1", capacity=1)
        with pytest.raises(Refused) as before:
            arena.open_session(hello)
        arena.admit("a#1", "t1")
        session = arena.open_session(hello)
        arena.close_session(session)
        arena.dismiss("a#1")
        with pytest.raises(Refused) as after:
            arena.open_session(hello)
        return before.value.reason, session.bot_name, after.value.reason

    assert asyncio.run(go()) == (RefusalReason.BAD_TOKEN, "a#1", RefusalReason.BAD_TOKEN)


def test_an_instance_name_uses_its_bots_token_and_counts_against_its_bots_sessions():
    """NAME#TAG (one run's bots on a shared server) connects with NAME's token; all instances of a
    bot together have at most max_sessions_per_bot sessions."""
    from referee.play.arena import RefusalReason, Refused

    async def go():
        arena = Arena(tokens={"a": "s3cret"}, max_sessions_per_bot=2)

        def hello(name: str, token: str = "s3cret"):
            return pb.Hello(protocol_version=wire.PROTOCOL_VERSION, bot_name=name, token=token)

        tagged = arena.open_session(hello("a#run1"))
        with pytest.raises(Refused) as wrong:
            arena.open_session(hello("a#run2", token="nope"))
        arena.open_session(hello("a"))
        with pytest.raises(Refused) as third:
            arena.open_session(hello("a#run3"))
        return tagged.bot_name, wrong.value.reason, third.value.reason

    assert asyncio.run(go()) == ("a#run1", RefusalReason.BAD_TOKEN, RefusalReason.TOO_MANY_SESSIONS)


def _hello_answer(server, hello: pb.Hello | None) -> pb.RefereeMessage:
    """The first message the referee sends on a new stream that sends ``hello`` (or nothing)."""
    async def ask():
        async with grpc.aio.insecure_channel(server.address) as channel:
            sent = asyncio.Event()

            async def messages():
                if hello is not None:
                    yield pb.BotMessage(hello=hello)
                await sent.wait()  # keep the stream open until the answer is in

            call = pb_grpc.RefereeStub(channel).Play(messages())
            try:
                return await call.read()
            finally:
                sent.set()
                call.cancel()
    return ask()


@pytest.mark.e2e
def test_a_stream_that_never_says_hello_is_closed_at_the_deadline():
    async def test(server, bots):
        started = asyncio.get_running_loop().time()
        answer = await _hello_answer(server, None)
        return answer, asyncio.get_running_loop().time() - started

    answer, waited = serve(test, hello_timeout=0.5)
    assert answer.refusal.reason == pb.Refusal.BAD_HELLO and "no Hello within 0.5 s" in answer.refusal.message
    assert 0.4 < waited < 5


@pytest.mark.e2e
def test_an_oversized_name_and_a_non_ascii_token_are_refused_and_logged_in_bounded_size(caplog):
    from referee.play.server import MAX_MESSAGE_BYTES

    async def hello(server, **fields) -> pb.RefereeMessage | grpc.aio.AioRpcError:
        try:
            return await _hello_answer(server, pb.Hello(protocol_version=wire.PROTOCOL_VERSION, **fields))
        except grpc.aio.AioRpcError as err:
            return err

    async def test(server, bots):
        return (await hello(server, bot_name="m" * 4_000_000), await hello(server, bot_name="m" * 200_000),
                await hello(server, bot_name="alice", token="s3crét✓"),
                await hello(server, bot_name="alice", token="t" * 200_000))

    with caplog.at_level("INFO", logger="referee"):
        four_mb, long_name, odd_token, long_token = serve(test, tokens={"alice": "s3cret"})
    # 4 MB: past the largest message the server reads, the stream is cut before the Hello is decoded
    assert isinstance(four_mb, grpc.aio.AioRpcError) and four_mb.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"vs. {MAX_MESSAGE_BYTES}" in four_mb.details()
    assert long_name.refusal.reason == pb.Refusal.BAD_HELLO and "200000 characters" in long_name.refusal.message
    assert len(long_name.refusal.message) < 200
    assert odd_token.refusal.reason == pb.Refusal.BAD_TOKEN and long_token.refusal.reason == pb.Refusal.BAD_TOKEN
    assert max(len(r.getMessage()) for r in caplog.records) < 400


@pytest.mark.e2e
def test_many_streams_without_a_hello_are_all_answered_and_closed():
    async def test(server, bots):
        started = asyncio.get_running_loop().time()
        answers = await asyncio.gather(*(_hello_answer(server, None) for _ in range(300)))
        return answers, asyncio.get_running_loop().time() - started

    answers, waited = serve(test, hello_timeout=1.0)
    reasons = [a.refusal.reason for a in answers]
    assert reasons == [pb.Refusal.BAD_HELLO] * 300
    late = [a for a in answers if "already waiting" in a.refusal.message]
    assert len(late) >= 300 - 256 and waited < 10  # past the cap, refused at once; the rest at the deadline


@pytest.mark.e2e
def test_500_connections_that_never_say_hello_are_closed_after_the_deadline():
    """250 TCP connections that send nothing at all and 250 streams (each on a connection of its own)
    that never send their Hello: every one is closed at the deadline, none before it."""
    import socket

    async def closed_at(sock: socket.socket, loop) -> float:
        while await loop.sock_recv(sock, 4096):
            pass
        return loop.time()

    async def test(server, bots):
        loop = asyncio.get_running_loop()
        host, port = server.address.rsplit(":", 1)
        sockets = []
        started = loop.time()
        for _ in range(250):
            sock = socket.create_connection((host, int(port)))
            sock.setblocking(False)
            sockets.append(sock)
        try:
            closed, answers = await asyncio.wait_for(asyncio.gather(
                asyncio.gather(*(closed_at(sock, loop) for sock in sockets)),
                asyncio.gather(*(_hello_answer(server, None) for _ in range(250)))), 60)
        finally:
            for sock in sockets:
                sock.close()
        return [t - started for t in closed], answers, loop.time() - started

    closed, answers, waited = serve(test, hello_timeout=1.0)
    assert len(closed) == 250 and min(closed) >= 0.9, sorted(closed)[:5]
    assert [a.refusal.reason for a in answers] == [pb.Refusal.BAD_HELLO] * 250
    assert all("no Hello within 1 s" in a.refusal.message for a in answers)
    assert waited < 30


# --- a flood costs the flooder (issue 35, item 7) ----------------------------------------------


#: the messages that answer no request a session may send (docs/protocol.md §2; arena.UNASKED_ALLOWANCE)
ALLOWANCE = 16


def test_messages_that_answer_no_request_past_the_allowance_close_the_session():
    """A session may send UNASKED_ALLOWANCE messages that answer no request (an answer with none open,
    a message holding no answer); the next closes it before any work on it, and the seat it plays is
    then lost as for a disconnect, with the reason. A late answer, after its request timed out, still
    answers that request, and an answer naming no game of the session's answers an open request all
    the same: neither is such a message."""
    from referee.play import arena as arena_module
    from referee.play.arena import SessionSeat
    from referee.runner import Decision, GameInfo, SeatGone

    def decision(request_id: int) -> Decision:
        return Decision(request_id, "g", 0, {}, (0,), ("PASS",), 1.0, 1.0)

    async def go():
        arena = Arena()
        session = arena.open_session(pb.Hello(protocol_version=1, bot_name="b", capacity=1))
        seat = SessionSeat(session, lambda: None)
        session.reserved += 1
        await seat.start(GameInfo("g", "aegis", {}, 0, ("b", "c"), Clock()))
        with pytest.raises(TimeoutError):  # the runner gives up on request 7: it stays open
            async with asyncio.timeout(0.01):
                await seat.decide(decision(7))
        late = pb.ActionReply(request_id=7, game_id="g", seat=0, name="PASS")
        assert session.on_replies([late], batched=False)
        elsewhere = pb.ActionReply(request_id=1 << 39, game_id="no-such-game", seat=0, name="X")
        for n in range(ALLOWANCE):  # answers with no request open, and messages holding none
            assert session.on_replies([elsewhere] if n % 2 else [], batched=False)
        asking = asyncio.create_task(seat.decide(decision(8)))
        await asyncio.sleep(0)
        assert session.on_replies([elsewhere], batched=False)  # it answers request 8 (wrongly, but it does)
        assert not session.on_replies([elsewhere], batched=False), "one more than allowed, and the session stays"
        arena.close_session(session)
        with pytest.raises(SeatGone) as gone:
            await asking
        return session, str(gone.value)

    session, gone = asyncio.run(go())
    assert session.closed and session.unasked == ALLOWANCE + 1
    assert session.expelled == gone == (f"closed by the referee: {ALLOWANCE + 1} messages that answer no request "
                                        f"(the last: an answer with no request open; a session may send {ALLOWANCE})")
    assert arena_module.UNASKED_ALLOWANCE == ALLOWANCE


@pytest.mark.e2e
def test_a_session_flooding_stray_replies_is_closed_and_its_seat_charged():
    """A real client holds a seat, then sends stray replies (for a game nobody plays) as fast as its
    stream takes them (referee/bench/stray_bots.py): past the allowance its stream ends with
    RESOURCE_EXHAUSTED and the reason, and its seat plays on by default, a disconnect charged with
    that reason; its opponent is charged nothing."""
    from referee.bench.stray_bots import flood_session

    async def test(server, bots):
        bots.proto("b")
        flooder = asyncio.create_task(asyncio.to_thread(flood_session, server.address, "a", "", "request"))
        out = await server.arena.run_match("aegis", {}, ["a", "b"], seed=3)
        return out, await asyncio.wait_for(flooder, 30)  # (unbounded, it would flood until the server stops)

    out, ended = serve(test)
    reason = f"closed by the referee: {ALLOWANCE + 1} messages that answer no request"
    assert ended["status"] == "RESOURCE_EXHAUSTED" and ended["details"].startswith(reason), ended
    # the client counts a stray once the stream asks for the next: the last one taken may go uncounted
    # (the call ends first); the referee's reason above says how many it took
    assert ended["requests"] >= 1 and ended["strays"] >= ALLOWANCE
    assert out.state.is_terminal()
    assert [(f.seat, f.kind) for f in out.faults] == [(0, "disconnect")]
    assert reason in out.faults[0].detail
    assert out.results["faults"][1] == dict.fromkeys(out.results["faults"][1], 0)


def test_a_bot_whose_seats_are_known_has_sessions_for_them_and_no_more():
    """Where the runner knows how many seats a bot plays at once, its sessions (NAME and NAME#TAG alike)
    may offer that many in all; a Hello beyond them waits for one to close (then is taken), or is
    refused after its patience; a process admitted for one match has a room of its own; a session the
    referee closed keeps its place a moment (EXPELLED_HOLD_S). A bot the runner does not know has at
    most max_sessions_per_bot."""
    from referee.play.arena import RefusalReason, Refused

    def hello(name: str, token: str = "t", capacity: int = 1) -> pb.Hello:
        return pb.Hello(protocol_version=wire.PROTOCOL_VERSION, bot_name=name, token=token, capacity=capacity)

    def refusal(call) -> str:
        with pytest.raises(Refused) as refused:
            call()
        assert refused.value.reason is RefusalReason.TOO_MANY_SESSIONS
        return str(refused.value)

    async def go():
        arena = Arena(tokens={"a": "t", "c": "t"}, max_sessions_per_bot=3)
        arena.seats = {"a": 2}  # as a runner says (RefereeServer(seats=...)): a plays 2 seats at once
        first = arena.open_session(hello("a"))
        arena.open_session(hello("a#x"))
        full = refusal(lambda: arena.open_session(hello("a")))
        waiting = asyncio.create_task(arena.open_session_when_room(hello("a"), 30))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        arena.close_session(first)
        taken = await asyncio.wait_for(waiting, 10)
        with pytest.raises(Refused) as patience:
            await arena.open_session_when_room(hello("a"), 0.05)
        arena.close_session(taken)
        big = arena.open_session(hello("a", capacity=2))  # one session, a capacity of 2: nothing more
        assert big.capacity == 2
        arena.admit("a#m1", "tm", seats=1)  # a process for one match: a room of its own
        mine = arena.open_session(hello("a#m1", token="tm"))
        one_match = refusal(lambda: arena.open_session(hello("a#m1", token="tm")))
        mine.expelled = "closed by the referee: a flood"
        arena.close_session(mine)
        held = refusal(lambda: arena.open_session(hello("a#m1", token="tm")))
        back = await asyncio.wait_for(arena.open_session_when_room(hello("a#m1", token="tm"), 30), 20)
        unknown = [arena.open_session(hello("c")) for _ in range(3)]
        many = refusal(lambda: arena.open_session(hello("c#y")))
        return full, str(patience.value), one_match, held, back.bot_name, len(unknown), many

    full, patience, one_match, held, back, unknown, many = asyncio.run(go())
    assert full == "bot 'a' plays at most 2 seat(s) at once, and its sessions offer 2 already (2 open)"
    assert patience == full + " (waited 0.05 s for one to close)"
    assert one_match == "bot 'a#m1' plays at most 1 seat(s) at once, and its sessions offer 1 already (1 open)"
    assert held.endswith("(0 open, 1 closed by the referee less than 1 s ago)")
    assert back == "a#m1" and unknown == 3
    assert many == "bot 'c' already has 3 sessions"
