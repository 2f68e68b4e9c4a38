"""The red team's fourth round (after issues 24 to 26): attacks that work against this version.

Each test here is one attack, tried as an entrant would try it: a hostile bot (a real process, in
the real sandbox: ``sandbox = "bwrap"``, ``isolation = "match"``, the mode meant for strangers) in
a tournament played through the CLI. Each test says what must hold with the attack stopped; those
whose defence had not landed were marked ``xfail(strict=True)`` until it did (docs/security.md has
each attack's row).

- **twins** (``tests/bots/hostile/entrant.py``, two bots, one match at a time, every match's twin
  right after it): what one process of a bot leaves for the next. Through the runner's **session
  keyring**, which every launched process inherits (the runner runs here under
  ``tests/bots/hostile/session_keyring.py``, as under a login or a systemd service): every hand of
  every twin, the organiser's own key, 25 MB left in the keyring (now refused: the prelude's seccomp
  filter, /proc/keys masked). Through **when its process ends**: its twin reads a value from the
  wall-clock phase of its own start (an open channel, measured by ``tests/bots/hostile/figures.py
  --only clock``: docs/security.md). Its malformed answer ``<!--<script>`` killed the **replay
  pages** of every match it plays (now escaped). The control run, where the
  same bot plays honestly (it plays the first legal action either way), gives the victim exactly
  the same results: none of it shows in the standings.
- **versions** (``tests/bots/hostile/changer/``): what runs without being in the version: a pyc in
  ``__pycache__`` (unchecked hash: Python never compares it with the source), a module under a
  dot-directory or under a directory holding a file named ``results.sqlite``. Defended: the
  version covers exactly what the sandbox shows of the bot's own files (the rest is masked).
- **late** (``tests/bots/hostile/late.py``): an entry that does not start on purpose under
  ``absent = "withdraw"``, then comes back, on the same deal sets, knowing every hand from the
  report published in between. Defended: while an entry did not start, the report holds back
  every record (results without replays).
"""

from __future__ import annotations

import ctypes
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, require_sandbox, run_cli, sandbox_shows, write_tournament
from test_twins_apart import victim_hands
from test_view_browser import browser  # noqa: F401  (the module's browser, a fixture)

from referee import model, records
from referee.hosting import sandbox, versions
from referee.results.store import Store

HOSTILE = ROOT / "tests" / "bots" / "hostile"
RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]


def tables(*bots: tuple[str, list[str], str]) -> str:
    """A [clock] of 3 s a decision, [limits] in bubblewrap, and a [[bots]] table per (name, command, cwd)."""
    text = '\n[clock]\ndecision_ms = 3000\nbank_ms = 10000\n\n[limits]\nsandbox = "bwrap"\n'
    for name, command, cwd in bots:
        text += f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{cwd}"\n'
    return text


def random_bot(name: str, seed: int) -> tuple[str, list[str], str]:
    return name, ["python", "-m", "sample_bots.random", "--seed", str(seed)], name


def reports(log: Path, kind: str) -> list[dict]:
    """The ``KIND {json}`` lines of a bot's log."""
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines() if line.startswith(kind + " ")]


def store_view(out: Path) -> tuple[dict, dict]:
    """Per match: the victim's results (seat, scores, placing, its faults), and its hand in each deal."""
    store = Store(out, create=False)
    try:
        rows = list(store.matches())
        results = {r.key: (seat := r.lineup.index("victim"), r.scores, r.placing, r.faults[seat]) for r in rows}
        # by the game id the bots are told (the record's), which names no bot
        hands = {(record := store.record(r.key))["meta"]["game_id"]: victim_hands(record) for r in rows}
    finally:
        store.close()
    return results, hands


# --- twins: what one process leaves for the next -----------------------------------------------

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


# --- versions: what runs without being in the version --------------------------------------------



def plant_pyc(folder: Path) -> Path:
    """planted.py compiled as ``__pycache__/strategy.<tag>.pyc``, unchecked: Python loads it whatever
    strategy.py says (PEP 552), and the version leaves ``__pycache__`` out."""
    target = folder / "__pycache__" / f"strategy.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(HOSTILE / "changer" / "planted.py"), cfile=str(target), dfile="strategy.py",
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)
    return target


