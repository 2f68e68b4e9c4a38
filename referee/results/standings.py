"""Standings from stored results: the Elo table, head to head (Elo difference, W-D-L, game
pairs), the likelihood-of-superiority matrix, seat bias; as text, JSON and CSV.

A match enters the rating fit as the pairwise results between its seats,
ranked as the game's spec says (``rated_by``): by placing (Aegis: one result
each, by the match winner) or by final score (Confirmation: equal scores are
draws). A match whose results name teams (``results["teams"]``: Confirmation's
pairs) gives one result between the teams instead, never one between partners,
and the standings add a table of the partnerships. Intervals come from a
bootstrap over deal sets, widened for small samples (``ratings.rate``); the
head-to-head statistics, game pairs, LOS matrix and opponents' average from
:mod:`referee.stats.headtohead`.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tabulate import tabulate

from referee import games, model
from referee.games import RatedBy
from referee.results import pool as tpool
from referee.results import rounds
from referee.results.store import Entry, MatchRow, Store
from referee.runner import FaultKind
from referee.stats import anchored, headtohead, ratings
from referee.stats.sequences import PairVerdict

#: what each kind of fault counts, in the order of every table's fault cell
FAULT_WORDS = {
    FaultKind.TIMEOUT: "timeouts",
    FaultKind.ILLEGAL: "illegal actions",
    FaultKind.MALFORMED: "malformed answers",
    FaultKind.WRONG_ID: "answers with a wrong request id",
    FaultKind.DISCONNECT: "disconnects",
    FaultKind.NO_SESSION: "seats it had no session for",
    FaultKind.ERROR: "errors of its own code (a decision that raised)",
}
#: the header of the fault cell: the first letter of each kind, "faults t/i/m/w/d/n/e"
FAULTS_HEADER = "faults " + "/".join(kind[0] for kind in FaultKind)
FAULTS_LEGEND = f"{FAULTS_HEADER}: " + " / ".join(FAULT_WORDS[kind] for kind in FaultKind)


def fault_cell(counts: Mapping[str, int]) -> str:
    """A bot's faults by kind, as the tables print them: ``0/0/681/0/0/0/0`` (:data:`FAULTS_HEADER`)."""
    return "/".join(str(counts.get(kind, 0)) for kind in FaultKind)


@dataclass
class BotLine:
    name: str
    elo: float | None  # None where the results cannot identify individual ratings
    lo: float | None  # the 95% interval (None without bootstrap)
    hi: float | None
    plus_minus: float | None  # (hi - lo) / 2
    matches: int  # matches played
    results: int  # pairwise results (see referee.stats.headtohead): what W-D-L and score % count
    wins: int
    draws: int
    losses: int
    score_pct: float | None
    opponents_elo: float | None  # the opponents' average Elo, weighted by the results against each
    mean_points: float | None  # per seat held
    los_next: float | None
    bound: ratings.Bound | None = None  # "upper": only known to be below hi; "lower": above lo (ratings.PlayerRating)
    #: its faults by kind (every :class:`~referee.runner.FaultKind`, in its order), over its seats
    faults: dict[str, int] = field(default_factory=lambda: {str(kind): 0 for kind in FaultKind})


@dataclass(frozen=True)
class OnPool:
    """Which scale a run's ratings are on when it includes a reference pool (docs/pool.md): the pool's
    short ``id``; the ``verdict`` (:class:`referee.stats.anchored.Scale`'s values: "on-scale",
    "off-scale", "unchecked"; off-scale as well when the run's setting is not the pool's); ``reasons``,
    one line each: where the run's setting differs from the pool's (:meth:`Pool.mismatches`), then the
    check that the scale holds (:meth:`ScaleCheck.line`); ``held``: the pool's bots that played, held
    at their ratings."""

    id: str
    verdict: str
    reasons: tuple[str, ...]
    held: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "verdict": self.verdict, "reasons": list(self.reasons), "held": list(self.held)}


