"""The ``referee`` command line: a thin Click layer over the modules of the package.

Commands: ``replay`` (check a game record) and ``play`` (one seeded match
between built-in random players, with a readable log). Options shared by
several commands (game, seed, rule options) are defined once below; exit
codes are decided in one place, :func:`exit_code_for`.
"""

from __future__ import annotations

import json
import random
import secrets
import signal
from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Any

import click

from referee import __version__, records
from referee.games import GAMES
from referee.games import get as get_game
from referee.games.base import GameError, GameSpec, GameState
from referee.tournament import sprt as sprt_verdicts
from referee.tournament.config import ConfigError
from referee.tournament.sprt import SprtError
from referee.tournament.store import StoreError
from referee.report import default_seat_names, final_table, format_options, game_log, results_report

# --- exit codes: the one place they are decided -------------------------------


class ExitCode(IntEnum):
    OK = 0
    #: a check failed: an invalid record, stated results that do not match
    CHECK_FAILED = 1
    #: bad usage: a usage error, an unreadable file, bad JSON, a bad rule option
    USAGE = 2
    #: sprt: no verdict when --max-units units were played
    INCONCLUSIVE = 3
    #: interrupted (Ctrl-C): what finished is saved (tournament, gauntlet) or reported (sprt)
    INTERRUPTED = 130
    # the verdicts of sprt, aliases of the codes above: a CI job passes on H1 and fails on H0
    #: sprt: H1 accepted (the candidate is stronger, or shows no regression)
    H1_ACCEPTED = 0
    #: sprt: H0 accepted (the candidate is not stronger, or is a regression): a failed check
    H0_ACCEPTED = 1


#: the first matching row decides; click's own usage errors exit 2 by themselves
_EXIT_CODES: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (click.UsageError, ExitCode.USAGE),
    (records.RecordFileError, ExitCode.USAGE),
    (records.RecordError, ExitCode.CHECK_FAILED),
    (GameError, ExitCode.USAGE),  # OptionError and its kin: a bad --option or game
    (ConfigError, ExitCode.USAGE),  # a tournament file with a bad key or value
    (StoreError, ExitCode.USAGE),  # an output directory holding another tournament
    (SprtError, ExitCode.USAGE),  # an SPRT that cannot go on: a bot that never came to play
)
#: the exit code of each outcome of ``referee sprt``
SPRT_EXIT_CODES: dict[str, ExitCode] = {
    sprt_verdicts.H1: ExitCode.H1_ACCEPTED,
    sprt_verdicts.H0: ExitCode.H0_ACCEPTED,
    sprt_verdicts.INCONCLUSIVE: ExitCode.INCONCLUSIVE,
    sprt_verdicts.INTERRUPTED: ExitCode.INTERRUPTED,
}
_HANDLED = tuple(kind for kind, _ in _EXIT_CODES if not issubclass(kind, click.ClickException))


def exit_code_for(error: BaseException) -> ExitCode:
    for kind, code in _EXIT_CODES:
        if isinstance(error, kind):
            return code
    raise error


class _Group(click.Group):
    """Turns the package's errors into a message on stderr and the exit code of the table."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _HANDLED as error:
            click.echo(f"Error: {_error_text(error)}", err=True)
            ctx.exit(exit_code_for(error))


def _error_text(error: BaseException) -> str:
    if isinstance(error, records.RecordError) and type(error).kind == "invalid-record" \
            or isinstance(error, records.IllegalRecordActionError):
        return f"invalid record: {error}"
    return str(error)


# --- options shared by the commands ------------------------------------------


class KeyValue(click.ParamType):
    """``KEY=VALUE`` -> (key, value), both strings."""

    name = "KEY=VALUE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        key, sep, val = str(value).partition("=")
        if not sep or not key.strip():
            self.fail(f"expected KEY=VALUE, got {value!r}", param, ctx)
        return key.strip(), val.strip()


game_argument = click.argument("game", type=click.Choice(sorted(GAMES)), metavar="GAME")
seed_option = click.option("--seed", type=int, default=None,
                           help="Seed of every random draw (default: a fresh one, printed).")
rule_options = click.option(
    "--option", "-o", "rule_options", multiple=True, type=KeyValue(), metavar="KEY=VALUE",
    help="A rule option of the game, e.g. -o rounds=1 -o trump=random-suit (repeatable).")
json_flag = click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")


def game_options(spec: GameSpec, pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Check ``--option`` strings against the game's schema (raises OptionError)."""
    return spec.check_options(dict(pairs))


