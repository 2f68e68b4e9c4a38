"""A gauntlet: one candidate against a list of baselines, with duplicate deal sets.

The file is a tournament file (``docs/tournaments.md``) with one more table::

    [gauntlet]
    candidate = "mine"          # the bot on trial: one of the [[bots]]; the others are the baselines
    lineup = "duel"             # "duel" (default) or, for games of more than two seats, "field"

Only matches involving the candidate are played, every deal set from every seat:

- ``duel``: the candidate against each baseline alone, seated as a two-bot
  tournament of the game seats them (``GameSpec.seat_groups``), in every seat
  rotation. Aegis: each deal set twice with the seats swapped. Confirmation:
  each fills two seats (A B A B and B A B A; with *pairs* A A B B in its four
  rotations, so each is partnered with the other's copy).
- ``field`` (games of more than two seats): the candidate with a baseline in
  every other seat (Confirmation: three), every group of baselines (or a
  balanced subset of ``max_groups``), each group in all its rotations. It
  needs a baseline for every other seat.

The standings are the tournament's (one joint Bradley-Terry fit) and, for
each baseline, the candidate's Elo difference against it from their
head-to-head results alone, with a 95% interval over deal sets (a bound after a sweep;
:func:`referee.stats.headtohead.elo_difference`), shown as every table shows one
(:func:`referee.results.standings.shown`).

The verdict is a one-sided test (did the candidate get worse?): worse than a
baseline where the one-sided upper bound of the difference at the verdict's
confidence is below 0 (:func:`referee.stats.headtohead.upper_bound`, the same
test as the LOS); the table and the verdict print that bound, so that a
two-sided interval holding 0 beside a failed check reads as what it is.

A gauntlet file with a ``[pool]`` (docs/pool.md) has the pool's bots among its
baselines: the standings are then on the pool's scale, and :func:`anchored`
gives the candidate's rating on it with its interval, printed after the verdict.

"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tabulate import tabulate

from referee import games
from referee.competition import config as tconfig
from referee.competition.config import ConfigFile
from referee.competition.run import Plan, Progress, claim_store, play_schedule
from referee.competition.schedule import numbers, rotations
from referee.games.lineups import balanced_subset
from referee.model import Lineup, Schedule, Seating, TournamentConfig, deal_set_seed
from referee.model.modes import member
from referee.model.teams import TeamError
from referee.results.standings import (
    TOO_FEW,
    WIDEST,
    Shown,
    Standings,
    pair_results_of,
    shown,
    shown_line,
    signed_elo,
)
from referee.results.store import MatchRow, Store
from referee.stats import ratings
from referee.stats.headtohead import elo_difference, upper_bound

_GAUNTLET = {"candidate", "lineup"}


# --- the configuration ----------------------------------------------------------------


@dataclass(frozen=True)
class GauntletConfig:
    tournament: TournamentConfig
    candidate: str
    lineup: Lineup = Lineup.DUEL

    @property
    def game(self) -> str:
        return self.tournament.game

    @property
    def baselines(self) -> list[str]:
        return [b.name for b in self.tournament.bots if b.name != self.candidate]

    def fingerprint(self) -> str:
        essence = json.loads(self.tournament.fingerprint())
        essence["gauntlet"] = {"candidate": self.candidate, "lineup": self.lineup}
        return json.dumps(essence, sort_keys=True)

    def describe(self) -> dict[str, Any]:
        return {**self.tournament.describe(), "gauntlet": {"candidate": self.candidate, "lineup": self.lineup}}


def load(path: str | Path) -> GauntletConfig:
    return parse(tconfig.read(path))


def parse(loc: ConfigFile) -> GauntletConfig:
    g, rest = loc.split("gauntlet", _GAUNTLET, 'with candidate = "BOT", one of the [[bots]]')
    base = tconfig.parse(rest)
    if base.adaptive:
        raise loc.error('tournament.schedule = "adaptive" is for a tournament: a gauntlet plays the candidate against '
                        'every baseline on each of its deal_sets', "tournament", "schedule")
    names = [b.name for b in base.bots]
    candidate = g.get("candidate")
    if candidate not in names:
        raise loc.error(f"gauntlet.candidate must name one of the bots ({', '.join(names)}), got {candidate!r}",
                        "gauntlet", "candidate")
    if base.pool is not None and candidate in base.pool.bots:
        raise loc.error(f"gauntlet.candidate {candidate!r} is a bot of the pool: its rating is held, not measured "
                        f"(the candidate is one of the [[bots]])", "gauntlet", "candidate")
    lineup = member(Lineup, g.get("lineup", Lineup.DUEL))
    if lineup is None:
        raise loc.error(f"gauntlet.lineup must be one of {', '.join(Lineup)}, got {g['lineup']!r}", "gauntlet",
                        "lineup")
    if lineup == Lineup.FIELD:
        spec = games.get(base.game)
        if spec.num_seats < 3:
            crowded = " and ".join(s.title for s in games.GAMES.values() if s.num_seats >= 3)
            raise loc.error(f'gauntlet.lineup = "field" is for {crowded} only '
                            f'({spec.title} has {_number(spec.num_seats)} seats)', "gauntlet", "lineup")
        if len(names) - 1 < spec.num_seats - 1:
            raise loc.error(f'gauntlet.lineup = "field" needs at least {_number(spec.num_seats - 1)} baselines, '
                            f'got {len(names) - 1}', "gauntlet", "lineup")
    cfg = GauntletConfig(base, candidate, lineup)
    try:
        keeps_apart(cfg, base.entries)
    except TeamError as err:
        raise tconfig.team_error(loc, base, err) from None
    return cfg


def keeps_apart(cfg: GauntletConfig, entries: Collection[str]) -> bool:
    """Whether the gauntlet of ``entries`` (in play) keeps the candidate's team-mates away from its
    tables (:meth:`referee.model.teams.Teams.settle`): a baseline of the candidate's team has
    no table; in a field, the baselines of other teams must fill the other seats."""
    teams, c = cfg.tournament.teams, cfg.candidate
    baselines = [b for b in cfg.baselines if b in entries]
    if c not in entries or not baselines:
        return True
    mates = [b for b in baselines if not teams.apart([c, b])]
    unseated = list(mates)
    others = games.get(cfg.game).num_seats - 1
    if cfg.lineup == Lineup.FIELD and teams.count(b for b in baselines if b not in mates) < others:
        unseated = baselines
    why = (f"the candidate {c} is of one team with {', '.join(mates)}" if mates else
           f"the baselines of teams other than the candidate's make fewer than {_number(others)} teams")
    return teams.settle(unseated, f"gauntlet: {why} ({teams.shared([c, *baselines])})")


# --- the schedule ---------------------------------------------------------------------


def make_schedule(cfg: GauntletConfig, out: Collection[str] = ()) -> Schedule:
    """The candidate against the baselines in play (not withdrawn, not ``out``); none without the candidate."""
    t = cfg.tournament
    c = cfg.candidate
    baselines = [b for b in cfg.baselines if b in t.entries and b not in out]
    spec = games.get(cfg.game)
    if c not in t.entries or c in out or not baselines:
        return Schedule((), (), "no match to play: the candidate or every baseline is out")
    teams = t.teams
    apart = keeps_apart(cfg, [c, *baselines])
    if apart:  # a baseline of the candidate's team has no table
        baselines = [b for b in baselines if teams.apart([c, b])]
    if cfg.lineup == Lineup.DUEL:
        groups = []
        for b in baselines:
            groups += spec.seat_groups([c, b], t.options, t.max_groups)[0]
        note = spec.duel_note.format(n=len(baselines))
    else:
        others = spec.num_seats - 1
        rivals = [g for g in itertools.combinations(baselines, others) if not apart or teams.apart([c, *g])]
        if not rivals:
            return Schedule((), (), f"no match to play: fewer than {_number(others)} baselines in play")
        if len(rivals) > t.max_groups:
            rivals = balanced_subset(baselines, rivals, t.max_groups)
            how = f"a balanced subset of {len(rivals)} groups of {_number(others)} baselines"
        else:
            how = f"every group of {_number(others)} baselines: {len(rivals)}"
        groups = [(c, *group) for group in rivals]
        note = f"the candidate at the table with {_number(others)} baselines, every deal set in every rotation; {how}"
    bases = [rotations(g) for g in groups]
    seatings = [Seating(k, deal_set_seed(t.seed, t.later_seeds, k), lineup)
                for k in numbers(t.deal_sets, t.retired) for group in bases for lineup in group]
    return Schedule(tuple(seatings), tuple(tuple(g) for g in groups), note + teams.note([c, *baselines], apart))


def _number(n: int) -> str:
    """A small number in words, as the schedule's notes and messages spell it."""
    return ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")[n] if n < 10 else str(n)


