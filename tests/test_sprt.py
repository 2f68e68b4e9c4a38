"""The SPRT: the likelihood ratio against direct computations, error rates by simulation
(synthetic outcome generators of known strength, no bots), the bookkeeping of units, the
SPRT file, and end-to-end runs through the CLI with real bots (heuristic v weakened)."""

from __future__ import annotations

import itertools
import json
import math
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from harness import run_cli

from referee.cli.exits import ExitCode
from referee.competition.service import Outcome
from referee.competition.sprt import report as sprt_report
from referee.competition.sprt import run as sprt_run
from referee.competition.sprt import setup as sprt_setup
from referee.competition.sprt import units as sprt_units
from referee.hosting.paths import bot_from_command
from referee.model import ConfigError
from referee.stats import sprt as S
from referee.stats.simulation import duplicate_model, duplicate_model_normalized
from referee.stats.sprt import Verdict
from referee.tools.sprt_simulation import sampler

ROOT = Path(__file__).resolve().parent.parent


# --- Elo, bounds ----------------------------------------------------------------------


def test_expected_score_and_elo_are_inverse():
    assert S.expected_score(0) == 0.5
    assert S.expected_score(400 * math.log10(3)) == pytest.approx(0.75)
    for elo in (-300, -17.5, 0.0, 2.5, 20, 250):
        assert S.elo_of(S.expected_score(elo)) == pytest.approx(elo)
    assert S.elo_of(1.0) == math.inf and S.elo_of(0.0) == -math.inf


def test_wald_bounds():
    lower, upper = S.bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19)) and upper == pytest.approx(math.log(19))
    assert S.bounds(0.05, 0.10) == pytest.approx((math.log(0.10 / 0.95), math.log(0.90 / 0.05)))


@pytest.mark.parametrize("elo0, elo1, alpha, beta", [(20, 0, .05, .05), (0, 0, .05, .05), (0, 20, 0, .05),
                                                     (0, 20, .6, .5), (0, math.inf, .05, .05)])
def test_bad_hypotheses_are_refused(elo0, elo1, alpha, beta):
    with pytest.raises(ValueError):
        S.SPRT(elo0, elo1, alpha, beta)


def test_normalized_hypotheses_stay_where_the_mle_exists(invoke):
    with pytest.raises(ValueError, match="within ±200"):
        S.SPRT(0, 250, model=S.EloModel.NORMALIZED)
    S.SPRT(0, 250, model=S.EloModel.LOGISTIC)
    for elo in (-200, 200):  # the extremes still give an LLR for any data
        for counts in ([0, 0, 0, 0, 3], [3, 0, 0, 0, 0], [1, 0, 0, 0, 1], [0, 0, 5, 0, 0]):
            assert math.isfinite(S.llr(counts, S.PENTANOMIAL, elo - 1 if elo > 0 else elo, elo + 1 if elo < 0 else elo,
                                       S.EloModel.NORMALIZED))
    result = invoke("sprt", "--game", "aegis", "--candidate", "a=python x.py", "--baseline", "b=python y.py",
                    "--elo0", "0", "--elo1", "300")
    assert result.exit_code == 2 and "within ±200" in result.output


# --- the constrained MLE and the LLR --------------------------------------------------


def log_likelihood(freqs, probs):
    return sum(f * math.log(p) for f, p in zip(freqs, probs) if f > 0)


def test_trinomial_mle_matches_a_direct_search():
    """The trinomial with mean s has one free parameter: search it directly."""
    freqs = [30 / 85, 10 / 85, 45 / 85]
    for s in (S.expected_score(20), 0.5, 0.4):
        mle, _ = S.mle_with_mean(S.TRINOMIAL, freqs, s)
        best = -math.inf
        # p2 in (max(0, 2s - 1), s): p1 = 2 (s - p2), p0 = 1 - p1 - p2
        lo, hi = max(0.0, 2 * s - 1), s
        for i in range(1, 100000):
            p2 = lo + (hi - lo) * i / 100000
            p = (1 - 2 * (s - p2) - p2, 2 * (s - p2), p2)
            if min(p) > 0:
                best = max(best, log_likelihood(freqs, p))
        assert log_likelihood(freqs, mle) == pytest.approx(best, abs=1e-8)
        assert sum(mle) == pytest.approx(1) and sum(a * p for a, p in zip(S.TRINOMIAL, mle)) == pytest.approx(s)


def test_pentanomial_mle_is_the_constrained_maximum():
    """Constraints hold and no feasible perturbation (keeping the sum and the mean) does better."""
    rng = random.Random(3)
    freqs = [c / 200 for c in (12, 30, 90, 48, 20)]
    s = S.expected_score(-17.5)
    mle, _ = S.mle_with_mean(S.PENTANOMIAL, freqs, s)
    assert sum(mle) == pytest.approx(1) and sum(a * p for a, p in zip(S.PENTANOMIAL, mle)) == pytest.approx(s)
    best = log_likelihood(freqs, mle)
    # directions d with sum(d) = 0 and sum(a d) = 0: a basis of the null space of [[1]*5, values]
    basis = [(1, -2, 1, 0, 0), (0, 1, -2, 1, 0), (0, 0, 1, -2, 1)]
    for _ in range(2000):
        c = [rng.uniform(-1, 1) for _ in basis]
        d = [sum(ci * b[k] for ci, b in zip(c, basis)) for k in range(5)]
        t = rng.choice((1e-2, 1e-3, 1e-4))
        trial = [p + t * dk for p, dk in zip(mle, d)]
        if min(trial) > 0:
            assert log_likelihood(freqs, trial) <= best + 1e-12


def test_llr_is_a_direct_likelihood_ratio():
    counts = [10, 25, 80, 55, 30]
    freqs = [c / sum(counts) for c in counts]
    p0, _ = S.mle_with_mean(S.PENTANOMIAL, freqs, S.expected_score(0))
    p1, _ = S.mle_with_mean(S.PENTANOMIAL, freqs, S.expected_score(20))
    direct = sum(c * math.log(b / a) for c, a, b in zip(counts, p0, p1))
    assert S.llr(counts, S.PENTANOMIAL, 0, 20) == pytest.approx(direct, rel=1e-9)


