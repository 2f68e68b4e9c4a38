"""Game records: a whole match written down as JSON, and replayed to check it.

A record holds the deck orders a match consumed, the suits it drew, and every
action in order; replaying it through the rules engine rebuilds the match
exactly (RULES.md §4). ``docs/records.md`` is the specification of the
format; this module is its one implementation.

    record = to_record(state, seats=["alice", "bob", "carol", "dave"])
    write("game.json", record)
    rep = replay(read("game.json"))      # raises RecordError if it does not check out
    rep.results                          # the results computed by the engine

Everything wrong with a record raises a :class:`RecordError` (a ``ValueError``)
whose message names the field at fault:

- :class:`RecordFileError`: the file cannot be read or is not JSON;
- :class:`IllegalRecordActionError`: an action the rules forbid (with the rule);
- :class:`ResultsMismatchError`: the stated results differ from the computed ones;
- :class:`RecordError` itself: anything else (a missing or malformed field, an
  unknown game or option, a bad deck, a record that stops early, unused decks).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee import cards, files
from referee.games import get as get_game
from referee.games.base import ActionSyntaxError, GameError, GameSpec, GameState, IllegalActionError

FORMAT = "referee-record"
VERSION = 1

#: the size a record of the referee keeps to, whatever the bots send (docs/records.md, "How large a
#: record is"): so many bytes per match, per decision, and per fault record kept (each seat's first
#: runner.MAX_FAULT_RECORDS; a detail is at most runner.MAX_DETAIL characters of ASCII), as JSON
MAX_BYTES_PER_MATCH = 8 * 1024
MAX_BYTES_PER_DECISION = 100
MAX_BYTES_PER_FAULT = 1024


def max_bytes(decisions: int, faults_kept: int) -> int:
    """The most bytes a record of the referee takes as JSON (stored or exported), from its number of
    decisions (actions) and of fault records kept."""
    return MAX_BYTES_PER_MATCH + MAX_BYTES_PER_DECISION * decisions + MAX_BYTES_PER_FAULT * faults_kept


#: the fields of a version-1 record; the first four are required
REQUIRED_FIELDS = ("format", "version", "game", "actions")
OPTIONAL_FIELDS = ("options", "seed", "seats", "decks", "suits", "results", "meta")


# --- errors -----------------------------------------------------------------


class RecordError(ValueError):
    """A record that is malformed, or does not replay to a valid finished game."""

    kind = "invalid-record"

    def to_dict(self) -> dict[str, Any]:
        """The error as JSON (for ``referee replay --json``)."""
        return {"kind": self.kind, "message": str(self)}


class RecordFileError(RecordError):
    """A record file that cannot be read, or is not JSON."""

    kind = "unreadable"


class IllegalRecordActionError(RecordError):
    """The action at ``index`` (0-based) breaks a rule; ``error`` is the engine's verdict."""

    kind = "illegal-action"

    def __init__(self, index: int, seat: int, action: str, error: IllegalActionError):
        super().__init__(f'action #{index} (seat {seat}, "{action}"): {error}')
        self.index = index
        self.seat = seat
        self.action = action
        self.error = error

    @property
    def rule(self) -> str:
        return self.error.rule

    @property
    def reason(self) -> str:
        return self.error.reason

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "index": self.index, "seat": self.seat, "action": self.action,
                "rule": self.rule, "reason": self.reason}


class ResultsMismatchError(RecordError):
    """The record's stated results differ from the replayed ones at ``key`` (a path like ``scores[2]``)."""

    kind = "results-mismatch"

    def __init__(self, key: str, stated: Any, computed: Any, replay: Replay):
        super().__init__(f"results mismatch at {key}: the record states {_show(stated)}, "
                         f"the replay gives {_show(computed)}")
        self.key = key
        self.stated = stated
        self.computed = computed
        self.replay = replay

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "key": self.key, "stated": _jsonable(self.stated),
                "computed": _jsonable(self.computed)}


class _Missing:
    def __repr__(self) -> str:
        return "(nothing)"


#: stands for a key the computed results do not have
MISSING: Any = _Missing()


def _show(value: Any) -> str:
    return "(nothing)" if value is MISSING else json.dumps(value)


def _jsonable(value: Any) -> Any:
    return None if value is MISSING else value


# --- writing ----------------------------------------------------------------


