"""Adaptive scheduling with a stated stopping rule: ``[tournament] schedule = "adaptive"``.

A round robin plays every table on every deal set. An adaptive tournament plays deal set after
deal set (deal set ``k`` is its round ``k``; a round whose deal set was retired, because it may
have been seen while a match was still to be dealt from it, is dropped, its matches no longer
counted, and the rounds after it take fresh deal sets: :func:`referee.competition.run.keep_deals_secret`),
and before each one chooses which **tables** play it:
a table is a set of entries that sit down together (as many as the game has seats, or every entry
when there are fewer), and it plays the deal set in every line-up the game gives it and every
rotation of each (``GameSpec.seat_groups`` of the table, then :func:`~.schedule.rotations`: Aegis's
two seatings, seats swapped; Confirmation's four rotations of a group of four, its three
partnerships with ``pairs``): a deal set's twins and rotations are always played complete.

How a round is chosen (:func:`next_tables`), from the entries in play and the results so far:

1. **Warm-up**, while the results cover fewer than two deal sets (no posterior yet): the entries,
   in an order drawn from the master seed, sit at consecutive tables of a ring, the second round
   shifted by half a table, so that every entry plays and the comparisons connect everyone.
2. **New entries first**: an entry with no result yet (it joined a grown tournament, or came
   back) gets a table before anything else, with the entries in the middle of the ranking.
3. **Where the ranking is least certain**: the ratings' posterior (:mod:`referee.stats.ranks`)
   orders the entries; the adjacent pairs the rule needs (every one for ``stop = "order"``, those
   of the top ``K + 1`` for ``top:K``) that it has not settled yet (neither ordered nor shown
   within the margin) are covered by tables of consecutive entries in that order, the most
   uncertain first, each such pair by at least one table. Pairs already settled rest.
4. **The fairness bound** (:data:`FAIRNESS`): counting the deal sets from the first one an entry
   played, every entry has played at least half as many matches as the entry that played the most
   in those deal sets; after the tables above, an entry that would fall below gets more tables (with
   its neighbours in the ranking) until none does.

5. **Filled batches** (``plan_fill``, the ladder's; under isolation = "match" only): an entry plays
   one match at a time there, so a batch of deal sets chosen at once (``plan_ahead``) lasts at least
   as long as its busiest entry's matches, while the other match slots may stand idle; tables of the
   entries with the least to play, each with its nearest neighbours in the ranking that have room,
   are added to the batch until its matches could keep every slot busy that long, none making an
   entry busier than the busiest (:func:`filled`; a table's seconds a match: :class:`Paces`, from
   the stored matches).

With teams declared (:mod:`referee.model.teams`) no table seats two entries of one team: a
table the steps above would choose that does is fitted (:func:`_fitted`, :func:`_cover`), and the
fairness bound counts an entry's matches per table it can sit at (:func:`capacity`).

The stopping rule (:func:`verdict`) is checked after every deal set: ``order`` (every adjacent
pair settled), ``top:K`` (the pairs that fix the top K and their order settled), or
``max_deal_sets`` reached. A pair is **settled** when a confidence sequence of its difference
(:mod:`referee.stats.sequences`: bounds that hold at every look at once) is above 0 (**ordered**)
or inside ``±tie_elo`` (**within** the margin: equal entries, a copy of a bot, end a run too).
The level is shared among every pair of the table, so that a stopped run's claims are all right at
once with probability at least ``confidence``, however many deal sets it looked at:
docs/tournaments.md gives the error rates that ``python -m referee.tools.scheduling`` measures.

Everything above is pure (no I/O): the simulation tool calls the same functions as the runner.
:class:`Planner` is the runner's side: the rounds chosen so far are kept in the store (``meta`` key
``adaptive``), so that a resumed or grown run builds on the same choices, and the stop, once
decided, too (``meta`` key ``stopped``), which the standings and the report show.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee import games
from referee.competition.schedule import rotations
from referee.games.base import Apart
from referee.model import FAIRNESS, Claim, Isolation, Round, Rule, Schedule, Seating, Stop, Table, deal_set_seed
from referee.model.teams import seated_apart
from referee.results.rounds import stored_rounds
from referee.results.standings import pair_results_of
from referee.stats import sequences
from referee.stats.ranks import RankPosterior
from referee.stats.ratings import rank_posterior

if TYPE_CHECKING:
    from referee.model import TournamentConfig
    from referee.results.store import MatchRow, Store

#: the schedules a tournament file may name
# --- the game's tables ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Game:
    """What the scheduler needs of a game: its seats, and the line-ups a table plays on a deal set."""

    seats: int
    seat_groups: Callable[[Sequence[str]], list[Table]]

    @classmethod
    def of(cls, game: str, options: Mapping[str, Any]) -> Game:
        spec = games.get(game)
        return cls(spec.num_seats, lambda table: spec.seat_groups(list(table), options, 1 << 30)[0])

    def lineups(self, table: Table) -> list[Table]:
        """Every seating of ``table`` on one deal set: each base line-up in each of its rotations."""
        return [lineup for base in self.seat_groups(table) for lineup in rotations(base)]

    def table_size(self, entries: int) -> int:
        return min(self.seats, entries)


def seatings_of(game: Game, rounds: Sequence[Round], entries: Collection[str], seed: int,
                later_seeds: Sequence[tuple[int, int]] = (), apart: Apart | None = None) -> list[Seating]:
    """The seatings of ``rounds`` that the entries in play (``entries``) play: every table of
    theirs (that ``apart`` accepts: a table of team-mates chosen before a team was declared does
    not count) in every line-up, round by round (deal set k dealt from its master seed:
    :func:`~referee.model.seating.deal_set_seed`)."""
    return [Seating(r.deal_set, deal_set_seed(seed, later_seeds, r.deal_set), lineup)
            for r in rounds for table in r.tables if set(table) <= set(entries) and (apart is None or apart(table))
            for lineup in game.lineups(table)]


def matches_played(game: Game, rounds: Sequence[Round], entries: Collection[str]) -> list[Counter[str]]:
    """For each round, how many matches each entry in play played in it (a match counts once for an
    entry in several of its seats)."""
    out = []
    playing = set(entries)
    sizes: dict[Table, int] = {}  # matches a table plays on a deal set (the same on every one)
    for r in rounds:
        count: Counter[str] = Counter()
        for table in r.tables:
            if playing.issuperset(table):
                if table not in sizes:
                    sizes[table] = len(game.lineups(table))
                for name in table:
                    count[name] += sizes[table]
        out.append(count)
    return out


# --- the stopping rule --------------------------------------------------------------------------


def needed(rule: Rule, ranked: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs the rule must settle, in the fit's order ``ranked``: every adjacent pair (``order``);
    the adjacent pairs of the top K + 1, and the K-th against every entry below (``top:K``)."""
    if rule.top is None:
        return list(zip(ranked, ranked[1:]))
    k = min(rule.top, len(ranked) - 1)
    return [*zip(ranked[:k], ranked[1:k + 1]), *((ranked[k - 1], other) for other in ranked[k + 1:])]


