"""History over versions: each entry of a results directory, one row per version it has played
with, and the rating the last run that computed standings with that version current gave it.

A run's standings (:func:`referee.competition.service.run_tournament`, ``run_gauntlet``) are
recorded with :func:`record`: a row for every ranked entry's current version (its short id,
:func:`referee.hosting.versions.short_id`), replaced as the run plays on with that version, kept when
``--rerun`` drops its matches for a new one. An external bot (no version known) has none.

**Scales.** A rating is on a **pool**'s scale when the run included a reference pool
(``Standings.pool_id``: docs/pool.md): such rows compare across runs and versions (unless marked
off-scale: the run did not keep the pool's scale). Without a pool a rating is on its run's own
**field** (the field's average at 1500, or an ``--anchor`` bot's rating): the field differs from
one run to the next (here, by the very version that changed), so such rows compare only with the
other entries' rows of the same run, not across versions. The text and the report say so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tabulate import tabulate

from referee.results import standings as tstandings
from referee.results.standings import Standings
from referee.results.store import MetaKey, Store, StoreError, VersionRow
from referee.stats.ratings import Bound


class UnknownEntry(StoreError):
    """``referee history DIR ENTRY`` for an entry the directory has not known."""


#: what each scale means, as the notes below the text say it
FIELD_NOTE = ("field: on its run's own entrants (their average 1500, or an --anchor): the field changes from run to "
              "run, with the very version that changed, so a row on it compares only with the other entries' rows "
              "its run recorded (--json: the same 'recorded' time), not across versions; a [pool] in the tournament "
              "file puts every run on one scale (docs/pool.md)")
POOL_NOTE = ("pool ID: on the scale of that reference pool (its bots fixed at their ratings): rows on the same pool "
             "compare across runs and versions")
OFF_SCALE_NOTE = ("off-scale: the run did not keep the pool's scale (another setting, or the pool's bots' distances "
                  "moved): its rating is not comparable with the pool's other rows")


@dataclass(frozen=True)
class EntryHistory:
    """One entry's versions, in the order it first played them; ``current``: its version now (None:
    external, or unknown)."""

    entry: str
    current: str | None
    versions: tuple[VersionRow, ...]


def record(store: Store, st: Standings, now: float | None = None) -> None:
    """Record each ranked entry's current version with its rating in ``st`` (a run's standings of
    the directory's stored matches): a row per entry and version, replaced by a later run of the same
    version (:meth:`Store.save_history`). A reference pool's bots, held at the pool's ratings, get
    none: their rating is the pool's, not this run's measure."""
    now = time.time() if now is None else now
    held = set(st.pool.held) if st.pool is not None else set()
    versions = {e.name: e.version for e in st.entries}
    anchor = f"{st.anchor[0]}={st.anchor[1]:g}" if st.anchor is not None else None
    rows = []
    for line in st.lines:
        version, span = versions.get(line.name), store.played_span(line.name)
        if version is None or span is None or line.name in held:  # an external bot, one the store knows
            continue  # no version of, or a pool's bot
        shown = tstandings.shown_line(line)
        rows.append(VersionRow(line.name, version, span[0], span[1], line.matches, line.results, shown.kind,
                               shown.elo, shown.lo, shown.hi, st.pool_id, None if st.pool_id else anchor,
                               st.off_scale, now))
    if rows:
        store.save_history(rows)


def of_store(store: Store, entry: str | None = None) -> list[EntryHistory] | None:
    """The directory's history by entry (file order, then any entry it no longer lists), each with
    its versions; ``entry``: that one alone (:class:`UnknownEntry` if the directory never knew it).
    None for a store older than histories (schema version 1 or before, read as it is). A reference
    pool's bots are not listed (they are held at the pool's ratings: no row is kept of them)."""
    rows = store.history()
    kept = json.loads(store.meta(MetaKey.CONFIG) or "{}")  # a store may hold no configuration yet
    pooled = set((kept.get("pool") or {}).get("bots", ()))
    current = {e.name: e.version for e in store.entries() if e.name not in pooled}
    names = list(dict.fromkeys([*current, *(r.entry for r in rows or ())]))
    if entry is not None and entry in pooled:
        raise UnknownEntry(f"{store.directory}: {entry!r} is a bot of the reference pool its runs include, held at "
                           "the pool's rating: it has no history here (docs/pool.md)")
    if entry is not None and entry not in names:
        known = ", ".join(names) if names else "none"
        raise UnknownEntry(f"{store.directory}: no entry {entry!r} in this results directory (its entries: {known})")
    if rows is None:
        return None
    return [EntryHistory(name, current.get(name), tuple(r for r in rows if r.entry == name))
            for name in names if entry in (None, name)]


def date(t: float) -> str:
    """A time as the text shows it: ``2026-12-04 13:05`` (UTC)."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


