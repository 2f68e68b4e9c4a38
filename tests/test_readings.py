"""The readings docs/rules.md decides (each a **Resolution** there), checked against the engines
and the record checker: what the rule book says is what the referee does."""

from __future__ import annotations

import json
import random

import pytest

from referee import records
from referee.games import GAMES, IllegalActionError
from referee.games.aegis import PASS, score_game
from referee.games.base import NotYourTurnError, places_by_score
from referee.games.confirmation import CONFIRM, REVISE


def playout(game: str, options: dict, seed: int, until=None):
    """A random game, stopped (before acting) at the first state where ``until(state)`` holds."""
    state = GAMES[game].new(options, seed=seed)
    rng = random.Random(seed)
    while seats := state.to_act():
        if until is not None and until(state):
            return state
        seat = seats[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    return state


# --- 1.7 places after a tie -------------------------------------------------------------------

def test_places_after_a_tie_skip_the_places_the_tied_seats_fill():
    assert places_by_score([40, 40, 25, 10]) == [1, 1, 3, 4]
    assert places_by_score([40, 25, 25, 25]) == [1, 2, 2, 2]


def test_in_pairs_partners_share_their_teams_place():
    placings = {tuple(playout("confirmation", {"rounds": 1, "pairs": True}, seed).placing()) for seed in range(40)}
    assert placings <= {(1, 3, 1, 3), (3, 1, 3, 1), (1, 1, 1, 1)}
    assert {(1, 3, 1, 3), (3, 1, 3, 1)} <= placings


# --- 1.6 who is still to act, who leads after a phase, which rule a refusal cites ---------------

def in_phase(options: dict, phase_trick: int, seed: int = 1):
    return playout("confirmation", {"rounds": 1, **options}, seed,
                   until=lambda s: s.phase == "confirm" and s.tricks_done == phase_trick)


def test_a_seat_that_has_answered_is_no_longer_to_act_and_its_choice_stays_hidden():
    state = in_phase({}, 7)
    assert state.to_act() == (0, 1, 2, 3)
    state.apply(2, CONFIRM)
    state.apply(0, CONFIRM)
    assert state.to_act() == (1, 3) and state.legal_actions(2) == []
    with pytest.raises(NotYourTurnError) as twice:
        state.apply(2, CONFIRM)
    assert twice.value.rule == "1.6"
    assert state.observation(2)["my_pending_choice"] == "CONFIRM"
    assert all(state.observation(s)["choices"] == [[], [], [], []] for s in range(4))
    assert not [e for e in state.events if e.kind == "choice"]


@pytest.mark.parametrize("options, phases", [({}, (7,)), ({"double": True}, (4, 9))])
def test_the_winner_of_the_trick_before_a_phase_leads_the_next(options, phases):
    for seed in range(5):
        for trick in phases:
            state = in_phase(options, trick, seed)
            winner = state.completed[-1][2]
            for seat in range(4):
                state.apply(seat, CONFIRM)
            assert state.to_act() == (winner,) and state.leader == winner


def test_a_refused_revision_cites_1_6_in_a_plain_game_and_1_8_where_a_variant_rules():
    def refused(options: dict, phase_trick: int) -> str:
        state = in_phase(options, phase_trick)
        with pytest.raises(IllegalActionError) as error:
            state.apply(0, REVISE + state.parts[0])
        return error.value.rule

    assert refused({}, 7) == "1.6"
    assert refused({"double": True}, 4) == "1.6"  # phase 1 of double: 1.6's constraint
    assert refused({"double": True}, 9) == "1.8"  # phase 2: the number in force after phase 1
    assert refused({"pairs": True}, 7) == "1.8"


def test_a_record_is_refused_with_the_rule_the_live_referee_cites():
    state = in_phase({}, 7)
    record = records.to_record(state)
    record["actions"].append([0, GAMES["confirmation"].action_name(REVISE + state.parts[0])])
    with pytest.raises(records.IllegalRecordActionError) as refused:
        records.replay(record)
    assert refused.value.rule == "1.6"


# --- 1.8 blind choices are shown at scoring ------------------------------------------------------

def test_blind_choices_are_shown_to_every_seat_when_the_round_is_scored():
    state = playout("confirmation", {"rounds": 2, "blind": True}, 3)
    for seat in range(4):
        seen = state.visible_events(seat)
        choices = [e for e in seen if e.kind == "choice"]
        assert {e.seat for e in choices} == {seat}  # the round's own choices: its own only
        scored = [e.data for e in seen if e.kind == "score"]
        assert len(scored) == 2 and all(len(s["choices"]) == 4 and all(s["choices"]) for s in scored)
        assert all(s["final_bids"] == state.history[i]["final_bids"] for i, s in enumerate(scored))


def test_blind_revised_numbers_are_shown_at_scoring_even_a_first_revision_revised_again():
    """RULES 1.8: the choices "(and revised numbers)" are hidden until the round is scored, so then
    every seat sees each seat's bid in force after each phase, the double phase-1 revision too."""
    twice = 0
    for seed in range(30):
        state = playout("confirmation", {"rounds": 1, "blind": True, "double": True}, seed)
        (real,) = state.history
        for seat in range(4):
            (shown,) = [e.data for e in state.visible_events(seat) if e.kind == "score"]
            assert shown["phase_bids"] == real["phase_bids"]
            for s in range(4):
                assert len(shown["phase_bids"][s]) == 2 and shown["phase_bids"][s][-1] == shown["final_bids"][s]
                before = [shown["bids"][s], *shown["phase_bids"][s]]
                for phase, word in enumerate(shown["choices"][s]):
                    assert (word == "CONFIRM") == (before[phase + 1] == before[phase])
        twice += sum(ch == ["REVISE", "REVISE"] for ch in real["choices"])
    assert twice  # some seat revised in both phases: its phase-1 number was shown at scoring


# --- 2.4 discards: out of the game, and private for good ----------------------------------------

def test_discards_go_nowhere_and_stay_private_after_the_end():
    state = playout("aegis", {}, 5)
    assert state.is_terminal()
    exchanged = [e for e in state.events if e.kind == "exchange_cards"]
    assert exchanged and all(e.to == e.seat for e in exchanged)
    for seat in (0, 1):  # to the end: the other's cards never reach a seat
        assert all(e.seat == seat for e in state.visible_events(seat) if e.kind == "exchange_cards")
    results = json.dumps(state.results())
    assert "discarded" not in results and "drawn" not in results  # the counts only
    game = state.current
    assert game.stock == list(game.deck[11:])  # only drawn from, from the top: no discard goes back


# --- 2.5 the forced pass is asked and recorded ---------------------------------------------------

def test_the_slaves_forced_pass_is_asked_and_in_the_record():
    state = playout("aegis", {}, 0, until=lambda s: s.current.d_master == 5 and s.current.phase == 3)
    slave = state.current.slave
    assert state.to_act() == (slave,) and state.legal_actions(slave) == [PASS]
    state.apply(slave, PASS)
    record = records.to_record(state)
    assert record["actions"][-1] == [slave, "PASS"]
    master_leads = state.legal_action_names(1 - slave)[0]  # what the master would play next
    without = dict(record, actions=record["actions"][:-1] + [[1 - slave, master_leads]])
    with pytest.raises(records.IllegalRecordActionError) as refused:
        records.replay(without)
    assert refused.value.rule == "2.5"
    assert [e.kind for e in state.events[-2:]] == ["pass", "attacker"]


# --- 2.7 4plus changes only the promise bonus ----------------------------------------------------

def test_4plus_changes_only_the_promise_bonus():
    for d in range(1, 6):
        for t in range(6):
            for d_m in range(1, d + 1):
                table, four = score_game(d, t, d_m, "table"), score_game(d, t, d_m, "4plus")
                promise = t == d and d < 4
                assert four == ((table[0] - 1, table[1]) if promise else table), (d, t, d_m)


def test_4plus_results_say_the_promise_was_not_paid():
    seen = 0
    for seed in range(60):
        for g in playout("aegis", {"promise": "4plus"}, seed).results()["games"]:
            if g["attacker_won"] and g["attacker_tricks"] == g["d"]:
                assert g["promise"] == (g["d"] >= 4)
                seen += 1
    assert seen > 10
