"""The results store: one SQLite file in the output directory.

Every finished match is written in one transaction (its row, its seats'
scores, places, faults and versions, and the full record), so an interrupted
tournament (Ctrl-C, kill -9) loses at most the matches in flight and the
next run plays only what is missing. The tournament's fingerprint (what must
not change: game, options, seed, clock, isolation, absent) is stored too: a
directory holding another tournament's results is refused rather than mixed.
A directory that holds no match yet belongs to nobody: any configuration
claims it (a failed start leaves nothing that blocks a corrected rerun).

The competition may grow (:mod:`referee.competition.growth`): its **entries**
(table ``entries``: each bot the directory has known, in file order, with its
status: playing, did not start, withdrawn or dead, and why) and the keys of
the **schedule** it plays now (table ``schedule``, written by each run). The
matches that count (:meth:`Store.matches`) are the stored matches of that
schedule; others stay stored, not counted (an entry withdrawn, line-ups that
changed with the entries).

Each launched bot's version (:mod:`referee.hosting.versions`: its command,
working directory and the hashes of its files) is kept in the ``meta`` key
``versions``, every version seen in the table ``bot_versions``, and the
version that played each seat in ``seats.version``: a bot that changed while
it has matches stored is refused, unless its matches are dropped to be
played again (``rerun``). A directory written before versions were kept has
none: the first run that claims it records the bots as they are then (its
stored matches are taken as theirs). The ``meta`` key ``incomplete`` names the
bots that died for good in the last run that played, with how many of their
matches are missing; ``seed_released`` is set once a run has ended and printed
its master seed (a drawn seed is secret until then); ``to_play``, the deal sets an
entry that did not start or died for good would come back to play, ``seen``, those whose
records nothing held at some moment (:mod:`referee.results.release`). The pages read the
tournament's entries (:meth:`Store.entries`) and the dates of its first and
last match (:meth:`Store.dates`) here. The table ``history`` (schema version 2) keeps one row per
entry and version with its rating as a run's standings gave it (:class:`VersionRow`,
:mod:`referee.results.history`): ``rerun`` drops a version's matches, never its row.

The store has a **schema version** (SQLite's ``PRAGMA user_version``: in the file's header, so it
needs no table, and it commits or rolls back with the transaction that sets it; a ``meta`` row would
not, since a claim of a directory that holds no match empties ``meta``). A store written before there
was one reads 0. :data:`MIGRATIONS` takes a store from each version to the next; a store opened for
writing that is older than :data:`SCHEMA_VERSION` is brought to it in one transaction (an
interrupted migration leaves it as it was), and a new store is made by the same steps. A reader
(``create=False``: ratings, view, export, replay) reads a store as it is from :data:`READS_AS_IS`
on and writes nothing; an older one, or one without its tables yet, it migrates first. A store of a
newer version than this code knows is refused (:class:`NewerStore`, exit 2), untouched.

One run at a time writes a directory: :meth:`Store.claim` takes its lock (an ``flock`` on
``.lock`` in it, which the kernel releases when the process ends, however it ends), and a
second run is refused (:class:`DirectoryInUse`, exit 2) while the first holds it. A write the
disk refuses (full, over quota, an I/O error) is a :class:`~referee.files.WriteFailed` (exit 6):
the transaction it was in is undone, every match stored before stays intact.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from referee.files import WriteFailed
from referee.hosting import versions
from referee.hosting.versions import Snapshots
from referee.model.modes import EntryStatus
from referee.runner import FaultKind

if TYPE_CHECKING:
    from referee.model import BotSpec, Played

DB_NAME = "results.sqlite"
#: the file whose lock a run holds on its output directory (left in place: see Store.claim)
LOCK_NAME = ".lock"
#: SQLite's result codes for a write the disk refused: SQLITE_IOERR, SQLITE_FULL
_NO_ROOM = (10, 13)

#: the columns of ``seats`` that count each fault kind in schema version 1 (:class:`FaultKind`'s then)
_FAULTS_V1 = ("timeout", "illegal", "malformed", "wrong_id", "disconnect", "no_session", "error")
#: the tables of schema version 1, as migration 1 makes them (a later change is a migration of its
#: own: these never change). Version 0 (a store written before there were versions) made them on each
#: open (a store older than a table or a column gained it): so may lack some, never has more.
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
    {", ".join(f"{kind} INTEGER NOT NULL" for kind in _FAULTS_V1)},
    version TEXT,
    PRIMARY KEY (match_key, seat)
);
CREATE TABLE IF NOT EXISTS entries (
    name TEXT PRIMARY KEY, position INTEGER NOT NULL, status TEXT NOT NULL, why TEXT
);
CREATE TABLE IF NOT EXISTS schedule (key TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS bot_versions (
    id TEXT NOT NULL, bot TEXT NOT NULL, version TEXT NOT NULL, first_seen REAL NOT NULL, PRIMARY KEY (id, bot)
);
CREATE TABLE IF NOT EXISTS digests (path TEXT PRIMARY KEY, stamp TEXT NOT NULL);
"""


