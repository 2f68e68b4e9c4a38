"""The search bot (sample_bots.search): always legal, budgeted by the clock, and plays through the referee.

Speed and strength are measured by ``referee.tools.strength`` (``--bot search``),
not asserted here.
"""

from __future__ import annotations

import itertools
import logging
import random

import pytest
from harness import serve

from referee.bot import GameView
from referee.games import GAMES
from referee.play.wire import options_text
from sample_bots import heuristic, search, search_aegis, search_confirmation
from sample_bots.search import Settings
from sample_bots.search_core import Budget, run_search

VARIANTS = [dict(zip(("trump", "double", "blind", "pairs"), combo))
            for combo in itertools.product(("dealer-card", "random-suit"), (False, True), (False, True),
                                           (False, True))]


@pytest.fixture(autouse=True)
def _no_search_failures(caplog):
    """The search must not fall back to the heuristic because it raised (decide logs and recovers)."""
    yield
    failures = [r for r in caplog.records if r.name == "search" and r.levelno >= logging.ERROR]
    assert not failures, failures[0].getMessage()


def _view(state, seat: int, seed: int, decision_ms: int = 0, decision_ms_left: int = 0) -> GameView:
    view = GameView("g", state.game, options_text(state.options), seat, [f"s{s}" for s in range(state.num_seats)],
                    decision_ms, 0, rng=random.Random(seed))
    view.decision_ms_left = decision_ms_left
    view.legal_codes = state.legal_actions(seat)
    return view


def _decision_points(game: str, options: dict, seed: int, every: int):
    """(state, seat) at every ``every``-th decision of a random game (the state is shared: use it at once)."""
    rng = random.Random(seed)
    state = GAMES[game].new(options, seed=seed)
    n = 0
    while state.to_act():
        for seat in state.to_act():
            legal = state.legal_actions(seat)
            if len(legal) > 1 and n % every == 0:
                yield state, seat
            n += 1
            state.apply(seat, rng.choice(legal))


def _first_decisions(game: str, options: dict, seed: int, every: int, count: int):
    """(k, state, seat, observation, legal names) of the first ``count`` of ``_decision_points``."""
    for k, (state, seat) in enumerate(_decision_points(game, options, seed=seed, every=every)):
        if k >= count:
            return
        yield k, state, seat, state.observation(seat), [state.action_name(a) for a in state.legal_actions(seat)]


def _check_legal(state, seat: int, seed: int) -> int:
    legal = state.legal_actions(seat)
    names = [state.action_name(a) for a in legal]
    obs = state.observation(seat)
    choice = search.decide(obs, names, _view(state, seat, seed), Settings(rollouts=8))
    assert isinstance(choice, int) and 0 <= choice < len(legal)
    return choice


@pytest.mark.parametrize("k", range(len(VARIANTS)), ids=lambda k: "-".join(
    [VARIANTS[k]["trump"]] + [f for f in ("double", "blind", "pairs") if VARIANTS[k][f]]))
def test_confirmation_answers_are_legal(k):
    phases = set()
    for state, seat in _decision_points("confirmation", {"rounds": 1, **VARIANTS[k]}, seed=k, every=5):
        _check_legal(state, seat, seed=len(phases))
        phases.add(state.phase)
    assert phases == {"bid", "play", "confirm"}


def aegis_answers_are_legal(seeds: range) -> None:
    """The first 40 decision points of the random match of each seed."""
    points = 0
    phases = set()
    for seed in seeds:
        for k, (state, seat) in enumerate(_decision_points("aegis", {}, seed=seed, every=2)):
            _check_legal(state, seat, seed=points)
            phases.add((state.observation(seat)["phase"], state.observation(seat)["role"]))
            points += 1
            if k + 1 == 40:
                break
    assert points >= 30
    assert {(p, r) for p in ("exchange", "declare", "play") for r in ("master", "slave")} <= phases


@pytest.mark.slow
def test_aegis_answers_are_legal():
    aegis_answers_are_legal(range(3))


def test_aegis_answers_are_legal_in_one_match():
    """The quick version, for the fast loop: the match of seed 1 (its first 40 points reach every
    phase in both roles)."""
    aegis_answers_are_legal(range(1, 2))


