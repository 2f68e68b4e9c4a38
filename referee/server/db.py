"""The competition server's own store: entrants, invites, sessions, submissions and the jobs on them.

SQLite in WAL mode (pages read while the coordinator writes), written only by the server's one
process (the coordinator and its routes); the matches live in the results stores of the
tournaments it plays (the ladder's, each validation's, the finals'), as for any run. Secrets are
kept hashed: passwords (argon2, :mod:`referee.server.auth`), API tokens and session ids (SHA-256).

A submission is a job: ``queued``, then ``building``/``validating`` under a lease (a coordinator
killed mid-job leaves a lease that runs out; the next one takes the job again from its start),
then ``accepted`` or ``failed``; ``stopped`` later if it keeps faulting on the ladder.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from referee.competition.ladder import Phase

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY, look TEXT NOT NULL UNIQUE, team TEXT NOT NULL, password TEXT NOT NULL,
    token TEXT NOT NULL UNIQUE, organiser INTEGER NOT NULL DEFAULT 0, disabled TEXT, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS invites (
    code TEXT PRIMARY KEY, team TEXT, created REAL NOT NULL, used_by TEXT, used REAL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, created REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, version TEXT NOT NULL, directory TEXT NOT NULL,
    manifest TEXT NOT NULL, uploaded REAL NOT NULL, status TEXT NOT NULL, reason TEXT,
    lease REAL, build_log TEXT NOT NULL DEFAULT '', validation_log TEXT NOT NULL DEFAULT '',
    validation_dir TEXT, frozen INTEGER NOT NULL DEFAULT 0, finished REAL);
CREATE INDEX IF NOT EXISTS submissions_by_name ON submissions (name, id);
CREATE TABLE IF NOT EXISTS uploads (name TEXT NOT NULL, at REAL NOT NULL);
"""


class Setting(StrEnum):
    """The keys of the server store's ``meta`` table, each named once."""

    PHASE = "phase"                # the competition's phase (draft until moved)
    SECRET = "secret"              # the key of the CSRF tokens
    FINALS_DONE = "finals_done"    # the finals' end: JSON, matches stored and why they stopped
    MOVED = "moved_"               # + a phase: when the competition moved to it (ISO 8601)


class Status(StrEnum):
    QUEUED = "queued"
    BUILDING = "building"
    VALIDATING = "validating"
    ACCEPTED = "accepted"
    FAILED = "failed"
    STOPPED = "stopped"


#: the statuses of a job in hand: a lease runs
RUNNING = (Status.BUILDING, Status.VALIDATING)


@dataclass(frozen=True)
class User:
    name: str
    team: str
    organiser: bool
    disabled: str | None


@dataclass(frozen=True)
class Submission:
    id: int
    name: str
    version: str
    directory: str
    manifest: dict[str, Any]
    uploaded: float
    status: Status
    reason: str | None
    build_log: str
    validation_log: str
    validation_dir: str | None
    frozen: bool
    finished: float | None

    @property
    def short(self) -> str:
        return self.version[:12]


