"""Confirmation's data in the shape of its typed protocol messages (the ``typed`` trait).

``ConfirmationObservation``, ``ConfirmationEvent`` and ``ConfirmationResults``
(proto/referee/v1/referee.proto; docs/protocol.md §9) hold the values of the
observation, the event data and the results: these functions give them as
plain values, field by field, for ``referee/play/wire.py`` to build the messages.
What differs from the JSON is the protocol's general rules: no ``game`` key,
-1 for a seat that has not bid, ``{"words": [...]}`` for a seat's list of
choices, ``{"numbers": [...]}`` for its bids in force after each phase,
``{"seats": [...]}`` for a team, a bare value of event data as the one field
of its message, an absent key as an empty list. Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.games.base import TypedForm


def _bids(bids: Sequence[int | None]) -> list[int]:
    return [-1 if b is None else b for b in bids]


def _choices(per_seat: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    return [{"words": words} for words in per_seat]


def _phase_bids(per_seat: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    return [{"numbers": numbers} for numbers in per_seat]


def observation(o: Mapping[str, Any]) -> dict[str, Any]:
    fields = dict(o)
    del fields["game"]
    fields["bids"] = _bids(o["bids"])
    fields["bids_in_force"] = _bids(o["bids_in_force"])
    fields["choices"] = _choices(o["choices"])
    fields["phase_bids"] = _phase_bids(o["phase_bids"])
    return fields


def _summary(s: Mapping[str, Any]) -> dict[str, Any]:
    return {**s, "choices": _choices(s["choices"]), "phase_bids": _phase_bids(s["phase_bids"])}


#: kind -> (the data -> the fields of that kind's message)
_EVENTS = {
    "round": dict,
    "deal": lambda cards: {"cards": cards},
    "trump": dict,
    "bid": lambda n: {"bid": n},
    "play": lambda card: {"card": card},
    "trick": lambda number: {"number": number},
    "choice": dict,
    "score": _summary,
    "end": dict,
}


def event(kind: str, data: Any) -> dict[str, Any]:
    return {kind: _EVENTS[kind](data)}


def results(r: Mapping[str, Any]) -> dict[str, Any]:
    return {"rounds": [_summary(s) for s in r["rounds"]], "teams": [{"seats": t} for t in r.get("teams", ())]}


TYPED = TypedForm(observation=observation, event=event, results=results)
