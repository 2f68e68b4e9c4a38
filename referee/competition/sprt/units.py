"""Duplicate units: their line-ups, the candidate's result in each game, and the tally of a test."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee import games
from referee.games import RatedBy
from referee.stats.ratings import Record
from referee.stats.sprt import SPRT, Verdict


def unit_lineups(game: str, candidate: str, baseline: str) -> list[tuple[str, ...]]:
    """The two line-ups of a unit: the two bots in alternate seats, the candidate first, then the
    seats swapped (two seats: (c, b), (b, c); four: (c, b, c, b), (b, c, b, c))."""
    seats = range(games.get(game).num_seats)
    return [tuple((candidate, baseline)[i % 2] for i in seats), tuple((baseline, candidate)[i % 2] for i in seats)]


def game_outcome(game: str, lineup: Sequence[str], results: Mapping[str, Any], candidate: str,
                 baseline: str) -> tuple[float, float]:
    """(the candidate's result 1 / 0.5 / 0, its points minus the baseline's) of one match.

    A game rated by placing (Aegis): by the match winner. A game rated by score (Confirmation): by
    the total score of the candidate's seats against the baseline's seats."""
    mine = [s for s, b in enumerate(lineup) if b == candidate]
    theirs = [s for s, b in enumerate(lineup) if b == baseline]
    scores = results["scores"]
    margin = float(sum(scores[s] for s in mine) - sum(scores[s] for s in theirs))
    if games.get(game).rated_by is RatedBy.PLACING:
        placing = results["placing"]
        diff = float(placing[theirs[0]] - placing[mine[0]])  # lower place is better
    else:
        diff = margin
    return (1.0 if diff > 0 else 0.0 if diff < 0 else 0.5), margin


@dataclass
class Unit:
    """One finished duplicate unit."""

    index: int
    scores: tuple[float, ...]  # the candidate's result in each game
    margins: tuple[float, ...]  # the candidate's points minus the baseline's, per game
    faults: dict[str, Counter[str]] = field(default_factory=dict)

    @property
    def points(self) -> float:
        return sum(self.scores)


def make_unit(game: str, index: int, lineups: Sequence[Sequence[str]], results: Sequence[Mapping[str, Any]],
              candidate: str, baseline: str) -> Unit:
    scores, margins = [], []
    faults: dict[str, Counter[str]] = {candidate: Counter(), baseline: Counter()}
    for lineup, res in zip(lineups, results):
        score, margin = game_outcome(game, lineup, res, candidate, baseline)
        scores.append(score)
        margins.append(margin)
        for seat, counts in enumerate(res.get("faults") or []):
            faults[lineup[seat]].update({k: v for k, v in counts.items() if v})
    return Unit(index, tuple(scores), tuple(margins), faults)


class Tally:
    """The units counted so far, in order, and the test's state."""

    def __init__(self, sprt: SPRT):
        self.sprt = sprt
        self.units: list[Unit] = []
        self.record = Record()  # the candidate's games: wins, draws, losses
        self.faults: dict[str, Counter[str]] = {}
        self.verdict: Verdict | None = None
        self.started = time.monotonic()
        self.seconds = 0.0

    def add(self, unit: Unit) -> Verdict | None:
        """Count a unit (not after a verdict); returns the verdict, if reached."""
        if self.verdict is not None:
            return self.verdict
        self.units.append(unit)
        for score in unit.scores:
            self.record.add(score)
        for bot, counts in unit.faults.items():
            self.faults.setdefault(bot, Counter()).update(counts)
        self.sprt.add(round(unit.points * 2))
        self.verdict = self.sprt.verdict()
        self.seconds = time.monotonic() - self.started
        return self.verdict

    @property
    def games(self) -> int:
        return self.record.games

    @property
    def wins(self) -> int:
        return self.record.wins

    @property
    def draws(self) -> int:
        return self.record.draws

    @property
    def losses(self) -> int:
        return self.record.losses
