"""Ratings on a reference pool's scale (referee.stats.anchored, the pins of referee.stats.ratings): the
anchored fit against an independent maximisation, the scale check on a changed setting, and the
calibration of "two runs with different fields agree" by simulation with a fixed seed
(referee.tools.anchoring, whose longer run is the tables in docs/pool.md)."""

from __future__ import annotations

import math
import random

import pytest

from referee.stats.anchored import (
    Reference,
    Scale,
    anchored,
    check_scale,
    rate_anchored,
    reference,
)
from referee.stats.ratings import ELO_PER_LOGIT, PairResult, Pin, TeamResult, covariances, fit, rate
from referee.stats.simulation import POOL, PROJECT, SHORTER_CLOCK, SWAPPED, shifted, simulate_tournament
from referee.tools.anchoring import CANDIDATE, FIELDS, agreement, deal_sets_for, fields_difference, lineups


def games(a: str, b: str, wins: int = 0, draws: int = 0, losses: int = 0, first_deal: int = 0) -> list[PairResult]:
    scores = [1.0] * wins + [0.5] * draws + [0.0] * losses
    return [PairResult(first_deal + k, a, b, s) for k, s in enumerate(scores)]


def log_likelihood(outcomes: list[PairResult], elos: dict[str, float], free: set[str], centre: float,
                   prior: float = 1.0) -> float:
    """The penalised log-likelihood of the pinned fit written out directly: the Bradley-Terry terms,
    and one virtual draw for each free player against a virtual opponent at ``centre``."""
    def log_p(d: float) -> float:  # log P(win) at an Elo difference d
        return -math.log1p(10 ** (-d / 400))
    total = sum(o.score * log_p(elos[o.a] - elos[o.b]) + (1 - o.score) * log_p(elos[o.b] - elos[o.a])
                for o in outcomes)
    return total + sum(prior / 2 * (log_p(elos[p] - centre) + log_p(centre - elos[p])) for p in free)


# --- the pinned fit ---------------------------------------------------------------------------------


def test_one_bot_against_fixed_anchors_matches_a_direct_maximisation():
    anchors = {"a": 1300.0, "b": 1500.0, "c": 1800.0}
    outcomes = (games("x", "a", wins=14, draws=2, losses=4) + games("x", "b", wins=9, draws=3, losses=8, first_deal=20)
                + games("x", "c", wins=3, losses=12, first_deal=40) + games("a", "c", wins=5, losses=5, first_deal=60))
    got = fit(outcomes, pins={k: Pin(v) for k, v in anchors.items()})
    assert {k: got[k] for k in anchors} == anchors  # held exactly
    centre = sum(anchors.values()) / 3

    def f(x: float) -> float:
        return log_likelihood(outcomes, {**anchors, "x": x}, {"x"}, centre)
    lo, hi = 500.0, 2500.0  # golden-section search of the concave one-dimensional likelihood
    g = (math.sqrt(5) - 1) / 2
    while hi - lo > 1e-7:
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        lo, hi = (lo, m2) if f(m1) > f(m2) else (m1, hi)
    assert got["x"] == pytest.approx((lo + hi) / 2, abs=1e-3)
    # the games between anchors say nothing about x: dropping them changes nothing
    assert fit(outcomes[:-10], pins={k: Pin(v) for k, v in anchors.items()})["x"] == pytest.approx(got["x"], abs=1e-9)


def test_several_free_players_are_at_the_maximum_of_the_likelihood():
    rng = random.Random(5)
    true = {"a": 1200.0, "b": 1450.0, "c": 1700.0, "x": 1550.0, "y": 1350.0}
    outcomes = simulate_tournament(true, [(p, q) for p in true for q in true if p != q], 15, rng, **PROJECT)
    anchors = {"a": 1210.0, "b": 1440.0, "c": 1705.0}
    got = fit(outcomes, pins={k: Pin(v) for k, v in anchors.items()})
    centre = sum(anchors.values()) / 3
    best = log_likelihood(outcomes, got, {"x", "y"}, centre)
    for p in ("x", "y"):
        for step in (-0.5, 0.5):
            moved = {**got, p: got[p] + step}
            assert log_likelihood(outcomes, moved, {"x", "y"}, centre) < best


