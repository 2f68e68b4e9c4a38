"""Standings of Confirmation's pairs variant: team results (no false draws between partners), the
partnerships' table, no individual ratings where the schedule cannot identify them, and bounds."""

from __future__ import annotations

import random

from referee.competition.schedule import make_schedule
from referee.results import standings
from referee.results.store import MatchRow
from referee.stats.simulation import simulate_tournament

TEAMS = [[0, 2], [1, 3]]
TRUE = {"a": 1300.0, "b": 1450.0, "c": 1550.0, "d": 1700.0}


def rows_of(lineups, deal_sets, seed=1):
    """Matches whose team scores follow TRUE (the simulation's model), as the store returns them."""
    rng = random.Random(seed)
    out = []
    for d in range(deal_sets):
        for lineup in lineups:
            one = simulate_tournament(TRUE, [lineup], 1, rng, luck=50.0, teams=TEAMS)[0]
            won = one.score == 1.0 if one.a == tuple(sorted((lineup[0], lineup[2]))) else one.score == 0.0
            scores = [10, 0, 10, 0] if won else [0, 10, 0, 10]
            placing = [1, 3, 1, 3] if won else [3, 1, 3, 1]
            out.append(MatchRow(f"{d}:{'|'.join(lineup)}", d, tuple(lineup),
                                {"scores": scores, "placing": placing, "teams": TEAMS}))
    return out


def test_rotated_partnerships_give_individual_ratings_and_a_team_table():
    lineups = [s.lineup for s in make_schedule("confirmation", {"pairs": True}, list(TRUE), 1, 0).seatings]
    st = standings.compute("confirmation", rows_of(lineups, 12), bootstrap=100)
    assert [b.name for b in st.lines] == ["d", "c", "b", "a"]
    assert all(b.elo is not None and b.lo < b.elo < b.hi for b in st.lines)
    a = next(b for b in st.lines if b.name == "a")
    assert a.wins + a.draws + a.losses == 12 * 12 and a.draws == 0  # one result a game, no partner draws
    assert "c" in st.head_to_head["a"] and st.head_to_head["a"]["c"].results == 12 * 8  # opponents in 8 of 12
    assert {r.name for r in st.teams.rows} == {"a+b", "a+c", "a+d", "b+c", "b+d", "c+d"}
    elo = {b.name: b.elo for b in st.lines}
    cd = next(r for r in st.teams.rows if r.name == "c+d")
    assert cd.elo == (elo["c"] + elo["d"]) / 2 and cd.lo < cd.elo < cd.hi  # a team plays at its average
    assert (cd.games, cd.wins + cd.losses) == (12 * 4, 12 * 4)
    text = standings.report(st)
    assert "Partnerships" in text and "a+d" in text and "warning" not in text
    assert standings.to_json(st)["teams"][0]["name"] == "c+d"


def test_fixed_partners_print_no_individual_ratings():
    fixed = [("a", "b", "c", "d"), ("b", "c", "d", "a"), ("c", "d", "a", "b"), ("d", "a", "b", "c")]
    st = standings.compute("confirmation", rows_of(fixed, 12), bootstrap=50)
    assert all(b.elo is None and b.plus_minus is None for b in st.lines)
    assert any("cannot be identified" in note for note in st.notes)
    assert [r.name for r in st.teams.rows] == ["b+d", "a+c"]  # the teams are measured
    text = standings.report(st)
    assert "warning: individual ratings cannot be identified" in text


def test_a_bot_that_lost_everything_is_shown_as_a_bound():
    def matches(d):  # x loses everything; y and z share their games
        return [(("x", "y"), [0, 1]), (("y", "x"), [1, 0]), (("x", "z"), [0, 1]), (("y", "z"), [d % 2, 1 - d % 2])]

    rows = [MatchRow(f"{d}:{k}", d, lineup, {"scores": s, "placing": [1 if x == max(s) else 2 for x in s]})
            for d in range(12) for k, (lineup, s) in enumerate(matches(d))]
    st = standings.compute("aegis", rows, bootstrap=100)
    x = next(b for b in st.lines if b.name == "x")
    assert x.bound == "upper" and (x.wins, x.draws) == (0, 0)
    line = next(line for line in standings.table(st).splitlines() if " x " in line)
    assert f"< {x.hi:.0f}" in line
    assert "bound" in standings.to_csv(st).splitlines()[0]