@dataclass
class Standings:
    game: str
    lines: list[BotLine]
    head_to_head: dict[str, dict[str, headtohead.HeadToHead]]
    los: dict[str, dict[str, float | None]]  # LOS of the row bot over the column bot, in the joint fit
    seat_bias: list[dict[str, Any]]
    matches: int
    deal_sets: int
    bootstrap: int
    anchor: tuple[str, float] | None = None
    notes: list[str] = field(default_factory=list)
    #: the partnerships rated as players (team games only: Confirmation's pairs), else None
    teams: ratings.Ratings | None = None
    identifiable: bool = True  # False: the bots' ratings cannot be told apart (ratings.Ratings)
    intervals_trusted: bool = True  # False: no interval can be trusted (one deal set)
    #: bots that did not play all their matches (died for good): why; marked ``*``, ranked last
    incomplete: dict[str, str] = field(default_factory=dict)
    #: P(rank = k + 1) of each bot by rating, and P(among the top k + 1) (the ratings' posterior,
    #: :mod:`referee.stats.ranks`); empty without intervals, with one deal set or unidentifiable ratings
    rank_probabilities: dict[str, list[float]] = field(default_factory=dict)
    top_k: dict[str, list[float]] = field(default_factory=dict)
    rank_df: int | None = None  # the posterior's degrees of freedom (deal sets - 1)
    #: every entry the results directory has known (:meth:`Store.entries`); those not playing are not
    #: ranked, and are listed below the table with the reason
    entries: list[Entry] = field(default_factory=list)
    #: an adaptive tournament that stopped: why (:class:`referee.competition.adaptive.Stop` as JSON), else None
    stopped: dict[str, Any] | None = None
    #: the reference pool whose scale the ratings are on (its short id: docs/pool.md), else None (the
    #: field's average at 1500); ``off_scale``: the run does not keep the pool's scale (a changed
    #: setting, or its bots' differences moved: :class:`referee.stats.anchored.ScaleCheck`)
    pool_id: str | None = None
    off_scale: bool = False
    #: the pool's verdict and its reasons (None: no pool)
    pool: OnPool | None = None

    @property
    def out(self) -> list[Entry]:
        """The entries not playing: did not start, withdrawn, dead."""
        return [e for e in self.entries if e.status != model.EntryStatus.PLAYING]


def match_seats(game: str, rows: Iterable[MatchRow]) -> list[headtohead.MatchSeats]:
    """The matches as the tables rank their seats: by placing or by final score, as the game says;
    with their teams where the results name them."""
    by_placing = games.get(game).rated_by is RatedBy.PLACING
    return [headtohead.MatchSeats(row.deal_set, tuple(row.lineup),
                                  tuple(-p for p in row.placing) if by_placing else tuple(row.scores),
                                  tuple(map(tuple, row.results["teams"])) if row.results.get("teams") else None)
            for row in rows]


def pair_results_of(game: str, rows: Iterable[MatchRow]) -> list[ratings.Outcome]:
    """The results the rating fit takes (pairwise, or between teams)."""
    return headtohead.pair_results(match_seats(game, rows))


