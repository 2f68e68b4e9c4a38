"""Elo ratings (referee.stats.ratings): known answers, the joint fit, anchoring,
bootstrap intervals over deal sets, and the pairwise helpers."""

from __future__ import annotations

import math
import random

import pytest

from referee.stats.ratings import (
    PairResult,
    TeamResult,
    as_teams,
    fit,
    pairwise_from_game,
    pairwise_from_placing,
    rate,
    t_quantile,
    team_results,
)

ELO_75 = 400 * math.log10(3)  # the difference for a 75 % expected score, ≈ 190.85


def games(a: str, b: str, wins: int = 0, draws: int = 0, losses: int = 0, deal_set: int | None = None,
          first_deal: int = 0) -> list[PairResult]:
    """``a``'s wins, draws and losses against ``b``, one deal set per game unless ``deal_set`` is given."""
    scores = [1.0] * wins + [0.5] * draws + [0.0] * losses
    return [PairResult(first_deal + k if deal_set is None else deal_set, a, b, s) for k, s in enumerate(scores)]


def expected(ra: float, rb: float) -> float:
    return 1.0 / (1.0 + 10 ** (-(ra - rb) / 400))


def simulate(true: dict[str, float], deal_sets: int, rng: random.Random, games_per_pair: int = 2,
             luck: float = 0.0, draw_rate: float = 0.3) -> list[PairResult]:
    """A round robin on every deal set.  Each player gets a luck term ~ N(0, luck) Elo per deal set,
    shared by all its games on that deal set (the deal suits it or not), which correlates the
    games of a deal set.  Draws happen with probability draw_rate * 2 * min(p, 1 - p), taken
    equally from wins and losses so the expected score stays p."""
    names = sorted(true)
    out = []
    for d in range(deal_sets):
        r = {name: true[name] + rng.gauss(0.0, luck) for name in names}
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                p = expected(r[a], r[b])
                draw = draw_rate * 2 * min(p, 1 - p)
                for _ in range(games_per_pair):
                    u = rng.random()
                    out.append(PairResult(d, a, b, 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0))
    return out


# --- known answers ------------------------------------------------------------


def test_two_players_75_percent():
    ratings = fit(games("a", "b", wins=750, losses=250))
    assert ratings["a"] - ratings["b"] == pytest.approx(ELO_75, abs=2.0)
    assert ratings["a"] - ratings["b"] < ELO_75  # the prior shrinks, never stretches
    assert (ratings["a"] + ratings["b"]) / 2 == pytest.approx(1500)


def test_draws_count_as_half_a_win():
    with_draws = fit(games("a", "b", wins=500, draws=500))
    without = fit(games("a", "b", wins=750, losses=250))
    assert with_draws["a"] == pytest.approx(without["a"], abs=1e-6)
    assert with_draws["b"] == pytest.approx(without["b"], abs=1e-6)
    all_draws = fit(games("a", "b", draws=100))
    assert all_draws["a"] == pytest.approx(all_draws["b"], abs=1e-6)


def test_symmetric_results_give_equal_ratings():
    # a cycle: a beats b, b beats c, c beats a, all 60 %
    outcomes = (games("a", "b", wins=60, losses=40) + games("b", "c", wins=60, losses=40, first_deal=100)
                + games("c", "a", wins=60, losses=40, first_deal=200))
    ratings = fit(outcomes)
    for name in "abc":
        assert ratings[name] == pytest.approx(1500, abs=1e-6)


def test_chain_of_known_differences():
    # a beats b 75 %, b beats c 75 %: a is about 2 * 190.8 above c, b in the middle
    outcomes = games("a", "b", wins=1500, losses=500) + games("b", "c", wins=1500, losses=500, first_deal=2000)
    ratings = fit(outcomes)
    assert ratings["a"] - ratings["b"] == pytest.approx(ELO_75, abs=2.0)
    assert ratings["b"] - ratings["c"] == pytest.approx(ELO_75, abs=2.0)
    assert ratings["b"] == pytest.approx(1500, abs=1e-6)


