"""Starts the bot processes of a tournament, contains them, keeps them running.

A command whose first word is ``python`` or ``python3`` runs with the
referee's own interpreter (so a bot sees the packages the referee sees).
Each launched bot gets ``--address ADDRESS --name NAME --token-fd FD
--capacity N`` appended to its command: its token comes through a pipe it
inherits as descriptor FD (written, then closed, by the launcher), never on
a command line or in an environment. (A ``protocol = "stdio"`` bot's command
runs as it is, under the stdio relay, :mod:`referee.hosting.stdio`, which
takes those arguments, in the same sandbox and limits.) It runs in its own
session, in the :class:`~referee.hosting.sandbox.Sandbox` of the run (bubblewrap, its
address then the referee's Unix socket inside it), with its
:class:`~referee.competition.config.Limits` set before exec, and at most
``log_kb`` of its stdout and stderr kept in ``logs/NAME.log``, every control
character escaped (:mod:`referee.untrusted`; the rest is counted, not kept; a
write the disk refuses is kept in :attr:`Launcher.write_failed`, and the run
stops before its next match). A bot that has died is started again before its next
match (as cutechess's ``-recover``), once every process it left is gone; one
that died more than ``max_restarts`` times is marked dead, with the reason,
and its matches are skipped.

Every match a launched bot plays is marked in its log, in both isolations: a line
``--- match ID seat S: begins at TIME`` before it (before its process starts, under
``isolation = "match"``) and ``--- match ID seat S: ends ...`` after it (after its
process stopped), for each of its seats, ID the match's id (its seating's key). Where
they are, by byte offset, goes to ``logs/matches.jsonl`` (:data:`MATCH_INDEX`): the
pages link a match's log lines from there, not from the log, whose other lines the bot
writes itself and could make look like markers.
"""

from __future__ import annotations

import contextlib
import errno
import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypedDict

from referee import files, hostload
from referee.hosting import sandbox, versions
from referee.hosting.sandbox import ProcessTree, Sandbox
from referee.model import BotProtocol, BotSpec, SandboxMode
from referee.untrusted import BytesEscaper, capped

#: variables of the runner's environment a bot launched without a sandbox must not inherit
SECRET_VARIABLES = ("REFEREE_ADMIN_TOKEN",)
#: in the log directory: one JSON line per match and seat of a launched bot, where its markers are
#: (``{"match", "bot", "seat", "log", "begins", "ends", "played"}``: the log's name, and byte offsets
#: of the start of its begin line and of the end of its end line)
MATCH_INDEX = "matches.jsonl"

#: the most characters of a line of a bot's log quoted in an error (its last lines, when it fails to start)
LOG_LINE_CHARS = 300

#: what starts a ``protocol = "stdio"`` bot: the relay, with the referee's interpreter (-P: not
#: from the bot's directory, whatever modules it holds), in the bot's sandbox; the bot's command follows
STDIO_RELAY = (sys.executable, "-P", "-m", "referee.hosting.stdio")

#: what a process started for one match (isolation = "match") runs until its token comes: the referee's
#: own code, isolated from everything of the bot's (-I), :mod:`referee.hosting.starter`; a prepared
#: process's token comes once the last process of its bot is gone, any other's at once
STARTER = (sys.executable, "-I", "-m", "referee.hosting.starter", "--")

#: seconds a bot's process has, once the referee has sent its last GameEnd and ended its session,
#: to end by itself before it is stopped (after each match with isolation = "match", at the end
#: of the run otherwise); the bot kit ends at once
GAME_END_GRACE_S = 1.0


class BotStatus(TypedDict):
    """A launched bot's line of :meth:`Launcher.status` (the store's meta key ``launcher``)."""

    starts: int
    exits: list[str]   # how each process ended
    dead: str | None   # why it is no longer started
    dropped_bytes: int  # output past its log's cap


