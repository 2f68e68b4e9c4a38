"""Adaptive scheduling (``schedule = "adaptive"``): the scheduler's choices (tables complete, the
fairness bound, new entries first, deterministic), the stopping rules, the configuration's errors,
and, with real bot processes, a tournament of the sample bots that stops by its rule and says why,
resumed after an interruption and grown by a late entry."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path

import pytest
from harness import ROOT, run_cli

from referee import model
from referee.cli.exits import ExitCode
from referee.competition import adaptive
from referee.competition.adaptive import Game, below_bound, matches_played, next_tables, verdict
from referee.competition.config import parse, read
from referee.competition.schedule import rotations
from referee.model import ConfigError, Round, Rule
from referee.results import rounds as stored
from referee.results import standings
from referee.results.store import MatchRow, MetaKey, Store
from referee.stats.ratings import PairResult, rank_posterior
from referee.stats.simulation import PROJECT, simulate_tournament
from referee.tools import scheduling
from referee.view.report import standings_table

AEGIS = Game.of("aegis", {})
CONFIRMATION = Game.of("confirmation", {})
PAIRS = Game.of("confirmation", {"pairs": True})


def names(n: int) -> list[str]:
    return [f"e{i}" for i in range(n)]


def simulate(game: Game, entries: list[str], rounds: int, rule: Rule = Rule(), seed: int = 1,
             true: dict[str, float] | None = None, history: list[Round] | None = None,
             outcomes: list | None = None) -> tuple[list[Round], list]:
    """``rounds`` deal sets chosen by the scheduler, their results simulated (bots 60 Elo apart)."""
    true = true or {name: 1500.0 - 60.0 * i for i, name in enumerate(entries)}
    history = list(history or [])
    outcomes = list(outcomes or [])
    rng = random.Random(seed)
    for _ in range(rounds):
        posterior = rank_posterior(outcomes) if outcomes else None
        tables = next_tables(game, entries, history, posterior, rule, seed)
        lineups = [lineup for table in tables for lineup in game.lineups(table)]
        outcomes += simulate_tournament(true, lineups, 1, rng, first=len(history), **PROJECT)
        history.append(Round(len(history), tables))
    return history, outcomes


# --- the scheduler's choices ---------------------------------------------------------------------


@pytest.mark.parametrize("game, n, size", [(AEGIS, 5, 2), (CONFIRMATION, 6, 4), (CONFIRMATION, 3, 3)])
def test_a_table_plays_its_deal_set_in_every_line_up_and_rotation(game, n, size):
    rounds, _ = simulate(game, names(n), 4)
    seatings = adaptive.seatings_of(game, rounds, names(n), seed=7)
    for r in rounds:
        assert r.tables
        for table in r.tables:
            assert len(set(table)) == size
            played = {s.lineup for s in seatings if s.deal_set == r.deal_set and set(s.lineup) == set(table)}
            expected = {rot for base in game.seat_groups(table) for rot in rotations(base)}
            assert played == expected  # the twins (Aegis: seats swapped), the rotations (Confirmation: four)
    assert len({s.key for s in seatings}) == len(seatings)


def test_pairs_tables_play_their_three_partnerships_in_four_rotations():
    rounds, _ = simulate(PAIRS, names(5), 2)
    table = rounds[0].tables[0]
    assert len(PAIRS.lineups(table)) == 12


@pytest.mark.parametrize("game, n", [(AEGIS, 3), (AEGIS, 6), (AEGIS, 9), (CONFIRMATION, 5), (CONFIRMATION, 8)])
def test_every_entry_stays_within_the_fairness_bound_after_every_deal_set(game, n):
    entries = names(n)
    true = {name: 1500.0 + 400.0 * (i == 0) - 40.0 * i for i, name in enumerate(entries)}  # e0 far ahead
    rounds, _ = simulate(game, entries, 25, true=true)
    history = matches_played(game, rounds, entries)
    for k in range(1, len(history) + 1):
        assert below_bound(entries, history[:k]) == [], k
    shares = adaptive.shares(entries, history)
    assert min(shares.values()) >= model.FAIRNESS
    # and it is adaptive: not every table of a round robin plays every deal set
    assert sum(len(r.tables) for r in rounds) < 25 * len(list(game_tables(game, entries)))


def game_tables(game: Game, entries: list[str]):
    import itertools

    return itertools.combinations(entries, game.table_size(len(entries)))


def test_the_bound_would_catch_an_entry_left_out():
    history = [{"a": 2, "b": 4, "c": 2}, {"b": 2, "c": 2}, {"b": 2, "c": 2}]
    assert below_bound(["a", "b", "c"], history) == ["a"]  # a: 2 of b's 8


def test_the_tables_go_where_the_order_is_uncertain():
    """Two close entries in a field spread wide: once the rest is settled, the deal sets go to them."""
    entries = names(6)
    true = {"e0": 2700.0, "e1": 2100.0, "e2": 1500.0, "e3": 1480.0, "e4": 900.0, "e5": 300.0}
    rounds, outcomes = simulate(AEGIS, entries, 12, true=true)
    posterior = rank_posterior(outcomes)
    tables = next_tables(AEGIS, entries, rounds, posterior, Rule(), 1)
    assert ("e2", "e3") in tables
    late = [t for r in rounds[6:] for t in r.tables]
    assert late.count(("e2", "e3")) >= 5  # played on nearly every deal set
    played = matches_played(AEGIS, rounds[6:], entries)
    most = max(sum(c[n] for c in played) for n in entries)
    assert sum(c["e0"] for c in played) <= 0.6 * most  # the settled top rests as far as the bound lets it


def test_a_new_entry_plays_first():
    entries = names(6)
    rounds, outcomes = simulate(AEGIS, entries, 6)
    grown = [*entries, "late"]
    posterior = rank_posterior(outcomes)
    tables = next_tables(AEGIS, grown, rounds, posterior, Rule(), 1)
    assert "late" in tables[0]
    # and it keeps within the bound from then on, counted from its first deal set
    more, _ = simulate(AEGIS, grown, 6, history=rounds, outcomes=outcomes)
    history = matches_played(AEGIS, more, grown)
    for k in range(7, len(history) + 1):
        assert below_bound(grown, history[:k]) == []


def test_the_choices_are_a_function_of_the_seed_and_the_results():
    entries = names(7)
    first, out1 = simulate(AEGIS, entries, 8, seed=3)
    again, out2 = simulate(AEGIS, entries, 8, seed=3)
    assert first == again and out1 == out2
    other, _ = simulate(AEGIS, entries, 1, seed=4)
    assert other[0] != first[0]  # the warm-up's order comes from the seed


# --- the stopping rules --------------------------------------------------------------------------


def sweeps(deal_sets: int, order: list[str]) -> list[PairResult]:
    """Each entry beats every entry below it, twice a deal set, with one loss in three deal sets."""
    out = []
    for d in range(deal_sets):
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                out += [PairResult(d, a, b, 1.0), PairResult(d, a, b, 0.0 if d % 3 == 0 else 1.0)]
    return out


def test_order_stops_when_every_adjacent_pair_is_ordered_and_says_so():
    posterior = rank_posterior(sweeps(40, ["a", "b", "c"]))
    stop = verdict(Rule(), posterior, ["a", "b", "c"], 40, 120)
    assert stop is not None and stop.settled and stop.rule == "order"
    assert [(c.a, c.b, c.verdict) for c in stop.pairs] == [("a", "b", "above"), ("b", "c", "above")]
    assert all(0 < c.lo < c.elo and c.hi is None for c in stop.pairs)
    assert stop.text.startswith("stopped by its rule (stop = order) after 40 deal set(s), 120 match(es): every "
                                "adjacent pair ordered or within ±75 Elo (at 95% for all its pairs at once, over "
                                "every look): a above b (> +")
    assert model.Stop.from_json(json.loads(json.dumps(stop.to_json()))) == stop


def test_order_plays_on_when_a_pair_is_not_ordered_and_stops_at_the_cap():
    results = sweeps(6, ["a", "b", "c"]) + [PairResult(d, "b", "c", 0.0) for d in range(6) for _ in range(3)]
    posterior = rank_posterior(results)
    assert verdict(Rule(), posterior, ["a", "b", "c"], 6, 36) is None
    capped = verdict(Rule(max_deal_sets=6), posterior, ["a", "b", "c"], 6, 36)
    assert capped is not None and not capped.settled and capped.rule == "max_deal_sets"
    assert adaptive.inconclusive(capped)
    assert "stopped at max_deal_sets = 6 after 6 deal set(s), 36 match(es), the rule not met" in capped.text
    assert "open [" in capped.text


def even(deal_sets: int, a: str, b: str, games: int = 4) -> list[PairResult]:
    """``a`` and ``b`` share every deal set's games: a copy of a bot, as duplicate play shows it."""
    return [PairResult(d, a, b, float(g % 2)) for d in range(deal_sets) for g in range(games)]


