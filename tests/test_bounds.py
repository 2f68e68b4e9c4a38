"""Bounded, escaped, written or refused (issue 24: sizes, terminals, disks, locks), in process.

What a bot sends is capped and escaped before it is kept or shown (referee/untrusted.py); a
record keeps to its stated bound (docs/records.md) whatever the bots answer; the store, a
record file and a report page refuse a write the disk refuses in one error (exit 6) and keep
what was written before; one run at a time holds an output directory. The attacks by real
bot processes in the sandbox are in tests/test_bounds_attacks.py, the full disk in
tests/test_full_disk.py."""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from harness import invoke_cli
from test_runner import ScriptedSeat, play

from referee import files, records
from referee.hosting.paths import bot_from_command
from referee.play.arena import Arena, RefusalReason, Refused
from referee.play.executors import BotsNotReady
from referee.results.store import LOCK_NAME, DirectoryInUse, Store
from referee.runner import MAX_DETAIL, MAX_FAULT_RECORDS, FaultKind, Reply
from referee.untrusted import BytesEscaper, EscapingFormatter, capped, escaped, quoted
from referee.v1 import referee_pb2 as pb
from referee.view.page import replay_page

#: what a terminal obeys: C0 but tab and newline, DEL, C1, separators, bidi controls
CONTROL = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))] + \
    ["\u2028", "\u2029", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069"]
#: a message's worth (the referee reads at most 256 KiB) of the worst texts for each escaping and encoding
CAP = 256 * 1024 - 200
HOSTILE = ["X" * CAP, '\\"' * (CAP // 2), "\x1b]0;owned\x07" * (CAP // 10), "\U0001f600" * (CAP // 4),
           "AS" + " " * (CAP - 3) + "\x1b", "\x00" * CAP]


def unsafe(text: str) -> list[str]:
    return sorted({c for c in text if c in CONTROL})


# --- the rule: escaped and capped ------------------------------------------------------


def test_every_control_character_is_escaped_and_escaping_twice_changes_nothing():
    text = "".join(CONTROL) + "\t\n plain é ✓ \\x1b"
    shown = escaped(text)
    assert unsafe(shown) == [] and "\t\n plain é ✓ \\x1b" in shown  # tab, newline and text kept
    assert "\\x1b" in shown and "\\x00" in shown and "\\x9b" in shown and "\\u202e" in shown and "\\r" in shown
    assert escaped(shown) == shown
    one_line = escaped(text, one_line=True)
    assert "\n" not in one_line and "\t" not in one_line and "\\n" in one_line


def test_quoted_text_is_ascii_capped_and_says_how_long_it_was():
    assert quoted("AS") == "'AS'"
    shown = quoted("X" * 262144)
    assert shown == "'" + "X" * 200 + "...' (262144 characters, 200 kept)"
    for text in HOSTILE:
        shown = quoted(text)
        assert shown.isascii() and unsafe(shown) == [] and len(shown) <= 200 + 40, shown[:80]
        assert f"({len(text)} characters, " in shown
    # an escape is never cut in two: the kept characters are whole
    assert capped("\U0001f600" * 30, 25) == "\\U0001f600\\U0001f600... (30 characters, 2 kept)"
    assert capped("é" * 10, 100, ascii_only=False) == "é" * 10


def test_a_bots_output_is_escaped_across_chunks_and_bytes_that_are_not_utf8_are_shown():
    escaper = BytesEscaper()
    raw = "é✓ line\n".encode() + b"\x1b]0;t\x07\xc2\x9b\x9b\xff\x00 end\n"
    out = b"".join(escaper.feed(raw[i:i + 1]) for i in range(len(raw))) + escaper.end()  # a byte at a time
    text = out.decode()
    assert text == "é✓ line\n\\x1b]0;t\\x07\\x9b\\x9b\\xff\\x00 end\n"
    assert BytesEscaper().feed(raw) == out


def test_log_lines_are_escaped_on_one_line_and_tracebacks_keep_their_lines(capsys):
    formatter = EscapingFormatter("%(levelname)s %(message)s")
    record = logging.LogRecord("referee", logging.WARNING, __file__, 1, "bot said %s", ("\x1b[2Kforged\nINFO ok",),
                               None)
    assert formatter.format(record) == "WARNING bot said \\x1b[2Kforged\\nINFO ok"
    try:
        raise ValueError("\x1b]0;t\x07")
    except ValueError:
        record.exc_info = sys.exc_info()
    lines = formatter.format(record).split("\n")
    assert len(lines) > 2 and all(unsafe(line) == [] for line in lines)


def test_a_hello_whose_name_holds_control_characters_is_refused():
    arena = Arena(tokens=None)
    with pytest.raises(Refused) as refused:
        arena.open_session(pb.Hello(protocol_version=1, bot_name="bot\x1b]0;t\x07"))
    assert refused.value.reason is RefusalReason.BAD_HELLO and "control characters" in str(refused.value)
    assert unsafe(str(refused.value)) == []


def test_the_last_lines_of_a_bots_log_are_escaped_and_capped(tmp_path):
    """A log written before its output was escaped (or by anything else) is escaped as it is shown."""
    from referee.hosting.launcher import LOG_LINE_CHARS, Launcher

    spec = bot_from_command("evil", "python x.py")
    launcher = Launcher([spec], "unix:/nowhere", {"evil": "t"}, {}, tmp_path)
    (tmp_path / "evil.log").write_bytes(b"ok\n\x1b]0;owned\x07\x1b[1A\x1b[2K\r\x1b[32mall good\x1b[0m\n"
                                        + b"Y" * 10_000)
    path, tail = launcher.log_tail("evil")
    assert tail[:2] == ["ok", "\\x1b]0;owned\\x07\\x1b[1A\\x1b[2K\\r\\x1b[32mall good\\x1b[0m"]
    assert tail[2] == "Y" * LOG_LINE_CHARS + f"... (10000 characters, {LOG_LINE_CHARS} kept)"
    message = str(BotsNotReady({"evil": "ended before it connected (exit code 3)"}, {"evil": (path, tail)}))
    assert all(unsafe(line) == [] for line in message.split("\n"))
    result = invoke_cli("replay", tmp_path / "evil.log")  # the group escapes what it prints, too
    assert result.exit_code == 2 and unsafe(result.output.replace("\n", "")) == []


# --- a record's bound, whatever the bots answer ----------------------------------------


@pytest.fixture(scope="module")
def worst_match():
    """Confirmation (4 rounds, 240 decisions), every seat answering a hostile text at the message cap
    at every decision: 60 malformed answers per seat, the first 50 of each kept."""
    links = [ScriptedSeat(lambda d, n: Reply(name=HOSTILE[n % len(HOSTILE)])) for _ in range(4)]
    outcome = play("confirmation", links, {"rounds": 4})
    outcome.links = links
    return outcome


def test_a_record_of_answers_at_the_message_cap_keeps_to_its_bound(worst_match):
    record = worst_match.record
    decisions, kept = len(record["actions"]), len(record["meta"]["faults"])
    assert decisions == 240 and kept == 4 * MAX_FAULT_RECORDS
    assert record["meta"]["fault_counts"] == [{**dict.fromkeys(FaultKind, 0), "malformed": 60}] * 4
    assert record["meta"]["faults_kept_per_seat"] == MAX_FAULT_RECORDS
    for fault in record["meta"]["faults"]:
        detail = fault["detail"]
        assert detail.isascii() and unsafe(detail) == [] and len(detail) <= MAX_DETAIL + 40, detail
        assert len(json.dumps(fault)) <= records.MAX_BYTES_PER_FAULT
    assert any(f"({CAP} characters, 200 kept)" in f["detail"] for f in record["meta"]["faults"])
    assert len(json.dumps(record)) <= records.max_bytes(decisions, kept)        # as stored
    assert len(records.dumps(record).encode()) <= records.max_bytes(decisions, kept)  # as exported
    # the report's page of the match: its assets, a frame per decision, its faults
    assert len(replay_page(record).encode()) <= 64 * 1024 + 1536 * decisions + 1024 * kept
    tally = records.faults_of(record)
    assert (tally.counted, tally.kept, tally.per_seat) == (240, 200, MAX_FAULT_RECORDS)
    assert tally.text() == "240 fault(s); the first 50 of each seat are kept in the record (200)"
    assert records.replay(record).results == worst_match.state.results()


def test_the_bot_is_told_the_bounded_reason_too(worst_match):
    """The substitution's reason goes back to the bot (ActionResult.reason): the same bounded detail,
    for every fault, those past the 50 kept too."""
    for seat, link in enumerate(worst_match.links):
        reasons = [s.reason for s in link.substitutions]
        assert len(reasons) == 60 and all(len(r) <= MAX_DETAIL + 40 and r.isascii() for r in reasons)
        assert reasons[:50] == [f["detail"] for f in worst_match.record["meta"]["faults"] if f["seat"] == seat]


def test_an_illegal_action_is_quoted_and_escaped():
    """Whitespace the engine ignores (\\x1c, \\x85...) may wrap a parsable, illegal action."""
    def answer(d, n):
        return Reply(name="\x1f\x85" + next(c for c in ("AS", "KS", "2C", "3D") if c not in d.legal_names) + "\x1c")

    out = play("aegis", [ScriptedSeat(answer), ScriptedSeat()])
    illegal = [f for f in out.faults if f.kind == FaultKind.ILLEGAL]
    assert illegal and all(f.detail.startswith("'\\x1f\\x85") and unsafe(f.detail) == [] for f in illegal)


def test_old_records_without_fault_counts_still_read(tmp_path):
    record = records.read(Path(__file__).parent / "records" / "confirmation_one_round.json")
    assert records.faults_of(record) == records.FaultTally(0, 0)
    record["meta"] = {"faults": [{"seat": 0, "kind": "timeout", "decision": 3, "at_s": 1.0, "detail": "late"}]}
    assert records.faults_of(record).text() == "1 fault(s)"
    path = tmp_path / "old.json"
    records.write(path, record)
    result = invoke_cli("replay", path)
    assert result.exit_code == 0 and "faults: 1 fault(s)" in result.output


def test_replay_and_export_say_how_many_faults_a_record_kept(tmp_path, worst_match):
    store = Store(tmp_path / "out")
    store.save("m1", 0, 3, tuple(f"bot{i}" for i in range(4)), worst_match.results, worst_match.record, 1.0)
    store.close()
    replayed = invoke_cli("replay", tmp_path / "out", "1")
    assert replayed.exit_code == 0
    assert "faults: 240 fault(s); the first 50 of each seat are kept in the record (200)" in replayed.output
    as_json = json.loads(invoke_cli("replay", tmp_path / "out", "1", "--json").output)
    assert as_json["faults"] == {"counted": 240, "kept": 200, "kept_per_seat": 50}
    exported = invoke_cli("export", tmp_path / "out")
    assert exported.exit_code == 0, exported.output
    assert "1 record(s) keep only the first 50 faults of a seat (200 of 240 kept" in exported.stderr
    assert (tmp_path / "out" / "export" / "match-0001.json").stat().st_size <= records.max_bytes(240, 200) + 1024


# --- write errors: exit 6, nothing half-written ----------------------------------------


def test_a_file_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    target = tmp_path / "page.html"
    target.write_text("the old page")
    real = open

    def full(path, *args, **kwargs):  # the disk fills while the new page is written
        f = real(path, *args, **kwargs)
        if str(path).endswith(".partial"):
            def write(text):
                raise OSError(errno.ENOSPC, "No space left on device")
            f.write = write
        return f

    monkeypatch.setattr("builtins.open", full)
    with pytest.raises(files.WriteFailed, match=r"cannot write .*page.html: No space left on device"):
        files.write_text(target, "the new page")
    monkeypatch.undo()
    assert target.read_text() == "the old page" and sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]
    with pytest.raises(files.CannotWrite, match="cannot write .*No such file or directory"):
        files.write_text(tmp_path / "missing" / "x.json", "{}")


# --- one run per output directory ------------------------------------------------------


def claim(store: Store, announce=None) -> None:

    store.claim('{"game": "aegis"}', {}, [bot_from_command("a", "python a.py")], announce=announce)


def test_a_second_run_is_refused_while_the_first_holds_the_directory(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", f"""
import fcntl, sys, time
f = open({str(tmp_path / LOCK_NAME)!r}, "a+")
fcntl.flock(f, fcntl.LOCK_EX)
f.write("pid 4242 on host, since 2024-01-01 00:00:00\\n"); f.flush()
print("held", flush=True)
time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        store = Store(tmp_path)
        with pytest.raises(DirectoryInUse) as refused:
            claim(store)
        store.close()
        assert str(refused.value) == (f"{tmp_path} is in use by another run (pid 4242 on host, since 2024-01-01 "
                                      f"00:00:00): one run at a time per output directory; wait for it to end, or "
                                      f"give this run another output")
    finally:
        holder.kill()
        holder.wait()
    said = []
    store = Store(tmp_path)  # its holder gone, the lock is free: taken over, and said
    claim(store, said.append)
    assert said == [f"{tmp_path}: taking over from a run that ended without letting go (pid 4242 on host, "
                    f"since 2024-01-01 00:00:00)"]
    with open(tmp_path / LOCK_NAME) as f, pytest.raises(BlockingIOError):
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by this store
    store.close()
    assert (tmp_path / LOCK_NAME).read_text() == ""  # let go: emptied, nothing to take over
    store = Store(tmp_path)
    said.clear()
    claim(store, said.append)
    store.close()
    assert said == []


def test_readers_need_no_lock(tmp_path):
    store = Store(tmp_path)
    claim(store)
    reader = Store(tmp_path, create=False)  # ratings, view, export
    assert reader.count() == 0
    reader.close()
    store.close()
