"""``referee export``: every match of a results directory as a record file, and ``matches.csv``."""

from __future__ import annotations

import click

from referee.results import export as texport
from referee.results import release


@click.command()
@click.argument("directory", type=click.Path())
@click.option("--to", "to", type=click.Path(), default=None,
              help="The directory to write to (default: DIRECTORY/export; created if need be).")
def export(directory: str, to: str | None) -> None:
    """Write every match stored in DIRECTORY (the output directory of a
    tournament, gauntlet or sprt run) as a game record, match-NNNN.json, which
    `referee replay` checks, and one row per match in matches.csv: the match's
    number (its id for `referee replay DIRECTORY N`), key, deal set, the bot,
    score, place and fault count of each seat, its seconds and record file.
    Files of the same name are replaced. The export is the organiser's: every
    record, those the report holds back too (it says how many). See
    docs/tournaments.md."""
    store = texport.open_results(directory)
    try:
        out = texport.output_directory(store.directory, to)
        done = texport.export(store, out)
        held = release.held_in(store)
    finally:
        store.close()
    missing, partial = done.missing, done.partial
    click.echo(f"{len(done.matches) - len(missing)} match record(s) and {texport.CSV_NAME} written to {out}")
    if held_sets := [m.row.deal_set for m in done.matches if m not in missing and held.holds(m.row.deal_set)]:
        click.echo(f"warning: {held.line(held_sets)}; written here all the same (the organiser's copy): keep them "
                   f"from entrants until then", err=True)
    if missing:
        click.echo(f"{len(missing)} match(es) stored without a game record (e.g. {missing[0].row.key}): "
                   f"in {texport.CSV_NAME} only", err=True)
    if partial:
        (first, tally), counted = partial[0], sum(t.counted for _, t in partial)
        click.echo(f"{len(partial)} record(s) keep only the first {tally.per_seat} faults of a seat "
                   f"({sum(t.kept for _, t in partial)} of {counted} kept; e.g. {first.file_name}: {tally.text()}); "
                   f"every fault is counted in {texport.CSV_NAME} and in each record's meta.fault_counts", err=True)