def test_equal_entries_end_a_run_within_the_margin():
    """Two entries that split every deal set are never ordered: the old rule ran them to the cap. The
    rule settles them once their difference is shown within ±tie_elo, and says so; with no margin
    (tie_elo = 0) it still plays on."""
    def table(deal_sets: int) -> list[PairResult]:
        return sweeps(deal_sets, ["a", "b"]) + [r._replace(b="c") for r in sweeps(deal_sets, ["a", "b"])] + \
            even(deal_sets, "b", "c")

    early = rank_posterior(table(20))
    assert verdict(Rule(), early, ["a", "b", "c"], 20, 120) is None  # not yet shown within ±75
    posterior = rank_posterior(table(80))
    stop = verdict(Rule(), posterior, ["a", "b", "c"], 80, 480)
    assert stop is not None and stop.settled
    tied = stop.claim("c", "b")
    assert tied.verdict == "within" and -75 < tied.lo < tied.elo < tied.hi < 75
    assert "within ±75 Elo [" in stop.text and stop.to_json()["pairs"][1]["shown"] == "within ±75 Elo"
    assert verdict(Rule(tie_elo=0.0), posterior, ["a", "b", "c"], 80, 480) is None
    wide = verdict(Rule(tie_elo=150.0), early, ["a", "b", "c"], 20, 120)  # a wider margin: sooner
    assert wide is not None and wide.claim("b", "c").verdict == "within"


