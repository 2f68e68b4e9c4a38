"""Section 3b: the referee's own work per decision, without the transport.

The arena runs matches exactly as the server does (sessions, seat links,
the runner, every message built by ``wire.py`` and protobuf-encoded), but
each session's messages are taken straight from its outbox by a coroutine
that answers requests at once, so no gRPC, no socket and no other process
is involved. The CPU time per decision is therefore the referee's own:
rules, observation, JSON, protobuf, the clock and fault checks, and
asyncio scheduling. ``data_form`` is the form of the game data the bots ask
for (``Hello.data_form``): JSON (the default), typed, or both.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from referee.games import GAMES
from referee.games.base import GameState
from referee.play import wire
from referee.play.arena import Arena
from referee.v1 import referee_pb2 as pb


async def _answer(arena: Arena, name: str, data_form: pb.DataForm) -> None:
    session = arena.open_session(pb.Hello(protocol_version=wire.PROTOCOL_VERSION, bot_name=name, capacity=256,
                                          data_form=data_form))
    rng = random.Random(name)
    while (message := await session.outbox.get()) is not None:
        message.SerializeToString()  # what gRPC does with each message
        if message.WhichOneof("kind") == "request":
            r = message.request
            reply = pb.BotMessage(action=pb.ActionReply(request_id=r.request_id, game_id=r.game_id, seat=r.seat,
                                                        index=rng.randrange(len(r.legal_actions))))
            session.on_reply(pb.BotMessage.FromString(reply.SerializeToString()).action)


async def referee_work(game: str, seconds: float, seed: int = 0,
                       data_form: pb.DataForm = pb.DATA_JSON) -> dict[str, Any]:
    arena = Arena()
    names = [f"bot{i}" for i in range(GAMES[game].num_seats)]
    bots = [asyncio.create_task(_answer(arena, name, data_form)) for name in names]
    await asyncio.sleep(0)
    decisions = matches = 0
    start, cpu = time.perf_counter(), time.process_time()
    while matches == 0 or time.perf_counter() - start < seconds:
        out = await arena.run_match(game, {}, names, seed=seed + matches)
        decisions += len(out.state.actions)
        matches += 1
    cpu = time.process_time() - cpu
    for task in bots:
        task.cancel()
    return {"game": game, "data_form": pb.DataForm.Name(data_form), "matches": matches, "decisions": decisions,
            "referee_cpu_us_per_decision": round(cpu / decisions * 1e6, 1)}


def messages_per_decision(state: GameState) -> float:
    """How many messages the referee sends per decision in a finished match
    with no fault: a start and an end for each seat, and a request per
    decision (which carries the events the seat saw since its last one)."""
    return (2 * state.num_seats + len(state.actions)) / len(state.actions)