def compute(game: str, rows: list[MatchRow], anchor: tuple[str, float] | None = None, bootstrap: int = 1000,
            seed: int = 0, pairs: bool = True, pool: tpool.Pool | None = None,
            mismatches: Sequence[str] = ()) -> Standings:
    """The standings of these matches; ``pairs=False`` leaves out head to head (a two-player fit
    with its bootstrap for every two bots that met: most of the work when there are many bots).
    ``pool``: a reference pool the run includes: its bots that played are held at their ratings
    (:func:`referee.stats.anchored.rate_anchored`), the scale is checked, and ``mismatches`` (where
    the run's setting differs from the pool's: :meth:`Pool.mismatches`) mark it off-scale."""
    seats_of = match_seats(game, rows)
    outcomes = headtohead.pair_results(seats_of)
    held = _held(pool, rows)
    if pool is not None and anchor is not None:
        raise ValueError("a pool's scale and an anchor cannot be combined")
    if pool is not None and held:
        fit = anchored.rate_anchored(outcomes, pool.scale, bootstrap=bootstrap, seed=seed)
    else:
        fit = ratings.rate(outcomes, anchor=anchor, bootstrap=bootstrap, seed=seed)
    opponents = headtohead.opponents_average(fit)
    teams = None
    if any(isinstance(o, ratings.TeamResult) for o in outcomes):
        teams = ratings.rate_teams(outcomes, fit, seed=seed)
    matches: dict[str, int] = defaultdict(int)
    points: dict[str, list[int]] = defaultdict(list)
    faults: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seats = len(rows[0].lineup) if rows else 0
    by_seat: list[list[tuple[int, int]]] = [[] for _ in range(seats)]
    for row in rows:
        for bot in set(row.lineup):
            matches[bot] += 1
        for seat, bot in enumerate(row.lineup):
            points[bot].append(row.scores[seat])
            for kind, n in row.faults[seat].items():
                faults[bot][kind] += n
            by_seat[seat].append((row.scores[seat], row.placing[seat]))
    lines = []
    for r in fit.rows:
        f = faults[r.name]
        pts = points[r.name]
        line = BotLine(r.name, r.elo, r.lo, r.hi, r.plus_minus, matches[r.name], r.games, r.wins, r.draws,
                       r.losses, r.score_pct, opponents[r.name], sum(pts) / len(pts) if pts else None,
                       r.los_next, r.bound, {str(kind): f[kind] for kind in FaultKind})
        if not fit.identifiable:  # the prior's split of the teams' ratings: print none
            line.elo = line.plus_minus = line.lo = line.hi = line.los_next = line.opponents_elo = None
        lines.append(line)
    bias = [{"seat": s, "games": len(v), "mean_points": sum(p for p, _ in v) / len(v) if v else None,
             "first_place_pct": 100 * sum(1 for _, place in v if place == 1) / len(v) if v else None}
            for s, v in enumerate(by_seat)]
    los = headtohead.los_matrix(fit)
    if not fit.identifiable:
        los = {a: dict.fromkeys(row) for a, row in los.items()}
    posterior = fit.posterior if fit.identifiable else None
    st = Standings(game, lines, headtohead.head_to_head(seats_of, bootstrap, seed) if pairs else {}, los,
                   bias, len(rows), len({r.deal_set for r in rows}), bootstrap, anchor,
                   [f"warning: {w}" for w in fit.warnings], teams, fit.identifiable, fit.intervals_trusted,
                   rank_probabilities=posterior.rank_probabilities() if posterior else {},
                   top_k=posterior.top() if posterior else {}, rank_df=posterior.df if posterior else None)
    if pool is not None:
        on_pool(st, _scale_of(pool, outcomes, held, mismatches))
    return st


def _held(pool: tpool.Pool | None, rows: Iterable[MatchRow]) -> tuple[str, ...]:
    """The pool's bots that played in these matches, in the pool's order."""
    if pool is None:
        return ()
    played = {b for r in rows for b in r.lineup}
    return tuple(b.name for b in pool.bots if b.name in played)


def _scale_of(pool: tpool.Pool, outcomes: Sequence[ratings.Outcome], held: tuple[str, ...],
              mismatches: Sequence[str]) -> OnPool:
    """The verdict on the pool's scale: off-scale where the setting differs or the check fails."""
    name = f"pool {pool.short_id}"
    if not held:
        return OnPool(pool.short_id, anchored.Scale.OFF,
                      (f"off-scale: none of {name}'s bots has played in these results: the ratings are on the "
                       f"field's average ({ratings.DEFAULT_AVERAGE:g}), not on its scale",), held)
    check = anchored.check_scale(outcomes, pool.scale)
    reasons = [check.line(name)]
    if mismatches:
        reasons.insert(0, f"off-scale: this run's setting is not {name}'s: {'; '.join(mismatches)}; these ratings "
                          f"are not on its scale")
    verdict = anchored.Scale.OFF if mismatches else check.verdict
    return OnPool(pool.short_id, verdict, tuple(reasons), held)


def on_pool(st: Standings, scale: OnPool) -> None:
    """Mark the standings as on (or off) a pool's scale: its id, the verdict, its reasons first among the notes."""
    st.pool, st.pool_id, st.off_scale = scale, scale.id, scale.verdict == anchored.Scale.OFF
    st.notes[:0] = list(scale.reasons)


def pool_of(store: Store) -> tpool.Pool | None:
    """The reference pool a results directory's run includes (its tournament file's ``[pool]``, kept
    with its configuration), or None."""
    kept = store.config().get("pool")
    if not kept:
        return None
    return tpool.loads(json.dumps(kept["content"]), f"the pool kept in {store.directory} ({kept['file']})")