def test_llr_signs_and_symmetry():
    symmetric = [10, 20, 60, 20, 10]  # mean score exactly 1/2
    assert S.llr(symmetric, S.PENTANOMIAL, 0, 20) < 0  # Elo 0 is H0 itself
    assert S.llr(symmetric, S.PENTANOMIAL, -20, 0) > 0  # ... and H1 here
    # mirrored data, mirrored hypotheses (H0 -0 v H1 -20, i.e. minus the LLR of H0 -20 v H1 0): the same LLR
    counts = [5, 14, 50, 30, 21]
    assert S.llr(counts, S.PENTANOMIAL, 0, 20) == pytest.approx(-S.llr(counts[::-1], S.PENTANOMIAL, -20, 0))
    # halfway between the hypotheses the two fits are equally good: LLR 0
    mid = S.elo_of((S.expected_score(-10) + S.expected_score(10)) / 2)
    pdf, _ = S.mle_with_mean(S.PENTANOMIAL, [0.1, 0.2, 0.4, 0.2, 0.1], S.expected_score(mid))
    assert S.llr([1e6 * p for p in pdf], S.PENTANOMIAL, -10, 10) == pytest.approx(0, abs=1e-6)
    assert S.llr([0] * 5, S.PENTANOMIAL, 0, 20) == 0


def test_llr_grows_with_winning_units_and_scales_with_n():
    base = [10, 20, 60, 20, 10]
    more_wins = [10, 20, 60, 20, 30]
    assert S.llr(more_wins, S.PENTANOMIAL, 0, 20) > S.llr(base, S.PENTANOMIAL, 0, 20)
    assert S.llr([10 * c for c in more_wins], S.PENTANOMIAL, 0, 20) == \
        pytest.approx(10 * S.llr(more_wins, S.PENTANOMIAL, 0, 20), rel=1e-3)


@pytest.mark.parametrize("model", list(S.EloModel))
def test_normal_approximation_agrees_for_large_samples(model):
    counts = [1200, 2600, 9000, 3400, 1800]
    exact = S.llr(counts, S.PENTANOMIAL, 0, 20, model)
    approx = S.llr_approx(counts, S.PENTANOMIAL, 0, 20, model)
    assert exact > 10 and approx == pytest.approx(exact, rel=0.05)


def test_a_crushing_result_still_needs_the_minimum_units():
    """All units 2-0: the LLR grows by log(s1/s0) a unit, so <0, 20> needs 53 units."""
    sprt = S.SPRT(0, 20)
    n = 0
    while sprt.verdict() is None:
        sprt.add(4)
        n += 1
    assert sprt.verdict() == Verdict.H1 and n == math.ceil(math.log(19) / math.log(S.expected_score(20) / 0.5))


def test_estimate():
    est = S.estimate([0, 0, 10, 0, 0])
    assert est.score == 0.5 and est.elo == 0 and est.los == 0.5
    est = S.estimate([5, 10, 40, 25, 20])
    assert est.score == pytest.approx((10 * .25 + 40 * .5 + 25 * .75 + 20) / 100)
    assert est.elo_lo < est.elo < est.elo_hi and 0.5 < est.los < 1
    assert S.estimate([0] * 5).elo is None


# --- the two Elo models, against fishtest ----------------------------------------------

#: (results, elo0, elo1, fishtest's LLR_normalized, LLR_logistic, and its sprt class's normalized
#: LLR_alt2 approximation), computed with fishtest's server/fishtest/stats/LLRcalc.py and sprt.py
#: (scipy's brentq for the secular equation) on these results: fishtest's own test vectors first
FISHTEST = [
    ([10789, 19328, 33806, 19402, 10543], -1.75, 0.25, -0.6271679157328218, -0.11102217673761142,
     -0.6271652186647105),
    ([39, 2226, 31451, 2412, 40], 0.764, 3.439, 2.162940869584568, -27.865237341031733, 2.1629081311732485),
    ([21, 0, 868, 0, 111], 0, 25, 20.64537390015228, 32.27216058012638, 20.84114466170475),
    ([2, 0, 55, 0, 16], 0, 25, 2.5391604838559574, 3.5905114647806586, 2.7323669805811233),
    ([2, 0, 55, 0, 16], -22, 3, 3.1271869174326747, 4.3687080095705815, 3.3976077344049638),
    ([105, 7, 656, 8, 224], 0, 25, 16.023416312056938, 18.393555539300557, 16.370739887125794),
    ([40, 59, 87], 0, 25, 3.614799511886915, 4.2725185797267775, 3.8171860603190693),
    ([3, 1, 9], -10, 10, 0.35944369535157966, 0.37416254558734346, 0.4098827837025892),
    ([0, 0, 5, 1, 2], 0, 25, 0.4202108029771405, 0.554577584638403, 0.5515395978931289),
]


@pytest.mark.parametrize("results, elo0, elo1, normalized, logistic, approx", FISHTEST)
def test_llr_agrees_with_fishtest(results, elo0, elo1, normalized, logistic, approx):
    values = S.PENTANOMIAL if len(results) == 5 else S.TRINOMIAL
    assert S.llr(results, values, elo0, elo1, S.EloModel.NORMALIZED) == pytest.approx(normalized, rel=1e-8)
    assert S.llr(results, values, elo0, elo1, S.EloModel.LOGISTIC) == pytest.approx(logistic, rel=1e-8)
    assert S.llr_approx(results, values, elo0, elo1, S.EloModel.NORMALIZED) == pytest.approx(approx, rel=1e-9)


