"""The typed game data equal the JSON: every observation, event and result of random games of
every variant, as the referee sends them to bots that ask for both forms (Hello.data_form).

Each typed message is decoded with ``json_format.MessageToDict`` (what a proto3 JSON reader,
a stdio bot, sees) and turned back into the JSON's shape by the mapping rules documented in the
proto ("Game data, typed") and docs/protocol.md §9-10, read from the message descriptors: the
rules below are the whole of what differs. The result must equal the JSON exactly (every key,
every value, nothing more).
"""

from __future__ import annotations

import asyncio
import json
import random
from itertools import product
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from harness import serve

from referee.games import GAMES
from referee.play import wire
from referee.play.arena import Arena, Refused
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

# --- the documented mapping rules, in reverse ---------------------------------------------

#: event data that is a bare JSON value: the message's one field
BARE = {"ConfirmationDeal", "ConfirmationBid", "ConfirmationPlay", "ConfirmationTrickWon"}
#: JSON arrays of fixed length whose items mean different things: the message's fields, in order
TUPLES = {"AegisExchangeCounts", "AegisTrickCard"}
#: an inner array of an array of arrays: the message's one repeated field
LISTS = {"ConfirmationSeatChoices", "ConfirmationSeatBids", "ConfirmationTeam"}
#: lists of bids, where -1 is JSON's null
BIDS = {"bids", "bids_in_force"}
#: (message, field): a key the JSON leaves out when the list is empty
OMITTED_WHEN_EMPTY = {("ConfirmationResults", "teams")}


def as_json(descriptor, value: dict[str, Any]) -> Any:
    """A message decoded by MessageToDict (proto field names, every field printed) -> the JSON value."""
    out: dict[str, Any] = {}
    for field in descriptor.fields:
        if field.containing_oneof is not None and field.containing_oneof.name == "kind":
            continue  # an event message: handled below
        present = field.name in value
        if field.has_presence and not present:
            out[field.name] = None
            continue
        item = value[field.name]
        message = field.message_type if field.type == FieldDescriptor.TYPE_MESSAGE else None

        def convert(v, d=message):
            return v if d is None else as_json(d, v)

        if field.is_repeated:
            item = [convert(v) for v in item]
            if field.name in BIDS:
                item = [None if v == -1 else v for v in item]
            if not item and (descriptor.name, field.name) in OMITTED_WHEN_EMPTY:
                continue
        else:
            item = convert(item)
        out[field.name] = item
    if "kind" in descriptor.oneofs_by_name:  # an event: the one field set, named as the event's kind
        (kind, data), = value.items()
        field = descriptor.fields_by_name[kind]
        return kind, as_json(field.message_type, data)
    if descriptor.name in BARE:
        (only,) = out.values()
        return only
    if descriptor.name in TUPLES:
        return list(out.values())
    if descriptor.name in LISTS:
        (only,) = out.values()
        return only
    return out


def decoded(message, oneof: str) -> tuple[str, Any]:
    """(the name of the oneof's field that is set, its value in the JSON's shape), through MessageToDict."""
    name = message.WhichOneof(oneof)
    assert name is not None, f"{type(message).__name__}.{oneof} is not set"
    typed = getattr(message, name)
    as_dict = json_format.MessageToDict(typed, preserving_proto_field_name=True,
                                        always_print_fields_with_no_presence=True)
    return name, as_json(typed.DESCRIPTOR, as_dict)