def test_all_wins_stays_finite():
    ratings = fit(games("a", "b", wins=10))
    diff = ratings["a"] - ratings["b"]
    assert math.isfinite(diff) and 300 < diff < 800
    # more wins: a larger (still finite) difference
    assert fit(games("a", "b", wins=100))["a"] - fit(games("a", "b", wins=100))["b"] > diff


def test_players_who_never_met_are_held_together_by_the_prior():
    ratings = fit(games("a", "b", wins=30, losses=10) + games("c", "d", wins=10, losses=30, first_deal=100))
    assert all(math.isfinite(r) for r in ratings.values())
    assert ratings["a"] > ratings["b"] and ratings["d"] > ratings["c"]
    assert ratings["a"] - ratings["b"] == pytest.approx(ratings["d"] - ratings["c"], abs=1e-6)


# --- anchoring ----------------------------------------------------------------


def test_anchoring():
    outcomes = games("a", "b", wins=70, losses=30) + games("b", "c", wins=55, draws=10, losses=35, first_deal=100)
    free = fit(outcomes)
    assert sum(free.values()) / 3 == pytest.approx(1500)
    pinned = fit(outcomes, anchor=("c", 2000))
    assert pinned["c"] == pytest.approx(2000)
    for name in "ab":
        assert pinned[name] - pinned["c"] == pytest.approx(free[name] - free["c"], abs=1e-6)
    assert sum(fit(outcomes, average=0).values()) == pytest.approx(0, abs=1e-6)
    with pytest.raises(ValueError, match="anchor"):
        fit(outcomes, anchor=("nobody", 1500))


def test_anchored_bot_has_a_zero_width_interval():
    table = rate(simulate({"a": 1400, "b": 1500, "c": 1600}, 20, random.Random(3)), anchor=("b", 1500),
                 bootstrap=100)
    assert table["b"].elo == pytest.approx(1500)
    assert table["b"].lo == pytest.approx(1500) and table["b"].hi == pytest.approx(1500)
    assert table["a"].plus_minus > 0


# --- the joint fit is not the pooled score -------------------------------------


def test_joint_fit_accounts_for_opponents():
    # A only meets the strong S and scores 45 %; C only meets the weak W and scores 70 %;
    # S beats W 90 %.  Pooled scores put C above A; the joint fit knows S ≈ W + 382, so
    # A ≈ W + 347 and C ≈ W + 147.
    outcomes = (games("A", "S", wins=90, losses=110) + games("C", "W", wins=140, losses=60, first_deal=1000)
                + games("S", "W", wins=360, losses=40, first_deal=2000))
    table = rate(outcomes, bootstrap=0)
    assert table["C"].score_pct > table["A"].score_pct  # pooled order: C first
    assert table["A"].elo > table["C"].elo  # joint order: A first
    assert [row.name for row in table.rows] == ["S", "A", "C", "W"]
    assert table["A"].elo - table["C"].elo == pytest.approx(200, abs=20)


# --- tallies ------------------------------------------------------------------


def test_tallies_and_head_to_head():
    outcomes = games("a", "b", wins=3, draws=1, losses=1) + games("c", "a", wins=2, losses=2, first_deal=10)
    table = rate(outcomes, bootstrap=0)
    a = table["a"]
    assert (a.games, a.wins, a.draws, a.losses) == (9, 5, 1, 3)
    assert a.score_pct == pytest.approx(100 * 5.5 / 9)
    assert (a.lo, a.hi, a.plus_minus, a.los_next) == (None, None, None, None)
    ab, ba = table.head_to_head["a"]["b"], table.head_to_head["b"]["a"]
    assert (ab.games, ab.wins, ab.draws, ab.losses) == (5, 3, 1, 1)
    assert (ba.games, ba.wins, ba.draws, ba.losses) == (5, 1, 1, 3)
    assert ab.score_pct == pytest.approx(70) and ba.score_pct == pytest.approx(30)
    assert "c" not in table.head_to_head["b"]  # never met
    assert table.head_to_head["a"]["c"].score_pct == pytest.approx(50)
    assert table.elos == fit(outcomes)


