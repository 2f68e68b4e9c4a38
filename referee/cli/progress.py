"""What a tournament or gauntlet prints on stderr while it plays.

- On a terminal: one status line, redrawn in place, never wider than the
  terminal (so it never wraps): matches done of the total, the time left
  ("ETA 1m30s", from this run's pace only, so it is right after a resume) and
  the live Elo of every bot, from every stored result, those of earlier runs
  included.
- Off a terminal (a CI log): the same facts as a plain line every N matches or
  M seconds, whichever comes first (checked as matches end), and at the end.
- ``--verbose``: a line per finished match ("Finished match 4:heuristic|search (aegis,
  no. 17): heuristic 13 – search 17") and, every N matches, a cutechess-style
  "Score of A vs B: W - L - D  [score] games" line per pair of bots.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

from referee import games
from referee.model import Played
from referee.results.standings import match_seats
from referee.results.store import MatchRow
from referee.stats import headtohead, ratings

#: a line of progress off a terminal at least every this many seconds (when a match ends)
DEFAULT_SECONDS = 30.0
#: ... and every this many matches (default: 5% of the schedule)
DEFAULT_SHARE = 0.05
#: the "Score of" lines every this many matches
DEFAULT_SCORE_EVERY = 10
#: the fewest seconds between two redraws of the terminal line
REDRAW_S = 0.2


@dataclass(frozen=True)
class ProgressSettings:
    """The progress options of ``tournament`` and ``gauntlet`` (see :mod:`referee.cli.options`)."""

    quiet: bool = False
    verbose: bool = False
    score_every: int = DEFAULT_SCORE_EVERY
    every: int | None = None  # matches between plain progress lines; None: 5% of the schedule
    seconds: float = DEFAULT_SECONDS


# --- text -------------------------------------------------------------------------------


def duration(seconds: float) -> str:
    """``45s``, ``1m30s``, ``2h05m``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def status_line(done: int, total: int, eta: str, elos: Sequence[tuple[str, float]], width: int) -> str:
    """The terminal's status line, at most ``width - 1`` characters (the last column is left free:
    some terminals wrap on it): the count, the ETA, then as many bots' live Elo as fit."""
    pct = 100 * done // total if total else 100
    line = f"{done}/{total} matches {pct}%  {eta}"
    for i, (name, elo) in enumerate(elos):
        part = f"{'  Elo ' if i == 0 else ', '}{name} {elo:.0f}"
        if len(line) + len(part) > width - 1:
            line += " …" if len(line) + 2 <= width - 1 else ""  # more bots than fit
            break
        line += part
    return line[:max(0, width - 1)]


def match_line(game: str, number: int | None, row: MatchRow) -> str:
    """``Finished match 4:heuristic|search (aegis, no. 17): heuristic 13 – search 17``: the match's id
    (as the logs, the report and ``referee replay DIR ID`` name it), its number in the store (its
    exported file's), then a two-seat game in seat order, a game of more seats in placing order,
    each seat with its place."""
    spec = games.get(game)
    if spec.num_seats == 2:
        result = " – ".join(f"{bot} {score}" for bot, score in zip(row.lineup, row.scores))
    else:
        order = sorted(range(len(row.lineup)), key=lambda s: (row.placing[s], s))
        result = ", ".join(f"{row.placing[s]}. {row.lineup[s]} {row.scores[s]}" for s in order)
    return f"Finished match {row.key} ({game}, no. {number if number is not None else '?'}): {result}"


def score_lines(tally: dict[tuple[str, str], list[int]], names: Sequence[str]) -> list[str]:
    """``Score of A vs B: W - L - D  [0.625] 16`` for each pair of bots that met, from A's side (A:
    the one first in ``names``); ``tally``: each pair's [wins, losses, draws] of its first bot, in
    pairwise games as the ratings count them (:meth:`LiveStandings.tally`)."""
    rank = {name: i for i, name in enumerate(names)}
    order = {}
    for (a, b), (w, lost, d) in tally.items():
        if rank.get(b, math.inf) < rank.get(a, math.inf):
            a, b, w, lost = b, a, lost, w
        order[(rank.get(a, math.inf), rank.get(b, math.inf), a, b)] = (a, b, w, lost, d)
    lines = []
    for key in sorted(order):
        a, b, w, lost, d = order[key]
        n = w + lost + d
        lines.append(f"Score of {a} vs {b}: {w} - {lost} - {d}  [{(w + d / 2) / n:.3f}] {n}")
    return lines


# --- the pace and the standings -----------------------------------------------------------