class Checked:
    """Counts what the comparisons covered, so that the test cannot pass on nothing."""

    def __init__(self) -> None:
        self.observations: dict[str, int] = {}
        self.kinds: dict[str, set[str]] = {}
        self.ends = 0
        self.failures: list[Exception] = []

    def event(self, game: str, event: pb.GameEvent) -> None:
        name, (kind, data) = decoded(event, "data")
        assert (name, kind) == (game, event.kind)
        assert data == json.loads(event.data_json), (game, event.kind)
        self.kinds.setdefault(game, set()).add(kind)

    def request(self, game: str, request: pb.DecisionRequest) -> None:
        name, observation = decoded(request, "observation")
        assert {"game": name, **observation} == json.loads(request.observation_json)
        self.observations[game] = self.observations.get(game, 0) + 1
        for event in request.events:
            self.event(game, event)

    def end(self, game: str, end: pb.GameEnd) -> None:
        name, results = decoded(end, "results")
        faults = [json_format.MessageToDict(f, preserving_proto_field_name=True,
                                            always_print_fields_with_no_presence=True) for f in end.faults]
        rebuilt = {"scores": list(end.scores), "placing": list(end.placing), **results, "faults": faults}
        assert name == game and rebuilt == json.loads(end.results_json)
        for event in end.events:
            self.event(game, event)
        self.ends += 1


# --- random games of every variant, through the arena -----------------------------------------

CONFIRMATION = [{"rounds": 2, "double": d, "blind": b, "pairs": p, "trump": t}
                for d, b, p, t in product([False, True], [False, True], [False, True], ["dealer-card", "random-suit"])]
AEGIS = [{"promise": p} for p in ("table", "4plus")]


async def _bot(arena: Arena, name: str, game: str, checked: Checked, careless: bool) -> None:
    """A session asking for both forms; it checks every message, answers at random (``careless``:
    now and then an illegal or malformed answer, for the results' fault counts). A failed check
    ends the session (its seats play by default, quickly) and is raised by play_all."""
    session = arena.open_session(pb.Hello(protocol_version=1, bot_name=name, capacity=8, data_form=pb.DATA_BOTH))
    try:
        await _answer(session, game, checked, careless, random.Random(name))
    except Exception as failed:
        checked.failures.append(failed)
        arena.close_session(session)


async def _answer(session, game: str, checked: Checked, careless: bool, rng: random.Random) -> None:
    while (message := await session.outbox.get()) is not None:
        message = pb.RefereeMessage.FromString(message.SerializeToString())  # as the bot reads it
        kind = message.WhichOneof("kind")
        if kind == "request":
            r = message.request
            checked.request(game, r)
            reply = pb.ActionReply(request_id=r.request_id, game_id=r.game_id, seat=r.seat,
                                   index=rng.randrange(len(r.legal_actions)))
            if careless and rng.random() < 0.05:
                reply.name = rng.choice(["XYZZY", "AS", "BID 0", "PASS"])
            session.on_reply(reply)
        elif kind == "game_end":
            checked.end(game, message.game_end)


async def _close(arena: Arena, bots: list[asyncio.Task]) -> None:
    """End every session: each bot reads what is left in its outbox, then returns."""
    for sessions in list(arena.sessions.values()):
        for session in list(sessions):
            arena.close_session(session)
    await asyncio.gather(*bots)


def play_all(game: str, variants: list[dict], seeds: range) -> tuple[Checked, list]:
    checked = Checked()

    async def main():
        arena = Arena()
        names = [f"{game[0]}{i}" for i in range(GAMES[game].num_seats)]
        bots = [asyncio.create_task(_bot(arena, n, game, checked, careless=i == 1)) for i, n in enumerate(names)]
        await asyncio.sleep(0)
        outcomes = [await arena.run_match(game, options, names, seed=seed)
                    for options in variants for seed in seeds]
        await _close(arena, bots)
        return outcomes

    outcomes = asyncio.run(main())
    if checked.failures:
        raise checked.failures[0]
    return checked, outcomes


@pytest.fixture(scope="module")
def confirmation():
    return play_all("confirmation", CONFIRMATION, range(1))


@pytest.fixture(scope="module")
def aegis():
    return play_all("aegis", AEGIS, range(2))