def pool_mismatches(store: Store, pool: tpool.Pool, rows: Iterable[MatchRow]) -> list[str]:
    """Where a results directory's run differs from the pool's setting (:meth:`Pool.mismatches`): its
    game, options and clock, and the versions its pool bots that played were recorded at (their
    content hashes, :func:`referee.results.pool.content_hash`)."""
    config = store.config()
    recorded = store.recorded_versions()
    played = set(_held(pool, rows))
    hashes = {name: tpool.content_hash(v) if v else None for name, v in recorded.items() if name in played}
    hashes.update({name: None for name in played if name not in recorded})  # an older store: none recorded
    return pool.mismatches(config["game"], config.get("options", {}), config.get("clock", {}), hashes)


def of_store(store: Store, rows: list[MatchRow] | None = None, anchor: tuple[str, float] | None = None,
             bootstrap: int = 1000, notes: Iterable[str] = (), pairs: bool = True) -> Standings:
    """The standings of a results directory as every command shows them (``rows``: its matches,
    if already read): ``notes``, then the store's notes on its bots, and the bots that did not
    play all their matches marked and ranked last (:func:`mark_incomplete`)."""
    rows = list(store.matches()) if rows is None else rows
    pool = pool_of(store)
    if pool is not None and anchor is not None:
        raise model.ConfigError(f"--anchor: the ratings of {store.directory} are on the scale of pool {pool.short_id} "
                                f"(its tournament file's [pool]); an anchor would place them elsewhere: leave it out")
    st = compute(store.config()["game"], rows, anchor=anchor, bootstrap=bootstrap, pairs=pairs, pool=pool,
                 mismatches=pool_mismatches(store, pool, rows) if pool is not None else ())
    st.notes.extend(notes)
    if (stop := rounds.stop_of(store)) is not None:
        st.notes.append(stop.text)
        st.stopped = stop.to_json()
    st.notes.extend(store.bot_notes())
    mark_incomplete(st, {name: v["why"] for name, v in store.incomplete().items()})
    st.entries = store.entries()
    return st


def mark_incomplete(st: Standings, incomplete: dict[str, str]) -> None:
    """Mark the bots that did not play all their matches and rank them below every bot that
    did, in their own order, so that none ranks above a bot that played because it did not
    play. An LOS to the next line that is no longer the next is dropped."""
    st.incomplete = {name: why for name, why in incomplete.items() if any(b.name == name for b in st.lines)}
    before = {b.name: i for i, b in enumerate(st.lines)}
    st.lines.sort(key=lambda b: b.name in st.incomplete)  # stable: the rating order within each group
    for i, b in enumerate(st.lines):
        if i + 1 == len(st.lines) or before[st.lines[i + 1].name] != before[b.name] + 1:
            b.los_next = None


def _name(st: Standings, bot: str) -> str:
    return f"{bot} *" if bot in st.incomplete else bot


