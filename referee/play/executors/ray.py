"""The Ray executor: matches played by long-lived match workers (Ray actors) across the nodes of
a Ray cluster, or of an embedded one on this machine (docs/scaling.md).

Each :class:`MatchWorker` owns what a :class:`~referee.play.executors.LocalExecutor` owns in
this process: a referee server and the launched bots (in their sandbox, when there is one), and
plays one match at a time. It reserves ``cpus`` CPUs of its node (by default one per seat of the
game), so that the bots of the matches playing at once never share a core. The driver (this
process) hands each match to an idle worker and is the only writer of the store. A worker that
dies (its process, or its node) takes no result with it: its match is played again by another
worker, under the same match id, and recorded once, when its result arrives.

Ray is an optional extra (``pip install 'referee[ray]'``): it is imported only here, when a run
asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import shutil
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Self

from referee import games
from referee.hosting import paths, sandbox
from referee.hosting.launcher import BotStatus
from referee.hosting.versions import Snapshots
from referee.model import Absent, BotSpec, ConfigError, ExecutorSpec, Isolation, Played, SandboxMode, Seating
from referee.play.executors.base import BotsDead, Executor, game_id_of
from referee.play.executors.local import LocalExecutor
from referee.runner import Clock

INSTALL = "pip install 'referee[ray]'"
#: how long a match worker may take to start (a Ray worker process, then its bots)
START_TIMEOUT = 120.0
#: how long the run waits for a new worker when every worker has died
REPLACE_TIMEOUT = 120.0
#: the embedded cluster's object store: matches' results and records are small
EMBEDDED_OBJECT_STORE = 100 * 1024 * 1024

log = logging.getLogger(__name__)


class ClusterError(RuntimeError):
    """The Ray cluster cannot play the run (Ray missing, a cluster out of reach, a node without a
    bot's files, no worker left): one line, for the user."""


def import_ray() -> ModuleType:
    """The ``ray`` package, or a ClusterError saying how to install it."""
    try:
        import ray  # late: Ray is an optional extra (this reports its absence)
    except ImportError:
        raise ClusterError(f"--executor ray needs Ray, an optional extra: {INSTALL}") from None
    module: ModuleType = ray  # mypy reads ray as Any (pyproject.toml: with Ray or without it, the same check)
    return module


# --- bot files on the nodes -------------------------------------------------------------


def bot_files(bot: BotSpec) -> tuple[str, ...]:
    """The arguments of a launched bot's command that name files here (beside the driver): a
    node must have them too, at the same path (relative ones: in the bot's directory)."""
    cwd = Path(bot.cwd or ".")
    return tuple(arg for arg in bot.command[1:] if not arg.startswith("-") and (cwd / arg).is_file())


def missing_file(bot: BotSpec, files: Iterable[str]) -> str | None:
    """What of a bot's directory, data, program and ``files`` is missing on this node, or None."""
    cwd = bot.cwd or "."
    if not os.path.isdir(cwd):
        return f"its directory {cwd}"
    if missing := next((p for p in bot.data if not os.path.exists(p)), None):
        return f"its data {missing}"
    program = bot.command[0]
    if program not in ("python", "python3"):  # these are the node's own interpreter (see Launcher.command)
        found = os.path.exists(os.path.join(cwd, program)) if os.sep in program else shutil.which(program)
        if not found:
            return f"its program {program}"
    return next((f"its file {path}" for path in files if not (Path(cwd) / path).is_file()), None)


def rebased(bot: BotSpec, working_dir: Path) -> BotSpec:
    """A bot whose directory is inside ``working_dir`` (shipped to every node by Ray, as the
    workers' current directory there), with that directory, its data and the absolute file
    arguments inside it made relative, so that they name the shipped copy on each node."""
    if bot.cwd is None or not Path(bot.cwd).is_relative_to(working_dir):
        return bot
    command = [os.path.relpath(arg, bot.cwd) if os.path.isabs(arg) and Path(arg).is_relative_to(working_dir)
               and Path(arg).exists() else arg for arg in bot.command]
    data = [os.path.relpath(p, working_dir) if Path(p).is_relative_to(working_dir) else p for p in bot.data]
    return dataclasses.replace(bot, cwd=os.path.relpath(bot.cwd, working_dir), command=tuple(command),
                               data=tuple(data))


def excludes(working_dir: Path, bots: Iterable[BotSpec], hide: Iterable[Path]) -> list[str]:
    """What Ray must not ship of ``working_dir`` (its ``runtime_env`` ``excludes``: patterns
    anchored at it): everything but the launched bots' own files (their directories and data),
    and inside those what is masked for them here (``hide``: the output directory, the tournament
    file; home directories). Ray follows symlinks, and would ship what they lead to: a
    ConfigError for a symlink in a bot's files that leads out of them (or into what is masked;
    a file of the system's is fine), or to a directory above itself (shipped endlessly)."""
    top = working_dir.resolve()
    own = {b.name: [p for p in (Path(b.cwd).resolve(), *(Path(d).resolve() for d in b.data))
                    if paths.inside(p, top)] for b in bots if not b.external and b.cwd is not None}
    places = [p for mine in own.values() for p in mine]
    # masked as the sandbox masks: what lies inside the shipped files, unless it holds a bot's own
    masked = {m for m in {Path(p).resolve() for p in hide} | paths.homes()
              if not any(paths.inside(p, m) for p in places)}
    out: list[str] = []

    def owners(path: Path) -> set[str]:
        return {name for name, spots in own.items() if any(paths.inside(path, p) for p in spots)}

    def leave(path: Path) -> None:
        rel = path.relative_to(top).as_posix()
        if "\n" in rel or "\r" in rel:
            raise ConfigError(f"{path}: a name with a line break cannot be kept out of Ray's upload; rename it")
        out.append("/" + re.sub(r"\s", lambda m: f"[{m.group()}]", re.sub(r"([\\*?\[\]!#])", r"\\\1", rel)))

    def walk(folder: Path) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            path = Path(entry.path)
            mine = owners(path)
            if not mine or any(paths.inside(path, m) for m in masked):
                if any(paths.inside(p, path) for p in places) and entry.is_dir(follow_symlinks=False):
                    walk(path)  # on the way to a bot's files
                else:
                    leave(path)
            elif entry.is_symlink():
                target = path.resolve()
                if not target.exists():
                    leave(path)  # leads nowhere: nothing to ship
                    continue
                theirs = owners(target) == mine and not any(paths.inside(target, m) for m in masked)
                if target.is_dir() and paths.inside(path, target):
                    why = "a directory that holds it (Ray would ship it again and again)"
                elif not theirs and not (target.is_file() and any(paths.inside(target, r) for r in paths.runtime())):
                    why = f"outside the files of bot {', '.join(sorted(mine))}"
                else:
                    continue  # shipped as what it leads to: the same bot's files, or the system's
                raise ConfigError(f"{path} is a symlink to {target}, {why}: Ray follows symlinks and would ship what "
                                  f"it leads to (replace it with what it should hold, or leave it out of [executor] "
                                  f"working_dir)")
            elif entry.is_dir(follow_symlinks=False):
                walk(path)  # a bot's: masked paths and symlinks inside it

    walk(top)
    return out


# --- the match worker (a Ray actor) -----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class WorkerSettings:
    """What every match worker is made with: the game, the bots and their sandbox."""

    game: str
    options: dict[str, Any]
    clock: Clock
    bots: tuple[BotSpec, ...]
    files: dict[str, tuple[str, ...]]  # per launched bot: the files its node must have (bot_files)
    capacity: dict[str, int]
    log_dir: Path | None
    connect_timeout: float
    sandbox: SandboxMode
    hide: tuple[Path, ...]
    isolation: Isolation
    startup_s: float = 30.0


class MatchWorker:
    """A Ray actor: a referee and its launched bots on one node, playing one match at a time."""

    def __init__(self, number: int, settings: WorkerSettings):
        self.number, self.settings = number, settings
        self.executor: LocalExecutor | None = None

    def where(self) -> str:
        import ray  # late: Ray is an optional extra

        node = ray.get_runtime_context().get_node_id()[:8]
        return f"node {ray.util.get_node_ip_address()} ({socket.gethostname()}, id {node})"

    async def start(self, check: bool = True) -> tuple[str | None, str]:
        """Check that this node has every bot's files, then start the referee and the bots (with
        ``check``: and check that every bot starts and connects, else :meth:`check` does).
        Returns (what is missing, or None; where this worker runs)."""
        s = self.settings
        # relative: inside the shipped working directory, the current one
        bots = [b if b.external or b.cwd is None else
                dataclasses.replace(b, cwd=os.path.abspath(b.cwd), data=tuple(os.path.abspath(p) for p in b.data))
                for b in s.bots]
        for bot in bots:
            if not bot.external and (missing := missing_file(bot, s.files.get(bot.name, ()))):
                return (f"{self.where()} lacks bot {bot.name}'s files: {missing} is not there (bot files must "
                        f"exist at the same path on every node, or be shipped by [executor] working_dir)"), ""
        log_dir = None
        if s.log_dir is not None:
            with contextlib.suppress(OSError):  # a node without the output directory: the worker's own log
                (s.log_dir / f"worker-{self.number}").mkdir(parents=True, exist_ok=True)
                log_dir = s.log_dir / f"worker-{self.number}"
        try:
            hide = [Path(os.path.abspath(p)) for p in s.hide]  # relative: inside the shipped copy
            executor = LocalExecutor(s.game, s.options, s.clock, bots, s.capacity, log_dir, s.connect_timeout,
                                     s.sandbox, [p for p in hide if p.exists()], s.isolation, s.startup_s)
            executor.startup_check = check
            await executor.__aenter__()
        except ConfigError as err:  # e.g. sandbox = "bwrap" on a node without bubblewrap
            return f"{self.where()}: {err}", ""
        self.executor = executor
        return None, self.where()

    async def check(self) -> None:
        """Every bot of this worker started and connected (BotsNotReady if not)."""
        assert self.executor is not None  # the driver checks a worker once it has started
        await self.executor._check_started()

    async def play(self, seating: Seating, match_id: str) -> tuple[tuple[dict[str, Any], dict[str, Any], float] | None,
                                                                   dict[str, str] | None]:
        """One match: ((results, record, seconds), None), or (None, {bot: why}) if bots are dead."""
        assert self.executor is not None  # the driver plays on a worker once it has started
        try:
            played = await self.executor.play(seating, match_id)
        except BotsDead as dead:
            return None, dead.reasons
        return (played.results, played.record, played.seconds), None

    def status(self) -> dict[str, BotStatus]:
        return self.executor.launcher.status() if self.executor and self.executor.launcher else {}

    async def stop(self) -> None:
        """Stop the bots, then the referee."""
        if self.executor is not None:
            executor, self.executor = self.executor, None
            await executor.__aexit__(None, None, None)


@dataclasses.dataclass
class _Worker:
    number: int
    actor: Any
    where: str = ""


class _Statuses:
    """The launched bots' status over every worker (what ``Launcher.status`` gives for one): starts,
    exits and dropped output added up, the first reason a bot was given up on; other keys as the
    first worker gave them."""

    def __init__(self, statuses: Iterable[Mapping[str, Mapping[str, Any]]]):
        self.merged: dict[str, dict[str, Any]] = {}
        for status in statuses:
            for name, st in status.items():
                m = self.merged.setdefault(name, {**st, "starts": 0, "exits": [], "dead": None, "dropped_bytes": 0})
                m["starts"] += st.get("starts", 0)
                m["exits"] += st.get("exits", [])
                m["dead"] = m["dead"] or st.get("dead")
                m["dropped_bytes"] += st.get("dropped_bytes", 0)

    def status(self) -> dict[str, dict[str, Any]]:
        return self.merged


# --- the driver's side --------------------------------------------------------------------


class RayExecutor(Executor):
    """Matches played by match workers on a Ray cluster (``spec.address``; None: an embedded one).

    As many workers start as the nodes' CPUs allow, ``spec.cpus`` each (default: one per seat),
    spread over the nodes; each plays one match at a time, so ``concurrency`` is the number of
    workers. A worker that dies has its match played again by another, and a new worker is started
    in its place where the cluster has room. ``snapshots`` are not used: each node has the files
    Ray ships it, or its own at the same paths."""

    def __init__(self, game: str, options: Mapping[str, Any], clock: Clock, bots: Sequence[BotSpec],
                 capacity: Mapping[str, int], log_dir: Path | None = None, connect_timeout: float = 30.0,
                 sandbox: SandboxMode = SandboxMode.AUTO, hide: Sequence[Path] = (),
                 isolation: Isolation = Isolation.TOURNAMENT, startup_s: float = 30.0,
                 announce: Callable[[str], None] | None = None, absent: Absent = Absent.STOP,
                 snapshots: Snapshots | None = None, *, spec: ExecutorSpec):
        external = [b.name for b in bots if b.external]
        if external:
            raise ConfigError(f"bot {external[0]} is external: it connects to one referee, and the ray executor "
                              f"has one per worker (use the local executor, or --server)")
        if absent == Absent.WITHDRAW:  # each worker starts every bot: one may start on one node and not another
            raise ConfigError('absent = "withdraw" needs one start-up check for all the matches: the ray executor '
                              'has one per worker (use the local executor, or absent = "stop")')
        super().__init__(game, options, clock, bots, capacity, log_dir, connect_timeout, sandbox, hide, isolation,
                         startup_s, announce)
        self.spec = spec
        self.ray = import_ray()
        self._actor_class = self.ray.remote(MatchWorker)
        self.workers: dict[int, _Worker] = {}
        self.lost: list[str] = []  # one line per worker that died
        self._numbers = iter(range(1, 1 << 30))
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._starting: set[asyncio.Task[None]] = set()
        self._last_loss = 0.0
        self._joined = False

    # --- the cluster -------------------------------------------------------------------

    def _connect(self) -> None:
        """Join the cluster at the address, or start an embedded one here using every core."""
        ray = self.ray
        options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
        if self.spec.working_dir is not None:  # only the bots' own files travel
            options["runtime_env"] = {"working_dir": str(self.spec.working_dir),
                                      "excludes": excludes(self.spec.working_dir, self.bots, self.hide)}
        if self.spec.address is None:
            options.update(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False,
                           object_store_memory=EMBEDDED_OBJECT_STORE)
        else:
            _reachable(self.spec.address)
            options["address"] = self.spec.address
        sigterm = signal.getsignal(signal.SIGTERM)
        try:
            ray.init(**options)
        except Exception as err:  # Ray's own errors: ConnectionError, RuntimeError, ValueError...
            where = f"the Ray cluster at {self.spec.address}" if self.spec.address else "an embedded Ray"
            reason = _first_line(err)
            if err.__cause__ is not None:  # Ray's own cause ends with the error it met (a traceback before it)
                reason += f": {str(err.__cause__).strip().splitlines()[-1] if str(err.__cause__).strip() else ''}"
            if "InvalidAuthToken" in reason:
                reason += (" (a cluster with token authentication: set RAY_AUTH_MODE=token, with its token in "
                           "~/.ray/auth_token or $RAY_AUTH_TOKEN)")
            raise ClusterError(f"cannot start or join {where}: {reason}") from None
        finally:
            # ray.init sets its own, which would bypass a clean stop (only the main thread has handlers: a
            # competition server plays its rounds in others)
            if sigterm is not None and threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, sigterm)
        self._joined = True

    def _worker_cpus(self) -> int:
        return self.spec.cpus or games.GAMES[self.game].num_seats

    def _room(self) -> int:
        """How many workers the live nodes have CPUs for."""
        cpus = self._worker_cpus()
        return sum(int(node["Resources"].get("CPU", 0) // cpus) for node in self.ray.nodes() if node["Alive"])

    def _settings(self) -> WorkerSettings:
        bots = [b if b.external or self.spec.working_dir is None else rebased(b, self.spec.working_dir)
                for b in self.bots]
        hidden = [p.resolve() for p in self.hide]  # not the bots' files: not shipped, masked on the nodes
        files = {b.name: tuple(f for f in bot_files(b) if not any(paths.inside((Path(b.cwd or ".") / f).resolve(), h)
                                                                  for h in hidden))
                 for b in self.bots if not b.external}
        # what is masked here, masked on every node too: inside the shipped copy, where it would lie
        top = self.spec.working_dir
        hide = tuple(Path(os.path.relpath(p, top)) if top is not None and p.is_relative_to(top) else p
                     for p in self.hide)
        return WorkerSettings(self.game, self.options, self.clock, tuple(bots), files, self.capacity, self.log_dir,
                              self.connect_timeout, self.sandbox_mode, hide, self.isolation, self.startup_s)

    def _new_worker(self) -> _Worker:
        number = next(self._numbers)
        actor = self._actor_class.options(num_cpus=self._worker_cpus(), scheduling_strategy="SPREAD",
                                          max_restarts=0).remote(number, self._worker_settings)
        worker = _Worker(number, actor)
        self.workers[number] = worker
        return worker

    async def _start(self, worker: _Worker, check: bool) -> None:
        """Start a worker's referee and bots (``check``: and check them); a ClusterError if it cannot."""
        try:
            missing, worker.where = await worker.actor.start.remote(check)
        except self.ray.exceptions.RayError as err:  # it raised, or died, on its way up
            cause = getattr(err, "cause", None) or err
            raise ClusterError(f"match worker {worker.number} did not start: {_first_line(cause)}") from None
        if missing:
            raise ClusterError(missing)

    async def _check(self, worker: _Worker) -> None:
        try:
            await worker.actor.check.remote()
        except self.ray.exceptions.RayError as err:
            cause = getattr(err, "cause", None) or err
            raise ClusterError(f"match worker {worker.number} did not start: {_first_line(cause)}") from None

    @property
    def _checked_apart(self) -> bool:
        """With isolation = "match" the workers' start-up checks run one after another (one
        worker per node: no two processes of a bot running at once), and a worker started in place
        of a dead one skips it; otherwise each worker checks its bots as it starts."""
        return self.isolation == Isolation.MATCH

    async def __aenter__(self) -> Self:
        self.sandbox = sandbox.resolve(self.sandbox_mode)  # what the store says the bots ran in
        sandbox.check_bounded(self.sandbox, self.bots)  # the workers check their own machines too
        self._connect()
        try:
            room = self._room()
            if room == 0:
                raise ClusterError(f"no node of the Ray cluster has {self._worker_cpus()} CPU(s) for a match "
                                   f"worker (one per seat of the game; [executor] cpus sets another number)")
            self._worker_settings = self._settings()
            workers = [self._new_worker() for _ in range(room)]
            try:
                async with asyncio.timeout(START_TIMEOUT):
                    await asyncio.gather(*(self._start(w, not self._checked_apart) for w in workers))
                    if self._checked_apart:
                        for worker in {w.where: w for w in reversed(workers)}.values():
                            await self._check(worker)
            except TimeoutError:
                raise ClusterError(f"the match workers did not start within {START_TIMEOUT:g} s") from None
            for worker in workers:
                self._idle.put_nowait(worker)
        except BaseException:
            await self._close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._close()

    async def _close(self) -> None:
        """Stop every worker (its bots, then its referee), then leave the cluster (an embedded one
        stops). Workers that do not stop in time are killed, and their bots with them."""
        for task in self._starting:
            task.cancel()
        if not self._joined:
            return
        ray = self.ray
        live = list(self.workers.values())
        with contextlib.suppress(Exception):
            statuses = await asyncio.wait_for(_gather_quietly(w.actor.status.remote() for w in live), 10)
            # the driver has no Launcher of its own: what is read of it then (status()), the workers' statuses give
            self.launcher = _Statuses(s for s in statuses if isinstance(s, dict))  # type: ignore[assignment]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(_gather_quietly(w.actor.stop.remote() for w in live), 15)
        for worker in live:
            with contextlib.suppress(Exception):
                ray.kill(worker.actor)
        self.workers.clear()
        ray.shutdown()
        self._joined = False

    def describe(self) -> str:
        nodes = {w.where for w in self.workers.values()}
        where = f"the Ray cluster at {self.spec.address}" if self.spec.address else "an embedded Ray"
        return (f"ray: {len(self.workers)} match worker(s) of {self._worker_cpus()} CPU(s) on {len(nodes)} node(s) "
                f"of {where}")

    # --- matches -------------------------------------------------------------------------

    def _lose(self, worker: _Worker, err: BaseException, seating: Seating) -> None:
        """A worker died (its process, or its node): forget it, and start another in its place."""
        if self.workers.pop(worker.number, None) is None:
            return
        with contextlib.suppress(Exception):  # merely out of reach, it would hold its CPUs
            self.ray.kill(worker.actor)
        self._last_loss = time.monotonic()
        line = (f"match worker {worker.number} on {worker.where or 'its node'} died ({_first_line(err)}); "
                f"match {seating.key} is played again by another worker")
        self.lost.append(line)
        log.warning(line)
        task = asyncio.create_task(self._replace())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _replace(self) -> None:
        worker = self._new_worker()
        try:
            await self._start(worker, not self._checked_apart)  # waits while no node has room
        except ClusterError as err:
            self.workers.pop(worker.number, None)
            log.warning(f"a new match worker could not start: {_first_line(err)}")
            return
        self._idle.put_nowait(worker)

    async def _idle_worker(self) -> _Worker:
        while True:
            try:
                async with asyncio.timeout(5.0):  # not wait_for, which can lose a Ctrl-C (Python 3.11)
                    return await self._idle.get()
            except TimeoutError:
                if not self.workers and time.monotonic() - self._last_loss > REPLACE_TIMEOUT:
                    raise ClusterError(f"every match worker died, and none could start again within "
                                       f"{REPLACE_TIMEOUT:g} s: {self.lost[-1] if self.lost else ''}") from None

    async def play(self, seating: Seating, match_id: str | None = None) -> Played:
        """Play one match on an idle worker; if the worker dies, again on another (same match id)."""
        match_id = game_id_of(seating) if match_id is None else match_id
        errors = self.ray.exceptions
        while True:
            worker = await self._idle_worker()
            if worker.number not in self.workers:  # lost while idle
                continue
            ref = worker.actor.play.remote(seating, match_id)
            try:
                outcome, dead = await ref
            except asyncio.CancelledError:  # Ctrl-C: the worker stops the match too
                with contextlib.suppress(Exception):
                    self.ray.cancel(ref)
                raise
            except errors.RayActorError as err:
                self._lose(worker, err, seating)
                continue
            except errors.RayTaskError as err:  # the match raised: as it would have here
                raise err.cause if isinstance(err.cause, Exception) else ClusterError(_first_line(err)) from None
            self._idle.put_nowait(worker)
            if dead is not None:
                raise BotsDead(dead)
            return Played(seating, *outcome)

    async def play_all(self, seatings: Iterable[Seating], concurrency: int,
                       on_played: Callable[[Played], bool | None],
                       on_dead: Callable[[Seating, BotsDead], None] | None = None) -> None:
        """As :meth:`Executor.play_all`, as many matches at once as there are workers."""
        await super().play_all(seatings, max(1, len(self.workers)), on_played, on_dead)

    def _ahead(self, concurrency: int) -> int:
        return 0  # each worker plays one match at a time, its bots' processes started there

    # unused: each worker's own LocalExecutor opens its referee and plays there
    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        raise NotImplementedError

    async def _run(self, seating: Seating, match_id: str,
                   sessions: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        raise NotImplementedError


async def _gather_quietly(refs: Iterable[Any]) -> list[Any]:
    """Every ref's value, or its exception (a worker that died)."""
    return await asyncio.gather(*refs, return_exceptions=True)


def _reachable(address: str, timeout: float = 10.0) -> None:
    """A ClusterError unless something listens at HOST:PORT (Ray itself would retry for minutes)."""
    host, sep, port = address.rpartition(":")
    if "://" in address or not sep or not port.isdigit():
        return  # ray://... or another form: Ray's own connection says
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as err:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {err.strerror or err} (is its head "
                           f"started, with `ray start --head --port={port}`?)") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]
