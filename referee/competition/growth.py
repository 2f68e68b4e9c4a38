"""A competition that grows: what a results directory accepts from a changed tournament file.

What shapes every match's result never changes in a directory (the fingerprint: game,
options, seed, clock, isolation, absent; :meth:`Store.claim` refuses a change in one line).
The rest may only grow:

- ``deal_sets`` may rise; it may not fall below a deal set that has matches stored (of those not
  retired: a deal set that may have been seen while a match was still to be dealt from it is
  retired, and the next fresh one takes its place, :func:`referee.competition.run.keep_deals_secret`);
- entries may be added (anywhere in the file) or marked ``withdrawn = true``; an entry with
  matches stored may not leave the file (withdraw it instead), one without may;
- ``max_groups`` may change, and so may the entries' teams (``team``): the tables that a change
  makes seat team-mates no longer count.

The schedule is made from the file's entries in play (not withdrawn, not out of the run:
:meth:`Store.entries`), so the matches that count are always those that a run from scratch of
the same file would play with the same entries in play, and a run plays only those missing
(:func:`referee.competition.schedule.missing`). Where the game's line-ups depend on how many
entries there are (Confirmation fills its four seats with two or three entries, and past
``max_groups`` plays a balanced subset of the groups of four), a stored match whose line-up
the schedule no longer holds stays stored but does not count, and the run says how many; from
four entries up, every combination of four keeps its line-ups when entries join.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from referee.competition.schedule import numbers
from referee.results.store import Store, StoreError


def check(store: Store, bots: list[dict[str, Any]], deal_sets: int, retired: Collection[int] = ()) -> str | None:
    """Refuse (:class:`StoreError`, one line) a file that shrinks what the directory holds: an
    entry with stored matches left out, fewer deal sets than it has matches of (``retired`` ones
    aside). ``bots``: the file's bots as its configuration describes them. Returns what grew, in a
    line (None: nothing)."""
    if store.count(every=True) == 0:
        return None
    names = [b["name"] for b in bots]
    stored = [row[0] for row in store.db.execute("SELECT DISTINCT bot FROM seats ORDER BY bot")]
    gone = [name for name in stored if name not in names]
    if gone:
        raise StoreError(f"bot {gone[0]} has matches stored in {store.directory} but is not in the tournament "
                         f"file: keep its [[bots]] table (with withdrawn = true it is neither played nor ranked), "
                         f"or use a new output directory")
    live = store.deal_sets_stored() - set(retired)
    if live and max(live) > numbers(deal_sets, retired)[-1]:
        held = f"deal sets 0 to {max(live)}" if not retired else \
            f"matches of {len(live)} deal sets (and {len(set(retired))} retired)"
        raise StoreError(f"{store.directory} holds {'matches of ' if not retired else ''}{held}, more than deal_sets = "
                         f"{deal_sets}: a tournament only grows (raise deal_sets, or use a new output directory)")
    return grown(store.config(), bots, deal_sets)


def grown(before: dict[str, Any], bots: list[dict[str, Any]], deal_sets: int) -> str | None:
    """What the file adds to the configuration stored ``before``, in a line (None: nothing)."""
    old = {b["name"]: b for b in before.get("bots", [])}
    parts = []
    if before.get("deal_sets", deal_sets) != deal_sets:
        parts.append(f"deal sets {before['deal_sets']} -> {deal_sets}")
    new = [b["name"] for b in bots if b["name"] not in old]
    if new:
        parts.append(f"new entries: {', '.join(new)}")
    withdrawn = [b["name"] for b in bots if b.get("withdrawn") and not old.get(b["name"], {}).get("withdrawn")]
    if withdrawn:
        parts.append(f"withdrawn: {', '.join(withdrawn)}")
    back = [b["name"] for b in bots if not b.get("withdrawn") and old.get(b["name"], {}).get("withdrawn")]
    if back:
        parts.append(f"back from withdrawal: {', '.join(back)}")
    teams = [f"{b['name']} ({old[b['name']].get('team') or 'none'} -> {b.get('team') or 'none'})"
             for b in bots if b["name"] in old and old[b["name"]].get("team") != b.get("team")]
    if teams:
        parts.append(f"teams changed: {', '.join(teams)} (the tables that now seat team-mates no longer count)")
    return "; ".join(parts) or None
