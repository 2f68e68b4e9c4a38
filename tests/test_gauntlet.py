"""The gauntlet: its file, its schedule (only the candidate's matches, duplicate deal sets),
the candidate-against-each-baseline table, a real run through the CLI, and the verdict for CI
(exit code 1 when the candidate is worse at the chosen confidence)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from harness import ROOT, run_cli, sample_bots, write_tournament

from referee.cli.exits import ExitCode
from referee.competition import gauntlet
from referee.competition import gauntlet as G
from referee.model import ConfigError, deal_seed
from referee.results.store import MatchRow


def write(tmp: Path, game="aegis", bots=("cand", "r1", "r2"), gauntlet='candidate = "cand"', options="",
          deal_sets=2, extra="") -> Path:
    text = f"\n[gauntlet]\n{gauntlet}\n"
    for i, name in enumerate(bots):
        command = "python -m sample_bots.heuristic" if name == "cand" else f"python -m sample_bots.random --seed {i}"
        text += f'\n[[bots]]\nname = "{name}"\ncommand = "{command}"\ncwd = "{ROOT}"\n'
    return write_tournament(tmp / "g.toml", text, game=game, deal_sets=deal_sets, seed=11, concurrency=2,
                            extra=extra, options=options)


# --- the schedule ------------------------------------------------------------------------------


def test_aegis_schedule_pairs_the_candidate_with_each_baseline_seats_swapped(tmp_path):
    cfg = G.load(write(tmp_path, bots=("cand", "r1", "r2", "r3"), deal_sets=3))
    schedule = G.make_schedule(cfg)
    assert cfg.baselines == ["r1", "r2", "r3"]
    assert len(schedule.seatings) == 3 * 3 * 2
    assert all("cand" in s.lineup for s in schedule.seatings)
    lineups = Counter(s.lineup for s in schedule.seatings)
    assert lineups == {(c, b) if first else (b, c): 3 for b in ("r1", "r2", "r3") for c in ["cand"]
                       for first in (True, False)}
    for s in schedule.seatings:
        assert s.seed == deal_seed(11, s.deal_set)
    assert len({s.key for s in schedule.seatings}) == len(schedule.seatings)


def test_confirmation_duel_and_pairs(tmp_path):
    cfg = G.load(write(tmp_path, game="confirmation", options="rounds = 1"))
    lineups = {s.lineup for s in G.make_schedule(cfg).seatings}
    assert lineups == {("cand", "r1", "cand", "r1"), ("r1", "cand", "r1", "cand"),
                       ("cand", "r2", "cand", "r2"), ("r2", "cand", "r2", "cand")}
    pairs = G.load(write(tmp_path, game="confirmation", options="rounds = 1\npairs = true"))
    schedule = G.make_schedule(pairs)
    assert {s.lineup for s in schedule.seatings} == lineups  # each partnered with its own copy
    assert len(schedule.seatings) == 2 * 2 * 2  # deal sets x baselines x rotations of A B A B


def test_confirmation_field_and_its_balanced_subset(tmp_path):
    bots = ("cand", "r1", "r2", "r3", "r4")
    cfg = G.load(write(tmp_path, game="confirmation", bots=bots, gauntlet='candidate = "cand"\nlineup = "field"'))
    schedule = G.make_schedule(cfg)
    assert len(schedule.groups) == 4 and all(g[0] == "cand" for g in schedule.groups)
    assert len(schedule.seatings) == 2 * 4 * 4
    assert all(s.lineup.count("cand") == 1 for s in schedule.seatings)
    many = ("cand", "r1", "r2", "r3", "r4", "r5", "r6")
    capped = G.load(write(tmp_path, game="confirmation", bots=many, extra="max_groups = 6",
                          gauntlet='candidate = "cand"\nlineup = "field"'))
    schedule = G.make_schedule(capped)
    assert len(schedule.groups) == 6 and "balanced subset" in schedule.note
    appearances = Counter(b for g in schedule.groups for b in g[1:])
    assert set(appearances) == set(many[1:]) and max(appearances.values()) - min(appearances.values()) <= 1


@pytest.mark.parametrize("kwargs, message", [
    ({"gauntlet": 'candidate = "cand"\nrounds = 3'}, r"g.toml:15: unknown key 'rounds' in \[gauntlet\]"),
    ({"gauntlet": 'candidate = "nobody"'}, r"g.toml:14: gauntlet.candidate must name one of the bots"),
    ({"gauntlet": 'candidate = "cand"\nlineup = "mob"'}, r"g.toml:15: gauntlet.lineup must be one of duel, field"),
    ({"gauntlet": 'candidate = "cand"\nlineup = "field"'}, r"g.toml:15: .*for Confirmation only"),
    ({"game": "confirmation", "gauntlet": 'candidate = "cand"\nlineup = "field"'}, r"needs at least three baselines"),
    ({"gauntlet": ""}, r"missing \[gauntlet\] table"),
    ({"extra": "deal_sets_ = 3"}, r"g.toml:8: unknown key 'deal_sets_' in \[tournament\]"),
])
def test_gauntlet_file_errors_name_the_line_and_the_reason(tmp_path, kwargs, message, invoke):
    path = write(tmp_path, **kwargs)
    if kwargs.get("gauntlet") == "":
        path.write_text(path.read_text().replace("[gauntlet]", ""))
    with pytest.raises(ConfigError, match=message):
        G.load(path)
    result = invoke("gauntlet", str(path))
    assert result.exit_code == 2 and "Error:" in result.output


# --- the candidate against each baseline ---------------------------------------------------


def test_versus_gives_the_head_to_head_elo_difference():
    rows = []
    for k in range(10):  # cand beats a 3 times in 4, draws b... on Aegis placings
        rows.append(MatchRow(f"{k}:cand|a", k, ("cand", "a"), {"scores": [10, 5], "placing": [1, 2]}))
        rows.append(MatchRow(f"{k}:a|cand", k, ("a", "cand"),
                             {"scores": [10, 5], "placing": [1, 2] if k % 2 else [2, 1]}))
        rows.append(MatchRow(f"{k}:cand|b", k, ("cand", "b"), {"scores": [5, 10], "placing": [2, 1]}))
        rows.append(MatchRow(f"{k}:b|cand", k, ("b", "cand"), {"scores": [6, 6], "placing": [2, 1]}))
    table = {v.baseline: v for v in G.versus("aegis", rows, "cand", bootstrap=200)}
    a, b = table["a"], table["b"]
    assert (a.wins, a.draws, a.losses, a.matches) == (15, 0, 5, 20) and a.elo > 100 and a.los > 0.95
    assert (b.wins, b.losses) == (10, 10) and abs(b.elo) < 1 and b.points_diff == pytest.approx(-2.5)
    assert a.lo < a.elo < a.hi
    assert "Elo cand -" in G.versus_table("cand", list(table.values()))


def test_the_verdict_reads_the_one_sided_bound_it_prints():
    """Issue 34, item 6: -106 ± 123 (a 95% interval holding 0) failed the candidate, while the docs
    said such a result is no failure: the verdict is a one-sided test (did the candidate get worse?),
    the table a two-sided interval. Now the table and the verdict print the one-sided bound the
    verdict reads, in text, JSON and Markdown alike: 14-28 on 10 deal sets, Elo -119 [-246, +5],
    is below -18 at 95% one-sided: worse."""
    rows = []
    for k in range(42):  # 14 wins of the candidate, 28 losses, the seats alternating, over 10 deal sets
        lineup = ("mine", "base") if k % 2 else ("base", "mine")
        won = k < 14
        placing = [1, 2] if (lineup[0] == "mine") == won else [2, 1]
        rows.append(MatchRow(f"{k % 10}:{'|'.join(lineup)}#{k}", k % 10, lineup,
                             {"scores": [10 if p == 1 else 3 for p in placing], "placing": placing}))
    (v,) = G.versus("aegis", rows, "mine", bootstrap=100)
    assert (v.wins, v.losses) == (14, 28) and v.lo < 0 < v.hi  # the two-sided interval holds 0...
    verdict = G.verdict("mine", [v], 0.95)
    assert verdict.worse == ["base"]  # ...and the one-sided test fails the candidate: the verdict says by what
    said = re.search(rf"\(Elo -119, at most ([-+]\d+) at 95% one-sided; LOS {100 * v.los:.1f}%\)", verdict.text)
    assert said, verdict.text
    bound = said[1]
    assert v.los < 0.05 and v.upper < 0 and bound == f"{round(v.upper):+d}"
    table = G.versus_table("mine", [v], 0.95)
    header, _, line = table.splitlines()
    assert "one-sided 95%" in header and re.split(r"\s{2,}", line.strip())[7] == bound
    assert G.versus_json(v)["upper"] == v.upper
    markdown = G.markdown("aegis", "mine", [v], verdict)
    assert "**a failed check: worse than `base`**" in markdown and re.search(rf"\|\s+{bound} \|", markdown)
    assert verdict.text in markdown
    # at 99% it is no failure, and the verdict shows the bound that says so
    lenient = G.versus("aegis", rows, "mine", bootstrap=100, confidence=0.99)
    assert lenient[0].upper > 0
    assert G.verdict("mine", lenient, 0.99).text.startswith(
        f"mine is worse than no baseline at 99% confidence: every one-sided upper bound is above 0 (the lowest: "
        f"base, Elo -119, at most {round(lenient[0].upper):+d} at 99% one-sided")


# --- a real run ---------------------------------------------------------------------------------


@pytest.mark.e2e
def test_gauntlet_runs_stores_and_resumes(tmp_path):
    path = write(tmp_path, game="confirmation", options="rounds = 1")
    done = run_cli("gauntlet", path, "--quiet", "--bootstrap", "100")
    assert done.returncode == 0, done.stderr
    assert "cand against each baseline" in done.stdout and "Head to head" in done.stdout
    assert "played 8 match(es) now, 8 in all" in done.stderr
    as_json = json.loads(run_cli("gauntlet", path, "--quiet", "--bootstrap", "100", "--format", "json").stdout)
    assert as_json["candidate"] == "cand" and {v["baseline"] for v in as_json["versus"]} == {"r1", "r2"}
    assert as_json["matches"] == 8
    # the stored results read like a tournament's
    ratings = run_cli("ratings", tmp_path / "out", "--format", "json", "--bootstrap", "0")
    assert ratings.returncode == 0 and json.loads(ratings.stdout)["matches"] == 8
    # the same directory with another candidate is refused
    path.write_text(path.read_text().replace('candidate = "cand"', 'candidate = "r1"'))
    refused = run_cli("gauntlet", path, "--quiet")
    assert refused.returncode == 2 and "another tournament configuration (changed: gauntlet)" in refused.stderr


# --- the verdict for CI --------------------------------------------------------------------------

BOTS = sample_bots(random="python -m sample_bots.random --seed 1", heuristic="python -m sample_bots.heuristic")


def test_the_gauntlet_verdict_fails_a_candidate_worse_at_the_chosen_confidence():
    def versus(baseline: str, elo: float, lo: float, hi: float, los: float | None,
               upper: float | None) -> gauntlet.Versus:
        return gauntlet.Versus(baseline, 10, 10, 2, 0, 8, 20.0, elo, lo, hi, (hi - lo) / 2, los, -3.0, None, upper)

    rows = [versus("heuristic", -120.0, -250.0, -10.0, 0.01, -31.0), versus("random", -20.0, -150.0, 110.0, 0.3, 90.0),
            versus("search", -120.0, -250.0, -10.0, None, None)]
    verdict = gauntlet.verdict("mine", rows, 0.95)
    assert verdict.worse == ["heuristic"]
    assert verdict.text == ("mine is worse than heuristic (Elo -120, at most -31 at 95% one-sided; LOS 1.0%) at 95% "
                            "confidence: a failed check (exit code 1); not judged (no LOS: --bootstrap 0 or no "
                            "result): search")
    assert gauntlet.verdict("mine", rows[1:2], 0.95).text == (
        "mine is worse than no baseline at 95% confidence: every one-sided upper bound is above 0 (the lowest: "
        "random, Elo -20, at most +90 at 95% one-sided; LOS 30.0%)")


@pytest.mark.e2e
def test_a_gauntlet_exits_1_when_the_candidate_is_worse(tmp_path):
    path = write_tournament(tmp_path / "g.toml", BOTS + '\n[gauntlet]\ncandidate = "random"\n', game="aegis",
                            deal_sets=5, seed=2, concurrency=2)
    worse = run_cli("gauntlet", path, "--quiet", "--bootstrap", "200")
    assert worse.returncode == ExitCode.CHECK_FAILED, worse.stdout + worse.stderr
    assert re.search(r"verdict: random is worse than heuristic \((Elo [-<\d ]+, )?at most -\d+ at 95% one-sided; "
                     r"LOS \d+\.\d%\) at 95% confidence", worse.stdout), worse.stdout
    lenient = run_cli("gauntlet", path, "--quiet", "--bootstrap", "200", "--confidence", "0.9999")
    assert lenient.returncode == 0, lenient.stdout
    assert "verdict: random is worse than no baseline at 99.99% confidence" in lenient.stdout