def _f(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def signed_elo(value: float | None) -> str:
    return "-" if value is None else f"{round(value):+d}"  # never "-0"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


# --- how a rating and its interval are shown -------------------------------------------------

#: the widest 95% interval a table prints, as its ± (half its width): 400 Elo, the difference at
#: which one bot expects ten times the other's points; a wider one says "too few games"
WIDEST = 400.0
TOO_FEW = "too few games"
#: a difference a stopping rule showed inside its margin (:attr:`referee.competition.adaptive.Rule.tie_elo`)
WITHIN = "within"


@dataclass(frozen=True)
class Shown:
    """A rating (or an Elo difference) as every table, page and JSON shows it (:func:`shown`)."""

    #: "estimate" (an Elo, with its interval if any), "lower" (a bound: above ``lo``), "upper"
    #: (below ``hi``), "too few games" (the interval is too wide, or the bound is on the wrong side
    #: to say anything), "none" (no Elo: unidentifiable ratings), "within" (a stopping rule's
    #: difference inside its margin)
    kind: str
    elo: float | None  # the estimate shown, if any
    lo: float | None  # the ends shown, if any
    hi: float | None
    elo_text: str  # the Elo cell: "1540", "> 1568", "< 1360", "-"
    interval_text: str  # the interval cell: "[1320, 1760]", "-", "too few games"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "elo": self.elo_text, "interval": self.interval_text}


def shown(elo: float | None, lo: float | None, hi: float | None, bound: ratings.Bound | None, side: float | None,
          signed: bool = False, within: float | None = None) -> Shown:
    """How a rating or a difference is shown, decided here for every output. ``bound`` is the
    statistics' (a record of every point or none: only ``lo``, or only ``hi``, means something);
    such a bound is shown only when it is on the record's side of ``side`` (the opponents' average
    Elo for a rating, 0 for a difference): above it after every point, below it after none; a bound
    on the other side says the results cannot tell, as does an interval wider than ``2 * WIDEST``.
    ``signed``: a difference ("+40"). ``within``: a stopping rule's margin: a difference whose
    interval holds 0 and lies inside ``±within`` is shown as such ("within ±50 Elo")."""
    fmt = signed_elo if signed else _f
    if elo is None:
        return Shown("none", None, None, None, "-", "-")
    if within and lo is not None and hi is not None and -within < lo <= 0 <= hi < within:
        return Shown(WITHIN, elo, lo, hi, fmt(elo), f"within ±{within:g} Elo")
    if bound == ratings.Bound.LOWER and lo is not None:
        if side is not None and lo <= side:
            return Shown(TOO_FEW, None, None, None, "-", TOO_FEW)
        return Shown("lower", None, lo, None, f"> {fmt(lo)}", "-")
    if bound == ratings.Bound.UPPER and hi is not None:
        if side is not None and hi >= side:
            return Shown(TOO_FEW, None, None, None, "-", TOO_FEW)
        return Shown("upper", None, None, hi, f"< {fmt(hi)}", "-")
    if lo is None or hi is None:
        return Shown("estimate", elo, None, None, fmt(elo), "-")
    if (hi - lo) / 2.0 > WIDEST:
        return Shown(TOO_FEW, elo, None, None, fmt(elo), TOO_FEW)
    return Shown("estimate", elo, lo, hi, fmt(elo), f"[{fmt(lo)}, {fmt(hi)}]")


def shown_rating(b: BotLine | ratings.PlayerRating, opponents_elo: float | None) -> Shown:
    """A bot's (or a team's) rating as shown; ``opponents_elo``: its opponents' average, which a bound must clear."""
    return shown(b.elo, b.lo, b.hi, b.bound, opponents_elo)


def shown_line(b: BotLine) -> Shown:
    return shown_rating(b, b.opponents_elo)


def shown_teams(teams: ratings.Ratings) -> dict[str, Shown]:
    """Each partnership's rating as shown (none where even the teams cannot be compared)."""
    opponents = headtohead.opponents_average(teams)
    return {r.name: shown_rating(r, opponents[r.name]) if teams.identifiable else shown(None, None, None, None, None)
            for r in teams.rows}


def shown_difference(h: headtohead.HeadToHead) -> Shown:
    """A head-to-head Elo difference as shown: a bound only where it clears 0 (a sweep on too few
    games does not say who is better: "> -642" would read as a bound the wrong way)."""
    return shown(h.elo, h.elo_lo, h.elo_hi, h.bound, 0.0, signed=True)


def shown_claims(st: Standings) -> list[tuple[str, Shown] | None] | None:
    """What an adaptive tournament's stopping rule said of each line and the next, as shown, with its
    verdict: "above" as the bound it proved (``> +35``: the line is at least that far above the
    next), "within" as ``within ±50 Elo``, "open" as a difference and its bounds (None for the last
    line, or a pair the rule did not look at); None for a tournament without a stop."""
    if not st.stopped:
        return None
    stop = model.Stop.from_json(st.stopped)
    out: list[tuple[str, Shown] | None] = []
    for upper, lower in zip(st.lines, [*st.lines[1:], None]):
        claim = stop.claim(upper.name, lower.name) if lower is not None else None
        if claim is None or claim.elo is None:
            out.append(None)
            continue
        sign = 1.0 if claim.a == upper.name else -1.0  # the table's order may flip two equal entries
        ends = (-math.inf if claim.lo is None else claim.lo,  # None: unbounded
                math.inf if claim.hi is None else claim.hi)
        lo, hi = sorted((sign * ends[0], sign * ends[1]))
        bound = ratings.Bound.LOWER if claim.verdict == PairVerdict.ABOVE else None
        within = stop.tie_elo if claim.verdict == PairVerdict.WITHIN else None
        out.append((claim.verdict, shown(sign * claim.elo, lo, hi, bound, 0.0, signed=True, within=within)))
    return out


def claim_cell(claim: tuple[str, Shown] | None) -> str:
    """The stopping rule's cell of a line: ``> +35``, ``+3 within ±50 Elo``, ``+40 [-60, +140]``, ``-``."""
    if claim is None:
        return "-"
    s = claim[1]
    return s.elo_text if s.interval_text == "-" else f"{s.elo_text} {s.interval_text}"


def claim_json(claim: tuple[str, Shown] | None) -> dict[str, Any] | None:
    return None if claim is None else {"verdict": claim[0], **claim[1].to_json()}


def _cells(s: Shown) -> tuple[str, str]:
    return s.elo_text, s.interval_text


def elo_cells(b: BotLine, st: Standings | None = None) -> tuple[str, str]:
    """The Elo and interval cells of a bot (:func:`shown_line`); a bot a pool holds (in ``st``) says so."""
    if st is not None and st.pool is not None and b.name in st.pool.held:
        return _f(b.elo), HELD
    return _cells(shown_line(b))


#: the interval cell of a pool's bot: its rating is the pool's, held (docs/pool.md)
HELD = "held (pool)"


def elo_header(st: Standings) -> str:
    """The rating column's header: ``Elo``, or the pool whose scale it is on (or is not)."""
    if st.pool is None:
        return "Elo"
    return f"Elo (off pool {st.pool.id}'s scale)" if st.off_scale else f"Elo (pool {st.pool.id})"


#: the header of an adaptive tournament's column: what its stopping rule said of a line and the next
CLAIM_HEADER = "vs next (stop rule)"


def table(st: Standings) -> str:
    rows = [[rank, _name(st, b.name), *elo_cells(b, st), b.matches, b.results, f"{b.wins}-{b.draws}-{b.losses}",
             _f(b.score_pct, 1), _f(b.opponents_elo), _f(b.mean_points, 2),
             fault_cell(b.faults)]
            for rank, b in enumerate(st.lines, 1)]
    headers = ["rank", "bot", elo_header(st), "95% interval", "matches", "results", "W-D-L", "score %", "opp. Elo",
               "pts/seat", FAULTS_HEADER]
    align = ["right", "left", "right", "right", "right", "right", "right", "right", "right", "right", "right"]
    claimed = shown_claims(st)
    if claimed is not None:  # an adaptive tournament's stop: what its rule said of each line and the next
        rows = [[*r, claim_cell(c)] for r, c in zip(rows, claimed)]
        headers.append(CLAIM_HEADER)
        align.append("right")
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, colalign=align)