class Eta:
    """The time left, from the pace of this run's matches only (those stored before a resume took
    no time of this run)."""

    def __init__(self, done_before: int, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.started = clock()
        self.done_before = done_before

    def elapsed(self) -> float:
        return self.clock() - self.started

    def left(self, done: int, total: int) -> float | None:
        played = done - self.done_before
        if played <= 0:
            return None
        return self.elapsed() / played * (total - done)

    def text(self, done: int, total: int) -> str:
        if done >= total:
            return f"done in {duration(self.elapsed())}"
        left = self.left(done, total)
        return "ETA --" if left is None else f"ETA {duration(left)}"


class LiveStandings:
    """Point estimates of every bot's Elo from all the results so far, stored ones included, and
    each pair's wins, losses and draws.

    A fit over tens of thousands of pairwise results takes a fraction of a second, in the event loop
    that runs the matches: the Elo is fitted again only when it has not been for fifty times as long
    as the last fit took (at most 2% of the time), unless asked for ``fresh``."""

    def __init__(self, game: str, rows: Iterable[MatchRow] = (), clock: Callable[[], float] = time.monotonic):
        self.game = game
        self.clock = clock
        self.outcomes: list[ratings.Outcome] = []
        #: (a, b) -> [wins, losses, draws] of a against b, a < b
        self.tally: dict[tuple[str, str], list[int]] = {}
        self._elos: list[tuple[str, float]] = []
        self._stale = False
        self._fitted_at = -math.inf
        self._cost = 0.0
        for row in rows:
            self.add(row)

    def add(self, row: MatchRow) -> None:
        seats = match_seats(self.game, [row])
        self.outcomes += headtohead.pair_results(seats)  # what the fit takes: team results in pairs
        for o in headtohead.seat_results(seats):  # bot against bot, never partners, as head to head counts
            a, b, score = (o.a, o.b, o.score) if o.a < o.b else (o.b, o.a, 1 - o.score)
            self.tally.setdefault((a, b), [0, 0, 0])[0 if score == 1 else 1 if score == 0 else 2] += 1
        self._stale = True

    def elos(self, fresh: bool = False) -> list[tuple[str, float]]:
        """(bot, Elo), best first."""
        now = self.clock()
        if self._stale and (fresh or now - self._fitted_at >= 50 * self._cost):
            started = time.perf_counter()
            fitted = ratings.fit(self.outcomes)
            self._elos = sorted(fitted.items(), key=lambda kv: (-kv[1], kv[0]))
            self._cost, self._fitted_at, self._stale = time.perf_counter() - started, now, False
        return self._elos


# --- the display ------------------------------------------------------------------------


class RunDisplay:
    """The progress callback of a run (``Progress`` of :mod:`referee.competition.run`) and its output."""

    def __init__(self, game: str, total: int, settings: ProgressSettings, *, stored: Iterable[MatchRow] = (),
                 number_of: Callable[[str], int | None] = lambda key: None, names: Sequence[str] = (),
                 stream: TextIO, tty: bool | None = None, clock: Callable[[], float] = time.monotonic,
                 width: Callable[[], int] = lambda: shutil.get_terminal_size().columns):
        self.game, self.total, self.settings = game, total, settings
        self.standings = LiveStandings(game, stored, clock)
        self.number_of, self.names = number_of, list(names)
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.clock, self.width = clock, width
        self.eta: Eta | None = None
        self.done = 0
        self.played = 0
        self.every = settings.every or max(1, math.ceil(total * DEFAULT_SHARE))
        self.last_line_at = (clock(), 0)  # when, and at how many matches of this run, the last plain line
        self.drawn = 0  # the width of the status line on the terminal (0: none)
        self.drawn_at = -math.inf

    # the callback

    def update(self, finished: int, total: int, played: Played | None = None) -> None:
        self.done, self.total = finished, total
        if self.eta is None:
            self.eta = Eta(finished - (played is not None), self.clock)
        if played is not None:
            s = played.seating
            row = MatchRow(s.key, s.deal_set, s.lineup, played.results, played.seconds)
            self.standings.add(row)
            self.played += 1
            if self.settings.verbose:
                self._print(match_line(self.game, self.number_of(s.key), row))
                if self.played % self.settings.score_every == 0 or finished >= total:
                    for line in score_lines(self.standings.tally, self.names):
                        self._print(line)
        if self.settings.quiet:
            return
        if self.tty:
            self._redraw(force=played is None or finished >= total)
        elif played is not None and self._plain_line_due():
            self._print(self.plain_line())

    def close(self) -> None:
        """End the status line (the terminal's cursor goes to a new line)."""
        if self.drawn:
            self._redraw(force=True)
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = 0

    # the lines

    def plain_line(self) -> str:
        assert self.eta is not None
        elos = ", ".join(f"{name} {elo:.0f}" for name, elo in self.standings.elos(fresh=True))
        pct = 100 * self.done // self.total if self.total else 100
        return (f"progress: {self.done}/{self.total} matches ({pct}%), {self.played} in "
                f"{duration(self.eta.elapsed())} this run, {self.eta.text(self.done, self.total)}"
                + (f"; Elo {elos}" if elos else ""))

    def _plain_line_due(self) -> bool:
        at, count = self.last_line_at
        now = self.clock()
        if self.done >= self.total or self.played - count >= self.every or now - at >= self.settings.seconds:
            self.last_line_at = (now, self.played)
            return True
        return False

    def _redraw(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self.drawn_at < REDRAW_S:
            return
        self.drawn_at = now
        assert self.eta is not None
        elos = self.standings.elos(fresh=self.done >= self.total)
        line = status_line(self.done, self.total, self.eta.text(self.done, self.total), elos, self.width())
        self.stream.write("\r" + line.ljust(self.drawn if self.drawn <= self.width() - 1 else len(line)))
        self.stream.flush()
        self.drawn = len(line)

    def _print(self, line: str) -> None:
        """A line of its own; on a terminal, above the status line (which is drawn again)."""
        if self.tty and self.drawn:
            self.stream.write("\r" + " " * min(self.drawn, self.width() - 1) + "\r")
            self.drawn = 0
            self.stream.write(line + "\n")
            self._redraw(force=True)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
