"""A reference pool's file: the frozen house bots of one game setting, their fitted ratings, and its id.

The format is docs/pool.md. A :class:`Pool` holds the game, its options and clock, the bots (each
with its command and the content hash of its version) and the scale fitted from their games among
themselves (:class:`referee.stats.anchored.Reference`: ratings with intervals, every pair's difference
with its standard error). Its :attr:`Pool.id` is the SHA-256 of all of that, so that two pools with the
same id are the same bots, the same setting and the same ratings; a run that includes a pool names
the id. Reading a file checks every field and the id, and a bad file is one :class:`PoolFileError`
naming what is wrong.

    pool = make("aegis", {}, {"decision_ms": 1000, "bank_ms": 10000}, bots, outcomes)   # pool make
    write(pool, "aegis.pool.json")
    pool = read("aegis.pool.json")
    pool.mismatches(game, options, clock, versions)     # [] when a run plays the pool's setting
    anchored(outcomes, pool.scale)                       # referee.stats.anchored
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee import files, games
from referee.hosting.versions import canonical
from referee.hosting.versions import content_hash as content_hash  # re-exported: a pool bot's version
from referee.model import BOT_NAME
from referee.stats.anchored import PairDifference, PoolRating, Reference, reference
from referee.stats.ratings import Outcome

#: the format's name and version, the first field of every pool file
FORMAT = "referee-pool/1"
#: the largest pool file read (a pool of a hundred bots is under 100 KB)
MAX_BYTES = 4 * 1024 * 1024
#: ratings and their intervals are kept to this many decimals (the id is of the values as written)
DIGITS = 2
_HEX = frozenset("0123456789abcdef")


class PoolFileError(ValueError):
    """A pool file that cannot be read or used: not JSON, a missing or bad field, an id that does not
    match its content (one line, naming the file and what is wrong)."""


@dataclass(frozen=True)
class PoolBot:
    """One bot of the pool: its name, its command, working directory and files as a tournament file's
    ``[[bots]]`` table gives them (a relative ``cwd`` is relative to the pool file's directory; ``files``
    empty: every file under it), and the content hash of its version (:func:`content_hash`)."""

    name: str
    command: tuple[str, ...]
    version: str
    cwd: str | None = None
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pool:
    """A reference pool: the setting it was made in, its bots, and its scale."""

    game: str
    options: Mapping[str, Any]
    clock: Mapping[str, int]
    bots: tuple[PoolBot, ...]
    scale: Reference

    @property
    def id(self) -> str:
        """The SHA-256 (hex) of the bots' versions, the setting and the fitted ratings with intervals."""
        return hashlib.sha256(canonical(self._content()).encode()).hexdigest()

    @property
    def short_id(self) -> str:
        """The id's first 12 digits, as runs print it."""
        return self.id[:12]

    def _content(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "options": dict(self.options),
            "clock": dict(self.clock),
            "deal_sets": self.scale.deal_sets,
            "confidence": self.scale.confidence,
            "bots": [{"name": b.name, "command": list(b.command), "cwd": b.cwd,
                      **({"files": list(b.files)} if b.files else {}), "version": b.version,
                      **_rating(self.scale.ratings[b.name])} for b in self.bots],
            "differences": [{"a": d.a, "b": d.b, "elo": d.elo, "se": d.se} for d in self.scale.differences],
        }

    def to_json(self) -> str:
        """The file's text (docs/pool.md): the format, the id, then the content; one field a line, one
        bot and one difference a line."""
        lines = []
        for key, value in {"format": FORMAT, "id": self.id, **self._content()}.items():
            if isinstance(value, list):
                items = ",\n".join(f"    {_json(v)}" for v in value)
                lines.append(f"  {_json(key)}: [\n{items}\n  ]")
            else:
                lines.append(f"  {_json(key)}: {_json(value)}")
        return "{\n" + ",\n".join(lines) + "\n}\n"

    def mismatches(self, game: str, options: Mapping[str, Any], clock: Mapping[str, int],
                   versions: Mapping[str, str | None]) -> list[str]:
        """What differs between the pool's setting and a run's (``versions``: each pool bot's content
        hash in the run, None when it has none): one sentence each; [] when the run plays the pool's
        setting with the pool's bots. A run that differs is not on the pool's scale."""
        out = []
        if _filled(game, options) == _filled(self.game, self.options):
            options = self.options  # the same options, their defaults written out or not
        run: dict[str, str | Mapping[str, Any]] = {"game is": game, "options are": dict(options),
                                                   "clock is": dict(clock)}
        made: dict[str, str | Mapping[str, Any]] = {"game is": self.game, "options are": dict(self.options),
                                                    "clock is": dict(self.clock)}
        for what, value in run.items():
            if value != made[what]:
                out.append(f"the {what} {_setting(value)}; the pool's {_setting(made[what])}")
        for bot in self.bots:
            if bot.name not in versions:
                continue  # not in this run: nothing to compare (the fit leaves it out)
            version = versions[bot.name]
            if version != bot.version:
                seen = "no version" if version is None else f"version {version[:12]}"
                out.append(f"{bot.name} has {seen}; the pool's {bot.version[:12]}")
        return out


