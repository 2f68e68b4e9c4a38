"""The competition as typed values: a bot's spec and its limits, where matches are played, and a
tournament's settings as the tournament file gives them (read by :mod:`referee.competition.config`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.model.modes import Absent, BotProtocol, ExecutorKind, Isolation, Release, SandboxMode, ScheduleKind
from referee.model.rules import Rule
from referee.model.teams import ALLOW_KEY, Teams
from referee.runner import Clock

BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")


class ConfigError(ValueError):
    """A tournament file that cannot be used; the message names where and why."""


@dataclass(frozen=True)
class ExecutorSpec:
    """Where a run's matches are played (the ``[executor]`` table, ``--executor``/``--address``).

    ``local``: a referee in this process. ``ray``: match workers on the Ray cluster at
    ``address`` (None: an embedded one on this machine), each reserving ``cpus`` CPUs (None: one
    per seat of the game), bots' files shipped from ``working_dir`` if given. Not part of a run's
    fingerprint: a run started with one executor resumes with another."""

    kind: ExecutorKind = ExecutorKind.LOCAL
    address: str | None = None
    cpus: int | None = None
    working_dir: Path | None = None

    def overridden(self, kind: ExecutorKind | None, address: str | None) -> ExecutorSpec:
        """This one with the command line's ``--executor`` and ``--address`` (when given) in place;
        an address alone means ray."""
        if address is not None and kind is None:
            kind = ExecutorKind.RAY
        return replace(self, kind=kind or self.kind, address=address or self.address)


@dataclass(frozen=True)
class Limits:
    """What a launched bot may use (0 = no limit): CPU seconds per process; memory
    (the whole bot's where a cgroup can be made, and each process's address space);
    processes (and threads) of the whole bot; the largest file it writes (and the
    size of its scratch); open files per process; log bytes kept; restarts before
    it is skipped. :mod:`referee.hosting.sandbox` says how each is enforced."""

    cpu_seconds: int = 3600
    memory_mb: int = 4096
    processes: int = 256
    file_mb: int = 256
    open_files: int = 1024
    log_kb: int = 1024
    max_restarts: int = 3
    #: the limits its tournament file writes (in [limits] or its [[bots]] table): a run must hold them as
    #: written, or say it cannot and stop (:func:`referee.hosting.sandbox.check_bounded`)
    written: tuple[str, ...] = field(default=(), compare=False)
    #: ``[limits] accept_per_process``: whole-bot limits (:data:`PER_PROCESS`) the organiser accepts to see
    #: hold per process only, where no cgroup can hold the whole bot
    accept_per_process: tuple[str, ...] = field(default=(), compare=False)


#: the limits that hold for a bot's whole process tree where the runner can (a cgroup, a uid of its own)
PER_PROCESS = ("memory_mb", "processes")


@dataclass(frozen=True)
class BotSpec:
    name: str
    command: tuple[str, ...] = ()
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    external: bool = False
    token: str | None = None
    limits: Limits = Limits()
    #: "grpc": the bot connects itself; "stdio": through the stdio relay (referee/hosting/stdio.py)
    protocol: BotProtocol = BotProtocol.GRPC
    #: ``withdrawn = true``: out of the competition (its matches are not played, its results not counted)
    withdrawn: bool = False
    #: what its version covers, relative to ``cwd``: files, directories, glob patterns (empty: all of cwd)
    files: tuple[str, ...] = ()
    #: what its version leaves out of those (build products, caches): the same kind of patterns
    exclude: tuple[str, ...] = ()
    #: what it may read besides its ``cwd``: absolute paths, resolved (docs/tournaments.md, paths.py)
    data: tuple[str, ...] = ()
    #: its author or team (``team = "..."``): no two entries of one team sit at one table (:mod:`.teams`)
    team: str | None = None


@dataclass(frozen=True)
class PoolSpec:
    """A reference pool a run includes (``[pool]`` in its file; docs/pool.md): the pool file's path,
    its content as read and checked (:mod:`referee.results.pool`: the JSON of the file, so that a
    results directory keeps the scale its ratings are on), and the names of its bots that join the
    run as entries (the file's ``bots``, in the pool's order)."""

    file: Path
    content: Mapping[str, Any]
    bots: tuple[str, ...]

    def describe(self) -> dict[str, Any]:
        return {"file": str(self.file), "bots": list(self.bots), "content": dict(self.content)}


@dataclass(frozen=True)
class TournamentConfig:
    game: str
    options: dict[str, Any]
    bots: tuple[BotSpec, ...]
    deal_sets: int
    seed: int
    clock: Clock
    concurrency: int
    output: Path
    max_groups: int = 70
    source: Path | None = None
    sandbox: SandboxMode = SandboxMode.AUTO
    #: "tournament": a bot's processes live through the run; "match": a fresh one for every match
    isolation: Isolation = Isolation.TOURNAMENT
    #: the file gave no seed: this one was drawn from the system's entropy (128 bits), and stays
    #: secret until the run ends (the store keeps it, so that a rerun resumes with it)
    seed_drawn: bool = False
    #: when a match's record reaches the referee's spectators: once its deal set is over, or at the end
    release: Release = Release.DEAL_SET
    #: seconds every bot has to be running and connected, before the first match and after a restart
    startup_s: float = 30.0
    executor: ExecutorSpec = ExecutorSpec()
    #: what the report and the live page are titled and say about the tournament (None: not given)
    title: str | None = None
    description: str | None = None
    #: an entry not running and connected within startup_s: "stop" the run, or "withdraw" the entry
    absent: Absent = Absent.STOP
    #: the deal sets a directory added after its drawn seed was released, dealt from new secret seeds:
    #: ``(first deal set, seed)`` each (kept in the store; :func:`referee.competition.run.with_stored_seed`)
    later_seeds: tuple[tuple[int, int], ...] = ()
    #: the deal sets retired because they may have been seen while a match was still to be dealt from
    #: them: the schedule skips them (kept in the store; :func:`referee.competition.run.keep_deals_secret`)
    retired: tuple[int, ...] = ()
    #: "round-robin": every table on each of ``deal_sets`` deal sets; "adaptive": deal set after deal set,
    #: the tables chosen where the ranking is least certain, until ``rule`` (:mod:`.adaptive`); then
    #: ``deal_sets`` is the rule's cap, ``max_deal_sets``
    schedule: ScheduleKind = ScheduleKind.ROUND_ROBIN
    rule: Rule = Rule()
    #: ``allow_team_tables = true``: team-mates may share tables where the schedule cannot keep them apart
    allow_team_tables: bool = False
    #: ``[pool]``: a reference pool whose bots join the run and whose scale its ratings are on (None: none)
    pool: PoolSpec | None = None

    @property
    def entries(self) -> list[str]:
        """The names of the bots in the competition: every ``[[bots]]`` table not ``withdrawn``."""
        return [b.name for b in self.bots if not b.withdrawn]

    @property
    def teams(self) -> Teams:
        """Who plays for whom: each bot's declared team, and whether team-mates may share tables."""
        return Teams({b.name: b.team for b in self.bots if b.team is not None}, self.allow_team_tables)

    def seed_text(self) -> str:
        """The seed, as a run announces it before playing: a drawn one is not shown yet."""
        if self.seed_drawn:
            return "seed drawn from the system's entropy (128 bits; printed at the end)"
        return f"seed {self.seed} (given: anyone who knows or guesses it can compute every deal)"

    def fingerprint(self) -> str:
        """What must not change in an existing output directory: what shapes every match's
        results or which of them count (not concurrency, output or commands). The entries, the
        deal sets and max_groups may grow (:mod:`referee.competition.growth`)."""
        essence = {
            "game": self.game, "options": self.options, "seed": self.seed,
            "clock": [self.clock.decision_s, self.clock.bank_s], "isolation": self.isolation, "absent": self.absent,
            "schedule": self.schedule,
        }
        return json.dumps(essence, sort_keys=True)

    def fingerprint_hash(self) -> str:
        return hashlib.sha256(self.fingerprint().encode()).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        return {
            "game": self.game, "options": self.options, "deal_sets": self.deal_sets, "seed": self.seed,
            "concurrency": self.concurrency, "max_groups": self.max_groups, "isolation": self.isolation,
            "absent": self.absent, **self._adaptive(),
            **({ALLOW_KEY: True} if self.allow_team_tables else {}),
            "clock": {"decision_ms": round(self.clock.decision_s * 1000), "bank_ms": round(self.clock.bank_s * 1000)},
            "bots": [{k: v for k, v in asdict(b).items() if v not in (None, (), {}, False)} for b in self.bots],
            "seed_drawn": self.seed_drawn,
            **({"later_seeds": [list(pair) for pair in self.later_seeds]} if self.later_seeds else {}),
            **({"retired": list(self.retired)} if self.retired else {}),
            **publication(self.title, self.description),
            **({"pool": self.pool.describe()} if self.pool is not None else {}),
        }


    def with_deals(self, stored: Mapping[str, Any]) -> TournamentConfig:
        """This configuration with the deals a results directory holds now, from its ``stored``
        description (:meth:`describe`): the later seeds and the retired deal sets (a run may add
        to both while it plays: :func:`referee.competition.run.keep_deals_secret`)."""
        return replace(self, later_seeds=tuple((int(a), int(b)) for a, b in stored.get("later_seeds", [])),
                                   retired=tuple(int(k) for k in stored.get("retired", [])))

    def _adaptive(self) -> dict[str, Any]:
        """An adaptive tournament's keys, for its description (none for a round robin)."""
        if self.schedule != ScheduleKind.ADAPTIVE:
            return {}
        return {"schedule": self.schedule, "stop": self.rule.name, "confidence": self.rule.confidence,
                "max_deal_sets": self.rule.max_deal_sets, "tie_elo": self.rule.tie_elo,
                **({"plan_ahead": self.rule.ahead} if self.rule.ahead > 1 else {}),
                **({"plan_fill": True} if self.rule.fill else {})}

    @property
    def adaptive(self) -> bool:
        return self.schedule == ScheduleKind.ADAPTIVE


def publication(title: str | None, description: str | None) -> dict[str, str]:
    """The title and description a configuration gives (for its store's ``config``), those it has."""
    return {k: v for k, v in (("title", title), ("description", description)) if v is not None}
