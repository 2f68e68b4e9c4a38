"""The run state's modes are enums and its store keys are named (issue 31): the config reader turns a
file's strings into members (its messages unchanged), what is written keeps the same strings (a
member equals and prints as its string), no code compares a mode with a bare string, and every
``meta`` key of the store is named once, in :class:`referee.results.store.MetaKey`.

The scans read the source (as tests/test_layers.py does): a planted bare comparison or a key given
as a string fails them."""

from __future__ import annotations

import ast
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from harness import ROOT

from referee.competition import config as tconfig
from referee.competition import gauntlet as tgauntlet
from referee.model import (
    Absent,
    BotProtocol,
    ConfigError,
    EntryStatus,
    ExecutorKind,
    Isolation,
    Lineup,
    Release,
    SandboxMode,
    ScheduleKind,
    TournamentConfig,
)
from referee.model.modes import member
from referee.results.store import MetaKey, Store
from referee.runner import FaultKind
from referee.stats.ratings import Bound
from referee.stats.sequences import PairVerdict

#: every enum whose values are a mode, a status or a kind the code compares
ENUMS = (SandboxMode, BotProtocol, ExecutorKind, Absent, Isolation, Release, ScheduleKind, Lineup, EntryStatus,
         PairVerdict, Bound, FaultKind)
#: the strings the scan lets pass, with why: (file, string)
NOT_MODES = {
    ("referee/bench/__init__.py", "tournament"): "a bench section's name",
    ("referee/bench/__init__.py", "stdio"): "a bench section's name",
    ("referee/play/wire.py", "error"): "the name of a protobuf oneof field (Reply.error)",
    ("referee/play/arena.py", "end"): "the tag of an item in a spectator's queue (the arena's own)",
    ("referee/hostload.py", "timeout"): "a record's fault kind: the runner, FaultKind's module, imports hostload",
}

ALL_MODES = """\
[tournament]
game = "aegis"
deal_sets = 2
seed = 1
output = "out"
isolation = "match"
release = "end"
absent = "withdraw"

[limits]
sandbox = "none"

[executor]
kind = "local"

[[bots]]
name = "a"
command = ["python", "-c", "pass"]
protocol = "stdio"

[[bots]]
name = "b"
command = ["python", "-c", "pass"]
"""


