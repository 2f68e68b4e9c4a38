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
entry "did not start" or died for good (``absent = "withdraw"``), a run releases
nothing it would come back to play: the next run tries the first again, ``--rerun``
brings the second back, and either would play those deal sets (a deal set in which
a bot died is held until the run knows whether it died for good: :meth:`Releases.hold`).

What gives records out of a results directory holds back the same (:func:`held`,
:class:`Held`): the report shows a held match's results but no replay (and the
bots' logs only without those matches' lines), and ``export``, the organiser's,
says how many records it wrote that are held. A deal set is held while an entry
still to play may play it: while the current schedule has matches of it to play,
and while an entry did not start or died for good, every deal set it would come back
to play (the store's ``meta`` key ``to_play``), until that entry has played, or is withdrawn (``withdrawn =
true``).

**No match is dealt from a deal set that anyone but the organiser may have seen**
(:func:`exposed`, the one place the rule lives). A deal set is *seen* (:func:`seen`) once
nothing held it at some moment (a report could show its records, a referee's spectators got
them: each run notes it, :func:`note_seen`), or once the drawn master seed that deals it was
printed. A match still to play on a seen deal set (a new version after ``--rerun``, an entry
back from the dead, a late entry, new line-ups) is not played there: the run retires that
deal set for every entry and plays a fresh one in its place, dealt from a secret seed
(:func:`referee.competition.run.keep_deals_secret`). With a seed given in the tournament file
there is no secret to keep (anyone who knows it computes every deal): the run says so instead.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.model import EntryStatus, Release, Schedule, Seating, deal_set_of
from referee.results.store import MetaKey

if TYPE_CHECKING:
    from referee.results.store import Store

#: the entries that would come back to play: those that did not start, or died for good
_OUT = (EntryStatus.DID_NOT_START, EntryStatus.DEAD)


class Releases:
    """The keys of the matches played in this run whose records may now be released.

    Made from the schedule's seatings and the keys already stored (played by an earlier
    run: this run's referee never had their records); :meth:`stored` is told of each
    match this run stores, and says which records it frees."""

    def __init__(self, seatings: Iterable[Seating], stored: Iterable[str] = (), mode: Release = Release.DEAL_SET,
                 awaited: Collection[int] = ()):
        """``awaited``: the deal sets the entries that did not start in this run would come back to
        play (this run releases none of them; with ``"end"``, nothing at all)."""
        if mode not in tuple(Release):
            raise ValueError(f"release must be one of {', '.join(Release)}, got {mode!r}")
        self.mode = Release(mode)
        self.awaited = frozenset(awaited)
        done = set(stored)
        self._missing: dict[int, set[str]] = {}  # deal set -> keys not stored yet
        for s in seatings:
            missing = self._missing.setdefault(s.deal_set, set())
            if s.key not in done:
                missing.add(s.key)
        self._played: dict[int, list[str]] = {}  # deal set -> keys stored by this run, not yet released

    def hold(self, deal_sets: Iterable[int]) -> None:
        """Release none of ``deal_sets`` from now on (an entry that died for good would play them again)."""
        self.awaited |= frozenset(deal_sets)

    def over(self, deal_set: int) -> bool:
        """Whether nothing holds ``deal_set`` now, whatever the mode: its matches all stored, none awaited."""
        return not self._missing.get(deal_set) and deal_set not in self.awaited

    def stored(self, seating: Seating) -> list[str]:
        """``seating``'s match is stored: the keys whose records may be released now (maybe none)."""
        self._missing.setdefault(seating.deal_set, set()).discard(seating.key)
        self._played.setdefault(seating.deal_set, []).append(seating.key)
        if self.mode == Release.DEAL_SET:  # only this deal set can have just become complete
            ready = [seating.deal_set] if self.over(seating.deal_set) else []
        elif not any(self._missing.values()) and not self.awaited:
            ready = list(self._played)
        else:
            ready = []
        return [key for k in ready for key in self._played.pop(k)]


@dataclass(frozen=True)
class Held:
    """The deal sets whose records are held back from what a results directory gives out:
    ``unfinished``, those of the schedule with matches still to play; while entries are
    ``waiting`` (they did not start, and the next run tries them again; or, those also in
    ``dead``, they died for good, and ``--rerun`` brings them back), those they would play,
    ``awaited`` (None: every one)."""

    unfinished: frozenset[int]
    waiting: tuple[str, ...] = ()
    awaited: frozenset[int] | None = None
    dead: tuple[str, ...] = ()

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
        absent = [name for name in self.waiting if name not in self.dead]
        dead = [name for name in self.waiting if name in self.dead]
        every = self.awaited is None
        parts = [f"{', '.join(absent)} did not start (the next run tries it again, on "
                 f"{'every deal set' if every else 'the deal sets it has matches of still to play'})"] if absent else []
        if dead:
            parts.append(f"{', '.join(dead)} died for good (--rerun brings it back, on "
                         f"{'every deal set' if every else 'every deal set it has matches of'})")
        return (f"held while {' and '.join(parts)}: released once it has played its matches, or is withdrawn "
                f"(withdrawn = true)")


