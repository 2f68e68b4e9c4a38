"""A record replayed step by step, as one viewer sees it: the data of an HTML replay.

The rules engine replays the record (:func:`referee.records.replay`); after the deal
and after every action, the events the viewer may see go to the game's table view,
which says what the table shows then. A seat's view is fed only the public events
and that seat's own, and other seats' actions are not named (an exchange names the
cards discarded, a blind choice is secret): what a seat could not know never enters
the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from referee import records
from referee.games.base import PUBLIC, GameState


class ViewerError(ValueError):
    """A viewer the record has no seat for."""


def replay_data(record: Mapping[str, Any], viewer: int | None = None) -> dict[str, Any]:
    """The replay as JSON: the match, and one step per action (the first is the deal).

    ``viewer``: None for every hand revealed (the referee's view), or the seat whose view
    is shown. Raises :class:`referee.records.RecordError` for a record that does not replay."""
    parsed = records.parse(record)
    spec = parsed.spec
    if viewer is not None and viewer not in range(spec.num_seats):
        raise ViewerError(f"--seat {viewer}: {spec.name} has seats 0..{spec.num_seats - 1}")
    seats = parsed.seat_labels
    view = spec.table_view(seats, parsed.options)
    faults: dict[int, list[dict[str, Any]]] = {}
    meta = record.get("meta")
    for fault in (meta.get("faults") or []) if isinstance(meta, Mapping) else []:
        shown = {"seat": fault.get("seat"), "kind": fault.get("kind")}
        if viewer is None or viewer == fault.get("seat"):
            shown["detail"] = fault.get("detail", "")
        faults.setdefault(fault.get("decision", -1), []).append(shown)
    steps: list[dict[str, Any]] = []
    seen = 0

    def step(state: GameState) -> None:
        nonlocal seen
        index = len(steps) - 1  # the action just applied; -1 for the deal
        new = [e for e in state.events[seen:] if viewer is None or e.to in (PUBLIC, viewer)]
        seen = len(state.events)
        for event in new:
            view.feed(event)
        lines = [line for e in new if (line := view.describe(e))]
        entry: dict[str, Any] = {"actor": None, "action": None, "lines": lines, "faults": faults.get(index, []),
                                 "frame": view.frame()}
        if index >= 0:
            actor, _, text = parsed.actions[index]
            entry["actor"] = actor
            if viewer is None or viewer == actor:
                entry["action"] = text
        steps.append(entry)

    rep = records.replay(record, allow_unfinished=True, on_step=step)
    match = (meta.get("key") or meta.get("game_id")) if isinstance(meta, Mapping) else None
    return {"game": spec.name, "title": spec.title, "match": match if isinstance(match, str) else None,
            "seats": seats, "viewer": viewer,
            "options": parsed.options, "steps": steps, "scores": view.score_table(),
            "results": rep.results, "finished": rep.finished}
