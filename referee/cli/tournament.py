"""``referee tournament``, ``referee ratings`` and ``referee gauntlet``: duplicate play from a
tournament file, results in a store, standings from it."""

from __future__ import annotations

import dataclasses
import json
import secrets
import socket
import sys
from collections.abc import Coroutine, Iterable, Sequence
from typing import Any, TypeVar

import click

from referee.cli.exits import run_interruptibly
from referee.cli.options import (
    announce_sandbox,
    chosen_executor,
    collusion_option,
    config_argument,
    live_options,
    los_option,
    progress_options,
    ranks_option,
    ratings_format_option,
    remote_options,
    rerun_option,
    standings_options,
)
from referee.cli.progress import ProgressSettings, RunDisplay
from referee.competition import config as tconfig
from referee.competition import gauntlet as tgauntlet
from referee.competition import service
from referee.competition.gauntlet import GauntletConfig
from referee.competition.run import Progress
from referee.model import Played, Schedule, TournamentConfig
from referee.results import standings
from referee.results.standings import Standings
from referee.results.store import MatchRow, Store
from referee.view.about import about_of
from referee.view.live import LivePage, about_source, listen, standings_source

T = TypeVar("T")


@click.command()
@config_argument
@remote_options
@standings_options
@rerun_option
@progress_options
@live_options
def tournament(config_file: str, server: str | None, admin_token: str | None, executor: str | None,
               address: str | None, anchor: tuple[str, float] | None, bootstrap: int, rerun: tuple[str, ...],
               progress: ProgressSettings, http_port: int | None, http_host: str) -> None:
    """Run the tournament described by the TOML file CONFIG: a round robin, or
    with schedule = "adaptive" deal set after deal set until its stop rule.

    Duplicate play: every deal set is played from every seat. Results go to
    the output directory as they come; run the same command again after an
    interruption, or with a file that grew (more deal sets, new entries,
    entries withdrawn), and it plays only what is missing. Exit code 3
    (inconclusive, adaptive): max_deal_sets reached before the stop rule was
    met; 4 (incomplete): a bot died for good and did not play all its matches;
    5 (withdrawn, with absent = "withdraw"): an entry did not start or died for
    good, the others played all theirs."""
    cfg = service.prepared(tconfig.load(config_file), lambda spec: chosen_executor(spec, executor, address, server))
    http_socket = _listen(http_host, http_port)  # a busy port stops the run before anything is written
    observer = RunObserver(progress, live=(http_host, http_socket, bootstrap) if http_socket is not None else None)
    outcome = service.run_tournament(service.TournamentRequest(cfg, rerun, server, admin_token, anchor, bootstrap),
                                     observer)
    observer.finished(outcome)
    if outcome.stop is not None and outcome.stop.settled:  # at the cap: the ending says it
        _say(outcome.stop.text)
    click.echo(standings.report(shown(outcome, anchor)))
    print_ending(outcome)
    sys.exit(outcome.exit_code)


@click.command()
@click.argument("directory", type=click.Path(file_okay=False))
@ratings_format_option
@standings_options
@los_option
@ranks_option
@collusion_option
def ratings(directory: str, fmt: str, anchor: tuple[str, float] | None, bootstrap: int, show_los: bool,
            show_ranks: bool, show_collusion: bool) -> None:
    """Print the standings of the tournament results stored in DIRECTORY: the Elo table with
    95% intervals, head to head (Elo difference, W-D-L, game pairs) and seat bias; --los adds
    the likelihood-of-superiority matrix, --ranks each bot's rank probabilities, --collusion the
    collusion check (pairs of entries whose presence moves each other's points on the same cards,
    for review; it changes no result and no exit code). docs/tournaments.md explains every column.
    Exit code 3 (inconclusive): an adaptive tournament reached max_deal_sets before its stop rule
    was met; 4 (incomplete): a bot died for good and did not play all its matches (marked in the
    table); 5 (withdrawn): an entry did not start or died for good (listed below the table)."""
    if show_collusion and fmt not in ("table", "json"):
        raise click.BadParameter("--collusion goes with --format table or json", param_hint="--collusion")
    store = Store(directory, create=False)
    print_standings(store, anchor, bootstrap, fmt, show_los=show_los, show_ranks=show_ranks,
                    show_collusion=show_collusion)
    outcome = service.outcome_of(store)
    print_ending(outcome)
    sys.exit(outcome.exit_code)


