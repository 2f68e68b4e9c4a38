"""The results store: one SQLite file in the output directory.

Every finished match is written in one transaction (its row, its seats'
scores, places and faults, and the full record), so an interrupted
tournament (Ctrl-C, kill -9) loses at most the matches in flight and the
next run plays only what is missing. The tournament's fingerprint (game,
options, bots, deal sets, seed, clock) is stored too: a directory holding
another tournament's results is refused rather than mixed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.runner import FaultKind

if TYPE_CHECKING:
    from referee.tournament.config import BotSpec
    from referee.tournament.executors import Played

DB_NAME = "results.sqlite"

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
        try:
            self.db = sqlite3.connect(path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            with self.db:
                self.db.executescript(SCHEMA)
        except sqlite3.Error as e:
            raise StoreError(f"{path}: cannot open the results database: {e}") from None

    def close(self) -> None:
        self.db.close()

    # --- the tournament this directory belongs to ---------------------------------

    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def bot_notes(self) -> list[str]:
        """Launched bots that died, restarted or were skipped (from the last run)."""
        status = json.loads(self.meta("launcher") or "{}")
        notes = []
        for name, st in sorted(status.items()):
            if st.get("dead"):
                notes.append(f"bot {name}: SKIPPED, {st['dead']}; its missing matches are played by a later run")
            elif st.get("exits"):
                notes.append(f"bot {name}: died {len(st['exits'])} time(s) (last: {st['exits'][-1]})")
            if st.get("dropped_bytes"):
                notes.append(f"bot {name}: {st['dropped_bytes']} bytes of output past the log cap not kept")
        return notes

    def claim(self, fingerprint: str, description: dict[str, Any], bots: Sequence[BotSpec]) -> None:
        """Bind the directory to a tournament and its bots; refuse one that holds another."""
        stored = self.meta("fingerprint")
        if stored is not None and stored != fingerprint:
            old, new = json.loads(stored), json.loads(fingerprint)
            changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
            raise StoreError(
                f"{self.directory} holds the results of another tournament configuration "
                f"(changed: {', '.join(changed)}). Use a new output directory, or restore the old settings "
                f"to resume.")
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('config', ?)", (json.dumps(description),))
            self.db.executemany("INSERT OR REPLACE INTO bots VALUES (?, ?, ?)",
                                [(b.name, "external" if b.external else "launched", json.dumps(list(b.command)) or None)
                                 for b in bots])

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
        with self.db:
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
