"""No match is dealt from a deal set that anyone but the organiser may have seen (issue 34 item 1,
issue 35 item 5; docs/security.md, "Deals that may have been seen").

A deal set is seen once nothing held its records at some moment (a report could show them, a
referee's spectators got them) or the drawn master seed that deals it was printed. A new version
(``--rerun``), an entry back from the dead, a late entry: a match still to play on a seen deal set is
not played there; the run retires the deal set for every entry and plays a fresh one in its place,
from a secret seed. An entry that died for good holds, like one that did not start, every deal set
it would play on its return.

The first tests drive the store, the plan and the rule as a run does, with made-up results; the
last (e2e) are the attacks, with real bot processes in the sandbox: a resubmitted version that read
the published report, an entry that died at its first decision and came back, and one that did not
start on purpose and came back knowing the deals from the report (the red team's fourth round).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from harness import ROOT, random_bot, reports, require_sandbox, run_cli, tables, write_tournament

from referee import games, records
from referee.competition import config as tconfig
from referee.competition import gauntlet as tgauntlet
from referee.competition import growth
from referee.competition import run as trun
from referee.competition.schedule import missing, numbers
from referee.model import EntryStatus, deal_seed
from referee.results import release
from referee.results import rounds as stored
from referee.results.store import Store, StoreError

HOSTILE = ROOT / "tests" / "bots" / "hostile"
STRENGTH = ("a", "b", "c", "d", "dave", "late")  # who beats whom in the made-up results


def competition(tmp: Path, names=("a", "b", "dave"), deal_sets=2, drawn=True, extra="") -> Path:
    """A tournament file (Aegis, made-up bots); ``drawn``: no seed in it. The bots never start (their
    results are made up): their directory is an empty one, not the checkout, which each claim would
    hash and copy (a second of CPU a test)."""
    home = tmp / "bots"
    home.mkdir(exist_ok=True)
    text = "".join(f'\n[[bots]]\nname = "{n}"\ncommand = "python -m sample_bots.random"\ncwd = "{home}"\n'
                   for n in names)
    path = write_tournament(tmp / "t.toml", text, game="aegis", deal_sets=deal_sets, seed=3, concurrency=1,
                            extra=extra)
    if drawn:
        path.write_text(path.read_text().replace("seed = 3\n", ""))
    return path


def a_run(path: Path, rerun=(), stop_after: int | None = None, dies=()) -> list[str]:
    """What a run of ``path`` does to its directory, with made-up results (the stronger in
    :data:`STRENGTH` wins): claim it, keep its deals secret, play its plan (an adaptive one round
    after round) and end; ``stop_after`` matches: interrupted there; ``dies``: those entries die for
    good (absent = "withdraw") before they play. Returns what it announced."""
    said: list[str] = []
    cfg = trun.with_stored_seed(tconfig.load(path))
    store = trun.open_store(cfg, rerun, announce=said.append)
    try:
        plan = trun.planner(cfg, store)
        out = trun.out_for_good(store)
        trun.keep_deals_secret(cfg, store, plan, out, said.append)
        if dies:
            store.set_entries(EntryStatus.DEAD, dict.fromkeys(dies, "died at its first decision"))
            out |= set(dies)
            trun.keep_deals_secret(cfg, store, plan, out, said.append)
        played = 0
        while todo := missing(schedule := plan(out), store.done()):
            store.set_schedule(s.key for s in schedule.seatings)
            stored.record(store, schedule)
            for s in todo:
                if played == stop_after:
                    return said
                ranks = [STRENGTH.index(name) for name in s.lineup]
                store.save(s.key, s.deal_set, s.seed, s.lineup,
                           {"scores": [9 - r for r in ranks], "placing": [1 + sorted(ranks).index(r) for r in ranks]},
                           {}, 0.1)
                played += 1
        store.set_schedule(s.key for s in schedule.seatings)
        stored.record(store, schedule)
        trun.ended(store, plan)
    finally:
        store.close()
    return said


def opened(tmp: Path) -> Store:
    return Store(tmp / "out", create=False)


def test_a_resubmitted_version_plays_fresh_deal_sets_and_so_does_every_other_entry(tmp_path):
    path = competition(tmp_path)
    a_run(path)  # the run ends: its seed printed, its records free to publish
    store = opened(tmp_path)
    first = {row.key: row.deal_set for row in store.matches()}
    master = store.config()["seed"]
    assert store.seed_released() and release.seen(store) == {0, 1} and len(first) == 12
    store.close()

    said = a_run(path, rerun=["dave"])
    assert said == [
        "--rerun dave: its 8 stored match(es) are dropped, to be played again",
        "deal sets 0 and 1 retired: dave would play them (a new version, an entry back or a late one), and their "
        "deals may have been seen (a report or a referee's spectators may have shown their records, a printed "
        "master seed deals them): their 4 stored match(es) stay stored, not counted; every entry plays deal sets "
        "2 and 3 instead, dealt from a secret seed"]
    store = opened(tmp_path)
    try:
        config = store.config()
        [[start, later]] = config["later_seeds"]
        assert config["retired"] == [0, 1] and start == 2 and later != master
        counted = list(store.matches())
        # every entry plays the new deal sets against every other: a round robin on them alone
        assert {row.deal_set for row in counted} == {2, 3} and len(counted) == 12
        assert {frozenset(row.lineup) for row in counted} == {frozenset(p) for p in (("a", "b"), ("a", "dave"),
                                                                                      ("b", "dave"))}
        seeds = {row.key: int(store.db.execute("SELECT seed FROM matches WHERE key = ?", (row.key,)).fetchone()[0])
                 for row in store.matches(every=True)}
        assert all(seeds[row.key] == deal_seed(later, row.deal_set) for row in counted)
        assert not {seeds[row.key] for row in counted} & {deal_seed(master, k) for k in range(4)}
        # the others' matches on the retired deal sets stay stored, not counted; dave's old ones are dropped
        assert sorted(k for k, d in seeds.items() if d not in (row.key for row in counted) and
                      int(k.split(":")[0]) < 2) == ["0:a|b", "0:b|a", "1:a|b", "1:b|a"]
        assert store.seed_released()  # the run ended, nothing held: the new seed printed with the old
    finally:
        store.close()
    assert a_run(path) == []  # the same version again: nothing retired, nothing to play
    store = opened(tmp_path)
    try:
        assert store.config()["later_seeds"] == [[2, later]] and store.count() == 12
    finally:
        store.close()


def test_a_late_entry_on_seen_deal_sets_retires_them_for_everyone(tmp_path):
    a_run(competition(tmp_path, ("a", "b")))
    said = a_run(competition(tmp_path, ("a", "b", "late")))
    assert said[-1].startswith("deal sets 0 and 1 retired: late would play them") and "deal sets 2 and 3" in said[-1]
    store = opened(tmp_path)
    try:
        assert {row.deal_set for row in store.matches()} == {2, 3} and store.count() == 12
    finally:
        store.close()


def test_with_a_seed_given_in_the_file_nothing_is_retired(tmp_path):
    """No secret to keep: a new version plays the same deal sets (the run says so: tests/test_growth.py)."""
    path = competition(tmp_path, drawn=False)
    a_run(path)
    assert a_run(path, rerun=["dave"]) == ["--rerun dave: its 8 stored match(es) are dropped, to be played again"]
    store = opened(tmp_path)
    try:
        assert "retired" not in store.config() and {row.deal_set for row in store.matches()} == {0, 1}
    finally:
        store.close()


def test_an_interrupted_run_retires_only_the_deal_sets_nothing_held(tmp_path):
    """Deal set 0 was over (a report could show it), deal set 1 was not (held): a new version plays
    deal set 1 and a fresh one, the seed still secret (the run did not end: not printed)."""
    path = competition(tmp_path)
    a_run(path, stop_after=8)  # deal set 0's 6 matches and 2 of deal set 1's
    said = a_run(path, rerun=["dave"])
    assert said[-1].startswith("deal set 0 retired: dave would play it") and "deal set 2 instead" in said[-1]
    store = opened(tmp_path)
    try:
        config = store.config()
        assert config["retired"] == [0] and "later_seeds" not in config  # the seed was never printed
        assert {row.deal_set for row in store.matches()} == {1, 2} and store.count() == 12
        assert all(row.key in store.done() for row in store.matches())
    finally:
        store.close()


def test_an_entry_dead_for_good_holds_every_deal_set_it_would_play_on_its_return(tmp_path):
    """Issue 35 item 5: dying does not release the deals to the one who died. Nothing of its deal
    sets is free, the seed is not printed; brought back by --rerun it plays them, still secret."""
    path = competition(tmp_path)
    a_run(path, dies=["dave"])
    store = opened(tmp_path)
    try:
        held = release.held_in(store)
        assert [held.holds(k) for k in (0, 1)] == [True, True] and not store.seed_released()
        assert held.why(0) == ("held while dave died for good (--rerun brings it back, on every deal set it has "
                               "matches of): released once it has played its matches, or is withdrawn (withdrawn "
                               "= true)")
        assert release.seen(store) == set() and store.count() == 4  # a and b played all theirs
    finally:
        store.close()
    assert a_run(path, rerun=["dave"]) == ["--rerun dave: its 0 stored match(es) are dropped, to be played again"]
    store = opened(tmp_path)
    try:
        assert "retired" not in store.config() and store.count() == 12 and store.seed_released()
    finally:
        store.close()


def test_a_withdrawn_dead_entry_releases_its_deal_sets_and_one_back_then_plays_fresh_ones(tmp_path):
    path = competition(tmp_path)
    a_run(path, dies=["dave"])
    text = path.read_text()
    path.write_text(text.replace('name = "dave"\ncommand', 'name = "dave"\nwithdrawn = true\ncommand'))
    a_run(path)
    store = opened(tmp_path)
    try:
        assert store.seed_released() and release.seen(store) == {0, 1}
    finally:
        store.close()
    path.write_text(text)  # back from withdrawal: on deal sets that may have been seen, no more
    said = a_run(path)
    assert said[-1].startswith("deal sets 0 and 1 retired: dave would play them")


def test_an_adaptive_tournament_drops_the_rounds_a_new_version_would_replay(tmp_path):
    path = competition(tmp_path, ("a", "b", "c", "dave"),
                       extra='schedule = "adaptive"\nstop = "order"\nmax_deal_sets = 6')
    path.write_text(path.read_text().replace("deal_sets = 2\n", ""))
    a_run(path)
    store = opened(tmp_path)
    rounds = stored.stored_rounds(store)
    store.close()
    assert len(rounds) == 6  # the cap: made-up results settle nothing with so few deal sets
    with_dave = {r.deal_set for r in rounds if any("dave" in t for t in r.tables)}
    said = a_run(path, rerun=["dave"])
    assert said[-1].startswith(f"deal set{'s' if len(with_dave) > 1 else ''} ")
    store = opened(tmp_path)
    try:
        now = stored.stored_rounds(store)
        assert store.config()["retired"] == sorted(with_dave)
        assert not {r.deal_set for r in now} & with_dave and len(now) == 6
        assert [r.deal_set for r in now if r.deal_set >= 6] == list(range(6, 6 + len(with_dave)))
        [[start, later]] = store.config()["later_seeds"]
        assert start == 6 and all(row.key in store.done() for row in store.matches())
        assert {row.deal_set for row in store.matches()} == {r.deal_set for r in now}
    finally:
        store.close()


def test_a_gauntlet_and_a_growing_file_count_deal_sets_without_the_retired(tmp_path):
    cfg = tconfig.load(competition(tmp_path, deal_sets=2))
    g = tgauntlet.GauntletConfig(cfg, "dave", "duel")
    assert {s.deal_set for s in tgauntlet.make_schedule(g).seatings} == {0, 1}
    g = tgauntlet.GauntletConfig(cfg.with_deals({"retired": [0, 1]}), "dave", "duel")
    assert {s.deal_set for s in tgauntlet.make_schedule(g).seatings} == {2, 3}
    assert numbers(3, {1, 2}) == [0, 3, 4]
    path = competition(tmp_path)
    a_run(path)
    a_run(path, rerun=["dave"])  # deal sets 0 and 1 retired, 2 and 3 played
    store = opened(tmp_path)
    try:
        bots = store.config()["bots"]
        assert growth.check(store, bots, 2, [0, 1]) is None
        with pytest.raises(StoreError,
                           match=r"holds matches of 2 deal sets \(and 2 retired\), more than deal_sets = 1"):
            growth.check(store, bots, 1, [0, 1])
    finally:
        store.close()
    assert "grows: deal sets 2 -> 3" in a_run(competition(tmp_path, deal_sets=3))[0]
    store = opened(tmp_path)
    try:
        assert {row.deal_set for row in store.matches()} == {2, 3, 4}
    finally:
        store.close()


def test_a_run_holds_and_notes_what_a_death_and_a_deal_set_over_leave():
    from referee.model import Seating
    from referee.results.release import Releases

    s = [Seating(k, 100 + k, lineup) for k in range(2) for lineup in (("a", "b"), ("b", "a"))]
    releases = Releases(s)
    assert not releases.over(0) and releases.stored(s[0]) == [] and releases.stored(s[1]) == [s[0].key, s[1].key]
    assert releases.over(0)
    releases.hold([1])  # an entry of deal set 1 died for good: it would play it again
    assert [releases.stored(x) for x in s[2:]] == [[], []] and not releases.over(1)


@pytest.mark.e2e
def test_a_deal_set_over_before_a_death_stays_seen_and_one_after_stays_secret(tmp_path):
    """The run notes a deal set as seen the moment it is over (a report could show it from then
    on), before the entry that dies later holds it again: brought back, that entry plays the deal
    sets it never left free (1 and 2) and a fresh one in place of the one that was (0)."""
    (tmp_path / "dies").mkdir()
    bot = tmp_path / "dies" / "bot.py"
    bot.write_text("import os, sys\nfrom referee.bot import run_bot\n\n"
                   "def decide(obs, legal, game):\n"
                   "    if game.game_id.split(':')[0].split('/')[-1] != '0':\n"
                   "        os._exit(1)  # from deal set 1 on, every time\n"
                   "    return 0\n\nrun_bot(decide)\n")
    tables = '\n[limits]\nsandbox = "none"\n' + "".join(
        f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{cwd}"\n' for name, command, cwd in (
            ("a", ["python", "-m", "sample_bots.random", "--seed", "1"], ROOT),
            ("b", ["python", "-m", "sample_bots.random", "--seed", "2"], ROOT),
            ("dies", ["python", "bot.py"], tmp_path / "dies")))
    path = write_tournament(tmp_path / "t.toml", tables, game="aegis", deal_sets=3, seed=1, concurrency=1,
                            extra='absent = "withdraw"')
    path.write_text(path.read_text().replace("seed = 1\n", ""))
    first = run_cli("tournament", path, "--quiet", "--bootstrap", "0")
    assert first.returncode == 5 and "withdrawn: bot dies died" in first.stderr, first.stderr
    assert "master seed: not printed" in first.stderr
    store = opened(tmp_path)
    try:
        assert release.seen(store) == {0} and release.held_in(store).holds(1) and release.held_in(store).holds(2)
    finally:
        store.close()
    bot.write_text(bot.read_text().replace("!= '0'", "== 'never'"))  # fixed: a new version
    second = run_cli("tournament", path, "--quiet", "--bootstrap", "0", "--rerun", "dies")
    assert second.returncode == 0, second.stderr
    assert re.search(r"deal set 0 retired: dies would play it .*; every entry plays deal set 3 instead",
                     second.stderr), second.stderr
    store = opened(tmp_path)
    try:
        assert {row.deal_set for row in store.matches()} == {1, 2, 3} and store.count() == 18
    finally:
        store.close()


# --- the attacks: real bot processes, in the sandbox --------------------------------------------------


def attack_competition(tmp: Path, bot: str, deals: dict | None, seed: int | None = None) -> Path:
    """The victim, a third bot and the hostile ``entrant`` (``tests/bots/hostile/BOT``, its
    ``deals.json`` holding ``deals`` if not None) on two deal sets of Aegis, in bubblewrap, a fresh
    process per match, absent = "withdraw"; the seed drawn (or ``seed``, given)."""
    require_sandbox()
    for name in ("victim", "third", "entrant"):
        (tmp / name).mkdir(parents=True, exist_ok=True)
    shutil.copy(HOSTILE / bot, tmp / "entrant" / bot)
    if deals is not None:
        (tmp / "entrant" / "deals.json").write_text(json.dumps(deals))
    bots = tables(random_bot("victim", 1), random_bot("third", 2), ("entrant", ["python", bot], "entrant"))
    path = write_tournament(tmp / "t.toml", bots, game="aegis", deal_sets=2, seed=seed or 1, concurrency=1,
                            extra='isolation = "match"\nabsent = "withdraw"')
    if seed is None:
        path.write_text(path.read_text().replace("seed = 1\n", ""))
    return path


def hands_from_seed(master: int, deal_sets: range) -> dict[str, list[list[str]]]:
    """What anyone who read a printed master seed computes: each deal set's hands of the first game, by seat."""
    known = {}
    for k in deal_sets:
        events = games.get("aegis").new({}, seed=deal_seed(master, k)).events
        by_seat = {e.seat: e.data["cards"] for e in events if e.kind == "hand" and e.data["game"] == 1}
        known[str(k)] = [by_seat[0], by_seat[1]]
    return known