def planted_run(tmp_path: Path, plant: bool) -> tuple[set[str], dict]:
    """The changer and a victim on one deal set, then the competition grown by a deal set, with
    (``plant``) or without a pyc planted between: the strategies the changer ran, and the victim's
    results in the store. None for the strategies when the grown run refused the changed bot."""
    require_sandbox()
    (tmp_path / "victim").mkdir(parents=True)
    shutil.copytree(HOSTILE / "changer", tmp_path / "changer", ignore=shutil.ignore_patterns("planted.py",
                                                                                            "__pycache__"))
    bots = tables(("changer", ["python", "bot.py"], "changer"), random_bot("victim", 1))
    first = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=1, seed=8, concurrency=1,
                             extra='isolation = "match"')
    run = run_cli("tournament", first, "--quiet", "--bootstrap", "20")
    assert run.returncode == 0, run.stderr
    if plant:
        plant_pyc(tmp_path / "changer")
    write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=2, seed=8, concurrency=1,
                     extra='isolation = "match"')  # the competition grows by a deal set
    again = run_cli("tournament", first, "--quiet", "--bootstrap", "20")
    if again.returncode == 2:
        assert "bot changer changed" in again.stderr, again.stderr
        return None, store_view(tmp_path / "out")[0]
    assert again.returncode == 0, again.stderr
    ran = {line.split()[1] for line in (tmp_path / "out" / "logs" / "changer.log").read_text().splitlines()
           if line.startswith("STRATEGY ")}
    return ran, store_view(tmp_path / "out")[0]


@pytest.mark.e2e
def test_a_planted_pyc_cannot_change_what_runs_under_the_same_version(tmp_path):
    """Either defence will do: the grown run refuses the changed bot, or what it runs is what was
    hashed (here: the sandbox masks ``__pycache__``, and Python compiles the source it is shown).
    The control, the same competition grown without a pyc, gives the victim the same results."""
    ran, victim = planted_run(tmp_path / "attack", plant=True)
    assert ran in (None, {"reviewed"}), f"the second run played the planted strategy under the old version: {ran}"
    control_ran, control = planted_run(tmp_path / "control", plant=False)
    assert control_ran == {"reviewed"} and len(control) == 4
    assert victim == control if ran is not None else len(victim) == 2  # refused: the first deal set only


HIDING_PLACES = {
    # where the entrant puts the code it changes (its entry point adds the directory to sys.path;
    # before the defence, the sandbox showed the bot all of them)
    "pycache": None,  # __pycache__/strategy.<tag>.pyc: Python itself prefers it
    "dot-directory": ".config/strategy.py",
    "store-directory": "brain/strategy.py",  # beside a file named results.sqlite: "another run's output"
    "vcs-directory": ".hg/strategy.py",
    "undeclared": "strategy.py",  # outside the bot's declared files = ["bot.py"]
}


@pytest.mark.parametrize("place", HIDING_PLACES)
def test_a_change_where_the_version_does_not_look_makes_a_new_version(tmp_path, place):
    """The rule (docs/tournaments.md, "Bot versions"): the version covers exactly what the sandbox
    shows of the bot's own files. So a change is a new version, or lies where the sandbox shows
    the bot nothing; and file by file, the bubblewrap command shows what the version holds."""
    folder = tmp_path / "changer"
    shutil.copytree(HOSTILE / "changer", folder, ignore=shutil.ignore_patterns("planted.py", "__pycache__"))
    if HIDING_PLACES[place] is not None and place != "undeclared":
        hidden = folder / HIDING_PLACES[place]
        hidden.parent.mkdir()
        shutil.copy(folder / "strategy.py", hidden)
        if place == "store-directory":
            (hidden.parent / "results.sqlite").touch()
    files = ("bot.py",) if place == "undeclared" else ()
    spec = model.BotSpec("changer", ("python", "bot.py"), cwd=str(folder), files=files)
    before = versions.of(spec)
    if HIDING_PLACES[place] is None:
        changed = plant_pyc(folder)
    else:
        changed = folder / HIDING_PLACES[place]
        shutil.copy(HOSTILE / "changer" / "planted.py", changed)
    after = versions.of(spec)
    argv = sandbox.bwrap_command(["python", "bot.py"], cwd=folder, socket_dir=None, files=files,
                                 command=spec.command)
    assert after != before or not sandbox_shows(argv, changed), f"the {place} changed under the same version"
    shown = {str(f) for f in folder.rglob("*") if f.is_file() and sandbox_shows(argv, f)}
    assert shown == set(after["files"]), f"shown, not in the version: {shown - set(after['files'])}"


# --- late: an entry that did not start comes back knowing the deals ------------------------------



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
