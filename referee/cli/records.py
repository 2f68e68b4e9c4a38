"""``referee replay`` (check a game record) and ``referee play`` (one seeded match between
built-in random players, with a readable log): games in process, no bots, no server."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from referee import records
from referee.cli.exits import exit_code_for
from referee.cli.options import fresh_seed, game_argument, game_options, json_flag, rule_options, seed_option
from referee.games import get as get_game
from referee.games import play_out, random_legal
from referee.report import default_seat_names, final_table, format_options, game_log, results_report
from referee.results import export

# --- replay -------------------------------------------------------------------


@click.command()
@click.argument("file", type=click.Path(), metavar="FILE | DIRECTORY MATCH_ID")
@click.argument("match_id", required=False, metavar="")
@json_flag
@click.option("--log", "show_log", is_flag=True, help="Also print the game's log.")
def replay(file: str, match_id: str | None, as_json: bool, show_log: bool) -> None:
    """Replay the game record FILE through the rules and check it; or, given
    a results DIRECTORY (of a tournament, gauntlet or sprt run) and a match's
    id (DEALSET:BOT|BOT..., quoted for the shell) or number, the record of that
    match as stored there.

    Prints the computed results. Exits 0 when every action is legal, the
    record ends with the game and the results it states (if any) match; 1
    naming the first illegal action or difference; 2 if FILE cannot be read
    or is not JSON, or the match is not in DIRECTORY. See docs/records.md
    for the format; `referee export DIRECTORY` lists the matches' ids and numbers.
    """
    rep: records.Replay | None = None
    record = None
    try:
        record = _record(file, match_id)
        rep = records.replay(record)
    except records.ResultsMismatchError as error:
        rep = error.replay
        failure: records.RecordError | None = error
    except records.RecordError as error:
        if not as_json:
            raise
        failure = error
    else:
        failure = None

    faults = records.faults_of(record) if isinstance(record, dict) else records.FaultTally(0, 0)
    if as_json:
        click.echo(json.dumps({
            "valid": failure is None,
            "results": rep.results if rep is not None else None,
            "error": failure.to_dict() if failure is not None else None,
            "faults": {"counted": faults.counted, "kept": faults.kept, "kept_per_seat": faults.per_seat},
        }))
        if failure is not None:
            click.get_current_context().exit(exit_code_for(failure))
        return

    assert rep is not None
    if show_log:
        click.echo("\n".join(game_log(rep.state, rep.seats)))
        click.echo()
    status = "valid record" if failure is None else "record replayed"
    click.echo(f"{rep.game}: {status}, {len(rep.parsed.actions)} actions; options: "
               f"{format_options(rep.parsed.options)}")
    click.echo("\n".join(results_report(rep.game, rep.results, rep.seats)))
    if faults.counted:
        click.echo(f"faults: {faults.text()}")
    if failure is not None:
        raise failure


def _record(path: str, match_id: str | None) -> dict[str, Any]:
    """The record in the file, or the one stored for the match in the results directory."""
    if match_id is None:
        if Path(path).is_dir():
            raise export.ExportError(f"{path} is a directory: give a match id too (referee replay {path} "
                                     f"'DEALSET:BOT|BOT...' or N; referee export {path} lists them in matches.csv)")
        return records.read(path)
    store = export.open_results(path)
    try:
        return export.record_of(store, export.find(store, match_id))
    finally:
        store.close()


# --- play ---------------------------------------------------------------------


@click.command()
@game_argument
@seed_option
@rule_options
@click.option("--record", "record_file", type=click.Path(dir_okay=False), default=None,
              help="Write the game record (JSON) to this file.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the final scores and placing.")
def play(game: str, seed: int | None, rule_options: Sequence[tuple[str, str]], record_file: str | None,
         quiet: bool) -> None:
    """Play one seeded match of GAME (aegis or confirmation) between uniform-random
    players and print its log: the deals, every decision, one line per trick,
    the scores. The same seed and options always give the same match."""
    spec = get_game(game)
    options = game_options(spec, rule_options)
    if seed is None:
        seed = fresh_seed()
    state = spec.new(options, seed=seed)
    play_out(state, random_legal(random.Random(f"players:{seed}")))
    seats = default_seat_names(spec.num_seats)
    if not quiet:
        click.echo(f"{game}, seed {seed}; options: {format_options(state.options)}")
        click.echo("\n".join(game_log(state, seats)))
        click.echo()
    click.echo("\n".join(final_table(state.results(), seats)))
    if record_file is not None:
        records.write(record_file, records.to_record(state))
        if not quiet:
            click.echo(f"record written to {record_file}")