def what_was_given_out(out: Path, stderr: str) -> dict[str, list[list[str]]]:
    """Every hand the entrant can learn after a run: the report the organiser publishes, and the
    master seeds the run printed (each deal set's hands computed from them)."""
    published = run_cli("view", out, "--bootstrap", "0")
    assert published.returncode == 0, published.stderr
    known = published_hands(out / "report" / "replays")
    for line in stderr.splitlines():
        if found := re.match(r"master seed: (\d+)", line):
            firsts = [0, *(int(k) for k in re.findall(r"deal sets from (\d+) on", line)), 10 ** 6]
            seeds = [int(found.group(1)), *(int(s) for s in re.findall(r"on: seed (\d+)", line))]
            for (first, after), seed in zip(zip(firsts, firsts[1:]), seeds):
                known.update({k: v for k, v in hands_from_seed(seed, range(first, min(after, 8))).items()
                              if k not in known})
    return known


def opponents_known(out: Path) -> tuple[list[dict], dict[str, list[str]]]:
    """The entrant's LEARNED reports, and the truth: its opponent's hand in the first game of each
    of its matches that count."""
    store = Store(out, create=False)
    try:
        truth = {}
        for row in store.matches():
            if "entrant" in row.lineup:
                opponent = 1 - row.lineup.index("entrant")
                record = store.record(row.key)  # keyed by the game id its bots were told (meta.game_id)
                truth[record["meta"]["game_id"]] = next(e.data["cards"] for e in records.replay(record).state.events
                                      if e.kind == "hand" and e.seat == opponent and e.data["game"] == 1)
    finally:
        store.close()
    return reports(out / "logs" / "entrant.log", "LEARNED"), truth


