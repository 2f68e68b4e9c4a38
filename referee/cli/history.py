"""``referee history``: each entry's versions in a results directory, with their ratings."""

from __future__ import annotations

import json

import click

from referee.results import export as texport
from referee.results import history as thistory


@click.command()
@click.argument("directory", type=click.Path())
@click.argument("entry", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
def history(directory: str, entry: str | None, as_json: bool) -> None:
    """Print the history over versions kept in DIRECTORY (the output
    directory of a tournament or gauntlet): for each entry, or ENTRY alone,
    one row per version it played with, in order: its short id (* the
    version now), its first and last match, its matches and results, its
    rating with the 95% interval as the last run with that version left
    them, and the scale: "pool ID" (a reference pool's: comparable across
    runs; "off-scale" when the run did not keep it) or "field" (the run's
    own entrants: comparable only within that run). A version's row stays
    when --rerun drops its matches. Exit code 2: no such directory, not a
    results directory, an entry it has never known (the known ones are
    listed), a store of a newer referee. See docs/tournaments.md."""
    store = texport.open_results(directory)
    try:
        found = thistory.of_store(store, entry)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(thistory.to_json(directory, found), indent=2))
    else:
        click.echo(thistory.text(directory, found))
