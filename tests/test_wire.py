"""wire.py's JSON: orjson on the hot path must write exactly the stdlib encoder's bytes."""

from __future__ import annotations

import itertools
import json
import random

from referee.games import GAMES
from referee.play import wire

VARIANTS = [{}, {"trump": "random-suit", "double": True, "blind": True, "pairs": True}]


def stdlib(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_observations_events_and_results_encode_exactly_as_the_stdlib_would():
    checked = 0
    for game, options, seed in itertools.chain(
            (("confirmation", o, s) for o in VARIANTS for s in range(3)), (("aegis", {}, s) for s in range(6))):
        state = GAMES[game].new({**options, "rounds": 2} if game == "confirmation" else options, seed=seed)
        rng = random.Random(seed)
        while seats := state.to_act():
            for seat in seats:
                observation = state.observation(seat)
                assert wire.to_json(observation) == stdlib(observation)
                state.apply(seat, rng.choice(state.legal_actions(seat)))
                checked += 1
        for event in state.events:
            assert wire.to_json(event.data) == stdlib(event.data)
        assert wire.to_json(state.results()) == stdlib(state.results())
    assert checked > 1000


def test_values_orjson_refuses_or_writes_differently_fall_back_or_agree():
    for value in ({1: "int key", "s": "é\n\"\\"}, {"big": 1 << 70}, [1, (2, 3)], {"x": None, "y": True},
                  {"f": 0.1, "g": 1.5}):
        assert wire.to_json(value) == stdlib(value)