@dataclass
class Launched:
    spec: BotSpec
    #: the name it connects under, its token and its seats: the bot's own, or one match's
    name: str = ""
    token: str = ""
    capacity: int = 1
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    exits: list[str] = field(default_factory=list)
    dead: str | None = None          # why it is no longer started
    process_seen: bool = False       # the current process's end is already in exits
    dropped_bytes: int = 0
    tree: ProcessTree | None = None  # the current process's cgroups, if any
    waiting: bool = False            # started for a match that waits for its turn (its CPU share the least)
    ended: str | None = None         # how the current process ended, once known
    released: bool = True            # False: a prepared process whose token is withheld (the bot has not run)
    withheld: int | None = None      # a prepared process's token's pipe, until it is released
    retired: str | None = None       # why the launcher stopped it (isolation = "match": its match is over)
    finished: bool = False           # the referee ended its session: its end from now on is no death
    _pump: threading.Thread | None = None

    def __post_init__(self) -> None:
        self.name = self.name or self.spec.name


def describe_exit(code: int | None, limit_hit: str | None = None) -> str:
    """How a bot's process ended (Popen's return code), with the whole-bot limit it hit, if any."""
    if code is None:
        return "could not start"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (file size limit)", "SIGKILL": " (killed; memory?)",
                "SIGSEGV": " (crashed)"}.get(name, "")
        if limit_hit:
            hint = f" ({limit_hit})"
        return f"killed by {name}{hint}"
    return f"exit code {code}" + (f" ({limit_hit})" if limit_hit else "")


