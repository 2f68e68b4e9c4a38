"""The printed 95% rating intervals hold the true ratings at least 93% of the time, from 2 to 20
deal sets, for 2-player and 4-player data with strong per-deal effects, and in pairs mode the
rotated partnerships recover each bot's own rating (a short run of ``referee.tools.coverage``,
whose longer run is the table in docs/tournaments.md)."""

from __future__ import annotations

import pytest

from referee.tools.coverage import TRUE, limit, measure

TOURNAMENTS = 40  # x 4 bots = 160 intervals a case


@pytest.fixture(scope="module")
def truths():
    return {}


def true_ratings(truths, kind, luck):
    if (kind, luck) not in truths:
        truths[kind, luck] = limit(kind, luck, deal_sets=2000)
    return truths[kind, luck]


@pytest.mark.parametrize("kind", ["2-player", "4-player"])
@pytest.mark.parametrize("deal_sets", [2, pytest.param(5, marks=pytest.mark.slow),
                                       pytest.param(10, marks=pytest.mark.slow),
                                       pytest.param(20, marks=pytest.mark.slow)])
def test_intervals_hold_the_truth_or_are_flagged(truths, kind, deal_sets):
    c = measure(kind, deal_sets, 100.0, TOURNAMENTS, bootstrap=100, true=true_ratings(truths, kind, 100.0))
    assert c.total == 4 * TOURNAMENTS
    assert c.pct >= 93.0 or c.flagged == c.total, c


@pytest.mark.slow
def test_pairs_recover_each_bots_rating(truths):
    true = true_ratings(truths, "pairs", 100.0)
    # the world's ratings keep the bots' order and spread (partners are told apart)
    assert [k for k, _ in sorted(true.items(), key=lambda kv: kv[1])] == sorted(TRUE)
    assert true["d"] - true["a"] > 200
    c = measure("pairs", 10, 100.0, TOURNAMENTS, bootstrap=100, true=true)
    assert c.pct >= 93.0, c
    assert c.mean_half_width < 150  # and the intervals are narrow enough to tell a from d
