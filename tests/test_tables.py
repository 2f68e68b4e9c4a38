"""The rating tables' statistics (referee/stats/headtohead.py) and what `referee ratings` prints of them,
the game pairs of four seats in rotation included."""

from __future__ import annotations

import csv
import io
import json
import random
import re

import pytest

from referee.competition.schedule import rotations
from referee.results import standings
from referee.results.store import MatchRow
from referee.stats import headtohead, ratings
from referee.stats.headtohead import MatchSeats


def duel(deal_set: int, first: str, second: str, first_wins: bool | None) -> MatchSeats:
    """A two-seat match; ``first_wins`` None is a draw."""
    value = 0.0 if first_wins is None else 1.0 if first_wins else -1.0
    return MatchSeats(deal_set, (first, second), (value, 0.0))


def test_a_seat_swapped_return_match_makes_a_game_pair():
    matches = [duel(0, "a", "b", True), duel(0, "b", "a", True),    # 1-1: one point each
               duel(1, "a", "b", True), duel(1, "b", "a", False),   # a 2 points
               duel(2, "a", "b", None), duel(2, "b", "a", False),   # a 1.5
               duel(3, "a", "b", False)]                            # no twin yet: unpaired
    pairs = headtohead.game_pairs(matches)
    assert pairs["a"]["b"].counts == [0, 0, 1, 1, 1]
    assert pairs["b"]["a"].counts == [1, 1, 1, 0, 0]
    assert pairs["a"]["b"].unpaired == pairs["b"]["a"].unpaired == 1


def test_twins_must_share_the_deal_set_and_the_seats():
    # the same two bots swapped, but on another deal set: no pair
    pairs = headtohead.game_pairs([duel(0, "a", "b", True), duel(1, "b", "a", True)])
    assert pairs["a"]["b"].counts == [0] * 5 and pairs["a"]["b"].unpaired == 2


def test_confirmation_rotations_pair_every_result():
    # three bots in four seats, every rotation of every group, as the schedule plays them: every
    # pairwise result has its seat-swapped twin in another rotation
    groups = [("h", "r1", "h", "r2"), ("h", "r2", "h", "r1"), ("r1", "h", "r1", "r2")]
    matches = []
    for k, lineup in enumerate(lineup for g in groups for lineup in rotations(g)):
        scores = tuple(float((7 * k + 3 * seat) % 5) for seat in range(4))
        matches.append(MatchSeats(0, lineup, scores))
    results = headtohead.pair_results(matches)
    pairs = headtohead.game_pairs(matches)
    for a in ("h", "r1", "r2"):
        for b in ("h", "r1", "r2"):
            if a != b:
                n = sum(1 for o in results if {o.a, o.b} == {a, b})
                assert pairs[a][b].unpaired == 0
                assert 2 * sum(pairs[a][b].counts) == n
                assert pairs[b][a].counts == pairs[a][b].counts[::-1]
                # the points of the pairs are the points of the results
                points = sum(o.score if o.a == a else 1 - o.score for o in results if {o.a, o.b} == {a, b})
                assert sum(k / 2 * c for k, c in enumerate(pairs[a][b].counts)) == points


def test_head_to_head_mirrors_and_matches_a_two_player_fit():
    matches = []
    for d in range(6):
        matches += [duel(d, "a", "b", d % 3 != 0), duel(d, "b", "a", d % 2 == 0), duel(d, "a", "c", True),
                    duel(d, "c", "a", None)]
    h2h = headtohead.head_to_head(matches, bootstrap=200)
    ab, ba = h2h["a"]["b"], h2h["b"]["a"]
    assert (ab.results, ab.wins, ab.draws, ab.losses) == (12, ba.losses + 0, 0, ba.wins)
    assert ab.elo == pytest.approx(-ba.elo) and ab.elo_lo == pytest.approx(-ba.elo_hi)
    assert ab.los == pytest.approx(1 - ba.los)
    alone = ratings.rate([o for o in headtohead.pair_results(matches) if {o.a, o.b} == {"a", "b"}],
                         anchor=("b", 0.0), bootstrap=200)
    assert ab.elo == pytest.approx(alone["a"].elo) and alone["a"].lo < ab.elo_lo < ab.elo < ab.elo_hi
    assert "c" not in h2h["b"]  # never met
    assert h2h["a"]["c"].draws == 6 and h2h["a"]["c"].wins == 6 and h2h["a"]["c"].elo > 0


def test_los_is_no_surer_than_the_interval():
    # one deal set: nothing measures how its games are correlated, so it counts as a single game
    matches = [duel(0, "a", "b", True), duel(0, "b", "a", False)] * 2
    h = headtohead.head_to_head(matches, bootstrap=200)["a"]["b"]
    assert h.elo_lo < 0 < h.elo  # the interval covers 0
    assert 0.5 <= h.los < 0.975  # so the LOS is no surer than the interval


