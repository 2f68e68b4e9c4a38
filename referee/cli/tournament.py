"""``referee tournament``, ``referee ratings`` and ``referee gauntlet``: duplicate play from a
tournament file, results in a store, standings from it."""

from __future__ import annotations

import dataclasses
import json
import secrets
import sys
from collections.abc import Sequence

import click

from referee.cli.exits import ExitCode, run_interruptibly
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
from referee.competition import adaptive
from referee.results import rounds
from referee.results.store import MatchRow


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

    from referee.competition import config as tconfig
    from referee.competition import run as trun

    cfg = trun.with_stored_seed(tconfig.load(config_file))
    cfg = dataclasses.replace(cfg, executor=chosen_executor(cfg.executor, executor, address, server))
    http_socket = _listen(http_host, http_port)  # a busy port stops the run before anything is written
    store = trun.open_store(cfg, rerun, announce=_say)  # the directory's lock: one run at a time
    try:
        out = trun.out_for_good(store)
        plan = trun.planner(cfg, store)
        schedule = plan(out)
        if not progress.quiet:
            entries = f"{len(cfg.bots) - len(out)} bots" + (f" ({len(out)} more out: {', '.join(sorted(out))})"
                                                                if out else "")
            deal_sets = "" if cfg.adaptive else f"{cfg.deal_sets} deal set(s), "
            so_far = " so far" if cfg.adaptive else ""
            click.echo(f"{cfg.game} tournament: {entries}, {deal_sets}{cfg.seed_text()}; schedule: {schedule.note}; "
                       f"{len(schedule.seatings)} match(es){so_far}; results in {cfg.output}", err=True)
        live = None
        if http_socket is not None:
            from referee.view.about import about_of
            from referee.view.live import LivePage, about_source, standings_source

            live = LivePage(about_of(store, cfg.output.name).title, standings_source(store, bootstrap),
                            token=secrets.token_urlsafe(16),  # the bots must not watch their matches' twins
                            about=about_source(store, cfg.output.name))
        play_with_progress(cfg, plan, store, progress, server, admin_token, live=live, http=(http_host, http_socket))
        played = plan(set(store.out()))  # without the entries that did not start, if any
        stop = rounds.stop_of(store)
        if stop is not None and stop.settled:  # at the cap: exit_if_inconclusive says it
            _say(stop.text)
        print_standings(store, anchor, bootstrap,
                        notes=[f"schedule: {played.note}; {len(played.seatings)} match(es)"])
        exit_if_incomplete(store)
        exit_if_inconclusive(store)
        exit_if_withdrawn(store)
    finally:
        store.close()


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
    for review; it changes no result and no exit code). docs/tournaments.md explains every column. Exit code 3 (inconclusive): an adaptive tournament reached max_deal_sets
    before its stop rule was met; 4 (incomplete): a bot died for good and did not play all its
    matches (marked in the table); 5 (withdrawn): an entry did not start or died for good (listed
    below the table)."""
    from referee.results.store import Store

    if show_collusion and fmt not in ("table", "json"):
        raise click.BadParameter("--collusion goes with --format table or json", param_hint="--collusion")
    store = Store(directory, create=False)
    print_standings(store, anchor, bootstrap, fmt, show_los=show_los, show_ranks=show_ranks,
                    show_collusion=show_collusion)
    exit_if_incomplete(store)
    exit_if_inconclusive(store)
    exit_if_withdrawn(store)


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

    from referee.competition import gauntlet as tgauntlet
    from referee.competition import run as trun
    from referee.results import standings

    cfg = tgauntlet.load(config_file)
    cfg = dataclasses.replace(cfg, tournament=dataclasses.replace(
        trun.with_stored_seed(cfg.tournament), executor=chosen_executor(cfg.tournament.executor, executor, address,
                                                                        server)))
    store = tgauntlet.open_store(cfg, rerun, announce=_say)  # the directory's lock: one run at a time
    try:
        plan = tgauntlet.planner(cfg, store)
        schedule = plan(trun.out_for_good(store))
        note = f"schedule: {schedule.note}; {len(schedule.seatings)} match(es)"
        if not progress.quiet:
            click.echo(f"{cfg.game} gauntlet: {cfg.candidate} against {', '.join(cfg.baselines)}; "
                       f"{cfg.tournament.deal_sets} deal set(s), {cfg.tournament.seed_text()}; {note}; "
                       f"results in {cfg.tournament.output}", err=True)
        play_with_progress(cfg.tournament, plan, store, progress, server, admin_token, first=cfg.candidate)
        rows = list(store.matches())
        if not rows:
            raise click.UsageError(f"{store.directory}: no finished matches yet")
        check_anchor(rows, anchor)
        played = plan(set(store.out()))  # without the entries that did not start, if any
        note = f"schedule: {played.note}; {len(played.seatings)} match(es)"
        against = tgauntlet.versus(cfg.game, rows, cfg.candidate, bootstrap=bootstrap, confidence=confidence)
        verdict = tgauntlet.verdict(cfg.candidate, against, confidence)
        st = standings.of_store(store, rows, anchor=anchor, bootstrap=bootstrap, notes=[note])
        if fmt == "json":
            click.echo(json.dumps({"candidate": cfg.candidate, "versus": [tgauntlet.versus_json(v) for v in against],
                                   "verdict": verdict.__dict__, **standings.to_json(st)}, indent=2))
        elif fmt == "markdown":
            click.echo(tgauntlet.markdown(cfg.game, cfg.candidate, against, verdict), nl=False)
        else:
            click.echo(tgauntlet.caption(cfg.candidate, confidence))
            click.echo(tgauntlet.versus_table(cfg.candidate, against, confidence))
            click.echo()
            click.echo(standings.report(st))
            click.echo()
            click.echo(f"verdict: {verdict.text}")
        exit_if_incomplete(store)
        if verdict.worse:
            raise SystemExit(ExitCode.CHECK_FAILED)
        exit_if_withdrawn(store)
    finally:
        store.close()


# --- shared by the commands above -------------------------------------------------------


def check_anchor(rows: Sequence[MatchRow], anchor: tuple[str, float] | None) -> None:
    """A usage error unless the ``--anchor`` bot (if any) is in these results."""
    if anchor is not None and anchor[0] not in {b for r in rows for b in r.lineup}:
        raise click.BadParameter(f"no bot {anchor[0]!r} in these results", param_hint="--anchor")


def print_standings(store, anchor, bootstrap: int, fmt: str = "table", notes=(),
                    show_los: bool = False, show_ranks: bool = False, show_collusion: bool = False) -> None:
    from referee.results import collusion, standings

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


def exit_if_incomplete(store) -> None:
    """Exit 4 (incomplete) if a bot died for good and did not play all its matches."""
    incomplete = store.incomplete()
    if incomplete:
        click.echo("incomplete: " + "; ".join(f"bot {name} did not play {v['missing']} of its {v.get('of', '')} matches"
                                              for name, v in sorted(incomplete.items()))
                   + "; the same command plays them", err=True)
        raise SystemExit(ExitCode.INCOMPLETE)


def exit_if_inconclusive(store) -> None:
    """Exit 3 (inconclusive) if an adaptive tournament reached max_deal_sets before its stop rule was met."""
    stop = rounds.stop_of(store)
    if adaptive.inconclusive(stop):
        click.echo(f"inconclusive: {stop.text}; raise max_deal_sets and run the same command to play on", err=True)
        raise SystemExit(ExitCode.INCONCLUSIVE)


def exit_if_withdrawn(store) -> None:
    """Exit 5 (withdrawn) if an entry did not start or died for good (absent = "withdraw")."""
    from referee.results.store import DEAD, DID_NOT_START

    out = [e for e in store.entries() if e.status in (DID_NOT_START, DEAD)]
    if out:
        click.echo("withdrawn: " + "; ".join(f"bot {e.name} {e.status} ({e.why})" for e in out)
                   + "; the other entries played all their matches", err=True)
        raise SystemExit(ExitCode.WITHDRAWN)


def _say(line: str) -> None:
    click.echo(line, err=True)


def _listen(host: str, port: int | None):
    """The live page's listening socket (None without ``--http``)."""
    if port is None:
        return None
    from referee.view.live import listen

    return listen(host, port)


