"""A gRPC bot for both games that asks for both forms of the game data, written from the docs alone.

Written by the `newcomer` helper (issue 26's "done when") from docs/protocol.md (§2-§5, §9, §10, §13-§15)
and proto/referee/v1/referee.proto, without reading the referee's source, its sample bots or its tests.
Its stubs are the ones `referee/v1/` holds, generated from the .proto (protocol.md §13, which
shows how to make your own).

It says `Hello.data_form = DATA_BOTH` and checks, on every request, event and GameEnd, both forms with
check_observation.py: the JSON form (`observation_json`, `data_json`, `results_json`) against the
tables as it is, the typed form as proto3 JSON prints it (`json_format.MessageToDict`, what a stdio bot
reads, §16), and that the typed form decoded by §3's rules is the JSON form. Each difference is a line
`MISMATCH ...` on stderr; each game ends with a line `checked GAME_ID seat N: ...`. It plays as
stdio_bot.py does (the same rules, from the JSON form).
"""

import argparse
import json
import queue
import sys

import grpc
from check_observation import check_envelope, check_event, check_observation, check_results
from google.protobuf import json_format
from stdio_bot import DECIDE, Seat, finished, log, report

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc


def typed_dict(message):
    return json_format.MessageToDict(message)  # lowerCamelCase, defaults left out, int64 as strings


def on_request(request, state):
    game_id, seat, legal = request.game_id, request.seat, list(request.legal_actions)
    for event in request.events:
        check_both_events(state, game_id, seat, event)
    choice = legal[0]
    try:
        if request.WhichOneof("observation") != state.game:
            report(state, game_id, seat, [f"the typed observation is {request.WhichOneof('observation')!r}"])
        as_json = json.loads(request.observation_json)
        problems, _ = check_observation(state.game, as_json, seat, legal, state.options, typed=False)
        typed_problems, decoded = check_observation(state.game, typed_dict(getattr(request, state.game)), seat,
                                                    legal, state.options, typed=True)
        problems += [f"typed: {problem}" for problem in typed_problems]
        if not problems and decoded != as_json:
            problems.append(f"the typed observation decodes to {decoded}, the JSON form is {as_json}")
        state.observations += 1
        report(state, game_id, seat, problems)
        if not problems:
            choice = DECIDE[state.game](as_json, legal)
    except Exception as error:  # a checker or strategy bug costs a decision, never the game
        report(state, game_id, seat, [f"the bot failed on this request: {error!r}"])
    return pb.ActionReply(request_id=request.request_id, game_id=game_id, seat=seat, name=choice)


def check_both_events(state, game_id, seat, event):
    state.events += 1
    typed = typed_dict(event)
    problems, state.last_index = check_envelope(state.game, typed, game_id, seat, state.options, state.last_index)
    problems += check_event(state.game, typed, typed=True, options=state.options)
    problems += check_event(state.game, {"kind": event.kind, "data": json.loads(event.data_json)}, typed=False,
                            options=state.options)
    report(state, game_id, seat, problems)


def on_game_end(end, state):
    for event in end.events:
        check_both_events(state, end.game_id, end.seat, event)
    results = json.loads(end.results_json)
    problems = check_results(state.game, typed_dict(end), typed=True, seats=state.seats)
    problems += check_results(state.game, results, typed=False, seats=state.seats)
    if results.get("scores") != list(end.scores) or results.get("placing") != list(end.placing):
        problems.append(f"results_json's scores and placing {results.get('scores')} {results.get('placing')} "
                        f"are not GameEnd's {list(end.scores)} {list(end.placing)}")
    report(state, end.game_id, end.seat, problems)
    finished(state, end.game_id, end.seat, list(end.scores))


def main():
    parser = argparse.ArgumentParser(description="a docs-only gRPC bot asking for both forms")
    parser.add_argument("--address", default="localhost:50051")
    parser.add_argument("--name", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--token-fd", type=int)
    parser.add_argument("--capacity", type=int, default=1)
    args = parser.parse_args()
    if args.token_fd is not None:  # §15: the first line of an inherited descriptor, read once, then closed
        if args.token:
            parser.error("give --token or --token-fd, not both")
        with open(args.token_fd, encoding="utf-8") as source:
            args.token = source.readline().strip()
    outbox = queue.Queue()  # §2: our side of the stream stays open for the whole session
    outbox.put(pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name=args.name, token=args.token,
                                            capacity=args.capacity, data_form=pb.DATA_BOTH)))
    stub = pb_grpc.RefereeStub(grpc.insecure_channel(args.address))
    seats = {}
    try:
        for message in stub.Play(iter(outbox.get, None)):
            kind = message.WhichOneof("kind")
            if kind == "game_start":
                start = message.game_start
                seats[(start.game_id, start.seat)] = Seat(typed_dict(start))
            elif kind == "request":
                state = seats[(message.request.game_id, message.request.seat)]
                outbox.put(pb.BotMessage(action=on_request(message.request, state)))
            elif kind == "game_end":
                on_game_end(message.game_end, seats.pop((message.game_end.game_id, message.game_end.seat)))
            elif kind == "result":
                log(f"substituted: {typed_dict(message.result)}")
            elif kind == "refusal":
                log(f"refused: {typed_dict(message.refusal)}")
                return 2
            elif kind != "welcome":
                log(f"MISMATCH: an undocumented message {kind!r}")
    except grpc.RpcError as err:  # §2: an error status is no end: the referee went away
        log(f"stream ended: {err.code().name} {err.details()}")
        return 1
    finally:
        outbox.put(None)
    return 0  # §2: the referee ended the stream with OK: no more games


if __name__ == "__main__":
    sys.exit(main())
