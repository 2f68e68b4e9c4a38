"""The ``referee`` command line: a thin Click layer over the modules of the package.

One module per group of commands: :mod:`.records` (``replay``, ``play``), :mod:`.serve`,
:mod:`.tournament` (``tournament``, ``ratings``, ``gauntlet``), :mod:`.match`,
:mod:`.sprt`, :mod:`.export`, :mod:`.view`, :mod:`.pool` (``pool make``, ``pool show``), :mod:`.history`
and :mod:`.competition` (``server``, ``submit``,
``organise``).
Their options are defined once, in :mod:`.options`; exit codes are decided in one place, :mod:`.exits`, and
errors become a message and an exit code here, in the group.
"""

from __future__ import annotations

from typing import Any

import click

from referee import __version__
from referee.cli.competition import organise, server, submit
from referee.cli.exits import HANDLED, error_text, exit_code_for
from referee.cli.export import export
from referee.cli.history import history
from referee.cli.match import match
from referee.cli.pool import pool
from referee.cli.records import play, replay
from referee.cli.serve import serve
from referee.cli.sprt import sprt
from referee.cli.tournament import gauntlet, ratings, tournament
from referee.cli.view import view
from referee.untrusted import escaped, log_to_stderr


class _Group(click.Group):
    """Turns the package's errors into a message on stderr and the exit code of the table."""

    def invoke(self, ctx: click.Context) -> Any:
        log_to_stderr()  # the referee's own log lines, escaped: they quote what bots send
        try:
            return super().invoke(ctx)
        except HANDLED as error:
            click.echo(f"Error: {escaped(error_text(error))}", err=True)  # it may quote a bot's log
            ctx.exit(exit_code_for(error))


@click.group(cls=_Group, commands=[replay, play, serve, tournament, ratings, match, gauntlet, sprt, export, view,
                       pool, history, server, submit, organise],
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def referee() -> None:
    """Tournament referee for card-game bots (Confirmation, Aegis).

    \b
    Exit codes:
      0  success (a replayed record is valid and its stated results match)
      1  a check failed: an invalid record (illegal action, bad field, ends
         early) or stated results that differ from the replay; gauntlet:
         the candidate is worse than a baseline at --confidence; submit:
         the version's build or validation failed
      2  bad usage: wrong arguments, an unreadable file, bad JSON, a bad
         rule option, a bad tournament file, an output directory that
         holds another tournament or a changed bot's matches, or that
         another run is writing (one run at a time), a bot not
         running and connected within startup_s (no match played), a
         directory with no results or no such match (export, replay DIR
         N, history), an entry the directory never knew (history);
         sprt: a bot that died or never came to play; serve: an
         address it cannot listen on, a bad --tokens-file; --server:
         unreachable, a wrong admin token, a refused match; pool: a
         bad or changed pool file, a pool file it cannot write; submit,
         organise: the server out of reach, a wrong token, a refusal
      3  sprt: inconclusive, no verdict within --max-units units; submit:
         --timeout before the version's verdict
      4  tournament, gauntlet (and ratings of their results): incomplete,
         a bot died for good mid-run and did not play all its matches
         (the standings mark it); pool make: no pool written
      5  tournament, gauntlet (and ratings), absent = "withdraw": an
         entry did not start or died for good and was withdrawn; the
         others played all their matches (4 wins when both apply)
      6  the results could not be written (a full disk, an I/O error):
         the store, a bot's log, export, view; what was stored before is
         intact, and the same command plays only what is missing
    130  interrupted (Ctrl-C): what finished is saved (tournament,
         gauntlet, pool make: no pool written) or reported (sprt)

    \b
    sprt, for gating a CI job (docs/regression.md):
      0  H1 accepted: the candidate is stronger (or, with
         --preset non-regression, shows no regression)
      1  H0 accepted: the candidate is not stronger (or is a regression)
      3  inconclusive at the cap; 2 an error; 130 interrupted
    """


def main() -> None:
    """The console script ``referee``."""
    referee()