def test_the_t_value_mle_has_the_t_value_and_beats_its_neighbours():
    probs = [0.05, 0.1, 0.6, 0.15, 0.1]
    t = S.nelo_to_t(30, S.PENTANOMIAL)
    pdf, _ = S.mle_with_t(S.PENTANOMIAL, probs, t)
    mu = sum(a * p for a, p in zip(S.PENTANOMIAL, pdf))
    sigma = math.sqrt(sum(p * (a - mu) ** 2 for a, p in zip(S.PENTANOMIAL, pdf)))
    assert sum(pdf) == pytest.approx(1, abs=1e-9) and (mu - 0.5) / sigma == pytest.approx(t, abs=1e-8)
    best = sum(q * math.log(p) for q, p in zip(probs, pdf))
    rng = random.Random(4)
    for _ in range(200):  # random distributions moved to the same t-value are never more likely
        raw = [rng.random() + 0.01 for _ in range(5)]
        other = S.mle_with_t(S.PENTANOMIAL, [r / sum(raw) for r in raw], t)[0]
        assert sum(other) == pytest.approx(1, abs=1e-9)
        assert sum(q * math.log(p) for q, p in zip(probs, other)) <= best + 1e-12


@pytest.mark.parametrize("model", list(S.EloModel))
def test_the_warm_started_test_gives_the_fresh_llr(model):
    rng = random.Random(9)
    test = S.SPRT(-5, 20, model=model)
    for _ in range(120):
        test.add(rng.choices(range(5), [0.1, 0.1, 0.5, 0.1, 0.2])[0])
        assert test.llr() == pytest.approx(S.llr(test.counts, S.PENTANOMIAL, -5, 20, model), rel=1e-7, abs=1e-9)


def test_normalized_elo_estimate():
    counts = [5, 10, 40, 25, 20]
    est = S.estimate(counts)
    n = sum(counts)
    mu = est.score
    var = sum(c * (a - mu) ** 2 for a, c in zip(S.PENTANOMIAL, counts)) / n
    assert est.nelo == pytest.approx(S.NELO_PER_NT * (mu - 0.5) / math.sqrt(2 * var))
    assert est.nelo_hi - est.nelo == pytest.approx(S.NELO_PER_NT * S.Z95 / math.sqrt(2 * n))
    # the same mean score with less variance (more correlated units) is more normalized Elo
    assert S.estimate([0, 25, 25, 30, 20]).nelo > S.estimate([10, 10, 30, 20, 30]).nelo
    assert S.estimate([0, 0, 10, 0, 0]).nelo is None  # no variance yet


def test_normalized_elo_is_close_to_logistic_for_independent_games_without_draws():
    penta, _ = duplicate_model(10.0, luck=0.0)
    est = S.estimate([1e7 * p for p in penta])
    assert est.elo == pytest.approx(10.0, rel=1e-3) and est.nelo == pytest.approx(10.0, rel=0.01)


# --- error rates by simulation ----------------------------------------------------------


def simulate(pdf, values, elo0, elo1, runs, seed, max_n=100000, model=S.EloModel.LOGISTIC):
    rng = random.Random(seed)
    cumulative = list(itertools.accumulate(pdf))
    outcomes = range(len(pdf))
    verdicts = {Verdict.H1: 0, Verdict.H0: 0, Verdict.INCONCLUSIVE: 0}
    sizes = []
    for _ in range(runs):
        verdict, n = S.run_test(lambda: rng.choices(outcomes, cum_weights=cumulative)[0],
                                S.SPRT(elo0, elo1, values=values, model=model), max_n)
        verdicts[verdict] += 1
        sizes.append(n)
    return verdicts, sum(sizes) / runs


def allowed(rate: float, runs: int) -> int:
    """The most wrong verdicts compatible with an error rate of ``rate`` (+3 standard errors)."""
    return int(runs * rate + 3 * math.sqrt(runs * rate * (1 - rate)))


RUNS = 200


@pytest.mark.parametrize("luck", [0.0, pytest.param(2.5, marks=pytest.mark.slow)])
def test_false_positive_and_false_negative_rates(luck):
    """True Elo = elo0: H1 accepted at most alpha of the time; true Elo = elo1: H0 at most beta
    (within sampling error), for independent games (luck 0) and strongly correlated units."""
    elo0, elo1 = 0.0, 40.0
    at_h0, _ = duplicate_model(elo0, luck, draws=0.02)
    at_h1, _ = duplicate_model(elo1, luck, draws=0.02)
    v0, _ = simulate(at_h0, S.PENTANOMIAL, elo0, elo1, RUNS, seed=1)
    v1, _ = simulate(at_h1, S.PENTANOMIAL, elo0, elo1, RUNS, seed=2)
    assert v0[Verdict.H1] <= allowed(0.05, RUNS), v0
    assert v1[Verdict.H0] <= allowed(0.05, RUNS), v1
    assert v0[Verdict.INCONCLUSIVE] == v1[Verdict.INCONCLUSIVE] == 0
    assert 0 < v0[Verdict.H1] and 0 < v1[Verdict.H0]  # not vacuously conservative either


@pytest.mark.slow
@pytest.mark.parametrize("luck", [0.0, 2.5])
def test_error_rates_in_normalized_elo(luck):
    """The same for hypotheses in normalized Elo, the truth at exactly nelo0 and nelo1."""
    elo0, elo1 = 0.0, 80.0
    runs = 150
    v0, _ = simulate(duplicate_model_normalized(elo0, luck, 0.02), S.PENTANOMIAL, elo0, elo1, runs, seed=11,
                     model=S.EloModel.NORMALIZED)
    v1, _ = simulate(duplicate_model_normalized(elo1, luck, 0.02), S.PENTANOMIAL, elo0, elo1, runs, seed=12,
                     model=S.EloModel.NORMALIZED)
    assert v0[Verdict.H1] <= allowed(0.05, runs), v0
    assert v1[Verdict.H0] <= allowed(0.05, runs), v1
    assert 0 < v0[Verdict.H1] + v1[Verdict.H0]  # not vacuously conservative


# --- estimates corrected for the stop -------------------------------------------------------

A, B = S.bounds(0.05, 0.05)


