"""Rank confidence (referee.stats.ranks, ratings.rank_posterior): Student's t, the Loewner max of two
covariances, the posterior's pairwise probabilities, ranks, top-k and settled orders, computed with
numpy and equal to the pure-Python computation they replaced; head-to-head bounds and LOS
(referee.stats.headtohead.elo_difference)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from referee.stats import ranks, ratings
from referee.stats.headtohead import elo_difference, upper_bound
from referee.stats.ratings import PairResult, rank_posterior, rate, t_quantile
from referee.stats.simulation import PROJECT, simulate_tournament
from referee.tools.coverage import KINDS, _lineups


@pytest.mark.parametrize("df", [1, 2, 4, 9, 30])
@pytest.mark.parametrize("q", [0.6, 0.9, 0.975, 0.995])
def test_t_cdf_inverts_the_t_quantile(df, q):
    t = t_quantile(q, df)
    assert ranks.t_cdf(t, df) == pytest.approx(q, abs=1e-7)
    assert ranks.t_cdf(-t, df) == pytest.approx(1 - q, abs=1e-7)


def test_t_cdf_known_values():
    assert ranks.t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy
    assert ranks.t_cdf(0.0, 3) == 0.5
    assert ranks.t_cdf(1.959963984540054, math.inf) == pytest.approx(0.975)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 19, 20, 99, 400, 501, 2000])
def test_the_vectorised_t_distribution_is_the_scalar_one(df):
    """Its finite series (up to 500 degrees of freedom) and its continued fraction (beyond) against
    the incomplete beta function, one value at a time, to 1e-11 (very near 0, below |t| = 1e-4, the
    scalar one is the less exact: it takes 1 minus a tail that rounds to 1/2)."""
    rng = random.Random(df)
    t = [rng.gauss(0, 4) for _ in range(300)] + [0.0, 1e-4, -1e-4, 40.0, -40.0, 1e4, -1e4]
    got = ranks.t_cdf_array(np.array(t), df)
    assert max(abs(g - ranks.t_cdf(v, df)) for g, v in zip(got, t)) < 1e-11


# --- a pure-Python reference: the posterior as it was computed before numpy, one loop at a time ------


def jacobi(a: list[list[float]]) -> tuple[list[float], list[list[float]]]:
    """Eigenvalues and eigenvectors (columns) of a symmetric matrix, by cyclic Jacobi rotations."""
    n = len(a)
    m, q = [row[:] for row in a], [[float(i == j) for j in range(n)] for i in range(n)]
    for _ in range(60):
        if sum(m[i][j] ** 2 for i in range(n) for j in range(i + 1, n)) < 1e-30 * sum(m[i][i] ** 2 for i in range(n)):
            break
        for p in range(n - 1):
            for r in range(p + 1, n):
                if abs(m[p][r]) < 1e-300:
                    continue
                theta = (m[r][r] - m[p][p]) / (2.0 * m[p][r])
                t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c, s = 1.0 / math.sqrt(t * t + 1.0), t / math.sqrt(t * t + 1.0)
                for k in range(n):
                    m[k][p], m[k][r] = c * m[k][p] - s * m[k][r], s * m[k][p] + c * m[k][r]
                for k in range(n):
                    m[p][k], m[r][k] = c * m[p][k] - s * m[r][k], s * m[p][k] + c * m[r][k]
                for k in range(n):
                    q[k][p], q[k][r] = c * q[k][p] - s * q[k][r], s * q[k][p] + c * q[k][r]
    return [m[i][i] for i in range(n)], q


def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]


def transpose(a: list[list[float]]) -> list[list[float]]:
    return [list(col) for col in zip(*a)]


def reference_matrix(outcomes: list, prior: bool = True) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """The fit (the standings' pure-Python one) and P(a above b) for every two players, by the formulas of
    referee.stats.ranks computed with lists and scalar functions: Σ_w the Loewner max of the two
    covariances, the Helmert contrasts' eigenvectors, the spread's nodes and the weighted t probabilities."""
    r = ratings
    checked = r._check(outcomes)
    names, index = r._index(checked)
    n, scale = len(names), r.ELO_PER_LOGIT ** 2
    rows = [(c, w, g) for c, (w, g) in r._counts(checked, index).items()]
    columns, deals = r._columns(checked, index)
    x = r._fit_logits(n, rows, 1.0)
    cov = r._inverse(r._information(n, rows, 1.0, x))
    info = [[v * scale for v in row] for row in cov]
    robust = [[v * scale for v in row] for row in r._robust(cov, columns, x, deals)]
    # Σ_w: in the metric of info (info = L Lᵀ), the eigenvalues of L⁻¹ robust L⁻ᵀ floored at 1
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            v = info[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            low[i][j] = math.sqrt(v) if i == j else v / low[j][j]
    inv_low = [[0.0] * n for _ in range(n)]
    for j in range(n):
        for i in range(n):
            inv_low[i][j] = (float(i == j) - sum(low[i][k] * inv_low[k][j] for k in range(i))) / low[i][i]
    values, q = jacobi(matmul(matmul(inv_low, robust), transpose(inv_low)))
    f = matmul(matmul(low, q), [[math.sqrt(max(values[j], 1.0)) * (i == j) for j in range(n)] for i in range(n)])
    sigma = matmul(f, transpose(f))
    elo = {name: x[index[name]] * r.ELO_PER_LOGIT for name in names}
    helm = [[(1.0 if i < k else -k if i == k else 0.0) / math.sqrt(k * (k + 1)) for i in range(n)] for k in range(1, n)]
    d, u = jacobi(matmul(matmul(helm, sigma), transpose(helm)))
    d = [max(v, 0.0) for v in d]
    z = [sum(h[i] * elo[names[i]] for i in range(n)) for h in helm]
    omega = [sum(u[a][k] * z[a] for a in range(n - 1)) for k in range(n - 1)]
    nodes = [math.inf]
    if prior:
        top = max(ranks.TAU_MAX_ELO, ranks.TAU_MAX_SE * math.sqrt(max(d)))
        taus = [(g + 0.5) * top / ranks.TAU_POINTS for g in range(ranks.TAU_POINTS)]
        logs = [-0.5 * sum(math.log(dk + t * t) + wk * wk / (dk + t * t) for dk, wk in zip(d, omega)) for t in taus]
        weights = [math.exp(v - max(logs)) for v in logs]
        acc, nodes = 0.0, []
        for tau, w in zip(taus, weights):
            acc += w / sum(weights)
            while len(nodes) < ranks.TAU_NODES and acc >= (len(nodes) + 0.5) / ranks.TAU_NODES:
                nodes.append(tau * tau)
    out = {}
    for a in names:
        for b in names:
            if a == b:
                continue
            v = [sum(helm[k][i] * ((names[i] == a) - (names[i] == b)) for i in range(n)) for k in range(n - 1)]
            v = [sum(u[k][j] * v[k] for k in range(n - 1)) for j in range(n - 1)]
            p = 0.0
            for t2 in nodes:
                s = [1.0 if math.isinf(t2) else t2 / (dk + t2) for dk in d]
                mean = sum(vk * sk * wk for vk, sk, wk in zip(v, s, omega))
                var = sum(vk * vk * dk * sk for vk, dk, sk in zip(v, d, s))
                p += ranks.t_cdf(mean / math.sqrt(var), deals - 1) / len(nodes)
            out[a, b] = 0.5 if abs(elo[a] - elo[b]) < ranks.ROUND_OFF_ELO else p
    return elo, out


TABLES = [("2-player", 2, 1), ("2-player", 5, 2), ("4-player", 3, 3), ("4-player", 20, 4), ("pairs", 6, 5)]


@pytest.mark.parametrize("kind, deal_sets, seed", TABLES)
@pytest.mark.parametrize("prior", [True, False])
def test_the_posterior_is_the_pure_python_computation_to_1e_9(kind, deal_sets, seed, prior):
    """The numpy posterior (fit, covariances, eigenvectors, spread, every pairwise probability at once)
    against the reference above, on tables of four bots (and of eight, 2-player)."""
    true = {"a": 1350.0, "b": 1450.0, "c": 1550.0, "d": 1650.0}
    outcomes = simulate_tournament(true, _lineups(kind), deal_sets, random.Random(seed), teams=KINDS[kind][2],
                                   **PROJECT)
    post = rank_posterior(outcomes, spread_prior=prior)
    elo, probabilities = reference_matrix(outcomes, prior)
    assert {name: float(e) for name, e in zip(post.names, post.elo)} == pytest.approx(elo, abs=1e-9)
    for (a, b), p in probabilities.items():
        assert post.above(a, b) == pytest.approx(p, abs=1e-9)


def test_eight_bots_too():
    true = {f"b{i}": 1500.0 + 40 * i for i in range(8)}
    outcomes = simulate_tournament(true, [(a, b) for a in true for b in true if a != b], 6, random.Random(8), **PROJECT)
    elo, probabilities = reference_matrix(outcomes)
    post = rank_posterior(outcomes)
    for (a, b), p in probabilities.items():
        assert post.above(a, b) == pytest.approx(p, abs=1e-9)


def test_rank_probabilities_count_the_draws():
    """P(rank), top-k and the joint probability of the order: counted from the same draws one at a time."""
    true = {"a": 1350.0, "b": 1450.0, "c": 1550.0, "d": 1650.0}
    post = rank_posterior(simulate_tournament(true, _lineups("4-player"), 5, random.Random(3), **PROJECT))
    order = post._order.tolist()
    probs, top = post.rank_probabilities(), post.top()
    for i, name in enumerate(post.names):
        counted = [sum(draw[k] == i for draw in order) / len(order) for k in range(4)]
        assert probs[name] == pytest.approx(counted, abs=1e-12)
        assert top[name] == pytest.approx([sum(counted[:k + 1]) for k in range(4)], abs=1e-12)
    for k in range(1, 5):
        assert post.p_top(k) == pytest.approx(sum(draw[:k] == list(range(k)) for draw in order) / len(order))


def random_spd(rng: random.Random, n: int, rank: int | None = None) -> list[list[float]]:
    vs = [[rng.gauss(0, 1) for _ in range(n)] for _ in range(rank or n + 2)]
    return [[sum(v[i] * v[j] for v in vs) + (1e-3 if i == j and rank is None else 0.0) for j in range(n)]
            for i in range(n)]


def test_the_loewner_max_is_above_both_and_equals_the_larger_when_ordered():
    rng = random.Random(2)
    info, robust = random_spd(rng, 5), random_spd(rng, 5, rank=2)  # a robust covariance of 3 deal sets
    f = ranks.loewner_max(info, robust)
    w = [[sum(f[i][k] * f[j][k] for k in range(5)) for j in range(5)] for i in range(5)]
    def quad(m, c):
        return sum(c[i] * m[i][j] * c[j] for i in range(5) for j in range(5))

    for _ in range(200):
        c = [rng.gauss(0, 1) for _ in range(5)]
        assert quad(w, c) >= max(quad(info, c), quad(robust, c)) * (1 - 1e-9)
    bigger = [[2 * v for v in row] for row in info]  # robust above info everywhere: the max is robust
    f = ranks.loewner_max(info, bigger)
    assert [[sum(f[i][k] * f[j][k] for k in range(5)) for j in range(5)] for i in range(5)] == \
        [pytest.approx(row) for row in bigger]


def test_pairwise_probabilities_are_the_draws_limit_and_ranks_add_up():
    true = {"a": 1350.0, "b": 1450.0, "c": 1550.0, "d": 1650.0}
    outcomes = simulate_tournament(true, _lineups("4-player"), 5, random.Random(3), **PROJECT)
    post = rank_posterior(outcomes)
    assert post.df == 4 and post.names[0] == "d"
    draws = np.argsort(post._order, axis=1)  # each player's rank in each draw
    for a in post.names:
        for b in post.names:
            if a != b:
                by_draws = float((draws[:, post._index[a]] < draws[:, post._index[b]]).mean())
                assert post.above(a, b) == pytest.approx(by_draws, abs=0.03)
                assert post.above(a, b) + post.above(b, a) == pytest.approx(1.0)
    probs = post.rank_probabilities()
    for name in post.names:
        assert sum(probs[name]) == pytest.approx(1.0)
        top = post.top()[name]
        assert top == sorted(top) and top[-1] == pytest.approx(1.0)
    for k in range(4):
        assert sum(probs[name][k] for name in post.names) == pytest.approx(1.0)
    assert post.p_top(1) == pytest.approx(probs["d"][0])
    assert post.p_top(4) <= post.p_top(2) <= post.p_top(1)
    assert post.settled(min(post.adjacent())) and not post.settled(min(post.adjacent()) + 1e-9)
    assert post.settled(post.p_top(2), top=2) and not post.settled(post.p_top(2) + 1e-9, top=2)
    # the table's LOS is the same posterior's (with a bootstrap for the intervals)
    table = rate(outcomes, bootstrap=50)
    assert table.los("d", "c") == pytest.approx(post.above("d", "c"))
    assert table.rows[0].los_next == pytest.approx(post.adjacent()[0])


def test_identical_bots_are_ties_not_round_off():
    # three bots with the same results in every deal set: every difference is round-off
    outcomes = []
    for d in range(6):
        for x, y in (("a", "b"), ("b", "c"), ("c", "a")):
            outcomes += [PairResult(d, x, y, 1.0), PairResult(d, y, x, 1.0)]
    table = rate(outcomes, bootstrap=100)
    for x in "abc":
        for y in "abc":
            if x != y:
                assert table.los(x, y) == 0.5
    probs = table.posterior.rank_probabilities()
    for name in "abc":
        assert probs[name] == [pytest.approx(1 / 3, abs=0.03)] * 3


def test_no_rank_confidence_from_one_deal_set():
    outcomes = [PairResult(0, "a", "b", 1.0)] * 5
    assert rank_posterior(outcomes) is None
    assert rate(outcomes, bootstrap=50).los("a", "b") is None


# --- head to head ---------------------------------------------------------------------------


def results(wins: int, losses: int, deal_sets: int, draws: int = 0) -> list[PairResult]:
    """``a``'s results against ``b``, spread evenly over the deal sets."""
    scores = [1.0] * wins + [0.5] * draws + [0.0] * losses
    return [PairResult(k % deal_sets, "a", "b", s) for k, s in enumerate(scores)]


def test_a_sweep_is_a_bound_not_an_interval():
    d = elo_difference(results(10, 0, 5), "a", "b")
    assert d.bound == "lower" and d.hi is None and d.lo is not None and d.lo < d.elo
    assert d.plus_minus is None
    other = elo_difference([PairResult(o.deal_set, o.b, o.a, 1 - o.score) for o in results(10, 0, 5)], "b", "a")
    assert other.bound == "upper" and other.lo is None and other.hi == pytest.approx(-d.lo)


def test_head_to_head_los_agrees_with_its_interval():
    for wins, losses, deal_sets in ((14, 6, 10), (20, 10, 10), (9, 3, 3), (30, 18, 12)):
        d = elo_difference(results(wins, losses, deal_sets), "a", "b")
        assert d.lo < d.elo < d.hi
        assert (d.lo > 0) == (d.los > 0.975)
    assert elo_difference(results(5, 5, 5), "a", "b").los == 0.5
    # an even score with draws, and no intervals without bootstrap
    assert elo_difference(results(2, 2, 4, draws=4), "a", "b").los == 0.5
    assert elo_difference(results(3, 1, 2), "a", "b", bootstrap=0).lo is None


def test_the_one_sided_bound_is_below_0_exactly_when_the_los_is_below_one_minus_the_confidence():
    """The gauntlet's verdict reads the one-sided upper bound it prints; it is the same test as the
    LOS (issue 34, item 6), for every record of 4, 9, 16 or 30 results with and without draws on 1
    to 10 deal sets, at the confidences a gauntlet takes (ties at the boundary aside, to rounding)."""
    checked = worse = 0
    for deal_sets in (1, 2, 5, 10):
        for n in (4, 9, 16, 30):
            for wins in range(n + 1):
                for draws in (0, 2):
                    if wins + draws > n:
                        continue
                    outcomes = results(wins, n - wins - draws, deal_sets, draws)
                    los = elo_difference(outcomes, "a", "b").los
                    for confidence in (0.8, 0.95, 0.99):
                        if abs(los - (1 - confidence)) < 1e-9:
                            continue
                        bound = upper_bound(outcomes, "a", "b", confidence)
                        assert (bound is not None and bound < 0) == (los < 1 - confidence), \
                            (deal_sets, wins, draws, n - wins - draws, confidence, los, bound)
                        checked += 1
                        worse += bound is not None and bound < 0
    assert checked > 1000 and worse > 200
    # the bound is the end of the two-sided interval whose upper tail is 1 - confidence
    outcomes = results(14, 28, 10)
    assert upper_bound(outcomes, "a", "b", 0.975) == pytest.approx(elo_difference(outcomes, "a", "b").hi)
    assert upper_bound(results(8, 0, 4), "a", "b") is None  # a sweep: no upper bound


def test_head_to_head_widens_for_correlated_deal_sets():
    # the same 20-10 record: spread evenly over the deal sets, or all the losses on a few of them
    even = elo_difference(results(20, 10, 10), "a", "b")
    lumped = [PairResult(k // 3, "a", "b", 0.0 if k >= 20 else 1.0) for k in range(30)]
    clumped = elo_difference(lumped, "a", "b")
    assert clumped.elo == pytest.approx(even.elo)
    assert clumped.hi - clumped.lo > 1.5 * (even.hi - even.lo)


def test_the_spreads_quadrature_matches_a_fine_integral():
    """P(a above b) averaged over the spread's 16 nodes, against the same average over 4,000 values
    of the spread weighted by their marginal likelihood."""
    true = {"a": 1440.0, "b": 1480.0, "c": 1520.0, "d": 1560.0}
    post = rank_posterior(simulate_tournament(true, _lineups("4-player"), 4, random.Random(7), **PROJECT))
    top = max(ranks.TAU_MAX_ELO, ranks.TAU_MAX_SE * math.sqrt(max(post.d)))
    taus2 = [((g + 0.5) * top / 4000) ** 2 for g in range(4000)]
    logs = [-0.5 * sum(math.log(dk + t2) + wk * wk / (dk + t2) for dk, wk in zip(post.d, post.omega)) for t2 in taus2]
    weights = [math.exp(v - max(logs)) for v in logs]
    fine = ranks.RankPosterior(post.names, post.elo, post.rows, post.d, post.omega,
                               tuple((w / sum(weights), t2) for w, t2 in zip(weights, taus2) if w > 1e-9), post.df)
    for a in post.names:
        for b in post.names:
            if a != b:
                assert post.above(a, b) == pytest.approx(fine.above(a, b), abs=0.01)
    flat = rank_posterior(simulate_tournament(true, _lineups("4-player"), 4, random.Random(7), **PROJECT),
                          spread_prior=False)
    d, c = post.names[0], post.names[-1]
    assert 0.5 < post.above(d, c) < flat.above(d, c)  # the prior pulls close bots together
