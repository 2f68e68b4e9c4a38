"""``referee sprt``: is the candidate stronger than the baseline? Exit codes gate a CI job."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from referee import files
from referee.cli.exits import run_interruptibly
from referee.cli.options import (
    BotCommand,
    announce_sandbox,
    bank_ms_option,
    chosen_executor,
    decision_ms_option,
    fresh_seed,
    quiet_option,
    remote_options,
    rerun_option,
    rule_options,
    seed_option,
)
from referee.cli.progress import match_line
from referee.competition import service
from referee.competition.sprt import report as sprt_report
from referee.competition.sprt import setup as sprt_setup
from referee.competition.sprt.units import Tally
from referee.games import GAMES
from referee.model import BotSpec, ConfigError, Played
from referee.results import pool as tpool
from referee.results.store import MatchRow
from referee.stats.sprt import SPRT, EloModel, Verdict, estimate

#: the options that override an SPRT file's values when given
_OVERRIDES = ("seed", "alpha", "beta", "max_units", "concurrency", "output", "decision_ms", "bank_ms", "elo_model")
#: the options that only go without an SPRT file, and their flags
_WITHOUT_CONFIG = (("game", "--game"), ("candidate", "--candidate"), ("baseline", "--baseline"),
                   ("rule_options", "--option"))


@click.command()
@click.argument("config_file", metavar="[CONFIG]", required=False, type=click.Path(dir_okay=False))
@click.option("--game", type=click.Choice(sorted(GAMES)), help="The game (without CONFIG).")
@click.option("--candidate", type=BotCommand(), metavar="NAME=COMMAND",
              help='The bot on trial and the command that starts it (without CONFIG), e.g. '
                   '--candidate new="python bot.py".')
@click.option("--baseline", type=BotCommand(), metavar="NAME=COMMAND",
              help="The bot it must beat, and its command (without CONFIG).")
@seed_option
@rule_options
@decision_ms_option
@bank_ms_option
@click.option("--elo-model", type=click.Choice([m.value for m in EloModel]), default=None,
              help="The unit of the hypotheses: normalized Elo (the default, as fishtest) or logistic Elo.")
@click.option("--preset", type=click.Choice(list(sprt_setup.PRESETS)),
              help="Hypotheses: stronger = <0, 25> normalized Elo (<0, 20> logistic; the default), "
                   "non-regression = <-22, 3> normalized (<-17.5, 2.5> logistic).")
@click.option("--elo0", type=float, help="H0: the candidate is this many Elo stronger (with --elo1; in --elo-model).")
@click.option("--elo1", type=float, help="H1: the candidate is this many Elo stronger (with --elo0; in --elo-model).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Probability of accepting H1 when H0 holds (a false pass).")
@click.option("--beta", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Probability of accepting H0 when H1 holds (a false failure).")
@click.option("--max-units", type=click.IntRange(1), default=sprt_setup.DEFAULT_MAX_UNITS, show_default=True,
              help="Stop without a verdict (exit 3) after this many units.")
@click.option("--concurrency", type=click.IntRange(1), default=2, show_default=True, help="Matches played at once.")
@click.option("--output", type=click.Path(file_okay=False),
              help="Save every match and the bots' logs here; the same command resumes from it.")
@remote_options
@rerun_option
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="The report on stdout.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False),
              help="Also write the one-paragraph Markdown summary (for a pull request) to this file.")
@click.option("--pool", "pool_file", type=click.Path(dir_okay=False),
              help="A reference pool's file (docs/pool.md) whose bot the baseline is (by name): the report gives "
                   "the candidate's rating on the pool's scale, anchored to the baseline.")
@quiet_option
@click.option("--verbose", "-v", is_flag=True, help="A line per finished match.")
def sprt(config_file: str | None, game: str | None, candidate: BotSpec | None, baseline: BotSpec | None,
         seed: int | None, rule_options: Sequence[tuple[str, str]], decision_ms: int, bank_ms: int,
         elo_model: str | None, preset: str | None, elo0: float | None, elo1: float | None, alpha: float,
         beta: float, max_units: int,
         concurrency: int, output: str | None, server: str | None, admin_token: str | None,
         executor: str | None, address: str | None, rerun: tuple[str, ...], fmt: str, markdown_file: str | None,
         pool_file: str | None, quiet: bool, verbose: bool) -> None:
    """Is the candidate stronger than the baseline? A sequential probability
    ratio test (GSPRT, pentanomial, as fishtest) on duplicate units, with the
    hypotheses in normalized Elo (the default) or logistic Elo.

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
    ctx = click.get_current_context()
    given = {name for name in ctx.params
             if ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)}
    try:
        setup = (_from_file(config_file, ctx.params, given) if config_file is not None else
                 _from_options(game, candidate, baseline, seed, rule_options, decision_ms, bank_ms, elo_model,
                               preset, elo0, elo1, alpha, beta, max_units, concurrency, output))
    except ValueError as err:
        if isinstance(err, (click.ClickException, ConfigError)):
            raise
        raise click.UsageError(str(err)) from None
    setup = dataclasses.replace(setup, executor=chosen_executor(setup.executor, executor, address, server),
                                markdown=Path(markdown_file) if markdown_file else None)
    if pool_file is not None and setup.pool is not None:
        raise click.UsageError(f"--pool cannot be combined with the [pool] of {config_file}")
    pool = (_pool(pool_file, setup.baseline.name, setup.candidate.name) if pool_file is not None else
            tpool.loads(json.dumps(setup.pool.content), str(setup.pool.file)) if setup.pool is not None else None)
    if pool is not None and GAMES[setup.game].num_seats != 2:
        raise click.UsageError(f"a pool's scale is fitted on pairwise results, and an SPRT of {setup.game} scores "
                               f"two seats' total against two: its Elo is another scale (docs/regression.md); rate "
                               f"the candidate on the pool's scale with a gauntlet against the pool")
    outcome = service.run_sprt(service.SprtRequest(setup, rerun, server, admin_token, pool),
                               SprtDisplay(quiet, verbose))
    print_outcome(outcome, fmt, markdown_file)
    ctx.exit(outcome.exit_code)


