"""A competition that runs itself: its file, its phases, and the tournaments its coordinator plays.

A competition file is a tournament file (``[tournament]``, ``[clock]``, ``[limits]``, ``[pool]``,
``[executor]``) with four more tables; its ``[[bots]]`` are the **house bots**, every new version's
opponents in its validation match::

    [competition]
    title = "Aegis winter ladder"
    state = "state"                     # the server's directory: its store, the versions, the results
    deadline = 2027-01-31T18:00:00Z     # uploads end, the versions freeze (optional: the organiser freezes)

    [ladder]
    deal_sets_per_round = 4             # a round: the adaptive planner's next deal sets, chosen at once
    confidence = 0.99                   # the planner looks where the order is less certain than this
    fault_count = 50                    # a version over both is stopped, with the reason shown its owner
    fault_share = 0.10

    [finals]
    stop = "top:3"                      # or "order": the stated rule, at its confidence, with its cap
    confidence = 0.95
    max_deal_sets = 200

    [uploads]
    upload_mb = 20                      # the file as received
    unpacked_mb = 100                   # its files once unpacked
    files = 2000
    depth = 12
    per_hour = 10                       # uploads per entrant per hour
    build_s = 300                       # the build's time cap

The coordinator (``referee/server``) plays three kinds of tournament through the competition service
(:mod:`referee.competition.service`), each built here from the file and the contenders:
:func:`validation_config` (a gauntlet: a new version against each house bot, every seat, one deal set),
:func:`ladder_config` (the adaptive planner over the accepted versions, one round at a time) and
:func:`finals_config` (the frozen versions on fresh deal sets from a new secret seed, until the
stated rule).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from referee.competition import config as tconfig
from referee.competition.gauntlet import GauntletConfig
from referee.model import Absent, BotProtocol, ConfigError, Lineup, TournamentConfig
from referee.model.rules import Rule, RuleError
from referee.results.store import MatchRow


class Phase(StrEnum):
    """A competition's life: in this order, one step at a time."""

    DRAFT = "draft"      # set up: entrants may register; no upload yet
    OPEN = "open"        # uploads, builds, validation, the ladder
    FROZEN = "frozen"    # the deadline passed: uploads refused, each entry's latest accepted version frozen
    FINALS = "finals"    # the frozen versions on fresh deal sets, until the stated rule
    CLOSED = "closed"    # results, replays and the seeds released


#: the phase each may move to
NEXT: Mapping[Phase, Phase | None] = {Phase.DRAFT: Phase.OPEN, Phase.OPEN: Phase.FROZEN,
                                      Phase.FROZEN: Phase.FINALS, Phase.FINALS: Phase.CLOSED,
                                      Phase.CLOSED: None}


class PhaseError(ValueError):
    """A phase change the competition's life does not allow (the message says which may follow)."""


def check_move(now: Phase, to: Phase) -> None:
    if NEXT[now] != to:
        follows = f"only {NEXT[now]} follows" if NEXT[now] else "it is the last phase"
        raise PhaseError(f"the competition is {now}: it cannot move to {to} ({follows})")


@dataclass(frozen=True)
class LadderRules:
    deal_sets_per_round: int = 4
    confidence: float = 0.99
    tie_elo: float = 0.0
    fault_count: int = 50
    fault_share: float = 0.10
    #: a round's deal sets filled with tables until their matches keep every match slot busy (``plan_fill``)
    fill: bool = True


@dataclass(frozen=True)
class UploadRules:
    upload_bytes: int = 20 << 20
    unpacked_bytes: int = 100 << 20
    files: int = 2000
    depth: int = 12
    per_hour: int = 10
    build_s: int = 300


@dataclass(frozen=True)
class Contender:
    """An entry's version as the competition plays it: its name, team, command and protocol, and the
    directory it runs in (its unpacked, built version); ``withdrawn``: out (no version accepted now,
    disabled, stopped), kept in the file because it may have matches stored."""

    name: str
    team: str | None
    command: tuple[str, ...]
    protocol: BotProtocol
    cwd: Path
    withdrawn: bool = False

    def table(self) -> dict[str, Any]:
        """As a ``[[bots]]`` table."""
        table: dict[str, Any] = {"name": self.name, "command": list(self.command), "cwd": str(self.cwd),
                                 "protocol": str(self.protocol)}
        if self.team:
            table["team"] = self.team
        if self.withdrawn:
            table["withdrawn"] = True
        return table