def test_opponents_average_and_los_matrix():
    results = [ratings.PairResult(d, "a", "b", 1.0) for d in range(5)] + \
              [ratings.PairResult(d, "a", "c", 0.5) for d in range(15)] + \
              [ratings.PairResult(d, "b", "c", 0.0) for d in range(5)]
    fit = ratings.rate(results, bootstrap=100)
    elos = fit.elos
    opp = headtohead.opponents_average(fit)
    assert opp["a"] == pytest.approx((5 * elos["b"] + 15 * elos["c"]) / 20)
    assert opp["b"] == pytest.approx((elos["a"] + elos["c"]) / 2)
    los = headtohead.los_matrix(fit)
    assert set(los["a"]) == {"b", "c"}
    assert los["a"]["b"] == pytest.approx(1 - los["b"]["a"])
    assert headtohead.los_matrix(ratings.rate(results, bootstrap=0))["a"]["b"] is None


def rows() -> list[MatchRow]:
    out = []
    for d in range(4):
        for first, second in (("x", "y"), ("y", "x"), ("x", "z"), ("z", "x"), ("y", "z"), ("z", "y")):
            win = first if (d + len(first + second)) % 3 else second
            placing = (1, 2) if win == first else (2, 1)
            out.append(MatchRow(f"{d}:{first}|{second}", d, (first, second),
                                {"scores": [10 if p == 1 else 3 for p in placing], "placing": list(placing),
                                 "faults": [{}, {}]}))
    return out


def test_standings_text_json_and_csv_agree():
    st = standings.compute("aegis", rows(), anchor=("z", 1000.0), bootstrap=100)
    text = standings.report(st, los=True)
    assert "anchored: z = 1000" in text and "average 1500" not in text
    assert "Likelihood of superiority" in text
    data = standings.to_json(st)
    assert data["scale"] == {"anchor": "z", "rating": 1000.0}
    first = data["standings"][0]
    assert {"lo", "hi", "matches", "results", "opponents_elo"} <= set(first)
    assert first["matches"] == 16 and first["results"] == 16
    assert f"[{first['lo']:.0f}, {first['hi']:.0f}]" in text
    pair = data["head_to_head"]["x"]["y"]
    assert {"elo", "elo_lo", "elo_hi", "los", "draws", "pentanomial", "unpaired"} <= set(pair)
    assert sum(pair["pentanomial"]) == 4 and pair["unpaired"] == 0
    bots = list(csv.DictReader(io.StringIO(standings.to_csv(st))))
    assert [b["name"] for b in bots] == [s["name"] for s in data["standings"]]
    assert float(bots[0]["opponents_elo"]) == pytest.approx(first["opponents_elo"])
    pairs = list(csv.DictReader(io.StringIO(standings.to_csv_pairs(st))))
    assert len(pairs) == 6
    xy = next(p for p in pairs if p["bot"] == "x" and p["opponent"] == "y")
    assert [int(xy[k]) for k in ("pairs_0", "pairs_0.5", "pairs_1", "pairs_1.5", "pairs_2")] == pair["pentanomial"]
    assert float(xy["los_joint"]) == pytest.approx(data["los"]["x"]["y"])
    assert standings.to_json(standings.compute("aegis", rows(), bootstrap=0))["scale"] == {"average": 1500.0}


def test_ratings_command_prints_the_anchor_and_the_los_matrix(tmp_path, invoke):
    from referee.results.store import Store

    store = Store(tmp_path / "out")
    store.claim("{}", {"game": "aegis"}, [])
    for row in rows():
        store.save(row.key, row.deal_set, 0, row.lineup, row.results, {"game": "aegis"}, 0.0)
    store.close()
    result = invoke("ratings", str(tmp_path / "out"), "--anchor", "z=1000", "--los", "--bootstrap", "50")
    assert result.exit_code == 0, result.output
    assert "anchored: z = 1000" in result.output and "average 1500" not in result.output
    assert "LOS %" in result.output
    as_csv = invoke("ratings", str(tmp_path / "out"), "--format", "csv-pairs", "--bootstrap", "50")
    assert as_csv.output.startswith("bot,opponent,results,wins,draws,losses")
    as_json = json.loads(invoke("ratings", str(tmp_path / "out"), "--format", "json", "--bootstrap", "50").output)
    assert as_json["los"]["x"]