def claims(rule: Rule, posterior: RankPosterior, pairs: Sequence[tuple[str, str]]) -> list[sequences.PairVerdict]:
    """The verdict of each pair (:mod:`referee.stats.sequences`), the rule's level shared among every
    pair of the table."""
    alpha = _alpha(rule, posterior)
    return [sequences.verdict(posterior.test(a, b), posterior.difference(a, b)[0], posterior.df, alpha, rule.tie_elo)
            for a, b in pairs]


def _alpha(rule: Rule, posterior: RankPosterior) -> float:
    return (1.0 - rule.confidence) / sequences.pairs(len(posterior.names))


def verdict(rule: Rule, posterior: RankPosterior | None, entries: Sequence[str], deal_sets: int,
            matches: int) -> Stop | None:
    """Whether the tournament stops after ``deal_sets`` deal sets (``matches`` matches): the rule met,
    or the cap reached (None: play on). ``posterior``: the ratings' posterior of the results of the
    entries in play (None: fewer than two deal sets); an entry in play without a result is never
    settled."""
    pairs: list[tuple[str, str]] = []
    said: list[sequences.PairVerdict] = []
    if posterior is not None and set(entries) <= set(posterior.names):
        pairs = needed(rule, posterior.names)
        said = claims(rule, posterior, pairs)
    settled = bool(said) and sequences.OPEN not in said
    if not settled and deal_sets < rule.max_deal_sets:
        return None
    # no posterior: no pair was judged (pairs is empty)
    found = () if posterior is None else tuple(_claim(rule, posterior, a, b, v) for (a, b), v in zip(pairs, said))
    return Stop(rule.name if settled else "max_deal_sets", settled, deal_sets, matches,
                _stop_text(rule, settled, deal_sets, matches, found), found, rule.tie_elo)


