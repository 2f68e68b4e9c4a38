"""Confirmation, rule by rule: each test cites the RULES.md section it checks."""

from __future__ import annotations

import pytest
from helpers import act, deck_for_confirmation, play_first_legal, random_playout

from referee import cards
from referee.games import GAMES, IllegalActionError, OptionError
from referee.games import confirmation as conf
from referee.games.base import PUBLIC, NotYourTurnError

SPEC = GAMES["confirmation"]

# Seat 0 all spades, 1 all hearts, 2 all diamonds, 3 all clubs. With dealer 0
# the dealer's last card is AS: spades are trump, and seat 0 wins every trick.
SUITED = {
    0: "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    1: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
    2: "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
    3: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
}


def new(hands=None, dealer=0, suits=None, **options):
    options.setdefault("rounds", 1)
    decks = [deck_for_confirmation(hands or {}, dealer=0)]
    return SPEC.new(options, decks=decks, suits=suits)


def bid_all(g, *bids):
    """Bids in turn order (left of the dealer first)."""
    act(g, *(f"BID {b}" for b in bids))


def play_tricks(g, n):
    play_first_legal(g, 4 * n)


def choose(g, choices: dict[int, str]):
    for seat, text in choices.items():
        g.apply(seat, g.parse_action(text))


# --- 1.1 cards and ranks ----------------------------------------------------

@pytest.mark.parametrize("played, leader, trump, winner", [
    # RULES 1.1 A high .. 2 low; RULES 1.5 highest of the led suit when no trump
    ("2H AH KH 3H", 1, "S", 2),
    ("TH JH 9H 2H", 0, "S", 1),
    # RULES 1.5 a void seat's off-suit card never wins; highest of led suit does
    ("2H 3D AD 4H", 1, "S", 0),
    # RULES 1.5 any trump beats the led suit; the highest trump wins
    ("AH 2S KH QH", 1, "S", 2),
    ("AH 2S 3S KH", 1, "S", 3),
    ("5C AH AD AS", 3, "S", 2),
    ("5C AH AD KC", 0, "H", 1),
    # RULES 1.5 trump led: highest trump wins
    ("2S AH AD 3S", 1, "S", 0),
])
def test_1_1_and_1_5_trick_winner(played, leader, trump, winner):
    assert conf.trick_winner(cards.parse_list(played), leader, cards.parse_suit(trump)) == winner


# --- 1.2 a game -------------------------------------------------------------

def test_1_2_eight_rounds_dealer_passes_clockwise():
    g = SPEC.new({}, seed=3)
    assert g.options["rounds"] == 8
    random_playout(g, __import__("random").Random(3))
    dealers = [e.data["dealer"] for e in g.events if e.kind == "round"]
    assert dealers == [0, 1, 2, 3, 0, 1, 2, 3]
    assert len(g.shoe.decks) == 8
    assert g.scores() == [sum(r["points"][s] for r in g.history) for s in range(4)]


def test_1_2_rounds_option():
    g = SPEC.new({"rounds": 3}, seed=1)
    random_playout(g, __import__("random").Random(1))
    assert len(g.history) == 3
    with pytest.raises(OptionError, match="rounds"):
        SPEC.new({"rounds": 0}, seed=1)


def test_1_2_highest_total_wins_ties_share_a_place():
    from referee.games.base import places_by_score
    assert places_by_score([10, 30, 10, 5]) == [2, 1, 2, 4]
    assert places_by_score([7, 7, 7, 7]) == [1, 1, 1, 1]


# --- 1.3 deal and trump; §3 dealing convention ------------------------------

@pytest.mark.parametrize("round_index", [0, 1, 2, 3])
def test_3_deck_card_i_goes_to_seat_dealer_plus_1_plus_i(round_index):
    decks = [list(range(52))] * 4
    g = SPEC.new({"rounds": 4}, decks=decks)
    for _ in range(round_index):  # finish rounds to move the deal on
        while g.round < round_index:
            seat = g.to_act()[0]
            g.apply(seat, g.legal_actions(seat)[0])
    dealer = round_index
    assert g.dealer == dealer
    for seat in range(4):
        expected = sorted(i for i in range(52) if (dealer + 1 + i) % 4 == seat)
        assert cards.parse_list(g.observation(seat)["hand"]) == expected
    assert "AC" in g.observation(dealer)["hand"]  # card 51