def to_record(state: GameState, seats: Sequence[str] | None = None) -> dict[str, Any]:
    """The record of a match, finished or not (``results`` only once it is over)."""
    if seats is not None:
        seats = [str(s) for s in seats]
        if len(seats) != state.num_seats:
            raise ValueError(f"{state.game} has {state.num_seats} seats; got {len(seats)} names")
    record: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "game": state.game,
        "options": dict(state.options),
    }
    if state.shoe.seed is not None:
        record["seed"] = state.shoe.seed
    if seats is not None:
        record["seats"] = seats
    record["decks"] = [cards.format_list(deck) for deck in state.shoe.decks]
    if state.shoe.suits:
        record["suits"] = [cards.SUITS[s] for s in state.shoe.suits]
    record["actions"] = [[seat, state.action_name(action)] for seat, action in state.actions]
    if state.is_terminal():
        record["results"] = _normalise(state.results())
    return record


@dataclass(frozen=True)
class FaultTally:
    """The faults a record of the referee notes in its ``meta``: ``counted`` in all, of which the
    first ``per_seat`` of each seat are ``kept`` as fault records (``meta.faults``). A record
    written before the counts were kept (or by hand) has its fault records only: all are kept."""

    counted: int
    kept: int
    per_seat: int | None = None

    def text(self) -> str:
        """``670 fault(s); the first 50 of each seat are kept in the record (100)``, or ``3 fault(s)``."""
        if self.kept == self.counted:
            return f"{self.counted} fault(s)"
        return (f"{self.counted} fault(s); the first {self.per_seat} of each seat are kept in the record "
                f"({self.kept})")


def faults_of(record: Mapping[str, Any]) -> FaultTally:
    """The faults the record's ``meta`` notes (docs/records.md, "meta")."""
    meta = record.get("meta")
    meta = meta if isinstance(meta, Mapping) else {}
    faults = meta.get("faults")
    kept = faults if isinstance(faults, list) else []
    counts = meta.get("fault_counts")
    per_seat = meta.get("faults_kept_per_seat")
    if not isinstance(counts, list) or not all(isinstance(c, Mapping) for c in counts):
        return FaultTally(len(kept), len(kept))
    counted = sum(n for c in counts for n in c.values() if isinstance(n, int))
    return FaultTally(max(counted, len(kept)), len(kept), per_seat if isinstance(per_seat, int) else None)


def dumps(record: Mapping[str, Any]) -> str:
    """The record as JSON text: one field per line, one action per line, short values inline."""
    return _pretty(record, 0) + "\n"