def test_top_k_needs_the_top_k_and_what_is_below_them_not_the_rest():
    results = sweeps(60, ["a", "b", "c"]) + [r._replace(b="d") for r in sweeps(60, ["a", "b", "c"]) if r.b == "c"]
    results += [PairResult(d, "c", "d", s) for d in range(60) for s in (1.0, 0.0)]  # c and d: even
    posterior = rank_posterior(results)
    entries = ["a", "b", "c", "d"]
    assert verdict(Rule(), posterior, entries, 60, 240) is None
    stop = verdict(Rule.parse("top:2"), posterior, entries, 60, 240)
    assert stop is not None and stop.settled and stop.rule == "top:2"
    assert {(c.a, c.b) for c in stop.pairs} == {("a", "b"), ("b", posterior.names[2]), ("b", posterior.names[3])}
    assert all(c.verdict == "above" for c in stop.pairs)
    assert "the top 2 and their order ordered or within ±75 Elo" in stop.text


def test_an_entry_without_results_is_never_settled():
    posterior = rank_posterior(sweeps(40, ["a", "b"]))
    assert verdict(Rule(), posterior, ["a", "b"], 40, 80) is not None
    assert verdict(Rule(), posterior, ["a", "b", "new"], 40, 80) is None
    assert verdict(Rule(), None, ["a", "b"], 1, 2) is None


def test_a_stop_stored_before_verdicts_reads():
    """A results directory's stop of the earlier rule: pairs as [a, b, P(a above b)], and joint."""
    old = {"rule": "order", "settled": True, "deal_sets": 11, "matches": 42, "text": "stopped by its rule",
           "pairs": [["a", "b", 0.99], ["b", "c", 0.98]], "joint": None}
    stop = model.Stop.from_json(old)
    assert [(c.a, c.b, c.verdict, c.lo) for c in stop.pairs] == [("a", "b", "above", None), ("b", "c", "above", None)]


def test_the_rule_reads_order_and_top_k_only():
    assert Rule.parse("top:3").top == 3 and Rule.parse("order").top is None
    assert Rule.parse("order", 0.9, 30, 20.0) == Rule(None, 0.9, 30, 20.0) and Rule().tie_elo == 75.0
    for bad in ("top", "top:0", "top:x", "best", "top:-1"):
        with pytest.raises(model.RuleError):
            Rule.parse(bad)


def test_the_tables_say_what_the_rule_said_of_each_line_and_the_next():
    """A round robin's table is as it was (no column); a stopped adaptive tournament's has one more,
    what its rule said of each line and the next: the bound an order proved, the margin a tie was
    shown within (either way round: the table may list two equal entries the other way), an open
    pair's bounds; the JSON and the report too."""
    rows = []
    for d in range(6):
        for first, second, winner in (("a", "b", "a"), ("b", "a", "a"), ("a", "c", "a"), ("c", "a", "a"),
                                      ("b", "c", "b"), ("c", "b", "b" if d % 2 else "c")):
            placing = [1, 2] if winner == first else [2, 1]
            rows.append(MatchRow(f"{d}:{first}|{second}", d, (first, second),
                                 {"scores": [3 - p for p in placing], "placing": placing, "faults": [{}, {}]}))
    st = standings.compute("aegis", rows, bootstrap=0)
    assert standings.CLAIM_HEADER not in standings.table(st) and "vs_next" not in standings.to_json(st)["standings"][0]
    assert "claim" not in standings_table(st)
    names = [line.name for line in st.lines]
    assert names[0] == "a"
    st.stopped = model.Stop("order", True, 6, 36, "stopped by its rule", (
        model.Claim("a", names[1], "above", 300.0, 120.4, None),
        model.Claim(names[2], names[1], "within", 2.0, -40.0, 44.0)), 75.0).to_json()
    table = standings.table(st)
    assert standings.CLAIM_HEADER in table
    cells = [line.rstrip().rsplit("  ", 1)[-1].strip() for line in table.splitlines()[2:]]
    assert cells == ["> +120", "-2 within ±75 Elo", "-"], cells
    data = standings.to_json(st)
    assert data["standings"][0]["vs_next"] == {"verdict": "above", "kind": "lower", "elo": "> +120", "interval": "-"}
    assert data["standings"][1]["vs_next"]["verdict"] == "within" and data["standings"][2]["vs_next"] is None
    page = standings_table(st)
    assert '<td class="claim" data-shown="within">-2 within ±75 Elo</td>' in page and "vs next (stop rule)" in page


# --- the configuration ---------------------------------------------------------------------------

BOTS = "\n".join(f'[[bots]]\nname = "{n}"\ncommand = "python x.py"\n' for n in ("a", "b", "c"))


def load_text(tmp_path: Path, tournament: str) -> object:
    path = tmp_path / "t.toml"
    path.write_text(f'[tournament]\ngame = "aegis"\n{tournament}\n\n{BOTS}')
    return parse(read(path))


