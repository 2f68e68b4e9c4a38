"""The executor interface: launched bots, and matches played on a referee."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from referee.runner import Clock
from referee.tournament import sandbox
from referee.tournament.config import BotSpec
from referee.tournament.launcher import Launcher
from referee.tournament.sandbox import Sandbox
from referee.tournament.schedule import Seating


@dataclass(frozen=True)
class Played:
    """One finished match: its seating, results (scores, placing, faults), record, and wall time."""

    seating: Seating
    results: dict[str, Any]
    record: dict[str, Any]
    seconds: float


class BotsDead(Exception):
    """Launched bots that died too often to be started again: {name: why}."""

    def __init__(self, reasons: Mapping[str, str]):
        super().__init__("; ".join(f"bot {name} {why}" for name, why in sorted(reasons.items())))
        self.reasons = dict(reasons)


def seat_capacity(seatings: Sequence[Seating], concurrency: int) -> dict[str, int]:
    """Seats a launched bot must play at once: its most seats in one match x concurrency."""
    most: dict[str, int] = {}
    for s in seatings:
        for bot in set(s.lineup):
            most[bot] = max(most.get(bot, 0), s.lineup.count(bot))
    return {bot: n * concurrency for bot, n in most.items()}


class _Stop(Exception):
    """Raised in a worker of :meth:`Executor.play_all` to stop the others."""


class Executor(ABC):
    """Plays matches of one game between one set of bots.

    ``async with executor: played = await executor.play(seating)``. Entering
    opens the referee (:meth:`_open`) and launches every bot that is not
    external with ``capacity[name]`` seats, in the sandbox that ``sandbox``
    (``[limits] sandbox``: auto, bwrap or none) resolves to, hiding ``hide``
    (the output directory, the tournament file) from them; a launched bot that
    died is started again before its next match, up to its ``max_restarts``.
    Subclasses say where the referee is and how a match is started there.
    """

    def __init__(self, game: str, options: Mapping[str, Any], clock: Clock, bots: Sequence[BotSpec],
                 capacity: Mapping[str, int], log_dir: Path | None = None, connect_timeout: float = 30.0,
                 sandbox: str = "auto", hide: Sequence[Path] = (), isolation: str = "tournament"):
        self.game, self.options, self.clock = game, dict(options), clock
        #: "match": every launched bot plays each match in a fresh process of its own (see :meth:`play`)
        self.isolation = isolation
        self._instances = itertools.count(1)
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

    # --- what an implementation provides --------------------------------------------

    @abstractmethod
    async def _open(self, stack: contextlib.AsyncExitStack) -> str:
        """Make the referee ready (closing it through ``stack``); returns the address launched bots
        connect to. In a bubblewrap sandbox (``self.sandbox``) that is a Unix socket in
        ``self.socket_dir``, seen by the bots at :data:`~referee.tournament.sandbox.SOCKET_DIR`."""

    @abstractmethod
    async def _run(self, seating: Seating, match_id: str,
                   sessions: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Play one match on the referee; returns its results and record. ``sessions``: the
        names the seats' bots connect under, where they differ from the line-up's."""

    def _admit(self, name: str, token: str) -> None:
        """Let a process started for one match connect as ``name`` with ``token``."""
        raise NotImplementedError(f"{type(self).__name__} cannot start a bot for one match")

    def _dismiss(self, name: str) -> None:
        """``name``'s match is over: it may not connect again."""

    async def _open_doors(self, stack: contextlib.AsyncExitStack,
                          open_door: Callable[[Path], Awaitable[None]]) -> str:
        """Each launched bot's own way to the referee: ``open_door(path)`` listens on the Unix
        socket ``path`` in ``socket_dir/NAME`` (bound into that bot's sandbox alone, at
        :data:`~referee.tournament.sandbox.SOCKET_DIR`); returns the address the bots are given."""
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

    def max_connections(self) -> int:
        """Connections one sandboxed bot may hold to the referee at once: the kit opens one per
        process, and with isolation = "match" a bot has up to ``capacity`` processes at once."""
        return 16 + max(self.capacity.values(), default=1)

    def _bot_ended(self, name: str) -> None:
        """A launched bot's process ended (called from a launcher thread): nothing to do by default."""

    # --- the shared part ------------------------------------------------------------

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        self._stack = stack
        try:
            self.sandbox = sandbox.resolve(self.sandbox_mode)
            address = await self._open(stack)
            self.launcher = Launcher(self.bots, address, self.tokens, self.capacity, self.log_dir, self._bot_ended,
                                     box=self.sandbox, socket_dir=self.socket_dir, hide=self.hide)
            stack.callback(self.launcher.stop_all)  # runs before the referee closes
            if self.isolation != "match":
                self.launcher.start_all()
        except BaseException:
            await stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._stack is not None:
            await self._stack.aclose()

    def gone(self, bot: str) -> bool:
        """Whether a launched bot died and will not come to play (to stop waiting for it)."""
        return self.launcher is not None and self.launcher.gone(bot)

    async def play(self, seating: Seating, match_id: str | None = None) -> Played:
        """Play one match. ``match_id`` is its id at the referee: by default the seating's key;
        ``""`` lets the referee choose one. Raises :class:`BotsDead` (without playing) if a bot
        of the line-up died more than its ``max_restarts`` times. With isolation = "match" the
        launched bots play it in processes started for it alone (:meth:`_play_fresh`)."""
        assert self.launcher is not None, "use the executor in 'async with'"
        fresh = self.isolation == "match"
        dead = self.launcher.dead(seating.lineup) if fresh else self.launcher.ensure_running(seating.lineup)
        if dead:
            status = self.launcher.status()
            raise BotsDead({name: status[name]["dead"] for name in dead})
        started = time.monotonic()
        match_id = seating.key if match_id is None else match_id
        if fresh:
            results, record = await self._play_fresh(seating, match_id)
        else:
            results, record = await self._run(seating, match_id)
        return Played(seating, results, record, time.monotonic() - started)

    async def _play_fresh(self, seating: Seating, match_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The match, each launched bot of it in a new process that connects as ``NAME#N`` with a
        token of this match alone; those processes, and all they started, are gone after it."""
        names = {bot: f"{bot}#{next(self._instances)}" for bot in dict.fromkeys(seating.lineup)
                 if bot in self.launcher.bots}  # '#' is in no bot's name
        try:
            for bot, name in names.items():
                token = secrets.token_hex(16)
                self._admit(name, token)
                self.launcher.start_for_match(bot, name, token, seating.lineup.count(bot))
            return await self._run(seating, match_id, [names.get(bot, bot) for bot in seating.lineup])
        finally:
            for name in names.values():
                self._dismiss(name)
                if name in self.launcher.for_match:
                    self.launcher.retire(name)

    async def play_all(self, seatings: Iterable[Seating], concurrency: int,
                       on_played: Callable[[Played], bool | None],
                       on_dead: Callable[[Seating, BotsDead], None] | None = None) -> None:
        """Play the seatings ``concurrency`` at a time, taken in order, calling ``on_played``
        as each ends. When ``on_played`` returns True, no further match starts and those
        playing are cancelled. A :class:`BotsDead` goes to ``on_dead`` (the match is skipped)
        or, without one, stops everything and is raised. ``seatings`` may be a generator:
        it is read one seating at a time, as workers become free."""
        todo = iter(seatings)
        stopped = False

        async def worker() -> None:
            nonlocal stopped
            # checked before every match: a worker whose cancellation was lost still stops here
            while not stopped and (seating := next(todo, None)) is not None:
                try:
                    played = await self.play(seating)
                except BotsDead as dead:
                    if on_dead is None:
                        raise
                    on_dead(seating, dead)
                    continue
                if on_played(played):
                    stopped = True
                    raise _Stop

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(concurrency):
                    group.create_task(worker())
        except BaseExceptionGroup as failed:
            errors = [e for e in failed.exceptions if not isinstance(e, _Stop)]
            if errors:
                raise errors[0] from None
        finally:
            stopped = True