def play_with_progress(cfg, plan, store, progress: ProgressSettings, server: str | None,
                       admin_token: str | None, first: str | None = None, live=None,
                       http: tuple[str, object] = ("127.0.0.1", None)) -> None:
    """Play what the store lacks of the schedule (``plan``: the schedule given the entries out),
    showing the progress (:mod:`referee.cli.progress`; ``first``: the bot the "Score of" lines put
    first) and, given ``live``, a live page served at ``http`` (its host, and its listening socket);
    Ctrl-C or SIGTERM stop cleanly (exit 130), what finished being saved. ``--quiet``: only results
    and errors (no sandbox line)."""
    from referee.competition import run as trun

    announce_sandbox(cfg.sandbox, cfg.isolation, quiet=progress.quiet)
    names = [b.name for b in cfg.bots]
    schedule = plan(trun.out_for_good(store))
    display = RunDisplay(cfg.game, len(schedule.seatings), progress, stored=store.matches(),
                         number_of=store.number, names=sorted(names, key=lambda n: n != first),
                         stream=sys.stderr)
    listeners = [f for f in (display.update, live and live.progress) if f]

    def on_progress(finished: int, total: int, played) -> None:
        for listener in listeners:
            listener(finished, total, played)

    work = trun.play_schedule(cfg, plan, store, progress=on_progress, server=server, admin_token=admin_token,
                              announce=_say, watch=live.watch if live else None)
    try:
        played = run_interruptibly(with_live_page(live, http, work) if live else work)
    except KeyboardInterrupt:
        display.close()
        click.echo(f"\ninterrupted: {store.count()} of {display.total} matches are saved; "
                   f"run the same command to resume", err=True)
        raise SystemExit(ExitCode.INTERRUPTED) from None
    finally:
        display.close()
    click.echo(f"played {played} match(es) now, {store.count()} in all", err=True)
    if cfg.seed_drawn and not store.seed_released():
        from referee.results.release import held_in

        click.echo(f"master seed: not printed: it deals every deal set, and records are {held_in(store).reason()}; "
                   f"the run that leaves none held prints it", err=True)
    elif cfg.seed_drawn:
        dealt = store.deal_sets_dealt()  # a later seed that dealt nothing yet stays secret, for its deal sets
        later = "".join(f"; deal sets from {first} on: seed {seed}, drawn when they were added after the one "
                        f"before was printed" for first, seed in cfg.with_deals(store.config()).later_seeds
                        if first < dealt)
        click.echo(f"master seed: {cfg.seed} (seed = {cfg.seed} in the file plays these deals again){later}",
                   err=True)


async def with_live_page(live, http: tuple[str, object], work):
    """Run ``work`` while serving the live page at ``http`` (its host, and its listening socket);
    prints its address on standard output."""
    host, sock = http
    async with live.serving(host=host, sock=sock) as url:
        # on standard output, where the run's results go: a run whose progress (stderr) is silenced
        # or sent elsewhere still tells where to watch it
        click.echo(f"live page: {url}")
        sys.stdout.flush()
        return await work

