"""Authors and teams: no two entries of one team sit at one table.

An entry may declare its author or team (``team = "acme"`` in its ``[[bots]]`` table); an entry
without one is a team of its own. Two entries of one team at one table could play for each other
(one throws its points to the other), so every schedule keeps them apart, as Halite's matchmaker
did: the round robin (:func:`referee.competition.schedule.make_schedule`, through the game's
``seat_groups`` and its ``apart`` argument), the adaptive scheduler (``adaptive.next_tables``), a
grown directory (its schedule is the file's), the gauntlet and the SPRT. This module is the rule's
one place: :class:`Teams` says whether a table keeps team-mates apart (:meth:`Teams.apart`) and
whether a schedule can (:meth:`Teams.settle`); any scheduler, a competition server's ladder too,
asks it.

Where a schedule cannot avoid it (a game of four seats and fewer than four teams in play; two
entries of one team in a duel), the run says so in one line and refuses (:class:`TeamError`, exit 2),
unless the organiser allows it explicitly (``[tournament] allow_team_tables = true``): such a schedule
is then played as if no team were declared, and says so. A schedule that can keep team-mates apart
always does, whatever the setting.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field


class TeamError(ValueError):
    """A schedule that cannot keep team-mates apart, which the file does not allow: one line."""


#: the tournament key that allows team-mates at one table where the schedule cannot avoid it
ALLOW_KEY = "allow_team_tables"


@dataclass(frozen=True)
class Teams:
    """Each entry's declared team (``of``: entry -> team; an entry missing is a team of its own) and
    whether the organiser allows team-mates at one table where a schedule cannot avoid it."""

    of: Mapping[str, str] = field(default_factory=dict)
    allow: bool = False

    def key(self, entry: str) -> tuple[str, str]:
        """What two entries share when they are team-mates (an undeclared entry: itself alone)."""
        team = self.of.get(entry)
        return ("team", team) if team is not None else ("entry", entry)

    def apart(self, table: Iterable[str]) -> bool:
        """Whether no two entries of ``table`` are of one team (an entry in several seats is one)."""
        entries = set(table)
        return len({self.key(e) for e in entries}) == len(entries)

    def mates(self, table: Iterable[str]) -> list[tuple[str, str]]:
        """The pairs of team-mates of ``table``."""
        return [(a, b) for a, b in itertools.combinations(sorted(set(table)), 2) if self.key(a) == self.key(b)]

    def count(self, entries: Iterable[str]) -> int:
        """How many teams ``entries`` make."""
        return len({self.key(e) for e in entries})

    def shared(self, entries: Iterable[str]) -> str:
        """The teams of more than one of ``entries``, in a line (``acme: a1, a2; ...``)."""
        members: dict[tuple[str, str], list[str]] = {}
        for e in entries:
            members.setdefault(self.key(e), []).append(e)
        return "; ".join(f"{key[1]}: {', '.join(names)}" for key, names in members.items() if len(names) > 1)

    def unseated(self, entries: Sequence[str], seats: int) -> list[str]:
        """The entries that no table of ``seats`` seats (every entry, when there are fewer) can hold
        without a team-mate: all of them when the entries make fewer teams than a table has seats."""
        size = min(seats, len(entries))
        return list(entries) if self.count(entries) < size else []

    def settle(self, unseated: Collection[str], why: str) -> bool:
        """Whether the schedule keeps team-mates apart: True when nobody is ``unseated`` (it then
        must); False when some are and the organiser allows team-mates at one table (the schedule is
        then made as if no team were declared). A :class:`TeamError` saying ``why`` otherwise."""
        if not unseated:
            return True
        if self.allow:
            return False
        raise TeamError(f"{why}: the schedule cannot keep team-mates apart; set {ALLOW_KEY} = true in "
                        f"[tournament] to let them share tables, or add entries of other teams")

    def note(self, entries: Sequence[str], apart: bool) -> str:
        """What the schedule's note says of the teams of ``entries`` (empty: no two share one)."""
        shared = self.shared(entries)
        if not shared:
            return ""
        if apart:
            return f"; team-mates never at one table ({shared})"
        return f"; team-mates share tables ({ALLOW_KEY} = true: {shared})"


#: no team declared: every entry alone
NO_TEAMS = Teams()


def seated_apart(teams: Teams, entries: Sequence[str], seats: int, what: str) -> bool:
    """The rule for a schedule whose tables are any ``seats`` of ``entries`` (a round robin, an
    adaptive tournament): whether it keeps team-mates apart (:meth:`Teams.settle`)."""
    unseated = teams.unseated(entries, seats)
    size = min(seats, len(entries))
    why = (f"{what} seats {size} at a table and its {len(entries)} entries in play make {teams.count(entries)} "
           f"team(s) ({teams.shared(entries)})")
    return teams.settle(unseated, why)