def first_hands(out: Path, key: str) -> list[list[str]]:
    """The hands of a stored match's first game, by seat."""
    store = Store(out, create=False)
    try:
        events = records.replay(store.record(key)).state.events
    finally:
        store.close()
    by_seat = {e.seat: e.data["cards"] for e in events if e.kind == "hand" and e.data["game"] == 1}
    return [by_seat[0], by_seat[1]]


def right(learned: list[dict], truth: dict[str, list[str]]) -> list[dict]:
    return [r for r in learned
            if r["opponent_hand"] and sorted(r["opponent_hand"]) == sorted(truth.get(r["game_id"], []))]


def stored_seeds(out: Path) -> dict[str, int]:
    store = Store(out, create=False)
    try:
        return {key: int(seed) for key, seed in store.db.execute("SELECT key, seed FROM matches")}
    finally:
        store.close()


def results(out: Path) -> dict[str, tuple]:
    """Every match that counts: its scores, placing and faults, by key."""
    store = Store(out, create=False)
    try:
        return {r.key: (r.scores, r.placing, r.faults) for r in store.matches()}
    finally:
        store.close()


@pytest.mark.e2e
def test_a_resubmitted_version_learns_nothing_from_the_published_report_and_seed(tmp_path):
    """Issue 34 item 1. The entrant plays honestly, the run ends and prints its seed, the organiser
    publishes the report; its author reads every hand there (and computes them from the seed) and
    resubmits (--rerun). Its new version plays no deal set that was given out: the run retires them,
    every entry plays two fresh ones, dealt from a new secret seed, and it knows none of its
    opponents' hands. Before, it replayed deal sets 0 and 1 knowing every one of them."""
    path = attack_competition(tmp_path, "late.py", {})  # its first version: deals.json knows nothing
    first = run_cli("tournament", path, "--quiet", "--bootstrap", "20")
    assert first.returncode == 0 and re.search(r"master seed: \d+", first.stderr), first.stderr
    out = tmp_path / "out"
    before = stored_seeds(out)
    known = what_was_given_out(out, first.stderr)
    assert {"0", "1"} <= set(known) and all(len(hand) == 5 for hands in known.values() for hand in hands)
    assert published_hands(out / "report" / "replays") == {k: known[k] for k in ("0", "1")}  # the seed agrees
    (tmp_path / "entrant" / "deals.json").write_text(json.dumps(known))  # a new version, tuned to those deals
    second = run_cli("tournament", path, "--quiet", "--bootstrap", "20", "--rerun", "entrant")
    assert second.returncode == 0, second.stderr
    learned, truth = opponents_known(out)
    assert len(truth) == 8 and {r["game_id"] for r in learned} >= set(truth)  # it played all its matches
    assert right(learned, truth) == [], f"{len(right(learned, truth))} of {len(truth)} opponents' hands known"
    assert ("deal sets 0 and 1 retired: entrant would play them (a new version, an entry back or a late one)"
            in second.stderr and "every entry plays deal sets 2 and 3 instead, dealt from a secret seed"
            in second.stderr), second.stderr
    new = {key: seed for key, seed in stored_seeds(out).items() if key not in before}
    assert len(new) == 12 and not set(new.values()) & set(before.values())  # no new match on a deal given out
    assert all(first_hands(out, key) != known.get(key.split(":")[0]) for key in new)
    counted = results(out)
    assert set(counted) == set(new)  # the standings: every entry on the new deal sets, a round robin of them
    assert re.search(r"master seed: \d+ .*; deal sets from 2 on: seed \d+", second.stderr), second.stderr