class ServerDB:
    """The server's store (one per competition state directory)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.lock = threading.RLock()  # the routes and the coordinator's threads share one connection
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        with self.lock:
            self.db.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    # --- meta -------------------------------------------------------------------

    def setting(self, key: Setting, suffix: str = "") -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key + suffix,))
        return rows[0][0] if rows else None

    def set_setting(self, key: Setting, value: str, suffix: str = "") -> None:
        with self.tx() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key + suffix, value))

    def phase(self) -> Phase:
        return Phase(self.setting(Setting.PHASE) or Phase.DRAFT)

    # --- entrants ---------------------------------------------------------------

    def add_invite(self, code: str, team: str | None) -> None:
        with self.tx() as db:
            db.execute("INSERT INTO invites VALUES (?, ?, ?, NULL, NULL)", (code, team, time.time()))

    def invites(self) -> list[tuple[str, str | None, str | None]]:
        return [(c, t, u) for c, t, u in self.query("SELECT code, team, used_by FROM invites ORDER BY created")]

    def register(self, name: str, look: str, team: str | None, password: str, token: str, invite: str | None,
                 organiser: bool = False) -> str:
        """Add an entrant (``password``, ``token``: as stored, hashed); ``invite``: the code it used,
        taken now (None: the organiser). Returns its team. ValueError (one line) if the code is not
        one, or used, or the name or its look-alike is taken."""
        with self.tx() as db:
            if invite is not None:
                row = db.execute("SELECT team, used_by FROM invites WHERE code = ?", (invite,)).fetchone()
                if row is None or row[1] is not None:
                    raise ValueError("that invite code is not valid (or was used already)")
                team = row[0] or team
                db.execute("UPDATE invites SET used_by = ?, used = ? WHERE code = ?", (name, time.time(), invite))
            if db.execute("SELECT 1 FROM users WHERE look = ?", (look,)).fetchone():
                raise ValueError(f"the name {name!r} is taken (or one that looks like it)")
            team = team or name
            db.execute("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
                       (name, look, team, password, token, int(organiser), time.time()))
        return team

    def looks(self) -> list[str]:
        return [r[0] for r in self.query("SELECT name FROM users")]

    def user(self, name: str) -> User | None:
        rows = self.query("SELECT name, team, organiser, disabled FROM users WHERE name = ?", (name,))
        return User(rows[0][0], rows[0][1], bool(rows[0][2]), rows[0][3]) if rows else None

    def users(self) -> list[User]:
        return [User(n, t, bool(o), d) for n, t, o, d in
                self.query("SELECT name, team, organiser, disabled FROM users ORDER BY created")]

    def password_of(self, name: str) -> str | None:
        rows = self.query("SELECT password FROM users WHERE name = ?", (name,))
        return rows[0][0] if rows else None

    def set_password(self, name: str, stored: str) -> None:
        with self.tx() as db:
            db.execute("UPDATE users SET password = ? WHERE name = ?", (stored, name))

    def set_token(self, name: str, token_hash: str) -> None:
        with self.tx() as db:
            db.execute("UPDATE users SET token = ? WHERE name = ?", (token_hash, name))

    def by_token(self, token_hash: str) -> User | None:
        rows = self.query("SELECT name FROM users WHERE token = ?", (token_hash,))
        return self.user(rows[0][0]) if rows else None

    def disable(self, name: str, why: str | None) -> None:
        with self.tx() as db:
            db.execute("UPDATE users SET disabled = ? WHERE name = ?", (why, name))

    # --- sessions ---------------------------------------------------------------

    def add_session(self, sid_hash: str, name: str, lifetime_s: float) -> None:
        now = time.time()
        with self.tx() as db:
            db.execute("DELETE FROM sessions WHERE expires < ?", (now,))
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)", (sid_hash, name, now, now + lifetime_s))

    def session_user(self, sid_hash: str) -> User | None:
        rows = self.query("SELECT name FROM sessions WHERE id = ? AND expires > ?", (sid_hash, time.time()))
        return self.user(rows[0][0]) if rows else None

    def end_session(self, sid_hash: str) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (sid_hash,))

    def end_other_sessions(self, name: str, keep_hash: str) -> int:
        """End every session of ``name`` but the one ``keep_hash`` names; how many were ended."""
        with self.tx() as db:
            return db.execute("DELETE FROM sessions WHERE name = ? AND id != ?", (name, keep_hash)).rowcount

    # --- submissions ------------------------------------------------------------

    def uploads_since(self, name: str, since: float) -> list[float]:
        return [r[0] for r in self.query("SELECT at FROM uploads WHERE name = ? AND at >= ? ORDER BY at",
                                         (name, since))]

    def add_submission(self, name: str, version: str, directory: str, manifest: dict[str, Any]) -> int:
        with self.tx() as db:
            db.execute("INSERT INTO uploads VALUES (?, ?)", (name, time.time()))
            cur = db.execute("INSERT INTO submissions (name, version, directory, manifest, uploaded, status) "
                             "VALUES (?, ?, ?, ?, ?, ?)",
                             (name, version, directory, json.dumps(manifest), time.time(), Status.QUEUED))
            return int(cur.lastrowid or 0)

    def note_upload(self, name: str) -> None:
        """An upload refused before it became a submission still counts against the hourly limit."""
        with self.tx() as db:
            db.execute("INSERT INTO uploads VALUES (?, ?)", (name, time.time()))

    _COLUMNS = ("id, name, version, directory, manifest, uploaded, status, reason, build_log, validation_log, "
                "validation_dir, frozen, finished")

    @staticmethod
    def _submission(row: tuple[Any, ...]) -> Submission:
        return Submission(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], Status(row[6]), row[7],
                          row[8], row[9], row[10], bool(row[11]), row[12])

    def submission(self, sid: int) -> Submission | None:
        rows = self.query(f"SELECT {self._COLUMNS} FROM submissions WHERE id = ?", (sid,))
        return self._submission(rows[0]) if rows else None

    def submissions(self, name: str | None = None) -> list[Submission]:
        where, args = ("WHERE name = ?", (name,)) if name is not None else ("", ())
        return [self._submission(r) for r in
                self.query(f"SELECT {self._COLUMNS} FROM submissions {where} ORDER BY id DESC", args)]

    def take_job(self, lease_s: float) -> Submission | None:
        """The oldest submission waiting (queued, or in hand under a lease that ran out), now in hand."""
        now = time.time()
        with self.tx() as db:
            row = db.execute(
                f"SELECT {self._COLUMNS} FROM submissions WHERE status = ? OR (status IN (?, ?) AND lease < ?) "
                f"ORDER BY id LIMIT 1", (Status.QUEUED, *RUNNING, now)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE submissions SET status = ?, lease = ?, build_log = '', validation_log = '' "
                       "WHERE id = ?", (Status.BUILDING, now + lease_s, row[0]))
        return self.submission(row[0])

    def requeue_running(self) -> int:
        """At a coordinator's start: the checks a killed one had in hand wait again, from their start (one
        coordinator owns the store, so no lease held now is another's)."""
        with self.tx() as db:
            return db.execute("UPDATE submissions SET status = ?, lease = NULL WHERE status IN (?, ?)",
                              (Status.QUEUED, *RUNNING)).rowcount

    def job_step(self, sid: int, status: Status, lease_s: float, **logs: str) -> None:
        sets = ", ".join(f"{k} = ?" for k in logs)
        with self.tx() as db:
            db.execute(f"UPDATE submissions SET status = ?, lease = ?{', ' + sets if sets else ''} WHERE id = ?",
                       (status, time.time() + lease_s, *logs.values(), sid))

    def job_done(self, sid: int, status: Status, reason: str | None, **logs: str | None) -> None:
        sets = "".join(f", {k} = ?" for k in logs)
        with self.tx() as db:
            db.execute(f"UPDATE submissions SET status = ?, reason = ?, lease = NULL, finished = ?{sets} WHERE id = ?",
                       (status, reason, time.time(), *logs.values(), sid))

    def stop(self, sid: int, reason: str) -> None:
        with self.tx() as db:
            db.execute("UPDATE submissions SET status = ?, reason = ? WHERE id = ? AND status = ?",
                       (Status.STOPPED, reason, sid, Status.ACCEPTED))

    def latest_accepted(self) -> dict[str, Submission]:
        """Each entrant's latest accepted submission (the one that plays), frozen ones first once frozen."""
        out: dict[str, Submission] = {}
        for s in reversed(self.submissions()):  # oldest first: the later overwrite
            if s.status == Status.ACCEPTED:
                out[s.name] = s
        return out

    def freeze(self) -> list[Submission]:
        """Mark each entrant's latest accepted version frozen; returns them."""
        chosen = self.latest_accepted()
        with self.tx() as db:
            db.executemany("UPDATE submissions SET frozen = 1 WHERE id = ?", [(s.id,) for s in chosen.values()])
        return [s for s in (self.submission(s.id) for s in chosen.values()) if s is not None]

    def frozen(self) -> list[Submission]:
        return [s for s in self.submissions() if s.frozen]

    def waiting(self) -> int:
        return len(self.query("SELECT 1 FROM submissions WHERE status IN (?, ?, ?)", (Status.QUEUED, *RUNNING)))
