"""The results store: one SQLite file in the output directory.

Every finished match is written in one transaction (its row, its seats'
scores, places and faults, and the full record), so an interrupted
tournament (Ctrl-C, kill -9) loses at most the matches in flight and the
next run plays only what is missing. The tournament's fingerprint (game,
options, bots, deal sets, seed, clock) is stored too: a directory holding
another tournament's results is refused rather than mixed.

Each launched bot's version (:mod:`referee.tournament.versions`: its command,
working directory and the hashes of the files its command names) is kept in
the ``meta`` key ``versions``: a bot that changed while it has matches stored
is refused, unless its matches are dropped to be played again (``rerun``). A
directory written before versions were kept has none: the first run that
claims it records the bots as they are then (its stored matches are taken as
theirs). The ``meta`` key ``incomplete`` names the bots that died for good in
the last run that played, with how many of their matches are missing;
``seed_released`` is set once a run has ended and printed its master seed
(a drawn seed is secret until then). The pages read the tournament's entries
(:meth:`Store.entries`) and the dates of its first and last match
(:meth:`Store.dates`) here.

One run at a time writes a directory: :meth:`Store.claim` takes its lock (an ``flock`` on
``.lock`` in it, which the kernel releases when the process ends, however it ends), and a
second run is refused (:class:`DirectoryInUse`, exit 2) while the first holds it. A write the
disk refuses (full, over quota, an I/O error) is a :class:`~referee.files.WriteFailed` (exit 6):
the transaction it was in is undone, every match stored before stays intact.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.files import WriteFailed
from referee.runner import FaultKind

if TYPE_CHECKING:
    from referee.tournament.config import BotSpec
    from referee.tournament.executors import Played

DB_NAME = "results.sqlite"
#: the file whose lock a run holds on its output directory (left in place: see Store.claim)
LOCK_NAME = ".lock"
#: SQLite's result codes for a write the disk refused: SQLITE_IOERR, SQLITE_FULL
_NO_ROOM = (10, 13)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (name TEXT PRIMARY KEY, kind TEXT NOT NULL, command TEXT);
CREATE TABLE IF NOT EXISTS matches (
    key TEXT PRIMARY KEY,
    deal_set INTEGER NOT NULL,
    seed TEXT NOT NULL,
    lineup TEXT NOT NULL,
    results TEXT NOT NULL,
    record TEXT NOT NULL,
    seconds REAL NOT NULL,
    finished_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    match_key TEXT NOT NULL REFERENCES matches(key),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    score INTEGER NOT NULL,
    place INTEGER NOT NULL,
    {", ".join(f"{kind} INTEGER NOT NULL" for kind in FaultKind)},
    PRIMARY KEY (match_key, seat)
);
"""


class StoreError(ValueError):
    """An output directory that cannot be used for this tournament."""


class DirectoryInUse(StoreError):
    """An output directory another run is writing."""


@dataclass(frozen=True)
class MatchRow:
    key: str
    deal_set: int
    lineup: tuple[str, ...]
    results: dict[str, Any]
    seconds: float = 0.0  # how long the match took

    @property
    def scores(self) -> list[int]:
        return self.results["scores"]

    @property
    def placing(self) -> list[int]:
        return self.results["placing"]

    @property
    def faults(self) -> list[dict[str, int]]:
        return self.results.get("faults") or [dict.fromkeys(FaultKind, 0) for _ in self.lineup]


@dataclass(frozen=True)
class Entry:
    """An entry of the tournament, as the pages list it."""

    name: str
    status: str          # "playing" | "did not start" | "withdrawn" | "dead"
    why: str | None      # the reason, for any status but "playing"
    version: str | None  # a short id of its current version (None: external or unknown)


def short_version(version: dict[str, Any] | None) -> str | None:
    """A short id of a bot's version (its ``versions`` entry): 10 hex digits of its SHA-256."""
    if version is None:
        return None
    return hashlib.sha256(json.dumps(version, sort_keys=True).encode()).hexdigest()[:10]


