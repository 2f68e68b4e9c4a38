"""Hostile entrants against what the runner keeps and shows (issue 24, attacks 5, 9 and 10;
docs/security.md): answers at the message cap at every decision, terminal escapes in a bot's
output (while it plays, and as it fails to start), a second run on the same output directory.

The tournament, the attacker (tests/bots/hostile/attacker.py, in the real sandbox) and the
control run are tests/test_sandbox_attacks.py's: the attacker's answers are replaced by the first
legal action, which is what it plays honestly, so the victim's results must equal the
control's. ``REFEREE_ATTACK_SANDBOX=none`` runs them without the sandbox: these defences are
the runner's own, and hold there too.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import invoke_cli, run_cli
from test_sandbox_attacks import (  # noqa: F401 (control, sandbox_works: fixtures)
    HOSTILE,
    VICTIM_MATCHES,
    Run,
    assert_victim_unharmed,
    control,
    sandbox_works,
    tournament,
)

from referee import records
from referee.results.store import Store
from referee.runner import MAX_DETAIL, MAX_FAULT_RECORDS
from referee.untrusted import BytesEscaper

pytestmark = pytest.mark.e2e

sys.path.insert(0, str(HOSTILE))
import attacks  # noqa: E402 (the attacker's own module: its payload of escapes)

#: the attacker's answer at the cap (attacker.ANSWERS["huge"])
HUGE = 256 * 1024 - 200
#: what a terminal obeys (C0 but tab and newline, DEL, C1): none may reach a log or the screen raw
RAW = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))] + ["\u202e"]
#: the stated bounds per match (docs/records.md): the record's, and the report's page of it
REPORT_BYTES_PER_MATCH, REPORT_BYTES_PER_DECISION = 64 * 1024, 1536


def raw_controls(text: str) -> list[str]:
    return sorted({repr(c) for c in text if c in RAW})


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- attack 5: unbounded fault details ---------------------------------------------------------


def test_answers_at_the_message_cap_keep_the_store_export_and_report_within_their_bound(tmp_path, control):
    """Every answer of the attacker is 256 KiB of text that is no action (issue 24: 6 matches gave
    313 MB each of store, export and report): each fault keeps its first 200 characters and says
    how long it was, the first 50 per seat are kept and all counted, and the store, the export
    and the report per match keep to the bound docs/records.md states."""
    run = tournament(tmp_path, ["--answer", "huge"])
    assert_victim_unharmed(run, control)
    out = tmp_path / "out"
    store = Store(out, create=False)
    try:
        bound, report_bound, matches = 0, 0, 0
        for row in store.matches():
            matches += 1
            record = store.record(row.key)
            meta, decisions = record["meta"], len(record["actions"])
            kept = meta["faults"]
            bound += records.max_bytes(decisions, len(kept))
            report_bound += REPORT_BYTES_PER_MATCH + REPORT_BYTES_PER_DECISION * decisions + 1024 * len(kept)
            if "attacker" not in row.lineup:
                continue
            seat = row.lineup.index("attacker")
            answered = meta["decision_times"][seat]["answered"]
            assert answered > 0 and row.faults[seat]["malformed"] == answered  # every answer, counted
            assert meta["fault_counts"][seat]["malformed"] == answered
            mine = [f for f in kept if f["seat"] == seat]
            assert len(mine) == min(answered, MAX_FAULT_RECORDS) and meta["faults_kept_per_seat"] == MAX_FAULT_RECORDS
            for fault in mine:
                assert fault["detail"] == f"not an action: '{'X' * 200}...' ({HUGE} characters, 200 kept)"
                assert len(fault["detail"]) <= MAX_DETAIL + 40
            assert len(json.dumps(record)) <= records.max_bytes(decisions, len(kept))
    finally:
        store.close()
    assert matches == 12
    assert (out / "results.sqlite").stat().st_size <= 2 * bound + 64 * 1024  # each record, its results, pages
    assert not (out / "results.sqlite-wal").exists()  # the runner closed the store
    exported = invoke_cli("export", out)
    assert exported.exit_code == 0, exported.output
    assert size(out / "export") <= bound + 1024 * matches
    viewed = invoke_cli("view", out, "--bootstrap", "0")
    assert viewed.exit_code == 0, viewed.output
    assert size(out / "report") <= report_bound
    assert (out / "logs" / "attacker.log").stat().st_size <= 1024 * 1024 + 1024  # its log_kb, and the end line


# --- attack 9: terminal escapes ------------------------------------------------------------------


def payload_shown() -> str:
    """The attacker's escapes as its log shows them."""
    return BytesEscaper().feed(attacks.ESCAPES.encode() + attacks.RAW_ESCAPES).decode()