def iso(t: float) -> str:
    """A time as the JSON gives it: ``2026-12-04T13:05:09Z``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rating_cells(row: VersionRow) -> tuple[str, str]:
    """The Elo and interval cells of a version, as the standings show a rating (``1540``, ``[1320,
    1760]``; a bound ``> 1568``, ``-``; ``too few games``)."""
    if row.shown == Bound.LOWER and row.lo is not None:  # Shown.kind names a bound as the statistics do
        return f"> {row.lo:.0f}", "-"
    if row.shown == Bound.UPPER and row.hi is not None:
        return f"< {row.hi:.0f}", "-"
    elo = "-" if row.elo is None else f"{row.elo:.0f}"
    if row.shown == tstandings.TOO_FEW:
        return elo, tstandings.TOO_FEW
    if row.lo is None or row.hi is None:
        return elo, "-"
    return elo, f"[{row.lo:.0f}, {row.hi:.0f}]"


def scale_text(row: VersionRow) -> str:
    """The scale cell: ``field``, ``field (random=1000)``, ``pool e8144d8f815c``, with ``, off-scale``."""
    if row.scale is None:
        return "field" if row.anchor is None else f"field ({row.anchor})"
    return f"pool {row.scale}" + (", off-scale" if row.off_scale else "")


def notes(rows: Iterable[VersionRow]) -> list[str]:
    """The notes on the scales these rows are on, one a line."""
    rows = list(rows)
    out = []
    if any(r.scale is None for r in rows):
        out.append(FIELD_NOTE)
    if any(r.scale is not None for r in rows):
        out.append(POOL_NOTE)
    if any(r.off_scale for r in rows):
        out.append(OFF_SCALE_NOTE)
    return out


#: the columns of a version's row, as the text and the report print them
HEADERS = ("#", "version", "first played", "last played", "matches", "results", "Elo", "95% interval", "scale")


def cells(k: int, row: VersionRow, current: str | None) -> list[str]:
    """A version's cells (:data:`HEADERS`); the entry's current version is marked ``*``."""
    return [str(k), row.version + (" *" if row.version == current else ""), date(row.first_played),
            date(row.last_played), str(row.matches), str(row.results), *rating_cells(row), scale_text(row)]


def text(directory: str, histories: Sequence[EntryHistory] | None) -> str:
    """The history as ``referee history`` prints it: a table per entry, then the notes."""
    if histories is None:
        return (f"no history in {directory}: its results store was written before referee kept one (schema version "
                f"1 or before); the next tournament or gauntlet run in it records its entries' current versions")
    if not any(h.versions for h in histories):
        return (f"no history in {directory} yet: a tournament or gauntlet run records each entry's version with its "
                f"rating when it computes the standings (an external bot has no version, and no history)")
    parts = [f"History over versions in {directory}: one row per version, the rating the last run with it left "
             f"(times UTC; * the entry's version now)"]
    every = [r for h in histories for r in h.versions]
    for h in histories:
        parts += ["", f"{h.entry}: {len(h.versions)} version(s)"]
        if h.versions:
            parts.append(tabulate([cells(k, r, h.current) for k, r in enumerate(h.versions, 1)], headers=HEADERS,
                                  tablefmt="simple", disable_numparse=True,
                                  colalign=("right", "left", "left", "left", "right", "right", "right", "right",
                                            "left")))
    return "\n".join([*parts, "", *(f"scale {n}" for n in notes(every))])


def row_json(row: VersionRow, current: str | None) -> dict[str, Any]:
    elo, interval = rating_cells(row)
    return {"version": row.version, "current": row.version == current, "first_played": iso(row.first_played),
            "last_played": iso(row.last_played), "matches": row.matches, "results": row.results,
            "rating": {"kind": row.shown, "elo": row.elo, "lo": row.lo, "hi": row.hi, "shown": elo,
                       "interval": interval},
            "scale": "field" if row.scale is None else "pool", "pool": row.scale, "anchor": row.anchor,
            "off_scale": row.off_scale, "recorded": iso(row.recorded)}


def to_json(directory: str, histories: Sequence[EntryHistory] | None) -> dict[str, Any]:
    """The history as ``referee history --json`` prints it (``kept``: false for a store older than histories)."""
    if histories is None:
        return {"directory": directory, "kept": False, "entries": [], "notes": []}
    every = [r for h in histories for r in h.versions]
    return {"directory": directory, "kept": True,
            "entries": [{"entry": h.entry, "current": h.current, "versions": [row_json(r, h.current)
                                                                              for r in h.versions]}
                        for h in histories],
            "notes": notes(every)}
