"""The exit codes of the ``referee`` command: the one place they are decided."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

import click

from referee import files, records
from referee.cli.competition import SubmitError
from referee.cli.serve import ServeError
from referee.competition.pools import PoolMakeError
from referee.competition.sprt.run import SprtError
from referee.games.base import GameError
from referee.model import ConfigError
from referee.model.exits import ExitCode
from referee.model.teams import TeamError
from referee.play.executors import BotsNotReady, ClusterError, RemoteRefereeError
from referee.results.export import ExportError
from referee.results.pool import PoolFileError
from referee.results.store import NewerStore, StoreError
from referee.view.live import CannotServe

T = TypeVar("T")


#: the first matching row decides; click's own usage errors exit 2 by themselves
_EXIT_CODES: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (click.UsageError, ExitCode.USAGE),
    (files.WriteFailed, ExitCode.WRITE_FAILED),  # a full disk, an I/O error: the store, a log, export, view
    (files.CannotWrite, ExitCode.USAGE),  # an output path that cannot be written (no such directory, no permission)
    (records.RecordFileError, ExitCode.USAGE),
    (records.RecordError, ExitCode.CHECK_FAILED),
    (GameError, ExitCode.USAGE),  # OptionError and its kin: a bad --option or game
    (ConfigError, ExitCode.USAGE),  # a tournament file with a bad key or value
    (TeamError, ExitCode.USAGE),  # a schedule that cannot keep team-mates apart, and the file does not allow it
    (NewerStore, ExitCode.USAGE),  # a results directory of a newer referee's schema: left as it is
    (StoreError, ExitCode.USAGE),  # an output directory holding another tournament
    (ExportError, ExitCode.USAGE),  # not a results directory, an unknown match id, an output path that is a file
    (PoolFileError, ExitCode.USAGE),  # a reference pool's file (or the one a results directory keeps) not valid
    (SprtError, ExitCode.USAGE),  # an SPRT that cannot go on: a bot that never came to play
    (RemoteRefereeError, ExitCode.USAGE),  # --server unreachable, a wrong --admin-token, a refused match
    (BotsNotReady, ExitCode.USAGE),  # a bot not running and connected within startup_s: no match played
    (ServeError, ExitCode.USAGE),  # serve: an address it cannot listen on, a bad --tokens-file
    (CannotServe, ExitCode.USAGE),  # --http: a busy port (nothing started, nothing written)
    (PoolFileError, ExitCode.USAGE),  # a pool file that cannot be read, is not one, or was changed after it was made
    (PoolMakeError, ExitCode.USAGE),  # pool make: no sample bots, a bad --output or --bot, no scale fitted
    (ClusterError, ExitCode.USAGE),  # --executor ray: Ray not installed, a cluster out of reach, a node lacking a bot
    (SubmitError, ExitCode.USAGE),  # submit: the server unreachable, the upload refused (token, limits, phase)
)
#: the errors the group reports as ``Error: ...`` with their exit code (click reports its own)
HANDLED = tuple(kind for kind, _ in _EXIT_CODES if not issubclass(kind, click.ClickException))


def exit_code_for(error: BaseException) -> ExitCode:
    for kind, code in _EXIT_CODES:
        if isinstance(error, kind):
            return code
    raise error


def error_text(error: BaseException) -> str:
    if isinstance(error, records.RecordError) and type(error).kind == "invalid-record" \
            or isinstance(error, records.IllegalRecordActionError):
        return f"invalid record: {error}"
    return str(error)


def interrupt_on_sigterm() -> None:
    """SIGTERM (a cancelled CI job) stops cleanly, like Ctrl-C: a KeyboardInterrupt, exit 130."""
    signal.signal(signal.SIGTERM, _interrupt)


def run_interruptibly(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)``, SIGTERM treated as Ctrl-C is: the running work is cancelled (its
    cleanup runs: bots stopped, the referee closed), then KeyboardInterrupt is raised. Outside
    the event loop, SIGTERM raises KeyboardInterrupt at once (:func:`interrupt_on_sigterm`)."""
    async def main() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None  # asyncio.run runs main as a task
        terminated: list[bool] = []

        def terminate() -> None:
            terminated.append(True)
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, terminate)
        try:
            return await work
        except asyncio.CancelledError:
            if terminated:
                raise KeyboardInterrupt from None
            raise
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            interrupt_on_sigterm()

    interrupt_on_sigterm()
    return asyncio.run(main())


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