# --- running a gauntlet ---------------------------------------------------------------


def planner(cfg: GauntletConfig, store: Store) -> Plan:
    """The gauntlet's plan, on the deals ``store`` holds when it is asked (:func:`~referee.competition.run.planner`)."""
    return lambda out: make_schedule(replace(cfg, tournament=cfg.tournament.with_deals(store.config())),
                                     out)


def open_store(cfg: GauntletConfig, rerun: Sequence[str] = (), announce: Callable[[str], None] | None = None) -> Store:
    """The output directory's store, bound to this gauntlet (refuses another configuration's;
    ``rerun``: :func:`~referee.competition.run.claim_store`)."""
    return claim_store(cfg.tournament, cfg.fingerprint(), cfg.describe(), rerun, announce)


async def run(cfg: GauntletConfig, store: Store, progress: Progress | None = None, server: str | None = None,
              admin_token: str | None = None, connect_timeout: float = 30.0) -> int:
    """Play every match of the gauntlet's schedule not yet in the store; returns how many were played."""
    return await play_schedule(cfg.tournament, planner(cfg, store), store, progress, server, admin_token,
                               connect_timeout)


# --- the candidate against each baseline ------------------------------------------------


@dataclass
class Versus:
    """The candidate's head-to-head record and Elo difference against one baseline."""

    baseline: str
    matches: int
    games: int  # pairwise games (Confirmation: seat against seat)
    wins: int
    draws: int
    losses: int
    score_pct: float | None
    elo: float | None  # candidate - baseline
    lo: float | None  # the 95% interval (two-sided)
    hi: float | None
    plus_minus: float | None
    los: float | None
    points_diff: float | None  # candidate's mean points per seat minus the baseline's, in their matches
    #: "lower": the candidate won every game (only ``lo`` holds: "> +40"); "upper": it won none
    bound: ratings.Bound | None = None
    #: the one-sided upper bound at the verdict's confidence (:func:`referee.stats.headtohead.upper_bound`):
    #: the candidate is worse where it is below 0; None: none (a sweep by the candidate, or no interval)
    upper: float | None = None


