"""No channel between the processes of two entries through anything the runner controls (issue 35,
attacks 1 and 2).

An author may enter two bots. Their processes run in sandboxes of their own, but one machine's
kernel sees them both: before, what one sandbox did to a file every sandbox shows (a lock on one
of the referee's own read-only modules), another could see, and counts the kernel keeps per user
(every bot was root) moved for all.

- **At one table** (attack 1, ``tests/bots/hostile/partners.py``): two entries of one author (one
  directory, one program) sit at a Confirmation table with two honest entries, under ``isolation =
  "match"``, and each process publishes its hand of every round, as it is dealt, through every
  channel of the machine docs/security.md lists (locks, OFD locks, flock, leases, inotify, access
  times, /dev/null, its door, /dev/shm, abstract sockets, SysV IPC, the session keyring, process
  names, /proc/locks), and reads the other seats' hands through them while the match plays; and
  counts what others hold of its user's pipe buffers and pending signals. Before: 384 of 384
  partner hands read through POSIX locks. Now nothing is read, what others hold of its user's
  counts is nothing (a uid of its own), and the honest entries' results equal a control run's
  where the same two play without attacking (they play the first legal action either way).
- **In twin matches** (attack 2, ``tests/bots/hostile/channels.py --attack locks``): one process
  at a time of each *bot* did not stop two entries of one author: under ``concurrency = 2`` on
  Aegis each process of either entry published its hand through locks on a referee module and the
  other entry's process in the twin read its opponent's hand (192 of 192, before). Now none.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import ROOT, require_sandbox, run_cli, write_tournament

from referee import records
from referee.results.store import Store

pytestmark = pytest.mark.e2e

HOSTILE = ROOT / "tests" / "bots" / "hostile"
#: the channels of a hand (a slot per seat and round) and the counters of a user
SLOTS = ("posix", "ofd", "devnull", "door", "flock", "lease", "inotify", "atime", "shm", "abstract", "sysv",
         "keyring", "pids", "proclocks")
COUNTERS = ("pipes", "signals")
PIPE_PAGES_SLACK = 256  # what the count of pipe pages cannot tell apart (1 MB; the partner holds 8 MB)

TABLE = """
[clock]
decision_ms = 5000
bank_ms = 20000

[limits]
sandbox = "bwrap"

[[bots]]
name = "alice"
command = {command}
cwd = "author"

[[bots]]
name = "alice2"
command = {command}
cwd = "author"

[[bots]]
name = "honest1"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "honest1"

[[bots]]
name = "honest2"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
cwd = "honest2"
"""


def bot_game_id(record: dict) -> str:
    """The game id a stored match's bots were told (opaque: it names no entry), as they report it."""
    return record["meta"]["game_id"]


def lines(out: Path, bots: tuple[str, ...], kind: str) -> list[dict]:
    """The ``KIND {json}`` lines of these bots' logs, each with the bot's name."""
    found = []
    for bot in bots:
        for line in (out / "logs" / f"{bot}.log").read_text().splitlines():
            if line.startswith(kind + " "):
                found.append({**json.loads(line.split(" ", 1)[1]), "bot": bot})
    return found


def dealt(record: dict) -> dict[tuple[int, int], list[str]]:
    """Every seat's hand in every round of a Confirmation match, from its record."""
    hands, round_ = {}, 0
    for event in records.replay(record).state.events:
        if event.kind == "round":
            round_ = event.data["round"]
        elif event.kind == "deal":
            hands[(round_, event.seat)] = sorted(event.data)
    return hands


def honest_rows(store: Store) -> dict:
    """The honest entries' results, per match: seat, score, place and faults of each."""
    return {row.key: {bot: (seat := row.lineup.index(bot), row.scores[seat], row.placing[seat], row.faults[seat])
                      for bot in ("honest1", "honest2")} for row in store.matches()}


