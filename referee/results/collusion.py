"""The collusion check of a results directory: ``referee ratings --collusion DIR`` and the report.

For every ordered pair of entries (A, B): how many points per seat A scores on the same cards when B
is at its table, beyond what B does to everyone and everyone does to A, with a 95% interval; the
pairs that stand out after Holm's correction for the number of pairs are **flagged for a person to
review** (:mod:`referee.stats.collusion`). The check never changes a result, a ranking or an exit
code: a flagged pair may be two entries of one author playing for each other, or an honest matchup
(a style that happens to suit or exploit another). Declared team-mates never share a table
(:mod:`.teams`), so the check is about the pairs nobody declared.
"""

from __future__ import annotations

from collections.abc import Iterable

from tabulate import tabulate

from referee.results.store import MatchRow
from referee.stats.collusion import ALPHA, Collusion, Match, PairEffect, pair_effects

#: what the check compares, in a sentence (the text and the report)
WHAT = ("does an entry's presence at the table move another's points on the same cards (same deal set, same "
        "seat), beyond its effect on everyone? Each ordered pair's effect in points per seat, a 95% interval "
        "by jackknife over deal sets; flagged: the pairs that stand out at {alpha:.0%} family-wise (Holm over "
        "the {tested} pair(s) tested). For a person to review: a flag changes no result")


def matches_of(rows: Iterable[MatchRow]) -> list[Match]:
    """The stored matches as the check reads them: each seat's final points, and the teams where the
    results name them (partners share their points)."""
    return [Match(row.deal_set, tuple(row.lineup), tuple(float(p) for p in row.scores),
                  tuple(map(tuple, row.results["teams"])) if row.results.get("teams") else None)
            for row in rows]


#: why a game of two seats is not checked
TWO_SEATS = ("a game of two seats: a bot's points are its match against its one opponent, and they saturate (a "
             "match won is won whoever is beaten), which no additive model of table-mates reads: the head-to-head "
             "table and its Elo difference are the check there")


def check(rows: Iterable[MatchRow], alpha: float = ALPHA) -> Collusion:
    """The collusion check of these matches (:func:`referee.stats.collusion.pair_effects`); not made
    for a game of two seats (:data:`TWO_SEATS`)."""
    matches = matches_of(rows)
    if matches and max(len(m.lineup) for m in matches) <= 2:
        return Collusion((), len({m.deal_set for m in matches}), alpha, TWO_SEATS)
    return pair_effects(matches, alpha)


def headline(c: Collusion) -> str:
    """The check in a line: how many pairs were tested and flagged, or why none could be."""
    if c.note is not None:
        return f"collusion check: not made ({c.note})"
    flagged = len(c.flagged)
    return (f"collusion check: {flagged} of {len(c.pairs)} ordered pair(s) flagged for review" if flagged else
            f"collusion check: no pair flagged among {len(c.pairs)} ordered pair(s) on {c.deal_sets} deal set(s)")


def describe(e: PairEffect) -> str:
    """A pair in words: who moved whose points, by how much."""
    way = "more" if e.effect > 0 else "fewer"
    where = (f"; {e.mate} always sat {e.place} seat(s) after it, and its effect from there is part of this"
             if e.place is not None else "")
    return (f"{e.entry} scores {abs(e.effect):.1f} points per seat {way} with {e.mate} at its table "
            f"[95% {e.lo:+.1f}, {e.hi:+.1f}], p (Holm) {e.p_holm:.2g}{where}")


def rows_of(pairs: Iterable[PairEffect]) -> list[list[str]]:
    return [[e.entry, e.mate, f"{e.effect:+.1f}", f"[{e.lo:+.1f}, {e.hi:+.1f}]", f"{e.p:.2g}", f"{e.p_holm:.2g}",
             f"{e.together}/{e.apart}", "various" if e.place is None else f"+{e.place}",
             "FLAGGED" if e.flagged else ""] for e in pairs]


HEADERS = ["entry (A)", "at its table (B)", "effect", "95% interval", "p", "p (Holm)", "seats with/without B",
           "B's place", "flag"]


def report(c: Collusion) -> str:
    """The check as text (``referee ratings --collusion``): what it measures, the flagged pairs, or
    the strongest pair when none is."""
    lines = ["Collusion check (" + WHAT.format(alpha=c.alpha, tested=len(c.pairs)) + "):", headline(c)]
    if c.note is None:
        shown = c.flagged or list(c.pairs[:1])
        if not c.flagged:
            lines.append("the pair that comes nearest: " + describe(shown[0]))
        lines.append(tabulate(rows_of(shown), headers=HEADERS, tablefmt="simple", disable_numparse=True))
    return "\n".join(lines)