@click.command()
@config_argument
@remote_options
@standings_options
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True, help="markdown: the candidate's table and the verdict, for a pull request.")
@click.option("--confidence", type=click.FloatRange(0.5, 0.9999), default=0.95, show_default=True,
              help="The verdict: exit 1 when the candidate is worse than a baseline at this confidence (a "
                   "one-sided test: the one-sided upper bound of its Elo difference below 0, its LOS below "
                   "1 - CONFIDENCE).")
@rerun_option
@progress_options
def gauntlet(config_file: str, server: str | None, admin_token: str | None, executor: str | None,
             address: str | None, anchor: tuple[str, float] | None, bootstrap: int, fmt: str, confidence: float,
             rerun: tuple[str, ...], progress: ProgressSettings) -> None:
    """Run the gauntlet described by the TOML file CONFIG: one candidate against
    every baseline (a tournament file with a [gauntlet] table naming the candidate).

    Duplicate play as in tournaments, but only matches involving the candidate.
    Prints the candidate's Elo difference against each baseline (head to head,
    95% interval over deal sets, a bound after a sweep, and the one-sided bound
    the verdict reads), then the full standings, then the verdict. Results are
    saved as they come; the same command resumes an interrupted run. Exit code
    1 (a failed check, for CI): the candidate is worse than a baseline at
    --confidence; 4 (incomplete): a bot died for good and did not play all its
    matches; 5: an entry was withdrawn."""
    cfg = tgauntlet.load(config_file)
    cfg = dataclasses.replace(cfg, tournament=service.prepared(
        cfg.tournament, lambda spec: chosen_executor(spec, executor, address, server)))
    observer = RunObserver(progress, first=cfg.candidate, kind="gauntlet", about=cfg)
    outcome = service.run_gauntlet(service.GauntletRequest(cfg, rerun, server, admin_token, anchor, bootstrap,
                                                           confidence), observer)
    observer.finished(outcome)
    print_gauntlet(cfg, outcome, shown(outcome, anchor), fmt, confidence)
    print_ending(outcome)
    sys.exit(outcome.exit_code)


def print_gauntlet(cfg: GauntletConfig, outcome: service.Outcome, st: Standings, fmt: str, confidence: float) -> None:
    """A gauntlet's outcome on standard output in ``fmt``: its candidate against each baseline, the
    standings ``st`` and the verdict (table, json), or the candidate's table and the verdict (markdown)."""
    against, verdict = list(outcome.versus), outcome.verdict
    assert verdict is not None, "a gauntlet's outcome with standings has its verdict"
    on_pool = tgauntlet.anchored(cfg.candidate, st)  # against a pool: its rating on the pool's scale
    if fmt == "json":
        click.echo(json.dumps({"candidate": cfg.candidate, "versus": [tgauntlet.versus_json(v) for v in against],
                               "verdict": verdict.__dict__, **({"anchored": on_pool} if on_pool else {}),
                               **standings.to_json(st)}, indent=2))
    elif fmt == "markdown":
        click.echo(tgauntlet.markdown(cfg.game, cfg.candidate, against, verdict, on_pool), nl=False)
    else:
        click.echo(tgauntlet.caption(cfg.candidate, confidence))
        click.echo(tgauntlet.versus_table(cfg.candidate, against, confidence))
        click.echo()
        click.echo(standings.report(st))
        click.echo()
        click.echo(f"verdict: {verdict.text}")
        if on_pool is not None:
            click.echo(on_pool["text"])


# --- shared by the commands above -------------------------------------------------------