class Launcher:
    def __init__(self, bots: Iterable[BotSpec], address: str, tokens: Mapping[str, str], capacity: Mapping[str, int],
                 log_dir: Path | None, on_exit: Callable[[str], None] | None = None, *,
                 box: Sandbox = Sandbox(SandboxMode.NONE, cgroups=False), socket_dir: Path | None = None,
                 hide: Iterable[Path] = (), session_tag: str | None = None,
                 snapshots: versions.Snapshots | None = None):
        """``log_dir`` None: the bots' output goes to this process's stderr. ``on_exit(name)`` is
        called (from a thread of the launcher's) each time a bot's process has ended. In a
        bubblewrap ``box``, ``address`` is the one inside it: each bot's own door to the referee,
        the directory ``socket_dir/NAME``, is bound at /run/referee; ``hide`` lists what bots must not see besides
        each other's directories (the output directory, the tournament file). With ``session_tag``,
        each bot connects as ``NAME#TAG`` (its run's own sessions on a shared referee). ``snapshots``:
        the copies of the bots' files taken as their versions were hashed, which their sandboxes
        show in place of their directories (None: a run that keeps no versions shows the directories)."""
        self.address = address
        self.log_dir = log_dir
        self.on_exit = on_exit
        self.box = box
        self.socket_dir = socket_dir
        self.hide = tuple(hide)
        self.snapshots = snapshots
        self.bots = {b.name: Launched(b, name=f"{b.name}#{session_tag}" if session_tag else "", token=tokens[b.name],
                              capacity=capacity.get(b.name, 1))
                     for b in bots if not b.external}
        #: processes started for one match (isolation = "match"), by the name they connect under
        self.for_match: dict[str, Launched] = {}
        self._lock = threading.Lock()
        #: a write to a bot's log that failed (a full disk): the run must end (:class:`~referee.files.WriteFailed`)
        self.write_failed: files.WriteFailed | None = None
        self._stopping = False
        self._trees = itertools.count(1)  # a unique name for each process tree's cgroups

    def command(self, bot: Launched) -> list[str]:
        """The bot's command with the launcher's arguments (its token comes through descriptor 3); a
        stdio bot's command as it is, after the stdio relay's, which takes those arguments instead."""
        spec = bot.spec
        connect = ["--address", self.address, "--name", bot.name, "--token-fd", str(sandbox.TOKEN_FD),
                   "--capacity", str(bot.capacity)]
        own = [_program(spec), *spec.command[1:]]
        command = [*STDIO_RELAY, *connect, "--", *own] if spec.protocol == BotProtocol.STDIO else [*own, *connect]
        command = sandbox.with_env(command, spec.env)  # its env for its command alone
        if self.for_match.get(bot.name) is bot:  # every process for one match starts the same way, prepared or not
            command = [*STARTER, *command]
        if not self.box.isolated:
            return command
        others = versions.apart(spec, [b.spec for b in self.bots.values()])
        door = self.socket_dir / spec.name if self.socket_dir is not None else None  # the bot's own socket
        snapshot = self.snapshots.trees.get(spec.name) if self.snapshots is not None else None
        return sandbox.bwrap_command(command, cwd=Path(spec.cwd or os.getcwd()), socket_dir=door, hide=self.hide,
                                     apart=others, scratch_mb=spec.limits.file_mb,
                                     staged=self.box.staged, data=[Path(p) for p in spec.data], programs=own[:1],
                                     files=spec.files, command=spec.command, exclude=spec.exclude, snapshot=snapshot)

    def environment(self, spec: BotSpec) -> dict[str, str]:
        """What the bot's process starts with: bubblewrap sets the sandbox's own environment
        (only the locale here); without one, the runner's minus its secrets. The bot's ``env`` is
        set just before its command (:func:`~referee.hosting.sandbox.with_env`), so that no step of
        the referee's before it (the prelude, a prepared process's starter) runs with it."""
        if self.box.isolated:
            return {"LANG": "C.UTF-8"}
        return {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES}

    def _log(self, bot: Launched) -> BinaryIO:
        """Its log file; without a log directory, this process's stderr (where only its own output
        and an end that is not the launcher's doing are written: no start or stop lines)."""
        if self.log_dir is None:
            return open(os.dup(2), "ab")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return open(self.log_dir / f"{bot.spec.name}.log", "ab")

    def _start(self, bot: Launched) -> None:
        try:
            log = self._log(bot)
        except OSError as err:  # e.g. no descriptor left: this start fails, the run goes on
            bot.starts += 1
            bot.process = None
            bot.exits.append(f"cannot start: cannot open its log ({err.strerror or err})")
            return
        if bot.released:  # a prepared process's start is its release's
            if self.log_dir is not None:
                self._write(log, f"--- {self._start_line(bot.spec, bot.starts + 1)}\n".encode())
            bot.starts += 1
        bot.process_seen = False
        bot.ended = None
        limits = bot.spec.limits
        bot.tree = ProcessTree.make(f"referee-{os.getpid()}-{next(self._trees)}-{bot.spec.name}", limits,
                                    bot.capacity, bot.waiting) if self.box.cgroups or self.box.cpu else None
        token_fd, writer = os.pipe()  # the token, in a pipe only the bot inherits
        try:
            if bot.released:
                os.write(writer, f"{bot.token}\n".encode())
                os.close(writer)
            else:  # written when it is released
                bot.withheld = writer
            _check_program(_program(bot.spec), bot.spec.cwd)
            command = self.command(bot)
            _check_program(command[0], bot.spec.cwd)
            command = sandbox.limited(command, limits, bot.tree, token_fd, scratch_mb=limits.file_mb,
                                      staged=self.box.isolated and self.box.staged, own_uid=self.box.own_uid)
            bot.process = subprocess.Popen(command, cwd=bot.spec.cwd,
                                           env=self.environment(bot.spec), stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True, pass_fds=(token_fd,))
        except (OSError, subprocess.SubprocessError, sandbox.PathRefused) as err:
            if bot.released:  # a prepared one is not needed: the match starts its bot as it would have
                self._write(log, f"--- cannot start: {err}\n".encode())
            with contextlib.suppress(OSError):
                log.close()
            bot.process = None
            if bot.withheld is not None:
                os.close(bot.withheld)
                bot.withheld = None
            why = getattr(err, 'strerror', None) or err
            if isinstance(err, CommandNotFound):
                why = f"command not found: {bot.spec.command[0]}"
            bot.exits.append(f"cannot start: {why}")
            if bot.tree is not None:
                bot.tree.remove()
            return
        finally:
            os.close(token_fd)
        bot._pump = threading.Thread(target=self._pump, args=(bot, bot.process, log), daemon=True)
        bot._pump.start()
        if self.on_exit is not None:
            threading.Thread(target=self._watch, args=(bot.name, bot.process), daemon=True).start()

    @staticmethod
    def _start_line(spec: BotSpec, number: int) -> str:
        """What a bot's ``number``-th start writes in its log, after ``--- ``."""
        return f"{spec.name} start #{number} at {time.strftime('%Y-%m-%d %H:%M:%S')}: {' '.join(spec.command)}"

    def _watch(self, name: str, process: subprocess.Popen[bytes]) -> None:
        assert self.on_exit is not None  # watched only with one
        process.wait()
        self.on_exit(name)

    def _pump(self, bot: Launched, process: subprocess.Popen[bytes], log: BinaryIO) -> None:
        """Copy the bot's output to its log, escaped, up to the cap; count the rest."""
        cap = bot.spec.limits.log_kb * 1024
        escaper = BytesEscaper()  # no raw control character reaches the log (docs/security.md)
        stdout = process.stdout
        assert isinstance(stdout, io.BufferedReader)  # stdout=PIPE, buffered (Popen's default)
        try:
            full = False  # past the cap: what comes is counted, not escaped (no work for a flood)
            while raw := stdout.read1(65536):
                if full:
                    bot.dropped_bytes += len(raw)
                    continue
                chunk = escaper.feed(raw)
                with self._lock:
                    room = max(0, cap - log.tell()) if log.seekable() else cap
                    self._write(log, chunk[:room])
                    bot.dropped_bytes += max(0, len(chunk) - room)
                    full = log.seekable() and len(chunk) >= room
            process.wait()
            if bot.retired:
                note = f"--- {bot.retired}"
            elif bot.finished:
                note = f"--- ended after its session: {self._ended(bot, process)}"
            else:
                note = f"--- ended: {self._ended(bot, process)}"
            if bot.dropped_bytes:
                note += f"; {bot.dropped_bytes} bytes of output past the {bot.spec.limits.log_kb} KB cap not kept"
            tail = escaper.end()
            if not bot.released:  # prepared and never released: the bot never ran, nothing to say
                pass
            elif self.log_dir is not None or not (bot.retired or bot.finished):
                tail += (note + "\n").encode()
            self._write(log, tail)
        finally:
            with contextlib.suppress(OSError):  # what a full disk refused is already noted
                log.close()

    def _write(self, log: BinaryIO, data: bytes) -> None:
        """Write to a bot's log; a write the system refuses (a full disk) is kept in
        :attr:`write_failed`, and nothing more is written to any log."""
        if self.write_failed is not None:
            return
        try:
            log.write(data)
            log.flush()
        except OSError as err:
            self.write_failed = files.WriteFailed.of(err, getattr(log, "name", "a bot's log"))

    def _ended(self, bot: Launched, process: subprocess.Popen[bytes]) -> str:
        """How the bot's current ``process`` ended (computed once, while its cgroups still tell which limit it hit)."""
        with self._lock:
            if bot.process is process:
                if bot.ended is None:
                    code = sandbox.exit_status(process.returncode, self.box.isolated)
                    tree = bot.tree  # once: _clear may drop it meanwhile
                    bot.ended = describe_exit(code, tree.limit_hit() if tree is not None else None)
                return bot.ended
        return describe_exit(sandbox.exit_status(process.returncode, self.box.isolated))

    def _clear(self, bot: Launched) -> None:
        """Everything the bot's ended process left behind is killed: its process group and
        session, and with cgroups every process of its tree (wherever it went, a new session
        included); its output pump ends."""
        if bot.process is not None:
            _signal_group(bot.process, signal.SIGKILL)
            sandbox.kill_session(bot.process.pid)
        if bot.tree is not None:
            bot.tree.remove()
            bot.tree = None
        if bot._pump is not None:
            bot._pump.join(timeout=2)

    def start_all(self) -> None:
        for bot in self.bots.values():
            self._start(bot)

    def ensure_running(self, names: Iterable[str]) -> list[str]:
        """Start again any of these bots whose process has ended; the names of
        those that are dead for good (more than max_restarts deaths)."""
        dead = []
        for name in set(names):
            bot = self.bots.get(name)
            if bot is None:
                continue
            if bot.dead is None and (bot.process is None or bot.process.poll() is not None):
                if bot.process is not None and not bot.process_seen:
                    bot.exits.append(self._ended(bot, bot.process))
                    bot.process_seen = True
                self._clear(bot)
                if len(bot.exits) > bot.spec.limits.max_restarts:
                    bot.dead = f"died {len(bot.exits)} times (last: {bot.exits[-1]}); not restarted"
                else:
                    self._start(bot)
            if bot.dead is not None:
                dead.append(name)
        return sorted(dead)

    def running(self) -> list[str]:
        """The long-lived launched bots whose process is running."""
        return [name for name, b in self.bots.items() if b.process is not None and b.process.poll() is None]

    def finishing(self, names: Iterable[str]) -> None:
        """These processes (by the name they connect under) have played what they were started for:
        their end, from now on, is not a death."""
        for name in names:
            bot = self.bots.get(name) or self.for_match.get(name)
            if bot is not None:
                bot.finished = True

    def withdraw(self, name: str, why: str) -> None:
        """A bot out of the run (it did not start): never started again."""
        if name in self.bots:
            self.bots[name].dead = why

    def gone(self, name: str) -> bool:
        """A launched bot (or a process started for one match, by its name) whose process has
        ended: it will not connect until started again."""
        bot = self.bots.get(name) or self.for_match.get(name)
        return bot is not None and (bot.process is None or bot.process.poll() is not None)

    def not_running(self, name: str) -> str | None:
        """Why a launched bot (or a process started for one match) is not running: it could not
        start, or how its process ended; None while it runs."""
        bot = self.bots.get(name) or self.for_match.get(name)
        if bot is None:
            return None
        if bot.process is None:
            return bot.exits[-1] if bot.exits else "not started"
        if bot.process.poll() is None:
            return None
        return self._ended(bot, bot.process)

    def meter(self, name: str) -> hostload.BotCpu | None:
        """The processes of the launched bot (or process started for one match) that connects as
        ``name``, read as the kernel counts their threads' time: its cgroups' threads, or without
        them its process tree's; None for a bot not launched here."""
        bot = self.bots.get(name) or self.for_match.get(name) or \
            next((b for b in self.bots.values() if b.name == name), None)
        return hostload.BotCpu(lambda: _threads(bot)) if bot is not None else None

    def log_tail(self, name: str, lines: int = 10) -> tuple[Path | None, list[str]]:
        """The bot's log file and its last ``lines`` lines (none without a log directory: its
        output went to this process's stderr). Waits a moment for an ended process's last output."""
        bot = self.bots.get(name) or self.for_match.get(name)
        if bot is None or self.log_dir is None:
            return None, []
        if bot._pump is not None and bot.process is not None and bot.process.poll() is not None:
            bot._pump.join(timeout=2)
        path = self.log_dir / f"{bot.spec.name}.log"
        return path, tail_of(path, lines) or []

    # --- matches marked in the logs ----------------------------------------------------

    def _mark(self, bot: str, line: str) -> int | None:
        """Append one line of the runner's to ``bot``'s log (under the output pump's lock, so that it
        falls between two pieces of the bot's output); returns the offset where it starts, None if
        it could not be written (a marker never stops a match). The markers are not counted
        against the log's cap."""
        if self.log_dir is None:  # no logs: nothing to mark (match_begins marks none)
            return None
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            with self._lock, open(self.log_dir / f"{bot}.log", "ab") as log:
                start = log.tell()
                log.write(f"--- {line}\n".encode())
                return start
        except OSError:
            return None

    def match_begins(self, match: str, lineup: Sequence[str]) -> dict[int, int]:
        """Mark in the log of each launched bot of ``lineup`` that match ``match`` begins, a line
        per seat it holds; returns where each seat's line starts (none without a log directory)."""
        if self.log_dir is None:
            return {}
        at = time.strftime("%Y-%m-%d %H:%M:%S")
        marks = {seat: self._mark(bot, f"match {match} seat {seat}: begins at {at}")
                 for seat, bot in enumerate(lineup) if bot in self.bots}
        return {seat: at for seat, at in marks.items() if at is not None}

    def match_ends(self, match: str, lineup: Sequence[str], begun: Mapping[int, int],
                   results: Mapping[str, Any] | None) -> None:
        """Mark that match ``match`` is over for each seat ``begun`` marked: with the seat's score,
        place and faults from its ``results``, or as cut short (None: it was not played out); and
        index both markers in :data:`MATCH_INDEX`."""
        if not begun or self.log_dir is None:  # begun: marked in the logs, so there are logs
            return
        entries = []
        for seat, begins in begun.items():
            bot = lineup[seat]
            if results is None:
                how = "cut short, not stored"
            else:
                faults = (results.get("faults") or [{}] * len(lineup))[seat]
                how = (f"score {results['scores'][seat]}, place {results['placing'][seat]}, faults "
                       + (", ".join(f"{kind} {n}" for kind, n in faults.items() if n) or "none"))
            line = f"match {match} seat {seat}: ends ({how})"
            if (at := self._mark(bot, line)) is not None:
                entries.append({"match": match, "bot": bot, "seat": seat, "log": f"{bot}.log", "begins": begins,
                                "ends": at + len(f"--- {line}\n".encode()), "played": results is not None})
        try:
            with self._lock, open(self.log_dir / MATCH_INDEX, "a", encoding="utf-8") as index:
                index.writelines(json.dumps(e) + "\n" for e in entries)
        except OSError:
            pass  # the markers stay in the logs; the pages link no lines for this match

    # --- a fresh process for every match (isolation = "match") --------------------

    def dead(self, names: Iterable[str]) -> list[str]:
        """Those of these bots that died too often to be started again."""
        return sorted(name for name in set(names) if name in self.bots and self.bots[name].dead is not None)

    def start_for_match(self, bot: str, name: str, token: str, capacity: int, waiting: bool = False,
                        held: bool = False) -> None:
        """A new process of ``bot`` for one match, with a fresh scratch: it connects as ``name``
        with ``token`` for ``capacity`` seats; :meth:`retire` ends it. ``waiting``: the match waits
        for its turn while others play, and until :meth:`playing` the process has the least CPU share
        (where the bots have one): only what the bots playing leave, so that it slows none of them.
        ``held``: a process prepared for the bot's next match, which may start while another of the
        bot's plays: it runs only the referee's starter (:mod:`referee.hosting.starter`: the
        interpreter and the kit) until :meth:`release` gives it its token; :meth:`discard` ends it
        unreleased. Its start (in the log, in the counts) is its release."""
        owner = self.bots[bot]
        one = Launched(owner.spec, name=name, token=token, capacity=capacity, starts=owner.starts, waiting=waiting,
                       released=not held)
        self.for_match[name] = one
        self._start(one)
        if not held:
            owner.starts = one.starts
            owner.exits += one.exits  # a process that could not start

    def release(self, name: str) -> None:
        """Give the prepared process ``name`` its token: from now on it runs the bot. Only once no
        other process of its bot is there but prepared ones (the caller's to see to: raises
        RuntimeError otherwise), so that no two processes of one bot ever run the bot at once."""
        one = self.for_match[name]
        if one.withheld is None:
            raise RuntimeError(f"{name} was not started held, or is released already")
        running = sorted(n for n, b in list(self.for_match.items())  # (others start in threads)
                         if n != name and b.spec is one.spec and b.released)
        if running:
            raise RuntimeError(f"{name} released while {', '.join(running)} of its bot is there")
        owner = self.bots[one.spec.name]
        one.released, writer, one.withheld = True, one.withheld, None
        one.starts = owner.starts = owner.starts + 1
        self._mark(one.spec.name, self._start_line(one.spec, one.starts))
        try:
            os.write(writer, f"{one.token}\n".encode())
        except OSError:
            pass  # it has ended: the match finds it not connected, and its end is a death
        finally:
            os.close(writer)

    def discard(self, name: str) -> None:
        """End a prepared process that was never released (the bot never ran in it): no start, no
        death, nothing in its bot's log. Its token's pipe closes (its starter ends with code 0) and
        it is stopped with everything it started."""
        one = self.for_match.pop(name)
        if one.released:
            raise RuntimeError(f"{name} was released: retire it")
        if one.withheld is not None:
            os.close(one.withheld)
            one.withheld = None
        self._stop(one, "prepared, not needed")
        self._clear(one)

    def playing(self, name: str) -> None:
        """The match of the process started for it as ``name`` plays now: its CPU share as any bot's."""
        one = self.for_match.get(name)
        if one is not None and one.waiting:
            one.waiting = False
            if one.tree is not None:
                one.tree.playing(one.capacity)

    def retire(self, name: str, why: str = "stopped after its match") -> None:
        """End the process started for one match (``why``, for its log) and everything it left: when
        this returns, none of its processes is alive (in bubblewrap: its pid namespace is gone;
        with cgroups: its groups are empty). If it had died during the match, that death is the
        bot's (past ``max_restarts`` deaths it is started no more). A prepared process never
        released is discarded (:meth:`discard`)."""
        if not self.for_match[name].released:
            self.discard(name)
            return
        one = self.for_match.pop(name)
        owner = self.bots[one.spec.name]
        if one.process is not None:
            if one.process.poll() is not None:
                if not one.finished:
                    owner.exits.append(self._ended(one, one.process))
            else:
                self._stop(one, why)
        self._clear(one)
        limit = owner.spec.limits.max_restarts
        if owner.dead is None and len(owner.exits) > limit:
            owner.dead = f"died {len(owner.exits)} times (last: {owner.exits[-1]}); not started again"

    def _stop(self, one: Launched, why: str) -> None:
        """Kill a running process started for one match (``why``, for its log) and wait until its
        sandbox's pid namespace is gone."""
        if one.process is None or one.process.poll() is not None:
            return
        one.retired = why
        init = sandbox.namespace_init(one.process.pid) if self.box.isolated else None
        _signal_group(one.process, signal.SIGKILL)
        one.process.wait()
        if init is not None:  # its pid namespace: gone once its init has exited
            sandbox.wait_exited(init)

    def status(self) -> dict[str, BotStatus]:
        """Per bot: starts, deaths (with the current process if it has ended), why it is dead, dropped output."""
        out: dict[str, BotStatus] = {}
        for name, b in self.bots.items():
            exits = list(b.exits)
            if b.dead is None and b.process is not None and b.process.poll() is not None and not b.process_seen \
                    and not self._stopping and not b.finished:
                exits.append(self._ended(b, b.process))
            out[name] = {"starts": b.starts, "exits": exits, "dead": b.dead, "dropped_bytes": b.dropped_bytes}
        return out

    def stop_all(self, grace: float = 2.0) -> None:
        """Stop every launched process (and its children): TERM, then KILL. A bot
        that had died on its own by then has that death recorded."""
        self._stopping = True
        for name in list(self.for_match):  # a match cut short
            self.retire(name)
        for b in self.bots.values():
            if b.dead is None and b.process is not None and b.process.poll() is not None and not b.process_seen \
                    and not b.finished:
                b.exits.append(self._ended(b, b.process))
                b.process_seen = True
        running = [(b, b.process) for b in self.bots.values() if b.process is not None and b.process.poll() is None]
        for b, process in running:
            b.retired = "stopped at the end of the run"
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for _, p in running:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(p, signal.SIGKILL)
                p.wait()
        for b in self.bots.values():
            if b.process is not None and b.process.poll() is not None:
                self._ended(b, b.process)  # for its log, while its cgroups still tell a limit it hit
            self._clear(b)  # and whatever it left behind, in its group or its tree