def team_table(teams: ratings.Ratings) -> str:
    """The partnerships (``ratings.rate_teams``); no Elo where even the teams cannot be compared."""
    shown_of = shown_teams(teams)
    rows = [[rank, r.name, *_cells(shown_of[r.name]), r.games, _f(r.score_pct, 1), f"{r.wins}-{r.draws}-{r.losses}"]
            for rank, r in enumerate(teams.rows, 1)]
    return tabulate(rows, headers=["rank", "team", "Elo", "95% interval", "results", "score %", "W-D-L"],
                    tablefmt="simple", disable_numparse=True,
                    colalign=("right", "left", "right", "right", "right", "right", "right"))


def _teams_part(st: Standings) -> list[str]:
    if st.teams is None:
        return []
    how = ("the average of its members'" if any(b.elo is not None for b in st.lines)
           else "each team rated as one player" if st.teams.identifiable
           else "none, the teams that met never link up")
    return ["", f"Partnerships (team against team; a team's Elo: {how}):", team_table(st.teams)]


def pairs(st: Standings) -> list[tuple[str, str]]:
    """Every two bots that met, once, the better ranked first, in the order of the ranking."""
    names = [b.name for b in st.lines]
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if b in st.head_to_head.get(a, {})]


def difference_cells(h: headtohead.HeadToHead) -> tuple[str, str]:
    """The Elo difference and interval cells (:func:`shown_difference`)."""
    return _cells(shown_difference(h))


def pairs_table(st: Standings) -> str:
    rows = []
    for a, b in pairs(st):
        h = st.head_to_head[a][b]
        rows.append([f"{a} - {b}", h.results, f"{h.wins}-{h.draws}-{h.losses}", _f(h.score_pct, 1),
                     *difference_cells(h), _pct(h.los), " ".join(map(str, h.pentanomial)),
                     h.unpaired])
    headers = ["pair", "results", "W-D-L", "score %", "Elo diff", "95% interval", "LOS %", "game pairs 0 ½ 1 1½ 2",
               "unpaired"]
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                    colalign=("left", "right", "right", "right", "right", "right", "right", "right", "right"))


