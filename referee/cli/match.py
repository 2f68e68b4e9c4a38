"""``referee match``: one match between bots started from commands, a quick check."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import click

from referee import records
from referee.cli.options import (
    BotCommand,
    announce_sandbox,
    bank_ms_option,
    decision_ms_option,
    fresh_seed,
    game_argument,
    game_options,
    rule_options,
    seed_option,
)
from referee.games import get as get_game
from referee.model import BotProtocol, BotSpec, Played, SandboxMode, Seating
from referee.play.executors import LocalExecutor
from referee.report import final_table, format_options, game_log
from referee.runner import Clock


@click.command()
@game_argument
@click.option("--bot", "bots", multiple=True, type=BotCommand(), metavar="NAME=COMMAND",
              help='A bot and the command that starts it, e.g. --bot rnd="python -m sample_bots.random" '
                   "(repeatable; the kit's --address/--name/--token/--capacity are appended). A program named "
                   "by a path outside the current directory, e.g. --bot mine=/srv/mybot/bot, runs in its own "
                   "directory, which is what its sandbox shows.")
@click.option("--stdio-bot", "stdio_bots", multiple=True, type=BotCommand(BotProtocol.STDIO), metavar="NAME=COMMAND",
              help='A bot that reads stdin and writes stdout (protocol = "stdio", docs/protocol.md §16), e.g. '
                   "--stdio-bot mine=./mybot (repeatable; its command is run as it is, and a program outside the "
                   "current directory runs in its own, as with --bot).")
@click.option("--lineup", help="Bot names per seat, comma-separated (default: the bots in order, "
                               "repeated to fill the seats).")
@seed_option
@rule_options
@decision_ms_option
@bank_ms_option
@click.option("--record", "record_file", type=click.Path(dir_okay=False), help="Write the game record here.")
@click.option("--log/--no-log", "show_log", default=True, help="Print the match's log (default: yes).")
def match(game: str, bots: Sequence[BotSpec], stdio_bots: Sequence[BotSpec], lineup: str | None, seed: int | None,
          rule_options: Sequence[tuple[str, str]], decision_ms: int, bank_ms: int, record_file: str | None,
          show_log: bool) -> None:
    """Play one match of GAME between bots started from the given commands (a quick check).

    The referee runs in-process; bot output goes to stderr."""
    bots = [*bots, *stdio_bots]
    if not bots:
        raise click.UsageError("give the bots to play: --bot NAME=COMMAND or --stdio-bot NAME=COMMAND")
    spec = get_game(game)
    options = game_options(spec, rule_options)
    names = [bot.name for bot in bots]
    if len(set(names)) < len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise click.BadParameter(f"the bot name {twice!r} is given twice", param_hint="--bot/--stdio-bot")
    seats = lineup.split(",") if lineup else [names[i % len(names)] for i in range(spec.num_seats)]
    if len(seats) != spec.num_seats or set(seats) - set(names):
        raise click.BadParameter(f"{game} needs {spec.num_seats} seats named among {', '.join(names)}",
                                 param_hint="--lineup")
    seed = fresh_seed() if seed is None else seed
    announce_sandbox(SandboxMode.AUTO, advise=False)
    executor = LocalExecutor(game, options, Clock(decision_ms / 1000, bank_ms / 1000), list(bots),
                             {n: seats.count(n) for n in names}, log_dir=None, connect_timeout=30)

    async def play() -> Played:
        async with executor:
            # a fixed id, not one the referee draws: seeded bots seed their choices with the game id,
            # so that a --seed replays the same match
            played = await executor.play(Seating(0, seed, tuple(seats)), match_id="g1")
            executor.release_all()  # no other match on its deals
            return played

    played = asyncio.run(play())
    labels = records.seat_labels(seats)  # a bot in two seats: each named with its seat
    if show_log:
        state = records.replay(played.record).state
        click.echo(f"{game}, seed {seed}; options: {format_options(state.options)}")
        click.echo("\n".join(game_log(state, labels)))
        click.echo()
    click.echo("\n".join(final_table(played.results, labels)))
    for fault in played.record["meta"]["faults"]:
        click.echo(f"fault: seat {fault['seat']} ({seats[fault['seat']]}) {fault['kind']} at decision "
                   f"{fault['decision']}: {fault['detail']}")
    faults = records.faults_of(played.record)
    if faults.kept < faults.counted:
        click.echo(f"faults: {faults.text()}")
    if record_file:
        records.write(record_file, played.record)
