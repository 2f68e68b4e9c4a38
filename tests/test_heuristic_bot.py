"""The heuristic sample bot (sample_bots.heuristic): always legal, quick, and
clearly stronger than the random bot in duplicate play (referee.tools.strength)."""

from __future__ import annotations

import itertools
import random
import statistics
import time

import pytest
from helpers import act, deck_for_confirmation

from referee import cards
from referee.bot import GameView
from referee.games import GAMES
from referee.games.aegis import AegisGame
from referee.play.wire import options_text
from referee.tools import strength
from sample_bots import heuristic
from sample_bots import random as random_bot

CONFIRMATION_VARIANTS = [
    dict(zip(("trump", "double", "blind", "pairs"), combo))
    for combo in itertools.product(("dealer-card", "random-suit"), (False, True), (False, True), (False, True))
]


def decision_kind(observation: dict) -> str:
    """A label for the kind of decision (for coverage)."""
    phase = observation["phase"]
    if observation["game"] == "aegis":
        if phase in ("exchange", "declare"):
            return f"aegis {phase} {observation['role']}"
        return "aegis follow" if observation["trick"] else "aegis lead"
    if phase == "play":
        return "confirmation follow" if observation["trick"] else "confirmation lead"
    if phase == "confirm":
        return f"confirmation confirm after {len(observation['tricks'])}"
    return f"confirmation {phase}"


def wander(game: str, options: dict, seed: int, follow_bot: float, asked: dict[str, int]) -> int:
    """Play a match where every decision is put to the heuristic (its answer must
    be legal) but applied only with probability ``follow_bot``, a random legal
    action otherwise, so that odd states are reached too. Returns the decisions."""
    rng = random.Random(seed)
    state = GAMES[game].new(options, seed=seed)
    views = [GameView("g", game, options_text(state.options), s, [], 0, 0) for s in range(state.num_seats)]
    decisions = 0
    while state.to_act():
        for seat in state.to_act():
            legal = state.legal_actions(seat)
            names = [state.action_name(a) for a in legal]
            observation = state.observation(seat)
            choice = heuristic.decide(observation, list(names), views[seat])
            assert choice in names, (observation, choice)
            kind = decision_kind(observation)
            asked[kind] = asked.get(kind, 0) + 1
            decisions += 1
            pick = names.index(choice) if rng.random() < follow_bot else rng.randrange(len(names))
            state.apply(seat, legal[pick])
    return decisions


@pytest.mark.parametrize("variant", CONFIRMATION_VARIANTS,
                         ids=lambda v: "-".join(k if v[k] is True else str(v[k]) for k in v if v[k]))
def test_confirmation_answers_are_always_legal(variant):
    asked: dict[str, int] = {}
    decisions = sum(wander("confirmation", {"rounds": 4, **variant}, seed, follow, asked)
                    for seed, follow in enumerate((0.0, 0.3, 0.7, 1.0)))
    assert decisions >= 800
    phases = ["after 4", "after 9"] if variant["double"] else ["after 7"]
    expected = {"confirmation bid", "confirmation lead", "confirmation follow",
                *(f"confirmation confirm {p}" for p in phases)}
    assert set(asked) == expected


@pytest.mark.parametrize("promise", ["table", "4plus"])
def test_aegis_answers_are_always_legal(promise):
    asked: dict[str, int] = {}
    decisions = sum(wander("aegis", {"promise": promise}, seed, follow, asked)
                    for seed, follow in zip(range(16), itertools.cycle((0.0, 0.3, 0.7, 1.0))))
    assert decisions >= 300
    assert set(asked) == {"aegis exchange master", "aegis exchange slave", "aegis declare master",
                          "aegis declare slave", "aegis lead", "aegis follow"}


def test_the_same_observation_gets_the_same_answer_fast():
    """Deterministic (nothing but the observation counts) and well under 2 ms a decision."""
    times = []
    for game, options in (("confirmation", {"rounds": 1, "double": True, "pairs": True}), ("aegis", {})):
        for seed in range(4):
            state = GAMES[game].new(options, seed=seed)
            view = GameView("g", game, options_text(state.options), 0, [], 0, 0)
            while state.to_act():
                seat = state.to_act()[0]
                legal = state.legal_actions(seat)
                names = [state.action_name(a) for a in legal]
                observation = state.observation(seat)
                started = time.perf_counter()
                choice = heuristic.decide(observation, names, view)
                times.append(time.perf_counter() - started)
                assert heuristic.decide(state.observation(seat), names, view) == choice
                state.apply(seat, legal[names.index(choice)])
    assert statistics.median(times) < 0.002


def beats_random_at_confirmation_in_duplicate(deal_sets: int) -> None:
    figures = strength.measure_confirmation(heuristic.decide, random_bot.decide, {"rounds": 4}, deal_sets, 1, "2v2")
    diff, half = strength.mean_interval(figures.diffs())
    assert statistics.fmean(figures.bot) > 5
    assert diff > 8 and diff - half > 5