def test_one_pin_is_the_single_anchor_of_rate_up_to_the_prior():
    rng = random.Random(2)
    true = {"a": 1400.0, "b": 1500.0, "c": 1650.0, "d": 1700.0}
    outcomes = simulate_tournament(true, [(p, q) for p in true for q in true if p != q], 12, rng, **PROJECT)
    pinned = rate(outcomes, bootstrap=200, seed=1, pins={"b": Pin(1500.0)}, prior=1e-4)
    anchor = rate(outcomes, anchor=("b", 1500.0), bootstrap=200, seed=1, prior=1e-4)
    for name in true:
        assert pinned[name].elo == pytest.approx(anchor[name].elo, abs=0.05)
        assert pinned[name].lo == pytest.approx(anchor[name].lo, abs=0.5)
        assert pinned[name].hi == pytest.approx(anchor[name].hi, abs=0.5)
    assert pinned["b"].plus_minus == 0.0 and pinned["b"].bound is None


def test_pins_with_a_tiny_prior_are_fixed_ones_and_a_wide_prior_lets_the_anchor_move():
    outcomes = games("x", "a", wins=30, losses=10) + games("x", "b", wins=10, losses=30, first_deal=40)
    fixed = fit(outcomes, pins={"a": Pin(1400.0), "b": Pin(1600.0)})
    tight = fit(outcomes, pins={"a": Pin(1400.0, 1e-3), "b": Pin(1600.0, 1e-3)})
    assert tight == pytest.approx(fixed, abs=1e-3)
    loose = fit(games("a", "b", wins=30, losses=10) + games("x", "a", wins=20, losses=20, first_deal=40),
                pins={"a": Pin(1400.0, 500.0), "b": Pin(1600.0, 500.0)})
    assert loose["a"] > loose["b"]  # their games outweigh a weak prior


def test_pinned_table_intervals_are_on_the_scale_and_los_leaves_out_the_fixed():
    rng = random.Random(9)
    true = {**POOL, "x": 1500.0, "y": 1600.0}
    outcomes = simulate_tournament(true, lineups("2-player", list(true)), 8, rng, **PROJECT)
    pins = {name: Pin(r) for name, r in POOL.items()}
    table = rate(outcomes, bootstrap=200, pins=pins)
    for name, r in POOL.items():
        row = table[name]
        assert (row.elo, row.lo, row.hi, row.plus_minus) == (r, r, r, 0.0)
    assert table["x"].plus_minus > 20 and table["x"].lo < table["x"].elo < table["x"].hi
    assert table.los("x", "random") is None
    assert 0.0 < table.los("y", "x") < 1.0
    assert table.identifiable and len(table.warnings) == 1 and "only 8 deal sets" in table.warnings[0]


def test_a_player_not_linked_to_any_pin_is_named():
    ref = small_reference()
    outcomes = (games("random", "search", wins=3, losses=17) + games("x", "search", wins=10, losses=10, first_deal=30)
                + games("lonely", "loner", wins=6, losses=4, first_deal=60))
    table = rate_anchored(outcomes, ref, bootstrap=50)
    assert not table.identifiable
    assert any("lonely, loner" in w for w in table.warnings), table.warnings
    assert table["x"].plus_minus > 0


def test_pins_refused_when_none_plays_or_combined_with_an_anchor():
    outcomes = games("x", "y", wins=3, losses=2)
    with pytest.raises(ValueError, match="none of the pinned players"):
        fit(outcomes, pins={"a": Pin(1500.0)})
    with pytest.raises(ValueError, match="cannot be combined"):
        rate(outcomes, anchor=("x", 1500.0), pins={"y": Pin(1500.0)})
    with pytest.raises(ValueError, match="standard deviation"):
        fit(outcomes, pins={"x": Pin(1500.0, -1.0)})


