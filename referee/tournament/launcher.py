"""Starts the bot processes of a tournament, contains them, keeps them running.

A command whose first word is ``python`` or ``python3`` runs with the
referee's own interpreter (so a bot sees the packages the referee sees).
Each launched bot gets ``--address HOST:PORT --name NAME --token TOKEN
--capacity N`` appended to its command and runs in its own process group,
with its :class:`~referee.tournament.config.Limits`: CPU seconds and address
space per process (``prlimit``), and at most ``log_kb`` of its stdout and
stderr kept in ``logs/NAME.log`` (the rest is counted, not kept). A bot that
has died is started again before its next match (as cutechess's
``-recover``); one that died more than ``max_restarts`` times is marked
dead, with the reason, and its matches are skipped.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from referee.tournament.config import BotSpec


@dataclass
class Launched:
    spec: BotSpec
    process: subprocess.Popen | None = None
    starts: int = 0
    exits: list[str] = field(default_factory=list)
    dead: str | None = None          # why it is no longer started
    process_seen: bool = False       # the current process's end is already in exits
    dropped_bytes: int = 0
    _pump: threading.Thread | None = None


def describe_exit(code: int | None) -> str:
    if code is None:
        return "could not start"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed; memory?)", "SIGSEGV": " (crashed)"}
        return f"killed by {name}{hint.get(name, '')}"
    return f"exit code {code}"


class Launcher:
    def __init__(self, bots: Iterable[BotSpec], address: str, tokens: Mapping[str, str], capacity: Mapping[str, int],
                 log_dir: Path | None, on_exit: Callable[[str], None] | None = None):
        """``log_dir`` None: the bots' output goes to this process's stderr. ``on_exit(name)`` is
        called (from a thread of the launcher's) each time a bot's process has ended."""
        self.address = address
        self.tokens = tokens
        self.capacity = capacity
        self.log_dir = log_dir
        self.on_exit = on_exit
        self.bots = {b.name: Launched(b) for b in bots if not b.external}
        self._lock = threading.Lock()
        self._stopping = False

    def command(self, spec: BotSpec) -> list[str]:
        program, *args = spec.command
        if program in ("python", "python3"):  # the referee's own interpreter, with its packages
            program = sys.executable
        return [program, *args, "--address", self.address, "--name", spec.name, "--token", self.tokens[spec.name],
                "--capacity", str(self.capacity.get(spec.name, 1))]

    def _log(self, bot: Launched) -> BinaryIO:
        if self.log_dir is None:
            return open(os.dup(2), "ab")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return open(self.log_dir / f"{bot.spec.name}.log", "ab")

    def _start(self, bot: Launched) -> None:
        log = self._log(bot)
        log.write(f"--- {bot.spec.name} start #{bot.starts + 1} at {time.strftime('%Y-%m-%d %H:%M:%S')}: "
                  f"{' '.join(bot.spec.command)}\n".encode())
        log.flush()
        env = {**os.environ, **bot.spec.env}
        bot.starts += 1
        bot.process_seen = False
        try:
            bot.process = subprocess.Popen(self.command(bot.spec), cwd=bot.spec.cwd, env=env, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
        except OSError as err:
            log.write(f"--- cannot start: {err}\n".encode())
            log.close()
            bot.process = None
            bot.exits.append(f"cannot start: {err.strerror or err}")
            return
        _limit(bot.process.pid, bot.spec.limits.cpu_seconds, bot.spec.limits.memory_mb)
        bot._pump = threading.Thread(target=self._pump, args=(bot, bot.process, log), daemon=True)
        bot._pump.start()
        if self.on_exit is not None:
            threading.Thread(target=self._watch, args=(bot.spec.name, bot.process), daemon=True).start()

    def _watch(self, name: str, process: subprocess.Popen) -> None:
        process.wait()
        self.on_exit(name)

    def _pump(self, bot: Launched, process: subprocess.Popen, log: BinaryIO) -> None:
        """Copy the bot's output to its log up to the cap; count the rest."""
        cap = bot.spec.limits.log_kb * 1024
        try:
            while chunk := process.stdout.read1(65536):
                with self._lock:
                    room = max(0, cap - log.tell()) if log.seekable() else cap
                    log.write(chunk[:room])
                    log.flush()
                    bot.dropped_bytes += max(0, len(chunk) - room)
            process.wait()
            note = f"--- ended: {describe_exit(process.returncode)}"
            if bot.dropped_bytes:
                note += f"; {bot.dropped_bytes} bytes of output past the {bot.spec.limits.log_kb} KB cap not kept"
            log.write((note + "\n").encode())
        finally:
            log.close()

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
                    bot.exits.append(describe_exit(bot.process.returncode))
                if len(bot.exits) > bot.spec.limits.max_restarts:
                    bot.dead = f"died {len(bot.exits)} times (last: {bot.exits[-1]}); not restarted"
                else:
                    self._start(bot)
            if bot.dead is not None:
                dead.append(name)
        return sorted(dead)

    def gone(self, name: str) -> bool:
        """A launched bot whose process has ended (it will not connect until restarted)."""
        bot = self.bots.get(name)
        return bot is not None and (bot.process is None or bot.process.poll() is not None)

    def restarts(self) -> dict[str, int]:
        return {name: max(0, bot.starts - 1) for name, bot in self.bots.items()}

    def status(self) -> dict[str, dict[str, object]]:
        """Per bot: starts, deaths (with the current process if it has ended), why it is dead, dropped output."""
        out = {}
        for name, b in self.bots.items():
            exits = list(b.exits)
            if b.dead is None and b.process is not None and b.process.poll() is not None and not b.process_seen \
                    and not self._stopping:
                exits.append(describe_exit(b.process.returncode))
            out[name] = {"starts": b.starts, "exits": exits, "dead": b.dead, "dropped_bytes": b.dropped_bytes}
        return out

    def stop_all(self, grace: float = 2.0) -> None:
        """Stop every launched process (and its children): TERM, then KILL. A bot
        that had died on its own by then has that death recorded."""
        self._stopping = True
        for b in self.bots.values():
            if b.dead is None and b.process is not None and b.process.poll() is not None and not b.process_seen:
                b.exits.append(describe_exit(b.process.returncode))
                b.process_seen = True
        running = [b.process for b in self.bots.values() if b.process is not None and b.process.poll() is None]
        for p in running:
            _signal_group(p, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in running:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(p, signal.SIGKILL)
                p.wait()
        for b in self.bots.values():  # and whatever a bot left behind in its group
            if b.process is not None:
                _signal_group(b.process, signal.SIGKILL)
            if b._pump is not None:
                b._pump.join(timeout=2)


def _limit(pid: int, cpu_seconds: int, memory_mb: int) -> None:
    try:
        if cpu_seconds:
            resource.prlimit(pid, resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        if memory_mb:
            size = memory_mb * 1024 * 1024
            resource.prlimit(pid, resource.RLIMIT_AS, (size, size))
    except (ProcessLookupError, PermissionError, ValueError):
        pass  # the process is already gone, or the platform refuses: it runs unlimited


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