def test_an_adaptive_file_reads():
    cfg = load_text(Path("/tmp"), 'schedule = "adaptive"\nstop = "top:2"\nconfidence = 0.9\nmax_deal_sets = 30')
    assert cfg.adaptive and cfg.rule == Rule(2, 0.9, 30, 75.0) and cfg.deal_sets == 30
    margin = load_text(Path("/tmp"), 'schedule = "adaptive"\ntie_elo = 20')
    assert margin.rule.tie_elo == 20.0 and margin.describe()["tie_elo"] == 20.0
    assert load_text(Path("/tmp"), 'schedule = "adaptive"\ntie_elo = 0').rule.tie_elo == 0.0
    assert json.loads(cfg.fingerprint())["schedule"] == "adaptive"
    plain = load_text(Path("/tmp"), "deal_sets = 4")
    assert not plain.adaptive and plain.deal_sets == 4


@pytest.mark.parametrize("lines, message", [
    ('schedule = "swiss"', "t.toml:3: tournament.schedule must be one of round-robin, adaptive, got 'swiss'"),
    ('stop = "order"', 'tournament.stop is for schedule = "adaptive"'),
    ('max_deal_sets = 9', 'tournament.max_deal_sets is for schedule = "adaptive"'),
    ('schedule = "adaptive"\ndeal_sets = 5', "t.toml:4: tournament.deal_sets is for a round robin"),
    ('schedule = "adaptive"\nstop = "best"', 'tournament.stop must be "order" or "top:K"'),
    ('schedule = "adaptive"\nstop = 3', 'tournament.stop must be "order" or "top:K" with K a whole number from 1, '
                                        'got 3'),
    ('schedule = "adaptive"\nstop = "top:3"', 'tournament.stop = "top:3" needs more than 3 entries in play'),
    ('schedule = "adaptive"\nconfidence = 95', "tournament.confidence must be a probability above 0.5 and below 1"),
    ('schedule = "adaptive"\nconfidence = "high"', "tournament.confidence must be a probability"),
    ('schedule = "adaptive"\nmax_deal_sets = 1', "tournament.max_deal_sets must be at least 2, got 1"),
    ('schedule = "adaptive"\ntie_elo = -5', "t.toml:4: tournament.tie_elo must be a number of Elo from 0"),
    ('schedule = "adaptive"\ntie_elo = "small"', "tournament.tie_elo must be a number of Elo from 0"),
    ('schedule = "adaptive"\ntie_elo = true', "tournament.tie_elo must be a number of Elo from 0"),
    ('tie_elo = 30', 'tournament.tie_elo is for schedule = "adaptive"'),
])
def test_config_errors_are_one_line(tmp_path, lines, message):
    with pytest.raises(ConfigError) as err:
        load_text(tmp_path, lines)
    text = str(err.value)
    assert message in text and "\n" not in text, text


def test_a_gauntlet_or_an_sprt_refuses_an_adaptive_schedule(tmp_path):
    from referee.competition import gauntlet
    from referee.competition.sprt import setup

    path = tmp_path / "g.toml"
    path.write_text(f'[tournament]\ngame = "aegis"\nschedule = "adaptive"\n\n[gauntlet]\ncandidate = "a"\n\n{BOTS}')
    with pytest.raises(ConfigError, match=r'g\.toml:3: tournament\.schedule = "adaptive" is for a tournament'):
        gauntlet.load(path)
    two = "\n".join(f'[[bots]]\nname = "{n}"\ncommand = "python x.py"\n' for n in ("a", "b"))
    path.write_text(f'[tournament]\ngame = "aegis"\nschedule = "adaptive"\n\n[sprt]\ncandidate = "a"\n\n{two}')
    with pytest.raises(ConfigError, match=r"tournament\.schedule has no meaning for an SPRT"):
        setup.load(path)


