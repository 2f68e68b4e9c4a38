"""The executor interface: launched bots, and matches played on a referee."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import hmac
import secrets
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from referee import hostload
from referee.hosting import sandbox
from referee.hosting.launcher import GAME_END_GRACE_S, Launcher
from referee.hosting.sandbox import Sandbox
from referee.hosting.versions import Snapshots
from referee.model import Absent, BotProtocol, BotSpec, Isolation, Played, SandboxMode, Seating
from referee.runner import Clock


class BotsDead(Exception):
    """Launched bots that died too often to be started again: {name: why}."""

    def __init__(self, reasons: Mapping[str, str]):
        super().__init__("; ".join(f"bot {name} {why}" for name, why in sorted(reasons.items())))
        self.reasons = dict(reasons)


class BotsNotReady(Exception):
    """Bots that were not running and connected within ``startup_s`` before the first match:
    ``{name: why}``, and the last lines of each one's log (``{name: (path, lines)}``)."""

    def __init__(self, reasons: Mapping[str, str], logs: Mapping[str, tuple[Path | None, Sequence[str]]],
                 outcome: str = "no match was played"):
        super().__init__("\n".join(absence_lines(reasons, logs, outcome)))
        self.reasons = dict(reasons)


def absence_lines(reasons: Mapping[str, str], logs: Mapping[str, tuple[Path | None, Sequence[str]]],
                  outcome: str) -> list[str]:
    """Bots that are not there, why, and what follows, in a line; then the last lines of each one's log."""
    lines = ["; ".join(f"bot {name} {why}" for name, why in sorted(reasons.items())) + f": {outcome}"]
    for name in sorted(reasons):
        path, tail = logs.get(name, (None, ()))
        if tail:
            lines.append(f"  last lines of {path}:")
            lines += [f"    {line}" for line in tail]
    return lines


def seat_capacity(seatings: Sequence[Seating], concurrency: int) -> dict[str, int]:
    """Seats a launched bot must play at once: its most seats in one match x concurrency."""
    most: dict[str, int] = {}
    for s in seatings:
        for bot in set(s.lineup):
            most[bot] = max(most.get(bot, 0), s.lineup.count(bot))
    return {bot: n * concurrency for bot, n in most.items()}


#: how far ahead of the next seating a free worker looks for one that may start now
LOOKAHEAD = 256


def game_id_of(seating: Seating) -> str:
    """The id a scheduled match has at the referee, which its bots see (``GameStart.game_id``):
    ``DEAL_SET:m`` and 16 hex digits, naming no entry (a bot is never told who its opponents are),
    and stable for a seating: an HMAC-SHA-256 of its key keyed with its deal seed, which no bot
    knows while the deal set plays. The record keeps it (``meta.game_id``)."""
    digest = hmac.new(str(seating.seed).encode(), seating.key.encode(), hashlib.sha256).hexdigest()
    return f"{seating.deal_set}:m{digest[:16]}"


def instance_name(bot: str) -> str:
    """The name a process started for one match (or the start-up check) connects under:
    ``NAME#ID``, ``#`` being in no bot's name. The ID is random, not a count: the process
    sees it on its command line, and a count over the run would tell it how many processes
    started before it (an earlier process of the same bot could have made that number)."""
    return f"{bot}#{secrets.token_hex(4)}"


class _Stop(Exception):
    """Raised in a worker of :meth:`Executor.play_all` to stop the others."""