def _pool(path: str, baseline: str, candidate: str) -> tpool.Pool:
    """The ``--pool`` file, read and checked, whose bots the baseline is one of and the candidate is not
    (a usage error if not: a candidate with a pool bot's name would be held at its rating)."""
    try:
        pool = tpool.read(path)
    except tpool.PoolFileError as err:
        raise click.BadParameter(str(err), param_hint="--pool") from None
    names = [b.name for b in pool.bots]
    if baseline not in names:
        raise click.BadParameter(f"the baseline {baseline!r} is not a bot of pool {pool.short_id} (its bots: "
                                 f"{', '.join(names)}): the rating is anchored to the baseline", param_hint="--pool")
    if candidate in names:
        raise click.BadParameter(f"the candidate {candidate!r} has the name of a bot of pool {pool.short_id}: "
                                 "name it otherwise (the pool's bots are held at their ratings)", param_hint="--pool")
    return pool


def print_outcome(outcome: service.Outcome, fmt: str, markdown_file: str | None) -> None:
    """An interruption on standard error, the report on standard output in ``fmt`` (text, json,
    markdown), and with ``--markdown`` its paragraph in that file."""
    report = outcome.report
    assert report is not None, "the outcome of an SPRT"
    if outcome.interrupted:
        click.echo(f"\ninterrupted after {report['units']} unit(s); the report covers them"
                   + ("; run the same command to resume" if outcome.directory is not None else ""), err=True)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    elif fmt == "markdown":
        click.echo(sprt_report.markdown(report), nl=False)
    else:
        click.echo(sprt_report.text(report))
    if markdown_file:
        files.write_text(markdown_file, sprt_report.markdown(report))


def _from_file(config_file: str, params: Mapping[str, Any], given: set[str]) -> sprt_setup.SprtSetup:
    """The set-up of an SPRT file, the options ``given`` on the command line over the file's."""
    for name, flag in _WITHOUT_CONFIG:
        if name in given:
            raise click.UsageError(f"{flag} cannot be combined with CONFIG (the file gives the game, "
                                   f"its options and the bots)")
    from_file = sprt_setup.load(config_file)
    elo_model = params["elo_model"]
    hypotheses = sprt_setup.Hypotheses.given(params["preset"], params["elo0"], params["elo1"],
                                             EloModel(elo_model) if elo_model else from_file.elo_model)
    overrides = {name: params[name] for name in _OVERRIDES if name in given}
    if "elo_model" in overrides:
        overrides["elo_model"] = EloModel(overrides["elo_model"])
    return from_file.with_overrides(hypotheses, **overrides)