def test_a_fixed_budget_is_reproducible():
    for game, options in (("confirmation", {"rounds": 1}), ("aegis", {})):
        for k, state, seat, obs, names in _first_decisions(game, options, seed=11, every=4, count=6):
            a = search.decide(obs, names, _view(state, seat, seed=k), Settings(rollouts=6))
            b = search.decide(obs, names, _view(state, seat, seed=k), Settings(rollouts=6))
            assert a == b


def test_the_budget_follows_the_clock():
    state = GAMES["confirmation"].new({"rounds": 1}, seed=1)
    # no clock (in process): the think time, or the fixed number of samples alone
    budget = search.budget_for(_view(state, 1, 0), Settings(think_ms=40))
    assert budget.samples is None and budget.deadline is not None
    budget = search.budget_for(_view(state, 1, 0), Settings(think_ms=40, rollouts=5))
    assert budget.samples == 5 and budget.deadline is None
    # a clock: never more than half the decision time left, even with a fixed number of samples
    view = _view(state, 1, 0, decision_ms=1000, decision_ms_left=60)
    import time
    before = time.perf_counter()
    budget = search.budget_for(view, Settings(think_ms=150, rollouts=50))
    assert budget.samples == 50 and before < budget.deadline <= time.perf_counter() + 0.030
    # no time left: no search at all
    no_time = _view(state, 1, 0, decision_ms=1000, decision_ms_left=0)
    assert search.budget_for(no_time, Settings(think_ms=150)) is None


def test_with_no_time_left_it_answers_the_heuristic_choice_at_once():
    for game, options in (("confirmation", {"rounds": 1, "double": True}), ("aegis", {})):
        for k, state, seat, obs, names in _first_decisions(game, options, seed=5, every=3, count=10):
            view = _view(state, seat, seed=k, decision_ms=1000, decision_ms_left=0)
            choice = search.decide(obs, names, view, Settings(think_ms=150))
            assert names[choice] == heuristic.decide(obs, names, view)


def test_a_search_that_cannot_sample_answers_the_prior():
    result = run_search(["a", "b", "c"], 2, lambda: None, lambda s, a: 0.0, Budget(samples=0))
    assert result.choice == 2 and result.samples == 0


def test_the_search_keeps_the_best_mean_and_drops_the_hopeless():
    values = {"bad": 0.0, "good": 1.0, "noisy": 0.5}
    rng = random.Random(0)
    result = run_search(list(values), 0, lambda: rng.random(), lambda s, a: values[a] + s, Budget(samples=40))
    assert result.choice == 1
    assert result.playouts < 3 * 40  # the others were dropped on the way


def test_aegis_leaning_samples_stay_consistent_with_the_view():
    rng = random.Random(2)
    checked = 0
    for seed in range(4):
        for state, seat in _decision_points("aegis", {}, seed=seed, every=2):
            obs = state.observation(seat)
            if not obs["exchanges"]:
                continue
            weights = search_aegis.card_weights(obs)
            for _ in range(3):
                sample = search_aegis.sample(obs, rng, {"promise": "table"}, weights)
                assert sample.observation(seat) == state.current.observation(seat)
                checked += 1
    assert checked > 20


def test_confirmation_samples_end_with_the_round_and_copies_are_independent():
    state = GAMES["confirmation"].new({"rounds": 3}, seed=4)
    seat = state.to_act()[0]
    base = search_confirmation.sample(state.observation(seat), random.Random(1), {"rounds": 3})
    before = (list(base.hands), list(base.won), base.phase)
    copy = search_confirmation.clone(base)
    copy.apply(seat, search_confirmation.policy(copy, seat))
    search_confirmation.rollout(copy)
    assert copy.is_terminal() and len(copy.completed) == 13
    assert (list(base.hands), list(base.won), base.phase) == before


# --- through the referee ------------------------------------------------------------


@pytest.mark.e2e
def test_search_bots_play_through_the_referee_without_faults():
    async def main(server, bots):
        for name in ("s1", "s2"):
            bots.sample(name, "--think-ms", "15", "--seed", "1", module="sample_bots.search")
        for name in ("r1", "r2"):
            bots.sample(name, "--seed", "1")
        conf = await server.arena.run_match("confirmation", {"rounds": 1}, ["s1", "r1", "s2", "r2"], seed=3)
        aegis = await server.arena.run_match("aegis", {}, ["s1", "r1"], seed=3)
        return conf, aegis

    for out in serve(main):
        assert out.state.is_terminal()
        assert out.faults == []