@pytest.mark.parametrize("drift, variance, t, y, fishtest", [
    # fishtest's Brownian(a, b, mu, sigma).outcome_cdf(T, y), computed with its own code (server/fishtest/stats)
    (0.01, 0.02, 200, B, 0.5540793844632734),
    (0.0, 0.02, 200, 0.5, 0.5958814865430455),
    (-0.01, 0.03, 150, A, 0.3766308071466299),
    (0.02, 0.05, 50, 1.0, 0.4989773529251712),
    (0.003, 0.01, 40, B, 0.9999923135949336),  # a short time: Siegmund's approximation
    (0.05, 0.02, 900, B, 4.0386091030249223e-07),  # a strong drift: likewise
])
def test_the_worse_outcome_probability_agrees_with_fishtest(drift, variance, t, y, fishtest):
    assert S.worse_outcome(A, B, drift, variance, t, y) == pytest.approx(fishtest, rel=1e-7, abs=1e-12)


@pytest.mark.slow
def test_the_worse_outcome_probability_by_simulation():
    rng = random.Random(4)
    drift, variance, t, steps, runs = 0.008, 0.02, 300.0, 500, 1500
    sd = math.sqrt(variance * t / steps)
    worse = 0
    for _ in range(runs):
        x = 0.0
        for _ in range(steps):
            x += drift * t / steps + rng.gauss(0.0, sd)
            if x <= A or x >= B:
                break
        worse += x <= A or A < x < 1.0
    # with y = 1.0 inside the bounds; the discrete path misses a few exits of the continuous one
    assert worse / runs == pytest.approx(S.worse_outcome(A, B, drift, variance, t, 1.0), abs=0.04)


def test_a_test_far_from_its_bounds_needs_no_correction():
    counts = [1, 10, 40, 12, 2]
    raw, fixed = S.estimate(counts), S.stopped_estimate(counts, S.PENTANOMIAL, 0, 20, 0.05, 0.05)
    assert fixed.elo == pytest.approx(raw.elo, abs=0.01)
    assert fixed.elo_lo == pytest.approx(raw.elo_lo, abs=0.3) and fixed.elo_hi == pytest.approx(raw.elo_hi, abs=0.3)
    assert fixed.los == pytest.approx(raw.los, abs=1e-3)
    assert S.stopped_estimate([0, 0, 0, 0, 0], S.PENTANOMIAL, 0, 20, 0.05, 0.05) is None


@pytest.mark.slow
@pytest.mark.parametrize("model, elo0, elo1", [(S.EloModel.LOGISTIC, 0.0, 40.0), (S.EloModel.NORMALIZED, 0.0, 60.0)])
def test_corrected_estimates_are_median_unbiased_and_their_intervals_hold(model, elo0, elo1):
    """SPRTs at the true strength elo1: the estimates as counted overstate it (the tests that pass
    early, on a lucky streak, stop there; about two thirds read above it); corrected, half of them
    read above the truth and the 95% intervals hold it about 95% of the time."""
    runs, true = 200, elo1
    probs = (duplicate_model_normalized(true, 2.0, 0.02) if model is S.EloModel.NORMALIZED
             else duplicate_model(true, 2.0, 0.02)[0])
    rng = random.Random(f"stopped:{model}")
    draw = sampler(probs, rng)  # the simulation tool's
    above = held = raw_above = raw_held = 0
    for _ in range(runs):
        test = S.SPRT(elo0, elo1, values=S.PENTANOMIAL, model=model)
        verdict, _ = S.run_test(draw, test, 20000)
        fixed = S.stopped_estimate(test.counts, S.PENTANOMIAL, elo0, elo1, 0.05, 0.05, model, verdict)
        raw = S.estimate(test.counts)
        value, lo, hi = ((fixed.nelo, fixed.nelo_lo, fixed.nelo_hi) if model is S.EloModel.NORMALIZED
                         else (fixed.elo, fixed.elo_lo, fixed.elo_hi))
        raw_value, raw_lo, raw_hi = ((raw.nelo, raw.nelo_lo, raw.nelo_hi) if model is S.EloModel.NORMALIZED
                                     else (raw.elo, raw.elo_lo, raw.elo_hi))
        above += value > true
        raw_above += raw_value > true
        held += lo <= true <= hi
        raw_held += raw_lo <= true <= raw_hi
    assert abs(above - runs / 2) <= 3 * math.sqrt(runs / 4), above
    assert raw_above > runs / 2 + 3 * math.sqrt(runs / 4), raw_above
    assert held >= runs * 0.95 - 3 * math.sqrt(runs * 0.05 * 0.95), held
    assert held > raw_held  # the counts' own intervals hold it less often


@pytest.mark.slow
def test_asymmetric_alpha_beta_and_the_non_regression_preset():
    asymmetric_error_rates(runs=150)


def test_asymmetric_alpha_beta_and_the_non_regression_preset_quick():
    """The same on 40 tests each way, for the fast loop."""
    asymmetric_error_rates(runs=40)


def asymmetric_error_rates(runs: int) -> None:
    elo0, elo1 = sprt_setup.PRESETS["non-regression"][S.EloModel.LOGISTIC]
    at_h0, _ = duplicate_model(elo0, 3.0)
    at_h1, _ = duplicate_model(elo1, 3.0)
    rng = random.Random(5)

    def run(pdf, alpha, beta):
        out = {Verdict.H1: 0, Verdict.H0: 0, Verdict.INCONCLUSIVE: 0}
        for _ in range(runs):
            out[S.run_test(lambda: rng.choices(range(5), pdf)[0], S.SPRT(elo0, elo1, alpha, beta), 100000)[0]] += 1
        return out

    assert run(at_h0, 0.02, 0.10)[Verdict.H1] <= allowed(0.02, runs)
    assert run(at_h1, 0.02, 0.10)[Verdict.H0] <= allowed(0.10, runs)


