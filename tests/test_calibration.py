"""Rank confidence that holds, measured (a short run of ``referee.tools.calibration``, whose longer run
is the tables in docs/tournaments.md): the joint fit's LOS under the null and among printed pairs, and
the head-to-head intervals and bounds, with fixed seeds and 400 simulated tournaments a case at 5
deal sets (the null's standard error, from the tables' own spread, under 0.75 points: ±1.5 at two
standard errors)."""

from __future__ import annotations

import pytest

from referee.tools.calibration import H2H_SPREADS, h2h_rate, h2h_truth, null_rate, order_rate

TABLES = 400
#: 5% and the tolerance of two standard errors
AT_MOST = 5.0 + 1.5


@pytest.mark.parametrize("kind, world, deal_sets, tables", [
    *(pytest.param(*case, marks=pytest.mark.slow) for case in [
        ("2-player", "project", 5, TABLES), ("4-player", "project", 5, TABLES), ("pairs", "project", 5, TABLES),
        ("4-player", "harsh", 5, TABLES)]),
    ("4-player", "project", 2, 300),  # the fast loop's case
    pytest.param("2-player", "harsh", 20, 150, marks=pytest.mark.slow)])
def test_equal_bots_cross_95_percent_at_most_5_percent_of_the_time(kind, world, deal_sets, tables):
    r = null_rate(kind, world, deal_sets, tables)
    assert r.pairs == 12 * tables
    assert r.pct <= AT_MOST, r
    if deal_sets == 5:
        assert r.se <= 0.75, r.se


@pytest.mark.slow
@pytest.mark.parametrize("kind, world", [("2-player", "project"), ("4-player", "project"), ("4-player", "harsh")])
def test_pairs_printed_at_95_percent_are_in_the_true_order(kind, world):
    r = order_rate(kind, world, "spread", 5, TABLES)
    assert r.printed95 > 150  # enough printed pairs to measure it
    assert 100.0 * r.right95 / r.printed95 >= 95.0 - 1.5, r
    assert r.right99 == r.printed99 or 100.0 * r.right99 / r.printed99 >= 99.0 - 1.0, r


@pytest.fixture(scope="module")
def truths():
    cache = {}

    def truth(kind, world, spread):
        if (kind, world, spread) not in cache:
            cache[kind, world, spread] = h2h_truth(kind, world, H2H_SPREADS[spread], 2000)
        return cache[kind, world, spread]
    return truth


@pytest.mark.slow
def test_four_player_head_to_head_bounds_hold_at_two_deal_sets(truths):
    r = h2h_rate("4-player", "project", "spread", 2, 400, truths("4-player", "project", "spread"))
    assert r.bounds > 50 and 100.0 * r.bounds_held / r.bounds >= 95.0 - 1.5, r
    assert 100.0 * r.held / r.total >= 95.0 - 1.5, r


@pytest.mark.slow
@pytest.mark.parametrize("kind, deal_sets", [("2-player", 5), ("4-player", 5), ("2-player", 10)])
def test_a_dominant_bots_head_to_head_holds_the_truth(truths, kind, deal_sets):
    r = h2h_rate(kind, "project", "dominant", deal_sets, 400, truths(kind, "project", "dominant"))
    assert 100.0 * r.lopsided_held / r.lopsided >= 95.0 - 2.0, r  # 400 tables: about ±2 points
    assert r.bounds > 100 and 100.0 * r.bounds_held / r.bounds >= 95.0 - 2.0, r
    assert r.few > 100 and 100.0 * r.few_held / r.few >= 95.0 - 2.5, r