def test_a_config_error_through_the_command_line_is_exit_2_without_a_traceback(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(f'[tournament]\ngame = "aegis"\nschedule = "adaptive"\nstop = "top:9"\n\n{BOTS}')
    result = run_cli("tournament", path)
    assert result.returncode == ExitCode.USAGE
    assert "Traceback" not in result.stderr
    assert re.search(r't\.toml:4: tournament\.stop = "top:9" needs more than 9 entries', result.stderr), result.stderr


# --- real bots: the example, resumed, grown --------------------------------------------------------

EXAMPLE = ROOT / "examples" / "adaptive.toml"


def example_file(folder: Path, **keys: object) -> Path:
    """examples/adaptive.toml with its output in ``folder``, the bots run from the checkout, no
    sandbox (the e2e tests of the sandbox are elsewhere), one match at a time (results that do not
    depend on timing) and ``keys`` of [tournament] replaced."""
    text = EXAMPLE.read_text()
    text = text.replace('output = "../out/adaptive"', f'output = "{folder / "out"}"').replace('cwd = ".."',
                                                                                        f'cwd = "{ROOT}"')
    text = text.replace("concurrency = 4", "concurrency = 1")
    for key, value in keys.items():
        line = f"{key} = {json.dumps(value)}"
        text, n = re.subn(rf"^{key} = .*$", line, text, flags=re.M)
        if not n:
            text = text.replace('schedule = "adaptive"', f'schedule = "adaptive"\n{line}')
    text += '\n[limits]\nsandbox = "none"\n'
    path = folder / "t.toml"
    path.write_text(text)
    return path


def with_late_entry(path: Path) -> None:
    path.write_text(path.read_text().replace("[limits]", f'''[[bots]]
name = "late"
command = ["python", "-m", "sample_bots.weakened", "--noise", "0.8", "--seed", "2"]
cwd = "{ROOT}"

[limits]'''))


def rounds_of(folder: Path) -> list[Round]:
    store = Store(folder / "out", create=False)
    try:
        return list(stored.stored_rounds(store))
    finally:
        store.close()


def with_copy(path: Path) -> None:
    """A copy of the heuristic bot, entered as another entry: it plays every deal exactly as the
    heuristic does, so that the two split every deal set."""
    path.write_text(path.read_text().replace("[limits]", f'''[[bots]]
name = "copy"
command = ["python", "-m", "sample_bots.heuristic"]
cwd = "{ROOT}"

[limits]'''))


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """examples/adaptive.toml with a copy of its heuristic bot, and a margin of ±150 Elo (the two can
    never be ordered: the rule must show them within it; a wide margin keeps the test short)."""
    folder = tmp_path_factory.mktemp("example")
    path = example_file(folder, tie_elo=150)
    with_copy(path)
    run = run_cli("tournament", path, "--bootstrap", "100")
    view = run_cli("view", folder / "out", "--bootstrap", "100")
    return folder, run, view


@pytest.mark.e2e
def test_the_sample_bots_and_a_copy_stop_by_the_rule_and_say_why(example):
    """The old rule could never order a bot and its copy: the run went to max_deal_sets. Now the
    copy and the heuristic bot are shown within ±150 Elo, the rest ordered, and the run stops by its
    rule; the standings, their JSON and the report print the pair as tied."""
    folder, run, view = example
    assert run.returncode == ExitCode.OK, run.stderr
    why = re.search(r"stopped by its rule \(stop = order\) after (\d+) deal set\(s\), (\d+) match\(es\): every "
                    r"adjacent pair ordered or within ±150 Elo \(at 95% for all its pairs at once, over every look\): "
                    r"(heuristic, copy|copy, heuristic) within ±150 Elo \[-\d+, \+\d+\]; (heuristic|copy) above half "
                    r"\(> \+\d+\); half above random \(> \+\d+\)", run.stderr)
    assert why, run.stderr
    assert why.group(0) in run.stdout  # the standings say it too
    deal_sets, matches = int(why.group(1)), int(why.group(2))
    assert 2 <= deal_sets < 60
    lines = [line for line in run.stdout.splitlines() if re.match(r"\s+\d\s", line)][:4]
    assert {lines[0].split()[1], lines[1].split()[1]} == {"heuristic", "copy"}
    assert [line.split()[1] for line in lines[2:]] == ["half", "random"]
    assert standings.CLAIM_HEADER in run.stdout
    assert lines[0].endswith("within ±150 Elo") and re.search(r"> \+\d+$", lines[1]), lines
    store = Store(folder / "out", create=False)
    try:
        stop = stored.stop_of(store)
        assert stop.settled and stop.deal_sets == deal_sets and stop.matches == matches == store.count()
        assert [c.verdict for c in stop.pairs] == ["within", "above", "above"] and stop.tie_elo == 150
        assert len(stored.stored_rounds(store)) == deal_sets
    finally:
        store.close()
    rated = run_cli("ratings", folder / "out", "--format", "json", "--bootstrap", "0")
    assert rated.returncode == ExitCode.OK
    data = json.loads(rated.stdout)
    assert data["stopped"]["rule"] == "order" and data["stopped"]["pairs"][0]["shown"] == "within ±150 Elo"
    assert data["standings"][0]["vs_next"]["verdict"] == "within"
    assert data["standings"][0]["vs_next"]["interval"] == "within ±150 Elo"
    assert data["standings"][3]["vs_next"] is None
    assert view.returncode == ExitCode.OK, view.stderr
    page = (folder / "out" / "report" / "index.html").read_text()
    assert re.search(r"<p><strong>stopped by its rule \(stop = order\) after \d+ deal set", page)
    assert re.search(r'<td class="claim" data-shown="within">[+-]\d+ within ±150 Elo</td>', page)


@pytest.mark.e2e
def test_a_second_run_of_a_stopped_tournament_plays_nothing(example):
    folder, _, _ = example
    again = run_cli("tournament", folder / "t.toml", "--bootstrap", "0")
    assert again.returncode == ExitCode.OK, again.stderr
    assert "played 0 match(es) now" in again.stderr
    assert "stopped by its rule (stop = order)" in again.stderr


@pytest.fixture(scope="module")
def grown(tmp_path_factory):
    """A tournament that cannot settle (confidence 0.9999) to 6 deal sets from scratch; the same file
    capped at 3 deal sets, interrupted in its last deal set (two of its matches lost), then raised
    to 6; then grown by a late entry and 8 deal sets."""
    scratch, resumed = tmp_path_factory.mktemp("scratch"), tmp_path_factory.mktemp("resumed")
    hard = {"confidence": 0.9999}
    fresh = run_cli("tournament", example_file(scratch, max_deal_sets=6, **hard), "--bootstrap", "0")
    first = run_cli("tournament", example_file(resumed, max_deal_sets=3, **hard), "--bootstrap", "0")
    db = sqlite3.connect(resumed / "out" / "results.sqlite")
    lost = [k for (k,) in db.execute("SELECT key FROM matches WHERE deal_set = 2 ORDER BY key")][-2:]
    with db:
        db.executemany("DELETE FROM seats WHERE match_key = ?", [(k,) for k in lost])
        db.executemany("DELETE FROM matches WHERE key = ?", [(k,) for k in lost])
    db.close()
    second = run_cli("tournament", example_file(resumed, max_deal_sets=6, **hard), "--bootstrap", "0")
    rounds_before = rounds_of(resumed)
    standings = [run_cli("ratings", d / "out", "--format", "json", "--bootstrap", "50") for d in (scratch, resumed)]
    path = example_file(resumed, max_deal_sets=8, **hard)
    with_late_entry(path)
    third = run_cli("tournament", path, "--bootstrap", "0", "--verbose")
    return {"fresh": fresh, "first": first, "second": second, "third": third, "lost": lost, "scratch": scratch,
            "resumed": resumed, "rounds_before": rounds_before, "standings": standings}


@pytest.mark.e2e
def test_an_adaptive_run_resumed_makes_the_same_choices(grown):
    assert grown["fresh"].returncode == ExitCode.INCONCLUSIVE, grown["fresh"].stderr
    assert "inconclusive: stopped at max_deal_sets = 6 after 6 deal set(s)" in grown["fresh"].stderr
    assert grown["first"].returncode == ExitCode.INCONCLUSIVE
    second = grown["second"]
    assert second.returncode == ExitCode.INCONCLUSIVE, second.stderr
    assert "grows: deal sets 3 -> 6" in second.stderr
    assert re.search(r"2 of \d+ match\(es\) to play", second.stderr), second.stderr  # the interrupted deal set first
    assert grown["rounds_before"] == rounds_of(grown["scratch"])  # the same tables on every deal set
    scratch, resumed = grown["standings"]
    assert scratch.returncode == resumed.returncode == ExitCode.INCONCLUSIVE
    assert scratch.stdout == resumed.stdout  # and the same standings, byte for byte
    assert json.loads(resumed.stdout)["stopped"]["rule"] == "max_deal_sets"


@pytest.mark.e2e
def test_a_late_entry_is_played_first_by_the_same_directory(grown):
    third = grown["third"]
    assert "grows: deal sets 6 -> 8; new entries: late" in third.stderr, third.stderr
    rounds = rounds_of(grown["resumed"])
    assert rounds[:6] == grown["rounds_before"]  # the past is kept
    assert len(rounds) == 8 and "late" in rounds[6].tables[0]
    finished = [line for line in third.stderr.splitlines() if line.startswith("Finished match")]
    assert "late" in finished[0]  # its matches are the first played
    store = Store(grown["resumed"] / "out", create=False)
    try:
        late = sum(1 for row in store.matches() if "late" in row.lineup)
        history = matches_played(AEGIS, stored.stored_rounds(store), ["random", "half", "heuristic", "late"])
        assert late >= 4 and below_bound(["random", "half", "heuristic", "late"], history) == []
    finally:
        store.close()
    assert third.returncode == ExitCode.INCONCLUSIVE


@pytest.mark.parametrize("with_key", [True, pytest.param(False, marks=pytest.mark.e2e)])
def test_a_round_robin_directory_does_not_take_an_adaptive_file(tmp_path, with_key):
    """Whether its fingerprint names its schedule or predates schedules (the command a process of its
    own: the second case e2e)."""
    plain = load_text(tmp_path, f'deal_sets = 2\nseed = 5\noutput = "{tmp_path / "out"}"')
    fingerprint = json.loads(plain.fingerprint())
    if not with_key:
        del fingerprint["schedule"]
    store = Store(tmp_path / "out")
    store.claim(json.dumps(fingerprint), plain.describe(), plain.bots)
    store.save("0:a|b", 0, 1, ("a", "b"), {"scores": [1, 0], "placing": [1, 2]}, {}, 0.1)
    store.close()
    path = tmp_path / "t.toml"
    path.write_text(path.read_text().replace("deal_sets = 2", 'schedule = "adaptive"'))
    result = run_cli("tournament", path)
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "holds the results of another tournament configuration (changed: schedule" in result.stderr
    assert "Traceback" not in result.stderr


# --- the simulation tool -----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_simulation_tool_plays_both_schedules_to_the_same_rule(capsys):
    """The tool's tournaments call the runner's scheduler and rule; on 8 bots 100 Elo apart adaptive
    stops by the rule on the right order with far fewer matches (a fixed seed: one tournament each)."""
    true = scheduling.field_of("even", 8)
    assert max(true.values()) - min(true.values()) == 700 and sorted(true, key=true.get)[-1] == "b01"
    rule = Rule(confidence=0.9, max_deal_sets=400)
    rr = scheduling.play("2-player", true, "round-robin", rule, random.Random(5), 5)
    ad = scheduling.play("2-player", true, "adaptive", rule, random.Random(5), 5)
    assert rr.settled and ad.settled and not rr.wrong and not ad.wrong
    assert ad.matches < 0.6 * rr.matches
    scheduling.main(["--bots", "4", "--kinds", "2-player", "--tournaments", "1", "--max-deal-sets", "6"])
    table = capsys.readouterr().out
    assert re.search(r"\| 2-player \| 4 \| even \| round-robin \| 72 \(6\.0\) \| 0 of 1 \| - "
                     r"\| 0\.0% \[0\.0, 79\.3\] \|  \|", table), table
    assert re.search(r"\| 2-player \| 4 \| even \| adaptive \| \d+ \(6\.0\) \| 0 of 1 \| - \| 0\.0% .* \| \d+% \|",
                     table), table


def test_the_simulation_tool_judges_what_a_stop_declared():
    """An order the truth does not have (equal entries have none) and a margin wider than their gap
    are wrong; an order within the margin's reach, or a margin around a real gap, is not."""
    true = {"a": 1600.0, "b": 1500.0, "c": 1500.0, "d": 1480.0}

    def stop(*claims: tuple[str, str, str]) -> model.Stop:
        return model.Stop("order", True, 10, 40, "", tuple(model.Claim(*c) for c in claims), 50.0)

    assert not scheduling.wrong(stop(("a", "b", "above"), ("b", "c", "within"), ("c", "d", "above")), true)
    assert scheduling.wrong(stop(("b", "c", "above")), true)  # equal: no order
    assert scheduling.wrong(stop(("d", "c", "above")), true)  # the wrong way round
    assert scheduling.wrong(stop(("a", "d", "within")), true)  # 120 apart, not within ±50
    assert not scheduling.wrong(stop(("c", "d", "within")), true)  # 20 apart: within ±50
    measured = {"a": 1530.0, "b": 1500.0, "c": 1500.0, "d": 1490.0}  # the scale the results measure
    assert not scheduling.wrong(stop(("a", "d", "within")), true, measured)  # 40 apart there
    assert scheduling.field_of("tie", 4) == {"b01": 1650.0, "b02": 1500.0, "b03": 1500.0, "b04": 1350.0}
    assert scheduling.copies_of("copy", scheduling.field_of("copy", 4)) == {"b03": "b02"}
    assert scheduling.copies_of("tie", scheduling.field_of("tie", 4)) == {}
    assert scheduling.field_of("near", 4) == {"b01": 1645.0, "b02": 1505.0, "b03": 1495.0, "b04": 1355.0}


@pytest.mark.e2e
def test_plan_ahead_chooses_deal_sets_in_batches_and_looks_between(tmp_path):
    """``plan_ahead = 3``: the deal sets are chosen three at a time from the same results (so that their
    matches can play at once), the rule looked at between batches; the description says so."""
    path = example_file(tmp_path, max_deal_sets=7, confidence=0.9999, plan_ahead=3)
    done = run_cli("tournament", path, "--bootstrap", "0")
    assert done.returncode == ExitCode.INCONCLUSIVE, done.stderr
    chosen = rounds_of(tmp_path)
    assert [r.deal_set for r in chosen] == list(range(7))  # 3 + 3, then the 1 the cap leaves
    store = Store(tmp_path / "out", create=False)
    try:
        assert store.config()["plan_ahead"] == 3
        played = {row.deal_set: row for row in store.matches()}
        assert sorted(played) == list(range(7))
    finally:
        store.close()


def test_plan_ahead_is_for_an_adaptive_tournament_and_a_whole_number(tmp_path):
    text = example_file(tmp_path, plan_ahead=0).read_text()
    path = tmp_path / "t.toml"
    with pytest.raises(ConfigError, match="tournament.plan_ahead must be at least 1"):
        parse(read(path))
    path.write_text(text.replace("plan_ahead = 0", "plan_ahead = 2"))
    assert parse(read(path)).rule.ahead == 2
    round_robin = re.sub(r"^(schedule|stop|confidence|tie_elo|max_deal_sets) = .*$", "", text, flags=re.M)
    path.write_text(round_robin.replace("plan_ahead = 0", "plan_ahead = 2"))
    with pytest.raises(ConfigError, match='tournament.plan_ahead is for schedule = "adaptive"'):
        parse(read(path))


@pytest.mark.parametrize("ahead", [1, 3])
def test_the_planner_chooses_plan_ahead_deal_sets_before_any_result(tmp_path, ahead):
    config = parse(read(example_file(tmp_path, plan_ahead=ahead, max_deal_sets=10)))
    store = Store(tmp_path / "store")
    try:
        store.set_meta(MetaKey.CONFIG, json.dumps(config.describe()))
        schedule = adaptive.Planner(config, store)(set())
    finally:
        store.close()
    assert [r.deal_set for r in schedule.rounds] == list(range(ahead))  # chosen at once, from no result
    assert {s.deal_set for s in schedule.seatings} == set(range(ahead))


# --- filled batches (plan_fill) -------------------------------------------------------------------


def _busy(game: Game, batch, pace) -> tuple[dict[str, float], float]:
    """Each entry's seconds of matches in a batch, and the batch's."""
    busy: dict[str, float] = {}
    work = 0.0
    for r in batch:
        for table in r.tables:
            seconds = pace(table) * len(game.lineups(table))
            work += seconds
            for name in table:
                busy[name] = busy.get(name, 0.0) + seconds
    return busy, work


def test_a_filled_batch_keeps_every_match_slot_busy_and_nobody_busier_than_the_busiest():
    """e0 sits at two tables of each deal set: alone its matches would keep one slot busy while the
    other idles. Filled, the batch has twice e0's seconds of matches (two slots), no entry has more
    than e0, the tables chosen stay where they were, and no deal set has a table twice."""
    entries = names(6)
    batch = (Round(10, (("e0", "e1"), ("e0", "e2"))), Round(11, (("e0", "e1"), ("e0", "e2"))))
    out = adaptive.filled(AEGIS, batch, entries, entries, lambda table: 1.0, 2)
    busy, work = _busy(AEGIS, out, lambda table: 1.0)
    assert busy["e0"] == 8.0 == max(busy.values())
    assert work == 16.0  # was 8: e0's matches, one slot
    assert [r.deal_set for r in out] == [10, 11]
    for before, after in zip(batch, out):
        assert after.tables[:len(before.tables)] == before.tables
        assert len(set(after.tables)) == len(after.tables)
    assert {n for r in out for t in r.tables[2:] for n in t} <= {"e1", "e2", "e3", "e4", "e5"}
    assert out == adaptive.filled(AEGIS, batch, entries, entries, lambda table: 1.0, 2)  # deterministic
    assert adaptive.filled(AEGIS, batch, entries, entries, lambda table: 1.0, 1) == batch  # one slot: busy already


def test_a_filled_batch_weighs_tables_by_how_long_their_matches_take():
    """e0's matches take three times as long as the others': more tables of the others fit beside
    them, and still no entry is busier than e0, nor the batch more than two slots' worth."""
    entries = names(6)
    batch = (Round(0, (("e0", "e1"),)), Round(1, (("e0", "e1"),)), Round(2, (("e0", "e1"),)))

    def pace(table):
        return 3.0 if "e0" in table else 1.0

    out = adaptive.filled(AEGIS, batch, entries, entries, pace, 2)
    busy, work = _busy(AEGIS, out, pace)
    assert busy["e0"] == 18.0 == max(busy.values())
    assert 18.0 < work <= 36.0
    assert work - 18.0 >= 2 * 8  # at least eight tables of the others were added (each 2 s)


def test_a_balanced_batch_is_left_as_it_is_and_teams_stay_apart():
    entries = names(4)
    ring = (Round(0, (("e0", "e1"), ("e2", "e3"))), Round(1, (("e0", "e1"), ("e2", "e3"))))
    assert adaptive.filled(AEGIS, ring, entries, entries, lambda table: 1.0, 2) == ring
    lopsided = (Round(0, (("e0", "e1"), ("e0", "e2"))), Round(1, (("e0", "e1"), ("e0", "e2"))))
    apart = {frozenset(("e1", "e3")), frozenset(("e2", "e3")), frozenset(("e1", "e2"))}
    out = adaptive.filled(AEGIS, lopsided, entries, entries, lambda table: 1.0, 2,
                          lambda table: frozenset(table) not in apart)
    assert all(frozenset(t) not in apart for r in out for t in r.tables)


def test_paces_come_from_the_stored_matches_of_the_table_then_from_each_entrys_share():
    """a and b think (2 s a match each), c and d answer at once (0.5 s): a table never seen is the sum
    of its entries' shares, so two thinkers together take about twice as long as one."""
    rows = [MatchRow("k1", 0, ("a", "c"), {}, 2.5), MatchRow("k2", 0, ("c", "a"), {}, 2.5),
            MatchRow("k3", 0, ("b", "d"), {}, 2.5), MatchRow("k4", 0, ("c", "d"), {}, 1.0),
            MatchRow("k5", 0, ("a", "d"), {}, 2.5), MatchRow("k6", 0, ("b", "c"), {}, 2.5)]
    pace = adaptive.Paces(rows)
    assert pace(("a", "c")) == 2.5  # its own matches
    assert pace(("a", "b")) == pytest.approx(4.0, abs=0.05)  # never played: 2 + 2
    assert pace(("c", "e")) == pytest.approx(0.5 + 1.25, abs=0.05)  # e unknown: the mean share
    assert adaptive.Paces([])(("a", "b")) == 1.0
    quick = adaptive.Paces([MatchRow("k1", 0, ("a", "b"), {}, 4.0), MatchRow("k2", 0, ("c", "d"), {}, 0.0)])
    assert quick(("c", "d")) == 0.2  # never taken as free: a tenth of the mean match


def test_plan_fill_is_for_an_adaptive_tournament_and_true_or_false(tmp_path):
    text = example_file(tmp_path, plan_ahead=2).read_text()
    path = tmp_path / "t.toml"
    path.write_text(text.replace("plan_ahead = 2", "plan_ahead = 2\nplan_fill = true"))
    assert parse(read(path)).rule.fill
    path.write_text(text.replace("plan_ahead = 2", "plan_ahead = 2\nplan_fill = 1"))
    with pytest.raises(ConfigError, match="tournament.plan_fill must be true or false, got 1"):
        parse(read(path))
    round_robin = re.sub(r"^(schedule|stop|confidence|tie_elo|max_deal_sets|plan_ahead) = .*$", "", text, flags=re.M)
    path.write_text(round_robin + "\n")
    path.write_text(path.read_text().replace("[tournament]", "[tournament]\nplan_fill = true", 1))
    with pytest.raises(ConfigError, match='tournament.plan_fill is for schedule = "adaptive"'):
        parse(read(path))