def _named(deal_sets: Iterable[int]) -> str:
    """Deal sets in words: "1, 3, 4, 5, 6 and 40 more"."""
    ordered = sorted(deal_sets)
    return ", ".join(map(str, ordered[:5])) + (f" and {len(ordered) - 5} more" if len(ordered) > 5 else "")


def held(scheduled: Iterable[str], stored: Mapping[str, int], waiting: Iterable[str] = (),
         awaited: Iterable[int] | None = None, dead: Iterable[str] = ()) -> Held:
    """What is held, from the keys of the schedule played now, the matches stored (key -> deal
    set), the entries that did not start or died for good (``dead``, among the ``waiting``) and
    the deal sets they would play if they came back (``awaited``; None: every one). Without a
    schedule (an SPRT's directory, one older than schedules), a deal set with fewer matches
    stored than the fullest one is taken as unfinished."""
    scheduled = list(scheduled)
    if scheduled:
        unfinished = {deal_set_of(key) for key in scheduled if key not in stored}
    else:
        counts = Counter(stored.values())
        unfinished = {k for k, n in counts.items() if n < max(counts.values())}
    return Held(frozenset(unfinished), tuple(waiting), None if awaited is None else frozenset(awaited), tuple(dead))


def held_in(store: Store) -> Held:
    """What a results directory holds back now (:func:`held` of its store; the deal sets the
    entries that did not start or died for good would play: its ``meta`` key ``to_play``, which
    each run records)."""
    stored = {row.key: row.deal_set for row in store.matches(every=True)}
    to_play = store.meta(MetaKey.TO_PLAY)
    entries = store.entries()
    return held(store.schedule_keys(), stored, [e.name for e in entries if e.status in _OUT],
                None if to_play is None else json.loads(to_play),
                [e.name for e in entries if e.status == EntryStatus.DEAD])


# --- the rule: no match is dealt from a deal set that may have been seen ----------------------------


def exposed(schedule: Schedule, done: Collection[str], seen: Collection[int]) -> list[Seating]:
    """The rule, stated once: the matches still to play of ``schedule`` (not among the ``done``
    keys) that would be dealt from a ``seen`` deal set. None may be played: a run retires their
    deal sets (:func:`referee.competition.run.keep_deals_secret`)."""
    return [s for s in schedule.seatings if s.deal_set in seen and s.key not in done]


def free(store: Store) -> set[int]:
    """The deal sets with matches stored that nothing holds now (:func:`held_in`): a report would
    show their records."""
    held_now = held_in(store)
    return {k for k in store.deal_sets_stored() if not held_now.holds(k)}


def note_seen(store: Store, deal_sets: Iterable[int] | None = None) -> None:
    """Note ``deal_sets`` (None: every one :func:`free` now) as seen, for good: what held them may
    hold them again later (an entry back, a new version), but what was given out stays out."""
    before = set(json.loads(store.meta(MetaKey.SEEN) or "[]"))
    now = before | set(free(store) if deal_sets is None else deal_sets)
    if now != before:
        store.set_meta(MetaKey.SEEN, json.dumps(sorted(now)))


def seen(store: Store) -> frozenset[int]:
    """The deal sets that anyone but the organiser may have seen: those whose records nothing held
    at some moment (noted by each run: :func:`note_seen`, as a deal set is over, as the run ends,
    and as the next one claims the directory, before anything it changes holds them again), and,
    of a drawn seed, those a printed master seed deals (every seed but the last was printed before
    the next was drawn; the last once the store says so) among the deal sets dealt or retired so
    far (those after are dealt from a new secret seed: :func:`referee.competition.run.keep_deals_secret`).
    Not those :func:`free` right now: a run that brings an entry back frees what it is about to play."""
    out = set(json.loads(store.meta(MetaKey.SEEN) or "[]"))
    config = json.loads(store.meta(MetaKey.CONFIG) or "{}")
    if config.get("seed_drawn"):
        last = max((first for first, _ in config.get("later_seeds", [])), default=0)
        out |= set(range(first_fresh(store, out) if store.seed_released() else last))
    return frozenset(out)


def first_fresh(store: Store, seen_: Iterable[int] = ()) -> int:
    """One past the last deal set a match was dealt from, or that was retired or ``seen_`` (0: none):
    the first number a fresh deal set may take."""
    retired = json.loads(store.meta(MetaKey.CONFIG) or "{}").get("retired", [])
    return 1 + max([*store.deal_sets_stored(), *retired, *seen_], default=-1)
