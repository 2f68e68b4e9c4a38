"""Games out of a results directory: one record file per stored match and ``matches.csv``.

Every match a tournament, gauntlet or SPRT stores keeps its full record
(``docs/records.md``); :func:`export` writes each as ``match-NNNN.json``
(``referee replay`` checks it) and one row per match in ``matches.csv``.
A match's id is its key, ``DEALSET:BOT|BOT...`` (its seating: stable however the tournament
grows; the logs' markers, the report and ``--verbose`` name it so); its number, the order in
which the store saved it, 1 first (:meth:`Store.numbers`), names its exported file. ``referee
replay DIR ID`` takes either.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee import files, records
from referee.results.store import DB_NAME, MatchRow, Store
from referee.runner import FaultKind

CSV_NAME = "matches.csv"
#: where ``referee export DIR`` writes without ``--to``
DEFAULT_SUBDIRECTORY = "export"


class ExportError(ValueError):
    """A results directory, match id or output path that cannot be used."""


@dataclass(frozen=True)
class StoredMatch:
    number: int
    row: MatchRow
    #: whether the standings count it (a match of the schedule played now: :meth:`Store.matches`)
    counted: bool = True

    @property
    def file_name(self) -> str:
        return f"match-{self.number:04d}.json"


def open_results(directory: str | Path) -> Store:
    """The store of a results directory (of a tournament, gauntlet or SPRT), or an ExportError."""
    path = Path(directory)
    if not path.is_dir():
        raise ExportError(f"{path}: not a results directory ({'a file' if path.exists() else 'not found'}); "
                          f"give the output directory of a tournament, gauntlet or sprt run")
    if not (path / DB_NAME).is_file():
        raise ExportError(f"{path}: not a results directory (no {DB_NAME} in it)")
    return Store(path, create=False)


def stored_matches(store: Store) -> list[StoredMatch]:
    """Every stored match with its number, in number order (those the standings do not count too)."""
    numbers = store.numbers()
    counted = {row.key for row in store.matches()}
    return sorted((StoredMatch(numbers[row.key], row, row.key in counted) for row in store.matches(every=True)),
                  key=lambda m: m.number)


def record_of(store: Store, match: StoredMatch) -> dict[str, Any]:
    """The match's record as the referee stored it, its number, key and deal set added to ``meta``."""
    record = store.record(match.row.key) or {}
    record["meta"] = {"match": match.number, "key": match.row.key, "deal_set": match.row.deal_set,
                      "seconds": round(match.row.seconds, 3), **record.get("meta", {})}
    return record


def find(store: Store, match_id: str) -> StoredMatch:
    """The stored match with this id (its key) or number, or an ExportError saying where ids are found."""
    matches = stored_matches(store)
    for m in matches:
        if match_id.strip() in (str(m.number), m.row.key):
            return m
    numbers = f"numbered {number_ranges([m.number for m in matches])}" if matches else "none stored yet"
    raise ExportError(f"no match {match_id!r} in {store.directory} (its matches: {numbers}); the ids are the "
                      f"first column of matches.csv from `referee export {store.directory}` (its number) or the "
                      f"second (its key, DEALSET:BOT|BOT..., as the report, the logs and --verbose name it)")


def number_ranges(numbers: list[int]) -> str:
    """Sorted match numbers as ranges: ``1 to 120, 241 to 390`` (a ``--rerun`` drops a bot's matches,
    and their numbers are not used again), a lone number as itself."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a} to {b}" for a, b in runs)


def output_directory(results: Path, to: str | Path | None) -> Path:
    out = Path(to) if to is not None else results / DEFAULT_SUBDIRECTORY
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: exists and is not a directory; give --to a directory (new or existing)")
    try:
        return files.make_directory(out)  # a full disk: WriteFailed (exit 6)
    except files.CannotWrite as e:
        raise ExportError(str(e)) from None


@dataclass(frozen=True)
class Exported:
    """What :func:`export` wrote: every match; those stored without a game record (none is written
    for them); those whose record keeps only some of its fault records (all are counted)."""

    matches: list[StoredMatch]
    missing: list[StoredMatch]
    partial: list[tuple[StoredMatch, records.FaultTally]]


def export(store: Store, out: Path) -> Exported:
    """Write every stored match's record and ``matches.csv`` into ``out``."""
    matches = stored_matches(store)
    missing, partial = [], []
    for done, m in enumerate(matches):
        record = record_of(store, m)
        if record.get("format") != records.FORMAT:
            missing.append(m)
            continue
        faults = records.faults_of(record)
        if faults.kept < faults.counted:
            partial.append((m, faults))
        try:
            records.write(out / m.file_name, record)
        except files.WriteFailed as err:  # each file is whole or absent: those before are intact
            raise files.WriteFailed(f"{err}; the {done - len(missing)} record(s) before it are written, the results "
                                    f"store is untouched: make room and export again") from None
    _write(out / CSV_NAME, matches_csv(matches, {m.number for m in missing}))
    return Exported(matches, missing, partial)


def matches_csv(matches: list[StoredMatch], without_record: Set[int] = frozenset()) -> str:
    """One row per match: its number and key, deal set, then per seat the bot, its score, its place and
    its faults (all kinds together, then each kind: ``timeout0``, ... ``error0``: every fault counted;
    the record's ``meta.fault_counts`` has them by kind, ``meta.faults`` the first 50 of each seat), the
    seconds, the record file (empty for the matches ``without_record``), per seat the version of its bot
    (the short id of ``referee/hosting/versions.py``; empty: not known), and whether the standings
    count it."""
    seats = max((len(m.row.lineup) for m in matches), default=0)
    header = (["match", "key", "deal_set"] + [f"seat{i}" for i in range(seats)]
              + [f"score{i}" for i in range(seats)] + [f"place{i}" for i in range(seats)]
              + [f"faults{i}" for i in range(seats)]
              + [f"{kind}{i}" for i in range(seats) for kind in FaultKind] + ["seconds", "record"]
              + [f"version{i}" for i in range(seats)] + ["counted"])
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(_csv_rows(matches, without_record))
    return text.getvalue()


def _csv_rows(matches: list[StoredMatch], without_record: Set[int]) -> Iterator[list[Any]]:
    for m in matches:
        r = m.row
        versions = r.versions or (None,) * len(r.lineup)
        yield [m.number, r.key, r.deal_set, *r.lineup, *r.scores, *r.placing,
               *(sum(f.values()) for f in r.faults), *(f.get(kind, 0) for f in r.faults for kind in FaultKind),
               f"{r.seconds:.3f}",
               "" if m.number in without_record else m.file_name, *(v or "" for v in versions), int(m.counted)]


def _write(path: Path, text: str) -> None:
    try:
        files.write_text(path, text)
    except files.CannotWrite as e:
        raise ExportError(str(e)) from None
