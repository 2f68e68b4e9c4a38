"""Records held back from spectators until released, and who may spectate (issue 15).

Here the mechanism, on an in-process server whose matches are played by default (no bot
comes): a held match's Spectate gives its public events, its end, ``record_held`` and
then waits for ReleaseRecords; Spectate and ListGames need the spectator token on a
server with bot tokens. tests/test_records_held_attacks.py plays whole deal sets with real processes
(a hostile bot, ``referee serve``, a spectator client).
"""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from referee import records
from referee.model import Seating
from referee.play.server import RefereeServer
from referee.results.release import Releases, held
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

TOKENS = {"a": "bot-a", "b": "bot-b"}


def serving(test, **server_args):
    """``await test(server, stub)`` against a fresh in-process server (no bots: seats play by default)."""
    async def main():
        async with RefereeServer(connect_timeout=0.05, **server_args) as server:
            async with grpc.aio.insecure_channel(server.address) as channel:
                return await test(server, pb_grpc.RefereeStub(channel))
    return asyncio.run(main())


async def watch(stub, game_id: str, token: str = "", timeout: float | None = None) -> list:
    return [m async for m in stub.Spectate(pb.SpectateRequest(game_id=game_id, token=token), timeout=timeout)]


def kinds(messages) -> list[str]:
    return [m.WhichOneof("kind") for m in messages]


# --- holding and releasing ---------------------------------------------------------------


SEED = 987_654_321_987  # long enough not to turn up in the messages' bytes by chance


async def read_until(call, kind: str) -> list:
    """The messages of a stream up to and including the first of ``kind``."""
    got = []
    while (message := await call.read()) is not grpc.aio.EOF:
        got.append(message)
        if message.WhichOneof("kind") == kind:
            break
    return got


async def read_rest(call) -> list:
    return await read_until(call, "none")


def test_a_held_record_waits_for_its_release_and_the_public_part_does_not():
    async def test(server, stub):
        arena = server.arena
        outcome = await arena.run_match("aegis", {}, ["a", "b"], seed=SEED, game_id="m1", hold=True)
        call = stub.Spectate(pb.SpectateRequest(game_id="m1"))
        early = await asyncio.wait_for(read_until(call, "record_held"), 10)
        rest = asyncio.create_task(read_rest(call))
        await asyncio.sleep(0.3)
        waiting = not rest.done()
        listed = (await stub.ListGames(pb.ListGamesRequest())).games
        released = await stub.ReleaseRecords(pb.ReleaseRecordsRequest(admin_token="adm", match_ids=["m1", "nope"]))
        seen = early + await asyncio.wait_for(rest, 10)
        again = await stub.ReleaseRecords(pb.ReleaseRecordsRequest(admin_token="adm", match_ids=["m1"]))
        late = await watch(stub, "m1")
        return outcome, waiting, listed, list(released.released), seen, list(again.released), late

    outcome, waiting, listed, released, seen, again, late = serving(test, admin_token="adm")
    assert waiting  # no record before the release
    assert [(g.game_id, g.finished, g.record_held) for g in listed] == [("m1", True, True)]
    assert released == ["m1"] and again == []
    assert kinds(seen)[0] == "game_start" and kinds(seen)[-3:] == ["game_end", "record_held", "record_json"]
    events = [m.event for m in seen if m.WhichOneof("kind") == "event"]
    public = outcome.state.public_events()
    assert [(e.kind, json.loads(e.data_json)) for e in events] == [(e.kind, e.data) for e in public]
    before = b"".join(m.SerializeToString() for m in seen[:-1])
    assert str(SEED).encode() not in before and b"decks" not in before
    assert json.loads(seen[-1].record_json) == json.loads(json.dumps(outcome.record))
    assert outcome.record["seed"] == SEED and str(SEED) in seen[-1].record_json
    assert kinds(late)[-2:] == ["game_end", "record_json"]  # released: no record_held any more
    assert records.replay(json.loads(late[-1].record_json)).results["scores"] == outcome.results["scores"]


def test_a_match_released_while_it_runs_gives_its_record_at_its_end_and_an_unheld_one_at_once():
    async def test(server, stub):
        arena = server.arena
        running = asyncio.create_task(arena.run_match("aegis", {}, ["a", "b"], seed=12, game_id="m2", hold=True))
        while "m2" not in arena.matches:
            await asyncio.sleep(0.01)
        watching = asyncio.create_task(watch(stub, "m2"))
        await asyncio.sleep(0.01)
        assert arena.release(["m2"]) == ["m2"]
        await running
        free = await arena.run_match("aegis", {}, ["a", "b"], seed=13, game_id="m3")
        return await asyncio.wait_for(watching, 10), await watch(stub, "m3"), free

    released, free, outcome = serving(test)
    assert kinds(released)[-2:] == ["game_end", "record_json"]
    assert kinds(free)[-2:] == ["game_end", "record_json"] and "record_held" not in kinds(free)
    assert json.loads(free[-1].record_json)["seed"] == 13 == outcome.record["seed"]


