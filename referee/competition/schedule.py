"""Fair scheduling by duplicate play: every deal is played from every seat.

Deals come from the master seed in *deal sets*: deal set k is the seed of the
shoe of every match played on it, so all its seatings get the same cards in
the same seats (RULES §3 fixes how a deck order becomes a deal).

The game says which bots sit down together (``GameSpec.seat_groups``: its
base line-ups); each base line-up plays every deal set in each of its
distinct seat rotations. Aegis: each pair of bots plays each deal set twice,
seats swapped, so the same cards go to the same role, played once by each
bot. Confirmation: each group of four in its four rotations, fewer bots
filling several seats (``referee/games/confirmation/lineups.py``). No table seats two entries of
one team (:mod:`referee.model.teams`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from referee import games
from referee.model import Schedule, Seating, deal_set_seed
from referee.model.teams import NO_TEAMS, Teams, seated_apart


def numbers(deal_sets: int, retired: Collection[int] = ()) -> list[int]:
    """The numbers of a schedule's ``deal_sets`` deal sets: the first that are not ``retired`` (a
    deal set that may have been seen when a match was still to be dealt from it: docs/security.md,
    :func:`referee.results.release.exposed`)."""
    out: list[int] = []
    k = 0
    while len(out) < deal_sets:
        if k not in retired:
            out.append(k)
        k += 1
    return out


def rotations(base: Sequence[str]) -> list[tuple[str, ...]]:
    """The distinct seat rotations of a line-up, in order."""
    seen: list[tuple[str, ...]] = []
    for r in range(len(base)):
        lineup = tuple(base[(i + r) % len(base)] for i in range(len(base)))
        if lineup not in seen:
            seen.append(lineup)
    return seen


def make_schedule(game: str, options: dict[str, Any], bots: Sequence[str], deal_sets: int, seed: int,
                  max_groups: int = 70, later_seeds: Sequence[tuple[int, int]] = (),
                  retired: Collection[int] = (), teams: Teams = NO_TEAMS) -> Schedule:
    """Every line-up of the game's tables of ``bots`` on each of ``deal_sets`` deal sets (those not
    ``retired``), none seating two entries of one team (:mod:`referee.model.teams`: a
    :class:`TeamError` when that cannot be and the file does not allow it)."""
    if len(bots) < 2:
        raise ValueError("a schedule needs at least two bots")
    spec = games.get(game)
    apart = seated_apart(teams, bots, spec.num_seats, spec.title)
    groups, note = spec.seat_groups(bots, options, max_groups, teams.apart if apart else None)
    note += teams.note(bots, apart)
    bases = [rotations(g) for g in groups]
    seatings = [Seating(k, deal_set_seed(seed, later_seeds, k), lineup)
                for k in numbers(deal_sets, retired) for group in bases for lineup in group]
    return Schedule(tuple(seatings), tuple(tuple(g) for g in groups), note)


def missing(schedule: Schedule, stored: Collection[str]) -> list[Seating]:
    """What a run plays: the seatings of the schedule whose match is not among the ``stored``
    keys, in the schedule's order. The schedule is the current file's (of the entries in play),
    so a tournament that grew plays only its new matches."""
    return [s for s in schedule.seatings if s.key not in stored]