def test_1_3_default_trump_is_the_dealers_last_card_and_everyone_sees_it():
    deck = deck_for_confirmation(SUITED)
    assert deck[51] == cards.parse("AS")
    g = SPEC.new({"rounds": 1}, decks=[deck])
    for seat in range(4):
        obs = g.observation(seat)
        assert obs["trump"] == "S" and obs["trump_card"] == "AS"
    assert "AS" in g.observation(0)["hand"]  # it stays in the dealer's hand
    assert len(g.observation(0)["hand"]) == 13


def test_1_3_random_suit_option_draws_the_trump_and_reveals_no_card():
    g = new(SUITED, trump="random-suit", suits=[2])
    for seat in range(4):
        assert g.observation(seat)["trump"] == "D"
        assert g.observation(seat)["trump_card"] is None
    assert g.shoe.suits == [2]
    drawn = {SPEC.new({"trump": "random-suit", "rounds": 1}, seed=s).trump for s in range(60)}
    assert drawn == {0, 1, 2, 3}


def test_1_3_trump_option_rejects_unknown_values():
    with pytest.raises(OptionError, match="trump"):
        SPEC.new({"trump": "no-trump"}, seed=1)


# --- 1.4 bidding ------------------------------------------------------------

def test_1_4_bidding_starts_left_of_dealer_and_every_bid_is_public():
    g = new()
    order = []
    for b in (2, 3, 4, 1):
        seat = g.to_act()[0]
        order.append(seat)
        assert g.legal_actions(seat)[0] == conf.BID
        g.apply(seat, conf.BID + b)
    assert order == [1, 2, 3, 0]
    for seat in range(4):
        assert g.observation(seat)["bids"] == [1, 2, 3, 4]
    assert [(e.seat, e.data) for e in g.events if e.kind == "bid" and e.to == PUBLIC] == \
        [(1, 2), (2, 3), (3, 4), (0, 1)]


@pytest.mark.parametrize("others, forbidden", [
    ((3, 4, 5), 1),
    ((0, 0, 0), 13),
    ((13, 0, 0), 0),
    ((4, 4, 4), 1),
    ((5, 5, 5), None),   # 13 - 15 < 0: no forbidden number
    ((13, 13, 13), None),
])
def test_1_4_dealer_may_not_make_the_total_13(others, forbidden):
    g = new()
    bid_all(g, *others)
    legal = [a - conf.BID for a in g.legal_actions(0)]
    if forbidden is None:
        assert legal == list(range(14))
    else:
        # Resolution 1.4: only the one number is barred, its neighbours are allowed
        assert legal == [n for n in range(14) if n != forbidden]
        with pytest.raises(IllegalActionError) as err:
            g.apply(0, conf.BID + forbidden)
        assert err.value.rule == "1.4"


def test_1_4_non_dealers_may_bid_anything_0_to_13():
    g = new()
    bid_all(g, 6)
    assert [a - conf.BID for a in g.legal_actions(2)] == list(range(14))
    bid_all(g, 7)  # seat 2 makes the running total 13: allowed for a non-dealer
    with pytest.raises(IllegalActionError, match="bid"):
        g.apply(3, cards.parse("2C"))  # a card during bidding
    with pytest.raises(NotYourTurnError):
        g.apply(1, conf.BID + 1)


# --- 1.5 trick play ---------------------------------------------------------