def test_escapes_in_a_bots_output_and_answers_reach_its_log_escaped(tmp_path, control):
    """The attacker prints retitling, clipboard, erasing and colouring sequences, NUL, C1 and bytes
    that are not UTF-8 while it plays, and answers such sequences: its log (which the organiser
    reads with tail or cat) holds them only escaped, and so do its faults."""
    run = tournament(tmp_path, ["--attack", "escapes", "--answer", "escapes"])
    assert_victim_unharmed(run, control)
    assert run.ran("escapes")
    log = (tmp_path / "out" / "logs" / "attacker.log").read_bytes().decode()  # UTF-8 throughout
    assert raw_controls(log) == []
    assert log.count(f"{payload_shown()} escapes line 2\n") == 2  # on stdout and on stderr, escaped
    store = Store(tmp_path / "out", create=False)
    try:
        details = [f["detail"] for row in store.matches() for f in store.record(row.key)["meta"]["faults"]]
    finally:
        store.close()
    assert details and all(d.startswith("not a") and "\\x1b]0;" in d and raw_controls(d) == [] for d in details)
    assert raw_controls(run.stderr + run.stdout) == []


@pytest.fixture(scope="module")
def fails_to_start(tmp_path_factory) -> tuple[Run, Run]:
    """The attacker prints three lines (on stdout and stderr) and exits before connecting: with
    escapes, and (the control) the same lines without them."""
    return (tournament(tmp_path_factory.mktemp("escapes"), ["--crash-at-start"]),
            tournament(tmp_path_factory.mktemp("plain"), ["--crash-at-start", "--honest"]))


def test_the_last_lines_of_a_bot_that_failed_to_start_are_shown_escaped(fails_to_start):
    """Issue 24, attack 9: the "last lines of its log" printed for a bot that failed to start
    retitled the organiser's terminal, erased lines and forged a green one."""
    attack, plain = fails_to_start
    assert attack.returncode == plain.returncode == 2 and attack.victim["matches"] == plain.victim["matches"] == {}
    assert raw_controls(attack.stderr) == [] and raw_controls(attack.stdout) == []
    lines, plain_lines = normalized(attack), normalized(plain)
    assert "bot attacker ended before it connected (exit code 3)" in attack.stderr
    assert [line for line in lines if "escapes line" not in line] == \
        [line for line in plain_lines if "escapes line" not in line]  # the same message...
    tail = [(a, p) for a, p in zip(lines, plain_lines) if "escapes line" in p]
    assert len(tail) == 6  # ... the three lines on stdout and on stderr, as the control shows them but...
    for a, p in tail:  # ... with the escapes before each, visible
        assert a == p.replace("     escapes line", f"    {payload_shown()} escapes line")


def normalized(run: Run) -> list[str]:
    """The run's error output but the bot's command line (its log's first line), its directory and
    clock times taken out."""
    text = re.sub(r"\d\d:\d\d:\d\d", "T", run.stderr.replace(str(run.directory), "DIR"))
    return [line for line in text.splitlines() if "--- attacker start" not in line]


# --- attack 10: two runs on one output directory -------------------------------------------------


def test_a_second_run_on_the_same_directory_is_refused_and_the_first_is_unharmed(tmp_path, control):
    """Issue 24, attack 10: a second run started on the output directory while the first plays
    crashed (UNIQUE constraint failed, exit 1). It gets one line and exit 2; the first plays on,
    its results the control's; once it is over, the directory is free again."""
    second: list[subprocess.CompletedProcess] = []
    pid = []

    def start_a_second_run(first: subprocess.Popen, out: Path) -> None:
        """Once the first has stored a match, the second; the first runner is held (SIGSTOP, its bots
        play on) until the second has ended, so that however slow the machine, they overlap."""
        pid.append(first.pid)
        deadline = time.monotonic() + 60
        while first.poll() is None and time.monotonic() < deadline:
            if (out / "results.sqlite").exists() and Store(out, create=False).count() >= 1:
                break
            time.sleep(0.02)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
        os.kill(first.pid, signal.SIGSTOP)
        try:
            pid.append(first.poll())  # None: the first is mid-run
            second.append(subprocess.run([sys.executable, "-m", "referee", "tournament", str(tmp_path / "t.toml"),
                                          "--quiet"], cwd=tmp_path, env=env, capture_output=True, text=True,
                                         timeout=120))
        finally:
            os.kill(first.pid, signal.SIGCONT)

    run = tournament(tmp_path, ["--honest"], during=start_a_second_run)
    assert_victim_unharmed(run, control)
    assert len(run.victim["matches"]) == VICTIM_MATCHES
    refused = second[0]
    assert refused.returncode == 2, refused.stderr
    assert pid[1] is None, "the first run had ended: no race was tried"
    error = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
    assert error == [f"Error: {tmp_path / 'out'} is in use by another run (pid {pid[0]} on {os.uname().nodename}, "
                     f"since {error[0].split('since ', 1)[1].split(')')[0]}): one run at a time per output directory; "
                     f"wait for it to end, or give this run another output"], refused.stderr
    again = run_cli("tournament", tmp_path / "t.toml", "--quiet", cwd=tmp_path)
    assert again.returncode == 0 and "played 0 match(es) now, 12 in all" in again.stderr, again.stderr
    assert "taking over" not in again.stderr  # the first let go as it ended
