"""Aegis's data in the shape of its typed protocol messages (the ``typed`` trait).

``AegisObservation``, ``AegisEvent`` and ``AegisResults``
(proto/referee/v1/referee.proto; docs/protocol.md §10) hold the values of the
observation, the event data and the results: these functions give them as
plain values, field by field, for ``referee/play/wire.py`` to build the messages.
What differs from the JSON is the protocol's general rules: no ``game`` key,
``{"master": m, "slave": s}`` for an exchange round's pair of counts and
``{"seat": s, "card": c}`` for a card on the table. Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from referee.games.base import TypedForm


def _deal_result(r: Mapping[str, Any]) -> dict[str, Any]:
    return {**r, "exchanges": [{"master": m, "slave": s} for m, s in r["exchanges"]]}


def observation(o: Mapping[str, Any]) -> dict[str, Any]:
    fields = dict(o)
    del fields["game"]
    fields["exchanges"] = [{"master": m, "slave": s} for m, s in o["exchanges"]]
    fields["trick"] = [{"seat": s, "card": c} for s, c in o["trick"]]
    fields["games"] = [_deal_result(g) for g in o["games"]]
    if o["result"] is not None:
        fields["result"] = _deal_result(o["result"])
    return fields


def event(kind: str, data: Any) -> dict[str, Any]:
    return {kind: _deal_result(data) if kind == "game_end" else data}


def results(r: Mapping[str, Any]) -> dict[str, Any]:
    return {"winner": r["winner"], "ended_by": r["ended_by"], "draw": r["draw"], "num_games": r["num_games"],
            "games": [_deal_result(g) for g in r["games"]]}


TYPED = TypedForm(observation=observation, event=event, results=results)
