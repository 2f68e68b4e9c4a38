"""The collusion check (issue 35): the estimator against an independent exact implementation, its
interval against the deal sets' own estimates, Holm's correction, what it leaves out; its
calibration by simulation (a fixed seed: the null flags at most 5% of tournaments, a colluding pair
is caught in at least 80%); and real colluding bots, which play for each other by play alone,
flagged where an honest control run is not."""

from __future__ import annotations

import json
import math
import random
import statistics
from fractions import Fraction
from pathlib import Path

import pytest
from harness import ROOT, invoke_cli, run_cli, write_tournament

from referee.competition.schedule import make_schedule
from referee.results import collusion as tcollusion
from referee.results.store import MatchRow
from referee.stats.collusion import Match, holm, pair_effects, presence
from referee.stats.ranks import t_cdf
from referee.stats.simulation import POINTS
from referee.tools import collusion as tool
from referee.tools.strength import wilson
from referee.view.report import collusion_section

# --- an independent implementation: every least-squares fit solved exactly, in fractions ----------------


def solve(a: list[list[Fraction]], b: list[Fraction]) -> list[Fraction]:
    """The solution of a non-singular system (Gauss-Jordan, exact)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if m[r][col] != 0)
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def least_squares(rows: list[list[Fraction]], y: list[Fraction], w: list[Fraction] | None = None) -> list[Fraction]:
    w = w or [Fraction(1)] * len(y)
    k = len(rows[0])
    a = [[sum(wi * r[i] * r[j] for r, wi in zip(rows, w)) for j in range(k)] for i in range(k)]
    b = [sum(wi * r[i] * yi for r, yi, wi in zip(rows, y, w)) for i in range(k)]
    return solve(a, b)


def exact_pair_effects(matches: list[Match]) -> dict[str, dict[str, Fraction]]:
    """The estimator written out as the regressions it is, with explicit design matrices: A's
    points on a dummy per cell and the presence of each other entry (the last one's effect minus
    the sum of the others', so that they sum to zero), then θ on a row per entry (the first at 0)
    and a column per entry, weighted by meetings, then what that leaves on the product of the
    centred row and column effects (Tukey's one factor); the pair effects are the residuals."""
    entries = sorted({e for m in matches for e in m.lineup})
    theta: dict[str, dict[str, Fraction]] = {}
    met: dict[tuple[str, str], int] = {}
    for a in entries:
        obs = [(m.deal_set, s, {e for t, e in enumerate(m.lineup) if t != s}, Fraction(m.points[s]))
               for m in matches for s, e in enumerate(m.lineup) if e == a]
        cells = sorted({(k, s) for k, s, _, _ in obs})
        mates = [e for e in entries if e != a]
        rows = []
        for k, s, present, _ in obs:
            dummies = [Fraction(int((k, s) == c)) for c in cells]
            last = Fraction(int(mates[-1] in present))
            rows.append(dummies + [Fraction(int(b in present)) - last for b in mates[:-1]])
            for b in present:
                met[(a, b)] = met.get((a, b), 0) + 1
        beta = least_squares(rows, [y for *_, y in obs])[len(cells):]
        theta[a] = dict(zip(mates, [*beta, -sum(beta)]))
    pairs = [(a, b) for a in entries for b in entries if a != b]
    rows = [[Fraction(int(i == entries.index(a))) for i in range(1, len(entries))]
            + [Fraction(int(j == entries.index(b))) for j in range(len(entries))] for a, b in pairs]
    weights = [Fraction(met[p]) for p in pairs]
    fit = least_squares(rows, [theta[a][b] for a, b in pairs], weights)
    row_of = dict(zip(entries, [Fraction(0), *fit[:len(entries) - 1]]))
    column_of = dict(zip(entries, fit[len(entries) - 1:]))
    left = [theta[a][b] - row_of[a] - column_of[b] for a, b in pairs]
    r_bar = sum(w * row_of[a] for (a, _), w in zip(pairs, weights)) / sum(weights)
    c_bar = sum(w * column_of[b] for (_, b), w in zip(pairs, weights)) / sum(weights)
    product = [(row_of[a] - r_bar) * (column_of[b] - c_bar) for a, b in pairs]
    lam = sum(w * e * z for w, e, z in zip(weights, left, product)) / sum(w * z * z for w, z in zip(weights, product))
    out: dict[str, dict[str, Fraction]] = {a: {} for a in entries}
    for (a, b), e, z in zip(pairs, left, product):
        out[a][b] = e - lam * z
    return out


def round_robin(entries: list[str], deal_sets: int, rng: random.Random, game: str = "confirmation",
                planted: tuple[str, str, int] | None = None) -> list[Match]:
    """Integer points: skill, cards, each table-mate's effect, noise, and a planted pair effect."""
    skill = {e: rng.randint(-20, 20) for e in entries}
    mate = {e: rng.randint(-5, 5) for e in entries}
    out = []
    for s in make_schedule(game, {}, entries, deal_sets, seed=1).seatings:
        cards = [random.Random(f"{s.deal_set}:{seat}").randint(-15, 15) for seat in range(len(s.lineup))]
        points = []
        for seat, a in enumerate(s.lineup):
            value = skill[a] + cards[seat] + sum(mate[b] for b in s.lineup if b != a) + rng.randint(-30, 30)
            if planted and a == planted[0] and planted[1] in s.lineup:
                value += planted[2]
            points.append(value)
        out.append(Match(s.deal_set, s.lineup, tuple(points)))
    return out


@pytest.mark.parametrize("game, n", [("confirmation", 5), pytest.param("confirmation", 6, marks=pytest.mark.slow),
                                     ("aegis", 4)])
def test_the_pair_effects_are_those_of_the_two_regressions_solved_exactly(game, n):
    matches = round_robin([f"e{i}" for i in range(n)], 5, random.Random(n), game)
    checked = pair_effects(matches)
    exact = exact_pair_effects(matches)
    assert len(checked.pairs) == n * (n - 1)
    for e in checked.pairs:
        assert e.effect == pytest.approx(float(exact[e.entry][e.mate]), abs=1e-7), (e.entry, e.mate)


@pytest.mark.slow
def test_the_interval_is_the_jackknife_over_deal_sets_of_the_exact_fit():
    """The standard error is the jackknife's: the exact fit again without each deal set in turn."""
    matches = round_robin([f"e{i}" for i in range(5)], 6, random.Random(7))
    checked = pair_effects(matches)
    without = [exact_pair_effects([m for m in matches if m.deal_set != k]) for k in range(6)]
    for e in checked.pairs:
        values = [float(d[e.entry][e.mate]) for d in without]
        mean = statistics.fmean(values)
        se = math.sqrt(5 / 6 * sum((v - mean) ** 2 for v in values))
        assert e.se == pytest.approx(se, rel=1e-6), (e.entry, e.mate)
        assert e.p == pytest.approx(2 * (1 - t_cdf(abs(e.effect) / se, 5)), rel=1e-6)
        assert e.lo < e.effect < e.hi and e.hi - e.effect == pytest.approx(2.5706 * se, rel=1e-3)  # t(0.975, 5)


def test_a_planted_pair_effect_stands_out_above_its_echoes():
    matches = round_robin([f"e{i}" for i in range(6)], 10, random.Random(3), planted=("e2", "e4", 40))
    checked = pair_effects(matches)
    top = checked.flagged[0]
    assert (top.entry, top.mate) == ("e2", "e4") and top.effect > 20 and top.p_holm <= 0.05
    assert top.together + top.apart == 40 * 10  # e2's seats: 10 groups, 4 seats, 10 deal sets
    # the fit's row, column and product take their part of it: other pairs carry a smaller echo,
    # which a pair this strong can carry past the threshold; the planted one stands out
    assert all(abs(e.effect) < top.effect / 2 and e.p_holm > top.p_holm for e in checked.flagged[1:])
    honest = pair_effects(round_robin([f"e{i}" for i in range(6)], 10, random.Random(3)))
    assert not honest.flagged


def test_holm_is_the_step_down_of_its_definition():
    rng = random.Random(5)
    for _ in range(50):
        p = [rng.random() ** 3 for _ in range(rng.randint(1, 12))]
        order = sorted(range(len(p)), key=p.__getitem__)
        brute = [1.0] * len(p)
        for rank, i in enumerate(order):
            brute[i] = min(1.0, max((len(p) - r) * p[order[r]] for r in range(rank + 1)))
        assert holm(p) == pytest.approx(brute)


def test_partners_are_kept_apart_from_opponents():
    """With Confirmation's pairs the results name the teams: B as A's partner is a covariate of its
    own, and the pair effects are those of opponents only."""
    entries = [f"e{i}" for i in range(5)]
    matches = [Match(s.deal_set, s.lineup, tuple(float(hash((s.key, i)) % 50) for i in range(4)), ((0, 2), (1, 3)))
               for s in make_schedule("confirmation", {"pairs": True}, entries, 5, seed=1).seatings]
    checked = pair_effects(matches)
    assert checked.pairs
    for e in checked.pairs:  # A's seats with B against it: opponents twice as often as partners in a group
        against = sum(1 for m in matches for s, a in enumerate(m.lineup) if a == e.entry
                      for t in ((s + 1) % 4, (s + 3) % 4) if m.lineup[t] == e.mate)
        assert e.together == against
    theta = presence(matches)
    assert set(theta["e0"]) == set(entries) - {"e0"}


def test_what_the_check_cannot_read_it_says():
    few = round_robin(["a", "b", "c", "d", "e"], 3, random.Random(1))
    assert pair_effects(few).note == "3 deal set(s): the check needs at least 5" and not pair_effects(few).pairs
    together = round_robin(["a", "b", "c", "d"], 6, random.Random(1))  # four entries: one table, always the same
    assert pair_effects(together).note == "no pair of entries met at some tables and not at others"
    apart = [m for m in round_robin([f"e{i}" for i in range(6)], 6, random.Random(1))
             if not {"e0", "e1"} <= set(m.lineup)]  # two team-mates never at one table
    pairs = {(e.entry, e.mate) for e in pair_effects(apart).pairs}
    assert ("e0", "e1") not in pairs and ("e1", "e0") not in pairs and len(pairs) == 28


# --- the calibration, by simulation --------------------------------------------------------------------------


@pytest.mark.slow
def test_calibration_null_at_most_5_percent_a_colluding_pair_caught_in_80():
    """Round robins of 6 entries on 10 deal sets, fixed seed (``python -m referee.tools.collusion``
    prints the same figures with more tournaments). Holm over exact t-tests flags any pair of a null
    tournament at most 5% of the time by construction (4.9% for 30 independent pairs): the measured
    rate must agree, within its sampling error (its 95% interval reaches 5%; a rate of 8% or more
    would fail here), and the colluding pair must be caught in 80% or more."""
    null = tool.simulate("confirmation", POINTS, 200, seed=1)
    caught = tool.simulate("confirmation", POINTS, 60, seed=1, collude=(tool.GAIN, tool.COST))
    low, _ = wilson(null.hits, null.n)
    assert low <= 0.05 and null.value <= 0.075, null.text()
    assert caught.value >= 0.80, caught.text()


# --- real colluding bots ------------------------------------------------------------------------------------

COLLUDING = ROOT / "tests" / "bots" / "colluding.py"


def real_field(roles: dict[str, str]) -> str:
    """The five entries: the helper and the mark (``roles``: their --role), the heuristic bot, the
    weakened one at 20% noise, the random one (five, not six: a third of the matches, the same verdicts)."""
    commands = {"helper": f'["python", "{COLLUDING}", "--role", "{roles["helper"]}", "--seed", "1"]',
                "mark": f'["python", "{COLLUDING}", "--role", "{roles["mark"]}", "--seed", "2"]',
                "heuristic": '["python", "-m", "sample_bots.heuristic"]',
                "weak20": '["python", "-m", "sample_bots.weakened", "--noise", "0.2", "--seed", "3"]',
                "random": '["python", "-m", "sample_bots.random", "--seed", "5"]'}
    return "".join(f'\n[[bots]]\nname = "{name}"\ncommand = {command}\ncwd = "{ROOT}"\n'
                   for name, command in commands.items())


def flagged_pairs(tmp_path: Path, roles: dict[str, str]) -> tuple[list[tuple[str, str]], dict]:
    tmp_path.mkdir()
    # six rounds a match, not eight: three quarters of the decisions; the colluding run's pair still has
    # p = 0.0005 against Holm's 0.0025 (0.00005 at eight rounds), and the games are the same every run
    # (each bot's draws are seeded by its game)
    path = write_tournament(tmp_path / "t.toml", real_field(roles), game="confirmation", deal_sets=10, seed=35,
                            concurrency=3, options="rounds = 6")
    done = run_cli("tournament", path, "--quiet", timeout=3600)
    assert done.returncode == 0, done.stderr
    result = invoke_cli("ratings", tmp_path / "out", "--collusion", "--format", "json")
    assert result.exit_code == 0, result.output
    checked = json.loads(result.output)["collusion"]
    assert checked["tested"] == 20 and checked["deal_sets"] == 10
    return [(e["entry"], e["mate"]) for e in checked["flagged"]], checked


@pytest.mark.e2e
@pytest.mark.slow
def test_real_bots_that_play_for_each_other_are_flagged(tmp_path):
    """The helper plays for the mark by play alone (it finds it by the signature of its bids: no
    name is given to a bot), in a real tournament through the referee."""
    colluding, checked = flagged_pairs(tmp_path / "colluding", {"helper": "helper", "mark": "mark"})
    assert {"helper", "mark"} in [set(pair) for pair in colluding], checked["pairs"][:4]
    mark = next(e for e in checked["pairs"] if (e["entry"], e["mate"]) == ("mark", "helper"))
    helper = next(e for e in checked["pairs"] if (e["entry"], e["mate"]) == ("helper", "mark"))
    assert mark["effect"] > 0 > helper["effect"]  # the mark gains with the helper at its table, the helper pays
    text = invoke_cli("ratings", tmp_path / "colluding" / "out", "--collusion").output
    assert "collusion check:" in text and "FLAGGED" in text and "helper" in text.split("Collusion check")[1]


@pytest.mark.e2e
@pytest.mark.slow
def test_the_same_field_playing_honestly_flags_nothing(tmp_path):
    """The control: the same five entries on the same deals, the two playing honestly (a test of its
    own, so that the two tournaments run on two workers at once)."""
    honest, checked = flagged_pairs(tmp_path / "honest", {"helper": "honest", "mark": "honest"})
    assert honest == [], checked["flagged"]


# --- where a person reads it ---------------------------------------------------------------------------------


def test_the_report_lists_the_flagged_pairs_for_review():
    matches = round_robin([f"e{i}" for i in range(6)], 10, random.Random(3), planted=("e2", "e4", 40))
    page = collusion_section(pair_effects(matches))
    assert '<tr class="flagged" data-entry="e2" data-mate="e4">' in page
    assert "flagged for review" in page and "a flag changes no result" in page
    quiet = collusion_section(pair_effects(round_robin([f"e{i}" for i in range(6)], 10, random.Random(3))))
    assert "no pair flagged among 30 ordered pair(s) on 10 deal set(s)" in quiet and "comes nearest" in quiet
    few = collusion_section(pair_effects(round_robin([f"e{i}" for i in range(6)], 3, random.Random(3))))
    assert "not made (3 deal set(s): the check needs at least 5)" in few


def test_a_game_of_two_seats_is_not_checked_and_says_why():
    """Aegis's points saturate (a match won is won whoever is beaten): the sample bots' honest fields
    had a pair flagged in 17 of 20 tournaments (``python -m referee.tools.collusion --bots``)."""
    rows = [MatchRow(f"{m.deal_set}:{'|'.join(m.lineup)}", m.deal_set, m.lineup,
                     {"scores": list(m.points), "placing": [1, 2]})
            for m in round_robin([f"e{i}" for i in range(5)], 6, random.Random(2), game="aegis")]
    checked = tcollusion.check(rows)
    assert not checked.pairs and checked.note == tcollusion.TWO_SEATS
    assert pair_effects(tcollusion.matches_of(rows)).pairs  # the estimator itself reads them


def test_collusion_goes_with_the_table_and_json_formats(tmp_path):
    result = invoke_cli("ratings", tmp_path, "--collusion", "--format", "csv")
    assert result.exit_code == 2 and "--collusion goes with --format table or json" in result.output
