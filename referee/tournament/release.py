"""When the records of a run's matches may reach the referee's spectators.

A match's record holds its seed, its decks and every hand: the cards of every
other match on the same deal set (duplicate play). So the executor plays every
match with its record held back, and a run releases records only when no
match they could give away is still to be played (docs/security.md):

- ``"deal-set"`` (the default): a deal set's records once every match of that
  deal set is stored;
- ``"end"``: every record once every match of the schedule is stored.

A deal set that a run leaves unfinished (interrupted, or a bot that died)
keeps its records held: a later run may still play the rest of it. And while an
entry "did not start" (``absent = "withdraw"``), a run releases nothing: the next
run tries it again, and it would play its matches of every deal set.

What gives records out of a results directory holds back the same (:func:`held`,
:class:`Held`): the report shows a held match's results but no replay (and the
bots' logs only without those matches' lines), and ``export``, the organiser's,
says how many records it wrote that are held. A deal set is held while an entry
still to play may play it: while the current schedule has matches of it to play,
and while an entry did not start, every deal set it would come back to play (those
with matches still to play of the schedule with it in play: :data:`TO_PLAY`), until
that entry has played, or is withdrawn (``withdrawn = true``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.tournament.schedule import Seating, deal_set_of

if TYPE_CHECKING:
    from referee.tournament.store import Store

RELEASES = ("deal-set", "end")
#: the store's ``meta`` key of the deal sets with matches still to play of the schedule of every
#: entry not out for good (those that did not start included): what they would play (a JSON list)
TO_PLAY = "to_play"


class Releases:
    """The keys of the matches played in this run whose records may now be released.

    Made from the schedule's seatings and the keys already stored (played by an earlier
    run: this run's referee never had their records); :meth:`stored` is told of each
    match this run stores, and says which records it frees."""

    def __init__(self, seatings: Iterable[Seating], stored: Iterable[str] = (), mode: str = "deal-set",
                 awaited: Collection[int] = ()):
        """``awaited``: the deal sets the entries that did not start in this run would come back to
        play (this run releases none of them; with ``"end"``, nothing at all)."""
        if mode not in RELEASES:
            raise ValueError(f"release must be one of {', '.join(RELEASES)}, got {mode!r}")
        self.mode = mode
        self.awaited = frozenset(awaited)
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
            over = not self._missing[seating.deal_set] and seating.deal_set not in self.awaited
            ready = [seating.deal_set] if over else []
        elif not any(self._missing.values()) and not self.awaited:
            ready = list(self._played)
        else:
            ready = []
        return [key for k in ready for key in self._played.pop(k)]


@dataclass(frozen=True)
class Held:
    """The deal sets whose records are held back from what a results directory gives out:
    ``unfinished``, those of the schedule with matches still to play; while entries are
    ``waiting`` (they did not start, and the next run tries them again), those they would play,
    ``awaited`` (None: every one)."""

    unfinished: frozenset[int]
    waiting: tuple[str, ...] = ()
    awaited: frozenset[int] | None = None

    def __bool__(self) -> bool:
        return bool(self.unfinished) or self._waiting_for(None)

    def holds(self, deal_set: int) -> bool:
        return deal_set in self.unfinished or self._waiting_for(deal_set)

    def _waiting_for(self, deal_set: int | None) -> bool:
        """Whether waiting entries hold ``deal_set`` (None: any deal set)."""
        if not self.waiting:
            return False
        return self.awaited is None or (bool(self.awaited) if deal_set is None else deal_set in self.awaited)

    def why(self, deal_set: int) -> str | None:
        """Why a deal set's records are held and what releases them, in words (None: not held)."""
        if self._waiting_for(deal_set):
            return self._while_waiting()
        if deal_set in self.unfinished:
            return (f"held until every match of deal set {deal_set} is played (an entry still to play it "
                    f"would know its cards)")
        return None

    def reason(self) -> str:
        """Why records are held and what releases them, in words (for all of them)."""
        if self._waiting_for(None):
            return self._while_waiting()
        return (f"held until every match of their deal set is played (deal set{'s' if len(self.unfinished) > 1 else ''}"
                f" {_named(self.unfinished)} still to play; an entry still to play one would know its cards)")

    def line(self, deal_sets: Sequence[int]) -> str:
        """What is held, why and what releases it, in a line: ``deal_sets``, that of each record held."""
        if any(self._waiting_for(d) for d in deal_sets):
            return f"{len(deal_sets)} match record(s) {self._while_waiting()}"
        sets = set(deal_sets)
        return (f"{len(deal_sets)} match record(s) of deal set{'s' if len(sets) > 1 else ''} {_named(sets)} held "
                f"until every match of their deal set is played (an entry still to play one would know its cards)")

    def _while_waiting(self) -> str:
        where = "every deal set" if self.awaited is None else "the deal sets it has matches of still to play"
        return (f"held while {', '.join(self.waiting)} did not start (the next run tries it again, on {where}): "
                f"released once it has played its matches, or is withdrawn (withdrawn = true)")


def _named(deal_sets: Iterable[int]) -> str:
    """Deal sets in words: "1, 3, 4, 5, 6 and 40 more"."""
    ordered = sorted(deal_sets)
    return ", ".join(map(str, ordered[:5])) + (f" and {len(ordered) - 5} more" if len(ordered) > 5 else "")


def held(scheduled: Iterable[str], stored: Mapping[str, int], waiting: Iterable[str] = (),
         awaited: Iterable[int] | None = None) -> Held:
    """What is held, from the keys of the schedule played now, the matches stored (key -> deal
    set), the entries that did not start and the deal sets they would play (``awaited``: those
    with matches still to play of the schedule with them in play; None: every one). Without a
    schedule (an SPRT's directory, one older than schedules), a deal set with fewer matches
    stored than the fullest one is taken as unfinished."""
    scheduled = list(scheduled)
    if scheduled:
        unfinished = {deal_set_of(key) for key in scheduled if key not in stored}
    else:
        counts = Counter(stored.values())
        unfinished = {k for k, n in counts.items() if n < max(counts.values())}
    return Held(frozenset(unfinished), tuple(waiting), None if awaited is None else frozenset(awaited))


def held_in(store: Store) -> Held:
    """What a results directory holds back now (:func:`held` of its store; the deal sets the
    entries that did not start would play: its ``meta`` key ``to_play``, which each run records)."""
    from referee.tournament.store import DID_NOT_START

    stored = {row.key: row.deal_set for row in store.matches(every=True)}
    to_play = store.meta(TO_PLAY)
    return held(store.schedule_keys(), stored, [e.name for e in store.entries() if e.status == DID_NOT_START],
                None if to_play is None else json.loads(to_play))