def tail_of(path: Path, lines: int = 10) -> list[str] | None:
    """The last ``lines`` lines of a bot's log file (read from its last 64 KB), each on one line, escaped and
    capped: escaped as written (:meth:`Launcher._pump`), and again, for a log written otherwise may hold
    anything. None if it cannot be read."""
    try:
        text = path.read_bytes()[-64 * 1024:].decode("utf-8", "replace")
    except OSError:
        return None
    tail = text.rstrip("\n").split("\n")[-lines:] if text.strip("\n") else []
    return [capped(line, LOG_LINE_CHARS, ascii_only=False) for line in tail]


def _program(spec: BotSpec) -> str:
    return program_of(spec.command[0])


def program_of(program: str) -> str:
    """The program a bot's command (or build command) runs: ``python`` and ``python3`` are the
    referee's own interpreter, with its packages."""
    return sys.executable if program in ("python", "python3") else program


class CommandNotFound(FileNotFoundError):
    """A bot's program is not there (on PATH, or at the path it names)."""


def _check_program(program: str, cwd: str | None) -> None:
    """A FileNotFoundError (as Popen would raise) for a program that is not there."""
    found = os.path.exists(os.path.join(cwd or ".", program)) if os.sep in program else shutil.which(program)
    if not found:
        raise CommandNotFound(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _threads(bot: Launched) -> list[int]:
    """The threads of a launched bot's current process: its cgroups', or its process tree's."""
    tree, process = bot.tree, bot.process  # once: a restart may replace them meanwhile
    if tree is not None:
        return tree.threads()
    if process is None or process.poll() is not None:
        return []
    return list(hostload.tree_threads(process.pid))


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