def _tables_v1(db: sqlite3.Connection) -> None:
    """Migration 0 -> 1, which makes a new store too: the tables and columns of version 1 that a
    store of version 0 lacks (one older than the bots' versions lacks ``seats.version``; one older
    than a fault kind, its column: 0 in the matches stored before, whose results hold the counts)."""
    for statement in filter(str.strip, SCHEMA.split(";")):
        db.execute(statement)
    have = {row[1] for row in db.execute("PRAGMA table_info(seats)")}
    if "version" not in have:
        db.execute("ALTER TABLE seats ADD COLUMN version TEXT")
    for kind in _FAULTS_V1:
        if kind not in have:
            db.execute(f"ALTER TABLE seats ADD COLUMN {kind} INTEGER NOT NULL DEFAULT 0")


#: the table of schema version 2, as migration 2 makes it: one row per entry and version, its
#: rating as the last run that computed standings with that version current left it
#: (:mod:`referee.results.history`). ``shown``: the rating's kind as the tables show it ("estimate",
#: "lower", "upper", "too few games", "none"), ``elo``, ``lo``, ``hi`` its values (a bound: one end);
#: ``scale``: the reference pool's short id, NULL for the run's own field (``anchor``: an ``--anchor``
#: on it, ``NAME=ELO``); ``recorded``: when (the rows of one run share it); times are Unix times
SCHEMA_V2 = """
CREATE TABLE history (
    entry TEXT NOT NULL,
    version TEXT NOT NULL,
    first_played REAL NOT NULL,
    last_played REAL NOT NULL,
    matches INTEGER NOT NULL,
    results INTEGER NOT NULL,
    shown TEXT NOT NULL,
    elo REAL,
    lo REAL,
    hi REAL,
    scale TEXT,
    anchor TEXT,
    off_scale INTEGER NOT NULL,
    recorded REAL NOT NULL,
    PRIMARY KEY (entry, version)
)
"""


def _history_v2(db: sqlite3.Connection) -> None:
    """Migration 1 -> 2: the table of each entry's versions and their ratings (empty: a store of
    version 1 kept none; the next run records its entries' current versions)."""
    db.execute(SCHEMA_V2)


#: the schema's migrations, in order: ``MIGRATIONS[n]`` takes a store of version n to n + 1 (in the
#: caller's transaction, which sets the version); a change to the tables is one more, at the end
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_tables_v1, _history_v2)
#: the schema version this code writes
SCHEMA_VERSION = len(MIGRATIONS)
#: the oldest schema version this code reads as it is (a reader migrates an older store first); a
#: migration that changes what the reads see raises it
READS_AS_IS = 0

#: the columns of ``seats`` a match fills, named: a store older than a fault kind has that kind's column last
SEAT_COLUMNS = ("match_key", "seat", "bot", "score", "place", *FaultKind, "version")

#: why an entry marked ``withdrawn = true`` is out
WITHDRAWN_WHY = "withdrawn = true in the tournament file"