class Store:
    def __init__(self, directory: str | Path, create: bool = True):
        self.directory = Path(directory)
        path = self.directory / DB_NAME
        if not create and not path.exists():
            raise StoreError(f"{self.directory}: no tournament results here ({DB_NAME} not found)")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise StoreError(f"{self.directory}: is a file, not a results directory") from None
        except OSError as e:
            raise StoreError(f"{self.directory}: cannot create the results directory: {e.strerror or e}") from None
        self.path = path
        self.failed: WriteFailed | None = None  # the first write the disk refused
        self._lock: Any = None  # the directory's lock file, once claimed
        try:
            self.db = sqlite3.connect(path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            # a reader of a store that has its tables writes nothing (a results directory on a full disk reads)
            if create or self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'seats'").fetchone() is None:
                with self._writing("its tables"):
                    self.db.executescript(SCHEMA)
        except sqlite3.Error as e:
            raise StoreError(f"{path}: cannot open the results database: {e}") from None

    def close(self) -> None:
        self.db.close()
        if self._lock is not None:  # emptied: a lock file with a holder in it is a run that did not end well
            with contextlib.suppress(OSError):
                self._lock.truncate(0)
            self._lock.close()
            self._lock = None

    @contextlib.contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        """One transaction that writes ``what``; a write the disk refuses undoes it and is a
        :class:`WriteFailed` saying that what was stored before is intact. Once one has failed, a
        later failure raises the first again (the reason the run stopped)."""
        try:
            with self.db:
                yield
        except sqlite3.OperationalError as err:
            if getattr(err, "sqlite_errorcode", 0) & 0xFF not in _NO_ROOM:
                raise
            if self.failed is None:
                self.failed = WriteFailed(f"cannot write {self.path} ({what}): {err}")
            raise self.failed from None

    def stopped(self, error: WriteFailed) -> WriteFailed:
        """``error`` (the run stopped: the store, or a bot's log, hit a full disk), saying what is
        intact and what to do."""
        try:
            stored = f"the {self.count()} match(es) stored are intact"
        except sqlite3.Error:
            stored = "the matches stored are intact"
        return WriteFailed(f"{error}; {stored}: make room and run the same command again to play what is missing")

    def _take_lock(self, announce: Callable[[str], None] | None) -> None:
        """Hold the directory's lock for as long as this store is open: refuse it (DirectoryInUse)
        while another run holds it. The lock is the kernel's (``flock``), so a run that ended
        without letting go (kill -9, a crash) holds nothing: its lock file, where it wrote who it
        was, is taken over. The file is never removed (a run could otherwise lock a file that a
        second one no longer finds)."""
        if self._lock is not None:
            return
        path = self.directory / LOCK_NAME
        try:
            lock = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until close()
        except OSError as err:
            raise StoreError(f"{self.directory}: cannot lock the results directory: {err.strerror or err}") from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if not isinstance(err, BlockingIOError):
                lock.close()
                raise StoreError(f"{self.directory}: cannot lock the results directory: {err.strerror or err}") \
                    from None
            lock.seek(0)
            holder = lock.read().strip() or "a process"
            lock.close()
            raise DirectoryInUse(f"{self.directory} is in use by another run ({holder}): one run at a time per "
                                 f"output directory; wait for it to end, or give this run another output") from None
        lock.seek(0)
        before = lock.read().strip()
        if before and announce is not None:
            announce(f"{self.directory}: taking over from a run that ended without letting go ({before})")
        try:
            lock.truncate(0)
            lock.write(f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
            lock.flush()
        except OSError:
            pass  # who holds it is only information: the lock itself needs no room
        self._lock = lock

    # --- the tournament this directory belongs to ---------------------------------

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._writing(f"its {key}"):
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def incomplete(self) -> dict[str, dict[str, Any]]:
        """The bots that died for good in the last run that played, and did not play all their
        matches: ``{name: {"missing": N, "why": ...}}``."""
        return {name: v for name, v in json.loads(self.meta("incomplete") or "{}").items() if v.get("missing")}

    def set_incomplete(self, bots: dict[str, dict[str, Any]]) -> None:
        self.set_meta("incomplete", json.dumps(bots, sort_keys=True))

    def bot_notes(self) -> list[str]:
        """Bots that did not play all their matches; launched bots that died or restarted (from the last run)."""
        status = json.loads(self.meta("launcher") or "{}")
        incomplete = self.incomplete()
        notes = [f"* bot {name} did not play {v['missing']} of its {v.get('of', '')} matches: it {v['why']}; "
                 f"it ranks below every bot that played all of theirs; the same command plays the missing matches"
                 for name, v in sorted(incomplete.items())]
        for name, st in sorted(status.items()):
            if name in incomplete:
                pass
            elif st.get("exits"):
                notes.append(f"bot {name}: died {len(st['exits'])} time(s) (last: {st['exits'][-1]})")
            if st.get("dropped_bytes"):
                notes.append(f"bot {name}: {st['dropped_bytes']} bytes of output past the log cap not kept")
        return notes

    def claim(self, fingerprint: str, description: dict[str, Any], bots: Sequence[BotSpec],
              rerun: Sequence[str] = (), announce: Callable[[str], None] | None = None) -> dict[str, int]:
        """Bind the directory to a tournament and its bots; refuse one that holds another, or
        matches of a bot that changed since (:mod:`~referee.tournament.versions`) unless it is
        in ``rerun``: the stored matches of those bots are dropped, to be played again, and
        ``announce`` is told how many. Returns how many were dropped, by bot."""
        from referee.tournament import versions

        self._take_lock(announce)
        stored = self.meta("fingerprint")
        if stored is not None and stored != fingerprint:
            old, new = json.loads(stored), json.loads(fingerprint)
            changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
            raise StoreError(
                f"{self.directory} holds the results of another tournament configuration "
                f"(changed: {', '.join(changed)}). Use a new output directory, or restore the old settings "
                f"to resume.")
        names = [b.name for b in bots]
        unknown = [name for name in rerun if name not in names]
        if unknown:
            raise StoreError(f"--rerun {unknown[0]}: no such bot in this tournament (its bots: {', '.join(names)})")
        current = {b.name: versions.of(b) for b in bots}
        before = json.loads(self.meta("versions") or "{}")  # none in a directory older than versions
        for name, version in current.items():
            if name in rerun or version is None or before.get(name) in (None, version) or not self.played(name):
                continue
            raise StoreError(
                f"bot {name} changed since its matches in {self.directory} were played "
                f"({', '.join(versions.changes(before[name], version))}): give --rerun {name} to play its "
                f"matches again, or use a new output directory")
        with self._writing("the tournament it holds"):
            dropped = {name: self._drop(name) for name in dict.fromkeys(rerun)}
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('config', ?)", (json.dumps(description),))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('versions', ?)",
                            (json.dumps({**before, **current}, sort_keys=True),))
            self.db.executemany("INSERT OR REPLACE INTO bots VALUES (?, ?, ?)",
                                [(b.name, "external" if b.external else "launched", json.dumps(list(b.command)) or None)
                                 for b in bots])
        for name, n in dropped.items():
            if announce is not None:
                announce(f"--rerun {name}: its {n} stored match(es) are dropped, to be played again")
        return dropped

    def played(self, bot: str) -> bool:
        """Whether any stored match has ``bot`` in its line-up."""
        return self.db.execute("SELECT 1 FROM seats WHERE bot = ? LIMIT 1", (bot,)).fetchone() is not None

    def _drop(self, bot: str) -> int:
        """Delete every stored match with ``bot`` in its line-up (in the caller's transaction); how many."""
        keys = [row[0] for row in self.db.execute("SELECT DISTINCT match_key FROM seats WHERE bot = ?", (bot,))]
        self.db.executemany("DELETE FROM seats WHERE match_key = ?", [(k,) for k in keys])
        self.db.executemany("DELETE FROM matches WHERE key = ?", [(k,) for k in keys])
        return len(keys)

    def entries(self) -> list[Entry]:
        """Every entry the directory has known, in file order.

        A stand-in (issue 25's ``living`` branch keeps the statuses): every bot of the ``bots``
        table as "playing", its version the short id of its ``versions`` entry."""
        versions = json.loads(self.meta("versions") or "{}")
        return [Entry(name, "playing", None, short_version(versions.get(name)))
                for (name,) in self.db.execute("SELECT name FROM bots ORDER BY rowid")]

    def dates(self) -> tuple[float, float] | None:
        """When the first stored match began and the last one ended (Unix times), None before any."""
        first, last = self.db.execute("SELECT MIN(finished_at - seconds), MAX(finished_at) FROM matches").fetchone()
        return None if first is None else (first, last)

    def seed_released(self) -> bool:
        """Whether a run has ended and printed the master seed (a drawn seed is secret until then)."""
        return self.meta("seed_released") is not None

    def release_seed(self) -> None:
        self.set_meta("seed_released", str(time.time()))

    def config(self) -> dict[str, Any]:
        text = self.meta("config")
        if text is None:
            raise StoreError(f"{self.directory}: the store has no tournament configuration")
        return json.loads(text)

    # --- matches ------------------------------------------------------------------

    def done(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT key FROM matches")}

    def save(self, key: str, deal_set: int, seed: int, lineup: tuple[str, ...], results: dict[str, Any],
             record: dict[str, Any], seconds: float) -> None:
        """One finished match, in one transaction."""
        faults = results.get("faults") or [dict.fromkeys(FaultKind, 0) for _ in lineup]
        with self._writing(f"match {key}"):
            self.db.execute("INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (key, deal_set, str(seed), json.dumps(list(lineup)), json.dumps(results),
                             json.dumps(record), seconds, time.time()))
            self.db.executemany(
                f"INSERT INTO seats VALUES (?, ?, ?, ?, ?, {', '.join('?' for _ in FaultKind)})",
                [(key, seat, bot, results["scores"][seat], results["placing"][seat],
                  *(faults[seat].get(kind, 0) for kind in FaultKind))
                 for seat, bot in enumerate(lineup)])

    def save_played(self, played: Played) -> None:
        """A match as an executor hands it over (:class:`~referee.tournament.executors.Played`)."""
        s = played.seating
        self.save(s.key, s.deal_set, s.seed, s.lineup, played.results, played.record, played.seconds)

    def matches(self) -> Iterator[MatchRow]:
        for key, deal_set, lineup, results, seconds in self.db.execute(
                "SELECT key, deal_set, lineup, results, seconds FROM matches ORDER BY deal_set, key"):
            yield MatchRow(key, deal_set, tuple(json.loads(lineup)), json.loads(results), seconds)

    def record(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT record FROM matches WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def numbers(self) -> dict[str, int]:
        """Each stored match's number (its id for ``referee replay DIR N`` and ``referee export``):
        SQLite's rowid, which counts the matches in the order the store saved them, 1 first."""
        return dict(self.db.execute("SELECT key, rowid FROM matches"))

    def number(self, key: str) -> int | None:
        """The number of one stored match (as :meth:`numbers`), None if it is not stored."""
        row = self.db.execute("SELECT rowid FROM matches WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
