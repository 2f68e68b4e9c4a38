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
from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import IntEnum
from typing import Any

import click

from referee import __version__, cards, records
from referee.games import GAMES
from referee.games import get as get_game
from referee.games.base import PUBLIC, Event, GameError, GameSpec, GameState

# --- exit codes: the one place they are decided -------------------------------


class ExitCode(IntEnum):
    OK = 0
    #: a check failed: an invalid record, stated results that do not match
    CHECK_FAILED = 1
    #: bad usage: a usage error, an unreadable file, bad JSON, a bad rule option
    USAGE = 2


#: the first matching row decides; click's own usage errors exit 2 by themselves
_EXIT_CODES: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (click.UsageError, ExitCode.USAGE),
    (records.RecordFileError, ExitCode.USAGE),
    (records.RecordError, ExitCode.CHECK_FAILED),
    (GameError, ExitCode.USAGE),  # OptionError and its kin: a bad --option or game
)
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
         rule option
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


# --- text output --------------------------------------------------------------


def format_options(options: dict[str, Any]) -> str:
    return " ".join(f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in options.items())


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain text table (tabulate when installed)."""
    try:
        from tabulate import tabulate
    except ImportError:
        cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)
    return tabulate(rows, headers=list(headers), tablefmt="simple")


def hand_text(hand: Iterable[str]) -> str:
    """A hand (card names, as the engines' events give them) by suit (S H D C), high cards first,
    suits apart."""
    by_suit: dict[str, list[str]] = {suit: [] for suit in cards.SUITS}
    for name in sorted(hand, key=cards.parse, reverse=True):
        by_suit[name[-1]].append(name)
    return "  ".join(" ".join(group) for group in by_suit.values() if group) or "-"


def final_table(results: dict[str, Any], seats: Sequence[str]) -> list[str]:
    if list(seats) == default_seat_names(len(seats)):
        rows = [[i, results["scores"][i], results["placing"][i]] for i in range(len(seats))]
        return ["final scores:", table(["seat", "score", "place"], rows)]
    rows = [[i, name, results["scores"][i], results["placing"][i]] for i, name in enumerate(seats)]
    return ["final scores:", table(["seat", "name", "score", "place"], rows)]


def default_seat_names(n: int) -> list[str]:
    return [f"seat {i}" for i in range(n)]


def results_report(game: str, results: dict[str, Any] | None, seats: Sequence[str]) -> list[str]:
    """The results as text: the game's own detail table, then the final scores."""
    if results is None:
        return ["(the game is not over)"]
    detail = _RESULT_DETAILS.get(game)
    lines = detail(results, seats) if detail else []
    return lines + final_table(results, seats)


def _confirmation_rounds(results: dict[str, Any], seats: Sequence[str]) -> list[str]:
    rows = []
    for r in results["rounds"]:
        row = [r["round"], r["dealer"], r["trump"]]
        for s in range(4):
            bid, final = r["bids"][s], r["final_bids"][s]
            choices = "/".join("C" if c == "CONFIRM" else "R" for c in r["choices"][s])
            bids = str(bid) if bid == final else f"{bid}>{final}"
            row.append(f"{bids} {choices} t{r['tricks'][s]} {r['points'][s]:+d} ={r['totals'][s]}")
        rows.append(row)
    key = "cell: bid[>revised] choices(C=confirm R=revise) t<tricks> points =total"
    if "teams" in results:
        key += "; pairs: partners 0+2 and 1+3 share the team's points"
    return ["rounds:", table(["round", "dealer", "trump", *seats], rows), key, ""]


def _aegis_games(results: dict[str, Any], seats: Sequence[str]) -> list[str]:
    rows, totals = [], [0, 0]
    for g in results["games"]:
        totals = [totals[0] + g["points"][0], totals[1] + g["points"][1]]
        slave = "pass" if g["slave_passed"] else g["d_slave"]
        rows.append([g["game"], g["master"], g["key_card"], g["e"], g["d_master"], slave,
                     f"{g['attacker']} ({g['d']})", g["tricks"][g["attacker"]],
                     f"{g['points'][0]}-{g['points'][1]}", f"{totals[0]}-{totals[1]}"])
    headers = ["game", "master", "key", "e", "d_master", "d_slave", "attacker (d)", "att. tricks",
               "points", "totals"]
    ended = {"25": "25 points reached", "both-25": "both reached 25; the game's winner wins",
             "called": "a lead of 10 (called game)"}.get(results.get("ended_by"), results.get("ended_by"))
    return ["games:", table(headers, rows), f"match won by seat {results['winner']}: {ended}", ""]


_RESULT_DETAILS: dict[str, Callable[[dict[str, Any], Sequence[str]], list[str]]] = {
    "confirmation": _confirmation_rounds,
    "aegis": _aegis_games,
}


# --- the log of a match, from its events --------------------------------------


def game_log(state: GameState, seats: Sequence[str]) -> list[str]:
    """A readable log of everything that happened (the referee's view: every hand).

    The engines' events already name cards (``"AS"``) and suits (``"S"``), so
    the log prints them as they are."""
    writer = _LOGS.get(state.game, _generic_log)
    return list(writer(state.events, seats))


def _generic_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    for e in events:
        who = f" {seats[e.seat]}" if e.seat is not None else ""
        to = "" if e.to == PUBLIC else f" (to {seats[e.to]})"
        yield f"{e.kind}{who}{to}: {json.dumps(e.data)}"


def _confirmation_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    bids: list[str] = []
    plays: list[str] = []
    choices: list[str] = []
    for e in events:
        kind, data = e.kind, e.data
        if kind == "round":
            yield f"== round {data['round']}, dealer {seats[data['dealer']]} =="
        elif kind == "deal":
            yield f"  {seats[e.seat]}: {hand_text(data)}"
        elif kind == "trump":
            how = f"the dealer's last card {data['card']}" if data["card"] is not None else "drawn at random"
            yield f"trump: {data['suit']} ({how})"
        elif kind == "bid":
            bids.append(f"{seats[e.seat]} {data}")
            if len(bids) == 4:
                yield "bids: " + ", ".join(bids)
                bids = []
        elif kind == "play":
            if not plays:
                plays.append(f"{seats[e.seat]} leads")
            plays.append(data)
        elif kind == "trick":
            yield f"trick {data:2}: {' '.join(plays)} -> {seats[e.seat]} wins"
            plays = []
        elif kind == "choice":
            choices.append(f"{seats[e.seat]} {data['choice']}")
            if len(choices) == 4:
                yield f"confirmation phase {data['phase']}: " + ", ".join(choices)
                choices = []
        elif kind == "score":
            yield f"round {data['round']} scored:"
            rows = [[seats[s], data["final_bids"][s], "/".join(data["choices"][s]), data["tricks"][s],
                     f"{data['points'][s]:+d}", data["totals"][s]] for s in range(4)]
            yield table(["seat", "bid", "choices", "tricks", "points", "total"], rows)
        elif kind == "end":
            pass  # the final table follows the log
        else:
            yield from _generic_log([e], seats)


def _aegis_log(events: Sequence[Event], seats: Sequence[str]) -> Iterator[str]:
    plays: list[str] = []
    totals = [0, 0]
    for e in events:
        kind, data = e.kind, e.data
        who = seats[e.seat] if e.seat is not None else ""
        if kind == "master_draw":
            c0, c1 = data["cards"]
            yield f"draw for master: {seats[0]} {c0}, {seats[1]} {c1} -> {seats[data['master']]} is master"
        elif kind == "deal":
            yield f"== game {data['game']}: master {seats[data['master']]}, slave {seats[data['slave']]} =="
            yield f"key card: {data['key_card']} (trump {data['trump']}; killers {' '.join(data['killers'])})"
        elif kind == "hand":
            yield f"  {who}: {hand_text(data['cards'])}"
        elif kind == "stop":
            yield f"exchange round {data['round']}: master {who} stops"
        elif kind == "exchange":
            count = "declines" if data["count"] == 0 else f"exchanges {data['count']}"
            yield f"exchange round {data['round']}: {data['role']} {who} {count}"
        elif kind == "exchange_cards":
            yield f"    ({who} discards {' '.join(data['discarded'])}, draws {' '.join(data['drawn'])})"
        elif kind == "exchange_end":
            how = "the master stopped" if data["by"] == "stop" else "after 4 rounds"
            yield f"exchanges over ({how}): e = {data['e']}"
        elif kind == "declare":
            yield f"{data['role']} {who} declares {data['d']}"
        elif kind == "pass":
            yield f"{data['role']} {who} passes"
        elif kind == "attacker":
            yield f"attacker: {data['role']} {who}, needs {data['d']} tricks"
        elif kind == "play":
            if not plays:
                plays.append(f"{who} leads")
            plays.append(data["card"])
        elif kind == "trick":
            yield f"trick {data['trick']}: {' '.join(plays)} -> {who} wins"
            plays = []
        elif kind == "game_end":
            totals = [totals[0] + data["points"][0], totals[1] + data["points"][1]]
            outcome = "makes it" if data["attacker_won"] else "fails"
            bonus = [name for name in ("promise", "conquest", "save") if data[name]]
            yield (f"game {data['game']}: attacker {seats[data['attacker']]} took {data['attacker_tricks']} "
                   f"of {data['d']} and {outcome}; points {data['points'][0]}-{data['points'][1]}"
                   f"{' (' + ', '.join(bonus) + ')' if bonus else ''}; totals {totals[0]}-{totals[1]}")
        elif kind == "match_end":
            yield f"match over after {data['games']} games: {seats[data['winner']]} wins ({data['ended_by']})"
        else:
            yield from _generic_log([e], seats)


_LOGS: dict[str, Callable[[Sequence[Event], Sequence[str]], Iterator[str]]] = {
    "confirmation": _confirmation_log,
    "aegis": _aegis_log,
}