def _from_options(game: str | None, candidate: BotSpec | None, baseline: BotSpec | None, seed: int | None,
                  rule_options: Sequence[tuple[str, str]], decision_ms: int, bank_ms: int, elo_model: str | None,
                  preset: str | None, elo0: float | None, elo1: float | None, alpha: float, beta: float,
                  max_units: int, concurrency: int, output: str | None) -> sprt_setup.SprtSetup:
    """The set-up of the command line without an SPRT file."""
    model = EloModel(elo_model) if elo_model is not None else None
    hypotheses = sprt_setup.Hypotheses.given(preset, elo0, elo1, model)
    if hypotheses is None and model is not None:
        hypotheses = sprt_setup.Hypotheses.of_preset("stronger", model)
    if game is None or candidate is None or baseline is None:
        raise click.UsageError("give CONFIG, or --game, --candidate and --baseline")
    return sprt_setup.from_options(
        game, candidate, baseline, fresh_seed() if seed is None else seed, options=dict(rule_options),
        hypotheses=hypotheses, decision_ms=decision_ms, bank_ms=bank_ms, alpha=alpha, beta=beta,
        max_units=max_units, concurrency=concurrency, output=output)


class SprtDisplay:
    """What ``referee sprt`` prints as the test goes (:class:`service.SprtObserver`), on standard error:
    the announcements, the heading and the sandbox, a progress line every ``every`` units or
    ``seconds`` seconds and at the verdict, and with ``verbose`` a line per finished match;
    ``quiet``: only the announcements and the sandbox's risk. Ctrl-C or SIGTERM stop cleanly (exit
    130), the units counted reported."""

    def __init__(self, quiet: bool, verbose: bool, every: int = 10, seconds: float = 10.0) -> None:
        self.quiet, self.verbose, self.every, self.seconds = quiet, verbose, every, seconds
        self.game = ""
        self.last = time.monotonic()

    def say(self, line: str) -> None:
        click.echo(line, err=True)

    def started(self, setup: sprt_setup.SprtSetup, test: SPRT) -> None:
        self.game = setup.game
        if not self.quiet:
            click.echo(f"sprt {setup.game}: {setup.candidate.name} against {setup.baseline.name}, seed {setup.seed}; "
                       f"H0 {setup.elo0:g}, H1 {setup.elo1:g} {sprt_report.UNITS[setup.elo_model]}; "
                       f"LLR bounds {test.lower:.2f}, {test.upper:.2f}; "
                       f"at most {setup.max_units} units, {setup.concurrency} match(es) at once", err=True)
        announce_sandbox(setup.sandbox, setup.isolation, quiet=self.quiet, advise=False)
        self.last = time.monotonic()

    def counted(self, tally: Tally) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        n = tally.sprt.n
        if tally.verdict is None and n % self.every and now - self.last < self.seconds:
            return
        self.last = now
        est = estimate(tally.sprt.counts)
        click.echo(f"unit {n}: LLR {tally.sprt.llr():.2f} ({tally.sprt.lower:.2f}, {tally.sprt.upper:.2f}); "
                   f"W-D-L {tally.wins}-{tally.draws}-{tally.losses}; pentanomial "
                   f"{' '.join(map(str, tally.sprt.counts))}; Elo {sprt_report.elo_text(est)}, "
                   f"nElo {sprt_report.nelo_text(est)}", err=True)

    def played(self, number: int | None, match: Played) -> None:
        """``--verbose``: "Finished match N (...)" (N: the store's number of the match, or without
        --output the count of matches this run)."""
        if self.verbose:
            s = match.seating
            click.echo(match_line(self.game, number, MatchRow(s.key, s.deal_set, s.lineup, match.results)), err=True)

    def play(self, work: Coroutine[Any, Any, Verdict]) -> Verdict:
        return run_interruptibly(work)