def check_anchor(rows: Sequence[MatchRow], anchor: tuple[str, float] | None) -> None:
    """A usage error unless the ``--anchor`` bot (if any) is in these results."""
    if anchor is not None and anchor[0] not in {b for r in rows for b in r.lineup}:
        raise click.BadParameter(f"no bot {anchor[0]!r} in these results", param_hint="--anchor")


def print_standings(store: Store, anchor: tuple[str, float] | None, bootstrap: int, fmt: str = "table",
                    notes: Iterable[str] = (), show_los: bool = False, show_ranks: bool = False,
                    show_collusion: bool = False) -> None:
    from referee.results import collusion  # late: numpy's statistics (~80 ms), which only --collusion needs

    rows = list(store.matches())
    if not rows:
        raise click.UsageError(f"{store.directory}: no finished matches yet")
    check_anchor(rows, anchor)
    st = standings.of_store(store, rows, anchor=anchor, bootstrap=bootstrap, notes=notes)
    checked = collusion.check(rows) if show_collusion else None
    if fmt == "json":
        click.echo(json.dumps({**standings.to_json(st), **({"collusion": checked.to_json()} if checked else {})},
                              indent=2))
    elif fmt == "csv":
        click.echo(standings.to_csv(st), nl=False)
    elif fmt == "csv-pairs":
        click.echo(standings.to_csv_pairs(st), nl=False)
    else:
        click.echo(standings.report(st, los=show_los, ranks=show_ranks))
        if checked is not None:
            click.echo()
            click.echo(collusion.report(checked))


def shown(outcome: service.Outcome, anchor: tuple[str, float] | None) -> Standings:
    """The outcome's standings; a usage error when there are none (no match stored, or not the anchor's)."""
    if outcome.standings is None and not outcome.bots:
        raise click.UsageError(f"{outcome.directory}: no finished matches yet")
    if outcome.standings is None:
        assert anchor is not None
        raise click.BadParameter(f"no bot {anchor[0]!r} in these results", param_hint="--anchor")
    return outcome.standings


def print_ending(outcome: service.Outcome) -> None:
    """Say on standard error what decides the exit code: the missing matches (4), the cap of an
    adaptive run reached before its rule (3), the entries withdrawn (5)."""
    ending = outcome.ending
    if ending is service.Ending.INCOMPLETE:
        click.echo("incomplete: " + "; ".join(f"bot {name} did not play {v['missing']} of its {v.get('of', '')} matches"
                                              for name, v in sorted(outcome.incomplete.items()))
                   + "; the same command plays them", err=True)
    elif ending is service.Ending.INCONCLUSIVE:
        assert outcome.stop is not None
        click.echo(f"inconclusive: {outcome.stop.text}; raise max_deal_sets and run the same command to play on",
                   err=True)
    elif ending is service.Ending.WITHDRAWN:
        click.echo("withdrawn: " + "; ".join(f"bot {e.name} {e.status} ({e.why})" for e in outcome.withdrawn)
                   + "; the other entries played all their matches", err=True)


def _say(line: str) -> None:
    click.echo(line, err=True)


def _listen(host: str, port: int | None) -> socket.socket | None:
    """The live page's listening socket (None without ``--http``)."""
    return None if port is None else listen(host, port)