def _claim(rule: Rule, posterior: RankPosterior, a: str, b: str, said: sequences.PairVerdict) -> Claim:
    """A pair's verdict with the fit's difference and the bounds the claim proved at this look: an
    order's lower bound (how far above, at least), the margin's two ends of a pair within it; for an
    open pair, the sequence's bounds at the fit's difference and variance."""
    diff, variance = posterior.difference(a, b)
    test, alpha = posterior.test(a, b), _alpha(rule, posterior)
    if said == sequences.ABOVE:
        return Claim(a, b, said, diff, sequences.edge(test, diff, 0.0, posterior.df, alpha))
    if said == sequences.WITHIN:
        return Claim(a, b, said, diff, sequences.edge(test, diff, -rule.tie_elo, posterior.df, alpha),
                     sequences.edge(test, diff, rule.tie_elo, posterior.df, alpha))
    half = sequences.half_width(variance, posterior.df, alpha)
    return Claim(a, b, said, diff, diff - half, diff + half)


def _stop_text(rule: Rule, settled: bool, deal_sets: int, matches: int, pairs: Sequence[Claim]) -> str:
    played = f"after {deal_sets} deal set(s), {matches} match(es)"
    what = "every adjacent pair" if rule.top is None else f"the top {rule.top} and their order"
    how = f"ordered or {rule.margin}" if rule.tie_elo > 0 else "ordered"
    level = f"at {rule.confidence:.0%} for all its pairs at once, over every look"
    said = "; ".join(_said(c, rule) for c in pairs) or "no ranking yet"
    if settled:
        return f"stopped by its rule (stop = {rule.name}) {played}: {what} {how} ({level}): {said}"
    return (f"stopped at max_deal_sets = {rule.max_deal_sets} {played}, the rule not met (stop = {rule.name} needs "
            f"{what} {how}, {level}): {said}")


def _said(c: Claim, rule: Rule) -> str:
    """One pair's verdict in the stop's sentence: ``a above b (> +35)``, ``a, b within ±75 Elo
    [-31, +38]``, ``a, b open [-60, +140]``."""
    if c.verdict == sequences.ABOVE:
        return f"{c.a} above {c.b}" + (f" (> {c.lo:+.0f})" if c.lo is not None else "")
    bounds = f" [{c.lo:+.0f}, {c.hi:+.0f}]" if c.lo is not None and c.hi is not None else ""
    return f"{c.a}, {c.b} {c.shown(rule.tie_elo)}{bounds}"


# --- choosing a round ---------------------------------------------------------------------------


