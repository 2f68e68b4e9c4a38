"""Section 3c (``--only trace``): where one decision's wall time goes on the server.

One game at a time through the real server and random bot processes, as in
section 3, with a timestamp at each hand-off of the server's side of a
decision:

- ``reply read``: a bot's reply reaches its session (``Session.on_reply``);
- ``runner resumed``: the match runner has the reply (``SessionSeat.decide`` returns);
- ``request queued``: the runner has checked and applied the action, sent the
  events and built the next request (``Session.send``);
- ``request written``: the session's writer hands it to gRPC (``Session.next_message``).

From ``request written`` to the next ``reply read`` is the rest: gRPC both
ways, the bot process and its kit. The wrappers cost a few µs per decision,
so this section runs apart from the others and its rate is not theirs.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from referee.bench import served
from referee.games import GAMES
from referee.play import arena
from referee.play.server import RefereeServer
from referee.runner import Decision, Reply
from referee.v1 import referee_pb2 as pb

STEPS = (("request written", "reply read", "gRPC both ways, the bot process and its kit"),
         ("reply read", "runner resumed", "reply to the waiting runner (asyncio)"),
         ("runner resumed", "request queued", "check, apply, events, next observation and request"),
         ("request queued", "request written", "request to the session's writer (asyncio)"))


class _Stamps:
    """Wrap the four hand-offs with timestamps (undone by ``restore``)."""

    def __init__(self) -> None:
        self.stamps: list[tuple[str, int]] = []
        self.saved = {(cls, name): getattr(cls, name) for cls, name in (
            (arena.Session, "on_reply"), (arena.Session, "send"), (arena.Session, "next_message"),
            (arena.SessionSeat, "decide"))}
        stamp, now = self.stamps.append, time.perf_counter_ns
        on_reply, send, next_message, decide = self.saved.values()

        def on_reply_(session: arena.Session, message: pb.ActionReply) -> None:
            stamp(("reply read", now()))
            on_reply(session, message)

        def send_(session: arena.Session, message: pb.RefereeMessage) -> None:
            if message.WhichOneof("kind") == "request":
                stamp(("request queued", now()))
            send(session, message)

        async def next_message_(session: arena.Session) -> pb.RefereeMessage | None:
            message: pb.RefereeMessage | None = await next_message(session)
            if message is not None and message.WhichOneof("kind") == "request":
                stamp(("request written", now()))
            return message

        async def decide_(link: arena.SessionSeat, decision: Decision) -> Reply:
            reply: Reply = await decide(link, decision)
            stamp(("runner resumed", now()))
            return reply

        wrappers = {"on_reply": on_reply_, "send": send_, "next_message": next_message_, "decide": decide_}
        for cls, name in self.saved:  # as ``restore``: mypy forbids assigning to a method by its name
            setattr(cls, name, wrappers[name])

    def restore(self) -> None:
        for (cls, name), method in self.saved.items():
            setattr(cls, name, method)

    def steps(self) -> list[dict[str, Any]]:
        times: dict[tuple[str, str], list[float]] = {(a, b): [] for a, b, _ in STEPS}
        for (a, ta), (b, tb) in zip(self.stamps, self.stamps[1:]):
            if (a, b) in times:
                times[(a, b)].append((tb - ta) / 1000)
        return [{"from": a, "to": b, "what": what, "count": len(times[(a, b)]),
                 "median_us": round(statistics.median(times[(a, b)]), 1) if times[(a, b)] else None,
                 "mean_us": round(statistics.mean(times[(a, b)]), 1) if times[(a, b)] else None}
                for a, b, what in STEPS]


async def trace(game: str, seconds: float) -> dict[str, Any]:
    stamps = _Stamps()
    try:
        async with RefereeServer(connect_timeout=30) as server:
            names = [f"t{i}" for i in range(GAMES[game].num_seats)]
            bots = served.Bots(server, names)
            try:
                await bots.connected()
                await served.one_game_at_a_time(server, bots, game, min(1.0, seconds))  # warm up
                stamps.stamps.clear()
                played = await served.one_game_at_a_time(server, bots, game, seconds)
            finally:
                bots.stop()
    finally:
        stamps.restore()
    return {"game": game, "decisions_per_s": played["decisions_per_s"], "steps": stamps.steps()}


def run(seconds: float) -> list[dict[str, Any]]:
    return [asyncio.run(trace(game, seconds)) for game in ("aegis", "confirmation")]