def test_team_results_with_pins():
    outcomes = []
    rng = random.Random(4)
    for d in range(30):  # x partnered with each anchor against the other two
        for partner, (p, q) in (("a", ("b", "c")), ("b", ("a", "c")), ("c", ("a", "b"))):
            outcomes.append(TeamResult(d, ("x", partner), (p, q), 1.0 if rng.random() < 0.6 else 0.0))
    table = rate(outcomes, bootstrap=100, pins={"a": Pin(1400.0), "b": Pin(1500.0), "c": Pin(1600.0)})
    assert table.identifiable and table["x"].elo > 1500 and table["x"].plus_minus > 0


# --- the pool's reference and the check ---------------------------------------------------------------


def pool_run(deal_sets: int, seed: int, true: dict[str, float] | None = None, kind: str = "2-player") -> list:
    return simulate_tournament(true or POOL, lineups(kind, list(POOL)), deal_sets, random.Random(seed), **PROJECT)


_SMALL: dict[int, Reference] = {}


def small_reference() -> Reference:
    if not _SMALL:
        _SMALL[0] = reference(pool_run(100, 0), bootstrap=100)
    return _SMALL[0]


def test_reference_holds_the_pools_fit_and_every_difference():
    outcomes = pool_run(40, 0)
    ref = reference(outcomes, bootstrap=100)
    table = rate(outcomes, bootstrap=100)
    errors = covariances(outcomes)
    assert list(ref.ratings) == [r.name for r in table.rows]
    assert sum(r.elo for r in ref.ratings.values()) / len(POOL) == pytest.approx(1500.0)
    assert len(ref.differences) == 10
    d = ref.difference("random", "search")
    assert d.elo == pytest.approx(ref.ratings["random"].elo - ref.ratings["search"].elo)
    assert d.se == pytest.approx(errors.sd({"random": 1.0, "search": -1.0}))
    # the standard error of a difference is at least the observed information's: 1 / sqrt(n p (1 - p))
    head = [o for o in outcomes if {o.a, o.b} == {"heuristic", "search"}]
    p = sum(o.score if o.a == "heuristic" else 1 - o.score for o in head) / len(head)
    assert ref.difference("heuristic", "search").se > 0.5 * ELO_PER_LOGIT / math.sqrt(len(head) * p * (1 - p))
    with pytest.raises(ValueError, match="two deal sets"):
        reference(games("a", "b", wins=3, losses=2)[:1])


def test_a_run_in_the_pools_world_is_on_scale_and_says_so():
    ref = small_reference()
    check = check_scale(pool_run(30, 11), ref)
    assert check.verdict is Scale.ON
    assert len(check.moves) == 10 and not check.moved
    assert check.line("pool 3f2a9c81d0e4").startswith("on the scale of pool 3f2a9c81d0e4: its bots' 10 differences")


@pytest.mark.parametrize("change", [SWAPPED, SHORTER_CLOCK], ids=["swapped", "shorter clock"])
def test_a_changed_setting_is_flagged_off_scale(change):
    """The pool's search bot swapped for one 200 Elo stronger, or a shorter clock that costs it 200
    Elo: the same run (100 deal sets, where the tool, ``--part changed --changed-deal-sets 100 --kinds
    2-player --worlds project --trials 50``, flags 50 runs of 50 for either), with the same random
    draws, is on-scale before and off-scale after."""
    ref = small_reference()
    true = {**POOL, CANDIDATE: 1500.0, **FIELDS["strong"]}
    schedule = lineups("2-player", list(true))
    before = simulate_tournament(true, schedule, 100, random.Random(7), **PROJECT)
    after = simulate_tournament(shifted(true, change), schedule, 100, random.Random(7), **PROJECT)
    assert check_scale(before, ref).verdict is Scale.ON
    run = anchored(after, ref, bootstrap=50)
    assert run.off_scale and run.check.verdict is Scale.OFF
    worst = run.check.worst
    assert "search" in (worst.a, worst.b) and worst.outside
    assert math.copysign(1, worst.moved) == math.copysign(1, change["search"]) * (1 if worst.a == "search" else -1)
    line = run.check.line("pool 3f2a9c81d0e4")
    assert line.startswith("off-scale: pool 3f2a9c81d0e4's bots do not keep their distances") and "search" in line
    assert "\n" not in line