def faulty_rows() -> list[MatchRow]:
    """rows() with faults of every kind charged to x and y: x 681 malformed answers, 2 timeouts and one
    answer with a wrong id; y 4 illegal actions, 3 disconnects, a seat with no session and 66 errors."""
    out = rows()
    charged = {"x": {"malformed": 681, "timeout": 2, "wrong_id": 1}, "y": {"illegal": 4, "disconnect": 3,
                                                                          "no_session": 1, "error": 66}}
    for bot, kinds in charged.items():
        row = next(r for r in out if r.lineup[0] == bot)
        row.results["faults"][0] = dict(kinds)
    return out


def test_faults_are_counted_by_kind_in_the_text_json_and_csv_tables():
    st = standings.compute("aegis", faulty_rows(), bootstrap=0)
    x = {"timeout": 2, "illegal": 0, "malformed": 681, "wrong_id": 1, "disconnect": 0, "no_session": 0, "error": 0}
    y = {"timeout": 0, "illegal": 4, "malformed": 0, "wrong_id": 0, "disconnect": 3, "no_session": 1, "error": 66}
    text = standings.report(st)
    header = next(line for line in text.splitlines() if line.lstrip().startswith("rank"))
    assert header.endswith("faults t/i/m/w/d/n/e")
    cells = {line.split()[1]: line.split()[-1] for line in text.splitlines() if line.split()[1:2] in (["x"], ["y"])}
    assert cells == {"x": "2/0/681/1/0/0/0", "y": "0/4/0/0/3/1/66"}  # malformed no longer counted as illegal
    assert ("faults t/i/m/w/d/n/e: timeouts / illegal actions / malformed answers / answers with a wrong request id "
            "/ disconnects / seats it had no session for / errors of its own code (a decision that raised)") in text
    data = {line["name"]: line for line in standings.to_json(st)["standings"]}
    assert data["x"]["faults"] == x and data["y"]["faults"] == y and data["z"]["faults"] == dict.fromkeys(x, 0)
    assert not {"timeouts", "illegal", "disconnects"} & set(data["x"])
    table = {b["name"]: b for b in csv.DictReader(io.StringIO(standings.to_csv(st)))}
    assert {k: int(table["x"][f"faults_{k}"]) for k in x} == x and {k: int(table["y"][f"faults_{k}"]) for k in y} == y
    assert "faults" not in table["x"]


# --- a young table reads well (issue 34, item 7) ------------------------------------------------

NUMBER = re.compile(r"[-+]?\d+")
TOO_FEW = "too few games"  # standings.TOO_FEW, spelt out: what the reader sees


def round_robin(strengths: dict[str, float], deal_sets: int, seed: int = 3) -> list[MatchRow]:
    """Aegis matches of every two bots, each deal set twice with the seats swapped, won at random by the
    Elo model (``strengths``): deterministic for a seed."""
    rng = random.Random(seed)
    names = list(strengths)
    out = []
    for d in range(deal_sets):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                for x, y in ((a, b), (b, a)):
                    won = rng.random() < 1 / (1 + 10 ** (-(strengths[x] - strengths[y]) / 400))
                    out.append(MatchRow(f"{d}:{x}|{y}", d, (x, y), {"scores": [1, 0] if won else [0, 1],
                                                                   "placing": [1, 2] if won else [2, 1]}))
    return out


def printed_cells(table: str, column: int, columns: int) -> dict[str, list[str]]:
    """The cells of a text table (split on two spaces or more) by the row's name in ``column``."""
    out = {}
    for line in table.splitlines()[2:]:
        cells = re.split(r"\s{2,}", line.strip())
        assert len(cells) == columns, line
        out[cells[column]] = cells
    return out


def test_a_young_ten_entry_table_says_too_few_games_instead_of_thousand_point_bounds():
    """Ten entries after two deal sets (what a competition's first evening shows): the intervals the
    statistics give are up to thousands of Elo wide (Student's t is 12.7 with one degree of freedom);
    no table prints one wider than ±400 (``standings.WIDEST``), nor a bound, interval end or
    difference bound on the wrong side: "too few games" instead."""
    st = standings.compute("aegis", round_robin({f"bot{i}": 60.0 * i for i in range(10)}, 2), bootstrap=200)
    assert any(b.plus_minus > 600 for b in st.lines)  # the statistics' own intervals: the issue's [-1398, 3013]
    bots = printed_cells(standings.table(st), 1, 11)
    for b in st.lines:
        elo, interval = bots[b.name][2:4]
        if interval != TOO_FEW and interval != "-":
            lo, hi = map(int, NUMBER.findall(interval))
            assert 0 < lo and hi - lo <= 801, (b.name, interval)
    pairs = printed_cells(standings.pairs_table(st), 0, 9)
    for pair, cells in pairs.items():
        diff, interval = cells[4:6]
        if diff.startswith(">"):
            assert int(diff[1:]) > 0, (pair, diff)  # a sweep's bound says the sweeper is the better
        if diff.startswith("<"):
            assert int(diff[1:]) < 0, (pair, diff)
        if interval.startswith("["):
            lo, hi = map(int, NUMBER.findall(interval))
            assert hi - lo <= 801, (pair, interval)
    assert any(bots[b.name][3] == TOO_FEW for b in st.lines)
    swept = [cells for cells in pairs.values() if cells[2] == "4-0-0"]
    assert swept and all(cells[4:6] == ["-", TOO_FEW] for cells in swept)  # not "> -642"


