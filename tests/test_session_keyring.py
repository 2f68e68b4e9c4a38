"""What one process of a bot leaves for its twin (the match on the same deals, seats swapped)
through the runner's **session keyring**, and through the replay pages; attacks of the red team's
fourth round (after issues 24 to 26; docs/security.md has each attack's row).

The hostile bot (``tests/bots/hostile/entrant.py``) plays a tournament through the CLI in the real
sandbox (``sandbox = "bwrap"``, ``isolation = "match"``, the mode meant for strangers) against a
victim, one match at a time, every match's twin right after it. The runner runs here under
``tests/bots/hostile/session_keyring.py``, as under a login or a systemd service: every launched
process inherits its session keyring. Through it the attacker tried to pass every hand to the
twin, to read the organiser's own key, and to leave 25 MB in the keyring (now refused: the
prelude's seccomp filter, /proc/keys masked). It also passes a value through **when its process
ends**: its twin reads it from the wall-clock phase of its own start (an open channel, measured by
``tests/bots/hostile/figures.py --only clock``: docs/security.md). Its malformed answer
``<!--<script>`` killed the **replay pages** of every match it plays (now escaped). The control
run, where the same bot plays honestly (it plays the first legal action either way), gives the
victim exactly the same results: none of it shows in the standings.

The other attacks of that round are tested beside their feature: what runs without being in the
version in tests/test_versions.py, an entry that did not start and comes back knowing the deals in
tests/test_fresh_deals.py.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import HOSTILE, ROOT, random_bot, reports, require_sandbox, run_cli, store_view, tables, write_tournament
from test_view_browser import browser  # noqa: F401  (the module's browser, a fixture)

TWINS = 6  # deal sets: a match and its twin each
LEVELS = 2  # values the clock carries a twin here: 1 bit, read right however loaded the machine
# (tests/bots/hostile/figures.py measures 2 to 4 bits: the runner's own delay varies by some 0.1 s)


def keyring_usable() -> str | None:
    """Why this process cannot have a session keyring (a seccomp profile refusing keyctl, as
    Docker's default does: there the runner has none to pass on), or None."""
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
    if keyctl is None:
        return f"no keyctl system call known for {os.uname().machine}"
    if libc.syscall(keyctl, 0, ctypes.c_int(-3), 0) < 0:  # KEYCTL_GET_KEYRING_ID of the session keyring
        return f"no session keyring can be had here ({os.strerror(ctypes.get_errno())})"
    return None


def require_keyring() -> None:
    if (why := keyring_usable()) is not None:
        if os.environ.get("REFEREE_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"REFEREE_REQUIRE_SANDBOX=1 but {why}", pytrace=False)
        pytest.skip(why)


def twins(tmp: Path, honest: bool) -> dict:
    require_sandbox()
    for name in ("attacker", "victim"):
        (tmp / name).mkdir(parents=True)
    shutil.copy(HOSTILE / "entrant.py", tmp / "attacker")
    attacks = ["--attack", "keyring", "--attack", "clock", "--attack", "comment", "--levels", str(LEVELS)]
    command = ["python", "entrant.py", *(["--honest"] if honest else attacks)]
    bots = tables(("entrant", command, "attacker"), random_bot("victim", 1))
    path = write_tournament(tmp / "t.toml", bots, game="aegis", deal_sets=TWINS, seed=8, concurrency=1,
                            extra='isolation = "match"')
    keyring = tmp / "keyring.json"
    command = [sys.executable, "-m", "referee", "tournament", str(path), "--quiet", "--bootstrap", "20"]
    if keyring_usable() is None:  # the runner in a session keyring of its own, as under a login or a service
        command = [sys.executable, str(HOSTILE / "session_keyring.py"), str(keyring), *command]
    run = subprocess.run(command, capture_output=True, text=True, timeout=400, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    view = run_cli("view", tmp / "out")
    assert view.returncode == 0, view.stderr
    log = tmp / "out" / "logs" / "entrant.log"
    results, hands = store_view(tmp / "out")
    return {"learned": reports(log, "LEARNED"), "sent": reports(log, "SENT"), "found": reports(log, "FOUND"),
            "held": reports(log, "HELD"), "keyring": json.loads(keyring.read_text()) if keyring.exists() else None,
            "victim": results, "hands": hands, "replays": tmp / "out" / "report" / "replays"}


@pytest.fixture(scope="module")
def twins_attack(tmp_path_factory) -> dict:
    return twins(tmp_path_factory.mktemp("twins-attack"), honest=False)


@pytest.fixture(scope="module")
def twins_control(tmp_path_factory) -> dict:
    return twins(tmp_path_factory.mktemp("twins-control"), honest=True)


@pytest.mark.e2e
def test_a_key_left_in_the_session_keyring_carries_no_hand_to_the_twin(twins_attack):
    require_keyring()
    learned = [r for r in twins_attack["learned"] if r["via"] == "keyring"]
    assert len({r["game_id"] for r in learned}) == TWINS  # the receiver looked, in every twin
    right = [r for r in learned if r["opponent_hand"] is not None
             and sorted(r["opponent_hand"]) == sorted(twins_attack["hands"][r["game_id"]].get(r["deal"], []))]
    assert right == [], f"{len(right)} hands of the victim read from keys"  # (all but the deals it did not play)
    assert all(r["opponent_hand"] is None for r in learned)


@pytest.mark.e2e
def test_a_bot_cannot_read_the_keys_of_the_runners_session(twins_attack):
    require_keyring()
    assert twins_attack["found"] == [], twins_attack["found"][:1]


@pytest.mark.e2e
def test_a_bot_leaves_nothing_in_the_runners_session_keyring(twins_attack):
    require_keyring()
    assert twins_attack["held"]  # the attack ran
    assert twins_attack["keyring"]["secret_intact"]
    assert twins_attack["keyring"]["keys"] == 0 and twins_attack["keyring"]["bytes"] == 0, twins_attack["keyring"]


def replay_state(browser, path: Path) -> dict:
    page = browser.new_page()
    try:
        page.goto(path.as_uri())
        return page.evaluate("""() => ({scripts: document.scripts.length,
                                       position: document.getElementById("position").textContent,
                                       log: document.getElementById("log").children.length})""")
    finally:
        page.close()


@pytest.mark.e2e
def test_a_bots_answer_cannot_break_the_replay_of_its_match(twins_attack, twins_control, browser):
    pages = ["0_entrant,victim.html", "0_victim,entrant.html"]  # a deal set's two matches, the victim's too
    for name in pages:
        control = replay_state(browser, twins_control["replays"] / name)
        assert control["scripts"] == 2 and control["position"] and control["log"] > 0  # the page works
    shown = {name: replay_state(browser, twins_attack["replays"] / name) for name in pages}
    broken = [name for name, state in shown.items() if not state["position"] or state["log"] == 0]
    assert broken == [], f"{len(broken)} of {len(shown)} replays show nothing: {shown}"


@pytest.mark.e2e
def test_the_victims_results_equal_the_control_runs(twins_attack, twins_control):
    """None of the attacks above shows in the victim's results (the attacker plays the first legal
    action throughout, as the referee plays for its malformed answers)."""
    assert len(twins_attack["victim"]) == 2 * TWINS
    assert twins_attack["victim"] == twins_control["victim"]
    assert twins_attack["learned"] and not twins_control["learned"]
