"""Starts the bot processes of a tournament and keeps them running.

A command whose first word is ``python`` or ``python3`` runs with the
referee's own interpreter (so a bot sees the packages the referee sees).
Each launched bot gets ``--address HOST:PORT --name NAME --token TOKEN
--capacity N`` appended to its command; its stdout and stderr go to
``logs/NAME.log`` in the output directory. A bot that has died is started
again before its next match; the number of restarts is kept.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from referee.tournament.config import BotSpec


@dataclass
class Launched:
    spec: BotSpec
    process: subprocess.Popen | None = None
    starts: int = 0
    exits: list[int] = field(default_factory=list)


class Launcher:
    def __init__(self, bots: Iterable[BotSpec], address: str, tokens: Mapping[str, str], capacity: Mapping[str, int],
                 log_dir: Path | None):
        """``log_dir`` None: the bots' output goes to this process's stderr."""
        self.address = address
        self.tokens = tokens
        self.capacity = capacity
        self.log_dir = log_dir
        self.bots = {b.name: Launched(b) for b in bots if not b.external}

    def command(self, spec: BotSpec) -> list[str]:
        program, *args = spec.command
        if program in ("python", "python3"):  # the referee's own interpreter, with its packages
            program = sys.executable
        return [program, *args, "--address", self.address, "--name", spec.name, "--token", self.tokens[spec.name],
                "--capacity", str(self.capacity.get(spec.name, 1))]

    def _start(self, bot: Launched) -> None:
        if self.log_dir is None:
            log = open(os.dup(2), "ab")
        else:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_dir / f"{bot.spec.name}.log", "ab")
        log.write(f"--- {bot.spec.name} start #{bot.starts + 1} at {time.strftime('%Y-%m-%d %H:%M:%S')}: "
                  f"{' '.join(bot.spec.command)}\n".encode())
        log.flush()
        env = {**os.environ, **bot.spec.env}
        try:
            bot.process = subprocess.Popen(self.command(bot.spec), cwd=bot.spec.cwd, env=env, stdout=log,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
        except OSError as err:
            log.write(f"--- cannot start: {err}\n".encode())
            bot.process = None
        finally:
            log.close()
        bot.starts += 1

    def start_all(self) -> None:
        for bot in self.bots.values():
            self._start(bot)

    def ensure_running(self, names: Iterable[str]) -> None:
        """Start again any of these bots whose process has ended."""
        for name in set(names):
            bot = self.bots.get(name)
            if bot is None:
                continue
            if bot.process is None or bot.process.poll() is not None:
                if bot.process is not None:
                    bot.exits.append(bot.process.returncode)
                self._start(bot)

    def restarts(self) -> dict[str, int]:
        return {name: max(0, bot.starts - 1) for name, bot in self.bots.items()}

    def stop_all(self, grace: float = 2.0) -> None:
        """Stop every launched process (and its children): TERM, then KILL."""
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


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