@dataclass(frozen=True)
class CompetitionSpec:
    """A competition file, read and checked."""

    path: Path
    title: str
    state: Path
    deadline: dt.datetime | None
    ladder: LadderRules
    finals: Rule
    uploads: UploadRules
    #: the file as a tournament file: its [tournament], [clock], [limits], [pool], [executor] and house bots
    file: tconfig.ConfigFile
    #: the house bots' tournament (checked: they start the way a tournament's bots do)
    house: TournamentConfig

    @property
    def game(self) -> str:
        return self.house.game

    def past_deadline(self, now: dt.datetime | None = None) -> bool:
        now = now or dt.datetime.now(dt.UTC)
        return self.deadline is not None and now >= self.deadline


_TOP = {"competition", "ladder", "finals", "uploads"}
_COMPETITION = {"title", "state", "deadline"}
_LADDER = {"deal_sets_per_round", "confidence", "tie_elo", "fault_count", "fault_share", "fill"}
_FINALS = {"stop", "confidence", "max_deal_sets", "tie_elo"}
_UPLOADS = {"upload_mb", "unpacked_mb", "files", "depth", "per_hour", "build_s"}
#: what the coordinator decides for every tournament it plays: a competition file may not set them
_SET_HERE = {"schedule", "stop", "confidence", "max_deal_sets", "tie_elo", "deal_sets", "output", "absent",
             "plan_ahead", "plan_fill"}


def load(path: str | Path) -> CompetitionSpec:
    """A competition file, or a ConfigError (one line, naming the key and its line)."""
    loc = tconfig.read(path)
    data = dict(loc.data)
    tables = {name: data.pop(name, {}) for name in _TOP}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise loc.error(f"[{name}] must be a table", name)
    if not loc.data.get("competition"):
        raise loc.error("missing [competition] table (with at least title = \"...\")")
    loc.check_keys(tables["competition"], _COMPETITION, "competition")
    loc.check_keys(tables["ladder"], _LADDER, "ladder")
    loc.check_keys(tables["finals"], _FINALS, "finals")
    loc.check_keys(tables["uploads"], _UPLOADS, "uploads")
    t = data.get("tournament")
    if isinstance(t, dict):
        for key in sorted(_SET_HERE & set(t)):
            raise loc.error(f"tournament.{key}: a competition's coordinator sets it (the ladder is adaptive, the "
                            f"finals follow [finals]); leave it out", "tournament", key)
    c = tables["competition"]
    title = c.get("title")
    if not isinstance(title, str) or not title.strip() or len(title) > tconfig.TITLE_MAX or \
            any(ord(ch) < 32 or 0x7f <= ord(ch) <= 0x9f for ch in title):
        raise loc.error(f"competition.title must be one line of text, at most {tconfig.TITLE_MAX} characters",
                        "competition", "title")
    state = c.get("state", "state")
    if not isinstance(state, str) or not state:
        raise loc.error("competition.state must be a directory path", "competition", "state")
    deadline = c.get("deadline")
    if deadline is not None:
        if not isinstance(deadline, dt.datetime) or deadline.tzinfo is None:
            raise loc.error("competition.deadline must be a date and time with its offset, e.g. "
                            "2027-01-31T18:00:00Z", "competition", "deadline")
    state_dir = (loc.path.parent / state).resolve()
    house_data = {**data, "tournament": {**(t if isinstance(t, dict) else {}),
                                         "output": str(state_dir / "house"), "deal_sets": 1}}
    house = tconfig.parse(dataclasses.replace(loc, data=house_data))
    return CompetitionSpec(loc.path, title.strip(), state_dir, deadline, _ladder(loc, tables["ladder"]),
                           _finals(loc, tables["finals"]), _uploads(loc, tables["uploads"]), dataclasses.replace(
                               loc, data=data), house)