def test_a_held_match_the_server_forgets_ends_its_streams_without_the_record():
    async def test(server, stub):
        arena = server.arena
        arena.keep_finished = 1
        await arena.run_match("aegis", {}, ["a", "b"], seed=14, game_id="old", hold=True)
        watching = asyncio.create_task(watch(stub, "old"))
        await asyncio.sleep(0.2)
        for game_id in ("new", "newer"):  # the old one is forgotten as the newer one starts
            await arena.run_match("aegis", {}, ["a", "b"], seed=15, game_id=game_id, hold=True)
        watched = await asyncio.wait_for(watching, 5)
        listed = (await stub.ListGames(pb.ListGamesRequest())).games
        return watched, [g.game_id for g in listed]

    seen, listed = serving(test)
    assert kinds(seen)[-2:] == ["game_end", "record_held"] and listed == ["new", "newer"]


def test_release_records_needs_the_admin_token():
    async def test(server, stub):
        codes = []
        for token in ("", "wrong"):
            try:
                await stub.ReleaseRecords(pb.ReleaseRecordsRequest(admin_token=token, match_ids=["x"]))
            except grpc.aio.AioRpcError as err:
                codes.append((err.code(), err.details()))
        return codes

    codes = serving(test, admin_token="adm")
    assert codes == [(grpc.StatusCode.PERMISSION_DENIED, "ReleaseRecords needs the server's admin token")] * 2


@pytest.mark.parametrize("game", ["aegis", "confirmation"])
def test_no_message_to_a_bot_carries_the_seed_or_a_deck(game):
    """Every message the arena queues for the seats' sessions, GameStart to GameEnd (hidden cards:
    tests/test_protocol_leaks.py)."""
    from referee import games
    from referee.play.arena import Arena

    names = "abcd"[: games.get(game).num_seats]

    async def main():
        arena = Arena(connect_timeout=5)
        got: dict[str, list] = {name: [] for name in names}

        async def play(name: str) -> None:
            session = arena.open_session(pb.Hello(protocol_version=1, bot_name=name))
            while (message := await session.next_message()) is not None:
                got[name].append(message)
                if message.WhichOneof("kind") == "request":
                    r = message.request
                    session.on_reply(pb.ActionReply(request_id=r.request_id, game_id=r.game_id, seat=r.seat, index=0))
                elif message.WhichOneof("kind") == "game_end":
                    return

        players = [asyncio.create_task(play(name)) for name in names]
        outcome = await arena.run_match(game, {"rounds": 2} if game == "confirmation" else {}, list(names),
                                        seed=SEED, game_id="g", hold=True)
        await asyncio.wait_for(asyncio.gather(*players), 10)
        return outcome, got

    outcome, got = asyncio.run(main())
    assert outcome.faults == [] and outcome.record["seed"] == SEED
    for name, messages in got.items():
        kinds = [m.WhichOneof("kind") for m in messages]
        assert kinds[0] == "game_start" and kinds[-1] == "game_end" and "request" in kinds, kinds
        sent = b"".join(m.SerializeToString() for m in messages)
        assert str(SEED).encode() not in sent and b"decks" not in sent and b"seed" not in sent, name


# --- who may spectate ----------------------------------------------------------------------


async def attempts(server, stub) -> dict[str, object]:
    """Each way of asking to list and to watch, and what the server answered."""
    out: dict[str, object] = {}
    for token in ("", "wrong", "watch", "adm", "bot-a"):
        try:
            await stub.ListGames(pb.ListGamesRequest(token=token))
            out[f"list {token}"] = "ok"
        except grpc.aio.AioRpcError as err:
            out[f"list {token}"] = (err.code(), err.details())
        try:
            await watch(stub, "no-such-game", token)
        except grpc.aio.AioRpcError as err:
            code = err.code()
            out[f"watch {token}"] = code if code == grpc.StatusCode.NOT_FOUND else (code, err.details())
    return out


MISSING = (grpc.StatusCode.UNAUTHENTICATED,
           "this server needs a spectator token to watch or list games (the request's token field)")
WRONG = (grpc.StatusCode.PERMISSION_DENIED, "wrong spectator token")


def test_with_bot_tokens_watching_and_listing_need_the_spectator_or_the_admin_token():
    got = serving(attempts, tokens=TOKENS, spectator_token="watch", admin_token="adm")
    assert got == {"list ": MISSING, "watch ": MISSING, "list wrong": WRONG, "watch wrong": WRONG,
                   "list watch": "ok", "watch watch": grpc.StatusCode.NOT_FOUND,
                   "list adm": "ok", "watch adm": grpc.StatusCode.NOT_FOUND,
                   "list bot-a": WRONG, "watch bot-a": WRONG}


def test_with_bot_tokens_and_no_spectator_token_nobody_but_the_admin_may_watch():
    got = serving(attempts, tokens=TOKENS, admin_token="adm")
    assert {k: v for k, v in got.items() if v == "ok" or v == grpc.StatusCode.NOT_FOUND} == {
        "list adm": "ok", "watch adm": grpc.StatusCode.NOT_FOUND}
    local = serving(attempts, tokens=TOKENS)  # as a local tournament's in-process referee: nobody
    assert all(v in (MISSING, WRONG) for v in local.values()), local