@pytest.mark.e2e
def test_an_entry_that_died_at_its_first_decision_learns_nothing_when_it_comes_back(tmp_path):
    """Issue 35 item 5. Under absent = "withdraw" the entrant passes its start-up check, then dies at
    its first decision, every time: dead, out for good, the others play on. Before, nothing was held
    for it: the run printed the master seed and the report published every replay, and brought back
    with --rerun it knew its opponent's hand in its matches. Now every deal set it would play on
    its return is held (no replay, no seed): it comes back knowing nothing. The control, where it
    plays from the start on the same deals, gives every match the same results."""
    path = attack_competition(tmp_path / "attack", "comeback.py", None)
    first = run_cli("tournament", path, "--quiet", "--bootstrap", "20")
    assert first.returncode == 5 and "withdrawn: bot entrant died" in first.stderr, first.stderr
    out = tmp_path / "attack" / "out"
    known = what_was_given_out(out, first.stderr)
    (tmp_path / "attack" / "entrant" / "deals.json").write_text(json.dumps(known))  # "fixed": a new version
    second = run_cli("tournament", path, "--quiet", "--bootstrap", "20", "--rerun", "entrant")
    assert second.returncode == 0, second.stderr
    learned, truth = opponents_known(out)
    assert len(truth) == 8 and {r["game_id"] for r in learned} >= set(truth)
    assert right(learned, truth) == [], f"{len(right(learned, truth))} of {len(truth)} opponents' hands known"
    assert known == {} and "retired" not in second.stderr  # nothing was given out: its deal sets, still secret
    assert "master seed: not printed: it deals every deal set, and records are held while entrant died for " \
           "good" in first.stderr
    store = Store(out, create=False)
    master = store.config()["seed"]
    store.close()
    control_path = attack_competition(tmp_path / "control", "comeback.py", {}, seed=master)
    control = run_cli("tournament", control_path, "--quiet", "--bootstrap", "20")
    assert control.returncode == 0, control.stderr
    assert results(out) == results(tmp_path / "control" / "out")


