"""An adaptive tournament's rounds and stop, as its store keeps them."""

from __future__ import annotations

import json
from collections.abc import Sequence

from referee.model import Round, Schedule, Stop
from referee.results.store import MetaKey, Store

# --- the runner's side: the store -----------------------------------------------------------------


def stored_rounds(store: Store) -> tuple[Round, ...]:
    data = json.loads(store.meta(MetaKey.ROUNDS) or "[]")
    return tuple(Round(r["deal_set"], tuple(tuple(t) for t in r["tables"])) for r in data)


def rounds_json(rounds: Sequence[Round]) -> str:
    return json.dumps([{"deal_set": r.deal_set, "tables": [list(t) for t in r.tables]} for r in rounds])


def stop_of(store: Store) -> Stop | None:
    """Why the adaptive tournament in ``store`` stopped, if it did (None: not adaptive, or playing on)."""
    text = store.meta(MetaKey.STOPPED)
    return Stop.from_json(json.loads(text)) if text else None



def record(store: Store, schedule: Schedule) -> None:
    """Keep an adaptive schedule's rounds and its stop (if any) in the store (nothing for a fixed one)."""
    if schedule.rounds is None:
        return
    store.set_meta(MetaKey.ROUNDS, rounds_json(schedule.rounds))
    store.set_meta(MetaKey.STOPPED, json.dumps(schedule.stop.to_json()) if schedule.stop else "")

