"""The arguments and options of the ``referee`` commands, each defined once, and their types."""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from referee.cli import progress
from referee.games import GAMES
from referee.games.base import GameSpec
from referee.hosting import sandbox
from referee.hosting.paths import bot_from_command
from referee.model import BotProtocol, BotSpec, ExecutorKind, ExecutorSpec, Isolation, SandboxMode
from referee.runner import MAX_CLOCK_MS


def announce_sandbox(mode: SandboxMode, isolation: Isolation = Isolation.TOURNAMENT, quiet: bool = False,
                     advise: bool = True) -> None:
    """Resolve the run's sandbox before anything starts (``sandbox = "bwrap"`` where it cannot
    work: exit 2) and print, in one line starting ``sandbox:``, what the bots will run in (the
    risk, when that is nothing) and what they keep between matches; ``quiet``: only the risk.
    ``advise``: the advice for a competition of strangers' bots (isolation = "match"), which a
    match or an SPRT of one's own bots does not need."""
    box = sandbox.resolve(mode)
    if quiet and not box.warning:
        return
    kept = ("nothing: a fresh process and scratch for every match" if isolation == Isolation.MATCH
            else "their processes and scratch for the whole run, and can remember a deal for its twin match"
                 + (": use isolation = \"match\" for entrants" if advise else ""))
    click.echo(f"{box.warning or box.describe()}; isolation: {isolation} (bots keep {kept})", err=True)


# --- types ----------------------------------------------------------------------------

if TYPE_CHECKING:  # click >= 8.4 types a ParamType by its value; click 8.1 (the oldest taken) cannot subscript it
    _PairType = click.ParamType[tuple[str, str]]
    _BotType = click.ParamType[BotSpec]
    _RatingType = click.ParamType[tuple[str, float]]
else:
    _PairType = _BotType = _RatingType = click.ParamType


class KeyValue(_PairType):
    """``KEY=VALUE`` -> (key, value), both strings."""

    name = "KEY=VALUE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        key, sep, val = str(value).partition("=")
        if not sep or not key.strip():
            self.fail(f"expected KEY=VALUE, got {value!r}", param, ctx)
        return key.strip(), val.strip()


class BotCommand(_BotType):
    """``NAME=COMMAND`` -> a bot launched with that command (:class:`BotSpec`), speaking ``protocol``."""

    name = "NAME=COMMAND"

    def __init__(self, protocol: BotProtocol = BotProtocol.GRPC):
        self.protocol = protocol

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> BotSpec:
        if isinstance(value, BotSpec):
            return value
        name, command = KeyValue().convert(value, param, ctx)
        try:
            return bot_from_command(name, command, self.protocol)
        except ValueError as err:
            raise click.BadParameter(str(err), ctx, param_hint=param.opts[0] if param else None) from None


class Anchor(_RatingType):
    """``BOT=RATING`` -> (bot, rating)."""

    name = "BOT=RATING"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, float]:
        if isinstance(value, tuple):
            return value
        bot, rating = KeyValue().convert(value, param, ctx)
        try:
            return bot, float(rating)
        except ValueError:
            raise click.BadParameter(f"the rating of {bot} must be a number, got {rating!r}", ctx,
                                     param_hint="--anchor") from None


# --- games ----------------------------------------------------------------------------

game_argument = click.argument("game", type=click.Choice(sorted(GAMES)), metavar="GAME")
seed_option = click.option("--seed", type=int, default=None,
                           help="Seed of every random draw (default: a fresh one, printed).")
rule_options = click.option(
    "--option", "-o", "rule_options", multiple=True, type=KeyValue(), metavar="KEY=VALUE",
    help="A rule option of the game, e.g. -o rounds=1 -o trump=random-suit (repeatable).")
decision_ms_option = click.option("--decision-ms", type=click.IntRange(1, MAX_CLOCK_MS), default=1000,
                                  show_default=True, help="Time per decision.")
bank_ms_option = click.option("--bank-ms", type=click.IntRange(0, MAX_CLOCK_MS), default=10000,
                              show_default=True, help="Extra time per seat per match, spent on overruns.")