def test_rows_sorted_best_first_with_los():
    table = rate(simulate({"a": 1300, "b": 1500, "c": 1510, "d": 1700}, 40, random.Random(5)), bootstrap=300)
    assert table.rows[0].name == "d" and table.rows[-1].name == "a"
    elos = [row.elo for row in table.rows]
    assert elos == sorted(elos, reverse=True)
    assert table.rows[0].los_next > 0.99  # d over the middle pair: clear
    assert table.rows[-1].los_next is None
    assert table.los("d", "a") > 0.9999 and table.los("a", "d") < 1e-4
    assert table.los("b", "c") + table.los("c", "b") == pytest.approx(1.0)
    for row in table.rows:
        assert row.lo <= row.elo <= row.hi
        assert row.plus_minus == pytest.approx((row.hi - row.lo) / 2)


def test_bootstrap_is_deterministic_with_a_seed():
    outcomes = simulate({"a": 1450, "b": 1500, "c": 1550}, 15, random.Random(7))
    one, two = rate(outcomes, bootstrap=200, seed=11), rate(outcomes, bootstrap=200, seed=11)
    assert [(r.lo, r.hi) for r in one.rows] == [(r.lo, r.hi) for r in two.rows]
    assert one.samples == two.samples
    other = rate(outcomes, bootstrap=200, seed=12)
    assert one.samples != other.samples


def test_bad_outcomes_are_rejected():
    with pytest.raises(ValueError, match="itself"):
        fit([PairResult(0, "a", "a", 1.0)])
    with pytest.raises(ValueError, match="score"):
        fit([PairResult(0, "a", "b", 0.7)])
    assert fit([]) == {}
    assert rate([]).rows == []


# --- recovery of known ratings --------------------------------------------------


@pytest.mark.slow
def test_intervals_cover_the_true_ratings():
    # 6 players 1300..1700 (average 1500, like the fitted ratings), correlated deal sets,
    # 40 tournaments: the 95 % intervals should hold the true rating about 95 % of the time.
    true = {f"p{i}": 1300 + 80 * i for i in range(6)}
    rng = random.Random(2026)
    covered = total = 0
    errors = []
    for t in range(40):
        outcomes = simulate(true, deal_sets=25, rng=rng, luck=30)
        table = rate(outcomes, bootstrap=150, seed=t)
        for row in table.rows:
            covered += row.lo <= true[row.name] <= row.hi
            total += 1
            errors.append(row.elo - true[row.name])
    assert 0.85 <= covered / total <= 1.0
    assert abs(sum(errors) / len(errors)) < 5  # no overall bias
    assert math.sqrt(sum(e * e for e in errors) / len(errors)) < 60


def test_deal_set_bootstrap_sees_the_correlation():
    # with a large shared luck term per deal set the games of a deal set are correlated;
    # resampling deal sets gives wider (honest) intervals than resampling single games
    true = {"a": 1400, "b": 1450, "c": 1550, "d": 1600}
    outcomes = simulate(true, deal_sets=30, rng=random.Random(9), games_per_pair=6, luck=120)
    by_deal = rate(outcomes, bootstrap=300, seed=1)
    by_game = rate([o._replace(deal_set=k) for k, o in enumerate(outcomes)], bootstrap=300, seed=1)
    assert by_deal.elos == pytest.approx(by_game.elos)
    def spread(ratings, name):  # the raw bootstrap's 95% half-width
        xs = sorted(ratings.samples[name])
        return (xs[int(0.975 * len(xs))] - xs[int(0.025 * len(xs))]) / 2

    for name in true:
        assert spread(by_deal, name) > 1.3 * spread(by_game, name)
        assert by_deal[name].plus_minus >= spread(by_deal, name) - 1.0  # crude percentiles here


def test_a_perfect_record_still_gets_an_honest_interval():
    """Every deal set won: every bootstrap resample is the same, yet 20 games are not certainty."""
    outcomes = [PairResult(k, "strong", "weak", 1.0) for k in range(20)]
    table = rate(outcomes, bootstrap=200, seed=1)
    assert len(set(table.samples["strong"])) == 1         # the bootstrap alone is degenerate
    assert table["strong"].plus_minus > 100                # the observed-information floor is not


# --- pairwise helpers -----------------------------------------------------------