# --- an entry that did not start, back knowing the deals (the red team's fourth round) -----------


def published_hands(replays: Path) -> dict[str, list[list[str]]]:
    """What the entrant reads in the published report: each deal set's hands of the first game, by
    seat, from the replay pages' data (their first step shows every hand)."""
    known = {}
    for page in sorted(replays.glob("*.html")):
        found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page.read_text(), re.S)
        if found is None:
            continue
        data = json.loads(found.group(1).replace("<\\/", "</"))
        seats = data["steps"][0]["frame"]["seats"]
        if all(seat.get("hand") for seat in seats):
            known.setdefault(data["match"].split(":")[0], [seat["hand"] for seat in seats])
    return known


def late_competition(tmp_path: Path, starts: bool) -> tuple[Path, subprocess.CompletedProcess]:
    """The victim, a third bot and late on one deal set of Aegis under absent = "withdraw": its
    first run, in which late does not start (or, ``starts``, does: it has its data from the first)."""
    require_sandbox()
    for name in ("victim", "third", "late"):
        (tmp_path / name).mkdir(parents=True)
    shutil.copy(HOSTILE / "late.py", tmp_path / "late")
    if starts:
        (tmp_path / "late" / "deals.json").write_text("{}")
    bots = tables(random_bot("victim", 1), random_bot("third", 2), ("late", ["python", "late.py"], "late"))
    path = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=1, seed=8, concurrency=1,
                            extra='isolation = "match"\nabsent = "withdraw"')
    return path, run_cli("tournament", path, "--quiet", "--bootstrap", "20")