def _number(loc: tconfig.ConfigFile, table: str, key: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise loc.error(f"{table}.{key} must be a number from {low:g} to {high:g}, got {value!r}", table, key)
    return float(value)


def _ladder(loc: tconfig.ConfigFile, t: dict[str, Any]) -> LadderRules:
    d = LadderRules()
    return LadderRules(loc.integer("ladder", "deal_sets_per_round", t.get("deal_sets_per_round", d.deal_sets_per_round),
                                   1, maximum=100),
                       _number(loc, "ladder", "confidence", t.get("confidence", d.confidence), 0.5, 0.999999),
                       _number(loc, "ladder", "tie_elo", t.get("tie_elo", d.tie_elo), 0, 1000),
                       loc.integer("ladder", "fault_count", t.get("fault_count", d.fault_count), 1),
                       _number(loc, "ladder", "fault_share", t.get("fault_share", d.fault_share), 0, 1),
                       loc.flag("ladder", "fill", t.get("fill", d.fill)))


def _finals(loc: tconfig.ConfigFile, t: dict[str, Any]) -> Rule:
    stop = t.get("stop", "order")
    confidence = _number(loc, "finals", "confidence", t.get("confidence", 0.95), 0.5, 0.999999)
    cap = loc.integer("finals", "max_deal_sets", t.get("max_deal_sets", 200), 2, maximum=100_000)
    tie = _number(loc, "finals", "tie_elo", t.get("tie_elo", 0), 0, 1000)
    try:
        if not isinstance(stop, str):
            raise RuleError(f'must be "order" or "top:K" with K a whole number from 1, got {stop!r}')
        return Rule.parse(stop, confidence, cap, tie)
    except RuleError as err:
        raise loc.error(f"finals.stop {err}", "finals", "stop") from None


def _uploads(loc: tconfig.ConfigFile, t: dict[str, Any]) -> UploadRules:
    d = UploadRules()
    mb = 1 << 20
    return UploadRules(loc.integer("uploads", "upload_mb", t.get("upload_mb", d.upload_bytes // mb), 1,
                                   maximum=4096) * mb,
                       loc.integer("uploads", "unpacked_mb", t.get("unpacked_mb", d.unpacked_bytes // mb), 1,
                                   maximum=16384) * mb,
                       loc.integer("uploads", "files", t.get("files", d.files), 1, maximum=1_000_000),
                       loc.integer("uploads", "depth", t.get("depth", d.depth), 1, maximum=64),
                       loc.integer("uploads", "per_hour", t.get("per_hour", d.per_hour), 1),
                       loc.integer("uploads", "build_s", t.get("build_s", d.build_s), 1, maximum=86400))


# --- the tournaments the coordinator plays -------------------------------------------


def _tournament(spec: CompetitionSpec, bots: Sequence[dict[str, Any]], output: Path, extra: Mapping[str, Any],
                pool: bool) -> TournamentConfig:
    data = dict(spec.file.data)
    data["tournament"] = {**data.get("tournament", {}), **extra, "output": str(output)}
    data["bots"] = list(bots)
    if not pool:
        data.pop("pool", None)
    return tconfig.parse(dataclasses.replace(spec.file, data=data))


def validation_config(spec: CompetitionSpec, candidate: Contender, output: Path) -> GauntletConfig:
    """A new version against the house bots: a gauntlet of one deal set, the candidate against each house
    bot in every seat rotation (so it sits in every seat; no match between house bots, which would tell
    nothing of it), its bots withdrawn rather than the run stopped when one does not start (the outcome
    says so)."""
    house = [b for b in spec.file.data.get("bots", []) if not b.get("withdrawn")]
    config = _tournament(spec, [candidate.table(), *house], output,
                         {"deal_sets": 1, "absent": "withdraw", "title": f"validation of {candidate.name}"},
                         pool=False)
    return GauntletConfig(config, candidate.name, Lineup.DUEL)


def ladder_config(spec: CompetitionSpec, contenders: Sequence[Contender], deal_sets: int,
                  absent: Absent = Absent.WITHDRAW) -> TournamentConfig:
    """The ladder's tournament up to ``deal_sets`` deal sets: adaptive over the contenders in play
    (with the [pool]'s bots, if any, on whose scale the ratings are), its rule never met by design
    short of settled pairs (``[ladder] confidence``), the contenders that do not start withdrawn
    (``absent``: on an executor that cannot withdraw one, "stop": the coordinator stops its version)."""
    return _tournament(spec, [c.table() for c in contenders], spec.state / "ladder",
                       {"schedule": "adaptive", "stop": "order", "confidence": spec.ladder.confidence,
                        "tie_elo": spec.ladder.tie_elo, "max_deal_sets": max(2, deal_sets), "absent": str(absent),
                        "plan_ahead": spec.ladder.deal_sets_per_round, "plan_fill": spec.ladder.fill},
                       pool=True)


def finals_config(spec: CompetitionSpec, contenders: Sequence[Contender],
                  absent: Absent = Absent.WITHDRAW) -> TournamentConfig:
    """The finals: the frozen versions, adaptive until the stated rule or its cap, on deal sets from a
    new secret seed (drawn here, kept by the finals' store until it releases it)."""
    rule = spec.finals
    extra: dict[str, Any] = {"schedule": "adaptive", "stop": rule.name, "confidence": rule.confidence,
                             "tie_elo": rule.tie_elo, "max_deal_sets": rule.max_deal_sets, "absent": str(absent),
                             "plan_ahead": _finals_ahead(spec),
                             "title": f"{spec.title}: finals"}
    t = dict(spec.file.data.get("tournament", {}))
    t.pop("seed", None)  # the finals' seed is always a new secret one
    data = {**spec.file.data, "tournament": t}
    return _tournament(dataclasses.replace(spec, file=dataclasses.replace(spec.file, data=data)),
                       [c.table() for c in contenders], spec.state / "finals", extra, pool=True)


def _finals_ahead(spec: CompetitionSpec) -> int:
    """The finals' deal sets chosen at once: as many as matches play at once (the rule looked at between)."""
    return max(1, min(64, spec.house.concurrency))


def in_play(contenders: Iterable[Contender]) -> list[Contender]:
    return [c for c in contenders if not c.withdrawn]


def rerun_of(recorded: Mapping[str, Any], contenders: Iterable[Contender]) -> tuple[str, ...]:
    """The contenders whose version (its directory) differs from the one a store recorded: their
    stored matches are dropped (a new version starts with no rating; its history row stays)."""
    changed = []
    for c in contenders:
        before = recorded.get(c.name)
        if not c.withdrawn and isinstance(before, Mapping) and before.get("cwd") not in (None, str(c.cwd.resolve())):
            changed.append(c.name)
    return tuple(changed)


def faults_by_entry(rows: Iterable[MatchRow]) -> dict[str, tuple[int, int, int]]:
    """Each entry's (faults, matches with a fault, matches) over the stored matches."""
    out: dict[str, list[int]] = {}
    for row in rows:
        for seat, name in enumerate(row.lineup):
            counts = (row.results.get("faults") or [{}] * len(row.lineup))[seat]
            n = sum(int(v) for v in counts.values())
            tally = out.setdefault(name, [0, 0, 0])
            tally[0] += n
            tally[1] += 1 if n else 0
            tally[2] += 1
    return {name: (t[0], t[1], t[2]) for name, t in out.items()}


def fault_stop(rules: LadderRules, faults: int, faulty: int, matches: int) -> str | None:
    """Why a version is stopped (None: it plays on): over ``fault_count`` faults and over
    ``fault_share`` of its matches with a fault."""
    if faults > rules.fault_count and matches and faulty / matches > rules.fault_share:
        return (f"{faults} faults in {faulty} of its {matches} ladder matches (over {rules.fault_count} faults "
                f"and over {rules.fault_share:.0%} of its matches): stopped; upload a fixed version")
    return None


def validation_failures(rows: Iterable[MatchRow], candidate: str) -> list[str]:
    """What failed a validation: each match in which the candidate faulted (any fault fails it)."""
    failures = []
    for row in rows:
        for seat, name in enumerate(row.lineup):
            if name != candidate:
                continue
            counts = (row.results.get("faults") or [{}] * len(row.lineup))[seat]
            bad = {k: v for k, v in counts.items() if v}
            if bad:
                failures.append(f"match {row.key} (seat {seat}): " +
                                ", ".join(f"{n} {kind}" for kind, n in sorted(bad.items())))
    return failures


def check_deadline(value: str) -> dt.datetime:
    """A deadline as the organiser types it (ISO 8601 with its offset)."""
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"deadline {value!r}: not a date and time (ISO 8601, e.g. 2027-01-31T18:00:00Z)") from None
    if when.tzinfo is None:
        raise ConfigError(f"deadline {value!r}: give its offset (e.g. Z or +01:00)")
    return when