class Executor(ABC):
    """Plays matches of one game between one set of bots.

    ``async with executor: played = await executor.play(seating)``. Entering
    opens the referee (:meth:`_open`) and launches every bot that is not
    external with ``capacity[name]`` seats, in the sandbox that ``sandbox``
    (``[limits] sandbox``: auto, bwrap or none) resolves to, hiding ``hide``
    (the output directory, the tournament file) from them, showing each the copy of its
    files in ``snapshots`` when it has one (:class:`~referee.hosting.versions.Snapshots`,
    taken with its version); a launched bot that
    died is started again before its next match, up to its ``max_restarts``.
    Before the first match every bot, launched or external, must be running and
    connected within ``startup_s`` (:meth:`_check_started`); ``announce`` is told,
    in a line, what it waits for (an external bot, and where it connects). With
    ``absent = "withdraw"`` those that are not are withdrawn instead (:attr:`absent`).
    Subclasses say where the referee is and how a match is started there.

    A launched process is stopped only once its GameEnds are sent: the referee ends its
    session, and it has :data:`~referee.hosting.launcher.GAME_END_GRACE_S` to end by itself
    (after each match with isolation = "match", at the end of the run otherwise).

    Every match is played with its record held back from the referee's spectators
    (its seed, decks and hands would give away the cards of a match on the same
    deals) until :meth:`release` names it.
    """

    #: launched bots connect as NAME#TAG when set (a remote referee that other runs share)
    session_tag: str | None = None
    #: False: entering skips the start-up check (:meth:`_check_started`), which the owner runs itself
    startup_check: bool = True

    def __init__(self, game: str, options: Mapping[str, Any], clock: Clock, bots: Sequence[BotSpec],
                 capacity: Mapping[str, int], log_dir: Path | None = None, connect_timeout: float = 30.0,
                 sandbox: SandboxMode = SandboxMode.AUTO, hide: Sequence[Path] = (),
                 isolation: Isolation = Isolation.TOURNAMENT, startup_s: float = 30.0,
                 announce: Callable[[str], None] | None = None, absent: Absent = Absent.STOP,
                 snapshots: Snapshots | None = None):
        self.game, self.options, self.clock = game, dict(options), clock
        #: the copies of the launched bots' files taken with their versions, shown in their sandboxes
        self.snapshots = snapshots
        self.startup_s = startup_s
        self.announce = announce
        #: "withdraw": a bot not running and connected within startup_s is withdrawn, not a stop
        self.absent_mode = absent
        #: the bots withdrawn at the start-up check (absent = "withdraw"): why, and their logs' last lines
        self.absent: dict[str, str] = {}
        self._absent_logs: dict[str, tuple[Path | None, Sequence[str]]] = {}
        #: "match": every launched bot plays each match in a fresh process of its own (see :meth:`play`),
        #: and no two processes of one bot run it at once (:meth:`play_all`)
        self.isolation = isolation
        self.bots = list(bots)
        self.capacity = dict(capacity)
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.sandbox_mode = sandbox
        self.hide = tuple(hide)
        self.tokens = {b.name: b.token or secrets.token_hex(16) for b in self.bots}
        self.sandbox: Sandbox | None = None  # once entered: the sandbox the bots run in
        self.socket_dir: Path | None = None  # set by _open where the referee listens on a Unix socket for them
        self.launcher: Launcher | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._held: dict[str, str] = {}  # match id as given to play -> its game id at the referee
        #: while :meth:`play_all` prepares matches ahead (isolation = "match"): the matches that may play at once
        self._gate: asyncio.Semaphore | None = None
        #: while :meth:`play_all` plays (isolation = "match"): per launched bot, the process prepared for its
        #: next match (:meth:`_prepare`), by the name it connects under, and the seats it was made for
        self._spares: dict[str, tuple[str, int, asyncio.Future[None]]] = {}
        #: while :meth:`play_all` plays: the seatings read that wait for what matches being played hold
        self._pending: list[Seating] = []
        #: the host's load while this executor plays, and the timeouts marked as its fault
        self.host = hostload.HostWatch()

    # --- what an implementation provides --------------------------------------------

    @abstractmethod
    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        """Make the referee ready (closing it through ``stack``); returns the address launched bots
        connect to. In a bubblewrap sandbox (``self.sandbox``) that is a Unix socket in
        ``self.socket_dir``, seen by the bots at :data:`~referee.hosting.sandbox.SOCKET_DIR`."""

    @abstractmethod
    async def _run(self, seating: Seating, match_id: str,
                   sessions: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Play one match on the referee; returns its results and record. ``sessions``: the
        names the seats' bots connect under, where they differ from the line-up's."""

    def _admit(self, name: str, token: str, seats: int) -> None:
        """Let a process started for one match connect as ``name`` with ``token``, for ``seats`` seats."""
        raise NotImplementedError(f"{type(self).__name__} cannot start a bot for one match")

    def _dismiss(self, name: str) -> None:  # noqa: B027 (a hook: by default nothing)
        """``name``'s match is over: it may not connect again."""

    def _release(self, game_ids: Sequence[str]) -> None:  # noqa: B027 (a hook: by default nothing)
        """Tell the referee that spectators may have the records of these matches (its game ids).
        By default nothing: a referee that is never told keeps them held, which is safe."""

    async def _open_doors(self, stack: contextlib.AsyncExitStack,
                          open_door: Callable[[Path], Awaitable[object]]) -> str:
        """Each launched bot's own way to the referee: ``open_door(path)`` listens on the Unix
        socket ``path`` in ``socket_dir/NAME`` (bound into that bot's sandbox alone, at
        :data:`~referee.hosting.sandbox.SOCKET_DIR`); returns the address the bots are given."""
        self.socket_dir = sandbox.make_socket_dir()
        stack.callback(shutil.rmtree, self.socket_dir, ignore_errors=True)  # after the doors close
        for bot in self.bots:
            if not bot.external:
                door = self.socket_dir / bot.name
                door.mkdir(mode=0o755)
                await open_door(door / sandbox.SOCKET_NAME)
        return f"unix:{sandbox.SOCKET_DIR}/{sandbox.SOCKET_NAME}"

    def describe(self) -> str:
        """Where the matches are played, in one line (kept in the store's meta as "executor")."""
        return type(self).__name__

    def seats(self) -> dict[str, int]:
        """The seats each bot plays at once, as its launched process is told (``--capacity``): what its
        sessions may offer the referee in all (:class:`~referee.play.arena.Arena`, a session more is refused)."""
        return {bot.name: self.capacity.get(bot.name, 1) for bot in self.bots}

    def max_connections(self) -> int:
        """Connections one sandboxed bot may hold to the referee at once: the kit opens one per
        process, and with isolation = "match" a bot has up to ``capacity`` processes at once."""
        return 16 + max(self.capacity.values(), default=1)

    def _bot_ended(self, name: str) -> None:  # noqa: B027 (a hook: by default nothing)
        """A launched bot's process ended (called from a launcher thread): nothing to do by default."""

    def _end_sessions(self, names: Collection[str] | None) -> bool:
        """End the sessions of these names (None: every session) once what is queued for them (their
        GameEnds) is sent; whether it could (not on a remote referee: its sessions are not the runner's)."""
        return False

    @property
    def arena(self) -> Any:
        """The :class:`~referee.play.arena.Arena` the matches are played in, when it is in this process
        (the live page shows its games), else None."""
        return None

    def _connected(self, name: str) -> bool | None:
        """Whether a session of ``name`` is connected to the referee; None where the referee
        cannot be asked (a remote one: the protocol has no such call)."""
        return None

    def _external_address(self) -> str:
        """Where an external bot connects."""
        raise NotImplementedError

    # --- the shared part ------------------------------------------------------------

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        self._stack = stack
        try:
            self.sandbox = sandbox.resolve(self.sandbox_mode)
            sandbox.check_bounded(self.sandbox, self.bots)
            address = await self._open(stack)
            self.launcher = Launcher(self.bots, address, self.tokens, self.capacity, self.log_dir, self._bot_ended,
                                     box=self.sandbox, socket_dir=self.socket_dir, hide=self.hide,
                                     session_tag=self.session_tag, snapshots=self.snapshots)
            stack.callback(self.launcher.stop_all)  # runs before the referee closes
            if self.isolation != Isolation.MATCH:
                self.launcher.start_all()
            if self.startup_check:
                await self._check_started()
        except BaseException:
            await stack.aclose()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self._stack is not None:
            if exc_type is None and self.launcher is not None:
                await self._let_go(self.launcher.running(), every_session=True)
            await self._stack.aclose()

    async def _let_go(self, names: Sequence[str], every_session: bool = False) -> None:
        """These launched processes (their names) have played: end their sessions (``every_session``:
        the external bots' too), so that their GameEnds are sent and they may end by themselves,
        and wait up to GAME_END_GRACE_S for them to; what is still running is then the launcher's
        to stop (without counting it as a death: it played to the end)."""
        assert self.launcher is not None, "use the executor in 'async with'"
        self.launcher.finishing(names)
        if not self._end_sessions(None if every_session else names):
            return
        deadline = time.monotonic() + GAME_END_GRACE_S
        while any(self.launcher.not_running(n) is None for n in names) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    async def _check_started(self) -> None:
        """Every bot running and connected within ``startup_s``, or :class:`BotsNotReady` naming
        those that are not, why (its command was not found, its process ended, it did not
        connect in time) and the last lines of their logs. With isolation = "match" each launched
        bot starts one trial process for this check, stopped once it has connected. Where the
        referee cannot say who is connected (a remote one), only the launched processes are
        checked: started, and still running."""
        assert self.launcher is not None, "use the executor in 'async with'"
        trial = {}
        if self.isolation == Isolation.MATCH:
            for bot in self.launcher.bots:
                trial[bot], token = self._instance(bot, 1)
                self.launcher.start_for_match(bot, trial[bot], token, 1)
        try:
            for spec in self.bots:
                if spec.external and self._connected(spec.name) is False:
                    self.say(f"waiting up to {self.startup_s:g} s for external bot {spec.name} to connect to "
                             f"{self._external_address()} (with the token of its [[bots]] table)")
            failures = await self._wait_connected({b.name: trial.get(b.name, b.name) for b in self.bots},
                                                  self.startup_s)
            logs: dict[str, tuple[Path | None, Sequence[str]]] = {b: self.launcher.log_tail(trial.get(b, b))
                                                                  for b in failures}
            if failures and self.absent_mode != Absent.WITHDRAW:
                raise BotsNotReady(failures, logs)
            if failures:
                self.absent, self._absent_logs = failures, logs
                for name, why in failures.items():
                    self.launcher.withdraw(name, f"withdrawn: {why}")
                for line in absence_lines(failures, logs, "withdrawn (absent = \"withdraw\"): its matches are "
                                                          "not played, the other entries play theirs"):
                    self.say(line)
        finally:
            for name in trial.values():
                self._dismiss(name)
                self.launcher.retire(name, "stopped after the start-up check")

    async def _wait_connected(self, names: Mapping[str, str], timeout: float) -> dict[str, str]:
        """Wait until the bots ``names`` ({bot: the name it connects under}) are connected;
        returns, for those that are not, why: the launched process ended (or never started),
        or no session came within ``timeout``."""
        assert self.launcher is not None, "use the executor in 'async with'"
        deadline = time.monotonic() + timeout
        waiting, failures = dict(names), {}
        while True:
            for bot, name in list(waiting.items()):
                ended = self.launcher.not_running(name)
                if ended is not None:
                    started = not ended.startswith("cannot start")
                    failures[bot] = f"ended before it connected ({ended}){self._hint(bot, ended)}" if started \
                        else ended
                    del waiting[bot]
                elif self._connected(name) is not False:  # connected, or the referee cannot tell
                    del waiting[bot]
            if not waiting or time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.05)
        for bot in waiting:
            failures[bot] = f"did not connect within {timeout:g} s{self._hint(bot, None)}"
        return failures

    def _hint(self, bot: str, ended: str | None) -> str:
        """What may be wrong with a launched bot that has not connected: ``ended``, how its process ended
        before it did (None: it still runs). A gRPC bot that ends at once with exit code 0 is most often
        a stdio bot (its stdin is empty: it had nothing to answer)."""
        assert self.launcher is not None, "use the executor in 'async with'"
        launched = self.launcher.bots.get(bot)
        if launched is None or launched.spec.protocol == BotProtocol.STDIO:  # the relay's own lines in its log say more
            return ""
        if ended is None:
            return (" (its process runs: it connects elsewhere than the --address it is given, or it takes longer "
                    "to start than startup_s)")
        if ended == "exit code 0":
            return ("; a bot that ends at once with exit code 0 is often a stdio bot, which finds its stdin empty: "
                    "enter it with protocol = \"stdio\" in its [[bots]] table (referee match: --stdio-bot)")
        return ""

    def not_ready(self, outcome: str) -> BotsNotReady:
        """The error of a run that cannot go on without the bots withdrawn at the start-up check."""
        return BotsNotReady(self.absent, self._absent_logs, outcome)

    def say(self, line: str) -> None:
        if self.announce is not None:
            self.announce(line)

    def gone(self, bot: str) -> bool:
        """Whether a launched bot died and will not come to play (to stop waiting for it)."""
        return self.launcher is not None and self.launcher.gone(bot)

    async def play(self, seating: Seating, match_id: str | None = None) -> Played:
        """Play one match. ``match_id`` is its id at the referee (the game id its bots see): by
        default one of its own that names no bot (:func:`game_id_of`); ``""`` lets the referee choose one.
        Raises :class:`BotsDead` (without playing) if a bot
        of the line-up died more than its ``max_restarts`` times, and
        :class:`~referee.files.WriteFailed` if a bot's log could not be written (a full disk).
        With isolation = "match" the launched bots play it in processes started for it alone
        (:meth:`_play_fresh`)."""
        assert self.launcher is not None, "use the executor in 'async with'"
        if self.launcher.write_failed is not None:  # a bot's log hit a full disk: no more matches
            raise self.launcher.write_failed
        fresh = self.isolation == Isolation.MATCH
        dead = self.launcher.dead(seating.lineup) if fresh else await self._restart(seating.lineup)
        if dead:
            status = self.launcher.status()
            # each of them has its reason (dead() lists the bots given one, which is never taken back)
            raise BotsDead({name: why for name in dead if (why := status[name]["dead"]) is not None})
        held = seating.key if match_id is None else match_id
        match_id = game_id_of(seating) if match_id is None else match_id
        begun = self.launcher.match_begins(seating.key, seating.lineup)  # in the bots' logs, by the match's id
        results = None
        try:
            if fresh:
                results, record, started = await self._play_fresh(seating, match_id)
            else:
                started = time.monotonic()
                results, record = await self._run(seating, match_id)
        finally:
            self.launcher.match_ends(seating.key, seating.lineup, begun, results)
        self._held[held] = record["meta"]["game_id"]
        self.host.played(record)
        return Played(seating, results, record, time.monotonic() - started)

    def release(self, match_ids: Iterable[str]) -> None:
        """Give the records of these played matches (their ids as given to :meth:`play`: by
        default the seatings' keys) to the referee's spectators. Ids of matches not played
        here, or already released, are ignored."""
        game_ids = [self._held.pop(m) for m in match_ids if m in self._held]
        if game_ids:
            self._release(game_ids)

    def release_all(self) -> None:
        """Give the records of every match played here to the referee's spectators."""
        self.release(list(self._held))

    async def _restart(self, lineup: Sequence[str]) -> list[str]:
        """Start again any launched bot of the line-up whose process ended, and wait (up to
        ``startup_s``) for it to connect; one that ends again before it connects is started
        again, up to its ``max_restarts``. Returns those dead for good."""
        assert self.launcher is not None, "use the executor in 'async with'"
        while True:
            dead = self.launcher.ensure_running(lineup)
            if dead:
                return dead
            launched = {name: name for name in set(lineup) if name in self.launcher.bots}
            failures = await self._wait_connected(launched, self.startup_s)
            if not any(self.launcher.not_running(name) for name in failures):
                return []  # connected, or still running: the match waits for it as for any bot

    async def _play_fresh(self, seating: Seating, match_id: str) -> tuple[dict[str, Any], dict[str, Any], float]:
        """The match, each launched bot of it in a new process that connects as ``NAME#ID`` (a random
        ID) with a token of this match alone; those processes, and all they started, are gone after it.
        Under :meth:`play_all`'s gate the processes start at once and the match waits for its turn to
        play (they start and connect while others play). Returns its results, record and when it began."""
        assert self.launcher is not None, "use the executor in 'async with'"
        names: dict[str, str] = {}
        over = False
        try:
            for bot in dict.fromkeys(seating.lineup):
                if bot not in self.launcher.bots:
                    continue
                seats = seating.lineup.count(bot)
                if (spare := await self._spare(bot, seats)) is not None:
                    names[bot] = spare
                    continue
                names[bot], token = self._instance(bot, seats)
                self.launcher.start_for_match(bot, names[bot], token, seats, waiting=self._gate is not None)
            outcome = await self._in_turn(seating, match_id, [names.get(bot, bot) for bot in seating.lineup],
                                          names.values())
            over = True
            return outcome
        finally:
            for name in names.values():
                self._dismiss(name)
            if over:  # their GameEnds, and a moment to end by themselves
                await self._let_go([n for n in names.values() if self.launcher.not_running(n) is None])
            for name in names.values():
                if name in self.launcher.for_match:
                    self.launcher.retire(name)

    def _instance(self, bot: str, seats: int) -> tuple[str, str]:
        """A name and a token of their own for a process of ``bot`` for one match (or the start-up
        check), let in at the referee for ``seats`` seats (:meth:`_admit`)."""
        name, token = instance_name(bot), secrets.token_hex(16)
        self._admit(name, token, seats)
        return name, token

    def _prepare(self, seating: Seating) -> None:
        """A match of ``seating`` waits for what matches being played hold: prepare, for each launched
        bot of it that has none, a process for its next match (:meth:`_spare`). It starts now, with
        the least CPU share, in a sandbox of its own, but runs only the referee's starter (the
        interpreter and the kit) until it is released, once every other process of its bot is gone:
        the start that bot's next match would wait for is done meanwhile. (Started in a thread: a
        start takes some ms, which the matches playing on this event loop need.)"""
        if self.launcher is None or self.isolation != Isolation.MATCH:
            return
        for bot in dict.fromkeys(seating.lineup):
            if bot in self.launcher.bots and bot not in self._spares and self.launcher.bots[bot].dead is None:
                seats = seating.lineup.count(bot)
                name, token = self._instance(bot, seats)
                started = asyncio.to_thread(self.launcher.start_for_match, bot, name, token, seats, True, True)
                self._spares[bot] = (name, seats, asyncio.ensure_future(started))

    async def _spare(self, bot: str, seats: int) -> str | None:
        """The process prepared for ``bot``, released now to play a match of ``seats`` seats (by the name
        it connects under); None if there is none, or none that fits (it is then discarded)."""
        assert self.launcher is not None, "use the executor in 'async with'"
        if (spare := self._spares.pop(bot, None)) is None:
            return None
        name, made_for, started = spare
        try:
            await started
        except Exception:  # it could not be started (no descriptor left...): the match starts its own
            self._dismiss(name)
            return None
        if made_for != seats or self.launcher.not_running(name) is not None:
            self._discard(name)
            return None
        self.launcher.release(name)
        if (waiting := next((s for s in self._pending if bot in s.lineup), None)) is not None:
            self._prepare(waiting)  # for the match after
        return name

    def _discard(self, name: str) -> None:
        """End a prepared process that will not be released."""
        assert self.launcher is not None, "use the executor in 'async with'"
        self._dismiss(name)
        if name in self.launcher.for_match:
            self.launcher.discard(name)

    async def _discard_spares(self) -> None:
        """Discard every prepared process not released (at the end of :meth:`play_all`), each once
        its start is done. (A run cancelled meanwhile leaves the rest to the launcher's
        ``stop_all``; one whose start is still under way ends with the runner: its token's pipe closes.)"""
        spares, self._spares = list(self._spares.values()), {}
        for name, _, started in spares:
            with contextlib.suppress(Exception):
                await started
            self._discard(name)

    async def _in_turn(self, seating: Seating, match_id: str, sessions: Sequence[str],
                       launched: Iterable[str] = ()) -> tuple[dict[str, Any], dict[str, Any], float]:
        """:meth:`_run` once the gate lets the match play (at once outside :meth:`play_all`), its ``launched``
        processes given their CPU share then (waiting, they had the least); with when it began."""
        async with self._gate or contextlib.nullcontext():
            if self.launcher is not None:
                for name in launched:
                    self.launcher.playing(name)
            started = time.monotonic()
            results, record = await self._run(seating, match_id, sessions)
        return results, record, started

    def _holds(self, seating: Seating) -> set[tuple[str, Any]]:
        """What a match holds while it plays, which no other match may hold at the same time
        (:meth:`play_all`). With isolation = "match": its deal set, and each launched bot of its
        line-up, from when the match is taken (its processes start) until they are gone; otherwise nothing."""
        if self.isolation != Isolation.MATCH:
            return set()
        launched = {b.name for b in self.bots if not b.external}
        return {("deal set", seating.deal_set), *(("bot", bot) for bot in set(seating.lineup) if bot in launched)}

    async def play_all(self, seatings: Iterable[Seating], concurrency: int,
                       on_played: Callable[[Played], bool | None],
                       on_dead: Callable[[Seating, BotsDead], None] | None = None) -> None:
        """Play the seatings ``concurrency`` at a time, taken in order, calling ``on_played``
        as each ends. When ``on_played`` returns True, no further match starts and those
        playing are cancelled. A :class:`BotsDead` goes to ``on_dead`` (the match is skipped)
        or, without one, stops everything and is raised. ``seatings`` may be a generator:
        it is read as workers become free (a little ahead, see below).

        With isolation = "match" no two processes of one launched bot run the bot at once, so
        that none can tell another what it was dealt (locks, or any object two processes can
        share through a file both see: docs/security.md): no two matches that share a launched
        bot play at the same time, and a match's processes, and all they left, are gone before
        :meth:`play` returns. No two matches of one deal set play at once either (they hold the
        same cards). A free worker takes the first seating, within :data:`LOOKAHEAD` of the
        next, that holds nothing a match being played holds (:meth:`_holds`). With isolation =
        "match" the next ``concurrency`` matches are prepared meanwhile (:meth:`_ahead`): they
        hold what they will play with, and their processes start, while these play. And a bot
        whose next match waits for it gets a process prepared meanwhile (:meth:`_prepare`), which
        runs only the referee's starter until that match takes it, once the last one is gone."""
        todo = iter(seatings)
        stopped = False
        pending: list[Seating] = []  # read from ``todo``, waiting for what they hold to be free
        self._pending = pending
        held: collections.Counter[tuple[str, Any]] = collections.Counter()  # what the matches playing hold

        def free(seating: Seating) -> bool:
            return not any(held[key] for key in self._holds(seating))

        freed = asyncio.Event()  # set when a match ends

        def take() -> Seating | None:
            for i, waiting in enumerate(pending):
                if free(waiting):
                    return pending.pop(i)
            while len(pending) < LOOKAHEAD and (seating := next(todo, None)) is not None:
                if free(seating):
                    return seating
                pending.append(seating)
                self._prepare(seating)
            return None

        async def next_seating() -> Seating | None:
            while (seating := take()) is None and pending:
                freed.clear()  # every pending seating waits for a match being played: wait for one to end
                await freed.wait()
            if seating is not None:
                held.update(self._holds(seating))
            return seating

        def cancelled() -> bool:
            """True once this worker's task was asked to stop, even where the request was lost on the
            way (Python 3.11's ``asyncio.wait_for`` can swallow one that meets its result), so that
            the other workers, cancelled, do not wait for it to play every match left."""
            task = asyncio.current_task()
            return stopped or (task is not None and task.cancelling() > 0)

        async def worker() -> None:
            nonlocal stopped
            # checked before every match: a worker whose cancellation was lost still stops here
            while not cancelled() and (seating := await next_seating()) is not None:
                try:
                    played = await self.play(seating)
                except BotsDead as dead:
                    if on_dead is None:
                        raise
                    on_dead(seating, dead)
                    continue
                finally:
                    held.subtract(self._holds(seating))
                    freed.set()
                if on_played(played):
                    stopped = True
                    raise _Stop

        ahead = self._ahead(concurrency)
        self._gate = asyncio.Semaphore(concurrency) if ahead else None
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(concurrency + ahead):
                    group.create_task(worker())
        except BaseExceptionGroup as failed:
            errors = [e for e in failed.exceptions if not isinstance(e, _Stop)]
            if errors:
                raise errors[0] from None
        finally:
            stopped = True
            self._gate = None
            self._pending = []
            await self._discard_spares()

    def _ahead(self, concurrency: int) -> int:
        """How many matches :meth:`play_all` prepares while ``concurrency`` play: with isolation =
        "match", as many again (their processes start and connect meanwhile, so that a match need not
        wait for its bots' interpreters; what they hold is held from then, :meth:`_holds`); else none."""
        launched = any(not b.external for b in self.bots)
        return concurrency if self.isolation == Isolation.MATCH and launched else 0