def _file(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_reader_gives_members(tmp_path):
    cfg = tconfig.load(_file(tmp_path, ALL_MODES))
    read = {"isolation": cfg.isolation, "release": cfg.release, "absent": cfg.absent, "sandbox": cfg.sandbox,
            "schedule": cfg.schedule, "executor": cfg.executor.kind, "protocol a": cfg.bots[0].protocol,
            "protocol b": cfg.bots[1].protocol}
    assert read == {"isolation": Isolation.MATCH, "release": Release.END, "absent": Absent.WITHDRAW,
                    "sandbox": SandboxMode.NONE, "schedule": ScheduleKind.ROUND_ROBIN,
                    "executor": ExecutorKind.LOCAL, "protocol a": BotProtocol.STDIO, "protocol b": BotProtocol.GRPC}
    assert all(type(v) is not str for v in read.values()), read  # members, given or by default


def test_an_adaptive_schedule_and_a_gauntlet_lineup_are_members(tmp_path):
    text = ALL_MODES.replace('absent = "withdraw"', 'schedule = "adaptive"').replace("deal_sets = 2\n", "")
    adaptive = tconfig.load(_file(tmp_path, text))
    assert type(adaptive.schedule) is ScheduleKind and adaptive.adaptive
    text = ALL_MODES + '\n[gauntlet]\ncandidate = "a"\nlineup = "duel"\n'
    assert type(tgauntlet.load(_file(tmp_path, text, "g.toml")).lineup) is Lineup


@pytest.mark.parametrize(("old", "new", "message"), [
    ('isolation = "match"', 'isolation = "no"', "tournament.isolation must be one of tournament, match, got 'no'"),
    ('release = "end"', "release = 3", "tournament.release must be one of deal-set, end, got 3"),
    ('absent = "withdraw"', 'absent = "Stop"', "tournament.absent must be one of stop, withdraw, got 'Stop'"),
    ('sandbox = "none"', 'sandbox = ["bwrap"]', "limits.sandbox must be one of auto, bwrap, none, got ['bwrap']"),
    ('kind = "local"', 'kind = "dask"', "executor.kind must be one of local, ray, got 'dask'"),
    ('protocol = "stdio"', 'protocol = "json"', "bot 'a': protocol must be one of grpc, stdio, got 'json'"),
    ('absent = "withdraw"', "schedule = true", "tournament.schedule must be one of round-robin, adaptive, got True"),
])
def test_a_value_that_names_no_member_is_refused_as_before(tmp_path, old, new, message):
    with pytest.raises(ConfigError) as err:
        tconfig.load(_file(tmp_path, ALL_MODES.replace(old, new)))
    assert str(err.value).endswith(message)


def test_member_names_only_what_it_names():
    assert member(Release, "deal-set") is Release.DEAL_SET and member(Release, Release.END) is Release.END
    assert [member(Release, bad) for bad in ("DEAL_SET", "Deal-Set", 1, None, ["end"])] == [None] * 5


def test_members_write_the_strings_they_replace(tmp_path):
    """The description a store keeps, JSON, a printed line and SQLite: the same text with members as
    with the strings they replace."""
    cfg = tconfig.load(_file(tmp_path, ALL_MODES))
    plain = json.loads(json.dumps(cfg.describe()))  # every member now a str
    assert json.dumps(cfg.describe(), sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert plain["isolation"] == "match" and plain["bots"][0]["protocol"] == "stdio"
    assert cfg.fingerprint() == TournamentConfig(**{**cfg.__dict__, "isolation": "match", "absent": "withdraw",
                                                   "schedule": "round-robin"}).fingerprint()
    assert f"{Isolation.MATCH}|{EntryStatus.DID_NOT_START}|{Release.DEAL_SET!s}|" + str(Absent.STOP) == \
        "match|did not start|deal-set|stop"
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (v TEXT)")
    db.execute("INSERT INTO t VALUES (?)", (EntryStatus.DID_NOT_START,))
    assert db.execute("SELECT v, typeof(v) FROM t").fetchone() == ("did not start", "text")


def test_entry_statuses_are_stored_as_text_and_read_as_members(tmp_path):
    cfg = tconfig.load(_file(tmp_path, ALL_MODES))
    store = Store(tmp_path / "out")
    try:
        store.claim(cfg.fingerprint(), cfg.describe(), cfg.bots)
        store.set_entries(EntryStatus.DID_NOT_START, {"a": "not connected within 30 s"})
        rows = store.db.execute("SELECT name, status FROM entries ORDER BY position").fetchall()
        assert rows == [("a", "did not start"), ("b", "playing")]
        assert [(e.status, type(e.status)) for e in store.entries()] == \
            [(EntryStatus.DID_NOT_START, EntryStatus), (EntryStatus.PLAYING, EntryStatus)]
        assert store.out() == {"a": "did not start: not connected within 30 s"}
        keys = {row[0] for row in store.db.execute("SELECT key FROM meta")}
        assert keys == {MetaKey.FINGERPRINT, MetaKey.CONFIG, MetaKey.VERSIONS}
    finally:
        store.close()


def test_every_meta_key_of_a_version_0_store_is_named(tmp_path):
    """The store written before issue 31 (tests/fixtures/store-v0): each of its ``meta`` keys is a
    MetaKey, so the typed accessor reads all of it."""
    copy = tmp_path / "results.sqlite"
    shutil.copy(ROOT / "tests" / "fixtures" / "store-v0" / "out" / "results.sqlite", copy)
    db = sqlite3.connect(copy)
    try:
        keys = [row[0] for row in db.execute("SELECT key FROM meta")]
    finally:
        db.close()
    assert keys and [k for k in keys if member(MetaKey, k) is None] == []


# --- the scans of the source -----------------------------------------------------------------------


def _sources(root: Path) -> list[tuple[str, ast.AST]]:
    """Each module of ``referee`` but the games' (their own words) and the generated protobuf code."""
    out = []
    for path in sorted((root / "referee").rglob("*.py")):
        if path.relative_to(root / "referee").parts[0] in ("games", "v1"):
            continue
        out.append((path.relative_to(root).as_posix(), ast.parse(path.read_text(), str(path))))
    return out


def _strings(node: ast.AST) -> list[str]:
    """The string constants a comparison's side is or holds (``x in ("a", "b")``)."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def bare_comparisons(root: Path) -> list[str]:
    """Every comparison of a value with a string that is one of a mode's (``==``, ``!=``, ``in``...);
    and each entry of :data:`NOT_MODES` that matches nothing any more."""
    values = {m.value: kind.__name__ for kind in ENUMS for m in kind}
    found, used = [], set()
    for rel, tree in _sources(root):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            for text in (s for side in (node.left, *node.comparators) for s in _strings(side)):
                if text not in values:
                    continue
                if (rel, text) in NOT_MODES:
                    used.add((rel, text))
                else:
                    found.append(f"{rel}:{node.lineno}: compares with {text!r}: use {values[text]}")
    return found + [f"{rel}: NOT_MODES lets {text!r} pass, found nowhere (remove it)"
                    for rel, text in sorted(NOT_MODES.keys() - used)]


def meta_keys_given_as_strings(root: Path) -> list[str]:
    """Every ``.meta(...)``, ``.set_meta(...)`` whose key is not a MetaKey member, and every SQL
    statement on the ``meta`` table that names a key in its text."""
    found = []
    for rel, tree in _sources(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("meta", "set_meta") and node.args:
                key = node.args[0]
                if not (isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name)
                        and key.value.id == "MetaKey"):
                    found.append(f"{rel}:{node.lineno}: {node.func.attr}({ast.unparse(key)}): name it in MetaKey")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "'" in node.value \
                    and node.value.startswith(("SELECT", "INSERT", "UPDATE", "DELETE")) and " meta " in node.value:
                found.append(f"{rel}:{node.lineno}: a meta key in SQL text: pass MetaKey.X as a parameter")
    return found


def test_no_mode_is_compared_with_a_bare_string():
    assert bare_comparisons(ROOT) == []


def test_every_meta_key_is_a_member():
    assert meta_keys_given_as_strings(ROOT) == []


def _planted(tmp_path: Path, line: str) -> Path:
    """A copy of the package's source with ``line`` added to the end of referee/competition/run.py."""
    shutil.copytree(ROOT / "referee", tmp_path / "referee", ignore=shutil.ignore_patterns("__pycache__", "v1"))
    (tmp_path / "referee" / "v1").mkdir()
    run = tmp_path / "referee" / "competition" / "run.py"
    run.write_text(run.read_text() + line)
    return tmp_path


@pytest.mark.parametrize("line", [
    "\n\ndef planted(config):\n    return config.isolation != 'match'\n",
    "\n\ndef planted(entry):\n    return entry.status in ('dead', 'withdrawn')\n",
])
def test_a_planted_bare_comparison_fails_the_scan(tmp_path, line):
    found = bare_comparisons(_planted(tmp_path, line))
    assert found and all(f.startswith("referee/competition/run.py:") for f in found), found


@pytest.mark.parametrize("line", [
    "\n\ndef planted(store):\n    return store.meta('isolation')\n",
    "\n\ndef planted(store):\n    store.db.execute(\"DELETE FROM meta WHERE key = 'seen'\")\n",
])
def test_a_planted_meta_key_string_fails_the_scan(tmp_path, line):
    found = meta_keys_given_as_strings(_planted(tmp_path, line))
    assert len(found) == 1 and found[0].startswith("referee/competition/run.py:"), found