def test_pairwise_from_game():
    out = pairwise_from_game(7, ["n", "e", "s", "w"], [10, 30, 10, 5])
    assert out == [
        PairResult(7, "n", "e", 0.0),
        PairResult(7, "n", "s", 0.5),
        PairResult(7, "n", "w", 1.0),
        PairResult(7, "e", "s", 1.0),
        PairResult(7, "e", "w", 1.0),
        PairResult(7, "s", "w", 1.0),
    ]


def test_pairwise_from_game_skips_a_bot_against_itself():
    out = pairwise_from_game(0, ["x", "y", "x", "z"], [10, 30, 10, 5])
    assert len(out) == 5
    assert all(o.a != o.b for o in out)
    assert PairResult(0, "x", "y", 0.0) in out and PairResult(0, "y", "x", 1.0) in out  # x's two seats both count
    assert pairwise_from_game(0, ["x", "x", "x", "x"], [1, 2, 3, 4]) == []
    with pytest.raises(ValueError):
        pairwise_from_game(0, ["x", "y"], [1, 2, 3])


def test_pairwise_from_placing():
    assert pairwise_from_placing(3, ["alice", "bob"], [2, 1]) == [PairResult(3, "alice", "bob", 0.0)]
    assert pairwise_from_placing(3, ["alice", "bob"], [1, 1]) == [PairResult(3, "alice", "bob", 0.5)]
    assert pairwise_from_placing(0, ["n", "e", "s", "w"], [2, 1, 2, 4]) == pairwise_from_game(
        0, ["n", "e", "s", "w"], [10, 30, 10, 5])


# --- teams (Confirmation's pairs) ------------------------------------------------


def test_team_results_compare_teams_never_partners():
    # seats 0+2 against 1+3; partners share their score
    out = team_results(4, ["a", "b", "c", "d"], [30, 12, 30, 12], [[0, 2], [1, 3]])
    assert out == [TeamResult(4, ("a", "c"), ("b", "d"), 1.0)]
    # a bot partnered with its own copy is that bot: a plain pairwise result
    assert team_results(0, ["x", "y", "x", "y"], [5, 9, 5, 9], [[0, 2], [1, 3]]) == [PairResult(0, "x", "y", 0.0)]
    # the same two bots on both teams measure nothing
    assert team_results(0, ["x", "x", "y", "y"], [5, 9, 5, 9], [[0, 2], [1, 3]]) == []


def test_fixed_partners_are_not_identifiable_but_rotated_ones_are():
    rng = random.Random(4)
    fixed = [TeamResult(d, ("a", "c"), ("b", "d"), float(rng.random() < 0.6)) for d in range(40)]
    table = rate(fixed, bootstrap=50)
    assert not table.identifiable
    assert any("cannot be identified" in w for w in table.warnings)
    assert table["a"].games == 40 and "c" not in table.head_to_head["a"]  # partners never meet
    assert table.head_to_head["a"]["b"].games == 40
    rotated = fixed + [TeamResult(d, ("a", "b"), ("c", "d"), 1.0) for d in range(40, 50)]
    assert not rate(rotated, bootstrap=0).identifiable  # two partnerships: a and d still tied up
    rotated += [TeamResult(d, ("a", "d"), ("b", "c"), 0.0) for d in range(50, 60)]
    assert rate(rotated, bootstrap=0).identifiable


def test_a_team_plays_at_its_members_average():
    # a+b (1600 and 1400 in truth: average 1500) against c+d (1500 each) is an even match; a+c against
    # b+d is 1550 against 1450
    ratings = fit(
        [TeamResult(k, ("a", "b"), ("c", "d"), 1.0 if k % 2 else 0.0) for k in range(2000)]
        + [TeamResult(k, ("a", "c"), ("b", "d"), float(k % 1000 < 640)) for k in range(2000)]
        + [TeamResult(k, ("a", "d"), ("b", "c"), float(k % 1000 < 640)) for k in range(2000)])
    # 64% ≈ 100 Elo between the teams' averages, so a - b ≈ 200 and c = d
    assert ratings["a"] - ratings["b"] == pytest.approx(2 * 400 * math.log10(0.64 / 0.36), abs=3)
    assert ratings["c"] == pytest.approx(ratings["d"], abs=1e-6)
    assert ratings["a"] + ratings["b"] == pytest.approx(ratings["c"] + ratings["d"], abs=1e-6)