class RunObserver:
    """What ``tournament`` and ``gauntlet`` print as a run goes (:class:`service.Observer`): the
    announcements on standard error, the heading, the sandbox, the progress (``first``: the bot the
    "Score of" lines put first), a live page given ``live`` (its host, listening socket and the
    standings' bootstrap); Ctrl-C or SIGTERM stop cleanly (exit 130), what finished being saved.
    ``--quiet``: only results and errors (no sandbox line)."""

    def __init__(self, progress: ProgressSettings, first: str | None = None, kind: str = "tournament",
                 about: GauntletConfig | None = None, live: tuple[str, socket.socket, int] | None = None) -> None:
        self.settings, self.first, self.kind, self.about, self.http = progress, first, kind, about, live
        self.display: RunDisplay | None = None
        self.live: LivePage | None = None

    def say(self, line: str) -> None:
        _say(line)

    def started(self, cfg: TournamentConfig, out: set[str], schedule: Schedule) -> None:
        if self.settings.quiet:
            return
        if self.about is not None:
            note = f"schedule: {schedule.note}; {len(schedule.seatings)} match(es)"
            click.echo(f"{cfg.game} gauntlet: {self.about.candidate} against {', '.join(self.about.baselines)}; "
                       f"{cfg.deal_sets} deal set(s), {cfg.seed_text()}; {note}; results in {cfg.output}", err=True)
            return
        entries = f"{len(cfg.bots) - len(out)} bots" + (f" ({len(out)} more out: {', '.join(sorted(out))})"
                                                        if out else "")
        deal_sets = "" if cfg.adaptive else f"{cfg.deal_sets} deal set(s), "
        so_far = " so far" if cfg.adaptive else ""
        click.echo(f"{cfg.game} tournament: {entries}, {deal_sets}{cfg.seed_text()}; schedule: {schedule.note}; "
                   f"{len(schedule.seatings)} match(es){so_far}; results in {cfg.output}", err=True)

    def playing(self, cfg: TournamentConfig, store: Store, schedule: Schedule) -> Progress:
        if self.http is not None:
            self.live = LivePage(about_of(store, cfg.output.name).title, standings_source(store, self.http[2]),
                                 token=secrets.token_urlsafe(16),  # the bots must not watch their matches' twins
                                 about=about_source(store, cfg.output.name))
        announce_sandbox(cfg.sandbox, cfg.isolation, quiet=self.settings.quiet)
        names = [b.name for b in cfg.bots]
        self.display = display = RunDisplay(cfg.game, len(schedule.seatings), self.settings, stored=store.matches(),
                                            number_of=store.number,
                                            names=sorted(names, key=lambda n: n != self.first), stream=sys.stderr)
        listeners = [f for f in (display.update, self.live and self.live.progress) if f]

        def on_progress(finished: int, total: int, played: Played | None) -> None:
            for listener in listeners:
                listener(finished, total, played)

        return on_progress

    def watch(self, arena: Any) -> None:
        if self.live is not None:
            self.live.watch(arena)

    def play(self, work: Coroutine[Any, Any, int]) -> int:
        assert self.display is not None
        try:
            if self.live is not None and self.http is not None:
                return run_interruptibly(with_live_page(self.live, self.http[:2], work))
            return run_interruptibly(work)
        finally:
            self.display.close()

    def finished(self, outcome: service.Outcome) -> None:
        """What the run did: interrupted (exit 130), or how many matches it played and the master seed."""
        if outcome.interrupted:
            total = self.display.total if self.display is not None else 0
            click.echo(f"\ninterrupted: {outcome.saved} of {total} matches are saved; "
                       f"run the same command to resume", err=True)
            sys.exit(outcome.exit_code)
        click.echo(f"played {outcome.played} match(es) now, {outcome.saved} in all", err=True)
        seed = outcome.seed
        if seed is not None and seed.held is not None:
            click.echo(f"master seed: not printed: it deals every deal set, and records are {seed.held}; "
                       f"the run that leaves none held prints it", err=True)
        elif seed is not None:
            later = "".join(f"; deal sets from {first} on: seed {s}, drawn when they were added after the one "
                            f"before was printed" for first, s in seed.later)
            click.echo(f"master seed: {seed.seed} (seed = {seed.seed} in the file plays these deals again){later}",
                       err=True)


async def with_live_page(live: LivePage, http: tuple[str, socket.socket], work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` while serving the live page at ``http`` (its host, and its listening socket);
    prints its address on standard output."""
    host, sock = http
    async with live.serving(host=host, sock=sock) as url:
        # on standard output, where the run's results go: a run whose progress (stderr) is silenced
        # or sent elsewhere still tells where to watch it
        click.echo(f"live page: {url}")
        sys.stdout.flush()
        return await work