def test_duplicate_units_need_fewer_games_than_single_games():
    """With deal luck shared by a unit's two games, the pentanomial SPRT reaches a verdict in
    clearly fewer games than a per-game trinomial SPRT on independent deals."""
    elo0, elo1 = 0.0, 40.0
    penta, tri = duplicate_model(elo1, luck=3.0, draws=0.02)
    _, units = simulate(penta, S.PENTANOMIAL, elo0, elo1, 100, seed=3)
    _, games = simulate(tri, S.TRINOMIAL, elo0, elo1, 100, seed=4)
    assert 2 * units < 0.7 * games


def test_model_has_the_stated_mean_and_marginal():
    penta, tri = duplicate_model(25.0, luck=2.0, draws=0.1)
    s = S.expected_score(25.0)
    assert sum(a * p for a, p in zip(S.PENTANOMIAL, penta)) == pytest.approx(s, abs=1e-12)
    assert sum(a * p for a, p in zip(S.TRINOMIAL, tri)) == pytest.approx(s, abs=1e-12)
    assert tri[1] == pytest.approx(0.1) and sum(penta) == pytest.approx(1)
    independent, single = duplicate_model(25.0, luck=0.0)
    assert independent[2] == pytest.approx(2 * single[0] * single[2] + single[1] ** 2)


def test_cap_gives_inconclusive():
    verdict, n = S.run_test(lambda: 2, S.SPRT(0, 20), 20)
    assert verdict == Verdict.INCONCLUSIVE and n == 20


# --- units and their outcomes ---------------------------------------------------------------


def test_unit_lineups():
    assert sprt_units.unit_lineups("aegis", "c", "b") == [("c", "b"), ("b", "c")]
    assert sprt_units.unit_lineups("confirmation", "c", "b") == [("c", "b", "c", "b"), ("b", "c", "b", "c")]


def test_game_outcome_aegis_by_placing_confirmation_by_totals():
    assert sprt_units.game_outcome("aegis", ("c", "b"), {"scores": [12, 9], "placing": [1, 2]}, "c", "b") == (1.0, 3.0)
    # Aegis goes by the placing even when the points say otherwise (a match ended early)
    assert sprt_units.game_outcome("aegis", ("b", "c"), {"scores": [3, 5], "placing": [1, 2]}, "c", "b") == (0.0, 2.0)
    # Confirmation: the candidate's two seats against the baseline's two
    res = {"scores": [20, 5, -3, 10], "placing": [1, 3, 4, 2]}
    assert sprt_units.game_outcome("confirmation", ("c", "b", "c", "b"), res, "c", "b") == (1.0, 2.0)
    assert sprt_units.game_outcome("confirmation", ("b", "c", "b", "c"), res, "c", "b") == (0.0, -2.0)
    res = {"scores": [4, 6, 6, 4], "placing": [3, 1, 1, 3]}
    assert sprt_units.game_outcome("confirmation", ("c", "b", "c", "b"), res, "c", "b") == (0.5, 0.0)


def test_tally_counts_units():
    tally = sprt_units.Tally(S.SPRT(0, 20))
    zero = {"timeout": 0, "illegal": 0}
    results = [{"scores": [10, 2], "placing": [1, 2], "faults": [zero, {"timeout": 2, "malformed": 5}]},
               {"scores": [10, 2], "placing": [1, 2], "faults": [{"wrong_id": 1, "error": 3}, {"no_session": 1}]}]
    unit = sprt_units.make_unit("aegis", 0, sprt_units.unit_lineups("aegis", "c", "b"), results, "c", "b")
    assert unit.scores == (1.0, 0.0) and unit.margins == (8.0, -8.0) and unit.points == 1.0
    tally.add(unit)
    assert tally.sprt.counts == [0, 0, 1, 0, 0] and (tally.wins, tally.draws, tally.losses) == (1, 0, 1)
    assert tally.faults["b"]["timeout"] == 2
    setup = sprt_setup.SprtSetup("aegis", {}, _spec("c"), _spec("b"), 1, _clock())
    report = sprt_report.summary(setup, tally, Verdict.INTERRUPTED)
    assert report["units"] == 1 and report["points_per_unit"] == 0.0 and report["verdict"] == "interrupted"
    assert "interrupted" in sprt_report.text(report) and "**SPRT `c` vs `b`**" in sprt_report.markdown(report)
    # faults by kind: malformed answers are not illegal actions, wrong ids, missing sessions and errors of the
    # bot's own code (a decide that raised) are their own
    assert "faults t/i/m/w/d/n/e: c 0/0/0/0/0/1/0, b 2/0/5/1/0/0/3;" in sprt_report.text(report)
    assert report["faults"]["b"]["error"] == 3 and "error" not in report["faults"]["c"]
    json.dumps(report, allow_nan=False)


def test_the_report_names_the_model_and_gives_both_estimates():
    setup = sprt_setup.SprtSetup("aegis", {}, _spec("c"), _spec("b"), 1, _clock())  # the defaults: normalized
    tally = sprt_units.Tally(S.SPRT(setup.elo0, setup.elo1, model=setup.elo_model))
    for k, scores in enumerate([(1.0, 0.5), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (0.5, 1.0)] * 4):
        tally.add(sprt_units.Unit(k, scores, (1.0, -1.0)))
    report = sprt_report.summary(setup, tally, Verdict.INCONCLUSIVE)
    assert (report["elo_model"], report["elo0"], report["elo1"]) == ("normalized", 0.0, 25.0)
    assert "llr_normalized" not in report
    assert report["llr"] == pytest.approx(S.llr(report["pentanomial"], S.PENTANOMIAL, 0, 25, S.EloModel.NORMALIZED))
    assert report["llr_approx"] == pytest.approx(S.llr_approx(report["pentanomial"], S.PENTANOMIAL, 0, 25,
                                                              S.EloModel.NORMALIZED))
    est = S.estimate(report["pentanomial"])
    assert (report["nelo"], report["elo"], report["draw_ratio"]) == (est.nelo, est.elo, 8 / 40)
    text = sprt_report.text(report)
    assert "H0 +0.00 against H1 +25.00 normalized Elo (preset stronger)" in text
    assert f"normalized Elo {est.nelo:+.1f}" in text and f"Elo {est.elo:+.1f}" in text
    assert "draw ratio 20.0%" in text and "bounds -2.94, 2.94" in text
    assert "pentanomial (units scoring 0, 0.5, 1, 1.5, 2 points) 4 0 4 8 4" in text