def next_tables(game: Game, entries: Sequence[str], rounds: Sequence[Round], posterior: RankPosterior | None,
                rule: Rule, seed: int, apart: Apart | None = None) -> tuple[Table, ...]:
    """The tables of the next deal set (see the module docstring): new entries' first, then where
    the ranking the rule needs is least certain, then what the fairness bound asks. Deterministic:
    a function of its arguments. Each table's entries in file order (``entries``). With ``apart``
    (:meth:`referee.model.teams.Teams.apart`) no table seats team-mates: a table the steps
    above would choose that does keeps its members as far as it can and takes the nearest entries
    of the order that fit (:func:`_fitted`); two team-mates next to each other in the ranking are
    compared through a table each with the same others (:func:`_side_by_side`)."""
    size = game.table_size(len(entries))
    if size < 2:
        return ()
    position = {name: i for i, name in enumerate(entries)}
    chosen: list[Table] = []
    fits: Apart = apart if apart is not None else (lambda _: True)

    def add(members: Collection[str]) -> bool:
        table = tuple(sorted(members, key=position.__getitem__))
        if len(set(table)) != size or table in chosen or not fits(table):
            return False
        chosen.append(table)
        return True

    def place(members: Sequence[str], order: Sequence[str]) -> bool:
        """``members`` as a table, or as near a table as keeps team-mates apart."""
        if fits(members):
            return add(members)
        fitted = _fitted(members, order, size, fits)
        return fitted is not None and add(fitted)

    history = matches_played(game, rounds, entries)
    ranked = [n for n in posterior.names if n in position] if posterior is not None else []
    if len(ranked) < 2:  # the warm-up
        order = _drawn_order(entries, seed)
        step = max(1, size // 2) * (len(rounds) % 2)
        for start in range(step, step + len(order), size):
            place([order[(start + i) % len(order)] for i in range(size)], order)
        for name in order:  # with teams, an entry the ring's tables could not hold: a table of its own
            if not any(name in table for table in chosen):
                _seat(name, order, size, add)
        ranked = order
    else:
        assert posterior is not None  # ranked, two entries or more, comes from it
        new = [name for name in entries if name not in ranked]
        middle = _middle(ranked, size - 1)
        for name in new:
            place([name, *middle], [name, *ranked])
        order = ranked + new
        _targeted(order[:len(ranked)], posterior, rule, size, add if apart is None else
                  lambda members: _cover(members, order[:len(ranked)], size, fits, add))
    _fair(game, entries, order, history, chosen, size, add,
          capacity(entries, size, apart) if apart is not None else None)
    return tuple(chosen)


def _fitted(members: Sequence[str], order: Sequence[str], size: int, fits: Apart) -> list[str] | None:
    """A table of ``size`` that keeps team-mates apart, built from ``members``: those that fit, in
    their order, then the entries of ``order`` nearest them (None: none can be made)."""
    kept: list[str] = []
    for name in members:
        if fits([*kept, name]):
            kept.append(name)
    return _filled(kept, order, size, lambda extra: fits([*kept, *extra]))


def _filled(kept: Sequence[str], order: Sequence[str], size: int, fits: Callable[[list[str]], bool],
            around: Sequence[str] = ()) -> list[str] | None:
    """``kept`` and the entries of ``order`` nearest them (by position; or nearest ``around``, who
    are left out) that ``fits`` accepts, up to ``size`` (None: not enough)."""
    where = {name: i for i, name in enumerate(order)}
    centre_of = [*kept, *around]
    centre = sum(where.get(n, 0) for n in centre_of) / max(1, len(centre_of))
    extra: list[str] = []
    for name in sorted(order, key=lambda n: (abs(where[n] - centre), where[n])):
        if len(kept) + len(extra) == size:
            break
        if name not in kept and name not in around and fits([*extra, name]):
            extra.append(name)
    return [*kept, *extra] if len(kept) + len(extra) == size else None


def _side_by_side(a: str, b: str, order: Sequence[str], size: int, fits: Apart) -> list[list[str]]:
    """Two team-mates ``a`` and ``b`` each at a table of their own with the same others (the
    nearest to them in ``order`` that fit both), so that their results compare on common ground."""
    others = _filled([], order, size - 1, lambda extra: fits([a, *extra]) and fits([b, *extra]), around=(a, b))
    return [] if others is None else [[a, *others], [b, *others]]


def _cover(members: Sequence[str], ranked: Sequence[str], size: int, fits: Apart,
           add: Callable[[Collection[str]], bool]) -> bool:
    """``_targeted``'s table of consecutive entries of the ranking, with teams: as it is when it
    keeps team-mates apart; otherwise each adjacent pair in it gets a table that fits (its two
    entries and the nearest others), or, for two team-mates, a table each with the same others."""
    if fits(members):
        return add(members)
    added = False
    for a, b in itertools.pairwise(members):
        if fits([a, b]):
            table = _filled([a, b], ranked, size, lambda extra: fits([a, b, *extra]))  # noqa: B023 (called in this iteration)
            added = (table is not None and add(table)) or added
        else:
            for table in _side_by_side(a, b, ranked, size, fits):
                added = add(table) or added
    return added


def _drawn_order(entries: Sequence[str], seed: int) -> list[str]:
    order = list(entries)
    random.Random(f"adaptive-order:{seed}").shuffle(order)
    return order


def _middle(ranked: Sequence[str], count: int) -> list[str]:
    """``count`` entries from the middle of the ranking."""
    start = max(0, (len(ranked) - count) // 2)
    return list(ranked[start:start + count])


def _targeted(ranked: Sequence[str], posterior: RankPosterior, rule: Rule, size: int,
              add: Callable[[Sequence[str]], bool]) -> None:
    """Tables of consecutive entries of the ranking that cover every pair the rule needs and has not
    settled (a pair further apart than neighbours: the adjacent pairs between them), the most
    uncertain first."""
    n = len(ranked)
    at = {name: i for i, name in enumerate(ranked)}
    pairs = needed(rule, ranked)
    doubt = [_doubt(*posterior.difference(a, b)) for a, b in zip(ranked, ranked[1:])]
    relevant = {j for a, b in pairs for j in range(at[a], at[b])}  # adjacent pairs 0 .. n - 2
    open_ = {j for (a, b), said in zip(pairs, claims(rule, posterior, pairs)) if said == sequences.OPEN
             for j in range(at[a], at[b])}

    def value(i: int, still: set[int]) -> tuple[float, float, int]:
        """A window's worth: the doubt of the open pairs it covers, then of every pair it holds."""
        inside = range(i, i + size - 1)
        return sum(doubt[j] + 1e-9 for j in inside if j in still), sum(doubt[j] for j in inside if j in relevant), -i

    windows = list(range(n - size + 1))
    while open_:
        best = max(windows, key=lambda i: value(i, open_))
        if value(best, open_)[0] <= 0:
            break
        windows.remove(best)
        add(ranked[best:best + size])
        open_ -= set(range(best, best + size - 1))


def _doubt(diff: float, variance: float) -> float:
    """How uncertain the order of a pair is, from 0 to 1/2: the normal probability of the other order."""
    return 0.5 * math.erfc(abs(diff) / math.sqrt(2.0 * variance))


#: the least a table's match is taken to last, as a share of the mean stored match (:class:`Paces`)
PACE_FLOOR = 0.1
#: the latest stored matches that :class:`Paces` learns from (the bots' versions change over a ladder)
PACE_MATCHES = 2000


class Paces:
    """How long a table's matches take (seconds a match), from the stored ones: its own entries'
    matches together; else the sum of each entry's share, fitted to every stored match as the sum
    of its entries' (the time each takes to think adds up: a table of two slow thinkers takes about
    twice as long as one of them with a quick one); else 1. From the latest :data:`PACE_MATCHES`
    matches; never under a tenth of their mean (:data:`PACE_FLOOR`): a match costs its processes'
    start, however quick its bots."""

    def __init__(self, rows: Iterable[MatchRow], sweeps: int = 20, last: int = PACE_MATCHES) -> None:
        matches = [(tuple(row.lineup), row.seconds) for row in rows][-last:]  # the latest (rows: by deal set)
        together: dict[frozenset[str], list[float]] = {}
        of: dict[str, list[tuple[tuple[str, ...], float]]] = {}  # each entry's matches
        for lineup, seconds in matches:
            together.setdefault(frozenset(lineup), []).append(seconds)
            for name in set(lineup):
                of.setdefault(name, []).append((lineup, seconds))
        self.together = {k: statistics.fmean(v) for k, v in together.items()}
        self.floor = PACE_FLOOR * statistics.fmean(seconds for _, seconds in matches) if matches else 1.0
        self.share = dict.fromkeys(of, 0.0)
        for _ in range(sweeps):  # each entry's share: what its matches leave once the others' are taken
            for name, its in of.items():
                left = [(seconds - sum(self.share[o] for o in lineup if o != name)) / lineup.count(name)
                        for lineup, seconds in its]
                self.share[name] = max(0.0, statistics.fmean(left))
        self.unknown = statistics.fmean(self.share.values()) if self.share else 1.0  # an entry with no match

    def __call__(self, table: Table) -> float:
        seconds = self.together.get(frozenset(table))
        if seconds is None:
            seconds = sum(self.share.get(name, self.unknown) for name in table) if self.share else 1.0
        return max(self.floor, seconds)


def filled(game: Game, batch: Sequence[Round], entries: Sequence[str], order: Sequence[str],
           pace: Callable[[Table], float], concurrency: int, apart: Apart | None = None) -> tuple[Round, ...]:
    """A batch of deal sets chosen at once, with tables added so that its matches can keep
    ``concurrency`` playing: under isolation = "match" an entry plays one match at a time, so the
    batch lasts at least as long as its busiest entry's matches (``pace``: a table's seconds a match);
    tables of the entries with the least to play, each with its nearest neighbours in ``order`` that
    have room, are added (each to the deal set with the least to play that lacks it) while the batch's
    matches take less than ``concurrency`` times that, and none makes an entry busier than the busiest.
    Deterministic: a function of its arguments."""
    size = game.table_size(len(entries))
    fits: Apart = apart if apart is not None else (lambda _: True)
    position = {name: i for i, name in enumerate(entries)}
    where = {name: i for i, name in enumerate(order)}
    tables = [list(r.tables) for r in batch]
    cost: dict[Table, float] = {}

    def seconds(table: Table) -> float:
        if table not in cost:
            cost[table] = pace(table) * len(game.lineups(table))
        return cost[table]

    busy: dict[str, float] = dict.fromkeys(entries, 0.0)
    load = [0.0] * len(tables)
    for k, chosen in enumerate(tables):
        for table in chosen:
            load[k] += seconds(table)
            for name in table:
                busy[name] += seconds(table)
    most = max(busy.values(), default=0.0)
    if size < 2 or most <= 0:
        return tuple(batch)

    def addition() -> tuple[Table, int] | None:
        for name in sorted(entries, key=lambda n: (busy[n], where[n])):
            near = sorted((n for n in entries if n != name and busy[n] < most),
                          key=lambda n: (abs(where[n] - where[name]), where[n]))[:2 * size]
            for others in itertools.combinations(near, size - 1):
                table = tuple(sorted((name, *others), key=position.__getitem__))
                if not fits(table) or any(busy[n] + seconds(table) > most + 1e-9 for n in table):
                    continue
                free = [k for k, chosen in enumerate(tables) if table not in chosen]
                if free:
                    return table, min(free, key=lambda k: (load[k], k))
        return None

    while sum(load) < concurrency * most - 1e-9 and (found := addition()) is not None:
        table, k = found
        tables[k].append(table)
        load[k] += seconds(table)
        for name in table:
            busy[name] += seconds(table)
    return tuple(Round(r.deal_set, tuple(chosen)) for r, chosen in zip(batch, tables))


def _fair(game: Game, entries: Sequence[str], order: Sequence[str], history: Sequence[Counter[str]],
          chosen: list[Table], size: int, add: Callable[[Collection[str]], bool],
          capacity: Mapping[str, int] | None = None) -> None:
    """Add tables until every entry is within the fairness bound (or no table is left to add)."""
    while True:
        now: Counter[str] = Counter()
        for table in chosen:
            for name in table:
                now[name] += len(game.lineups(table))
        low = below_bound(entries, [*history, now], capacity)
        if not low:
            return
        if not _seat(low[0], order, size, add):
            return


def _seat(name: str, order: Sequence[str], size: int, add: Callable[[Collection[str]], bool]) -> bool:
    """Add a table for ``name`` with its nearest neighbours in ``order`` that ``add`` takes (the
    first such combination); whether one was added."""
    near = sorted((n for n in order if n != name), key=lambda n: (abs(order.index(n) - order.index(name)),
                                                                  order.index(n)))
    return any(add([name, *others]) for others in itertools.combinations(near, size - 1))


def shares(entries: Sequence[str], history: Sequence[Mapping[str, int]],
           capacity: Mapping[str, int] | None = None) -> dict[str, float]:
    """Each entry's matches over the deal sets since its first (the next one if it has none yet),
    as a share of the most matches any entry played in those deal sets (1: none played). With
    ``capacity`` (teams declared: the tables each entry can sit at, :func:`capacity`) each count is
    taken per table the entry can sit at, so that the entries of a large team, which a round robin
    too seats less often, are measured against what they can play."""
    weight = {name: 1.0 / capacity[name] if capacity and capacity.get(name) else 1.0 for name in entries}
    out = {}
    for name in entries:
        first = next((k for k, count in enumerate(history) if count.get(name)), len(history) - 1)
        since = history[first:]
        mine = sum(count.get(name, 0) for count in since) * weight[name]
        most = max((sum(count.get(other, 0) for count in since) * weight[other] for other in entries), default=0)
        out[name] = mine / most if most else 1.0
    return out


def capacity(entries: Sequence[str], size: int, apart: Apart) -> dict[str, int]:
    """How many tables of ``size`` each entry can sit at with team-mates kept apart."""
    count: Counter[str] = Counter()
    for table in itertools.combinations(entries, size):
        if apart(table):
            count.update(table)
    return {name: count[name] for name in entries}


def below_bound(entries: Sequence[str], history: Sequence[Mapping[str, int]],
                capacity: Mapping[str, int] | None = None) -> list[str]:
    """The entries below the fairness bound after ``history`` (matches per entry, deal set by deal
    set), the furthest below first (``capacity``: see :func:`shares`)."""
    share = shares(entries, history, capacity)
    return sorted((n for n in entries if share[n] < FAIRNESS - 1e-12), key=lambda n: (share[n], entries.index(n)))


@dataclass
class Planner:
    """The plan of an adaptive tournament (:data:`referee.competition.run.Plan`): given the entries out,
    the seatings of the rounds chosen so far and, once every one of them is stored, either the next
    round or the stop. The schedule it returns carries the rounds and the stop, which the run keeps
    in the store as it starts playing them (:func:`record`)."""

    config: TournamentConfig
    store: Store
    rule: Rule = field(init=False)
    game: Game = field(init=False)

    def __post_init__(self) -> None:
        self.rule = self.config.rule
        self.game = Game.of(self.config.game, self.config.options)

    def __call__(self, out: Collection[str]) -> Schedule:
        config = self.config.with_deals(self.store.config())
        entries = [name for name in config.entries if name not in out]
        chosen = stored_rounds(self.store)
        rounds = tuple(r for r in chosen if r.deal_set not in config.retired)
        if len(entries) < 2:
            return Schedule((), (), f"{len(entries)} entry in play: nothing to play", rounds, None)
        teams = self.config.teams
        apart = teams.apart if seated_apart(teams, entries, self.game.seats, games.get(self.config.game).title) \
            else None
        seatings = seatings_of(self.game, rounds, entries, config.seed, config.later_seeds, apart)
        done = self.store.done()
        stop = None
        if all(s.key in done for s in seatings):
            keys = {s.key for s in seatings}
            rows = [row for row in self.store.matches(every=True) if row.key in keys]
            outcomes = pair_results_of(self.config.game, rows)
            posterior = rank_posterior(outcomes) if outcomes else None
            stop = verdict(self.rule, posterior, entries, len(rounds), len(rows))
            if stop is None:  # the next deal set, or the next ``ahead`` of them, chosen from the same results
                fresh = 1 + max([r.deal_set for r in chosen] + list(config.retired), default=-1)
                batch: tuple[Round, ...] = ()
                for _ in range(max(1, min(self.rule.ahead, self.rule.max_deal_sets - len(rounds)))):
                    tables = next_tables(self.game, entries, (*rounds, *batch), posterior, self.rule, config.seed,
                                         apart)
                    batch = (*batch, Round(fresh, tables))
                    fresh += 1
                if self.rule.fill and len(batch) > 1 and config.isolation == Isolation.MATCH:
                    ranked = [n for n in posterior.names if n in entries] if posterior is not None else []
                    order = ranked + [n for n in entries if n not in ranked]
                    batch = filled(self.game, batch, entries, order, Paces(rows), config.concurrency, apart)
                rounds = (*rounds, *batch)
                seatings = seatings_of(self.game, rounds, entries, config.seed, config.later_seeds, apart)
        note = f"adaptive ({self.rule.describe()}): {len(rounds)} deal set(s) chosen" + \
            teams.note(entries, apart is not None)
        return Schedule(tuple(seatings), tuple(t for r in rounds for t in r.tables), note, rounds, stop)



def inconclusive(stop: Stop | None) -> bool:
    """Whether a tournament stopped at its cap with the rule not met."""
    return stop is not None and not stop.settled
