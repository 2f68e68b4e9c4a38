"""No channel between the processes of one bot under isolation = "match" (issue 24, attacks 1 and 2).

Every match gets fresh bot processes, each in its own sandbox, and a deal set's two matches are
the same deals with the seats swapped: what a bot holds in one is its opponent's hand in the
other. The hostile bot (tests/bots/hostile/channels.py) tries to pass its hands from one of its
processes to the next, in a real tournament under bubblewrap, two ways that worked before:

- **locks relayed** (attack 1): its processes publish their hands as POSIX locks on their own
  read-only program file, and every process takes the hands it sees as its own, so that they
  outlive their publisher; held by a process playing another deal set meanwhile, they reached
  the twin. Before the defence (one match of a deal set at a time was the only rule) it learned
  hands in every run at concurrency 2 (12 of 39 deals on 4 deal sets), none wrong. The defence:
  no two processes of one bot run it at once (no two matches sharing a launched bot play
  together, ``Executor._holds``, and the next process runs the bot only once the last and its
  sandbox are gone: prepared meanwhile, it runs only the referee's starter).
- **a run-wide count** (attack 2): in the first match of a deal set it opens as many extra
  sessions as encode the first card it was dealt; in the twin it reads the count in its own
  ``session_id`` (``s{N}``). Before the defence: 4 of 4 twins, every card right. The defence:
  session ids (and every other id a bot sees) are random; and since (issue 35) a process's
  sessions may offer no more seats than it plays, so that its extra sessions are not let in at all.

A third attack (tests/bots/hostile/early.py) plants code where a Python start-up runs it, or the
dynamic loader (a library named by LD_PRELOAD in its ``env``, the red team's: it ran in the
prepared process before its token, and carried a hand's checksum to the twin's process through
the machine's thread count, before the bot's ``env`` was kept for its own command), so that the
process prepared for the bot's next match (started while its last one plays,
referee/hosting/starter.py) would run it before its turn: it must run only once the last process
is gone, in every process.

The first two must learn nothing here, though the attack ran (it published, relayed and sent); a control
run, where the same bot plays honestly (its play is the same: always the first legal action),
must give the victim exactly the same results."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, require_kit, require_sandbox, run_cli, victim_hands, write_tournament

from referee.results.store import Store

pytestmark = pytest.mark.e2e

DEAL_SETS = 3
BOTS = """
[clock]
decision_ms = 3000
bank_ms = 10000

[limits]
sandbox = "bwrap"

[[bots]]
name = "{name}"
command = {command}
cwd = "attacker"
{env}

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "victim"
"""


def play(tmp: Path, name: str, command: list[str], env: str = "") -> Store:
    """A tournament of the attacker (``name``, its ``command`` run in ``tmp/attacker``, ``env``: a line
    of its table) against the victim; its store."""
    path = write_tournament(tmp / "t.toml", BOTS.format(name=name, command=json.dumps(command), env=env),
                            game="aegis", deal_sets=DEAL_SETS, seed=8, concurrency=2, extra='isolation = "match"')
    run = run_cli("tournament", path, "--quiet", "--bootstrap", "20", timeout=400)
    assert run.returncode == 0, run.stderr
    return Store(tmp / "out", create=False)


def victim_results(store: Store) -> dict:
    """The victim's seat, scores, placing and faults in each match, by the match's key."""
    return {row.key: (row.lineup.index("victim"), row.scores, row.placing, row.faults) for row in store.matches()}


def tournament(tmp, honest: bool) -> dict:
    """The attacker's reports (LEARNED and SENT lines), the victim's results and its hands per
    match and deal (from the records), and the bots' starts."""
    require_sandbox()
    for name in ("attacker", "victim"):
        (tmp / name).mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "bots" / "hostile" / "channels.py", tmp / "attacker")
    command = ["python", "channels.py", *(["--honest"] if honest else ["--attack", "locks", "--attack", "sessions"])]
    store = play(tmp, "channels", command)
    lines = [line for log in (tmp / "out" / "logs").glob("channels*.log") for line in log.read_text().splitlines()]
    try:
        victim = victim_results(store)
        # by the game id the bots are told (the record's), which names no bot
        hands = {(record := store.record(row.key))["meta"]["game_id"]: victim_hands(record) for row in store.matches()}
        starts = json.loads(store.meta("launcher"))
    finally:
        store.close()
    return {"learned": [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("LEARNED ")],
            "sent": [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("SENT ")],
            "victim": victim, "hands": hands, "starts": starts}


@pytest.fixture(scope="module")
def attack(tmp_path_factory) -> dict:
    return tournament(tmp_path_factory.mktemp("attack"), honest=False)


@pytest.fixture(scope="module")
def control(tmp_path_factory) -> dict:
    return tournament(tmp_path_factory.mktemp("control"), honest=True)


def right(report: dict, hands: dict) -> bool:
    """Whether what the attacker read is the victim's hand (or a card of it) in that match and deal."""
    truth = hands[report["game_id"]].get(report["deal"], [])
    if report["via"] == "locks":
        return report["opponent_hand"] is not None and sorted(report["opponent_hand"]) == sorted(truth)
    return report["opponent_card"] is not None and report["opponent_card"] in truth