def _spec(name):
    from referee.model import BotSpec
    return BotSpec(name, ("python", "x.py"))


def _clock():
    from referee.runner import Clock
    return Clock(1.0, 10.0)


# --- the SPRT file ----------------------------------------------------------------------------


SPRT_FILE = """
[tournament]
game = "aegis"
seed = 3
concurrency = 2

[clock]
decision_ms = 2000

[sprt]
candidate = "new"
preset = "non-regression"
max_units = 50

[[bots]]
name = "new"
command = "python -m sample_bots.heuristic"

[[bots]]
name = "old"
command = ["python", "-m", "sample_bots.weakened", "--noise", "0.5"]
"""


def write_sprt(tmp_path, text=SPRT_FILE, change=None):
    text = textwrap.dedent(text)
    if change:
        assert change[0] in text, change[0]
        text = text.replace(change[0], change[1], 1)
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_a_good_sprt_file_reads_back(tmp_path):
    setup = sprt_setup.load(write_sprt(tmp_path))
    assert (setup.candidate.name, setup.baseline.name) == ("new", "old")
    assert (setup.elo0, setup.elo1, setup.preset, setup.elo_model) == (-22, 3, "non-regression", "normalized")
    assert setup.max_units == 50 and setup.seed == 3 and setup.output is None and setup.clock.decision_s == 2
    custom = sprt_setup.load(write_sprt(tmp_path, change=('preset = "non-regression"',
                                                          "elo0 = -5\nelo1 = 15\nalpha = 0.1")))
    assert (custom.elo0, custom.elo1, custom.alpha, custom.beta, custom.preset) == (-5, 15, 0.1, 0.05, None)
    logistic = sprt_setup.load(write_sprt(tmp_path, change=('preset = "non-regression"',
                                                            'preset = "non-regression"\nelo_model = "logistic"')))
    assert (logistic.elo0, logistic.elo1, logistic.elo_model) == (-17.5, 2.5, "logistic")


@pytest.mark.parametrize("change, message", [
    (("max_units = 50", "max_units = 50\nunits = 3"), r"s.toml:14: unknown key 'units' in \[sprt\]"),
    (('candidate = "new"', 'candidate = "newer"'), r"s.toml:11: sprt.candidate must name one of the bots"),
    (('preset = "non-regression"', 'preset = "better"'), r"s.toml:12: sprt.preset must be one of"),
    (('preset = "non-regression"', 'preset = "stronger"\nelo0 = 1\nelo1 = 2'), r"not both"),
    (('preset = "non-regression"', "elo0 = 1"), r"s.toml:12: sprt.elo0 and sprt.elo1 go together"),
    (('preset = "non-regression"', "elo0 = 10\nelo1 = 5"), r"s.toml:12: sprt: elo0 must be less than elo1"),
    (('preset = "non-regression"', 'elo0 = 0\nelo1 = "x"'), r"s.toml:13: sprt.elo1 must be a number"),
    (("max_units = 50", "max_units = 0"), r"s.toml:13: sprt.max_units must be at least 1"),
    (("max_units = 50", 'max_units = 50\nelo_model = "bayes"'), r"sprt.elo_model must be one of normalized, logistic"),
    (("seed = 3", "seed = 3\ndeal_sets = 4"), r"s.toml:5: tournament.deal_sets has no meaning for an SPRT"),
    (("concurrency = 2", "concurrency = 2\nrounds = 2"), r"s.toml:6: unknown key 'rounds' in \[tournament\]"),
    (("[sprt]", "[sprt_]"), r"missing \[sprt\] table"),
    (('[[bots]]\nname = "new"', '[[bots]]\nname = "x"\ncommand = "y"\n\n[[bots]]\nname = "new"'),
     r"exactly two bots"),
])
def test_sprt_file_errors_name_the_line_and_the_reason(tmp_path, change, message, invoke):
    path = write_sprt(tmp_path, change=change)
    with pytest.raises(ConfigError, match=message):
        sprt_setup.load(path)
    result = invoke("sprt", str(path))
    assert result.exit_code == 2 and "Error:" in result.output


# --- the set-up from options, and options over a file ------------------------------------------


def test_hypotheses_from_a_preset_or_given():
    assert sprt_setup.Hypotheses.given(None, None, None) is None
    assert sprt_setup.Hypotheses.given("non-regression", None, None) == sprt_setup.Hypotheses(-22, 3,
                                                                                               "non-regression")
    assert sprt_setup.Hypotheses.given("non-regression", None, None, S.EloModel.LOGISTIC) == \
        sprt_setup.Hypotheses(-17.5, 2.5, "non-regression", S.EloModel.LOGISTIC)
    assert sprt_setup.Hypotheses.given(None, -5, 15) == sprt_setup.Hypotheses(-5, 15, None)
    with pytest.raises(sprt_setup.SetupError, match="give --preset or --elo0 and --elo1, not both"):
        sprt_setup.Hypotheses.given("stronger", 1, 2)
    with pytest.raises(sprt_setup.SetupError, match="sprt.elo0 and sprt.elo1 go together") as caught:
        sprt_setup.Hypotheses.given(None, None, 3, name="sprt.{}".format)
    assert caught.value.key == "elo1"