def test_as_teams_names_partnerships():
    outcomes = [TeamResult(0, ("a", "c"), ("b", "d"), 1.0), PairResult(1, "a", "b", 0.0)]
    assert as_teams(outcomes) == [PairResult(0, "a+c", "b+d", 1.0), PairResult(1, "a+a", "b+b", 0.0)]


def test_bad_team_results_are_rejected():
    with pytest.raises(ValueError, match="same team"):
        fit([TeamResult(0, ("a", "b"), ("b", "a"), 1.0)])


# --- bounds, small samples ----------------------------------------------------------


def test_a_bot_with_no_point_or_every_point_is_a_bound():
    outcomes = games("weak", "mid", losses=20) + games("mid", "top", losses=20, first_deal=100) + games(
        "weak", "top", draws=0, losses=10, first_deal=200)
    table = rate(outcomes, bootstrap=100)
    assert table["weak"].bound == "upper" and table["top"].bound == "lower" and table["mid"].bound is None
    assert table["weak"].hi > table["weak"].elo  # the bound printed is hi
    with_a_draw = games("weak", "mid", draws=1, losses=19)
    assert rate(with_a_draw, bootstrap=0)["weak"].bound is None  # half a point: an estimate


def test_t_quantiles():
    assert t_quantile(0.975, 1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile(0.975, 2) == pytest.approx(4.3027, abs=1e-4)
    assert t_quantile(0.975, 4) == pytest.approx(2.7764, abs=1e-4)
    assert t_quantile(0.975, 9) == pytest.approx(2.2622, abs=1e-4)
    assert t_quantile(0.975, 200) == pytest.approx(1.9719, abs=1e-4)


def test_few_deal_sets_warn_and_widen():
    true = {"a": 1400, "b": 1500, "c": 1600}
    few = rate(simulate(true, deal_sets=3, rng=random.Random(1), games_per_pair=20, luck=80), bootstrap=200)
    assert few.deal_sets == 3 and few.intervals_trusted
    assert any("only 3 deal sets" in w for w in few.warnings)
    # the bootstrap over 3 deal sets alone is far narrower than the printed interval
    for row in few.rows:
        xs = sorted(few.samples[row.name])
        assert row.plus_minus > 1.5 * (xs[int(0.975 * len(xs))] - xs[int(0.025 * len(xs))]) / 2
    many = rate(simulate(true, deal_sets=12, rng=random.Random(1)), bootstrap=50)
    assert many.warnings == [] and many.intervals_trusted
    one = rate(simulate(true, deal_sets=1, rng=random.Random(1), games_per_pair=10), bootstrap=50)
    assert not one.intervals_trusted and any("cannot be trusted" in w for w in one.warnings)
    assert rate(simulate(true, deal_sets=1, rng=random.Random(1)), bootstrap=0).warnings == []


def test_the_docstrings_ten_straight_wins_figure_is_the_fits():
    import re

    from referee.stats import ratings

    stated = float(re.search(r"10 straight wins give a difference of ([\d.]+) Elo", ratings.__doc__).group(1))
    elos = fit(games("a", "b", wins=10))
    assert elos["a"] - elos["b"] == pytest.approx(stated, abs=0.05)


def test_a_bound_widens_with_few_deal_sets_as_the_intervals_do():
    """A bot that lost every game: its bound comes from the observed information, which cannot see
    that the games of a deal set may be one outcome; with two deal sets it takes Student's t, as
    the robust intervals do (with 4 players at 2 deal sets the normal bound held 1 time in 9)."""
    def tournament(deal_sets: int) -> list[PairResult]:
        out = []
        for k in range(24):  # a loses all 24; the others share their games
            d = k % deal_sets
            out += [PairResult(d, "a", x, 0.0) for x in "bcd"]
            out += [PairResult(d, "b", "c", float(k % 2)), PairResult(d, "c", "d", float(k % 3 == 0)),
                    PairResult(d, "b", "d", 0.5)]
        return out
    two, many = rate(tournament(2), bootstrap=50)["a"], rate(tournament(12), bootstrap=50)["a"]
    assert two.bound == many.bound == "upper"
    assert two.hi - two.elo > 3 * (many.hi - many.elo)