def test_confirmation_typed_data_equal_the_json_in_every_variant(confirmation):
    checked, outcomes = confirmation
    assert checked.observations["confirmation"] > 1500
    assert checked.kinds["confirmation"] == {"round", "deal", "trump", "bid", "play", "trick", "choice", "score",
                                             "end"}
    assert checked.ends == 4 * len(outcomes) == 4 * len(CONFIRMATION)
    assert any(sum(f["illegal"] + f["malformed"] for f in o.results["faults"]) for o in outcomes)


def test_aegis_typed_data_equal_the_json_with_each_option(aegis):
    checked, outcomes = aegis
    assert checked.observations["aegis"] > 300
    assert checked.kinds["aegis"] == {"master_draw", "deal", "hand", "exchange", "exchange_cards", "stop",
                                      "exchange_end", "declare", "pass", "attacker", "play", "trick", "game_end",
                                      "match_end"}
    assert checked.ends == 2 * len(outcomes)


def test_spectators_get_the_typed_public_events_and_results(aegis):
    """What Spectate sends (wire.spectator_event, spectator_end) with each form."""
    checked = Checked()
    for outcome in aegis[1][:2]:
        public = outcome.state.public_events()
        for index, event in enumerate(public):
            both = wire.spectator_event("g", index, event, pb.DATA_BOTH, "aegis").event
            checked.event("aegis", pb.GameEvent.FromString(both.SerializeToString()))
            typed = wire.spectator_event("g", index, event, pb.DATA_TYPED, "aegis").event
            assert typed.data_json == "" and typed.aegis == both.aegis
            assert wire.spectator_event("g", index, event).event.WhichOneof("data") is None
        checked.end("aegis", wire.spectator_end("g", outcome.results, pb.DATA_BOTH, "aegis").game_end)
    assert checked.ends == 2


def test_each_session_gets_the_form_it_asked_for():
    """JSON only by default (as before typed data came), typed only, or both; a bad form is refused."""
    seen: dict[int, list[pb.RefereeMessage]] = {}

    async def main():
        arena = Arena()

        async def bot(name: str, form: int) -> None:
            session = arena.open_session(pb.Hello(protocol_version=1, bot_name=name, data_form=form))
            seen[form] = []
            while (message := await session.outbox.get()) is not None:
                seen[form].append(message)
                if message.WhichOneof("kind") == "request":
                    r = message.request
                    session.on_reply(pb.ActionReply(request_id=r.request_id, game_id=r.game_id, seat=r.seat, index=0))

        tasks = [asyncio.create_task(bot(n, f)) for n, f in (("j", pb.DATA_JSON), ("t", pb.DATA_TYPED))]
        await asyncio.sleep(0)
        await arena.run_match("aegis", {}, ["j", "t"], seed=1)
        with pytest.raises(Refused, match="data_form 7"):
            arena.open_session(pb.Hello(protocol_version=1, bot_name="x", data_form=7))
        await _close(arena, tasks)

    asyncio.run(main())
    json_only = [m.request for m in seen[pb.DATA_JSON] if m.WhichOneof("kind") == "request"]
    typed_only = [m.request for m in seen[pb.DATA_TYPED] if m.WhichOneof("kind") == "request"]
    assert json_only and typed_only
    assert all(r.observation_json and r.WhichOneof("observation") is None for r in json_only)
    assert all(not e.data_json and e.WhichOneof("data") == "aegis" for r in typed_only for e in r.events)
    assert all(not r.observation_json and r.WhichOneof("observation") == "aegis" for r in typed_only)
    ends = {form: [m.game_end for m in messages if m.WhichOneof("kind") == "game_end"]
            for form, messages in seen.items()}
    assert ends[pb.DATA_JSON][0].results_json and ends[pb.DATA_JSON][0].WhichOneof("results") is None
    (typed_end,) = ends[pb.DATA_TYPED]
    assert not typed_end.results_json and typed_end.WhichOneof("results") == "aegis"
    assert len(typed_end.faults) == 2 and typed_end.aegis.num_games == len(typed_end.aegis.games) > 0


