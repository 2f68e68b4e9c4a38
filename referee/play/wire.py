"""Engine values <-> protobuf messages: the only module that knows both.

Everything a seat receives is built here from what the runner hands over
(its GameInfo, the events it may see, its Decision, its Substitution), so nothing
reaches a seat that its observation does not hold. JSON is written compactly
and deterministically (same values, same bytes).

The game data (a request's observation, an event's data, a game's results) go
in the forms the session asked for (``Hello.data_form``): JSON, typed, or both.
The typed messages are the game's own (``ConfirmationObservation``...), in the
oneof field named as the game; the game's ``typed`` trait shapes its plain
values as their fields, and this module builds them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson
from google.protobuf.message import Message

from referee.games import GAMES
from referee.games.base import Event, TypedForm
from referee.runner import Clock, Decision, FaultKind, GameInfo, Reply, Substitution
from referee.v1 import referee_pb2 as pb

PROTOCOL_VERSION = 1

FAULTS = {
    None: pb.FAULT_NONE, FaultKind.TIMEOUT: pb.FAULT_TIMEOUT, FaultKind.ILLEGAL: pb.FAULT_ILLEGAL,
    FaultKind.MALFORMED: pb.FAULT_MALFORMED, FaultKind.WRONG_ID: pb.FAULT_WRONG_ID,
    FaultKind.DISCONNECT: pb.FAULT_DISCONNECT, FaultKind.NO_SESSION: pb.FAULT_NO_SESSION,
    FaultKind.ERROR: pb.FAULT_ERROR,
}

# Every request carries its seat's observation as JSON, so the encoder is on the
# referee's hot path: orjson writes the same bytes as the stdlib's compact
# encoder (tested) about ten times faster. The stdlib encoder is kept for what
# orjson refuses (integers beyond 64 bits), so the two never differ.
_stdlib_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


def _dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return _stdlib_dumps(value)


def to_json(value: Any) -> str:
    return _dumps(value)


# --- the game data, typed -------------------------------------------------------

#: Hello.data_form / SpectateRequest.data_form -> (the JSON fields, the typed fields)
DATA_FORMS: dict[int, tuple[bool, bool]] = {pb.DATA_JSON: (True, False), pb.DATA_TYPED: (False, True),
                                          pb.DATA_BOTH: (True, True)}


class Typed:
    """A game's typed messages: its ``typed`` trait, and the oneof fields named as the game
    (DecisionRequest.observation, GameEvent.data, GameEnd.results) that hold them."""

    def __init__(self, game: str, trait: TypedForm):
        for container, oneof in ((pb.DecisionRequest, "observation"), (pb.GameEvent, "data"),
                                 (pb.GameEnd, "results")):
            if game not in {f.name for f in container.DESCRIPTOR.oneofs_by_name[oneof].fields}:
                raise LookupError(f"{container.DESCRIPTOR.name}.{oneof} has no field {game!r} (add the game's "
                                  f"messages to proto/referee/v1/referee.proto)")
        self.field = game
        self.trait = trait
        #: the game's event message (each event is built once, serialized, for all the seats that see it)
        message = pb.GameEvent.DESCRIPTOR.fields_by_name[game].message_type
        assert message is not None  # the oneof's fields are the games' messages
        self.event: type[Message] = getattr(pb, message.name)

    def event_bytes(self, event: Event) -> bytes:
        return self.event(**self.trait.event(event.kind, event.data)).SerializeToString()


#: the games that have typed messages, by name
TYPED = {name: Typed(name, spec.typed) for name, spec in GAMES.items() if spec.typed is not None}


def forms(form: int, game: str) -> tuple[bool, Typed | None]:
    """(whether to fill the JSON fields, the game's typed messages or None) for ``form``; a game
    without typed messages gets JSON whatever the form."""
    json, typed = DATA_FORMS[form]
    kind = TYPED.get(game) if typed else None
    return json or kind is None, kind


def option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def options_text(options: dict[str, Any]) -> dict[str, str]:
    return {key: option_text(value) for key, value in options.items()}


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def clock(c: Clock) -> pb.Clock:
    return pb.Clock(decision_ms=_ms(c.decision_s), bank_ms=_ms(c.bank_s))


def clock_from(message: pb.Clock, default: Clock) -> Clock:
    if not message.decision_ms and not message.bank_ms:
        return default
    return Clock(message.decision_ms / 1000, message.bank_ms / 1000)


# --- referee -> bot -------------------------------------------------------------


def welcome(session_id: str, server: str) -> pb.RefereeMessage:
    return pb.RefereeMessage(welcome=pb.Welcome(protocol_version=PROTOCOL_VERSION, session_id=session_id,
                                                server=server))


def refusal(reason: pb.Refusal.Reason, message: str) -> pb.RefereeMessage:
    return pb.RefereeMessage(refusal=pb.Refusal(reason=reason, message=message))


def game_start_body(info: GameInfo, seat_names: Sequence[str] | None = None) -> pb.GameStart:
    """The GameStart of ``info``, naming the seats ``seat_names`` (default: the bots in them)."""
    return pb.GameStart(game_id=info.game_id, seat=info.seat, game=info.game,
                        options=options_text(info.options),
                        seat_names=list(info.seat_names if seat_names is None else seat_names),
                        clock=clock(info.clock))


def seat_labels(seats: int) -> list[str]:
    """What a bot is told of who sits where: ``seat 0``, ``seat 1``... A bot is never told who its
    opponents are, nor which seats its own copies hold (docs/security.md): the names are the
    spectators'."""
    return [f"seat {s}" for s in range(seats)]


def game_start(info: GameInfo) -> pb.RefereeMessage:
    """The GameStart a bot gets: its seats labelled, never named (:func:`seat_labels`)."""
    return pb.RefereeMessage(game_start=game_start_body(info, seat_labels(len(info.seat_names))))


class WireEvent:
    """One event of a match as the wire carries it: its data encoded on first use, in each form,
    once for all the seats that see it."""

    __slots__ = ("index", "event", "_json", "_typed")

    def __init__(self, index: int, event: Event):
        self.index = index
        self.event = event
        self._json: str | None = None
        self._typed: bytes | None = None

    def json(self) -> str:
        if self._json is None:
            self._json = _dumps(self.event.data)
        return self._json

    def typed(self, typed: Typed) -> bytes:
        """The game's event message, serialized (a match has one game: one form to remember)."""
        if self._typed is None:
            self._typed = typed.event_bytes(self.event)
        return self._typed


class EventCache:
    """A match's events as :class:`WireEvent`, shared by all the seats that see one.

    The runner hands a public event to every seat in a row, so remembering
    the last event is enough (a match's event index names its event)."""

    def __init__(self) -> None:
        self._last: WireEvent | None = None

    def __call__(self, index: int, event: Event) -> WireEvent:
        last = self._last
        if last is None or last.index != index:
            self._last = last = WireEvent(index, event)
        return last


#: what a seat saw and has not been sent yet, in order
SeatEvents = Sequence[WireEvent]


def _event(message: pb.GameEvent, game_id: str, seat: int, w: WireEvent, json: bool, typed: Typed | None) -> None:
    event = w.event
    message.game_id, message.seat, message.index, message.kind = game_id, seat, w.index, event.kind
    message.actor = -1 if event.seat is None else event.seat
    if json:
        message.data_json = w.json()
    if typed is not None:
        getattr(message, typed.field).MergeFromString(w.typed(typed))


def _add_events(target: Any, game_id: str, seat: int, events: SeatEvents, json: bool, typed: Typed | None) -> None:
    add = target.add  # built in place: cheaper than GameEvent messages copied into the list
    for w in events:
        _event(add(), game_id, seat, w, json, typed)


def event_body(game_id: str, seat: int, index: int, event: Event, form: int = pb.DATA_JSON,
               game: str = "") -> pb.GameEvent:
    message = pb.GameEvent()
    _event(message, game_id, seat, WireEvent(index, event), *forms(form, game))
    return message


def request(d: Decision, events: SeatEvents = (), form: int = pb.DATA_JSON, game: str = "") -> pb.RefereeMessage:
    """A DecisionRequest, carrying the events the seat saw since the referee last wrote to it; its
    game data in ``form`` (a DataForm) for ``game`` (the game's name, GameInfo.game)."""
    json, typed = forms(form, game)
    fields = {"request_id": d.request_id, "game_id": d.game_id, "seat": d.seat, "legal_actions": d.legal_names,
              "legal_codes": d.legal, "decision_ms_left": _ms(d.decision_left_s), "bank_ms_left": _ms(d.bank_left_s)}
    if json:
        fields["observation_json"] = _dumps(d.observation)
    if typed is not None:  # built with the request from plain values: no message copied
        fields[typed.field] = typed.trait.observation(d.observation)
    message = pb.RefereeMessage(request=fields)
    _add_events(message.request.events, d.game_id, d.seat, events, json, typed)
    return message


def substituted(o: Substitution) -> pb.RefereeMessage:
    """The ActionResult of a decision whose action the referee substituted (an accepted one has none)."""
    return pb.RefereeMessage(result=pb.ActionResult(
        request_id=o.request_id, game_id=o.game_id, seat=o.seat, status=pb.ActionResult.SUBSTITUTED,
        action=o.action, fault=FAULTS[o.fault], reason=o.reason, bank_ms_left=_ms(o.bank_left_s)))


def game_end_body(game_id: str, seat: int, results: dict[str, Any], events: SeatEvents = (),
                  form: int = pb.DATA_JSON, game: str = "") -> pb.GameEnd:
    json, typed = forms(form, game)
    fields: dict[str, Any] = {"game_id": game_id, "seat": seat, "scores": results["scores"],
                              "placing": results["placing"]}
    if json:
        fields["results_json"] = _dumps(results)
    if typed is not None:
        fields[typed.field] = typed.trait.results(results)
        fields["faults"] = [{str(kind): n for kind, n in counts.items()} for counts in results.get("faults", ())]
    end = pb.GameEnd(**fields)
    _add_events(end.events, game_id, seat, events, json, typed)
    return end


def game_end(game_id: str, seat: int, results: dict[str, Any], events: SeatEvents = (), form: int = pb.DATA_JSON,
             game: str = "") -> pb.RefereeMessage:
    return pb.RefereeMessage(game_end=game_end_body(game_id, seat, results, events, form, game))


def batch(messages: list[pb.RefereeMessage]) -> pb.RefereeMessage:
    return pb.RefereeMessage(batch=pb.Batch(messages=messages))


# --- bot -> referee -------------------------------------------------------------


def replies(message: pb.BotMessage) -> Sequence[pb.ActionReply]:
    """The ActionReplies a BotMessage carries, alone or batched (none for anything else)."""
    kind = message.WhichOneof("kind")
    if kind == "action":
        return (message.action,)
    if kind == "actions":
        return message.actions.replies
    return ()


def reply(message: pb.ActionReply) -> tuple[int, str, int, Reply]:
    """(request id, game id, seat, the reply) of an ActionReply."""
    choice = message.WhichOneof("choice")
    if choice == "index":
        answer = Reply(index=message.index)
    elif choice == "error":
        answer = Reply(error=message.error)
    else:
        answer = Reply(name=message.name if choice == "name" else "")
    return message.request_id, message.game_id, message.seat, answer


# --- spectators -----------------------------------------------------------------


def spectator_start(info: GameInfo) -> pb.SpectatorMessage:
    return pb.SpectatorMessage(game_start=game_start_body(info))


def spectator_event(game_id: str, index: int, ev: Event, form: int = pb.DATA_JSON,
                    game: str = "") -> pb.SpectatorMessage:
    return pb.SpectatorMessage(event=event_body(game_id, 0, index, ev, form, game))


def spectator_end(game_id: str, results: dict[str, Any], form: int = pb.DATA_JSON,
                  game: str = "") -> pb.SpectatorMessage:
    return pb.SpectatorMessage(game_end=game_end_body(game_id, 0, results, (), form, game))


def spectator_record_held() -> pb.SpectatorMessage:
    return pb.SpectatorMessage(record_held=True)


def spectator_record(record: dict[str, Any]) -> pb.SpectatorMessage:
    return pb.SpectatorMessage(record_json=_dumps(record))