def write(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Write the record to ``path``, whole or not at all: :class:`RecordFileError` for a path that
    cannot be written, :class:`referee.files.WriteFailed` when the disk refuses it (full)."""
    try:
        files.write_text(path, dumps(record))
    except files.CannotWrite as e:
        raise RecordFileError(str(e)) from None


def _pretty(value: Any, indent: int, width: int = 100) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (list, dict)) or not value or indent + len(flat) <= width:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, indent + 2, width)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + _pretty(v, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def _normalise(value: Any) -> Any:
    """Tuples to lists, as a trip through JSON would do."""
    return json.loads(json.dumps(value))


# --- reading ----------------------------------------------------------------


def loads(text: str, source: str = "<record>") -> dict[str, Any]:
    """Parse record JSON; ``source`` names it in errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordFileError(f"{source}: line {e.lineno}, column {e.colno}: not valid JSON: {e.msg}") from None
    except RecursionError:
        raise RecordFileError(f"{source}: JSON nested too deeply to be a record") from None
    except ValueError:  # an integer of more digits than Python converts
        raise RecordFileError(f"{source}: a number of more than {sys.get_int_max_str_digits()} digits "
                              "(no record field needs one)") from None
    if not isinstance(data, dict):
        raise RecordError(f"{source}: a record is a JSON object, got {_json_type(data)}")
    return data


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file (the JSON only: :func:`replay` checks the record)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise RecordFileError(f"{os.fspath(path)}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise RecordFileError(f"cannot read {os.fspath(path)}: {e.strerror or e}") from None
    return loads(text, os.fspath(path))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


# --- checking the structure -------------------------------------------------


@dataclass
class ParsedRecord:
    """A record whose fields have been checked and decoded (cards and actions as ints)."""

    spec: GameSpec
    options: dict[str, Any]
    seed: int | None
    seats: list[str] | None
    decks: list[tuple[int, ...]] | None
    suits: list[int] | None
    #: (seat, action code, action text as written)
    actions: list[tuple[int, int, str]]
    results: dict[str, Any] | None

    @property
    def seat_labels(self) -> list[str]:
        """The seats as a log, a table or a replay names them (:func:`seat_labels`): the record's
        names, or ``seat 0``, ``seat 1``..."""
        return seat_labels(self.seats or [f"seat {i}" for i in range(self.spec.num_seats)])


def seat_labels(names: Sequence[str]) -> list[str]:
    """Seats as a log, a table or a replay names them: a name in more than one seat (a bot at a
    table with itself, as a line-up of fewer entries than seats has) carries its seat,
    ``heuristic (seat 2)``, so every seat reads apart; other names as they are."""
    counts = Counter(names)
    return [f"{name} (seat {i})" if counts[name] > 1 else name for i, name in enumerate(names)]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse(record: Mapping[str, Any]) -> ParsedRecord:
    """Check every field of a record and decode it; raises RecordError naming the bad field."""
    if not isinstance(record, Mapping):
        raise RecordError(f"a record is a JSON object, got {_json_type(record)}")
    for key in REQUIRED_FIELDS:
        if key not in record:
            raise RecordError(f"missing field {key!r} (a record needs {', '.join(REQUIRED_FIELDS)})")
    unknown = [k for k in record if k not in REQUIRED_FIELDS + OPTIONAL_FIELDS]
    if unknown:
        raise RecordError(f"unknown field {unknown[0]!r} (the fields of a record: "
                          f"{', '.join(REQUIRED_FIELDS + OPTIONAL_FIELDS)})")
    if record["format"] != FORMAT:
        raise RecordError(f"format: expected {FORMAT!r}, got {record['format']!r}")
    if record["version"] != VERSION or not _is_int(record["version"]):
        raise RecordError(f"version: this referee reads version {VERSION}, got {record['version']!r}")

    game = record["game"]
    if not isinstance(game, str):
        raise RecordError(f"game: expected the game's name, got {game!r}")
    try:
        spec = get_game(game)
    except GameError as e:
        raise RecordError(f"game: {e}") from None

    options = record.get("options", {})
    if not isinstance(options, Mapping):
        raise RecordError(f"options: expected an object, got {_json_type(options)}")
    try:
        options = spec.check_options(options)
    except GameError as e:
        raise RecordError(f"options: {e}") from None

    seed = record.get("seed")
    if seed is not None and not _is_int(seed):
        raise RecordError(f"seed: expected an integer, got {seed!r}")

    seats = record.get("seats")
    if seats is not None:
        if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
            raise RecordError("seats: expected a list of names (strings)")
        if len(seats) != spec.num_seats:
            raise RecordError(f"seats: {spec.name} has {spec.num_seats} seats, the record names {len(seats)}")

    decks = _parse_decks(record.get("decks"))
    suits = _parse_suits(record.get("suits"))
    if decks is None:
        if suits is not None:
            raise RecordError("suits: given without decks (the suits come with the deck orders)")
        if seed is None:
            raise RecordError("the record needs decks (or at least a seed)")

    actions = _parse_actions(record["actions"], spec)

    results = record.get("results")
    if results is not None and not isinstance(results, Mapping):
        raise RecordError(f"results: expected an object, got {_json_type(results)}")
    return ParsedRecord(spec, options, seed, seats, decks, suits, actions,
                        dict(results) if results is not None else None)


def _parse_decks(decks: Any) -> list[tuple[int, ...]] | None:
    if decks is None:
        return None
    if not isinstance(decks, list):
        raise RecordError(f"decks: expected a list of deck orders, got {_json_type(decks)}")
    out = []
    for i, deck in enumerate(decks):
        if isinstance(deck, list) and not all(isinstance(c, str) for c in deck):
            raise RecordError(f"decks[{i}]: a deck order is a string or list of card names")
        if not isinstance(deck, (str, list)):
            raise RecordError(f"decks[{i}]: a deck order is a string of 52 card names, got {_json_type(deck)}")
        try:
            out.append(cards.check_deck(cards.parse_list(deck)))
        except cards.CardError as e:
            raise RecordError(f"decks[{i}]: {e}") from None
    return out


def _parse_suits(suits: Any) -> list[int] | None:
    if suits is None:
        return None
    if not isinstance(suits, list):
        raise RecordError(f"suits: expected a list of suit letters, got {_json_type(suits)}")
    out = []
    for i, s in enumerate(suits):
        if not isinstance(s, str):
            raise RecordError(f"suits[{i}]: expected a suit letter ({', '.join(cards.SUITS)}), got {s!r}")
        try:
            out.append(cards.parse_suit(s))
        except cards.CardError as e:
            raise RecordError(f"suits[{i}]: {e}") from None
    return out


def _parse_actions(actions: Any, spec: GameSpec) -> list[tuple[int, int, str]]:
    if not isinstance(actions, list):
        raise RecordError(f"actions: expected a list of [seat, action] pairs, got {_json_type(actions)}")
    out = []
    for i, item in enumerate(actions):
        if not (isinstance(item, list) and len(item) == 2 and _is_int(item[0]) and isinstance(item[1], str)):
            raise RecordError(f"actions[{i}]: expected [seat, \"ACTION\"], got {json.dumps(item)}")
        seat, text = item
        if seat not in range(spec.num_seats):
            raise RecordError(f"actions[{i}]: there is no seat {seat} in {spec.name} "
                              f"(seats 0..{spec.num_seats - 1})")
        try:
            code = spec.parse_action(text)
        except ActionSyntaxError as e:
            raise RecordError(f"actions[{i}]: {e}") from None
        out.append((seat, code, text))
    return out


# --- replaying --------------------------------------------------------------


@dataclass
class Replay:
    """A record replayed: the engine's final state and what it computed."""

    record: Mapping[str, Any]
    parsed: ParsedRecord
    state: GameState

    @property
    def game(self) -> str:
        return self.parsed.spec.name

    @property
    def seats(self) -> list[str]:
        """The seats as the log and the tables name them (:meth:`ParsedRecord.seat_labels`)."""
        return self.parsed.seat_labels

    @property
    def finished(self) -> bool:
        return self.state.is_terminal()

    @property
    def results(self) -> dict[str, Any] | None:
        """The computed results (JSON-compatible); None if the game is not over."""
        return _normalise(self.state.results()) if self.finished else None


def replay(record: Mapping[str, Any], *, allow_unfinished: bool = False,
           on_step: Callable[[GameState], None] | None = None) -> Replay:
    """Replay a record through the engine and check it; raises RecordError if it does not check out.

    The game is rebuilt from the record's ``decks`` and ``suits`` (or, without
    decks, drawn from its ``seed``); every action must be legal; the record
    must end exactly when the game does (unless ``allow_unfinished``) having
    used every deck and suit it lists; and every key of a stated ``results``
    must equal the computed value. ``on_step(state)``, if given, is called when the game is
    dealt and after each action (the HTML viewer takes its steps so).
    """
    parsed = parse(record)
    spec = parsed.spec
    try:
        if parsed.decks is None:
            state = spec.new(parsed.options, seed=parsed.seed)
        else:
            state = spec.new(parsed.options, seed=parsed.seed, decks=parsed.decks, suits=parsed.suits or [])
    except GameError as e:  # too few decks (or suits) for the first deal
        raise RecordError(f"{'suits' if 'suit' in str(e) else 'decks'}: {e}") from None

    if on_step:
        on_step(state)
    for i, (seat, code, text) in enumerate(parsed.actions):
        if state.is_terminal():
            raise RecordError(f"actions: the game is over after action #{i - 1}, "
                              f"but the record goes on to action #{len(parsed.actions) - 1}")
        try:
            state.apply(seat, code)
        except IllegalActionError as e:
            raise IllegalRecordActionError(i, seat, text, e) from None
        except GameError as e:  # the shoe ran out of recorded decks or suits
            raise RecordError(f'action #{i} (seat {seat}, "{text}"): {e}') from None
        if on_step:
            on_step(state)

    result = Replay(record, parsed, state)
    if not state.is_terminal():
        if allow_unfinished:
            return result
        waiting = ", ".join(str(s) for s in state.to_act())
        raise RecordError(f"the record ends before the game is over: seat(s) {waiting} still to act")
    if parsed.decks is not None and len(state.shoe.decks) < len(parsed.decks):
        raise RecordError(f"decks: the record holds {len(parsed.decks)} deck order(s) "
                          f"but the game used only {len(state.shoe.decks)}")
    if parsed.suits is not None and len(state.shoe.suits) < len(parsed.suits):
        raise RecordError(f"suits: the record holds {len(parsed.suits)} suit(s) "
                          f"but the game drew only {len(state.shoe.suits)}")
    if parsed.results is not None:
        difference = first_difference(parsed.results, result.results, "results")
        if difference is not None:
            raise ResultsMismatchError(*difference, replay=result)
    return result


def first_difference(stated: Any, computed: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first place where ``stated`` differs from ``computed``: (path, stated, computed).

    Every key of a stated object is compared (keys the record leaves out are
    not); lists must match element by element and in length.
    """
    if isinstance(stated, Mapping):
        if not isinstance(computed, Mapping):
            return path, stated, computed
        for key, value in stated.items():
            sub = f"{path}.{key}"
            if key not in computed:
                return sub, value, MISSING
            found = first_difference(value, computed[key], sub)
            if found is not None:
                return found
        return None
    if isinstance(stated, list):
        if not isinstance(computed, list) or len(stated) != len(computed):
            return path, stated, computed
        for i, (a, b) in enumerate(zip(stated, computed)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if stated != computed or isinstance(stated, bool) != isinstance(computed, bool):
        return path, stated, computed
    return None