class MetaKey(StrEnum):
    """The keys of the ``meta`` table, each named here once (:meth:`Store.meta`); its values are text,
    most of them JSON."""

    FINGERPRINT = "fingerprint"  # what must not change in the directory (TournamentConfig.fingerprint)
    CONFIG = "config"  # the tournament's description (TournamentConfig.describe), with its deals since
    VERSIONS = "versions"  # each launched bot's current version (referee.hosting.versions)
    INCOMPLETE = "incomplete"  # the bots that died for good in the last run that played, and what they missed
    LAUNCHER = "launcher"  # the launched bots' starts, exits and output not kept, in the last run
    SEED_RELEASED = "seed_released"  # when a run ended and printed the master seed (absent: still secret)
    SANDBOX = "sandbox"  # what the bots ran in, in one line (referee.hosting.sandbox.Sandbox.describe)
    ISOLATION = "isolation"  # the run's isolation (referee.model.Isolation)
    EXECUTOR = "executor"  # where the matches were played, in one line
    HOST = "host"  # the host's load during the run and whose its timeouts were (referee.hostload)
    TO_PLAY = "to_play"  # the deal sets the entries out would come back to play (referee.results.release)
    SEEN = "seen"  # the deal sets whose records nothing held at some moment (referee.results.release)
    ROUNDS = "adaptive"  # an adaptive run's rounds (referee.results.rounds)
    STOPPED = "stopped"  # why an adaptive run stopped (referee.results.rounds)
    WALL_S = "wall_s"  # a soak run's wall-clock seconds (referee.tools.soak)


class StoreError(ValueError):
    """An output directory that cannot be used for this tournament."""


class DirectoryInUse(StoreError):
    """An output directory another run is writing."""


class NewerStore(StoreError):
    """A results store of a schema version newer than this code knows: left as it is."""


@dataclass(frozen=True)
class Entry:
    """A bot the directory has known: ``status`` is "playing", "did not start" (not running and
    connected within startup_s in the last run, under absent = "withdraw"), "withdrawn"
    (``withdrawn = true``) or "dead" (died for good, under absent = "withdraw"); ``why`` for any
    status but playing; ``version``: a short id of its current version (None: external or unknown)."""

    name: str
    status: EntryStatus
    why: str | None
    version: str | None


@dataclass(frozen=True)
class MatchRow:
    key: str
    deal_set: int
    lineup: tuple[str, ...]
    results: dict[str, Any]
    seconds: float = 0.0  # how long the match took
    #: the short id of the version of the bot in each seat (None: not known, an external bot)
    versions: tuple[str | None, ...] = ()

    @property
    def scores(self) -> list[int]:
        return cast(list[int], self.results["scores"])

    @property
    def placing(self) -> list[int]:
        return cast(list[int], self.results["placing"])

    @property
    def faults(self) -> list[dict[str, int]]:
        return self.results.get("faults") or [dict.fromkeys(FaultKind, 0) for _ in self.lineup]