def _filled(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """A game's options with its defaults filled in (as a run keeps them), so that ``{}`` and the
    defaults written out compare equal; as given for options the game has not."""
    try:
        return games.get(game).check_options(options)
    except (KeyError, games.OptionError):
        return dict(options)


def _rating(r: PoolRating) -> dict[str, float]:
    return {"elo": r.elo, "lo": r.lo, "hi": r.hi}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _setting(values: str | Mapping[str, Any]) -> str:
    """A game's name as it is; values as ``bank_ms=10000, decision_ms=1000`` (``none`` for none)."""
    if isinstance(values, str):
        return values
    return ", ".join(f"{k}={_json(v)}" for k, v in sorted(values.items())) or "none"


def _rounded(ref: Reference) -> Reference:
    """The scale with its values as the file keeps them (DIGITS decimals)."""
    ratings = {name: PoolRating(round(r.elo, DIGITS), round(r.lo, DIGITS), round(r.hi, DIGITS))
               for name, r in ref.ratings.items()}
    differences = tuple(PairDifference(d.a, d.b, round(d.elo, DIGITS), max(round(d.se, DIGITS), 10.0 ** -DIGITS))
                        for d in ref.differences)
    return Reference(ratings, differences, ref.deal_sets, ref.confidence)


def make(game: str, options: Mapping[str, Any], clock: Mapping[str, int], bots: Sequence[PoolBot],
         outcomes: Iterable[Outcome], *, bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95) -> Pool:
    """The pool of ``bots`` from their games among themselves (``outcomes``, named as the bots are),
    in this setting: fitted by :func:`referee.stats.anchored.reference`. Raises ValueError for bots
    without results, results of a bot not in the pool, or results that fit no scale."""
    outcomes = list(outcomes)
    names = [b.name for b in bots]
    if len(set(names)) != len(names):
        raise ValueError(f"a pool's bots need distinct names: {', '.join(names)}")
    ref = reference(outcomes, bootstrap=bootstrap, seed=seed, confidence=confidence)
    missing = [n for n in names if n not in ref.ratings]
    strangers = [n for n in ref.ratings if n not in names]
    if missing:
        raise ValueError(f"no results for {', '.join(missing)}: every bot of a pool plays in its run")
    if strangers:
        raise ValueError(f"results of bots not in the pool: {', '.join(strangers)}")
    return Pool(game, dict(options), dict(clock), tuple(bots), _rounded(ref))


# --- the file ---------------------------------------------------------------------------------


def write(pool: Pool, path: str | os.PathLike[str]) -> None:
    """Write the pool file whole or not at all (:func:`referee.files.write_text`): PoolFileError for a
    path that cannot be written, :class:`referee.files.WriteFailed` when the disk refuses it."""
    try:
        files.write_text(path, pool.to_json())
    except files.CannotWrite as e:
        raise PoolFileError(str(e)) from None


def read(path: str | os.PathLike[str]) -> Pool:
    """Read and check a pool file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a named pipe neither blocks nor is read
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise PoolFileError(f"cannot read pool file {os.fspath(path)}: not a regular file")
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise PoolFileError(f"cannot read pool file {os.fspath(path)}: larger than {MAX_BYTES // 1024} KB")
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise PoolFileError(f"cannot read pool file {os.fspath(path)}: {reason}") from None
    return loads(text, f"pool file {os.fspath(path)}")


def loads(text: str, source: str = "pool file") -> Pool:
    """Parse and check a pool file's text (``source`` names it in errors)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PoolFileError(f"{source}: line {e.lineno}, column {e.colno}: not valid JSON: {e.msg}") from None
    except (RecursionError, ValueError):
        raise PoolFileError(f"{source}: not a pool file (JSON nested too deeply, or a number of more than "
                            f"{sys.get_int_max_str_digits()} digits)") from None
    try:
        return _Reader(source).pool(data)
    except OverflowError:  # a whole number too large for a float
        raise PoolFileError(f"{source}: a number too large (every rating, difference and level is a float)") from None
    except UnicodeEncodeError:  # a lone surrogate (\ud800) in a string
        raise PoolFileError(f"{source}: a string that is not valid Unicode (a lone surrogate escape)") from None


class _Reader:
    """The checks of a pool file's fields, each failure one PoolFileError naming the file and field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, what: str) -> PoolFileError:
        """``pool file F: WHERE WHAT`` (``where`` empty: the file itself)."""
        return PoolFileError(f"{self.source}: {where} {what}" if where else f"{self.source}: {what}")

    def field(self, data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, what: str) -> Any:
        """``data[key]``, which must be of ``kind`` (never a bool standing for a number)."""
        if key not in data:
            raise self.fail("", f"{key!r} is missing" + (f" from {where}" if where else ""))
        value = data[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise self.fail(f"{where}: {key!r}" if where else repr(key), f"must be {what}")
        return value

    def number(self, data: Mapping[str, Any], key: str, where: str) -> float:
        value = self.field(data, key, (int, float), where, "a number")
        if not math.isfinite(value):
            raise self.fail(f"{where}: {key!r}" if where else repr(key), "must be a finite number")
        return float(value)

    def pool(self, data: Any) -> Pool:
        if not isinstance(data, dict):
            raise PoolFileError(f"{self.source}: a pool file is a JSON object")
        if data.get("format") != FORMAT:
            raise self.fail("", f"not a pool file of this version: 'format' must be {FORMAT!r}, "
                                f"got {data.get('format')!r}")
        top = ""
        stated = self.field(data, "id", str, top, "the pool's id (64 hex digits)")
        game = self.field(data, "game", str, top, "a game's name")
        if game not in games.GAMES:
            raise self.fail("'game'", f"must be one of {', '.join(games.GAMES)}, got {game!r}")
        options = self.field(data, "options", dict, top, "an object (the game's options)")
        clock = self.field(data, "clock", dict, top, "an object (decision_ms, bank_ms)")
        for key, value in clock.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise self.fail(f"'clock': {key!r}", "must be a whole number of milliseconds >= 0")
        deal_sets = self.field(data, "deal_sets", int, top, "a whole number of deal sets")
        if deal_sets < 2:
            raise self.fail("'deal_sets'", "must be at least 2")
        confidence = self.number(data, "confidence", "")
        if not 0.0 < confidence < 1.0:
            raise self.fail("'confidence'", "must be between 0 and 1")
        bots, ratings = self.bots(self.field(data, "bots", list, top, "a list of the pool's bots"))
        differences = self.differences(self.field(data, "differences", list, top, "a list of pair differences"),
                                       ratings)
        pool = Pool(game, options, clock, bots, Reference(ratings, differences, deal_sets, confidence))
        if stated != pool.id:
            raise self.fail("", f"its id {stated[:12]!r} is not the hash of its content ({pool.short_id!r}): the "
                                "file was changed after it was made (make the pool again)")
        return pool

    def bots(self, items: list[Any]) -> tuple[tuple[PoolBot, ...], dict[str, PoolRating]]:
        if len(items) < 2:
            raise self.fail("'bots'", "must hold at least two bots")
        bots, ratings = [], {}
        for k, item in enumerate(items, 1):
            where = f"bot {k}"
            if not isinstance(item, dict):
                raise self.fail(where, "must be an object")
            name = self.field(item, "name", str, where, "a name")
            if not BOT_NAME.match(name):
                raise self.fail(where, f"has the name {name!r}: a bot's name is 1 to 40 letters, digits and _.+- "
                                       "(starting with a letter or digit)")
            where = f"bot {k} ({name})"
            if name in ratings:
                raise self.fail(where, "repeats the name of another bot of the pool")
            command = self.field(item, "command", list, where, "a list of strings (the command)")
            if not command or not all(isinstance(w, str) for w in command):
                raise self.fail(f"{where}: 'command'", "must be a non-empty list of strings")
            version = self.field(item, "version", str, where, "a content hash (64 hex digits)")
            if len(version) != 64 or not set(version) <= _HEX:
                raise self.fail(f"{where}: 'version'", "must be a content hash (64 lowercase hex digits)")
            cwd = item.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                raise self.fail(f"{where}: 'cwd'", "must be a path or null")
            listed = item.get("files", [])
            if not isinstance(listed, list) or not all(isinstance(f, str) and f for f in listed):
                raise self.fail(f"{where}: 'files'", "must be a list of paths or patterns (as [[bots]] files)")
            elo, lo, hi = (self.number(item, key, where) for key in ("elo", "lo", "hi"))
            if not lo <= elo <= hi:
                raise self.fail(where, f"has an interval [{lo}, {hi}] that does not hold its rating {elo}")
            bots.append(PoolBot(name, tuple(command), version, cwd, tuple(listed)))
            ratings[name] = PoolRating(elo, lo, hi)
        return tuple(bots), ratings

    def differences(self, items: list[Any], ratings: Mapping[str, PoolRating]) -> tuple[PairDifference, ...]:
        out, seen = [], set()
        for k, item in enumerate(items, 1):
            where = f"difference {k}"
            if not isinstance(item, dict):
                raise self.fail(where, "must be an object")
            a = self.field(item, "a", str, where, "a pool bot's name")
            b = self.field(item, "b", str, where, "a pool bot's name")
            if a not in ratings or b not in ratings or a == b:
                raise self.fail(where, f"must name two different bots of the pool, got {a!r} and {b!r}")
            elo, se = self.number(item, "elo", where), self.number(item, "se", where)
            if se <= 0:
                raise self.fail(f"{where}: 'se'", "must be a standard error > 0")
            seen.add(frozenset((a, b)))
            out.append(PairDifference(a, b, elo, se))
        wanted = len(ratings) * (len(ratings) - 1) // 2
        if len(seen) != wanted or len(out) != wanted:
            raise self.fail("'differences'", f"must hold every pair of the pool's bots once ({wanted}), got {len(out)}")
        return tuple(out)