def test_the_check_says_when_it_cannot_check():
    ref = small_reference()
    gauntlet = games("x", "random", wins=10, losses=10) + games("x", "search", wins=5, losses=15, first_deal=20)
    check = check_scale(gauntlet, ref)
    assert check.verdict is Scale.UNCHECKED and "no game against each other" in check.line()
    one_deal = [PairResult(0, "random", "search", 0.0)] * 5
    assert "one deal set" in check_scale(one_deal, ref).reason
    assert not anchored(gauntlet, ref, bootstrap=20).off_scale  # unchecked is not off-scale


# --- calibration by simulation (a short run of python -m referee.tools.anchoring) ---------------------


@pytest.mark.slow
@pytest.mark.parametrize("kind, trials, max_groups", [("2-player", 100, 70), ("4-player", 80, 14)])
def test_two_runs_with_different_fields_agree_on_the_pools_scale(kind, trials, max_groups):
    """A bot measured in two runs, one with two strong other entrants and one with two weak ones, each
    with the pool (5 deal sets; a new pool of 100 deal sets every 10 pairs of runs; 4-player: a
    balanced 14 of the 70 groups of four): anchored to the pool, its two 95% intervals' difference
    holds 0 in at least 95% of the pairs (tolerance: two standard errors of the count); without the
    pool the fields' difference shows. The check calls at most 5% of these runs off-scale."""
    r = agreement(kind, "project", 5, trials, bootstrap=100, methods=("fixed", "no pool"), runs_per_pool=10,
                  max_groups=max_groups)
    fixed, alone = r.methods["fixed"], r.methods["no pool"]
    tolerance = 2 * 100 * math.sqrt(0.95 * 0.05 / trials)
    assert fixed.pct >= 95.0 - tolerance, fixed
    # no drift with the field: the mean difference within three of its standard errors (a run's standard
    # error is about its half-width over 1.96; a difference has two)
    se = math.sqrt(2) * (fixed.half_width / trials) / 1.96 / math.sqrt(trials)
    assert abs(fixed.difference / trials) < 3 * se, fixed
    limit = fields_difference(kind, "project", limit=400)
    assert limit < -300
    assert alone.pct < 20, alone
    assert alone.difference / trials == pytest.approx(limit, abs=60), (alone, limit)
    assert r.checked == 2 * trials and r.false_alarm_pct <= 5.0 + tolerance, r.false_alarm_pct


def test_the_cost_reads_the_deal_sets_off_a_square_root_law():
    halves = [100 * math.sqrt(10 / d) for d in (5, 20, 80)]  # exactly 1/sqrt(deal sets): ±50 at 40
    assert deal_sets_for(50.0, [5, 20, 80], halves) == pytest.approx(40.0)
    assert deal_sets_for(200.0, [5, 20, 80], halves) == 5.0
    assert deal_sets_for(10.0, [5, 20, 80], halves) is None


def test_the_checks_line_never_says_minus_zero_and_agrees_in_number():
    from referee.stats.anchored import Move, Scale, ScaleCheck

    one = ScaleCheck(Scale.ON, (Move("a", "b", 10.2, 5.0, 10.5, 5.0, 30.0),), deal_sets=5)
    assert one.line("pool p") == ("on the scale of pool p: its bots' 1 difference in this run holds (the largest "
                                  "move: a over b +0 Elo, within ±30)")