def unpaired_note(st: Standings) -> list[str]:
    """What the unpaired results are, when a pair has some (none: nothing to say)."""
    if not any(st.head_to_head[a][b].unpaired for a, b in pairs(st)):
        return []
    return ["unpaired: results whose seat-swapped twin is not stored: an interrupted run, or two seats the "
            "schedule never swaps\n(four seats in rotation swap only opposite seats: neighbours have no game pairs, "
            "only results)"]


def los_table(st: Standings) -> str:
    names = [b.name for b in st.lines]
    rows = [[a, *("" if a == b else _pct(st.los[a][b]) for b in names)] for a in names]
    return tabulate(rows, headers=["LOS %", *names], tablefmt="simple", disable_numparse=True)


def ranks_tables(st: Standings) -> list[str]:
    """P(rank = k) and P(top k) of every bot, in the table's order (none without a posterior)."""
    if not st.rank_probabilities:
        return ["(no rank probabilities: they need intervals, two deal sets or more and identifiable ratings)"]
    names = [b.name for b in st.lines if b.name in st.rank_probabilities]  # a pool's bots are held: not ranked
    n = len(names)
    ranks = [[_name(st, a), *(_pct(p) for p in st.rank_probabilities[a])] for a in names]
    tops = [[_name(st, a), *(_pct(p) for p in st.top_k[a][:-1])] for a in names]
    return [tabulate(ranks, headers=["P(rank) %", *map(str, range(1, n + 1))], tablefmt="simple",
                     disable_numparse=True),
            "",
            tabulate(tops, headers=["P(top k) %", *(f"top {k}" for k in range(1, n))], tablefmt="simple",
                     disable_numparse=True)]


def bias_table(st: Standings) -> str:
    label = games.get(st.game).first_place_label
    rows = [[s["seat"], s["games"], _f(s["mean_points"], 2), _f(s["first_place_pct"], 1)] for s in st.seat_bias]
    return tabulate(rows, headers=["seat", "games", "mean points", label], tablefmt="simple", disable_numparse=True)


def scale(st: Standings) -> str:
    """How the ratings are placed: an anchored bot, or the average."""
    if st.anchor is not None:
        return f"anchored: {st.anchor[0]} = {st.anchor[1]:g}"
    if st.pool is not None and st.pool.held:
        return (f"on the scale of pool {st.pool.id}, its bots held at their ratings"
                + (" (off its scale: below)" if st.off_scale else ""))
    return f"average {ratings.DEFAULT_AVERAGE:g}"


def report(st: Standings, los: bool = False, ranks: bool = False) -> str:
    """The standings as text; with ``los``, the likelihood-of-superiority matrix too; with ``ranks``,
    each bot's rank probabilities."""
    interval = (f"95% intervals by {st.bootstrap} bootstrap resamples of deal sets, widened for small samples"
                if st.bootstrap else "no intervals (--bootstrap 0)")
    parts = [
        f"{st.game}: {st.matches} match(es) on {st.deal_sets} deal set(s); Elo by Bradley-Terry maximum "
        f"likelihood, {scale(st)}; {interval}",
        *st.notes,
        "",
        table(st),
        *out_lines(st),
        "matches: matches played; results: pairwise results, one per seat of another bot in a match (what W-D-L "
        "and score % count);\nopp. Elo: the opponents' average Elo over those results;\n" + FAULTS_LEGEND,
        *_teams_part(st),
        "",
        "Head to head (the first bot's results against the second; Elo diff from these results alone; game pairs: "
        "the same deal set with the two seats swapped, counted by the first bot's points):",
        pairs_table(st),
        *unpaired_note(st),
    ]
    if los:
        parts += ["", "Likelihood of superiority (row over column: P(rated above), the joint fit's posterior over "
                  "deal sets):", los_table(st)]
    if ranks:
        parts += ["", "Rank probabilities (% of the joint fit's posterior over deal sets; rank by rating, 1 best; "
                  "top k: rank k or better):", *ranks_tables(st)]
    parts += [
        "",
        "Seat bias (" + games.get(st.game).seat_order + "):",
        bias_table(st),
    ]
    return "\n".join(parts)


def out_lines(st: Standings) -> list[str]:
    """The entries not ranked, with the reason, in a line each (none when every entry plays)."""
    return [f"not ranked: {e.name} ({e.status}: {e.why})" for e in st.out]