@pytest.mark.slow
def test_heuristic_beats_random_at_confirmation_in_duplicate():
    """40 deal sets of 4 rounds, heuristic pair v random pair and the seats swapped
    (measured: about +15 points a round, 95% interval about ±1)."""
    beats_random_at_confirmation_in_duplicate(40)


def test_heuristic_beats_random_at_confirmation_in_duplicate_quick():
    """The same on 10 deal sets, for the fast loop (measured: +16, 95% interval ±2)."""
    beats_random_at_confirmation_in_duplicate(10)


def test_one_heuristic_beats_three_randoms_at_confirmation():
    figures = strength.measure_confirmation(heuristic.decide, random_bot.decide, {"rounds": 4}, 10, 100, "1v3")
    diff, half = strength.mean_interval(figures.diffs())
    assert diff - half > 5


def team_beats_random_team(variants: list[dict]) -> None:
    for variant in variants:
        figures = strength.measure_confirmation(heuristic.decide, random_bot.decide, {"rounds": 4, **variant},
                                                4, 7, "2v2")
        assert statistics.fmean(figures.diffs()) > 4, variant


@pytest.mark.slow
def test_heuristic_team_beats_random_team_in_every_confirmation_variant():
    team_beats_random_team(CONFIRMATION_VARIANTS)


def test_heuristic_team_beats_random_team_with_every_option_on():
    """The quick version, for the fast loop: the two variants with every option on."""
    team_beats_random_team([v for v in CONFIRMATION_VARIANTS if v["double"] and v["blind"] and v["pairs"]])


def test_heuristic_beats_random_at_aegis_in_duplicate():
    """30 seeds, each match played with the heuristic at seat 0 and at seat 1: 60
    matches (measured: it wins all of them)."""
    figures = strength.measure_aegis(heuristic.decide, random_bot.decide, {}, 30, 1)
    assert figures.matches == 60
    low, _ = strength.wilson(figures.wins, figures.matches)
    assert figures.wins / figures.matches > 0.8 and low > 0.6


# --- a few plays by the rules of thumb -------------------------------------------------------


def answer(state, seat: int) -> str:
    legal = [state.action_name(a) for a in state.legal_actions(seat)]
    view = GameView("g", state.game, options_text(state.options), seat, [], 0, 0)
    return heuristic.decide(state.observation(seat), legal, view)


def confirmation_deal(hands: dict[int, str]):
    """A one-round game, seat 0 dealing; seat 0's last card is the trump card."""
    return GAMES["confirmation"].new({"rounds": 1}, decks=[deck_for_confirmation(hands, dealer=0)])


def test_confirmation_ducks_with_the_highest_losing_card_once_the_bid_is_full():
    state = confirmation_deal({
        0: "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
        1: "QS AH KH QH JH TH AD KD QD JD TD 9D 8D",
        2: "KS 9S 3S 2H 3H 4H 5H 6H 7H 2D 3D 4D 5D",
    })
    act(state, "BID 4", "BID 0", "BID 3", "BID 5", "QS")
    assert answer(state, 2) == "9S"


def test_confirmation_takes_the_trick_with_the_lowest_winning_card_when_last():
    state = confirmation_deal({
        0: "AS KS QS 2S AH KH 3D 4D 5D 6D 7D 8D 2C",
        1: "5S 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH 9D",
        2: "9S 3S 4S 6S 7S 8S TS 3C 4C 5C 6C 7C 8C",
        3: "JS AD KD QD JD TD 2D 9C TC JC QC KC AC",
    })
    act(state, "BID 0", "BID 2", "BID 3", "BID 5", "5S", "9S", "JS")
    assert answer(state, 0) == "QS"


def aegis_deal(slave: str, master: str, key: str) -> AegisGame:
    """One game, seat 0 the master, with these hands and key card (RULES §3)."""
    s, m = cards.parse_list(slave), cards.parse_list(master)
    head = [c for pair in zip(s, m) for c in pair] + [cards.parse(key)]
    deck = head + [c for c in range(52) if c not in set(head)]
    return AegisGame(0, deck)  # seat 0 is the master


def test_aegis_answers_a_led_face_card_with_the_ace():
    game = aegis_deal(slave="AS 5S 2D 3D 4C", master="KS 6D 7D 8C 9C", key="7H")
    act(game, "STOP", "DECLARE 1", "PASS", "KS")
    assert answer(game, 1) == "AS"     # the ace beats K/Q/J (the 5 would lose)


def test_aegis_kills_a_trump_lead_when_void_in_trumps():
    game = aegis_deal(slave="7S 2S 3D 4D 5C", master="QH 6D 7D 8C 9C", key="7H")
    act(game, "STOP", "DECLARE 1", "PASS", "QH")
    assert answer(game, 1) == "7S"     # a killer beats a led trump