def game_options(spec: GameSpec, pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Check ``--option`` strings against the game's schema (raises OptionError)."""
    return spec.parse_options(dict(pairs))


def fresh_seed() -> int:
    """A seed nobody can guess: 128 bits of the system's entropy."""
    return secrets.randbits(128)


# --- tournaments, gauntlets, SPRTs ------------------------------------------------------

config_argument = click.argument("config_file", metavar="CONFIG", type=click.Path(dir_okay=False))
anchor_option = click.option("--anchor", type=Anchor(), metavar="BOT=RATING", default=None,
                             help="Pin one bot's rating (default: the average is 1500).")
bootstrap_option = click.option("--bootstrap", type=click.IntRange(0, 100000), default=1000, show_default=True,
                                help="Bootstrap resamples of deal sets for the 95% intervals (0: none).")
server_option = click.option("--server", metavar="HOST:PORT",
                             help="Play on this referee (RunMatch) instead of an in-process one.")
admin_token_option = click.option("--admin-token", envvar="REFEREE_ADMIN_TOKEN",
                                  help="The remote server's admin token (default: $REFEREE_ADMIN_TOKEN).")
los_option = click.option("--los", "show_los", is_flag=True,
                          help="Also print the likelihood-of-superiority matrix (row over column).")
collusion_option = click.option(
    "--collusion", "show_collusion", is_flag=True,
    help="Also run the collusion check: for every ordered pair of entries, how much one's presence at the table "
         "moves the other's points on the same cards; the pairs that stand out, for a person to review "
         "(docs/tournaments.md). It changes no result.")
ranks_option = click.option("--ranks", "show_ranks", is_flag=True,
                            help="Also print each bot's rank probabilities: P(rank = k) and P(top k).")
ratings_format_option = click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "csv", "csv-pairs"]), default="table", show_default=True,
    help="csv: one row per bot; csv-pairs: one row per ordered pair of bots (head to head, game pairs, LOS).")
quiet_option = click.option("--quiet", "-q", is_flag=True,
                            help="Print only results and errors: no progress, no sandbox line, no header.")
rerun_option = click.option("--rerun", "rerun", multiple=True, metavar="NAME",
                            help="Drop the stored matches of bot NAME and play them again (a new version of it; "
                                 "repeatable). Without it, a bot changed since its matches were stored is refused.")


def progress_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--quiet``, ``--verbose``, ``--score-every``, ``--progress-every``, ``--progress-seconds``:
    what a run prints while it plays, handed to the command as one ``progress`` argument
    (:class:`referee.cli.progress.ProgressSettings`)."""
    @functools.wraps(command)
    def with_settings(*args: Any, quiet: bool, verbose: bool, score_every: int, progress_every: int | None,
                      progress_seconds: float, **kwargs: Any) -> Any:
        settings = progress.ProgressSettings(quiet, verbose, score_every, progress_every, progress_seconds)
        return command(*args, progress=settings, **kwargs)

    options = [
        quiet_option,
        click.option("--verbose", "-v", is_flag=True,
                     help="A line per finished match, and every --score-every matches a "
                          "'Score of A vs B: W - L - D' line per pair of bots."),
        click.option("--score-every", type=click.IntRange(1), default=progress.DEFAULT_SCORE_EVERY,
                     show_default=True, metavar="N", help="With --verbose: the 'Score of' lines every N matches."),
        click.option("--progress-every", type=click.IntRange(1), default=None, metavar="N",
                     help="Off a terminal (a CI log): a progress line every N matches "
                          "[default: 5% of the schedule] ..."),
        click.option("--progress-seconds", type=click.FloatRange(0, min_open=True),
                     default=progress.DEFAULT_SECONDS, show_default=True, metavar="S",
                     help="... or every S seconds, whichever comes first (checked as matches end)."),
    ]
    for option in reversed(options):
        with_settings = option(with_settings)
    return with_settings
def live_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--http PORT`` and ``--http-host``: serve the live page (``referee.view.live``)."""
    command = click.option("--http-host", default="127.0.0.1", show_default=True,
                           help="Address of the live page (0.0.0.0: every interface).")(command)
    return click.option("--http", "http_port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
                        help="Serve a live page on this port (0 picks a free one): the games in progress, public "
                             "information only, the standings, the progress.")(command)


executor_option = click.option(
    "--executor", type=click.Choice([kind.value for kind in ExecutorKind]), default=None,
    help="Where the matches are played: local (this process) or ray (match workers on a Ray cluster; "
         "needs referee[ray]; docs/scaling.md). Default: the file's [executor] kind, else local.")
address_option = click.option("--address", metavar="HOST:PORT",
                              help="With --executor ray: the Ray cluster to join (default: an embedded Ray on "
                                   "this machine, using every core).")


def remote_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--server`` and ``--admin-token``: play on a remote referee; ``--executor`` and ``--address``:
    or on a Ray cluster."""
    return server_option(admin_token_option(executor_option(address_option(command))))


def chosen_executor(spec: ExecutorSpec, kind: str | None, address: str | None, server: str | None) -> ExecutorSpec:
    """The file's ``[executor]`` with ``--executor`` and ``--address`` over it; a usage error
    for choices that contradict each other."""
    chosen = None if kind is None else ExecutorKind(kind)
    if address is not None and chosen == ExecutorKind.LOCAL:
        raise click.UsageError("--address names a Ray cluster: it goes with --executor ray")
    spec = spec.overridden(chosen, address)
    if spec.kind == ExecutorKind.RAY and server is not None:
        raise click.UsageError("--server plays on one remote referee: it cannot be combined with the ray executor")
    return spec


def standings_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--anchor`` and ``--bootstrap``: how the standings are rated."""
    return anchor_option(bootstrap_option(command))

# --- output -----------------------------------------------------------------------------

json_flag = click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
