"""``referee pool make`` and ``referee pool show``: a reference pool made from the house bots' games, and
shown (docs/pool.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click
from tabulate import tabulate

from referee.cli.options import (
    bank_ms_option,
    decision_ms_option,
    game_argument,
    game_options,
    progress_options,
    rerun_option,
    rule_options,
    seed_option,
)
from referee.cli.progress import ProgressSettings
from referee.cli.tournament import RunObserver, print_ending
from referee.competition import pools
from referee.games import get
from referee.model import SandboxMode
from referee.results import pool as poolfile
from referee.results.pool import Pool
from referee.untrusted import escaped


@click.group("pool")
def pool() -> None:
    """Reference pools: the house bots of a game with their ratings fitted once, among themselves, in
    one setting (game, options, clock); a run that includes the pool rates on its scale
    (docs/pool.md)."""


@pool.command("make")
@game_argument
@click.option("--output", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="The pool file to write [default: GAME.pool.json].")
@click.option("--results", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="The run's results directory; the same command resumes it [default: the pool file's name "
                   "with .results for .json].")
@click.option("--deal-sets", type=click.IntRange(2), default=100, show_default=True,
              help="Deal sets of the house pool's round robin.")
@decision_ms_option
@bank_ms_option
@rule_options
@seed_option
@click.option("--concurrency", type=click.IntRange(1), default=2, show_default=True, help="Matches at once.")
@click.option("--sandbox", type=click.Choice([str(m) for m in SandboxMode]), default=str(SandboxMode.AUTO),
              show_default=True, help="What the bots run in, as [limits] sandbox in a tournament file.")
@click.option("--bot", "bots", multiple=True, metavar="NAME",
              help="Only this house bot (repeatable; at least two) [default: all five].")
@rerun_option
@progress_options
def make(game: str, output: str | None, results: str | None, deal_sets: int, decision_ms: int, bank_ms: int,
         rule_options: Sequence[tuple[str, str]], seed: int | None, concurrency: int, sandbox: str,
         bots: tuple[str, ...], rerun: tuple[str, ...], progress: ProgressSettings) -> None:
    """Make the reference pool of GAME: its house bots (random, the heuristic weakened by 75% and by
    50% random moves, the heuristic, the search bot) play a round robin among themselves in this
    setting, as a tournament does (sandboxed, every match stored in --results as it ends), and their
    fitted ratings are written to the pool file. Run the same command again after an interruption: it
    plays only what is missing. An interrupted run (exit 130) or one a bot did not finish (exit 4)
    writes no pool file."""
    output_path = Path(output or f"{game}.pool.json")
    request = pools.MakeRequest(game, output_path, Path(results) if results else default_results(output_path),
                                deal_sets, decision_ms, bank_ms, game_options(get(game), rule_options), seed,
                                concurrency, SandboxMode(sandbox), rerun, bots=bots)
    observer = RunObserver(progress)
    made = pools.make(request, observer)
    observer.finished(made.run)  # interrupted: exits 130 here, nothing written
    if made.pool is None:
        print_ending(made.run)
        click.echo(f"no pool written: the run did not play all its matches; the same command plays them "
                   f"(results in {made.run.directory})", err=True)
        sys.exit(made.run.exit_code)
    click.echo(table(made.pool))
    click.echo(f"wrote {output_path}: pool {made.pool.short_id}")


@pool.command("show")
@click.argument("file", type=click.Path(dir_okay=False), metavar="FILE")
def show(file: str) -> None:
    """Print the pool file FILE: its id, setting, and its bots with their ratings, intervals and
    versions. Exit code 2 for a file that is not a valid pool file (one line says what is wrong)."""
    click.echo(table(poolfile.read(file)))


def default_results(output: Path) -> Path:
    """``aegis.pool.json`` -> ``aegis.pool.results`` (beside the pool file)."""
    name = output.name.removesuffix(".json") if output.name.endswith(".json") else output.name
    return output.with_name(f"{name}.results")


def table(p: Pool) -> str:
    """A pool as ``pool show`` prints it: its id and setting, then a line a bot (best first)."""
    level = f"{100 * p.scale.confidence:g}%"
    rows = sorted(p.bots, key=lambda b: -p.scale.ratings[b.name].elo)
    cells = [[b.name, f"{p.scale.ratings[b.name].elo:.0f}",
              f"[{p.scale.ratings[b.name].lo:.0f}, {p.scale.ratings[b.name].hi:.0f}]", b.version[:12],
              escaped(" ".join(b.command))] for b in rows]
    head = [f"pool {p.short_id} (id {p.id})",
            f"{escaped(p.game)}: options {escaped(_values(p.options))}; clock {escaped(_values(p.clock))}; "
            f"{p.scale.deal_sets} deal sets; Elo on the pool's scale (average 1500), {level} intervals", ""]
    body = tabulate(cells, headers=["bot", "Elo", f"{level} interval", "version", "command"],
                    colalign=("left", "right", "right", "left", "left"))
    return "\n".join(head) + body


def _values(values: object) -> str:
    """``bank_ms=10000, decision_ms=1000``, each value as JSON writes it (``none`` for none)."""
    if not isinstance(values, dict) or not values:
        return "none"
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(values.items()))
