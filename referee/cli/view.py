"""``referee view``: a match record, or a tournament's results, as HTML to open in a browser."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path
from typing import Any

import click

from referee import files, records
from referee.cli.options import standings_options
from referee.results.store import DB_NAME, StoreError
from referee.view.page import replay_page
from referee.view.steps import ViewerError


@click.command()
@click.argument("path", type=click.Path(exists=True))
@click.option("--out", "out", type=click.Path(), default=None,
              help="Where to write: the HTML file (a record; default: RECORD.html beside it) or the report's "
                   "directory (results; default: RESULTS_DIR/report).")
@click.option("--seat", type=int, default=None,
              help="A record: show what this seat saw (the others' hidden cards are left out of the page); "
                   "default: every hand.")
@click.option("--open", "open_page", is_flag=True, help="Open the page in the default browser.")
@click.option("--logs", "publish_logs", is_flag=True,
              help="Results: publish the bots' logs with the report, each replay linking its seats' lines "
                   "(off by default: a log may hold what a bot's author keeps private).")
@standings_options
def view(path: str, out: str | None, seat: int | None, open_page: bool, publish_logs: bool,
         anchor: tuple[str, float] | None, bootstrap: int) -> None:
    """Write an HTML page to look at PATH: a game record (RECORD.json) as a replay to step
    through, or a tournament's results directory as a report (standings, head to head, seat
    bias, points per bot, every match with its replay). Every page is one self-contained
    file that loads nothing from the network. Prints the path of the page."""
    # late: its statistics are costly to import (~90 ms), and `referee --help` loads none of it
    from referee.view import report

    source = Path(path)
    if source.is_dir():
        if not (source / DB_NAME).is_file():
            raise StoreError(f"{source}: neither a game record nor a results directory (no {DB_NAME} in it)")
        if seat is not None:
            raise click.BadParameter("--seat applies to a record, not to a results directory", param_hint="--seat")
        target = report.write_report(source, out, anchor=anchor, bootstrap=bootstrap, publish_logs=publish_logs,
                                     notice=lambda line: click.echo(line, err=True))
    else:
        if publish_logs:
            raise click.BadParameter("--logs applies to a results directory, not to a record", param_hint="--logs")
        try:
            text = replay_page(_record(source), viewer=seat)
        except ViewerError as err:
            raise click.BadParameter(str(err).removeprefix(f"--seat {seat}: "), param_hint="--seat") from None
        target = Path(out) if out is not None else source.with_suffix(".html")
        files.write_text(target, text)  # CannotWrite: exit 2; WriteFailed (a full disk): exit 6
    click.echo(str(target))
    if open_page:
        webbrowser.open(target.resolve().as_uri())


def _record(source: Path) -> dict[str, Any]:
    """The record in ``source``; a usage error saying what ``view`` takes if it is not JSON at all."""
    try:
        json.loads(source.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        hint = " (a tournament file? view its output directory)" if source.suffix == ".toml" else ""
        raise records.RecordFileError(f"{source}: neither a game record (a JSON file, docs/records.md) nor a "
                                      f"results directory{hint}") from None
    except OSError:
        pass  # records.read says why it cannot be read
    return records.read(source)