def test_locks_relayed_through_a_concurrent_match_carry_no_hand(attack):
    reports = [r for r in attack["learned"] if r["via"] == "locks"]
    assert len({(r["game_id"], r["deal"]) for r in reports}) >= 2 * DEAL_SETS * 3  # every deal (3+ a match)
    assert [r for r in reports if r["opponent_hand"] is not None] == []
    assert not any(right(r, attack["hands"]) for r in reports)


def test_no_count_over_the_run_carries_a_card(attack):
    sent = attack["sent"]
    assert len(sent) == DEAL_SETS and all(s["tried"] > 0 for s in sent), sent  # the sender did its part
    assert all(s["sessions"] == 0 for s in sent), sent  # none let in: a process plays one seat, and has a session
    reports = [r for r in attack["learned"] if r["via"] == "sessions"]
    assert len(reports) == DEAL_SETS, reports
    assert not any(right(r, attack["hands"]) for r in reports), reports
    assert all(r["opponent_card"] is None for r in reports), reports  # no count to read in a random id


def test_the_victims_results_equal_the_control_runs(attack, control):
    assert len(attack["victim"]) == 2 * DEAL_SETS
    assert attack["victim"] == control["victim"]
    assert attack["learned"] and not control["learned"]
    # a process per match of each bot, and the start-up check's: none died
    for run in (attack, control):
        assert run["starts"]["victim"]["starts"] == 2 * DEAL_SETS + 1 and not run["starts"]["victim"]["exits"]


# --- the attack: code planted to run in the prepared process before its token -------------------

def early_run(tmp: Path, attack: str | None) -> tuple[list[dict], dict]:
    """A tournament of the early bot (``attack``: "files", planted; "env": planted and PYTHONPATH=.;
    "native": planted, and early.so built and preloaded through LD_PRELOAD; None: the control,
    nothing planted) against a random victim: its reports, and the victim's results."""
    require_sandbox()
    for name in ("attacker", "victim"):
        (tmp / name).mkdir(parents=True)
    bot = ROOT / "tests" / "bots" / "hostile" / "early.py"
    (tmp / "attacker" / "early.py").write_text(bot.read_text())
    env = ""
    if attack == "native":
        compiler = next((c for c in ("cc", "gcc", "g++") if shutil.which(c)), None)
        require_kit(None if compiler is not None else "no C compiler (cc, gcc or g++) to build early.so")
        subprocess.run([sys.executable, bot, "--plant", tmp / "attacker", "--native", compiler], check=True)
        env = f'env = {{ LD_PRELOAD = "{tmp / "attacker" / "early.so"}" }}'
    elif attack is not None:
        subprocess.run([sys.executable, bot, "--plant", tmp / "attacker"], check=True)
        env = 'env = { PYTHONPATH = "." }' if attack == "env" else ""
    store = play(tmp, "early", ["python", "early.py"], env)
    try:
        victim = victim_results(store)
    finally:
        store.close()
    lines = (tmp / "out" / "logs" / "early.log").read_text().splitlines()
    reports = [{"kind": line.split(" ", 1)[0], **json.loads(line.split(" ", 1)[1])} for line in lines
               if line.split(" ", 1)[0] in ("EARLY", "FIRST", "LAST")]
    return reports, victim


def processes_began(processes: dict[tuple[float, int], dict[str, list[float]]], process: dict) -> list[float]:
    """When ``process`` (one of ``processes``) began."""
    return [began for (began, _), p in processes.items() if p is process]


@pytest.fixture(scope="module")
def early_control(tmp_path_factory):
    return early_run(tmp_path_factory.mktemp("control"), None)


@pytest.mark.parametrize("attack", ["files", "env", "native"])
def test_code_planted_to_run_before_the_token_runs_only_once_the_last_process_is_gone(tmp_path, attack, early_control):
    reports, victim = early_run(tmp_path, attack)
    processes: dict[tuple[float, int], dict[str, list[float]]] = {}
    for r in reports:
        processes.setdefault((r["began"], r["pid"]), {}).setdefault(r["kind"], []).append(r["at"])
    runs = sorted(processes.values(), key=lambda p: min(p.get("FIRST", [float("inf")])))
    assert all("FIRST" in p for p in runs), "a planted file ran in a process where the bot never did"
    early = [at for p in runs for at in p.get("EARLY", [])]
    assert early, "the attack ran: planted code did run (after its token)"
    if attack in ("env", "native"):
        assert all("EARLY" in p for p in runs), "every process ran what its environment preloads"
    # the start-up check's process is stopped once connected: it says no LAST
    assert "LAST" not in runs[0] and all("LAST" in p for p in runs[1:])
    prepared = [after for before, after in zip(runs[1:], runs[2:])
                if min(processes_began(processes, after)) < max(before["LAST"])]
    assert prepared, "no process was prepared while the last one played: the test proves nothing"
    for before, after in zip(runs[1:], runs[2:]):
        assert min(after["EARLY"] + after["FIRST"] if "EARLY" in after else after["FIRST"]) > max(before["LAST"]), \
            "planted code ran in a process of the bot while the last one still played"
    assert victim == early_control[1], "the victim's results are the control run's"
