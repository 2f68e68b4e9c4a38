"""The coordinator: the one process that owns a competition's stores and plays its tournaments.

It takes submissions (an upload becomes a content-addressed version: :mod:`referee.hosting.uploads`),
checks each in turn (its build, then its validation match against the house bots), and while the
competition is open plays the ladder round after round through the competition service
(:func:`referee.competition.service.run_tournament`, the same as ``referee tournament``): the
adaptive planner over the latest accepted version of each entry, new versions first. At the
deadline it freezes the versions; in the finals it plays them on fresh deal sets until the stated
rule. Every result goes through the run's store as for any tournament: saved once, each match as it
ends, its record replayed through the engine first (:func:`referee.competition.run.verified`).

Checks and rounds run in threads of their own (each a blocking call into the service), one check
at a time and one round at a time; the web routes (:mod:`referee.server.app`) only read what the
coordinator keeps (:class:`Board`) and write rows.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import shutil
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.competition import ladder, service
from referee.competition.ladder import CompetitionSpec, Contender, Phase
from referee.competition.run import Progress
from referee.files import WriteFailed
from referee.hosting import build as tbuild
from referee.hosting import uploads
from referee.hosting.launcher import tail_of
from referee.model import (
    Absent,
    BotProtocol,
    ConfigError,
    EntryStatus,
    ExecutorKind,
    ExecutorSpec,
    Schedule,
    TournamentConfig,
)
from referee.play.executors import BotsNotReady, ClusterError
from referee.results import standings
from referee.results.standings import Standings
from referee.results.store import DB_NAME, Store, StoreError
from referee.server.db import ServerDB, Setting, Status, Submission
from referee.untrusted import escaped

log = logging.getLogger("referee.server")

#: the server's own files in the state directory (its store, the organiser's secrets, uploads on their way in):
#: never shown to a build or a bot
PRIVATE = "server"
#: a check's lease: a coordinator killed mid-check leaves it to run out, then the check starts again
LEASE_S = 3600.0
#: uploads and matches stop below this much free disk (bytes) in the state directory
MIN_FREE = 64 << 20
#: the host is overloaded (scheduling pauses, no bot is charged for it) above this CPU pressure (some avg10, %)
PRESSURE_PAUSE = 60.0


class Refused(ValueError):
    """An upload or a request refused: one line, for the entrant."""


@dataclass
class Board:
    """What the coordinator is doing, as the pages show it: each field set whole by the coordinator's threads
    (a reference assigned at once), only read by the routes."""

    ladder: str = "not started"
    rounds: int = 0
    standings: Standings | None = None
    finals: str = "not started"
    finals_standings: Standings | None = None
    checking: str | None = None
    paused: str | None = None
    errors: list[str] = field(default_factory=list)


def _failure(name: str, status: str, why: str | None) -> str:
    """A line of a validation log for a bot out of the run: its name, its status, and why."""
    return f"{name}: {status}" + (f" ({why})" if why else "")


class Quiet:
    """The service's observer for a run nobody watches in a terminal: announcements to the log (and to
    ``say``, if given)."""

    def __init__(self, say: Callable[[str], None] | None = None, progress: Progress | None = None) -> None:
        self._say, self._progress = say, progress

    def say(self, line: str) -> None:
        if self._say is not None:
            self._say(line)
        log.info("%s", line)

    def started(self, config: TournamentConfig, out: set[str], schedule: Schedule) -> None:
        pass

    def playing(self, config: TournamentConfig, store: Store, schedule: Schedule) -> Progress:
        return self._progress or (lambda finished, total, played: None)

    def watch(self, arena: Any) -> None:
        pass

    def play(self, work: Coroutine[Any, Any, int]) -> int:
        return asyncio.run(work)


class Coordinator:
    def __init__(self, spec: CompetitionSpec, db: ServerDB, executor: ExecutorSpec | None = None,
                 pressure: Callable[[], float | None] | None = None) -> None:
        self.spec, self.db = spec, db
        self.executor = executor
        self.board = Board()
        self.pressure = pressure or cpu_pressure
        self.versions = spec.state / "versions"
        self.builds = spec.state / "builds"
        self.validations = spec.state / "validation"
        self._round_lock = threading.Lock()

    def load_board(self) -> None:
        """The standings as the stores hold them (at start: the pages show them before the next round)."""
        for scope in ("ladder", "finals"):
            out = self.spec.state / scope
            if not (out / DB_NAME).exists():
                continue
            store = Store(out, create=False)
            try:
                rows = list(store.matches())
                st = standings.of_store(store, rows, bootstrap=300) if rows else None
            finally:
                store.close()
            if scope == "ladder":
                self.board.standings = st
            else:
                self.board.finals_standings = st
        if self.db.setting(Setting.FINALS_DONE) is not None:
            done = json.loads(self.db.setting(Setting.FINALS_DONE) or "{}")
            stop = f"; {done['stop']}" if done.get("stop") else ""
            self.board.finals = f"done: {done.get('saved')} match(es){stop}"

    # --- submissions --------------------------------------------------------------

    def submit(self, name: str, upload: Path, filename: str, manifest: uploads.Manifest | None) -> Submission:
        """An entrant's upload, unpacked and queued for its check; :class:`Refused` (one line) when the
        competition takes none now, the entrant is over its hourly limit, the disk is short, or the
        upload is bad (:class:`referee.hosting.uploads.UploadRefused`)."""
        phase = self.db.phase()
        if phase != Phase.OPEN:
            raise Refused(f"uploads are closed: the competition is {phase}")
        if self.spec.past_deadline():  # before the coordinator's next look at the clock
            raise Refused(f"uploads are closed: the deadline ({self.spec.deadline}) has passed")
        user = self.db.user(name)
        if user is None or user.disabled:
            raise Refused(f"entrant {name} is disabled" + (f": {user.disabled}" if user and user.disabled else ""))
        rules = self.spec.uploads
        recent = self.db.uploads_since(name, time.time() - 3600)
        if len(recent) >= rules.per_hour:
            wait = int(recent[-rules.per_hour] + 3600 - time.time()) + 1
            raise Refused(f"at most {rules.per_hour} uploads an hour: the next one in {wait} s")
        self.check_disk()
        limits = uploads.UploadLimits(rules.upload_bytes, rules.unpacked_bytes, rules.files, rules.depth)
        try:
            unpacked = uploads.unpack(upload, filename, self.versions, limits, manifest)
        except uploads.UploadRefused as err:
            self.db.note_upload(name)
            raise Refused(str(err)) from None
        m = unpacked.manifest
        sid = self.db.add_submission(name, unpacked.version, str(unpacked.directory),
                                     {"command": list(m.command), "protocol": str(m.protocol),
                                      "build": list(m.build) if m.build else None,
                                      "files": unpacked.files, "bytes": unpacked.bytes})
        log.info("submission %d: %s uploaded version %s", sid, name, unpacked.version[:12])
        sub = self.db.submission(sid)
        assert sub is not None
        return sub

    def check_disk(self) -> None:
        self.spec.state.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(self.spec.state).free
        if free < MIN_FREE:
            raise Refused(f"the server's disk is full ({free >> 20} MB free): uploads are paused; the organiser "
                          f"has been told")

    def check_next(self) -> bool:
        """Check the oldest submission waiting (build, then validation); False when none waits."""
        sub = self.db.take_job(LEASE_S)
        if sub is None:
            return False
        self.board.checking = f"submission {sub.id} of {sub.name}"
        try:
            self._check(sub)
        except WriteFailed as err:
            self.db.job_step(sub.id, Status.QUEUED, 0)
            self.board.paused = f"disk full: {err}"
            raise
        except Exception as err:  # a fault of ours, not the entrant's: said, and the job left to its lease
            log.exception("check of submission %d", sub.id)
            self.db.job_done(sub.id, Status.FAILED, f"the server failed to check it ({type(err).__name__}); "
                             f"the organiser has been told")
            self.board.errors = [*self.board.errors[-9:], f"check {sub.id}: {type(err).__name__}: {err}"]
        finally:
            self.board.checking = None
        return True

    def _check(self, sub: Submission) -> None:
        built = self.built_dir(sub)
        build = sub.manifest.get("build")
        if build:
            if built.exists():  # a check cut short by a restart: again from the version
                tbuild.thaw(built)
                shutil.rmtree(built)
            built.parent.mkdir(parents=True, exist_ok=True)
            tbuild.copy_version(Path(sub.directory), built)
            result = tbuild.run_build(build, built, self.spec.uploads.build_s, self.spec.house.sandbox,
                                      hide=[self.spec.state / PRIVATE, self.spec.path])
            tbuild.freeze(built)
            if not result.ok:
                self.db.job_done(sub.id, Status.FAILED, "the build failed (see its log)", build_log=result.log)
                return
            self.db.job_step(sub.id, Status.VALIDATING, LEASE_S, build_log=result.log)
        else:
            self.db.job_step(sub.id, Status.VALIDATING, LEASE_S, build_log="(no build command)")
        self._validate(sub, self.play_dir(sub))

    def built_dir(self, sub: Submission) -> Path:
        return self.builds / str(sub.id)

    def play_dir(self, sub: Submission) -> Path:
        """Where a submission runs: its built copy, or its version when it has no build."""
        return self.built_dir(sub) if sub.manifest.get("build") else Path(sub.directory)

    def contender(self, sub: Submission, withdrawn: bool = False) -> Contender:
        user = self.db.user(sub.name)
        return Contender(sub.name, user.team if user else None, tuple(sub.manifest["command"]),
                         BotProtocol(sub.manifest.get("protocol", "grpc")), self.play_dir(sub), withdrawn)

    def _validate(self, sub: Submission, cwd: Path) -> None:
        out = self.validations / str(sub.id)
        if out.exists():  # a validation cut short: from the start (a fresh seed, a fresh directory)
            shutil.rmtree(out)
        try:
            trial = ladder.validation_config(self.spec, self.contender(sub), out)
            trial = replace(trial, tournament=self.prepared(trial.tournament, local=True))
            # what the run announces is the organiser's (the server's log: it names the server's files, and
            # quotes the logs of bots that did not start, house bots' among them); the entrant's log is made here
            outcome = service.run_gauntlet(service.GauntletRequest(trial, bootstrap=200), Quiet())
        except (ConfigError, StoreError) as err:
            self.db.job_done(sub.id, Status.FAILED, "it cannot be played (see the validation log)",
                             validation_log=escaped(str(err), one_line=True), validation_dir=str(out))
            return
        except BotsNotReady as err:  # the candidate did not start: no match is played without it
            failures = [_failure(name, EntryStatus.DID_NOT_START, why) for name, why in sorted(err.reasons.items())]
            self.db.job_done(sub.id, Status.FAILED, f"validation failed: {failures[0]}",
                             validation_log="\n".join([*failures, *self._own_log(out, sub.name)]),
                             validation_dir=str(out))
            return
        failures = [_failure(w.name, w.status, w.why) for w in outcome.withdrawn]
        for name, missed in outcome.incomplete.items():
            failures.append(f"{name}: did not play all its matches ({missed})")
        store = Store(out, create=False)
        try:
            rows = list(store.matches())
            failures += ladder.validation_failures(rows, sub.name)
            summary = [f"{len(rows)} validation match(es) against {', '.join(self.house_names())}"]
        finally:
            store.close()
        text = "\n".join([*summary, *failures, *self._own_log(out, sub.name)])
        if failures or not rows:
            self.db.job_done(sub.id, Status.FAILED, f"validation failed: {failures[0] if failures else 'no match'}",
                             validation_log=text, validation_dir=str(out))
        else:
            self.db.job_done(sub.id, Status.ACCEPTED, None, validation_log=text + "\nvalidated: no fault",
                             validation_dir=str(out))
            log.info("submission %d of %s accepted", sub.id, sub.name)

    def prepared(self, config: TournamentConfig, local: bool = False) -> TournamentConfig:
        """The configuration with its directory's seed (a drawn one is kept there) and the executor chosen
        (``local``: this machine's, whatever was chosen: a validation)."""
        chosen = ExecutorSpec() if local else self.executor
        return service.prepared(config, None if chosen is None else (lambda _: chosen))

    @property
    def absent(self) -> Absent:
        """What a ladder or finals bot that does not start costs: withdrawn (this machine), or the round
        stopped and its version stopped (an executor with one start-up check per worker: Ray)."""
        kind = (self.executor or self.spec.house.executor).kind
        return Absent.STOP if kind == ExecutorKind.RAY else Absent.WITHDRAW

    @staticmethod
    def _own_log(out: Path, name: str, lines: int = 80) -> list[str]:
        """The last lines of the candidate's own log in its validation (what it printed: a traceback, say),
        escaped; the house bots' logs are not its to read."""
        tail = tail_of(out / "logs" / f"{name}.log", lines)
        if tail is None:
            return []
        return [f"--- the last {len(tail)} line(s) of your bot's log in its validation ---", *tail]

    def house_names(self) -> list[str]:
        return [b.name for b in self.spec.house.bots if not b.withdrawn]

    # --- the ladder ---------------------------------------------------------------

    def contenders(self, frozen: bool = False) -> list[Contender]:
        """Every entrant that ever had a version accepted: its latest accepted (or frozen) version in
        play, or withdrawn (disabled, stopped: kept in the file, its matches stored)."""
        subs = self.db.submissions()
        latest = {s.name: s for s in self.db.frozen()} if frozen else self.db.latest_accepted()
        shown: dict[str, Contender] = {}
        for s in reversed(subs):  # oldest first
            if s.status in (Status.ACCEPTED, Status.STOPPED) or s.frozen:
                shown[s.name] = self.contender(s, withdrawn=True)
        for name, s in latest.items():
            user = self.db.user(name)
            shown[name] = self.contender(s, withdrawn=bool(user and user.disabled))
        return list(shown.values())

    def ladder_round(self) -> int:
        """One round of the ladder: the planner's next deal set(s) over the versions in play; returns
        how many matches it played."""
        with self._round_lock:
            contenders = self.contenders()
            playing = ladder.in_play(contenders)
            pool = len(self.spec.house.pool.bots) if self.spec.house.pool is not None else 0
            if len(playing) + pool < 2:
                self.board.ladder = "waiting: fewer than two entries with an accepted version"
                return 0
            out = self.spec.state / "ladder"
            recorded, dealt = _recorded(out)
            cap = dealt + self.spec.ladder.deal_sets_per_round
            config = ladder.ladder_config(self.spec, contenders, cap, self.absent)
            config = self.prepared(config)
            rerun = ladder.rerun_of(recorded, contenders)
            lines: list[str] = []
            self.board.ladder = f"playing round {self.board.rounds + 1} (deal sets up to {cap})"
            try:
                outcome = service.run_tournament(service.TournamentRequest(config, rerun=rerun, bootstrap=300),
                                                 Quiet(lines.append))
            except BotsNotReady as err:  # absent = "stop": each bot that did not start is stopped, the rest play on
                self._not_started(err)
                return 0
            self.board.rounds += 1
            if outcome.standings is not None:
                self.board.standings = outcome.standings
            self._stop_faulty(out, contenders)
            settled = outcome.stop is not None and outcome.played == 0
            self.board.ladder = (f"round {self.board.rounds}: {outcome.played} match(es) played, "
                                 f"{outcome.saved} stored" + ("; the order is settled: waiting for a new version"
                                                              if settled else ""))
            return outcome.played

    def _not_started(self, err: BotsNotReady) -> None:
        latest = self.db.latest_accepted()
        for name, why in err.reasons.items():
            if name in latest:
                self.db.stop(latest[name].id, f"it did not start on the ladder: {escaped(why, one_line=True)}")
        self.board.ladder = f"round {self.board.rounds + 1}: not played: {escaped(str(err), one_line=True)}"

    def _stop_faulty(self, out: Path, contenders: list[Contender]) -> None:
        store = Store(out, create=False)
        try:
            tallies = ladder.faults_by_entry(store.matches())
        finally:
            store.close()
        latest = self.db.latest_accepted()
        for c in ladder.in_play(contenders):
            if c.name in tallies and c.name in latest:
                why = ladder.fault_stop(self.spec.ladder, *tallies[c.name])
                if why is not None:
                    self.db.stop(latest[c.name].id, why)
                    log.info("%s: version %s stopped: %s", c.name, latest[c.name].short, why)

    # --- the phases ---------------------------------------------------------------

    def move(self, to: Phase) -> None:
        """The organiser moves the competition on (one step; :class:`ladder.PhaseError` otherwise)."""
        now = self.db.phase()
        ladder.check_move(now, to)
        if to == Phase.FINALS:
            frozen = ladder.in_play(self.contenders(frozen=True))
            if len(frozen) < 2 + (self.spec.finals.top or 0) - (1 if self.spec.finals.top else 0):
                raise ladder.PhaseError(f"the finals need at least {max(2, (self.spec.finals.top or 1) + 1)} "
                                        f"frozen entries, there are {len(frozen)}")
        if to == Phase.CLOSED and self.board.finals.startswith("playing"):
            raise ladder.PhaseError("the finals are still being played: close when they end")
        with self._round_lock:  # a round in progress ends first
            if to == Phase.FROZEN:
                frozen_subs = self.db.freeze()
                log.info("frozen: %s", ", ".join(f"{s.name} {s.short}" for s in frozen_subs) or "no entry")
            self.db.set_setting(Setting.PHASE, to)
            self.db.set_setting(Setting.MOVED, dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), suffix=to)

    def finals(self) -> None:
        """Play the finals to their rule (or cap); resumable after a restart."""
        contenders = self.contenders(frozen=True)
        config = ladder.finals_config(self.spec, contenders, self.absent)
        config = self.prepared(config)
        self.board.finals = "playing"
        lines: list[str] = []
        outcome = service.run_tournament(service.TournamentRequest(config, bootstrap=1000), Quiet(lines.append))
        self.board.finals_standings = outcome.standings
        stop = outcome.stop.text if outcome.stop is not None else None
        self.board.finals = f"done: {outcome.saved} match(es)" + (f"; {stop}" if stop else "")
        self.db.set_setting(Setting.FINALS_DONE, json.dumps({"saved": outcome.saved, "stop": stop}))

    # --- the loop -----------------------------------------------------------------

    async def run(self, stopping: asyncio.Event, idle_s: float = 1.0) -> None:
        """Check submissions and play the ladder (or the finals) until ``stopping`` is set."""
        incoming = self.versions / uploads.INCOMING
        if incoming.exists():  # uploads a killed server was unpacking: never versions
            tbuild.thaw(incoming)
            shutil.rmtree(incoming, ignore_errors=True)
        again = self.db.requeue_running()
        if again:
            log.info("%d check(s) cut short by the last stop: checked again from the start", again)
        checks = asyncio.create_task(self._checks(stopping, idle_s))
        try:
            while not stopping.is_set():
                try:
                    played = await asyncio.to_thread(self._step)
                except Exception as err:  # a fault of ours: said, logged, and the loop goes on after a pause
                    log.exception("the coordinator's step")
                    self.board.errors = [*self.board.errors[-9:], f"{type(err).__name__}: "
                                         f"{escaped(str(err), one_line=True)}"]
                    played = 0
                    await _sleep(stopping, 10 * idle_s)
                if not played:
                    await _sleep(stopping, idle_s)
        finally:
            await checks

    async def _checks(self, stopping: asyncio.Event, idle_s: float) -> None:
        while not stopping.is_set():
            try:
                did = await asyncio.to_thread(self.check_next)
            except WriteFailed:
                did = False
            if not did:
                await _sleep(stopping, idle_s)

    def _step(self) -> int:
        phase = self.db.phase()
        if phase == Phase.OPEN and self.spec.past_deadline():
            self.move(Phase.FROZEN)
            return 0
        try:
            self.check_disk()
        except Refused as err:
            self.board.paused = str(err)
            return 0
        load = self.pressure()
        if load is not None and load > PRESSURE_PAUSE:
            self.board.paused = (f"the host is overloaded (CPU pressure {load:.0f}%): scheduling paused, so that no "
                                 f"bot is charged a timeout for it")
            return 0
        self.board.paused = None
        try:
            if phase == Phase.OPEN:
                return self.ladder_round()
            if phase == Phase.FINALS and self.db.setting(Setting.FINALS_DONE) is None:
                self.finals()
                return 1
        except WriteFailed as err:
            self.board.paused = f"disk full: {err} (what was stored is kept; it resumes once there is room)"
        except ClusterError as err:  # a lost node, a worker that did not start: what was stored stays; next round
            self.board.errors = [*self.board.errors[-9:], escaped(str(err), one_line=True)]
            log.warning("the executor failed this round (it is tried again): %s", err)
        except (ConfigError, StoreError, BotsNotReady) as err:  # the organiser's to fix: said on its page
            self.board.errors = [*self.board.errors[-9:], escaped(str(err), one_line=True)]
            log.error("%s", err)
        return 0


async def _sleep(stopping: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stopping.wait(), seconds)
    except TimeoutError:
        pass


def _recorded(out: Path) -> tuple[dict[str, Any], int]:
    """A results directory's recorded versions and deal sets dealt (none yet: empty, 0)."""
    if not (out / DB_NAME).exists():
        return {}, 0
    store = Store(out, create=False)
    try:
        return store.recorded_versions(), store.deal_sets_dealt()
    finally:
        store.close()


def cpu_pressure() -> float | None:
    """The host's CPU pressure (``some avg10``, %), or None where the kernel does not say."""
    try:
        text = Path("/proc/pressure/cpu").read_text()
    except OSError:
        return None
    for part in text.split():
        if part.startswith("avg10="):
            try:
                return float(part[6:])
            except ValueError:
                return None
    return None

