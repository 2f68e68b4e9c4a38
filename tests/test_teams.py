"""Authors and teams (issue 35): no two entries of one team sit at one table, in every schedule
(round robin, adaptive, grown, gauntlet, SPRT); where a schedule cannot avoid it the run refuses in
one line (exit 2) unless the file allows it; and nothing a bot is told names its opponents or any
team."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from harness import ROOT, run_cli, write_tournament

from referee.cli.exits import ExitCode, exit_code_for
from referee.competition import adaptive, gauntlet, growth
from referee.competition import config as tconfig
from referee.competition.adaptive import Game, matches_played, next_tables
from referee.competition.run import schedule_of
from referee.competition.schedule import make_schedule, rotations
from referee.competition.sprt import setup as sprt_setup
from referee.model import ConfigError, Round, Rule, Seating
from referee.model.teams import NO_TEAMS, TeamError, Teams
from referee.play import wire
from referee.play.arena import GameInfo
from referee.play.executors.base import game_id_of
from referee.runner import Clock
from referee.stats.ratings import rank_posterior
from referee.stats.simulation import PROJECT, simulate_tournament

NAMES = [f"e{i}" for i in range(8)]


def random_teams(rng: random.Random, entries: list[str], teams: int) -> Teams:
    """Each entry in one of ``teams`` teams (every team given one entry at least), some left undeclared."""
    order = entries[:]
    rng.shuffle(order)
    of = {e: f"t{i % teams}" for i, e in enumerate(order)}
    for e in order[teams:]:
        if rng.random() < 0.2:
            del of[e]  # a team of its own
    return Teams(of)


def assert_apart(teams: Teams, lineups) -> None:
    for lineup in lineups:
        assert teams.apart(lineup), (lineup, teams.mates(lineup))


# --- the round robin ------------------------------------------------------------------------------------


@pytest.mark.parametrize("game, options, n, teams", [
    ("aegis", {}, 5, 2), ("aegis", {}, 8, 3), ("confirmation", {}, 6, 4), ("confirmation", {}, 8, 5),
    ("confirmation", {"pairs": True}, 7, 4), ("confirmation", {}, 9, 6)])
def test_a_round_robin_never_seats_team_mates_and_plays_every_entry(game, options, n, teams):
    rng = random.Random(n * 31 + teams)
    for _ in range(5):
        t = random_teams(rng, NAMES[:n] + [f"x{i}" for i in range(n - 8)], teams)
        entries = (NAMES + [f"x{i}" for i in range(n - 8)])[:n]
        sched = make_schedule(game, options, entries, deal_sets=2, seed=3, max_groups=12, teams=t)
        assert_apart(t, (s.lineup for s in sched.seatings))
        assert {e for s in sched.seatings for e in s.lineup} == set(entries)  # nobody left without a table
        # duplicate play kept whole: every table on every deal set in every rotation, from one deal seed
        for group in sched.groups:
            for k in range(2):
                played = {s.lineup for s in sched.seatings if s.deal_set == k and set(s.lineup) == set(group)}
                assert set(rotations(group)) <= played
        assert "team-mates never at one table" in sched.note or not t.shared(entries)


def test_without_teams_the_schedule_is_what_it_was():
    for game, n in (("aegis", 5), ("confirmation", 6), ("confirmation", 3)):
        plain = make_schedule(game, {}, NAMES[:n], deal_sets=2, seed=9)
        alone = make_schedule(game, {}, NAMES[:n], deal_sets=2, seed=9, teams=Teams({e: e for e in NAMES[:n]}))
        assert plain == make_schedule(game, {}, NAMES[:n], deal_sets=2, seed=9, teams=NO_TEAMS)
        assert alone.seatings == plain.seatings and alone.note == plain.note  # teams of one: nothing changes


def test_the_balanced_subset_is_chosen_among_the_tables_that_keep_team_mates_apart():
    t = Teams({"e0": "a", "e1": "a", "e2": "b", "e3": "b"})
    sched = make_schedule("confirmation", {}, NAMES, deal_sets=1, seed=1, max_groups=10, teams=t)
    assert len(sched.groups) == 10 and all(t.apart(g) for g in sched.groups)
    per_entry = Counter(e for g in sched.groups for e in g)
    assert set(per_entry) == set(NAMES)


@pytest.mark.parametrize("game, entries, of, why", [
    ("confirmation", NAMES[:5], {"e0": "a", "e1": "a", "e2": "b", "e3": "b"}, "make 3 team(s)"),
    ("confirmation", NAMES[:3], {"e0": "a", "e1": "a"}, "seats 3 at a table and its 3 entries"),
    ("aegis", NAMES[:3], {"e0": "a", "e1": "a", "e2": "a"}, "make 1 team(s)"),
])
def test_a_schedule_that_cannot_keep_team_mates_apart_is_refused_unless_allowed(game, entries, of, why):
    with pytest.raises(TeamError, match=re.escape(why)) as refused:
        make_schedule(game, {}, entries, deal_sets=1, seed=1, teams=Teams(of))
    assert "allow_team_tables = true" in str(refused.value) and "\n" not in str(refused.value)
    assert exit_code_for(refused.value) == ExitCode.USAGE
    allowed = make_schedule(game, {}, entries, deal_sets=1, seed=1, teams=Teams(of, allow=True))
    assert allowed.seatings == make_schedule(game, {}, entries, deal_sets=1, seed=1).seatings  # every table
    assert "team-mates share tables (allow_team_tables = true" in allowed.note


BOTS = """
[[bots]]
name = "{name}"
command = "python -m sample_bots.random"
cwd = "{root}"
{team}
"""


def teams_file(tmp_path: Path, game: str, teams: dict[str, str | None], extra: str = "", tables: str = "") -> Path:
    bots = "".join(BOTS.format(name=n, root=ROOT, team=f'team = "{t}"' if t else "") for n, t in teams.items())
    return write_tournament(tmp_path / "t.toml", bots + tables, game=game, deal_sets=1, seed=1, concurrency=1,
                            extra=extra)


def test_the_file_declares_teams_and_says_at_which_line_it_cannot_keep_them_apart(tmp_path):
    path = teams_file(tmp_path, "confirmation", {"a1": "acme", "a2": "acme", "b": "beta", "c": None})
    with pytest.raises(ConfigError) as refused:
        tconfig.load(path)
    line = path.read_text().splitlines().index('team = "acme"') + 1
    assert str(refused.value).startswith(f"{path}:{line}: Confirmation seats 4 at a table and its 4 entries in play "
                                         f"make 3 team(s) (acme: a1, a2)")
    path = teams_file(tmp_path, "confirmation", {"a1": "acme", "a2": "acme", "b": "beta", "c": None},
                      extra="allow_team_tables = true")
    cfg = tconfig.load(path)
    assert cfg.teams.of == {"a1": "acme", "a2": "acme", "b": "beta"} and cfg.allow_team_tables
    assert cfg.describe()["allow_team_tables"] is True
    assert [b.get("team") for b in cfg.describe()["bots"]] == ["acme", "acme", "beta", None]


@pytest.mark.parametrize("value, message", [
    ('team = ""', "team must be one line of text"), ("team = 3", "team must be one line of text"),
    ('team = "a\\nb"', "team must be one line of text"), (f'team = "{"x" * 61}"', "at most 60 characters")])
def test_a_bad_team_is_refused_at_its_line(tmp_path, value, message):
    path = teams_file(tmp_path, "aegis", {"a": None, "b": None})
    text = path.read_text().replace('name = "b"\n', f'name = "b"\n{value}\n')
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)) as refused:
        tconfig.load(path)
    assert str(refused.value).startswith(f"{path}:{text.splitlines().index(value) + 1}: bot 'b': ")


def test_allow_team_tables_must_be_true_or_false(tmp_path):
    path = teams_file(tmp_path, "aegis", {"a": None, "b": None}, extra='allow_team_tables = "yes"')
    with pytest.raises(ConfigError, match="tournament.allow_team_tables must be true or false"):
        tconfig.load(path)


@pytest.mark.e2e
def test_the_run_refuses_in_one_line_with_exit_2_and_plays_when_allowed(tmp_path):
    path = teams_file(tmp_path, "aegis", {"a1": "acme", "a2": "acme"})
    done = run_cli("tournament", path, "--quiet", timeout=120)
    assert done.returncode == ExitCode.USAGE, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "Aegis seats 2 at a table and its 2 entries in play make 1 team(s) (acme: a1, a2)" in lines[0]
    assert not (tmp_path / "out").exists()  # nothing written
    path = teams_file(tmp_path, "aegis", {"a1": "acme", "a2": "acme"}, extra="allow_team_tables = true")
    done = run_cli("tournament", path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "team-mates share tables (allow_team_tables = true: acme: a1, a2)" in done.stderr


def test_an_entry_out_of_play_that_leaves_too_few_teams_is_refused_at_run_time(tmp_path):
    path = teams_file(tmp_path, "confirmation", {"a1": "acme", "a2": "acme", "b": "beta", "c": None, "d": None})
    cfg = tconfig.load(path)  # five entries, four teams: every table can keep them apart
    assert all(cfg.teams.apart(s.lineup) for s in schedule_of(cfg).seatings)
    with pytest.raises(TeamError, match="its 4 entries in play make 3 team"):
        schedule_of(cfg, out={"d"})  # d did not start (absent = "withdraw"): three teams for four seats


# --- the adaptive scheduler ----------------------------------------------------------------------------


def simulate(game: Game, entries: list[str], rounds: int, teams: Teams, seed: int = 1) -> list[Round]:
    true = {name: 1500.0 - 60.0 * i for i, name in enumerate(entries)}
    history: list[Round] = []
    outcomes: list = []
    rng = random.Random(seed)
    for _ in range(rounds):
        posterior = rank_posterior(outcomes) if outcomes else None
        tables = next_tables(game, entries, history, posterior, Rule(), seed, teams.apart)
        lineups = [lineup for table in tables for lineup in game.lineups(table)]
        outcomes += simulate_tournament(true, lineups, 1, rng, first=len(history), **PROJECT)
        history.append(Round(len(history), tables))
    return history


@pytest.mark.parametrize("game, n, of", [
    ("aegis", 6, {"e0": "a", "e1": "a", "e2": "b", "e3": "b"}),
    ("aegis", 5, {"e0": "a", "e1": "a", "e2": "a", "e3": "a"}),
    ("confirmation", 8, {"e0": "a", "e1": "a", "e2": "a", "e3": "b", "e4": "b"}),
    ("confirmation", 6, {"e1": "a", "e2": "a"}),
])
def test_adaptive_tables_never_seat_team_mates_and_keep_the_fairness_bound(game, n, of):
    g, teams, entries = Game.of(game, {}), Teams(of), NAMES[:n]
    rounds = simulate(g, entries, 20, teams)
    assert_apart(teams, (t for r in rounds for t in r.tables))
    assert all({e for t in r.tables for e in t} == set(entries) for r in rounds[:2])  # the warm-up seats everyone
    history = matches_played(g, rounds, entries)
    capacity = adaptive.capacity(entries, g.table_size(n), teams.apart)
    for k in range(1, len(history) + 1):
        assert adaptive.below_bound(entries, history[:k], capacity) == [], k
    # and, where there is a choice, it is still adaptive: fewer tables than a round robin of those allowed
    # (four team-mates and one other entry have only its four tables, every one needed)
    every = [t for t in itertools.combinations(entries, g.table_size(n)) if teams.apart(t)]
    assert sum(len(r.tables) for r in rounds) < 20 * len(every) or len(every) < n


def test_a_table_chosen_before_a_team_was_declared_no_longer_counts():
    g = Game.of("aegis", {})
    rounds = [Round(0, (("e0", "e1"), ("e2", "e3")))]
    assert len(adaptive.seatings_of(g, rounds, NAMES[:4], seed=1)) == 4
    teams = Teams({"e0": "a", "e1": "a"})
    assert [s.lineup for s in adaptive.seatings_of(g, rounds, NAMES[:4], seed=1, apart=teams.apart)] == \
        [("e2", "e3"), ("e3", "e2")]


# --- gauntlet, SPRT, a grown file -----------------------------------------------------------------------


def gauntlet_tables(lineup: str = "duel") -> str:
    return f'\n[gauntlet]\ncandidate = "c"\nlineup = "{lineup}"\n'


def test_a_gauntlet_refuses_a_baseline_of_the_candidates_team_unless_allowed(tmp_path):
    path = teams_file(tmp_path, "aegis", {"c": "acme", "b1": "acme", "b2": None}, tables=gauntlet_tables())
    with pytest.raises(ConfigError, match=r"gauntlet: the candidate c is of one team with b1 \(acme: c, b1\)"):
        gauntlet.load(path)
    path = teams_file(tmp_path, "aegis", {"c": "acme", "b1": "acme", "b2": None}, tables=gauntlet_tables(),
                      extra="allow_team_tables = true")
    sched = gauntlet.make_schedule(gauntlet.load(path))
    assert {frozenset(s.lineup) for s in sched.seatings} == {frozenset({"c", "b1"}), frozenset({"c", "b2"})}


def test_a_gauntlet_field_keeps_the_baselines_team_mates_apart_too(tmp_path):
    teams = {"c": None, "b1": "x", "b2": "x", "b3": None, "b4": None, "b5": "y"}
    path = teams_file(tmp_path, "confirmation", teams, tables=gauntlet_tables("field"))
    cfg = gauntlet.load(path)
    sched = gauntlet.make_schedule(cfg)
    assert sched.seatings and all(cfg.tournament.teams.apart(s.lineup) for s in sched.seatings)
    assert {e for s in sched.seatings for e in s.lineup} == set(teams)
    few = teams_file(tmp_path, "confirmation", {"c": None, "b1": "x", "b2": "x", "b3": None},
                     tables=gauntlet_tables("field"))
    with pytest.raises(ConfigError, match="fewer than three teams"):
        gauntlet.load(few)


def test_an_sprt_of_two_team_mates_is_refused_unless_allowed(tmp_path):
    sprt = '\n[sprt]\ncandidate = "c"\n'
    text = teams_file(tmp_path, "aegis", {"c": "acme", "b": "acme"}, tables=sprt).read_text()
    text = re.sub(r"deal_sets = 1\n", "", text)
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(ConfigError, match="sprt: the candidate c and the baseline b are of one team"):
        sprt_setup.load(tmp_path / "s.toml")
    (tmp_path / "s.toml").write_text(text.replace("output =", "allow_team_tables = true\noutput ="))
    assert sprt_setup.load(tmp_path / "s.toml").baseline.name == "b"


def test_a_grown_file_says_whose_team_changed():
    before = {"bots": [{"name": "a"}, {"name": "b", "team": "x"}], "deal_sets": 2}
    line = growth.grown(before, [{"name": "a", "team": "x"}, {"name": "b", "team": "x"}], 2)
    assert line == "teams changed: a (none -> x) (the tables that now seat team-mates no longer count)"


# --- what a bot is told ----------------------------------------------------------------------------------


def test_a_bot_is_told_seats_not_names():
    info = GameInfo("m1", "confirmation", {}, 2, ("zander", "yakko", "zander", "yakko"), Clock())
    start = wire.game_start(info).game_start
    assert list(start.seat_names) == ["seat 0", "seat 1", "seat 2", "seat 3"]  # not even its own copy
    assert list(wire.spectator_start(info).game_start.seat_names) == ["zander", "yakko", "zander", "yakko"]


def test_a_scheduled_matchs_game_id_names_no_entry():
    seating = Seating(3, 1234567, ("zander", "yakko"))
    twin = Seating(3, 1234567, ("yakko", "zander"))
    ids = {game_id_of(seating), game_id_of(twin), game_id_of(Seating(4, 99, ("zander", "yakko")))}
    assert len(ids) == 3 and all(re.fullmatch(r"[34]:m[0-9a-f]{16}", i) for i in ids)  # the deal set, as before
    assert game_id_of(seating) == game_id_of(Seating(3, 1234567, ("zander", "yakko")))  # stable: a rerun's the same


SPY = ROOT / "tests" / "bots" / "name_spy.py"


@pytest.mark.e2e
@pytest.mark.parametrize("declared", [False, True], ids=["no-teams", "teams"])
def test_nothing_a_bot_is_told_names_another_entry_or_a_team(tmp_path, declared):
    teams = {"zander": "team-orca", "yakko": "team-orca", "xerxes": "team-lynx", "wombat": "team-puma",
             "vulcan": "team-ibis"}
    bots = "".join(f'\n[[bots]]\nname = "{name}"\ncommand = ["python", "{SPY}", "--seed", "{i}"]\ncwd = "{ROOT}"\n'
                   + (f'team = "{team}"\n' if declared else "") for i, (name, team) in enumerate(teams.items()))
    path = write_tournament(tmp_path / "t.toml", bots, game="confirmation", deal_sets=2, seed=5, concurrency=2,
                            options="rounds = 1")
    done = run_cli("tournament", path, "--quiet", timeout=600)
    assert done.returncode == 0, done.stderr
    for name in teams:
        told = [line for line in (tmp_path / "out" / "logs" / f"{name}.log").read_text().splitlines()
                if not line.startswith("--- ")]  # the runner's own markers: the bot never reads its log
        spy = [json.loads(line[4:]) for line in told if line.startswith("SPY ")]
        messages = [json.loads(line) for line in told if line.startswith("{")]
        starts = [m["message"]["gameStart"] for m in messages if m["kind"] == "game_start"]
        assert spy and starts and any(m["kind"] == "request" for m in messages), "the spy did not report"
        assert all(s["seatNames"] == ["seat 0", "seat 1", "seat 2", "seat 3"] for s in starts)
        forbidden = [other for other in teams if other != name] + sorted(set(teams.values()))
        text = "\n".join(told)
        assert not [word for word in forbidden if word in text], name