def table(tmp: Path, honest: bool) -> dict:
    require_sandbox()
    for name in ("author", "honest1", "honest2"):
        (tmp / name).mkdir(parents=True)
    shutil.copy(HOSTILE / "partners.py", tmp / "author")
    channels = [word for name in (*SLOTS, *COUNTERS) for word in ("--channel", name)]
    command = ["python", "partners.py", *(["--honest"] if honest else channels)]
    path = write_tournament(tmp / "t.toml", TABLE.format(command=json.dumps(command)), game="confirmation",
                            deal_sets=1, seed=35, concurrency=2, extra='isolation = "match"', options="rounds = 2")
    run = run_cli("tournament", path, "--quiet", "--bootstrap", "20", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp / "out"
    store = Store(out, create=False)
    try:
        honest_results = honest_rows(store)
        stored = [store.record(row.key) for row in store.matches()]
        hands = {bot_game_id(record): dealt(record) for record in stored}
        sandbox = store.meta("sandbox")
    finally:
        store.close()
    partners = ("alice", "alice2")
    return {kind: lines(out, partners, kind.upper()) for kind in ("published", "learned", "counted", "broken")} | {
        "honest": honest_results, "hands": hands, "sandbox": sandbox}


@pytest.fixture(scope="module")
def attack(tmp_path_factory) -> dict:
    return table(tmp_path_factory.mktemp("partners"), honest=False)


@pytest.fixture(scope="module")
def control(tmp_path_factory) -> dict:
    return table(tmp_path_factory.mktemp("partners-control"), honest=True)


def test_the_partners_tried_every_channel(attack):
    """The attack ran: each channel either carried its hands out (published every round by both
    entries) or was refused to the sender outright."""
    rounds = {(r["game_id"], r["round"]) for r in attack["published"]}
    assert len(rounds) == 4 * 2, rounds  # a deal set's 4 rotations x 2 rounds
    for via in SLOTS:  # by both entries, in (nearly) every round: a loaded host may leave one behind
        sent = {(r["bot"], r["game_id"], r["round"]) for r in attack["published"] if r["via"] == via}
        refused = [r for r in attack["broken"] if r["via"] == via]
        assert len(sent) >= 2 * len(rounds) * 3 // 4 or refused, (via, len(sent))
    assert {r["via"] for r in attack["counted"]} == set(COUNTERS)


def test_no_partner_reads_another_seats_hand(attack):
    """Before (POSIX locks on a referee module): every partner hand read, none wrong."""
    hands = attack["hands"]
    right = [r for r in attack["learned"] if sorted(r["hand"]) == hands[r["game_id"]][(r["round"], r["seat"])]]
    assert attack["learned"] == [], (len(right), attack["learned"][:5])


def test_no_other_process_holds_any_of_its_users_counts(attack):
    """Every bot process tree has a uid of its own: of its user's pipe buffers and pending signals
    it finds none held by another process (before, all bots were root: the partner's 8 MB of pipes
    and 20,000 signals, and every root process's, were there to read)."""
    counts = {via: [r["others"] for r in attack["counted"] if r["via"] == via] for via in COUNTERS}
    assert all(others < PIPE_PAGES_SLACK for others in counts["pipes"]), counts
    assert set(counts["signals"]) == {0}, counts
    assert "a uid and inodes of its own" in attack["sandbox"], attack["sandbox"]


def test_the_honest_entries_results_equal_the_control_runs(attack, control):
    assert len(attack["honest"]) == 4
    assert attack["honest"] == control["honest"]
    assert not control["published"] and not control["learned"]


# --- attack 2: twin matches, two entries ------------------------------------------------------------

TWINS = """
[clock]
decision_ms = 3000
bank_ms = 10000

[limits]
sandbox = "bwrap"

[[bots]]
name = "alice"
command = {command}
cwd = "author"

[[bots]]
name = "alice2"
command = {command}
cwd = "author2"

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "victim"

[[bots]]
name = "victim2"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
cwd = "victim2"
"""
VICTIMS = ("victim", "victim2")


def hands_in(record: dict, bot: str) -> dict[int, list[str]]:
    """A bot's hand in each deal of an Aegis match, from its record."""
    seat = record["seats"].index(bot)
    return {event.data["game"]: sorted(event.data["cards"]) for event in records.replay(record).state.events
            if event.kind == "hand" and event.seat == seat}


def twins(tmp: Path, honest: bool) -> dict:
    require_sandbox()
    for name in ("author", "author2", *VICTIMS):
        (tmp / name).mkdir(parents=True)
    for name in ("author", "author2"):
        shutil.copy(HOSTILE / "channels.py", tmp / name)
    shared = str(ROOT / "referee" / "cards.py")  # one of the referee's own modules: every sandbox shows it
    command = ["python", "channels.py", *(["--honest"] if honest else ["--attack", "locks", "--file", shared])]
    path = write_tournament(tmp / "t.toml", TWINS.format(command=json.dumps(command)), game="aegis", deal_sets=3,
                            seed=8, concurrency=2, extra='isolation = "match"')
    run = run_cli("tournament", path, "--quiet", "--bootstrap", "20", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp / "out"
    store = Store(out, create=False)
    try:
        rows = list(store.matches())
        victim = {(row.key, bot): (seat := row.lineup.index(bot), row.scores, row.placing, row.faults[seat])
                  for row in rows for bot in VICTIMS if bot in row.lineup}
        # what a partner's opponent held, where that opponent is a victim (the seat it did not play)
        played = [(row, store.record(row.key)) for row in rows
                  if any(b in VICTIMS for b in row.lineup) and len(set(row.lineup)) == 2]
        hands = {bot_game_id(record): hands_in(record, next(b for b in row.lineup if b in VICTIMS))
                 for row, record in played}
    finally:
        store.close()
    return {"learned": lines(out, ("alice", "alice2"), "LEARNED"), "victim": victim, "hands": hands}


@pytest.fixture(scope="module")
def twin_attack(tmp_path_factory) -> dict:
    return twins(tmp_path_factory.mktemp("twins"), honest=False)


@pytest.fixture(scope="module")
def twin_control(tmp_path_factory) -> dict:
    return twins(tmp_path_factory.mktemp("twins-control"), honest=True)


def test_two_entries_of_one_author_pass_no_hand_to_each_others_twin(twin_attack):
    """Before: every process of either entry read its opponent's hand in the twin (192 of 192)."""
    against_victim = [r for r in twin_attack["learned"] if r["game_id"] in twin_attack["hands"]]
    assert len({r["game_id"] for r in against_victim}) == 8 * 3  # the attack ran: every match against a victim
    read = [r for r in twin_attack["learned"] if r["opponent_hand"] is not None]
    right = [r for r in read if r["game_id"] in twin_attack["hands"]
             and sorted(r["opponent_hand"]) == twin_attack["hands"][r["game_id"]].get(r["deal"])]
    assert read == [], (len(right), read[:5])


def test_the_victims_results_in_the_twins_equal_the_control_runs(twin_attack, twin_control):
    assert len(twin_attack["victim"]) == 2 * 6 * 3  # each victim: 6 matches a deal set
    assert twin_attack["victim"] == twin_control["victim"]
    assert twin_attack["learned"] and not twin_control["learned"]