@pytest.mark.parametrize("args", [dict(tokens=TOKENS, public_spectators=True), dict()], ids=["public", "no-tokens"])
def test_public_spectators_or_a_server_without_bot_tokens_let_anyone_watch(args):
    got = serving(attempts, **args)
    assert set(got.values()) == {"ok", grpc.StatusCode.NOT_FOUND}, got


# --- when a run releases ---------------------------------------------------------------------


def seatings(deal_sets: int) -> list[Seating]:
    return [Seating(k, 100 + k, lineup) for k in range(deal_sets) for lineup in (("a", "b"), ("b", "a"))]


def test_a_deal_set_is_released_once_its_last_match_is_stored():
    s = seatings(2)
    releases = Releases(s)
    assert releases.stored(s[0]) == [] and releases.stored(s[2]) == []
    assert releases.stored(s[1]) == [s[0].key, s[1].key]
    assert releases.stored(s[3]) == [s[2].key, s[3].key]


def test_with_release_end_everything_is_released_with_the_last_match():
    s = seatings(2)
    releases = Releases(s, mode="end")
    assert [releases.stored(x) for x in (s[0], s[1], s[3])] == [[], [], []]
    assert sorted(releases.stored(s[2])) == sorted(x.key for x in s)


def test_a_resumed_run_releases_what_it_played_of_a_deal_set_an_earlier_run_began():
    s = seatings(2)
    releases = Releases(s, stored=[s[0].key])  # played and stored by the interrupted run
    assert releases.stored(s[1]) == [s[1].key]  # the earlier run's record is not this referee's
    assert releases.stored(s[2]) == []
    with pytest.raises(ValueError, match="release must be one of deal-set, end"):
        Releases(s, mode="never")


def test_while_an_entry_did_not_start_a_run_releases_nothing_it_would_come_back_to_play():
    """Red team finding 3: it comes back on the next run and plays those deal sets."""
    s = seatings(2)
    for mode in ("deal-set", "end"):
        releases = Releases(s, mode=mode, awaited=[0, 1])
        assert [releases.stored(x) for x in s] == [[], [], [], []]
    releases = Releases(s, awaited=[1])  # it played deal set 0 before
    assert [releases.stored(x) for x in s] == [[], [s[0].key, s[1].key], [], []]


def test_a_deal_set_is_held_while_an_entry_still_to_play_may_play_it():
    keys = [x.key for x in seatings(3)]
    everything = held(keys, stored := {x.key: x.deal_set for x in seatings(3)})
    assert not everything and not any(everything.holds(k) for k in range(3)) and everything.why(0) is None
    unfinished = held(keys, dict(list(stored.items())[:3]))  # deal set 1 half played, deal set 2 not begun
    assert unfinished.unfinished == {1, 2} and not unfinished.holds(0) and unfinished.holds(1)
    assert unfinished.why(1).startswith("held until every match of deal set 1 is played")
    assert unfinished.line([1]) == ("1 match record(s) of deal set 1 held until every match of their deal set is "
                                    "played (an entry still to play one would know its cards)")
    waiting = held(keys, stored, waiting=["late"])  # complete, but late did not start: every deal set
    assert all(waiting.holds(k) for k in range(3))
    assert waiting.why(0) == ("held while late did not start (the next run tries it again, on every deal set): "
                              "released once it has played its matches, or is withdrawn (withdrawn = true)")
    # what it would come back to play, when the run recorded it: deal set 2 (it played 0 and 1 before)
    awaited = held(keys, stored, waiting=["late"], awaited=[2])
    assert [awaited.holds(k) for k in range(3)] == [False, False, True] and awaited.why(0) is None
    assert "on the deal sets it has matches of still to play" in awaited.why(2)
    assert not held(keys, stored, waiting=["late"], awaited=[])  # nothing left for it: nothing held
    # no schedule recorded (an SPRT's directory): a deal set with fewer matches than the fullest is unfinished
    assert held([], dict(list(stored.items())[:3])).unfinished == {1}


def test_the_release_key_of_a_tournament_file_is_checked(tmp_path):
    from harness import write_tournament

    from referee.competition.config import load
    from referee.model import ConfigError

    bots = '[[bots]]\nname = "a"\ncommand = ["true"]\n\n[[bots]]\nname = "b"\ncommand = ["true"]\n'
    files = {value: write_tournament(tmp_path / f"{i}.toml", bots, game="aegis", deal_sets=1, seed=1, concurrency=1,
                                     extra=f'release = "{value}"' if value else "")
             for i, value in enumerate(["", "end", "never"])}
    assert load(files[""]).release == "deal-set" and load(files["end"]).release == "end"
    with pytest.raises(ConfigError, match=r"2\.toml:\d+: tournament\.release must be one of deal-set, end, "
                                          r"got 'never'"):
        load(files["never"])