def to_json(st: Standings) -> dict[str, Any]:
    claimed = shown_claims(st)
    return {
        "game": st.game, "matches": st.matches, "deal_sets": st.deal_sets, "bootstrap": st.bootstrap,
        "scale": {"anchor": st.anchor[0], "rating": st.anchor[1]} if st.anchor else
                 {"pool": st.pool.id} if st.pool is not None and st.pool.held else
                 {"average": ratings.DEFAULT_AVERAGE},
        **({"pool": st.pool.to_json()} if st.pool is not None else {}),
        "identifiable": st.identifiable, "intervals_trusted": st.intervals_trusted, "notes": st.notes,
        "standings": [{"rank": i, **b.__dict__, "shown": shown_line(b).to_json(),
                       **({"incomplete": st.incomplete[b.name]} if b.name in st.incomplete else {}),
                       **({"held": True} if st.pool is not None and b.name in st.pool.held else {}),
                       **({"vs_next": claim_json(c)} if claimed is not None else {})}
                      for (i, b), c in zip(enumerate(st.lines, 1), claimed or [None] * len(st.lines))],
        "head_to_head": {a: {b: {**h.__dict__, "shown": shown_difference(h).to_json()} for b, h in row.items()}
                         for a, row in st.head_to_head.items()},
        "los": st.los,
        "rank_probabilities": st.rank_probabilities,
        "top_k": st.top_k,
        "rank_df": st.rank_df,
        "seat_bias": st.seat_bias,
        **({"teams": _teams_json(st.teams)} if st.teams else {}),
        "entries": [e.__dict__ for e in st.entries],
        **({"stopped": st.stopped} if st.stopped else {}),
    }


def _teams_json(teams: ratings.Ratings) -> list[dict[str, Any]]:
    shown_of = shown_teams(teams)
    return [{"rank": i, **r.__dict__, "shown": shown_of[r.name].to_json()} for i, r in enumerate(teams.rows, 1)]


def to_csv(st: Standings) -> str:
    """One row per bot, the fields of the standings (its faults a column per kind: ``faults_timeout``, ...);
    then, when some entries do not play, one row for each (no rank, its ``status`` and ``why``)."""
    out = st.out
    kinds = [f"faults_{kind}" for kind in FaultKind]
    fields = ["rank", *(f for f in BotLine.__dataclass_fields__ if f != "faults"), *kinds,
              *(["incomplete"] if st.incomplete else []), *(["status", "why"] if out else []),
              *(["pool", "scale", "held"] if st.pool is not None else [])]
    rows = []
    for i, b in enumerate(st.lines, 1):
        row = {"rank": i, **b.__dict__, **{f"faults_{kind}": n for kind, n in b.faults.items()}}
        del row["faults"]
        if st.pool is not None:  # every rating's scale: the pool's id, its verdict, the bots it holds
            row.update(pool=st.pool.id, scale=st.pool.verdict, held=b.name in st.pool.held)
        if st.incomplete:
            row["incomplete"] = st.incomplete.get(b.name, "")
        if out:
            row.update(status=model.EntryStatus.PLAYING, why="")
        rows.append(row)
    rows += [{"rank": "", "name": e.name, "status": e.status, "why": e.why} for e in out]
    return _csv(fields, rows)


#: the CSV columns of a pentanomial: game pairs scoring 0, ½, 1, 1½, 2 points for the row's bot
PAIRS_COLUMNS = ("pairs_0", "pairs_0.5", "pairs_1", "pairs_1.5", "pairs_2")


def to_csv_pairs(st: Standings) -> str:
    """One row per ordered pair of bots that met: head to head, game pairs and the joint fit's LOS."""
    fields = ["bot", "opponent",
              *(c for f in headtohead.HeadToHead.__dataclass_fields__
                for c in (PAIRS_COLUMNS if f == "pentanomial" else (f,))),
              "los_joint"]
    rows = []
    names = [b.name for b in st.lines]
    for a in names:
        for b in names:
            h = st.head_to_head.get(a, {}).get(b)
            if h is not None:
                row = {"bot": a, "opponent": b, **h.__dict__, "los_joint": st.los[a][b]}
                row.update(zip(PAIRS_COLUMNS, row.pop("pentanomial")))
                rows.append(row)
    return _csv(fields, rows)


def _csv(fields: list[str], rows: Iterable[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()
