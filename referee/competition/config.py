"""A tournament's description: a TOML file, checked key by key.

    [tournament]
    game = "aegis"              # or "confirmation"
    deal_sets = 20              # how many deal sets (each played by every seating)
    seed = 2026                 # the master seed: every deal comes from it
    concurrency = 4             # matches played at once
    output = "out/aegis"        # results directory, relative to this file
    max_groups = 70             # Confirmation with > 4 bots: most groups of four to play
    release = "deal-set"        # when spectators get a match's record: "deal-set" or "end"
    startup_s = 30              # every bot running and connected by then, or no match is played
    title = "Spring cup 2026"   # the report's and the live page's title (one line)
    description = '''...'''     # a few paragraphs for them (plain text; blank lines part paragraphs)
    absent = "stop"             # a bot that is not: "stop" the run (exit 2), or "withdraw" it (the rest play)
    data = ["tables"]           # paths every launched bot may read (besides its own directory)
    allow_team_tables = true    # team-mates may share tables where the schedule cannot keep them apart
    schedule = "adaptive"       # "round-robin" (default: every table, deal_sets deal sets) or "adaptive"
    stop = "order"              # adaptive: "order" (every adjacent pair settled) or "top:K" (the top K and their order)
    confidence = 0.95           # adaptive: the rule's level
    tie_elo = 75                # adaptive: a pair shown within ±tie_elo is settled too (0: ordered only)
    max_deal_sets = 400         # adaptive: the cap (instead of deal_sets)
    plan_ahead = 1              # adaptive: deal sets chosen at once (their matches may play at once)
    plan_fill = false           # adaptive: such a batch filled with tables until it keeps every match slot busy

    [tournament.options]        # the game's rule options
    promise = "table"

    [clock]
    decision_ms = 1000
    bank_ms = 10000

    [pool]                      # a reference pool (docs/pool.md): its bots join, the ratings are on its scale
    file = "pools/aegis.pool.json"  # relative to this file
    bots = ["weakened-50", "search"]  # some of its bots (default: all; none named as a [[bots]] entry)

    [[bots]]
    name = "random"
    command = ["python", "-m", "sample_bots.random", "--seed", "1"]
    cwd = "."                   # relative to this file
    env = { PYTHONUNBUFFERED = "1" }
    files = ["sample_bots/*.py", "referee"]   # what its version covers (default: every file of cwd)
    team = "acme"               # its author or team: never at one table with a team-mate

    [[bots]]
    name = "gone"
    withdrawn = true            # out of the competition: not played, not ranked
    command = "python gone.py"

    [[bots]]
    name = "mine-c"
    command = ["./mybot"]
    protocol = "stdio"          # reads the referee's messages on stdin, answers on stdout (default "grpc")
    exclude = ["build"]         # left out of its version (build products, caches), and of its sandbox
    data = ["nets/big.onnx"]    # paths this bot may read besides its cwd (relative to this file)

    [[bots]]
    name = "mine"
    external = true             # connects by itself
    token = "s3cret"

    [limits]                    # for every launched bot; a [[bots]] table may override (not sandbox)
    sandbox = "auto"            # "bwrap": bubblewrap or refuse to start; "none"; "auto": bwrap if it works
    cpu_seconds = 3600          # CPU time per process (0: none); past it the bot is killed
    memory_mb = 4096            # the whole bot's memory (a cgroup where one can be made), and
                                # the address space of each of its processes (0: none)
    processes = 256             # processes and threads of the whole bot (0: none)
    file_mb = 256               # the largest file it may write, and its scratch directory (0: none)
    open_files = 1024           # open descriptors per process
    log_kb = 1024               # output kept in logs/NAME.log; the rest is counted, not kept
    max_restarts = 3            # a bot that dies more often is skipped, with the reason

    [executor]                  # where the matches are played (docs/scaling.md); --executor overrides
    kind = "ray"                # "local" (default): this process; "ray": match workers on a Ray cluster
    address = "10.0.0.5:6379"   # ray: the cluster to join (default: an embedded Ray on this machine)
    cpus = 2                    # ray: CPUs reserved per match worker (default: the game's seats)
    working_dir = "."           # ray: a directory shipped to every node (runtime_env); bots' paths inside it

Unknown keys and bad values raise :class:`ConfigError` naming the file, the
line and the reason.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import shlex
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee import games
from referee.hosting import paths, versions
from referee.model import (
    BOT_NAME,
    MAX_DEAL_SETS,
    PER_PROCESS,
    TIE_ELO,
    Absent,
    BotProtocol,
    BotSpec,
    ConfigError,
    ExecutorKind,
    ExecutorSpec,
    Isolation,
    Limits,
    PoolSpec,
    Release,
    Rule,
    RuleError,
    SandboxMode,
    ScheduleKind,
    TournamentConfig,
)
from referee.model.modes import member
from referee.model.teams import ALLOW_KEY, TeamError, seated_apart
from referee.results import pool
from referee.runner import MAX_CLOCK_MS, Clock

# --- a file read, and where its keys are, for messages ----------------------------


@dataclass(frozen=True)
class ConfigFile:
    """A TOML file read: its path, text and data. Its errors name the line of a key
    (tomllib does not say); its checks raise them. Every reader of a tournament file (a
    tournament's, a gauntlet's, an SPRT's) uses this."""

    path: Path
    text: str
    data: dict[str, Any]

    def line_of(self, table: str | None, key: str | None, index: int = 0) -> int | None:
        lines = self.text.splitlines()
        start, end = 0, len(lines)
        if table is not None:
            headers = [i for i, line in enumerate(lines)
                       if re.match(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$", line)]
            if index >= len(headers):
                return None
            start = headers[index]
            end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\s*\[", lines[i])), len(lines))
            if key is None:
                return start + 1
        for i in range(start, end):
            if key is not None and re.match(rf"^\s*\"?{re.escape(key)}\"?\s*=", lines[i]):
                return i + 1
        return start + 1 if table is not None else None

    def error(self, reason: str, table: str | None = None, key: str | None = None, index: int = 0) -> ConfigError:
        line = self.line_of(table, key, index)
        where = f"{self.path}:{line}" if line else str(self.path)
        return ConfigError(f"{where}: {reason}")

    def integer(self, table: str, key: str, value: Any, minimum: int, index: int = 0,
                maximum: int | None = None) -> int:
        """``value`` (of ``table.key``) checked: an integer, at least ``minimum`` (and at most ``maximum``)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"{table}.{key} must be an integer, got {value!r}", table, key, index)
        if value < minimum:
            raise self.error(f"{table}.{key} must be at least {minimum}, got {value}", table, key, index)
        if maximum is not None and value > maximum:
            raise self.error(f"{table}.{key} must be at most {maximum}, got {value}", table, key, index)
        return value

    def flag(self, table: str, key: str, value: Any) -> bool:
        """``value`` (of ``table.key``) checked: true or false."""
        if not isinstance(value, bool):
            raise self.error(f"{table}.{key} must be true or false, got {value!r}", table, key)
        return value

    def check_keys(self, data: dict[str, Any], allowed: set[str], table: str | None, index: int = 0) -> None:
        """No key of ``data`` (``table``, or the top level) outside ``allowed``."""
        for key in data:
            if key not in allowed:
                place = f"[{table}]" if table else "the top level"
                raise self.error(f"unknown key {key!r} in {place} (allowed: {', '.join(sorted(allowed))})",
                                 table, key, index)

    def split(self, name: str, allowed: set[str], what: str) -> tuple[dict[str, Any], ConfigFile]:
        """The extra ``[name]`` table of a tournament file (a gauntlet's, an SPRT's), checked
        (present, a table, no unknown key; ``what`` says what it needs), and the file without it."""
        data = dict(self.data)
        table = data.pop(name, None)
        if table is None:
            raise self.error(f"missing [{name}] table ({what})")
        if not isinstance(table, dict):
            raise self.error(f"[{name}] must be a table", name)
        self.check_keys(table, allowed, name)
        return table, replace(self, data=data)


def read(path: str | Path) -> ConfigFile:
    """A TOML file, or a ConfigError saying why not."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text (byte {err.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    return ConfigFile(path, text, data)


# --- reading a tournament ------------------------------------------------------------

_TOP = {"tournament", "clock", "limits", "bots", "executor", "pool"}
_POOL = {"file", "bots"}
_TOURNAMENT = {"game", "options", "deal_sets", "seed", "concurrency", "output", "max_groups", "isolation",
               "release", "startup_s", "title", "description", "absent", "data", "schedule", "stop", "confidence",
               "max_deal_sets", "tie_elo", "plan_ahead", "plan_fill", ALLOW_KEY}
#: the keys of an adaptive tournament's stopping rule (and how far it plans ahead)
_RULE_KEYS = ("stop", "confidence", "max_deal_sets", "tie_elo", "plan_ahead", "plan_fill")
#: the longest title and description (characters)
TITLE_MAX, DESCRIPTION_MAX = 120, 4000
#: control characters (C0, DEL, C1); a description may hold newlines and tabs
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: what a bot keeps between matches: its processes and scratch through the run, or nothing
_CLOCK = {"decision_ms", "bank_ms"}
_EXECUTOR = {"kind", "address", "cpus", "working_dir"}
_LIMITS = {"cpu_seconds", "memory_mb", "processes", "file_mb", "open_files", "log_kb", "max_restarts"}
_BOT = {"name", "command", "cwd", "env", "external", "token", "protocol", "withdrawn", "files", "exclude",
        "data", "team"} | _LIMITS
#: the longest team name (characters)
TEAM_MAX = 60


def load(path: str | Path) -> TournamentConfig:
    """A tournament file, its teams checked against its schedule (a gauntlet's and an SPRT's
    readers check theirs)."""
    loc = read(path)
    config = parse(loc)
    check_teams(loc, config, config.entries, games.get(config.game).num_seats, games.get(config.game).title)
    return config


def parse(loc: ConfigFile) -> TournamentConfig:
    data, path = loc.data, loc.path
    base = path.parent
    loc.check_keys(data, _TOP, None)
    t = data.get("tournament")
    if not isinstance(t, dict):
        raise loc.error("missing [tournament] table (with at least game = \"...\")")
    loc.check_keys(t, _TOURNAMENT, "tournament")
    game = t.get("game")
    if game not in games.GAMES:
        raise loc.error(f"tournament.game must be one of {', '.join(sorted(games.GAMES))}, got {game!r}",
                        "tournament", "game")
    spec = games.GAMES[game]
    raw_options = t.get("options", {})
    if not isinstance(raw_options, dict):
        raise loc.error("tournament.options must be a table", "tournament", "options")
    try:
        options = spec.check_options(raw_options)
    except games.OptionError as err:
        bad = next((k for k in raw_options if k not in spec.options), None) or next(iter(raw_options), None)
        raise loc.error(f"tournament.options: {err}", "tournament.options", bad) from None
    schedule, rule = _schedule(loc, t)
    deal_sets = rule.max_deal_sets if schedule == ScheduleKind.ADAPTIVE else \
        loc.integer("tournament", "deal_sets", t.get("deal_sets", 10), 1)
    seed_drawn = "seed" not in t
    seed = secrets.randbits(128) if seed_drawn else loc.integer("tournament", "seed", t["seed"], 0)
    concurrency = loc.integer("tournament", "concurrency", t.get("concurrency", 2), 1)
    max_groups = loc.integer("tournament", "max_groups", t.get("max_groups", 70), 1)
    isolation = member(Isolation, t.get("isolation", Isolation.TOURNAMENT))
    if isolation is None:
        raise loc.error(f"tournament.isolation must be one of {', '.join(Isolation)}, got {t['isolation']!r}",
                        "tournament", "isolation")
    release = member(Release, t.get("release", Release.DEAL_SET))
    if release is None:
        raise loc.error(f"tournament.release must be one of {', '.join(Release)}, got {t['release']!r}",
                        "tournament", "release")
    startup_s = t.get("startup_s", 30)
    if isinstance(startup_s, bool) or not isinstance(startup_s, (int, float)) or not 0 < startup_s <= 86400:
        raise loc.error(f"tournament.startup_s must be a number of seconds above 0 (at most 86400), "
                        f"got {startup_s!r}", "tournament", "startup_s")
    title = _text(loc, t, "title", TITLE_MAX, _CONTROL, "one line of text")
    description = _text(loc, t, "description", DESCRIPTION_MAX, _CONTROL_BUT_LINES, "text")
    absent = member(Absent, t.get("absent", Absent.STOP))
    if absent is None:
        raise loc.error(f"tournament.absent must be one of {', '.join(Absent)}, got {t['absent']!r}", "tournament",
                        "absent")
    output = t.get("output", "out")
    if not isinstance(output, str) or not output:
        raise loc.error("tournament.output must be a directory path", "tournament", "output")

    c = data.get("clock", {})
    if not isinstance(c, dict):
        raise loc.error("[clock] must be a table", "clock")
    loc.check_keys(c, _CLOCK, "clock")
    decision_ms = loc.integer("clock", "decision_ms", c.get("decision_ms", 1000), 1, maximum=MAX_CLOCK_MS)
    bank_ms = loc.integer("clock", "bank_ms", c.get("bank_ms", 10000), 0, maximum=MAX_CLOCK_MS)

    raw_limits = data.get("limits", {})
    if not isinstance(raw_limits, dict):
        raise loc.error("[limits] must be a table", "limits")
    loc.check_keys(raw_limits, _LIMITS | {"sandbox", "accept_per_process"}, "limits")
    accept = raw_limits.get("accept_per_process", [])
    if not isinstance(accept, list) or not all(a in PER_PROCESS for a in accept):
        raise loc.error(f"limits.accept_per_process must be a list of {', '.join(map(repr, PER_PROCESS))}, got "
                        f"{accept!r}", "limits", "accept_per_process")
    limits = replace(_limits(loc, raw_limits, Limits(), "limits"), accept_per_process=tuple(accept))
    sandbox = member(SandboxMode, raw_limits.get("sandbox", SandboxMode.AUTO))
    if sandbox is None:
        raise loc.error(f"limits.sandbox must be one of {', '.join(SandboxMode)}, got {raw_limits['sandbox']!r}",
                        "limits", "sandbox")

    raw_bots = data.get("bots")
    if not isinstance(raw_bots, list) or not raw_bots:
        raise loc.error("no bots: add [[bots]] tables, each with a name and a command (or external = true)")
    shared = _data(loc, t.get("data", []), base, "tournament", None, 0)
    bots = [_bot(loc, b, i, base, limits, shared) for i, b in enumerate(raw_bots)]
    names = [b.name for b, _ in bots]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise loc.error(f"bot name {name!r} is used twice", "bots", "name", i)
    pool_spec, pooled = _pool(loc, data["pool"], base, limits, shared, names) if "pool" in data else (None, [])
    bots += pooled
    names += [b.name for b, _ in pooled]
    if len(bots) < 2:
        raise loc.error("a tournament needs at least two bots", "bots", "name", 0)
    output = (base / output).resolve()
    # what a sandbox would show each bot (without one, as asked, a bot sees all its user sees anyway)
    launched = [(i, places) for i, (_, places) in enumerate(bots) if places is not None and sandbox != SandboxMode.NONE]
    refused = paths.layout([places for _, places in launched], output, path)
    if refused is not None:
        index, key, why = refused
        i = launched[index][0]
        if i >= len(raw_bots):  # a pool bot's
            raise loc.error(f"pool bot {names[i]!r}: {why}", "pool", "file")
        raise loc.error(f"bot {names[i]!r}: {why}", "bots", key if key in raw_bots[i] else "name", i)
    entries = [b.name for b, _ in bots if not b.withdrawn]
    allow = loc.flag("tournament", ALLOW_KEY, t.get(ALLOW_KEY, False))
    if rule.top is not None and rule.top >= len(entries):
        raise loc.error(f"tournament.stop = \"top:{rule.top}\" needs more than {rule.top} entries in play, the file "
                        f"has {len(entries)} (stop = \"order\" settles the whole order)", "tournament", "stop")
    return TournamentConfig(game, options, tuple(b for b, _ in bots), deal_sets, seed,
                            Clock(decision_ms / 1000, bank_ms / 1000), concurrency, output, max_groups, path, sandbox,
                            isolation, seed_drawn, release, float(startup_s),
                            _executor(loc, data.get("executor", {}), base), title, description, absent,
                            schedule=schedule, rule=rule, allow_team_tables=allow, pool=pool_spec)


def _schedule(loc: ConfigFile, t: dict[str, Any]) -> tuple[ScheduleKind, Rule]:
    """``tournament.schedule`` and, for an adaptive one, its stopping rule (checked)."""
    schedule = member(ScheduleKind, t.get("schedule", ScheduleKind.ROUND_ROBIN))
    if schedule is None:
        raise loc.error(f"tournament.schedule must be one of {', '.join(ScheduleKind)}, got {t['schedule']!r}",
                        "tournament", "schedule")
    if schedule != ScheduleKind.ADAPTIVE:
        given = next((k for k in _RULE_KEYS if k in t), None)
        if given is not None:
            raise loc.error(f"tournament.{given} is for schedule = \"adaptive\" (a round robin plays every table on "
                            f"each of its deal_sets)", "tournament", given)
        return schedule, Rule()
    if "deal_sets" in t:
        raise loc.error("tournament.deal_sets is for a round robin: an adaptive tournament plays until its stop rule, "
                        f"at most max_deal_sets deal sets (default {MAX_DEAL_SETS})", "tournament", "deal_sets")
    confidence = t.get("confidence", 0.95)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.5 < confidence < 1:
        raise loc.error(f"tournament.confidence must be a probability above 0.5 and below 1 (0.95: 95%), "
                        f"got {confidence!r}", "tournament", "confidence")
    max_deal_sets = loc.integer("tournament", "max_deal_sets", t.get("max_deal_sets", MAX_DEAL_SETS), 2)
    tie_elo = t.get("tie_elo", TIE_ELO)
    if isinstance(tie_elo, bool) or not isinstance(tie_elo, (int, float)) or not 0 <= tie_elo < 1000:
        raise loc.error(f"tournament.tie_elo must be a number of Elo from 0 (no margin: only ordered pairs settle) "
                        f"to below 1000, got {tie_elo!r}", "tournament", "tie_elo")
    stop = t.get("stop", "order")
    try:
        if not isinstance(stop, str):
            raise RuleError(f'must be "order" or "top:K" with K a whole number from 1, got {stop!r}')
        rule = Rule.parse(stop, float(confidence), max_deal_sets, float(tie_elo))
    except RuleError as err:
        raise loc.error(f"tournament.stop {err}", "tournament", "stop") from None
    ahead = loc.integer("tournament", "plan_ahead", t.get("plan_ahead", 1), 1, maximum=64)
    fill = loc.flag("tournament", "plan_fill", t.get("plan_fill", False))
    return schedule, dataclasses.replace(rule, ahead=ahead, fill=fill)


def _text(loc: ConfigFile, t: dict[str, Any], key: str, longest: int, control: re.Pattern[str],
          what: str) -> str | None:
    """``tournament.KEY``, a text for the pages (None if absent): a non-blank string of at most
    ``longest`` characters without ``control`` characters."""
    if key not in t:
        return None
    value = t[key]
    if not isinstance(value, str) or not value.strip():
        raise loc.error(f"tournament.{key} must be {what}, got {value!r}", "tournament", key)
    if bad := control.search(value):
        raise loc.error(f"tournament.{key} must be {what}: it holds the control character "
                        f"U+{ord(bad.group()):04X} at character {bad.start() + 1}", "tournament", key)
    if len(value) > longest:
        raise loc.error(f"tournament.{key} must be at most {longest} characters, got {len(value)}", "tournament", key)
    return value.strip()


def _executor(loc: ConfigFile, e: Any, base: Path) -> ExecutorSpec:
    if not isinstance(e, dict):
        raise loc.error("[executor] must be a table", "executor")
    loc.check_keys(e, _EXECUTOR, "executor")
    kind = member(ExecutorKind, e.get("kind", ExecutorKind.LOCAL))
    if kind is None:
        raise loc.error(f"executor.kind must be one of {', '.join(ExecutorKind)}, got {e['kind']!r}", "executor",
                        "kind")
    address = e.get("address")
    if address is not None and (not isinstance(address, str) or not address):
        raise loc.error(f"executor.address must be HOST:PORT, got {address!r}", "executor", "address")
    cpus = loc.integer("executor", "cpus", e["cpus"], 1) if "cpus" in e else None
    working_dir = e.get("working_dir")
    if working_dir is not None:
        if not isinstance(working_dir, str) or not (base / working_dir).is_dir():
            raise loc.error(f"executor.working_dir must be a directory, got {working_dir!r}", "executor",
                            "working_dir")
        working_dir = (base / working_dir).resolve()
    return ExecutorSpec(kind, address, cpus, working_dir)


def _limits(loc: ConfigFile, raw: dict[str, Any], default: Limits, table: str, index: int = 0) -> Limits:
    values = {key: loc.integer(table, key, raw[key], 0, index) for key in _LIMITS if key in raw}
    return Limits(**{**default.__dict__, **values, "written": tuple(sorted({*default.written, *values}))})


def _data(loc: ConfigFile, raw: Any, base: Path, table: str, bot: str | None, i: int) -> list[paths.Place]:
    """A ``data`` list (of ``[tournament]`` or of a bot): paths relative to the file, that exist."""
    who = f"bot {bot!r}: data" if bot else f"{table}.data"
    if not isinstance(raw, list) or not all(isinstance(p, str) and p for p in raw):
        raise loc.error(f"{who} must be a list of paths", table, "data", i)
    found = []
    for written in raw:
        if not (base / written).exists():
            raise loc.error(f"{who}: {base / written} does not exist", table, "data", i)
        found.append(paths.Place.of(base / written))
    return found


def _bot(loc: ConfigFile, b: Any, i: int, base: Path, limits: Limits,
         shared: list[paths.Place]) -> tuple[BotSpec, paths.Launched | None]:
    """The bot of ``[[bots]]`` table ``i``, and for a launched one what :func:`paths.layout` checks."""
    if not isinstance(b, dict):
        raise loc.error(f"bots[{i}] must be a table", "bots", None, i)
    loc.check_keys(b, _BOT, "bots", i)
    name = b.get("name")
    if not isinstance(name, str) or not BOT_NAME.match(name):
        raise loc.error(f"bots[{i}].name must be 1-40 letters, digits or _.+- , got {name!r}", "bots", "name", i)
    external = b.get("external", False)
    if not isinstance(external, bool):
        raise loc.error(f"bot {name!r}: external must be true or false", "bots", "external", i)
    token = b.get("token")
    if token is not None and not isinstance(token, str):
        raise loc.error(f"bot {name!r}: token must be a string", "bots", "token", i)
    withdrawn = b.get("withdrawn", False)
    if not isinstance(withdrawn, bool):
        raise loc.error(f"bot {name!r}: withdrawn must be true or false", "bots", "withdrawn", i)
    team = _team(loc, b, name, i)
    command = b.get("command")
    protocol = member(BotProtocol, b.get("protocol", BotProtocol.GRPC))
    if protocol is None:
        raise loc.error(f"bot {name!r}: protocol must be one of {', '.join(BotProtocol)}, got {b['protocol']!r}",
                        "bots", "protocol", i)
    if external:
        if command is not None:
            raise loc.error(f"bot {name!r} is external: it has no command", "bots", "command", i)
        if protocol != BotProtocol.GRPC:
            raise loc.error(f"bot {name!r} is external: it connects by itself, over gRPC (protocol = \"stdio\" "
                            f"is for a launched bot)", "bots", "protocol", i)
        for key in ("files", "exclude"):
            if key in b:
                raise loc.error(f"bot {name!r} is external: it has no files here (no version)", "bots", key, i)
        if not token:
            raise loc.error(f"bot {name!r} is external: give it a token to connect with", "bots", "name", i)
        if "data" in b:
            raise loc.error(f"bot {name!r} is external: it runs on its owner's machine, with no data of ours",
                            "bots", "data", i)
        return BotSpec(name, external=True, token=token, withdrawn=withdrawn, team=team), None
    if isinstance(command, str):
        command = shlex.split(command)
    if not isinstance(command, list) or not command or not all(isinstance(p, str) for p in command):
        raise loc.error(f"bot {name!r} needs a command (a string or a list of strings), or external = true",
                        "bots", "command" if "command" in b else "name", i)
    cwd = b.get("cwd", ".")  # default: the directory of the tournament file
    if not isinstance(cwd, str):
        raise loc.error(f"bot {name!r}: cwd must be a path", "bots", "cwd", i)
    place = paths.Place.of(base / cwd)
    if not place.real.is_dir() and not withdrawn:  # a withdrawn entry's directory may be gone
        raise loc.error(f"bot {name!r}: cwd {place.real} is not a directory", "bots", "cwd", i)
    own = [] if withdrawn else _data(loc, b.get("data", []), base, "bots", name, i)
    data = list({p.written: p for p in own + shared}.values())
    env = b.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise loc.error(f"bot {name!r}: env must be a table of strings", "bots", "env", i)
    files = () if withdrawn else _files(loc, b, name, i, place.real)
    spec = BotSpec(name, tuple(command), str(place.real), dict(env), False, token, _limits(loc, b, limits, "bots", i),
                   protocol=protocol, withdrawn=withdrawn, files=files, exclude=_patterns(loc, b, name, i, "exclude"),
                   data=tuple(str(p.real) for p in data), team=team)
    return spec, None if withdrawn else paths.Launched(name, spec.command, place, data)


def _pool(loc: ConfigFile, raw: Any, base: Path, limits: Limits, shared: list[paths.Place],
          names: list[str]) -> tuple[PoolSpec, list[tuple[BotSpec, paths.Launched | None]]]:
    """The ``[pool]`` table: the pool file read and checked (relative to this file), and the pool's
    bots that join the run (its ``bots``, default all), each a launched entry from the pool file
    (docs/pool.md) with the file's default limits and shared data; ``names``: the ``[[bots]]``' names,
    which a pool bot's must not take."""
    if not isinstance(raw, dict):
        raise loc.error("[pool] must be a table", "pool")
    loc.check_keys(raw, _POOL, "pool")
    written = raw.get("file")
    if not isinstance(written, str) or not written:
        raise loc.error("pool.file must be the path of a pool file (relative to this file)", "pool", "file")
    path = (base / written).resolve()
    try:
        made = pool.read(path)
    except pool.PoolFileError as err:
        raise loc.error(str(err), "pool", "file") from None
    of_pool = [b.name for b in made.bots]
    chosen = raw.get("bots", of_pool)
    if not isinstance(chosen, list) or not chosen or not all(isinstance(n, str) for n in chosen):
        raise loc.error(f"pool.bots must be a list of some of the pool's bots ({', '.join(of_pool)}), got "
                        f"{chosen!r}", "pool", "bots")
    for name in chosen:
        if name not in of_pool:
            raise loc.error(f"pool.bots: {name!r} is not a bot of pool {made.short_id} (its bots: "
                            f"{', '.join(of_pool)})", "pool", "bots")
        if chosen.count(name) > 1:
            raise loc.error(f"pool.bots: {name!r} is named twice", "pool", "bots")
    joining = [b for b in made.bots if b.name in chosen]
    for b in joining:
        if b.name in names:
            raise loc.error(f"pool bot {b.name!r} has the name of a [[bots]] entry: rename the entry, or leave the "
                            f"pool's out with pool.bots", "bots", "name", names.index(b.name))
    spec = PoolSpec(path, json.loads(made.to_json()), tuple(b.name for b in joining))
    return spec, [_pool_bot(loc, b, path.parent, base, limits, shared) for b in joining]


def _pool_bot(loc: ConfigFile, b: pool.PoolBot, home: Path, base: Path, limits: Limits,
              shared: list[paths.Place]) -> tuple[BotSpec, paths.Launched | None]:
    """A pool bot as an entry: its ``cwd`` relative to the pool file's directory ``home`` (null: this
    file's, as a ``[[bots]]`` table's default), its ``files`` checked as a ``[[bots]]`` table's are."""
    place = paths.Place.of(home / b.cwd if b.cwd is not None else base)
    if not place.real.is_dir():
        raise loc.error(f"pool bot {b.name!r}: cwd {place.real} is not a directory", "pool", "file")
    for pattern in b.files:
        if not versions.matches(place.real, pattern):
            raise loc.error(f"pool bot {b.name!r}: files entry {pattern!r} matches nothing under {place.real}",
                            "pool", "file")
    spec = BotSpec(b.name, b.command, str(place.real), {}, False, None, limits, files=b.files,
                   data=tuple(str(p.real) for p in shared))
    return spec, paths.Launched(b.name, spec.command, place, shared)


def _team(loc: ConfigFile, b: dict[str, Any], name: str, i: int) -> str | None:
    """A bot's ``team``: its author or team, one line of text (None: a team of its own)."""
    team = b.get("team")
    if team is None:
        return None
    if not isinstance(team, str) or not team.strip() or _CONTROL.search(team) or len(team.strip()) > TEAM_MAX:
        raise loc.error(f"bot {name!r}: team must be one line of text of at most {TEAM_MAX} characters, got {team!r}",
                        "bots", "team", i)
    return team.strip()


def check_teams(loc: ConfigFile, config: TournamentConfig, entries: list[str], seats: int, what: str) -> None:
    """A ConfigError (at the ``team`` of the first entry sharing a team) when a schedule of
    ``entries``, whose tables seat any ``seats`` of them, cannot keep team-mates apart and the
    file does not allow it (:func:`referee.model.teams.seated_apart`)."""
    try:
        seated_apart(config.teams, entries, seats, what)
    except TeamError as err:
        raise team_error(loc, config, err) from None


def team_error(loc: ConfigFile, config: TournamentConfig, err: TeamError) -> ConfigError:
    """``err`` at the line of the first ``team`` shared by two bots of the file."""
    teams = config.teams
    keys = [teams.key(b.name) for b in config.bots]
    first = next((i for i, k in enumerate(keys) if keys.count(k) > 1), 0)
    return loc.error(str(err), "bots", "team", first)


def _files(loc: ConfigFile, b: dict[str, Any], name: str, i: int, cwd: Path) -> tuple[str, ...]:
    """A bot's ``files``: a non-empty list of paths or glob patterns, each matching something under its cwd."""
    files = _patterns(loc, b, name, i, "files")
    for pattern in files:
        if not versions.matches(cwd, pattern):
            raise loc.error(f"bot {name!r}: files entry {pattern!r} matches nothing under {cwd}", "bots", "files", i)
    return files


def _patterns(loc: ConfigFile, b: dict[str, Any], name: str, i: int, key: str) -> tuple[str, ...]:
    """A bot's ``files`` or ``exclude``: a non-empty list of paths or glob patterns (none if not given)."""
    if key not in b:
        return ()
    found = b[key]
    if not isinstance(found, list) or not found or not all(isinstance(f, str) and f for f in found):
        raise loc.error(f"bot {name!r}: {key} must be a list of paths or patterns (relative to its cwd)",
                        "bots", key, i)
    return tuple(found)