def test_a_sweep_on_too_few_games_is_no_bound_the_wrong_way():
    """A 4-0 sweep on two deal sets was printed "Elo diff > -642": true, and useless, and read as a
    bound pointing the wrong way (its interval holds 0: the record cannot say who is better). The
    same sweep on ten deal sets (20-0) is a bound above 0; the loser's side mirrors it."""
    def sweep(deal_sets: int) -> list[MatchRow]:
        return [MatchRow(f"{d}:{x}|{y}", d, (x, y), {"scores": [1, 0] if x == "a" else [0, 1],
                                                    "placing": [1, 2] if x == "a" else [2, 1]})
                for d in range(deal_sets) for x, y in (("a", "b"), ("b", "a"))]

    young = standings.compute("aegis", sweep(2), bootstrap=100)
    assert "> -" not in standings.report(young)
    assert young.head_to_head["a"]["b"].bound == "lower" and young.head_to_head["a"]["b"].elo_lo < 0
    for a, b in (("a", "b"), ("b", "a")):
        assert standings.difference_cells(young.head_to_head[a][b]) == ("-", standings.TOO_FEW)
        assert standings.to_json(young)["head_to_head"][a][b]["shown"] == {
            "kind": standings.TOO_FEW, "elo": "-", "interval": standings.TOO_FEW}
    grown = standings.compute("aegis", sweep(10), bootstrap=100)
    lower, upper = grown.head_to_head["a"]["b"], grown.head_to_head["b"]["a"]
    assert lower.elo_lo > 0
    assert standings.difference_cells(lower) == (f"> +{lower.elo_lo:.0f}", "-")
    assert standings.difference_cells(upper) == (f"< -{lower.elo_lo:.0f}", "-")


def test_a_rating_bound_is_shown_only_on_the_side_of_its_opponents():
    """A bot that scored no point is shown as a bound when the bound puts it below its opponents
    (the demo's "random < 1360"); on two deal sets the same record bounds it only below 2000-odd,
    above the bots it lost to: too few games."""
    def field(deal_sets: int) -> standings.Standings:
        rows = round_robin({"x": 0.0, "y": 0.0, "loser": -4000.0}, deal_sets)
        return standings.compute("aegis", rows, bootstrap=200)

    grown = field(10)
    loser = next(b for b in grown.lines if b.name == "loser")
    assert loser.bound == "upper" and loser.hi < loser.opponents_elo
    assert standings.elo_cells(loser) == (f"< {loser.hi:.0f}", "-")
    young = field(2)
    loser = next(b for b in young.lines if b.name == "loser")
    assert loser.bound == "upper" and loser.hi > loser.opponents_elo  # the statistics' "< 2212"
    assert standings.elo_cells(loser) == ("-", standings.TOO_FEW)
    assert next(s for s in standings.to_json(young)["standings"] if s["name"] == "loser")["shown"] == {
        "kind": standings.TOO_FEW, "elo": "-", "interval": standings.TOO_FEW}


def test_four_seats_in_rotation_pair_only_opposite_seats_and_the_table_says_so():
    lineup = ("a", "b", "c", "d")
    rotations = [lineup[r:] + lineup[:r] for r in range(4)]
    rows = [MatchRow(f"{k}:{'|'.join(line)}", k, line, {"scores": [4, 3, 2, 1], "placing": [1, 2, 3, 4]})
            for k in range(2) for line in rotations]
    st = standings.compute("confirmation", rows, bootstrap=0)
    opposite, neighbours = st.head_to_head["a"]["c"], st.head_to_head["a"]["b"]
    assert sum(opposite.pentanomial) == 4 and opposite.unpaired == 0  # a in seat s, c in s+2: twins
    assert sum(neighbours.pentanomial) == 0 and neighbours.unpaired == 8  # never swapped by a rotation
    text = standings.report(st)
    assert "four seats in rotation swap only opposite seats: neighbours have no game pairs" in text
    aegis = standings.compute("aegis", [MatchRow(f"0:{x}|{y}", 0, (x, y), {"scores": [1, 0], "placing": [1, 2]})
                                        for x, y in (("a", "b"), ("b", "a"))], bootstrap=0)
    assert "unpaired:" not in standings.report(aegis)  # said only where some result is unpaired
