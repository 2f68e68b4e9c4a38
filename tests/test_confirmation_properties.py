"""Property tests (RULES §1): thousands of random legal Confirmation rounds in
every variant combination, checked against an independent re-computation from
the event log."""

from __future__ import annotations

import random

import pytest
from helpers import random_playout
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import cards
from referee.games import GAMES

SPEC = GAMES["confirmation"]

options = st.fixed_dictionaries({
    "rounds": st.integers(1, 8),
    "trump": st.sampled_from(["dealer-card", "random-suit"]),
    "double": st.booleans(),
    "blind": st.booleans(),
    "pairs": st.booleans(),
})


def expected_points(choices: list[bool], bid: int, took: int) -> int:
    """RULES 1.7/1.8 written out again, independently of the engine."""
    if took != bid:
        return -(3 if choices[-1] else 1) * abs(took - bid)
    if not choices[-1]:
        return 10 + bid
    multiplier = 3 if len(choices) == 2 and all(choices) else 2
    return 10 * multiplier + multiplier * bid


def winner_of(trick: list[tuple[int, int]], trump: int) -> int:
    led = cards.SUIT[trick[0][1]]
    trumps = [(cards.RANK[c], s) for s, c in trick if cards.SUIT[c] == trump]
    if trumps:
        return max(trumps)[1]
    return max((cards.RANK[c], s) for s, c in trick if cards.SUIT[c] == led)[1]


def check_round(rnd: list, opts: dict, totals: list[int]) -> None:
    hands = {e.seat: set(cards.parse_list(e.data)) for e in rnd if e.kind == "deal"}
    assert sorted(len(h) for h in hands.values()) == [13] * 4
    assert set().union(*hands.values()) == set(range(52))
    trump = cards.SUITS.index(next(e for e in rnd if e.kind == "trump").data["suit"])
    bids = {e.seat: e.data for e in rnd if e.kind == "bid"}
    assert sum(bids.values()) != 13, "RULES 1.4: the four bids never total 13"
    parts = dict(bids)
    choices: dict[int, list[bool]] = {s: [] for s in range(4)}
    trick: list[tuple[int, int]] = []
    won = [0] * 4
    played: list[int] = []
    tricks_seen = 0
    for e in rnd:
        if e.kind == "play":
            e = e._replace(data=cards.parse(e.data))
            if trick:
                led = cards.SUIT[trick[0][1]]
                if cards.SUIT[e.data] != led:
                    assert not any(cards.SUIT[c] == led for c in hands[e.seat]), "revoke"
            assert e.data in hands[e.seat]
            hands[e.seat].discard(e.data)
            trick.append((e.seat, e.data))
            played.append(e.data)
        elif e.kind == "trick":
            assert len(trick) == 4 and e.seat == winner_of(trick, trump)
            won[e.seat] += 1
            tricks_seen += 1
            trick = []
        elif e.kind == "choice":
            word = e.data["choice"].split()
            confirmed = word[0] == "CONFIRM"
            if not confirmed:
                assert int(word[1]) != parts[e.seat], "a revision must change the number"
                parts[e.seat] = int(word[1])
            choices[e.seat].append(confirmed)
    assert tricks_seen == 13 and sorted(played) == list(range(52))
    phases = 2 if opts["double"] else 1
    assert all(len(c) == phases for c in choices.values())
    score = next(e for e in rnd if e.kind == "score").data
    if opts["pairs"]:
        expected = [0] * 4
        for a, b in ((0, 2), (1, 3)):
            team = [x and y for x, y in zip(choices[a], choices[b])]
            expected[a] = expected[b] = expected_points(team, parts[a] + parts[b], won[a] + won[b])
    else:
        expected = [expected_points(choices[s], parts[s], won[s]) for s in range(4)]
    assert score["points"] == expected and score["tricks"] == won
    for s in range(4):
        totals[s] += expected[s]
    assert score["totals"] == totals


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(opts=options, seed=st.integers(0, 2**32), player_seed=st.integers(0, 2**32))
def test_random_games_keep_every_invariant(opts, seed, player_seed):
    g = SPEC.new(opts, seed=seed)
    random_playout(g, random.Random(player_seed))
    assert g.is_terminal() and not g.to_act()
    rounds: list[list] = []
    for e in g.events:
        if e.kind == "round":
            rounds.append([])
        if e.kind not in ("round", "end"):
            rounds[-1].append(e)
    assert len(rounds) == opts["rounds"]
    totals = [0] * 4
    for rnd in rounds:
        check_round(rnd, g.options, totals)
    assert g.scores() == totals
    assert g.placing() == [1 + sum(t > x for t in totals) for x in totals]
    decisions = opts["rounds"] * (4 + 52 + 4 * (2 if opts["double"] else 1))
    assert len(g.actions) == decisions


@settings(max_examples=100, deadline=None)
@given(opts=options, seed=st.integers(0, 2**32), player_seed=st.integers(0, 2**32))
def test_random_games_keep_every_invariant_quick(opts, seed, player_seed):
    """The same property on 100 random games, for the fast loop (the 2000 above are marked slow)."""
    test_random_games_keep_every_invariant.hypothesis.inner_test(opts, seed, player_seed)
