"""When the records of a run's matches may reach the referee's spectators.

A match's record holds its seed, its decks and every hand: the cards of every
other match on the same deal set (duplicate play). So the executor plays every
match with its record held back, and a run releases records only when no
match they could give away is still to be played (docs/security.md):

- ``"deal-set"`` (the default): a deal set's records once every match of that
  deal set is stored;
- ``"end"``: every record once every match of the schedule is stored.

A deal set that a run leaves unfinished (interrupted, or a bot that died)
keeps its records held: a later run may still play the rest of it.
"""

from __future__ import annotations

from collections.abc import Iterable

from referee.tournament.schedule import Seating

RELEASES = ("deal-set", "end")


class Releases:
    """The keys of the matches played in this run whose records may now be released.

    Made from the schedule's seatings and the keys already stored (played by an earlier
    run: this run's referee never had their records); :meth:`stored` is told of each
    match this run stores, and says which records it frees."""

    def __init__(self, seatings: Iterable[Seating], stored: Iterable[str] = (), mode: str = "deal-set"):
        if mode not in RELEASES:
            raise ValueError(f"release must be one of {', '.join(RELEASES)}, got {mode!r}")
        self.mode = mode
        done = set(stored)
        self._missing: dict[int, set[str]] = {}  # deal set -> keys not stored yet
        for s in seatings:
            missing = self._missing.setdefault(s.deal_set, set())
            if s.key not in done:
                missing.add(s.key)
        self._played: dict[int, list[str]] = {}  # deal set -> keys stored by this run, not yet released

    def stored(self, seating: Seating) -> list[str]:
        """``seating``'s match is stored: the keys whose records may be released now (maybe none)."""
        self._missing.setdefault(seating.deal_set, set()).discard(seating.key)
        self._played.setdefault(seating.deal_set, []).append(seating.key)
        if self.mode == "deal-set":  # only this deal set can have just become complete
            ready = [] if self._missing[seating.deal_set] else [seating.deal_set]
        elif not any(self._missing.values()):
            ready = list(self._played)
        else:
            ready = []
        return [key for k in ready for key in self._played.pop(k)]