def test_spectate_takes_a_data_form_and_refuses_a_bad_one():
    async def test(server, bots):
        arena = server.arena
        names = ["a", "b"]

        async def bot(name: str) -> None:
            session = arena.open_session(pb.Hello(protocol_version=1, bot_name=name))
            while (message := await session.outbox.get()) is not None:
                if message.WhichOneof("kind") == "request":
                    r = message.request
                    session.on_reply(pb.ActionReply(request_id=r.request_id, game_id=r.game_id, seat=r.seat, index=0))

        tasks = [asyncio.create_task(bot(n)) for n in names]
        await asyncio.sleep(0)
        await arena.run_match("aegis", {}, names, seed=2, game_id="w")
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = pb_grpc.RefereeStub(channel)
            seen = [m async for m in stub.Spectate(pb.SpectateRequest(game_id="w", data_form=pb.DATA_TYPED))]
            with pytest.raises(grpc.aio.AioRpcError) as bad:
                [m async for m in stub.Spectate(pb.SpectateRequest(game_id="w", data_form=9))]
        await _close(arena, tasks)
        return seen, bad.value

    seen, bad = serve(test)
    events = [m.event for m in seen if m.WhichOneof("kind") == "event"]
    assert events and all(e.WhichOneof("data") == "aegis" and not e.data_json for e in events)
    (end,) = [m.game_end for m in seen if m.WhichOneof("kind") == "game_end"]
    assert end.WhichOneof("results") == "aegis" and not end.results_json
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT and "data_form 9" in bad.details()


def test_every_game_has_typed_messages_in_every_oneof():
    """A game in the registry without its typed messages (or its oneof fields) fails here, by name."""
    assert set(wire.TYPED) == set(GAMES)
    for container, oneof in ((pb.DecisionRequest, "observation"), (pb.GameEvent, "data"), (pb.GameEnd, "results")):
        assert {f.name for f in container.DESCRIPTOR.oneofs_by_name[oneof].fields} == set(GAMES)


def test_the_reverse_mapping_catches_a_wrong_value():
    """The comparison is not blind: a typed value changed anywhere makes the two differ."""
    state = GAMES["confirmation"].new({"rounds": 1, "pairs": True}, seed=3)
    observation = state.observation(0)
    request = wire.request(_decision(observation), (), pb.DATA_BOTH, "confirmation").request
    name, value = decoded(request, "observation")
    assert {"game": name, **value} == observation
    for mutate in (lambda o: o.bids.__setitem__(0, 0), lambda o: o.ClearField("partner"),
                   lambda o: o.choices[1].words.append("CONFIRM"), lambda o: o.hand.pop()):
        changed = pb.DecisionRequest()
        changed.CopyFrom(request)
        mutate(changed.confirmation)
        assert {"game": name, **decoded(changed, "observation")[1]} != observation


def _decision(observation: dict) -> Any:
    from referee.runner import Decision

    return Decision(1, "g", observation["seat"], observation, (52,), ("BID 0",), 1.0, 1.0)


def test_the_examples_of_docs_protocol_md_show_one_observation_in_both_forms():
    """§9 and §10 show an observation as JSON and then typed, as proto3 JSON prints it."""
    import re

    from harness import ROOT

    text = (ROOT / "docs" / "protocol.md").read_text()
    blocks = {(form, game): json.loads(body) for form, game, body in
              re.findall(r"<!-- (observation|typed)-example: (\w+) -->\n```json\n(.*?)```", text, re.S)}
    assert sorted(blocks) == [("observation", "aegis"), ("observation", "confirmation"),
                              ("typed", "aegis"), ("typed", "confirmation")]
    for game in GAMES:
        observation = blocks["observation", game]
        request = wire.request(_decision(observation), (), pb.DATA_TYPED, game).request
        printed = json_format.MessageToDict(getattr(request, game))  # lowerCamelCase, as the stdio relay prints
        assert printed == blocks["typed", game], game