def test_a_setup_from_options():
    setup = sprt_setup.from_options("confirmation", _spec("c"), _spec("b"), 7, options={"rounds": "2"},
                                    decision_ms=1500, bank_ms=0, max_units=9, output="out")
    assert (setup.options["rounds"], setup.seed, setup.max_units) == (2, 7, 9)
    assert (setup.clock.decision_s, setup.clock.bank_s) == (1.5, 0.0) and setup.output == Path("out").resolve()
    assert (setup.elo0, setup.elo1, setup.preset, setup.elo_model) == (0.0, 25.0, "stronger", "normalized")
    given = sprt_setup.from_options("aegis", _spec("c"), _spec("b"), 1, hypotheses=sprt_setup.Hypotheses(-3, 3))
    assert (given.elo0, given.elo1, given.preset, given.output) == (-3, 3, None, None)
    with pytest.raises(ValueError, match="same name"):
        sprt_setup.from_options("aegis", _spec("c"), _spec("c"), 1)
    with pytest.raises(ValueError, match="no option 'rounds'"):
        sprt_setup.from_options("aegis", _spec("c"), _spec("b"), 1, options={"rounds": "3"})


def test_options_override_the_file(tmp_path):
    setup = sprt_setup.load(write_sprt(tmp_path))
    assert setup.with_overrides() == setup
    over = setup.with_overrides(sprt_setup.Hypotheses.of_preset("stronger"), seed=9, bank_ms=500, alpha=0.1,
                                max_units=3, concurrency=1, output=tmp_path / "o")
    assert (over.elo0, over.elo1, over.preset, over.seed, over.alpha, over.beta) == (0, 25, "stronger", 9, 0.1, 0.05)
    # the model alone restates the file's preset in it
    assert (setup.with_overrides(elo_model=S.EloModel.LOGISTIC).elo0, setup.with_overrides(
        elo_model=S.EloModel.LOGISTIC).elo_model) == (-17.5, "logistic")
    assert (over.clock.decision_s, over.clock.bank_s) == (2.0, 0.5)  # the file's decision time stays
    assert (over.max_units, over.concurrency, over.output) == (3, 1, tmp_path / "o")
    with pytest.raises(ValueError, match="elo0 must be less than elo1"):
        setup.with_overrides(sprt_setup.Hypotheses(5, 1))


def test_a_bot_from_its_command():
    from referee.model import BotSpec

    assert bot_from_command("new", "python 'my bot.py' -v") == BotSpec("new", ("python", "my bot.py", "-v"))
    with pytest.raises(ValueError, match="bad bot name 'a b'"):
        bot_from_command("a b", "python x.py")
    with pytest.raises(ValueError, match="the command is empty"):
        bot_from_command("a", " ")


@pytest.mark.parametrize("args, message", [
    (["--game", "aegis", "--candidate", "a=x"], "give CONFIG, or --game, --candidate and --baseline"),
    (["--game", "aegis", "--candidate", "a=x", "--baseline", "b=y", "--preset", "stronger", "--elo0", "1",
      "--elo1", "2"], "not both"),
    (["--game", "aegis", "--candidate", "a=x", "--baseline", "b=y", "--elo0", "1"], "go together"),
    (["--game", "aegis", "--candidate", "a=x", "--baseline", "a=y"], "same name"),
    (["--game", "aegis", "--candidate", "a=x", "--baseline", "b=y", "--elo0", "5", "--elo1", "1"],
     "elo0 must be less than elo1"),
    (["--game", "aegis", "--candidate", "a=x", "--baseline", "b=y", "-o", "rounds=3"], "no option 'rounds'"),
])
def test_sprt_usage_errors_exit_2(args, message, invoke):
    result = invoke("sprt", *args)
    assert result.exit_code == 2 and message in result.output, result.output


def test_sprt_config_and_bot_options_do_not_mix(tmp_path, invoke):
    result = invoke("sprt", str(write_sprt(tmp_path)), "--game", "aegis")
    assert result.exit_code == 2 and "--game cannot be combined with CONFIG" in result.output


def test_verdict_exit_codes(invoke):
    assert {v: Outcome(directory=None, saved=0, sprt=v).exit_code for v in Verdict} == {
        "H1": 0, "H0": 1, "inconclusive": 3, "interrupted": 130}
    assert ExitCode.H1_ACCEPTED is ExitCode.OK and ExitCode.H0_ACCEPTED is ExitCode.CHECK_FAILED
    help_text = invoke("--help").output
    assert "H1 accepted" in help_text and "inconclusive" in help_text


# --- end to end, with real bots ------------------------------------------------------------


@pytest.mark.e2e
def test_heuristic_is_stronger_than_weakened_heuristic(tmp_path):
    """Aegis, the stronger preset: the heuristic bot against itself playing randomly half the
    time reaches H1 (it wins nearly everything, so in about the minimum 53 units)."""
    md = tmp_path / "summary.md"
    done = run_cli("sprt", "--game", "aegis", "--candidate", "heuristic=python -m sample_bots.heuristic",
                   "--baseline", "weak=python -m sample_bots.weakened --noise 0.5 --seed 1", "--seed", 7,
                   "--preset", "stronger", "--elo-model", "logistic", "--max-units", 150, "--format", "json",
                   "--markdown", md, "--quiet")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["verdict"] == "H1" and out["conclusion"] == "stronger"
    assert (out["elo_model"], out["elo0"], out["elo1"]) == ("logistic", 0, 20)
    assert out["llr"] == pytest.approx(S.llr(out["pentanomial"], S.PENTANOMIAL, 0, 20))
    # a clean sweep (every unit 2 points) has no finite Elo estimate: the report gives none
    sweep = out["pentanomial"][:4] == [0, 0, 0, 0]
    assert (out["nelo"] is None and out["elo"] is None) if sweep else out["nelo"] > 0
    assert out["draw_ratio"] == out["draws"] / out["games"]
    assert out["llr"] >= out["llr_upper"] == pytest.approx(math.log(19))
    assert 53 <= out["units"] <= 150 and out["games"] == 2 * out["units"] == sum(out["pentanomial"]) * 2
    assert out["wins"] + out["draws"] + out["losses"] == out["games"] and out["los"] > 0.99
    assert out["points_per_unit"] > 0 and out["faults"]["heuristic"].get("timeout", 0) == 0
    text = md.read_text()
    assert text.startswith("**SPRT `heuristic` vs `weak`**") and "H1 accepted: stronger" in text