def fresh_seed() -> int:
    return secrets.randbelow(2**32)


# --- the group ----------------------------------------------------------------


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def referee() -> None:
    """Tournament referee for card-game bots (Confirmation, Aegis).

    \b
    Exit codes:
      0  success (a replayed record is valid and its stated results match)
      1  a check failed: an invalid record (illegal action, bad field, ends
         early) or stated results that differ from the replay
      2  bad usage: wrong arguments, an unreadable file, bad JSON, a bad
         rule option, a bad tournament file, an output directory that
         holds another tournament; sprt: a bot that never came to play
      3  sprt: inconclusive, no verdict within --max-units units
    130  interrupted (Ctrl-C): what finished is saved (tournament,
         gauntlet) or reported (sprt)

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


# --- replay -------------------------------------------------------------------


@referee.command()
@click.argument("file", type=click.Path(dir_okay=False))
@json_flag
@click.option("--log", "show_log", is_flag=True, help="Also print the game's log.")
def replay(file: str, as_json: bool, show_log: bool) -> None:
    """Replay the game record FILE through the rules and check it.

    Prints the computed results. Exits 0 when every action is legal, the
    record ends with the game and the results it states (if any) match; 1
    naming the first illegal action or difference; 2 if FILE cannot be read
    or is not JSON. See docs/records.md for the format.
    """
    rep: records.Replay | None = None
    try:
        rep = records.replay(records.read(file))
    except records.ResultsMismatchError as error:
        rep = error.replay
        failure: records.RecordError | None = error
    except records.RecordError as error:
        if not as_json:
            raise
        failure = error
    else:
        failure = None

    if as_json:
        click.echo(json.dumps({
            "valid": failure is None,
            "results": rep.results if rep is not None else None,
            "error": failure.to_dict() if failure is not None else None,
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
    if failure is not None:
        raise failure


# --- play ---------------------------------------------------------------------


@referee.command()
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
    play_random(state, random.Random(f"players:{seed}"))
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


def play_random(state: GameState, rng: random.Random) -> None:
    """Play to the end, every seat choosing uniformly among its legal actions."""
    while True:
        seats = state.to_act()
        if not seats:
            return
        for seat in seats:  # several seats: a simultaneous decision, any order
            state.apply(seat, rng.choice(state.legal_actions(seat)))


# --- serve --------------------------------------------------------------------


@referee.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0 for all).")
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True,
              help="Port to listen on (0 picks a free one).")
@click.option("--token", "tokens", multiple=True, type=KeyValue(), metavar="BOT=SECRET",
              help="A bot allowed to connect, with its secret token (repeatable). "
                   "Without any, every bot is accepted whatever its token.")
@click.option("--tokens-file", type=click.Path(exists=True, dir_okay=False),
              help="A TOML file of bot = \"secret\" lines, added to --token.")
@click.option("--admin-token", envvar="REFEREE_ADMIN_TOKEN",
              help="Secret that lets a remote runner start matches (RunMatch). "
                   "Default: $REFEREE_ADMIN_TOKEN; none disables RunMatch.")
@click.option("--verbose", "-v", is_flag=True, help="Log every session and match (default: info).")
def serve(host: str, port: int, tokens: Sequence[tuple[str, str]], tokens_file: str | None,
          admin_token: str | None, verbose: bool) -> None:
    """Run the referee server standalone, for bots that run elsewhere.

    It logs who connects and the outcome of each match. Stop it with Ctrl-C."""
    import asyncio
    import logging

    from referee.server import serve_forever

    allowed = dict(tokens)
    if tokens_file:
        allowed.update(read_tokens(tokens_file))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    if not allowed:
        logging.getLogger("referee").warning("no --token given: any bot may connect with any token")
    try:
        asyncio.run(serve_forever(host, port, allowed or None, admin_token))
    except KeyboardInterrupt:
        pass


def read_tokens(path: str) -> dict[str, str]:
    import tomllib

    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise click.BadParameter(f"{path}: {err}", param_hint="--tokens-file") from None
    bad = [k for k, v in data.items() if not isinstance(v, str)]
    if bad:
        raise click.BadParameter(f"{path}: the token of {', '.join(bad)} must be a string",
                                 param_hint="--tokens-file")
    return data


# --- tournaments --------------------------------------------------------------

anchor_option = click.option("--anchor", type=KeyValue(), metavar="BOT=RATING", default=None,
                             help="Pin one bot's rating (default: the average is 1500).")
bootstrap_option = click.option("--bootstrap", type=click.IntRange(0, 100000), default=1000, show_default=True,
                                help="Bootstrap resamples of deal sets for the 95% intervals (0: none).")


def _anchor(anchor: tuple[str, str] | None) -> tuple[str, float] | None:
    if anchor is None:
        return None
    try:
        return anchor[0], float(anchor[1])
    except ValueError:
        raise click.BadParameter(f"the rating of {anchor[0]} must be a number, got {anchor[1]!r}",
                                 param_hint="--anchor") from None


def print_standings(store, game: str, anchor, bootstrap: int, fmt: str = "table", notes=()) -> None:
    from referee.tournament import standings

    rows = list(store.matches())
    if not rows:
        raise click.UsageError(f"{store.directory}: no finished matches yet")
    names = {b for r in rows for b in r.lineup}
    if anchor is not None and anchor[0] not in names:
        raise click.BadParameter(f"no bot {anchor[0]!r} in these results", param_hint="--anchor")
    st = standings.compute(game, rows, anchor=anchor, bootstrap=bootstrap)
    st.notes.extend(notes)
    st.notes.extend(store.bot_notes())
    if fmt == "json":
        click.echo(json.dumps(standings.to_json(st), indent=2))
    elif fmt == "csv":
        click.echo(standings.to_csv(st), nl=False)
    else:
        click.echo(standings.report(st))


@referee.command()
@click.argument("config_file", metavar="CONFIG", type=click.Path(dir_okay=False))
@click.option("--server", metavar="HOST:PORT", help="Play on this referee (RunMatch) instead of an in-process one.")
@click.option("--admin-token", envvar="REFEREE_ADMIN_TOKEN", help="The remote server's admin token.")
@anchor_option
@bootstrap_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def tournament(config_file: str, server: str | None, admin_token: str | None, anchor, bootstrap: int,
               quiet: bool) -> None:
    """Run the round-robin tournament described by the TOML file CONFIG.

    Duplicate play: every deal set is played from every seat. Results go to
    the output directory as they come; run the same command again after an
    interruption and it plays only what is missing."""

    from referee.tournament import config as tconfig
    from referee.tournament import run as trun

    cfg = tconfig.load(config_file)
    anchor_pair = _anchor(anchor)
    schedule = trun.schedule_of(cfg)
    store = trun.open_store(cfg)
    notes = [f"schedule: {schedule.note}; {len(schedule.seatings)} match(es)"]
    click.echo(f"{cfg.game} tournament: {len(cfg.bots)} bots, {cfg.deal_sets} deal set(s), seed {cfg.seed}; "
               f"{notes[0]}; results in {cfg.output}", err=True)
    play_with_progress(cfg, schedule, store, quiet, server, admin_token)
    print_standings(store, cfg.game, anchor_pair, bootstrap, notes=notes)


def play_with_progress(cfg, schedule, store, quiet: bool, server: str | None, admin_token: str | None) -> None:
    """Play what the store lacks of the schedule, with a live progress bar; Ctrl-C or
    SIGTERM stop cleanly (exit 130), what finished being saved."""
    import asyncio

    from referee.tournament import run as trun

    bar = None if quiet else _LiveBar(cfg.game, len(schedule.seatings))
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops cleanly, like Ctrl-C
    try:
        played = asyncio.run(trun.play_schedule(cfg, schedule, store, progress=bar.update if bar else None,
                                                server=server, admin_token=admin_token))
    except KeyboardInterrupt:
        click.echo(f"\ninterrupted: {store.count()} of {len(schedule.seatings)} matches are saved; "
                   f"run the same command to resume", err=True)
        raise SystemExit(ExitCode.INTERRUPTED) from None
    finally:
        if bar:
            bar.close()
    click.echo(f"played {played} match(es) now, {store.count()} in all", err=True)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


class _LiveBar:
    """A progress bar on stderr showing the live standings (point estimates)."""

    def __init__(self, game: str, total: int):
        self.game = game
        self.rows: list = []
        self.text = ""
        self.bar = click.progressbar(length=total, label="matches", file=click.get_text_stream("stderr"),
                                     item_show_func=lambda _: self.text, show_pos=True)
        self.bar.__enter__()

    def update(self, finished: int, total: int, played) -> None:
        from referee.tournament import ratings, standings
        from referee.tournament.store import MatchRow

        if played is None:
            self.bar.update(finished - self.bar.pos)
            return
        self.rows.append(MatchRow(played.seating.key, played.seating.deal_set, played.seating.lineup,
                                  played.results))
        elos = ratings.fit(standings.outcomes_of(self.game, self.rows))
        self.text = "  ".join(f"{name} {elo:.0f}" for name, elo in sorted(elos.items(), key=lambda kv: -kv[1])[:6])
        self.bar.update(finished - self.bar.pos)

    def close(self) -> None:
        self.bar.__exit__(None, None, None)


@referee.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@anchor_option
@bootstrap_option
def ratings(directory: str, fmt: str, anchor, bootstrap: int) -> None:
    """Print the standings of the tournament results stored in DIRECTORY."""
    from referee.tournament.store import Store

    store = Store(directory, create=False)
    print_standings(store, store.config()["game"], _anchor(anchor), bootstrap, fmt)


@referee.command()
@game_argument
@click.option("--bot", "bots", multiple=True, type=KeyValue(), metavar="NAME=COMMAND", required=True,
              help='A bot and the command that starts it, e.g. --bot rnd="python -m sample_bots.random" '
                   "(repeatable; the kit's --address/--name/--token/--capacity are appended).")
@click.option("--lineup", help="Bot names per seat, comma-separated (default: the bots in order, "
                               "repeated to fill the seats).")
@seed_option
@rule_options
@click.option("--decision-ms", type=click.IntRange(1), default=1000, show_default=True)
@click.option("--bank-ms", type=click.IntRange(0), default=10000, show_default=True)
@click.option("--record", "record_file", type=click.Path(dir_okay=False), help="Write the game record here.")
@click.option("--log/--no-log", "show_log", default=True, help="Print the match's log (default: yes).")
def match(game: str, bots: Sequence[tuple[str, str]], lineup: str | None, seed: int | None,
          rule_options: Sequence[tuple[str, str]], decision_ms: int, bank_ms: int, record_file: str | None,
          show_log: bool) -> None:
    """Play one match of GAME between bots started from the given commands (a quick check).

    The referee runs in-process; bot output goes to stderr."""
    import asyncio
    import shlex

    from referee.runner import Clock
    from referee.tournament.config import BOT_NAME, BotSpec
    from referee.tournament.executors import LocalExecutor
    from referee.tournament.schedule import Seating

    spec = get_game(game)
    options = game_options(spec, rule_options)
    names = [name for name, _ in bots]
    for name in names:
        if not BOT_NAME.match(name):
            raise click.BadParameter(f"bad bot name {name!r}", param_hint="--bot")
    seats = lineup.split(",") if lineup else [names[i % len(names)] for i in range(spec.num_seats)]
    if len(seats) != spec.num_seats or set(seats) - set(names):
        raise click.BadParameter(f"{game} needs {spec.num_seats} seats named among {', '.join(names)}",
                                 param_hint="--lineup")
    seed = fresh_seed() if seed is None else seed
    executor = LocalExecutor(game, options, Clock(decision_ms / 1000, bank_ms / 1000),
                             [BotSpec(name, tuple(shlex.split(command))) for name, command in bots],
                             {n: seats.count(n) for n in names}, log_dir=None, connect_timeout=30)

    async def play():
        async with executor:
            return await executor.play(Seating(0, seed, tuple(seats)), match_id="")  # the referee names it

    played = asyncio.run(play())
    if show_log:
        state = records.replay(played.record).state
        click.echo(f"{game}, seed {seed}; options: {format_options(state.options)}")
        click.echo("\n".join(game_log(state, seats)))
        click.echo()
    click.echo("\n".join(final_table(played.results, seats)))
    for fault in played.record["meta"]["faults"]:
        click.echo(f"fault: seat {fault['seat']} ({seats[fault['seat']]}) {fault['kind']} at decision "
                   f"{fault['decision']}: {fault['detail']}")
    if record_file:
        records.write(record_file, played.record)


# --- regression testing: gauntlet and sprt ------------------------------------------

server_option = click.option("--server", metavar="HOST:PORT",
                             help="Play on this referee (RunMatch) instead of an in-process one.")
admin_token_option = click.option("--admin-token", envvar="REFEREE_ADMIN_TOKEN",
                                  help="The remote server's admin token (default: $REFEREE_ADMIN_TOKEN).")
quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress output.")
decision_ms_option = click.option("--decision-ms", type=click.IntRange(1), default=1000, show_default=True,
                                  help="Time per decision.")
bank_ms_option = click.option("--bank-ms", type=click.IntRange(0), default=10000, show_default=True,
                              help="Extra time per seat per match, spent on overruns.")


@referee.command()
@click.argument("config_file", metavar="CONFIG", type=click.Path(dir_okay=False))
@server_option
@admin_token_option
@anchor_option
@bootstrap_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@quiet_option
def gauntlet(config_file: str, server: str | None, admin_token: str | None, anchor, bootstrap: int, fmt: str,
             quiet: bool) -> None:
    """Run the gauntlet described by the TOML file CONFIG: one candidate against
    every baseline (a tournament file with a [gauntlet] table naming the candidate).

    Duplicate play as in tournaments, but only matches involving the candidate.
    Prints the candidate's Elo difference against each baseline (head to head,
    95% interval by bootstrap over deal sets), then the full standings. Results
    are saved as they come; the same command resumes an interrupted run."""

    from referee.tournament import gauntlet as tgauntlet
    from referee.tournament import standings

    cfg = tgauntlet.load(config_file)
    anchor_pair = _anchor(anchor)
    schedule = tgauntlet.make_schedule(cfg)
    store = tgauntlet.open_store(cfg)
    note = f"schedule: {schedule.note}; {len(schedule.seatings)} match(es)"
    click.echo(f"{cfg.game} gauntlet: {cfg.candidate} against {', '.join(cfg.baselines)}; "
               f"{cfg.tournament.deal_sets} deal set(s), seed {cfg.tournament.seed}; {note}; "
               f"results in {cfg.tournament.output}", err=True)
    play_with_progress(cfg.tournament, schedule, store, quiet, server, admin_token)
    rows = list(store.matches())
    if anchor_pair is not None and anchor_pair[0] not in {b for r in rows for b in r.lineup}:
        raise click.BadParameter(f"no bot {anchor_pair[0]!r} in these results", param_hint="--anchor")
    against = tgauntlet.versus(cfg.game, rows, cfg.candidate, bootstrap=bootstrap)
    st = standings.compute(cfg.game, rows, anchor=anchor_pair, bootstrap=bootstrap)
    st.notes.append(note)
    st.notes.extend(store.bot_notes())
    if fmt == "json":
        click.echo(json.dumps({"candidate": cfg.candidate, "versus": [v.__dict__ for v in against],
                               **standings.to_json(st)}, indent=2))
        return
    click.echo(f"{cfg.candidate} against each baseline (Elo difference from their head-to-head games; "
               f"± half the 95% interval, {bootstrap} bootstrap resamples of deal sets):")
    click.echo(tgauntlet.versus_table(cfg.candidate, against))
    click.echo()
    click.echo(standings.report(st))


@referee.command()
@click.argument("config_file", metavar="[CONFIG]", required=False, type=click.Path(dir_okay=False))
@click.option("--game", type=click.Choice(sorted(GAMES)), help="The game (without CONFIG).")
@click.option("--candidate", type=KeyValue(), metavar="NAME=COMMAND",
              help='The bot on trial and the command that starts it (without CONFIG), e.g. '
                   '--candidate new="python bot.py".')
@click.option("--baseline", type=KeyValue(), metavar="NAME=COMMAND",
              help="The bot it must beat, and its command (without CONFIG).")
@seed_option
@rule_options
@decision_ms_option
@bank_ms_option
@click.option("--preset", type=click.Choice(list(sprt_verdicts.PRESETS)),
              help="Hypotheses: stronger = <0, 20> Elo (the default), non-regression = <-17.5, 2.5> Elo.")
@click.option("--elo0", type=float, help="H0: the candidate is this many Elo stronger (with --elo1).")
@click.option("--elo1", type=float, help="H1: the candidate is this many Elo stronger (with --elo0).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Probability of accepting H1 when H0 holds (a false pass).")
@click.option("--beta", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Probability of accepting H0 when H1 holds (a false failure).")
@click.option("--max-units", type=click.IntRange(1), default=sprt_verdicts.DEFAULT_MAX_UNITS, show_default=True,
              help="Stop without a verdict (exit 3) after this many units.")
@click.option("--concurrency", type=click.IntRange(1), default=2, show_default=True, help="Matches played at once.")
@click.option("--output", type=click.Path(file_okay=False),
              help="Save every match and the bots' logs here; the same command resumes from it.")
@server_option
@admin_token_option
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="The report on stdout.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False),
              help="Also write the one-paragraph Markdown summary (for a pull request) to this file.")
@quiet_option
def sprt(config_file: str | None, game: str | None, candidate: tuple[str, str] | None,
         baseline: tuple[str, str] | None, seed: int | None, rule_options: Sequence[tuple[str, str]],
         decision_ms: int, bank_ms: int, preset: str | None, elo0: float | None, elo1: float | None, alpha: float,
         beta: float, max_units: int, concurrency: int, output: str | None, server: str | None,
         admin_token: str | None, fmt: str, markdown_file: str | None, quiet: bool) -> None:
    """Is the candidate stronger than the baseline? A sequential probability
    ratio test (GSPRT, pentanomial, as fishtest) on duplicate units.

    A unit is two matches on the same deals with the seats swapped (Aegis: C B
    then B C; Confirmation: C B C B then B C B C). After each unit the
    log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0) is updated;
    the test stops when it leaves the bounds, or at --max-units. The bots come
    from --game/--candidate/--baseline, or from CONFIG (a tournament file with
    two bots and an [sprt] table); options given here override the file's.

    \b
    Exit codes: 0 H1 accepted (stronger / no regression), 1 H0 accepted
    (not stronger / a regression), 3 inconclusive at the cap, 2 bad usage or
    a bot that never came to play, 130 interrupted. See docs/regression.md."""
    import asyncio
    import dataclasses
    import shlex
    from pathlib import Path

    from click.core import ParameterSource

    from referee.runner import Clock
    from referee.tournament.config import BOT_NAME, BotSpec
    from referee.tournament.store import Store

    ctx = click.get_current_context()

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)

    if preset is not None and (elo0 is not None or elo1 is not None):
        raise click.UsageError("give --preset or --elo0 and --elo1, not both")
    if (elo0 is None) != (elo1 is None):
        raise click.UsageError("--elo0 and --elo1 go together")
    hypotheses: dict[str, Any] = {}
    if preset is not None:
        hypotheses = {"elo0": sprt_verdicts.PRESETS[preset][0], "elo1": sprt_verdicts.PRESETS[preset][1],
                      "preset": preset}
    elif elo0 is not None:
        hypotheses = {"elo0": elo0, "elo1": elo1, "preset": None}
    try:
        if config_file is not None:
            for name, flag in (("game", "--game"), ("candidate", "--candidate"), ("baseline", "--baseline"),
                               ("rule_options", "--option")):
                if given(name):
                    raise click.UsageError(f"{flag} cannot be combined with CONFIG (the file gives the game, "
                                           f"its options and the bots)")
            setup = sprt_verdicts.load(config_file)
            changes: dict[str, Any] = dict(hypotheses)
            for name, value in (("seed", seed), ("alpha", alpha), ("beta", beta), ("max_units", max_units),
                                ("concurrency", concurrency)):
                if given(name):
                    changes[name] = value
            if given("output"):
                changes["output"] = Path(output).resolve()
            if given("decision_ms") or given("bank_ms"):
                changes["clock"] = Clock((decision_ms if given("decision_ms") else setup.clock.decision_s * 1000)
                                         / 1000, (bank_ms if given("bank_ms") else setup.clock.bank_s * 1000) / 1000)
            setup = dataclasses.replace(setup, **changes)
        else:
            if game is None or candidate is None or baseline is None:
                raise click.UsageError("give CONFIG, or --game, --candidate and --baseline")
            for (name, _), flag in ((candidate, "--candidate"), (baseline, "--baseline")):
                if not BOT_NAME.match(name):
                    raise click.BadParameter(f"bad bot name {name!r}", param_hint=flag)
            for (_, command), flag in ((candidate, "--candidate"), (baseline, "--baseline")):
                if not shlex.split(command):
                    raise click.BadParameter("the command is empty", param_hint=flag)
            options = game_options(get_game(game), rule_options)
            setup = sprt_verdicts.SprtSetup(
                game, options, BotSpec(candidate[0], tuple(shlex.split(candidate[1]))),
                BotSpec(baseline[0], tuple(shlex.split(baseline[1]))), fresh_seed() if seed is None else seed,
                Clock(decision_ms / 1000, bank_ms / 1000), concurrency,
                **{"elo0": sprt_verdicts.PRESETS["stronger"][0], "elo1": sprt_verdicts.PRESETS["stronger"][1],
                   "preset": "stronger", **hypotheses},
                alpha=alpha, beta=beta, max_units=max_units, output=Path(output).resolve() if output else None)
    except ValueError as err:
        if isinstance(err, (click.ClickException, ConfigError)):
            raise
        raise click.UsageError(str(err)) from None

    store = None
    if setup.output is not None:
        store = Store(setup.output)
        store.claim(setup.fingerprint(), setup.describe(),
                    [(b.name, "external" if b.external else "launched", json.dumps(list(b.command)) or None)
                     for b in (setup.candidate, setup.baseline)])
    tally = sprt_verdicts.Tally(sprt_verdicts.SPRT(setup.elo0, setup.elo1, setup.alpha, setup.beta))
    lower, upper = tally.sprt.lower, tally.sprt.upper
    if not quiet:
        click.echo(f"sprt {setup.game}: {setup.candidate.name} against {setup.baseline.name}, seed {setup.seed}; "
                   f"H0 Elo {setup.elo0:g}, H1 Elo {setup.elo1:g}; LLR bounds {lower:.2f}, {upper:.2f}; "
                   f"at most {setup.max_units} units, {setup.concurrency} match(es) at once", err=True)
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM (a cancelled CI job) stops cleanly, like Ctrl-C
    try:
        status = asyncio.run(sprt_verdicts.run(setup, tally, None if quiet else _sprt_progress(), store=store,
                                               server=server, admin_token=admin_token))
    except KeyboardInterrupt:
        status = sprt_verdicts.INTERRUPTED
        click.echo(f"\ninterrupted after {tally.sprt.n} unit(s); the report covers them"
                   + ("; run the same command to resume" if store is not None else ""), err=True)
    finally:
        if store is not None:
            store.close()
    report = sprt_verdicts.summary(setup, tally, status)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    elif fmt == "markdown":
        click.echo(sprt_verdicts.markdown(report), nl=False)
    else:
        click.echo(sprt_verdicts.text(report))
    if markdown_file:
        Path(markdown_file).write_text(sprt_verdicts.markdown(report), encoding="utf-8")
    ctx.exit(SPRT_EXIT_CODES[status])


def _sprt_progress(every: int = 10, seconds: float = 10.0):
    """A progress line on stderr every ``every`` units or ``seconds`` seconds, and at the verdict."""
    import time

    last = [time.monotonic()]

    def show(tally) -> None:
        now = time.monotonic()
        n = tally.sprt.n
        if tally.verdict is None and n % every and now - last[0] < seconds:
            return
        last[0] = now
        est = sprt_verdicts.estimate(tally.sprt.counts)
        click.echo(f"unit {n}: LLR {tally.sprt.llr():.2f} ({tally.sprt.lower:.2f}, {tally.sprt.upper:.2f}); "
                   f"W-D-L {tally.wins}-{tally.draws}-{tally.losses}; pentanomial "
                   f"{' '.join(map(str, tally.sprt.counts))}; Elo {sprt_verdicts._elo_text(est)}", err=True)

    return show