@dataclass(frozen=True)
class VersionRow:
    """One version of an entry in the directory's history (table ``history``, :data:`SCHEMA_V2`):
    ``first_played`` and ``last_played`` its first match's start and its last one's end (Unix
    times), ``matches`` and ``results`` (pairwise results: what its rating counts) as the standings
    counted them; ``shown``, ``elo``, ``lo``, ``hi`` its rating as the tables show it; ``scale``:
    the pool's short id, None for the run's own field; ``anchor``: ``NAME=ELO`` on the field;
    ``off_scale``: the run did not keep the pool's scale; ``recorded``: when the run recorded it."""

    entry: str
    version: str
    first_played: float
    last_played: float
    matches: int
    results: int
    shown: str
    elo: float | None
    lo: float | None
    hi: float | None
    scale: str | None
    anchor: str | None
    off_scale: bool
    recorded: float


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
            try:
                self._open(create)
            except BaseException:
                self.db.close()
                raise
        except sqlite3.Error as e:
            raise StoreError(f"{path}: cannot open the results database: {e}") from None
        self._versions: dict[str, str | None] = {}  # the bots' versions of this run (claim): what save records
        #: the copies of the bots' files taken with their versions (claim, with snapshot), until close
        self.snapshots: Snapshots | None = None

    def _open(self, create: bool) -> None:
        """Refuse a store of a newer schema before anything is set (:class:`NewerStore`: the file is
        left as it is); bring an older one to :data:`SCHEMA_VERSION` when writing (``create``), or
        when a reader cannot read it as it is. A reader of a store it reads writes nothing (a results
        directory on a full disk reads)."""
        version = self.schema_version()
        self._refuse_newer(version)
        if create:  # a file's journal mode stays set: a reader of a store being written needs no lock for it
            self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if version < SCHEMA_VERSION and (create or not self._reads_as_is(version)):
            self._migrate()

    def schema_version(self) -> int:
        """The store's schema version (0: written before there were versions, or new and empty)."""
        return cast(int, self.db.execute("PRAGMA user_version").fetchone()[0])

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise NewerStore(f"{self.directory}: written by a newer referee (its results store has schema version "
                             f"{version}; this one knows versions up to {SCHEMA_VERSION}): upgrade referee to read or "
                             f"resume it; the directory is left as it is")

    def _reads_as_is(self, version: int) -> bool:
        """Whether this code reads the store as it is: of :data:`READS_AS_IS` or later, with the
        tables its reads need (a store of version 0 without them is new, or older than bots' versions)."""
        return version >= READS_AS_IS and "version" in {row[1] for row in self.db.execute("PRAGMA table_info(seats)")}

    def _migrate(self) -> None:
        """Run the migrations from the store's version to :data:`SCHEMA_VERSION` and set it, in one
        transaction: one that fails, or a process killed in the middle, leaves the store as it was.
        The version is read again once the transaction holds the write lock (another run may have
        migrated the store meanwhile)."""
        try:
            with self._writing(f"its schema, to version {SCHEMA_VERSION}"):
                self.db.execute("BEGIN IMMEDIATE")
                version = self.schema_version()
                self._refuse_newer(version)
                for step in MIGRATIONS[version:]:
                    step(self.db)
                self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except WriteFailed as err:
            raise WriteFailed(f"{err}; the store is left as it was: make room and run the same command again") \
                from None
        except sqlite3.Error as err:
            raise StoreError(f"{self.path}: cannot bring the results store to schema version {SCHEMA_VERSION}: "
                             f"{err}; it is left as it was") from None

    def close(self) -> None:
        self.db.close()
        if self.snapshots is not None:  # the run is over: its bots' copies go
            self.snapshots.remove()
            self.snapshots = None
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

    def meta(self, key: MetaKey) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: MetaKey, value: str) -> None:
        with self._writing(f"its {key}"):
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def incomplete(self) -> dict[str, dict[str, Any]]:
        """The bots that died for good in the last run that played, and did not play all their
        matches: ``{name: {"missing": N, "why": ...}}``."""
        return {name: v for name, v in json.loads(self.meta(MetaKey.INCOMPLETE) or "{}").items() if v.get("missing")}

    def set_incomplete(self, bots: dict[str, dict[str, Any]]) -> None:
        self.set_meta(MetaKey.INCOMPLETE, json.dumps(bots, sort_keys=True))

    def bot_notes(self) -> list[str]:
        """Bots that did not play all their matches; launched bots that died or restarted (from the last
        run); not the entries out of the competition (their status says why: :meth:`entries`)."""
        status = json.loads(self.meta(MetaKey.LAUNCHER) or "{}")
        incomplete = self.incomplete()
        out = self.out()
        notes = [f"* bot {name} did not play {v['missing']} of its {v.get('of', '')} matches: it {v['why']}; "
                 f"it ranks below every bot that played all of theirs; the same command plays the missing matches"
                 for name, v in sorted(incomplete.items())]
        for name, st in sorted(status.items()):
            if name in incomplete or name in out:
                pass
            elif st.get("exits"):
                notes.append(f"bot {name}: died {len(st['exits'])} time(s) (last: {st['exits'][-1]})")
            if st.get("dropped_bytes"):
                notes.append(f"bot {name}: {st['dropped_bytes']} bytes of output past the log cap not kept")
        return notes

    def claim(self, fingerprint: str, description: dict[str, Any], bots: Sequence[BotSpec],
              rerun: Sequence[str] = (), announce: Callable[[str], None] | None = None,
              hide: Sequence[Path] = (), check: Callable[[Store], None] | None = None,
              snapshot: bool = False) -> dict[str, int]:
        """Bind the directory to a tournament and its bots; refuse one that holds another's
        matches (a changed fingerprint: keys of it that an older directory lacks are not
        compared), or matches of a bot that changed since (:mod:`~referee.hosting.versions`;
        ``hide``: what its version leaves out) unless it is in ``rerun``: the stored matches of
        those bots are dropped, to be played again (a dead entry plays again), and ``announce``
        is told how many. ``check(store)``, after the fingerprint, may refuse more (a tournament
        file that shrinks what the directory holds). A directory that holds no match is claimed
        whatever it held. Records the entries (``bots``, in their order). With ``snapshot``, each
        launched bot's files are copied as they are hashed (:attr:`snapshots`, in the directory until
        :meth:`close`: what its sandbox shows). Returns how many were dropped, by bot."""
        self._take_lock(announce)
        stored = self.meta(MetaKey.FINGERPRINT)
        empty = self.count(every=True) == 0
        if stored is not None and not empty:
            old, new = json.loads(stored), json.loads(fingerprint)
            changed = [k for k in sorted(new) if k in old and old[k] != new[k]]
            if changed:
                raise StoreError(
                    f"{self.directory} holds the results of another tournament configuration "
                    f"(changed: {', '.join(changed)}). Use a new output directory, or restore the old settings "
                    f"to resume.")
        if check is not None:
            check(self)
        names = [b.name for b in bots]
        unknown = [name for name in rerun if name not in names]
        if unknown:
            raise StoreError(f"--rerun {unknown[0]}: no such bot in this tournament (its bots: {', '.join(names)})")
        cache = {path: json.loads(stamp) for path, stamp in self.db.execute("SELECT path, stamp FROM digests")}
        dead = set() if empty else {row[0] for row in self.db.execute("SELECT name FROM entries WHERE status = ?",
                                                                     (EntryStatus.DEAD,))}
        playing = [b for b in bots if not (b.withdrawn or b.name in dead) or b.name in rerun]  # the others keep theirs
        copies = versions.Snapshots(self.directory / versions.SNAPSHOTS)  # a killed run's, if any, removed
        self.snapshots = copies if snapshot else None
        take = copies.take if snapshot else versions.of
        current = {b.name: take(b, [*hide, *versions.apart(b, bots)], cache) for b in playing}
        before = {} if empty else json.loads(self.meta(MetaKey.VERSIONS) or "{}")  # none: older than versions
        for name, version in current.items():
            if name in rerun or version is None or before.get(name) in (None, version) or not self.played(name):
                continue
            raise StoreError(
                f"bot {name} changed since its matches in {self.directory} were played "
                f"({', '.join(versions.changes(before[name], version))}): give --rerun {name} to play its "
                f"matches again, or use a new output directory")
        used = {path for v in current.values() if v is not None for path in v["files"]}
        with self._writing("the tournament it holds"):
            if empty:
                for table in ("meta", "entries", "schedule"):
                    self.db.execute(f"DELETE FROM {table}")
            dropped = {name: self._drop(name) for name in dict.fromkeys(rerun)}
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (MetaKey.FINGERPRINT, fingerprint))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (MetaKey.CONFIG, json.dumps(description)))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            (MetaKey.VERSIONS, json.dumps({**before, **current}, sort_keys=True)))
            self.db.executemany("INSERT OR REPLACE INTO bots VALUES (?, ?, ?)",
                                [(b.name, "external" if b.external else "launched", json.dumps(list(b.command)) or None)
                                 for b in bots])
            self.db.executemany("INSERT OR IGNORE INTO bot_versions VALUES (?, ?, ?, ?)",
                                [(versions.short_id(v), name, json.dumps(v, sort_keys=True), time.time())
                                 for name, v in current.items() if v is not None])
            self.db.execute("DELETE FROM digests")
            self.db.executemany("INSERT INTO digests VALUES (?, ?)",
                                [(path, json.dumps(stamp)) for path, stamp in cache.items() if path in used])
            self._record_entries(bots, rerun)
        self._versions = {name: versions.short_id(v) for name, v in current.items()}
        for name, n in dropped.items():
            if announce is not None:
                announce(f"--rerun {name}: its {n} stored match(es) are dropped, to be played again")
        return dropped

    def _record_entries(self, bots: Sequence[BotSpec], rerun: Sequence[str]) -> None:
        """The file's entries, in its order (in the caller's transaction): ``withdrawn = true`` makes
        one withdrawn, its removal playing again; ``rerun`` brings a dead one back; an entry no
        longer in the file (it had no match stored) is forgotten."""
        known = {name: (status, why) for name, status, why in self.db.execute("SELECT name, status, why FROM entries")}
        self.db.execute("DELETE FROM entries")
        for position, b in enumerate(bots):
            status, why = known.get(b.name, (EntryStatus.PLAYING, None))
            if b.withdrawn:
                status, why = EntryStatus.WITHDRAWN, WITHDRAWN_WHY
            elif status == EntryStatus.WITHDRAWN or b.name in rerun:
                status, why = EntryStatus.PLAYING, None
            self.db.execute("INSERT INTO entries VALUES (?, ?, ?, ?)", (b.name, position, status, why))

    def recorded_versions(self) -> dict[str, Any]:
        """Each launched bot's current version as recorded (:mod:`referee.hosting.versions`; empty in a
        directory older than versions)."""
        return cast(dict[str, Any], json.loads(self.meta(MetaKey.VERSIONS) or "{}"))

    def entries(self) -> list[Entry]:
        """Every entry the directory has known, in file order (none in a directory older than entries)."""
        current = self.recorded_versions()
        return [Entry(name, EntryStatus(status), why, versions.short_id(current.get(name)))
                for name, status, why in self.db.execute("SELECT name, status, why FROM entries ORDER BY position")]

    def set_entries(self, status: EntryStatus, reasons: Mapping[str, str | None]) -> None:
        """Give these entries (``{name: why}``) a status."""
        with self._writing("its entries"):
            self.db.executemany("UPDATE entries SET status = ?, why = ? WHERE name = ?",
                                [(status, None if status == EntryStatus.PLAYING else why, name)
                                 for name, why in reasons.items()])

    def out(self) -> dict[str, str]:
        """The entries not playing, and why: ``{name: "status: why"}``."""
        return {e.name: f"{e.status}: {e.why}" for e in self.entries() if e.status != EntryStatus.PLAYING}

    def set_schedule(self, keys: Iterable[str]) -> None:
        """The keys of the schedule the directory plays now: the stored matches that count."""
        with self._writing("its schedule"):
            self.db.execute("DELETE FROM schedule")
            self.db.executemany("INSERT OR IGNORE INTO schedule VALUES (?)", [(k,) for k in keys])

    def schedule_keys(self) -> list[str]:
        """The keys of the schedule the directory plays now (none before a run recorded one)."""
        return [row[0] for row in self.db.execute("SELECT key FROM schedule ORDER BY key")]

    def _scheduled(self) -> bool:
        return self.db.execute("SELECT 1 FROM schedule LIMIT 1").fetchone() is not None

    def played(self, bot: str) -> bool:
        """Whether any stored match has ``bot`` in its line-up."""
        return self.db.execute("SELECT 1 FROM seats WHERE bot = ? LIMIT 1", (bot,)).fetchone() is not None

    def _drop(self, bot: str) -> int:
        """Delete every stored match with ``bot`` in its line-up (in the caller's transaction); how many."""
        keys = [row[0] for row in self.db.execute("SELECT DISTINCT match_key FROM seats WHERE bot = ?", (bot,))]
        self.db.executemany("DELETE FROM seats WHERE match_key = ?", [(k,) for k in keys])
        self.db.executemany("DELETE FROM matches WHERE key = ?", [(k,) for k in keys])
        return len(keys)

    def played_span(self, bot: str) -> tuple[float, float] | None:
        """When ``bot``'s first counted match began and its last one ended (Unix times), None before any."""
        where = "" if not self._scheduled() else " AND m.key IN (SELECT key FROM schedule)"
        first, last = self.db.execute(
            "SELECT MIN(m.finished_at - m.seconds), MAX(m.finished_at) FROM matches m WHERE m.key IN "
            f"(SELECT match_key FROM seats WHERE bot = ?){where}", (bot,)).fetchone()
        return None if first is None else (first, last)

    def save_history(self, rows: Iterable[VersionRow]) -> None:
        """Each row replaces its entry and version's, keeping the earlier first match of the two (a
        version played again after a ``--rerun`` of itself, or one that comes back)."""
        rows = list(rows)
        with self._writing("its history"):
            for row in rows:
                before = self.db.execute("SELECT first_played FROM history WHERE entry = ? AND version = ?",
                                         (row.entry, row.version)).fetchone()
                first = row.first_played if before is None else min(before[0], row.first_played)
                self.db.execute(f"INSERT OR REPLACE INTO history VALUES ({', '.join('?' * 14)})",
                                (row.entry, row.version, first, row.last_played, row.matches, row.results,
                                 row.shown, row.elo, row.lo, row.hi, row.scale, row.anchor, int(row.off_scale),
                                 row.recorded))

    def history(self) -> list[VersionRow] | None:
        """Every entry's versions as the runs recorded them, by entry, each by its first match; None
        for a store read as it is that is older than the history (schema version 1 or before)."""
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'").fetchone() is None:
            return None
        rows = self.db.execute("SELECT * FROM history ORDER BY entry, first_played, recorded, version")
        return [VersionRow(entry, version, first, last, matches, results, shown, elo, lo, hi, scale, anchor,
                           bool(off_scale), recorded)
                for entry, version, first, last, matches, results, shown, elo, lo, hi, scale, anchor, off_scale,
                recorded in rows]

    def dates(self) -> tuple[float, float] | None:
        """When the first stored match began and the last one ended (Unix times), None before any."""
        first, last = self.db.execute("SELECT MIN(finished_at - seconds), MAX(finished_at) FROM matches").fetchone()
        return None if first is None else (first, last)

    def seed_released(self) -> bool:
        """Whether a run has ended and printed the master seed (a drawn seed is secret until then)."""
        return self.meta(MetaKey.SEED_RELEASED) is not None

    def release_seed(self) -> None:
        self.set_meta(MetaKey.SEED_RELEASED, str(time.time()))

    def withhold_seed(self) -> None:
        """A new secret seed deals the deal sets added (:func:`referee.competition.run.with_stored_seed`):
        the seeds are secret again until the run ends."""
        with self._writing("its seed"):
            self.db.execute("DELETE FROM meta WHERE key = ?", (MetaKey.SEED_RELEASED,))

    def config(self) -> dict[str, Any]:
        text = self.meta(MetaKey.CONFIG)
        if text is None:
            raise StoreError(f"{self.directory}: the store has no tournament configuration")
        return cast(dict[str, Any], json.loads(text))

    # --- matches ------------------------------------------------------------------

    def done(self) -> set[str]:
        """The keys of every stored match (counted or not)."""
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
                f"INSERT INTO seats ({', '.join(SEAT_COLUMNS)}) VALUES ({', '.join('?' for _ in SEAT_COLUMNS)})",
                [(key, seat, bot, results["scores"][seat], results["placing"][seat],
                  *(faults[seat].get(kind, 0) for kind in FaultKind), self._versions.get(bot))
                 for seat, bot in enumerate(lineup)])

    def save_played(self, played: Played) -> None:
        """A match as an executor hands it over (:class:`~referee.play.executors.Played`)."""
        s = played.seating
        self.save(s.key, s.deal_set, s.seed, s.lineup, played.results, played.record, played.seconds)

    def deal_sets_stored(self) -> set[int]:
        """The deal sets of the stored matches (counted or not)."""
        return {row[0] for row in self.db.execute("SELECT DISTINCT deal_set FROM matches")}

    def deal_sets_dealt(self) -> int:
        """How many deal sets the stored matches were dealt from: the last one's number + 1 (0: none)."""
        last = self.db.execute("SELECT MAX(deal_set) FROM matches").fetchone()[0]
        return 0 if last is None else last + 1

    def matches(self, every: bool = False) -> Iterator[MatchRow]:
        """The stored matches that count (those of the schedule played now: what every table
        shows), by deal set and key; ``every``: all stored matches, counted or not."""
        where = "" if every or not self._scheduled() else " WHERE key IN (SELECT key FROM schedule)"
        seat_versions: dict[str, dict[int, str | None]] = {}
        for key, seat, version in self.db.execute("SELECT match_key, seat, version FROM seats"):
            seat_versions.setdefault(key, {})[seat] = version
        for key, deal_set, lineup, results, seconds in self.db.execute(
                f"SELECT key, deal_set, lineup, results, seconds FROM matches{where} ORDER BY deal_set, key"):
            names = tuple(json.loads(lineup))
            of = seat_versions.get(key, {})
            yield MatchRow(key, deal_set, names, json.loads(results), seconds,
                           tuple(of.get(i) for i in range(len(names))))

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

    def count(self, every: bool = False) -> int:
        """How many stored matches count (:meth:`matches`); ``every``: how many are stored."""
        where = "" if every or not self._scheduled() else " WHERE key IN (SELECT key FROM schedule)"
        return cast(int, self.db.execute(f"SELECT COUNT(*) FROM matches{where}").fetchone()[0])