@pytest.mark.e2e
def test_weakened_candidate_fails_in_confirmation(tmp_path):
    """Confirmation (one round a match), the weakened bot as the candidate: H0, exit 1. Wide
    hypotheses keep it short; the text report names the verdict."""
    done = run_cli("sprt", "--game", "confirmation", "-o", "rounds=1", "--candidate",
                   "weak=python -m sample_bots.weakened --noise 0.9 --seed 2", "--baseline",
                   "heuristic=python -m sample_bots.heuristic", "--seed", 3, "--elo0", 0, "--elo1", 150,
                   "--max-units", 60, "--quiet")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "verdict: H0 accepted: weak is not stronger" in done.stdout
    assert "pentanomial" in done.stdout and "LLR" in done.stdout
    assert "H0 +0.00 against H1 +150.00 normalized Elo" in done.stdout and "normalized Elo" in done.stdout
    assert "draw ratio" in done.stdout


@pytest.mark.e2e
def test_sprt_file_with_command_line_overrides(tmp_path):
    """The file's bots, with the hypotheses, seed, cap and clock overridden: 3 units, inconclusive, exit 3."""
    path = write_sprt(tmp_path, change=("[[bots]]\nname = \"new\"", "[[bots]]\nname = \"new\"\ncwd = \"{root}\""
                                        .replace("{root}", str(ROOT))))
    done = run_cli("sprt", path, "--preset", "stronger", "--seed", 9, "--max-units", 3, "--decision-ms", 1500,
                   "--format", "json", "--quiet")
    assert done.returncode == 3, done.stderr
    out = json.loads(done.stdout)
    assert (out["verdict"], out["units"], out["max_units"], out["seed"]) == ("inconclusive", 3, 3, 9)
    assert (out["preset"], out["elo0"], out["elo1"], out["candidate"]) == ("stronger", 0, 25, "new")
    assert out["elo_model"] == "normalized"
    assert out["llr"] == pytest.approx(S.llr(out["pentanomial"], S.PENTANOMIAL, 0, 25, S.EloModel.NORMALIZED))


@pytest.mark.e2e
def test_ctrl_c_reports_what_was_played_and_the_store_resumes(tmp_path):
    """SIGINT mid-run: exit 130 and a report of the units counted; with --output the matches
    are saved, and the same run resumes from them (here: capped at the units already saved,
    so it plays nothing and ends inconclusive, exit 3, with the same counts)."""
    out = tmp_path / "out"
    args = ["sprt", "--game", "aegis", "--candidate", "a=python -m sample_bots.weakened --noise 0.3 --seed 1",
            "--baseline", "b=python -m sample_bots.weakened --noise 0.3 --seed 2", "--seed", 5, "--output", out,
            "--format", "json"]
    proc = subprocess.Popen([sys.executable, "-m", "referee", *map(str, args)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    db = out / "results.sqlite"
    deadline = time.monotonic() + 120
    from referee.results.store import Store
    while time.monotonic() < deadline:
        if db.exists() and Store(out).count() >= 8:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    report = json.loads(stdout)
    assert report["verdict"] == "interrupted" and report["units"] >= 3
    assert f"interrupted after {report['units']} unit(s)" in stderr

    again = run_cli(*args[:-2], "--max-units", report["units"], "--format", "json", "--quiet")
    assert again.returncode == 3, again.stderr
    resumed = json.loads(again.stdout)
    assert resumed["verdict"] == "inconclusive"
    for key in ("units", "pentanomial", "wins", "draws", "losses", "llr"):
        assert resumed[key] == report[key]
    # another configuration in the same directory is refused
    refused = run_cli(*[a if a != 5 else 6 for a in args])
    assert refused.returncode == 2 and "another tournament configuration" in refused.stderr


@pytest.mark.e2e
def test_a_bot_that_never_comes_is_an_error(tmp_path):
    """A bot that is not connected within startup_s stops the test before any match: exit 2, not a verdict."""
    import asyncio

    from referee.cli.exits import exit_code_for
    from referee.model import BotSpec
    from referee.play.executors import BotsNotReady

    setup = sprt_setup.SprtSetup("aegis", {}, BotSpec("a", external=True, token="t1"),
                                 BotSpec("b", external=True, token="t2"), 1, _clock(), concurrency=1, max_units=5,
                                 startup_s=0.5)
    tally = sprt_units.Tally(S.SPRT(0, 20))
    with pytest.raises(BotsNotReady, match="bot a did not connect within 0.5 s; bot b did not") as caught:
        asyncio.run(sprt_run.run(setup, tally, connect_timeout=0.5))
    assert tally.sprt.n == 0 and exit_code_for(caught.value) is ExitCode.USAGE


def test_the_simulation_tool_covers_both_models(capsys):
    """A tiny run of python -m referee.tools.sprt_simulation (the figures come from long runs)."""
    from referee.tools import sprt_simulation

    sprt_simulation.main(["--part", "model", "--runs", "2", "--lucks", "1", "--max-units", "100"])
    out = capsys.readouterr().out
    assert "stronger <0, 25> nElo" in out and "non-regression <-22, 3> nElo" in out
    assert "stronger <0, 20> Elo" in out and "trinomial" in out


def test_identical_units_print_no_interval_and_no_negative_zero():
    """An SPRT of identical deterministic bots: every unit scores the same, so the spread is 0; the
    estimate says so instead of `Elo -0.0 [-0.0, -0.0]` (issue 34, item 9)."""
    est = S.estimate([0, 0, 7, 0, 0])
    assert sprt_report.elo_text(est) == "+0.0 (no interval: all 7 unit(s) scored the same)"
    assert sprt_report._signed(-0.0) == sprt_report._signed(-0.04) == "+0.0"
    assert sprt_report._signed(-0.06) == "-0.1"
    assert sprt_report.elo_text(S.estimate([0, 1, 5, 1, 0])).startswith("+0.0 [-")