def versus(game: str, rows: Sequence[MatchRow], candidate: str, bootstrap: int = 1000,
           seed: int = 0, confidence: float = 0.95) -> list[Versus]:
    """The candidate against each baseline; ``confidence``: the verdict's, for the one-sided bound."""
    out = []
    baselines = sorted({b for r in rows for b in r.lineup} - {candidate})
    for base in baselines:
        mine = [r for r in rows if candidate in r.lineup and base in r.lineup]
        outcomes = [o if o.a == candidate else ratings.PairResult(o.deal_set, o.b, o.a, 1.0 - o.score)
                    for o in pair_results_of(game, mine)
                    if isinstance(o, ratings.PairResult) and {o.a, o.b} == {candidate, base}]
        if not outcomes:
            out.append(Versus(base, len(mine), 0, 0, 0, 0, None, None, None, None, None, None, None))
            continue
        diff = elo_difference(outcomes, candidate, base, bootstrap, seed)
        row = diff.record
        diffs = []
        for r in mine:
            cs = [r.scores[s] for s, b in enumerate(r.lineup) if b == candidate]
            bs = [r.scores[s] for s, b in enumerate(r.lineup) if b == base]
            diffs.append(sum(cs) / len(cs) - sum(bs) / len(bs))
        upper = upper_bound(outcomes, candidate, base, confidence) if bootstrap > 0 else None
        out.append(Versus(base, len(mine), row.games, row.wins, row.draws, row.losses, row.score_pct, diff.elo,
                          diff.lo, diff.hi, diff.plus_minus, diff.los,
                          sum(diffs) / len(diffs), diff.bound, upper))
    out.sort(key=lambda v: (-(v.elo if v.elo is not None else -1e9), v.baseline))
    return out


def versus_json(v: Versus) -> dict[str, Any]:
    """A baseline's row as JSON: its fields, and how the tables show its difference (``shown``)."""
    return {**v.__dict__, "shown": shown_versus(v).to_json()}


def shown_versus(v: Versus) -> Shown:
    """The Elo difference as the tables show it (:func:`referee.results.standings.shown`)."""
    return shown(v.elo, v.lo, v.hi, v.bound, 0.0, signed=True)


@dataclass(frozen=True)
class Verdict:
    """The gauntlet's answer for CI: ``worse`` names the baselines the candidate is worse than at
    ``confidence``: the one-sided upper bound of its Elo difference (:attr:`Versus.upper`) is below
    0, which is its LOS below ``1 - confidence``; ``text`` says so, with the bound."""

    confidence: float
    worse: list[str]
    text: str


def _bound_text(v: Versus, pct: str) -> str:
    """The figures of a baseline the verdict names: ``Elo -106, at most -4 at 95% one-sided; LOS 2.1%``."""
    elo = shown_versus(v).elo_text
    upper = "no upper bound" if v.upper is None else f"at most {signed_elo(v.upper)}"
    los = "-" if v.los is None else f"{100 * v.los:.1f}%"
    return (f"Elo {elo}, " if elo != "-" else "") + f"{upper} at {pct} one-sided; LOS {los}"


