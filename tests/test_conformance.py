"""The contract every registered game keeps (as PettingZoo's api_test):
canonical legal actions, errors for illegal ones, notation round trips,
JSON-compatible views, determinism, and replay from decks + actions."""

from __future__ import annotations

import json
import random

import pytest

from referee.games import GAMES, OptionError
from referee.games.base import PUBLIC, ActionSyntaxError, GameState, IllegalActionError, NotYourTurnError

GAME_NAMES = sorted(GAMES)


def play_checked(state: GameState, rng: random.Random) -> None:
    """A random game in which every decision is checked against the contract."""
    n = state.num_seats
    while True:
        seats = state.to_act()
        assert list(seats) == sorted(set(seats))
        for seat in range(n):
            legal = state.legal_actions(seat)
            if seat in seats:
                assert legal, f"seat {seat} must act but has no legal action"
                assert legal == sorted(set(legal)), "legal actions are unique and ascending"
                for a in legal:
                    assert state.parse_action(state.action_name(a)) == a
                assert state.action_names(legal) == [state.action_name(a) for a in legal]  # the fast path agrees
            else:
                assert legal == []
        obs = [state.observation(s) for s in range(n)]
        assert json.loads(json.dumps(obs)) == obs
        if not seats:
            break
        seat = rng.choice(seats)
        legal = state.legal_actions(seat)
        # an action outside the legal list is refused with a rule, and changes nothing
        bad = rng.choice([a for a in range(0, 100) if a not in legal] + [-1])
        before = (state.observation(seat), len(state.events))
        with pytest.raises(IllegalActionError) as err:
            state.apply(seat, bad)
        assert err.value.rule and err.value.reason
        assert (state.observation(seat), len(state.events)) == before
        idle = [s for s in range(n) if s not in seats]
        if idle:
            with pytest.raises(NotYourTurnError):
                state.apply(idle[0], state.legal_actions(seat)[0])
        state.apply(seat, rng.choice(legal))
    assert state.is_terminal()
    for seat in range(n):
        with pytest.raises(IllegalActionError):
            state.apply(seat, 0)
    for e in state.events:
        assert e.to == PUBLIC or 0 <= e.to < n
        json.dumps(e.data)
    results = state.results()
    json.dumps(results)
    assert results["scores"] == state.scores() and results["placing"] == state.placing()
    assert sorted(state.placing())[0] == 1


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_decision_keeps_the_contract(game):
    for seed in range(3):
        play_checked(GAMES[game].new({}, seed=seed), random.Random(seed))


@pytest.mark.parametrize("game", GAME_NAMES)
def test_same_seed_same_match_and_replay_from_decks(game):
    spec = GAMES[game]
    runs = []
    for _ in range(2):
        state = spec.new({}, seed=42)
        rng = random.Random(7)
        while seats := state.to_act():
            for seat in seats:
                state.apply(seat, rng.choice(state.legal_actions(seat)))
        runs.append(state)
    a, b = runs
    assert a.shoe.decks == b.shoe.decks and a.actions == b.actions and a.results() == b.results()
    replay = spec.new(a.options, decks=a.shoe.decks, suits=a.shoe.suits)
    for seat, action in a.actions:
        replay.apply(seat, action)
    assert replay.is_terminal() and replay.results() == a.results()
    assert replay.events == a.events


@pytest.mark.parametrize("game", GAME_NAMES)
def test_options_are_checked(game):
    spec = GAMES[game]
    with pytest.raises(OptionError, match="no option"):
        spec.new({"no_such_option": 1}, seed=1)
    for key, option in spec.options.items():
        assert spec.check_options({})[key] == option.default


@pytest.mark.parametrize("game", GAME_NAMES)
@pytest.mark.parametrize("text", ["", "nonsense", "ZZ", "1X"])
def test_bad_action_text_is_a_syntax_error(game, text):
    with pytest.raises(ActionSyntaxError):
        GAMES[game].parse_action(text)


def test_a_decision_for_several_seats_is_simultaneous():
    """RULES 1.6: the confirm phase asks all four seats at once."""
    state = GAMES["confirmation"].new({"rounds": 1}, seed=5)
    while len(state.to_act()) == 1:
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[0])
    assert state.to_act() == (0, 1, 2, 3)
