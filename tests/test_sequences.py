"""Confidence sequences (referee.stats.sequences): the normal mixture's bound is the martingale's level
1/α, it holds at every look at once (a random walk watched at each of a thousand steps leaves it less
than α of the time, where a 95% interval at every look is left most of the time), with an estimated
variance too (Student's t), and a pair's verdict agrees with its bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee.stats import sequences
from referee.stats.ranks import t_cdf, t_cdf_array


@pytest.mark.parametrize("variance", [1.0, 100.0, 2500.0, 40000.0])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.05 / 6])
def test_the_bound_is_where_the_mixture_martingale_reaches_one_over_alpha(variance, alpha):
    information, rho = 1.0 / variance, 1.0 / sequences.MIXTURE_ELO ** 2
    s = information * sequences.boundary(variance, alpha) * math.sqrt(variance)  # S = I (Δ̂ - Δ) at the bound
    martingale = math.sqrt(rho / (information + rho)) * math.exp(s * s / (2.0 * (information + rho)))
    assert martingale == pytest.approx(1.0 / alpha, rel=1e-9)


def walks(paths: int, steps: int, seed: int, df: float | None = None) -> np.ndarray:
    """Increments of a random walk with mean 0: normal, or Student's t (heavy tails) scaled to variance 1."""
    rng = np.random.default_rng(seed)
    if df is None:
        return rng.standard_normal((paths, steps))
    return rng.standard_t(df, (paths, steps)) / math.sqrt(df / (df - 2))


def test_a_random_walk_watched_at_every_step_leaves_the_sequence_less_than_alpha_of_the_time():
    """The mean of n steps estimates 0 with variance 1/n; 4,000 walks of 1,000 steps, each looked at
    after every step. The sequence at α = 5% is left by at most 5% of them (the bound is for every
    look at once); a 95% interval looked at after every step is left by most (optional stopping: the
    cause of the old rule's errors near ties)."""
    steps = walks(4000, 1000, 1)
    n = np.arange(1, 1001)
    z = np.abs(np.cumsum(steps, axis=1)) / np.sqrt(n)  # |mean| / sd of the mean
    bound = np.array([sequences.boundary(1.0 / k, 0.05) for k in n])
    left = (z > bound).any(axis=1).mean()
    naive = (z > 1.959963984540054).any(axis=1).mean()
    assert left <= 0.05 and naive > 0.5, (left, naive)


@pytest.mark.parametrize("df", [None, 5.0])
def test_with_an_estimated_variance_the_t_bound_holds_from_two_looks_on(df):
    """As the rule uses it: the variance estimated from the n steps so far (n - 1 degrees of freedom),
    the bound at Student's t, looked at from the second step to the 300th, normal steps and heavy-tailed
    ones (t with 5 degrees of freedom). The verdict of every look, computed for all walks at once as
    :func:`sequences.verdict` decides it (P(T > |mean| / sd) below the bound's tail), checked against
    it on a sample of looks."""
    steps = walks(2000, 300, 2, df)
    n = np.arange(1, 301)
    mean = np.cumsum(steps, axis=1) / n
    second = np.cumsum(steps ** 2, axis=1)
    var = np.maximum(second - n * mean ** 2, 1e-300) / np.maximum(n - 1, 1) / n  # of the mean
    upper = np.column_stack([1.0 - t_cdf_array(np.abs(mean[:, k]) / np.sqrt(var[:, k]), k) for k in range(1, 300)])
    tail = np.vectorize(sequences.tail)(var[:, 1:], 0.05)
    crossed = upper < tail
    rng = np.random.default_rng(3)
    for i, k in zip(rng.integers(0, 2000, 300), rng.integers(0, 299, 300)):
        estimate = abs(mean[i, k + 1])
        said = sequences.verdict(sequences.wald(estimate, var[i, k + 1]), estimate, k + 1, 0.05, 0.0)
        assert (said != sequences.OPEN) == crossed[i, k]
    assert crossed.any(axis=1).mean() <= 0.05, crossed.any(axis=1).mean()


@pytest.mark.parametrize("df", [1, 4, 19, 199])
def test_verdicts_agree_with_the_half_width_and_the_bounds(df):
    variance, alpha, tie = 400.0, 0.05 / 6, 50.0
    half = sequences.half_width(variance, df, alpha)
    tail = sequences.tail(variance, alpha)
    assert 1.0 - t_cdf(half / math.sqrt(variance), df) == pytest.approx(tail, rel=1e-6)

    def said(diff: float, margin: float) -> str:
        return sequences.verdict(sequences.wald(diff, variance), diff, df, alpha, margin)

    assert said(half * 1.0001, tie) == sequences.ABOVE
    assert said(half * 0.9999, 0.0) == sequences.OPEN
    if half < tie:  # both bounds inside ±tie: within; one outside: open
        assert said(0.0, half * 1.0001) == sequences.WITHIN
        assert said(0.0, half * 0.9999) == sequences.OPEN
        assert said(tie - half * 1.0001, tie) == sequences.WITHIN
    assert said(0.0, 0.0) == sequences.OPEN  # no margin: never within
    test = sequences.wald(half + 30.0, variance)  # ordered: the bound it proved is 30 Elo
    assert sequences.edge(test, half + 30.0, 0.0, df, alpha) == pytest.approx(30.0, abs=0.02)


def test_the_level_is_shared_among_every_pair_of_the_table():
    assert [sequences.pairs(n) for n in (1, 2, 3, 4, 16)] == [1, 1, 3, 6, 120]