def verdict(candidate: str, rows: Sequence[Versus], confidence: float = 0.95) -> Verdict:
    """Whether the candidate is worse than a baseline at ``confidence``: a one-sided test, read off
    each baseline's one-sided upper bound (computed by :func:`versus` at the same confidence);
    baselines without an LOS (no bootstrap, or no result) are not judged."""
    pct = f"{100 * confidence:g}%"
    judged = [v for v in rows if v.los is not None]
    worse = [v for v in judged if v.upper is not None and v.upper < 0.0]
    unjudged = [v.baseline for v in rows if v.los is None]
    if worse:
        text = (f"{candidate} is worse than " + ", ".join(f"{v.baseline} ({_bound_text(v, pct)})" for v in worse)
                + f" at {pct} confidence: a failed check (exit code 1)")
    else:
        text = f"{candidate} is worse than no baseline at {pct} confidence"
        bounded = [(v.upper, v) for v in judged if v.upper is not None]
        if bounded:
            closest = min(bounded, key=lambda bound: bound[0])[1]
            text += (f": every one-sided upper bound is above 0 (the lowest: {closest.baseline}, "
                     f"{_bound_text(closest, pct)})")
    if unjudged:
        text += f"; not judged (no LOS: --bootstrap 0 or no result): {', '.join(unjudged)}"
    return Verdict(confidence, [v.baseline for v in worse], text)


def anchored(candidate: str, st: Standings) -> dict[str, Any] | None:
    """The candidate's rating on the scale of the pool the gauntlet includes (its baselines among the
    pool's bots, held at their ratings: docs/pool.md), with its interval and the pool's verdict and
    reasons; None without a pool, or before the candidate has played one of its bots."""
    line = next((b for b in st.lines if b.name == candidate), None)
    if st.pool is None or not st.pool.held or line is None:
        return None
    s = shown_line(line)
    return {"pool": st.pool.id, "verdict": st.pool.verdict, "elo": line.elo, "lo": line.lo, "hi": line.hi,
            "shown": s.to_json(), "reasons": list(st.pool.reasons),
            "text": f"anchored to pool {st.pool.id}: {candidate} {s.elo_text} {s.interval_text}; {st.pool.reasons[0]}"}


def caption(candidate: str, confidence: float = 0.95) -> str:
    """What the candidate's table shows, in a line above it."""
    pct = f"{100 * confidence:g}%"
    return (f"{candidate} against each baseline (Elo difference from their head-to-head games; ± half the 95% "
            f"interval over deal sets, a bound after a sweep, \"{TOO_FEW}\" past ±{WIDEST:.0f}; one-sided {pct}: the "
            f"upper bound the verdict reads, worse where it is below 0):")


def versus_table(candidate: str, rows: Sequence[Versus], confidence: float = 0.95, tablefmt: str = "simple") -> str:
    pct = f"{100 * confidence:g}%"

    def f(value: float | None, digits: int = 0, sign: bool = False) -> str:
        return "-" if value is None else f"{value:{'+' if sign else ''}.{digits}f}"

    def plus_minus(s: Shown) -> str:
        if s.kind == TOO_FEW:
            return TOO_FEW
        return "-" if s.lo is None or s.hi is None else f"{(s.hi - s.lo) / 2.0:.0f}"

    body = []
    for v in rows:
        s = shown_versus(v)
        body.append([v.baseline, v.matches, v.games, f"{v.wins}-{v.draws}-{v.losses}", f(v.score_pct, 1),
                     s.elo_text, plus_minus(s), signed_elo(v.upper), f(None if v.los is None else 100 * v.los, 1),
                     f(v.points_diff, 2, True)])
    return tabulate(body, headers=["baseline", "matches", "games", "W-D-L", "score %", f"Elo {candidate} -", "±",
                                   f"one-sided {pct}", "LOS %", "pts diff"],
                    tablefmt=tablefmt, disable_numparse=True,
                    colalign=("left", *["right"] * 9))


def markdown(game: str, candidate: str, rows: Sequence[Versus], result: Verdict,
             on_pool: dict[str, Any] | None = None) -> str:
    """The candidate's table and the verdict in Markdown, for a pull request or a CI job's summary;
    ``on_pool``: its rating on a pool's scale (:func:`anchored`), after the verdict."""
    outcome = ("**a failed check: worse than " + ", ".join(f"`{b}`" for b in result.worse) + "**" if result.worse
               else "**passed**")
    return (f"**Gauntlet `{candidate}`** ({game}): {outcome}\n\n"
            f"{caption(candidate, result.confidence)}\n\n"
            f"{versus_table(candidate, rows, result.confidence, tablefmt='github')}\n\n"
            f"verdict: {result.text}\n"
            + (f"\n{on_pool['text']}\n" if on_pool is not None else ""))