def match_results(out: Path) -> dict[str, tuple]:
    """Every stored match's scores, placing and faults, by key."""
    store = Store(out, create=False)
    try:
        return {r.key: (r.scores, r.placing, r.faults) for r in store.matches()}
    finally:
        store.close()


@pytest.mark.e2e
def test_an_entry_that_did_not_start_learns_nothing_from_the_report(tmp_path):
    """The report holds back every record while an entry did not start (it may come back and play
    any deal set): listed with their results, no replay. Once it has played, they are released.
    The control, where late starts in the first run, gives every match the same results."""
    path, first = late_competition(tmp_path / "attack", starts=False)
    assert first.returncode == 5, first.stderr  # late did not start: withdrawn, the others played
    published = run_cli("view", tmp_path / "attack" / "out")  # the organiser publishes the report
    assert published.returncode == 0, published.stderr
    report = tmp_path / "attack" / "out" / "report"
    index = (report / "index.html").read_text()
    assert "(replay held)" in index and "held while late did not start" in index  # listed, saying why
    assert index.count("(replay held)") == 2 and "0:third|victim" in index  # with their results
    known = published_hands(report / "replays")
    (tmp_path / "attack" / "late" / "deals.json").write_text(json.dumps(known))  # the entrant "fixes" its bot
    second = run_cli("tournament", path, "--quiet", "--bootstrap", "20")  # the next run tries it again
    assert second.returncode == 0, second.stderr
    learned = reports(tmp_path / "attack" / "out" / "logs" / "late.log", "LEARNED")
    store = Store(tmp_path / "attack" / "out", create=False)
    try:
        truth = {}
        for row in store.matches():
            if "late" in row.lineup:
                record = store.record(row.key)
                opponent = 1 - row.lineup.index("late")
                truth[record["meta"]["game_id"]] = next(e.data["cards"] for e in records.replay(record).state.events
                                      if e.kind == "hand" and e.seat == opponent and e.data["game"] == 1)
    finally:
        store.close()
    assert len(learned) == len(truth) == 4  # it played all its matches
    right = [r for r in learned if r["opponent_hand"] and sorted(r["opponent_hand"]) == sorted(truth[r["game_id"]])]
    assert right == [], f"{len(right)} of {len(learned)} opponents' hands known before the match"
    assert run_cli("view", tmp_path / "attack" / "out").returncode == 0  # late has played: nothing is held
    assert len(published_hands(report / "replays")) == 1 and len(list((report / "replays").glob("*.html"))) == 6
    _, control = late_competition(tmp_path / "control", starts=True)
    assert control.returncode == 0, control.stderr
    assert match_results(tmp_path / "attack" / "out") == match_results(tmp_path / "control" / "out")
