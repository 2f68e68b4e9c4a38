"""Duplicate scheduling: every bot plays every deal from every seat, equally often."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from referee.competition.schedule import make_schedule, rotations
from referee.model import deal_seed


def seat_counts(schedule, bots, seats):
    """(bot, seat, deal set) -> how many times the bot sat there on that deal set."""
    c = Counter()
    for s in schedule.seatings:
        for seat, bot in enumerate(s.lineup):
            c[(bot, seat, s.deal_set)] += 1
    return c


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("pairs", [False, True])
def test_confirmation_every_bot_sees_every_seat_of_every_deal_equally(n, pairs):
    bots = [f"b{i}" for i in range(n)]
    sched = make_schedule("confirmation", {"pairs": pairs}, bots, deal_sets=3, seed=1)
    counts = seat_counts(sched, bots, 4)
    for deal_set in range(3):
        per_bot = {b: [counts[(b, seat, deal_set)] for seat in range(4)] for b in bots}
        values = {v for seats in per_bot.values() for v in seats}
        assert len(values) == 1 and values != {0}, per_bot  # the same count for every bot and seat
    keys = [s.key for s in sched.seatings]
    assert len(keys) == len(set(keys))
    # every seating of a deal set is played on the same cards
    for deal_set in range(3):
        assert {s.seed for s in sched.seatings if s.deal_set == deal_set} == {deal_seed(1, deal_set)}


def test_confirmation_two_bots_in_pairs_are_partnered_with_their_own_copies():
    # A A B B would put A and B on both teams: every game a draw between the same two teams
    sched = make_schedule("confirmation", {"pairs": True}, ["A", "B"], deal_sets=1, seed=1)
    for s in sched.seatings:
        assert s.lineup[0] == s.lineup[2] and s.lineup[1] == s.lineup[3] and s.lineup[0] != s.lineup[1]
    assert len(sched.seatings) == 2


def partner_and_opponent_counts(sched):
    partners, opponents = Counter(), Counter()
    for s in sched.seatings:
        teams = [(s.lineup[0], s.lineup[2]), (s.lineup[1], s.lineup[3])]
        for team in teams:
            partners[frozenset(team)] += 1
        for x in teams[0]:
            for y in teams[1]:
                opponents[frozenset((x, y))] += 1
    return partners, opponents


@pytest.mark.parametrize("n", [4, 5, 6])
def test_confirmation_pairs_rotate_partnerships_evenly(n):
    bots = [f"b{i}" for i in range(n)]
    sched = make_schedule("confirmation", {"pairs": True}, bots, deal_sets=2, seed=1)
    partners, opponents = partner_and_opponent_counts(sched)
    every_pair = {frozenset(p) for p in itertools.combinations(bots, 2)}
    assert set(partners) == every_pair and len(set(partners.values())) == 1
    assert set(opponents) == every_pair and len(set(opponents.values())) == 1
    assert set(opponents.values()) == {2 * next(iter(partners.values()))}
    assert "3 partnerships" in sched.note
    # without pairs the schedule is as before: one line-up per group of four
    assert len(make_schedule("confirmation", {}, bots, deal_sets=2, seed=1).seatings) * 3 == len(sched.seatings)


def test_confirmation_pairs_with_a_balanced_subset_still_rotate_partners_in_every_group():
    bots = [f"b{i}" for i in range(9)]
    sched = make_schedule("confirmation", {"pairs": True}, bots, deal_sets=1, seed=1, max_groups=18)
    assert len(sched.groups) == 3 * 18
    for k in range(0, len(sched.groups), 3):
        teams = {frozenset((g[0], g[2])) for g in sched.groups[k:k + 3]}
        assert len(teams) == 3 and len({b for g in sched.groups[k:k + 3] for b in g}) == 4


def test_confirmation_more_bots_than_max_groups_plays_a_balanced_subset():
    bots = [f"b{i}" for i in range(9)]  # 126 groups of four
    sched = make_schedule("confirmation", {}, bots, deal_sets=1, seed=1, max_groups=18)
    assert len(sched.groups) == 18 and "balanced subset" in sched.note
    per_bot = Counter(b for g in sched.groups for b in g)
    assert set(per_bot) == set(bots) and max(per_bot.values()) - min(per_bot.values()) <= 1
    pairs = Counter(p for g in sched.groups for p in itertools.combinations(sorted(g), 2))
    assert len(pairs) == 36  # every pair meets somewhere
    counts = seat_counts(sched, bots, 4)
    for b in bots:
        assert len({counts[(b, seat, 0)] for seat in range(4)}) == 1  # each bot still balanced over seats


def test_aegis_each_pair_plays_each_deal_set_twice_with_seats_swapped():
    bots = ["a", "b", "c"]
    sched = make_schedule("aegis", {}, bots, deal_sets=4, seed=9)
    assert len(sched.seatings) == 3 * 2 * 4
    for deal_set in range(4):
        lineups = [s.lineup for s in sched.seatings if s.deal_set == deal_set]
        for x, y in itertools.combinations(bots, 2):
            assert lineups.count((x, y)) == 1 and lineups.count((y, x)) == 1


def test_deal_seeds_are_stable_and_distinct():
    assert deal_seed(2026, 0) == deal_seed(2026, 0)
    assert len({deal_seed(2026, k) for k in range(1000)}) == 1000
    assert deal_seed(1, 0) != deal_seed(2, 0)


def test_rotations_are_distinct():
    assert rotations(["a", "b", "a", "b"]) == [("a", "b", "a", "b"), ("b", "a", "b", "a")]
    assert len(rotations(["a", "b", "c", "d"])) == 4