def test_1_5_left_of_dealer_leads_and_may_lead_trump():
    g = new(SUITED)
    bid_all(g, 0, 0, 0, 12)
    assert g.to_act() == (1,)
    g2 = new({1: "2S 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 0: "3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2D"})
    bid_all(g2, 0, 0, 0, 0)
    assert cards.parse("2S") in g2.legal_actions(1)  # trump may be led at any time


def test_1_5_must_follow_suit_and_a_void_seat_may_play_anything():
    hands = {
        1: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 2S",
        2: "AH 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",
        3: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AD",
    }
    g = new(hands)
    bid_all(g, 1, 1, 1, 1)
    act(g, "2H")
    assert g.legal_actions(2) == [cards.parse("AH")]
    with pytest.raises(IllegalActionError) as err:
        g.apply(2, cards.parse("2D"))
    assert err.value.rule == "1.5" and "follow suit" in str(err.value)
    act(g, "AH")
    assert len(g.legal_actions(3)) == 13  # void in hearts: anything, no duty to trump
    with pytest.raises(IllegalActionError, match="does not hold"):
        g.apply(3, cards.parse("AS"))


def test_1_5_winner_leads_next_and_13_tricks_are_played():
    g = new(SUITED)
    bid_all(g, 0, 0, 0, 12)
    act(g, "2H", "2D", "2C", "2S")  # seat 0 trumps
    assert g.to_act() == (0,)
    play_first_legal(g, 4 * 6)
    while g.phase == conf.CONFIRMING:
        for s in g.to_act():
            g.apply(s, conf.CONFIRM)
    play_first_legal(g, 4 * 6)
    assert g.is_terminal()
    assert g.history[0]["tricks"] == [13, 0, 0, 0]
    assert sum(1 for e in g.events if e.kind == "trick") == 13


# --- 1.6 the confirmation phase ---------------------------------------------

def confirm_phase_game(**options):
    g = new(SUITED, **options)
    bid_all(g, 0, 0, 0, 12)
    play_tricks(g, 7)
    return g


def test_1_6_after_the_7th_trick_all_four_choose_simultaneously():
    g = new(SUITED)
    bid_all(g, 0, 0, 0, 12)
    play_tricks(g, 6)
    assert g.phase == conf.PLAYING
    play_tricks(g, 1)
    assert g.phase == conf.CONFIRMING and g.to_act() == (0, 1, 2, 3)
    for seat in range(4):
        assert g.legal_actions(seat) == [conf.CONFIRM] + [conf.REVISE + n for n in range(14) if n != g.bids[seat]]


def test_1_6_no_choice_is_revealed_before_all_four_are_in():
    g = confirm_phase_game()
    n_events = len(g.events)
    before = [g.observation(s) for s in (1, 2, 3)]
    g.apply(0, conf.REVISE + 13)
    assert g.to_act() == (1, 2, 3)
    assert [g.observation(s) for s in (1, 2, 3)] == before
    assert all(e.kind != "choice" for e in g.events[n_events:])
    assert g.observation(0)["my_pending_choice"] == "REVISE 13"
    with pytest.raises(NotYourTurnError):
        g.apply(0, conf.CONFIRM)  # one choice per phase
    choose(g, {3: "CONFIRM", 1: "CONFIRM", 2: "REVISE 1"})  # any order
    shown = [(e.seat, e.data["choice"]) for e in g.events[n_events:] if e.kind == "choice"]
    assert shown == [(0, "REVISE 13"), (1, "CONFIRM"), (2, "REVISE 1"), (3, "CONFIRM")]
    assert all(e.to == PUBLIC for e in g.events[n_events:] if e.kind == "choice")
    assert g.observation(1)["bids_in_force"] == [13, 0, 1, 0]
    assert g.to_act() == (0,)  # the winner of the 7th trick leads the 8th


def test_1_6_a_revision_must_change_the_number_and_no_sum_constraint_applies():
    g = confirm_phase_game()
    with pytest.raises(IllegalActionError) as err:
        g.apply(1, conf.REVISE + 0)
    assert err.value.rule == "1.6"
    with pytest.raises(IllegalActionError, match="CONFIRM or REVISE"):
        g.apply(1, conf.BID + 2)
    choose(g, {0: "REVISE 10", 1: "REVISE 1", 2: "REVISE 1", 3: "REVISE 1"})  # total 13: allowed
    assert g.parts == [10, 1, 1, 1]


# --- 1.7 scoring ------------------------------------------------------------

@pytest.mark.parametrize("choices, bid, tricks, points", [
    ([True], 0, 0, 20), ([True], 3, 3, 26), ([True], 13, 13, 46),
    ([False], 0, 0, 10), ([False], 3, 3, 13), ([False], 13, 13, 23),
    ([True], 3, 5, -6), ([True], 5, 3, -6), ([True], 0, 13, -39),
    ([False], 3, 5, -2), ([False], 5, 3, -2), ([False], 13, 0, -13),
])
def test_1_7_score_table(choices, bid, tricks, points):
    assert conf.round_points(choices, bid, tricks) == points


def test_1_7_scores_a_played_round():
    g = confirm_phase_game()
    choose(g, {0: "REVISE 13", 1: "CONFIRM", 2: "CONFIRM", 3: "REVISE 2"})
    play_tricks(g, 6)
    assert g.history[0]["points"] == [10 + 13, 20, 20, -2]
    assert g.scores() == [23, 20, 20, -2]
    assert g.placing() == [1, 2, 2, 4]
    g2 = confirm_phase_game()
    choose(g2, {0: "CONFIRM", 1: "CONFIRM", 2: "CONFIRM", 3: "CONFIRM"})
    play_tricks(g2, 6)
    assert g2.scores() == [-3, 20, 20, 20]


# --- 1.8 double -------------------------------------------------------------

@pytest.mark.parametrize("choices, bid, tricks, points", [
    ([True, True], 3, 3, 30 + 9),    # confirmed twice: triple
    ([False, True], 3, 3, 20 + 6),   # revise then confirm: double
    ([True, False], 3, 3, 10 + 3),   # last choice revise: revised
    ([False, False], 3, 3, 10 + 3),
    # Resolution 1.8: a miss after a final CONFIRM costs 3 per trick, once or twice confirmed
    ([True, True], 3, 5, -6), ([False, True], 3, 5, -6),
    ([True, False], 3, 5, -2), ([False, False], 3, 1, -2),
])
def test_1_8_double_score_table(choices, bid, tricks, points):
    assert conf.round_points(choices, bid, tricks) == points


def test_1_8_double_has_phases_after_tricks_4_and_9():
    g = new(SUITED, double=True)
    bid_all(g, 0, 0, 0, 12)
    play_tricks(g, 4)
    assert g.to_act() == (0, 1, 2, 3)
    choose(g, {0: "REVISE 13", 1: "CONFIRM", 2: "CONFIRM", 3: "REVISE 1"})
    play_tricks(g, 3)
    assert g.phase == conf.PLAYING  # nothing after the 7th trick in double
    play_tricks(g, 2)
    assert g.to_act() == (0, 1, 2, 3)
    with pytest.raises(IllegalActionError) as err:
        g.apply(0, conf.REVISE + 13)  # must differ from the number in force after phase 1
    assert err.value.rule == "1.8"
    g.apply(3, conf.REVISE + 0)  # going back to the original bid is allowed
    choose(g, {0: "CONFIRM", 1: "CONFIRM", 2: "REVISE 1"})
    play_tricks(g, 4)
    # seat 0: revise then confirm, hit 13: double; 1: confirm twice, hit 0: triple;
    # 2: confirm then revise to 1, took 0: -1; 3: revise, revise back to 0, hit: 10
    assert g.history[0]["points"] == [20 + 26, 30, -1, 10]


# --- 1.8 blind --------------------------------------------------------------

def test_1_8_blind_hides_others_choices_until_the_round_is_scored():
    g = confirm_phase_game(blind=True)
    start = len(g.events)
    choose(g, {0: "REVISE 13", 1: "CONFIRM", 2: "REVISE 3", 3: "CONFIRM"})
    obs1 = g.observation(1)
    assert obs1["choices"] == [[], ["CONFIRM"], [], []]
    assert obs1["bids_in_force"] == [12, 0, 0, 0]       # seat 2's revision is not shown
    assert g.observation(2)["bids_in_force"] == [12, 0, 3, 0]  # a seat sees its own
    for seat in range(4):
        seen = [e for e in g.visible_events(seat, start) if e.kind == "choice"]
        assert [e.seat for e in seen] == [seat]
    play_tricks(g, 6)
    score = [e for e in g.events if e.kind == "score"][-1]
    assert score.to == PUBLIC and score.data["final_bids"] == [13, 0, 3, 0]
    assert score.data["choices"] == [["REVISE"], ["CONFIRM"], ["REVISE"], ["CONFIRM"]]


# --- 1.8 pairs --------------------------------------------------------------

def test_1_8_pairs_team_bid_and_scoring():
    g = new(SUITED, pairs=True)
    bid_all(g, 0, 6, 0)
    # the dealer's constraint applies to the total of all four
    assert conf.BID + 7 not in g.legal_actions(0)
    bid_all(g, 6)
    play_tricks(g, 7)
    with pytest.raises(IllegalActionError) as err:
        g.apply(2, conf.REVISE + 6)  # must differ from the seat's own part
    assert err.value.rule == "1.8"
    # seat 0 revises: the team is not confirmed; team bid 7 + 6 = 13, team took 13
    choose(g, {0: "REVISE 7", 2: "CONFIRM", 1: "CONFIRM", 3: "CONFIRM"})
    play_tricks(g, 6)
    assert g.history[0]["points"] == [23, 20, 23, 20]   # both partners get the team's score
    assert g.placing() == [1, 3, 1, 3]
    assert g.results()["teams"] == [[0, 2], [1, 3]]


def test_1_8_pairs_team_is_confirmed_only_if_both_confirm_and_may_exceed_13():
    g = new(SUITED, pairs=True)
    bid_all(g, 0, 6, 0, 6)
    play_tricks(g, 7)
    choose(g, {0: "REVISE 13", 2: "CONFIRM", 1: "CONFIRM", 3: "REVISE 1"})
    play_tricks(g, 6)
    # team 0+2: bid 19 (over 13 is allowed), took 13, revised: -6; team 1+3 revised, bid 1, took 0: -1
    assert g.history[0]["points"] == [-6, -1, -6, -1]


def test_1_8_pairs_with_double_team_choices():
    g = new(SUITED, pairs=True, double=True)
    bid_all(g, 0, 6, 0, 6)
    play_tricks(g, 4)
    # phase 1: seat 0 revises -> the team's phase-1 choice is REVISE
    choose(g, {0: "REVISE 7", 2: "CONFIRM", 1: "CONFIRM", 3: "CONFIRM"})
    play_tricks(g, 5)
    choose(g, {0: "CONFIRM", 2: "CONFIRM", 1: "CONFIRM", 3: "CONFIRM"})
    play_tricks(g, 4)
    # team 0+2: revise then both confirm, hit 13: double = 20 + 26; team 1+3 confirmed twice, hit 0: triple = 30
    assert g.history[0]["points"] == [46, 30, 46, 30]


def test_1_8_variants_combine():
    import random
    for double in (False, True):
        for blind in (False, True):
            for pairs in (False, True):
                for trump in ("dealer-card", "random-suit"):
                    opts = dict(double=double, blind=blind, pairs=pairs, trump=trump, rounds=2)
                    g = SPEC.new(opts, seed=11)
                    random_playout(g, random.Random(5))
                    assert g.is_terminal() and len(g.history) == 2


# --- actions and notation ---------------------------------------------------

@pytest.mark.parametrize("text, code", [("AS", 12), ("td", 34), ("BID 0", 52), ("BID 13", 65),
                                        ("CONFIRM", 66), ("REVISE 0", 67), ("revise 13", 80)])
def test_action_notation_round_trips(text, code):
    assert conf.parse_action(text) == code
    assert conf.parse_action(conf.action_name(code)) == code


@pytest.mark.parametrize("text", ["", "BID", "BID 14", "BID -1", "REVISE x", "1S", "CONFIRM 3", "PASS"])
def test_bad_action_text_is_rejected(text):
    from referee.games.base import ActionSyntaxError
    with pytest.raises(ActionSyntaxError):
        conf.parse_action(text)
