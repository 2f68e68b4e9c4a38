"""What a launched bot may see of the machine, by path, and the checks that keep it so.

In its sandbox a bot sees, read-only: its own directory (``cwd``), the paths the organiser
names as its **data** (``data = [...]`` in its ``[[bots]]`` table, or for every bot in
``[tournament]``), and the **runtime** every bot shares (``/usr``, the interpreter, the
referee's packages, and the installation of a program found on PATH). Every one of these is
resolved (symlinks followed) before it is bound, and every path the bot's command names, by
absolute path or as its program, must lie inside them once resolved: a data file that is a
symlink to ``/etc/shadow`` is refused, not followed. Masked even inside what it sees: what
the run writes (:func:`written`: the output directory, the files its output goes to), the
tournament file, the other bots' directories and data, and home directories; so a ``cwd``
that is, or leads through a symlink into, one of those is refused.

:func:`layout` checks a tournament's bots (config.py calls it: one line, exit 2, before the
first match); :func:`outside` is the check :func:`~referee.hosting.sandbox.bwrap_command`
makes again at every start (the machine may have changed since).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shlex
import shutil
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.model import BOT_NAME, BotProtocol, BotSpec


def inside(path: Path, folder: Path) -> bool:
    """``path`` is ``folder`` or lies under it (as written: resolve both first)."""
    return path == folder or folder in path.parents


@functools.cache
def runtime() -> tuple[Path, ...]:
    """What every bot shares beyond its own files: the system (``/usr``), the interpreter (venv
    and base) and the referee's packages (an editable install points outside the venv)."""
    found = {Path(sys.prefix), Path(sys.base_prefix)}
    for package in ("referee", "sample_bots"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            found.update(Path(p) for p in spec.submodule_search_locations)
    return tuple(sorted({p.resolve() for p in found} | {Path("/usr")}))


def homes() -> set[Path]:
    """The machine's home directories (this user's, root's, those under /home), resolved."""
    found = {Path("/root"), Path(os.path.expanduser("~"))}
    if Path("/home").is_dir():
        found.update(p for p in Path("/home").iterdir() if p.is_dir())
    return {p.resolve() for p in found}


def written(*named: Path | str | None) -> list[Path]:
    """What this run writes, which is no bot's (left out of every version, masked in every
    sandbox): the paths ``named`` (its output directory, a ``--markdown`` file; None: not given)
    and the regular files its standard output and error go to (a shell's ``> sprt.json 2> err``)."""
    found = [Path(p) for p in named if p is not None]
    for fd in (1, 2):
        try:
            st = os.fstat(fd)
            path = Path(os.readlink(f"/proc/self/fd/{fd}"))
            if stat.S_ISREG(st.st_mode) and path.is_absolute() and os.path.samestat(path.stat(), st):
                found.append(path)
        except OSError:  # closed, not a file (a terminal, a pipe), deleted, or no /proc
            pass
    return found


def program_home(program: str) -> Path | None:
    """The installation of a program found on PATH (``/opt/x`` for ``/opt/x/bin/node``): part of
    the runtime. None for a program named by a path (it must lie in the bot's own files)."""
    if os.sep in program or (found := shutil.which(program)) is None:
        return None
    real = Path(found).resolve().parent
    return real.parent if real.name == "bin" else real


def elsewhere(program: str, cwd: Path) -> Path | None:
    """Where a program named by a path really is (resolved), when it is a bot's own and lies
    outside ``cwd``: neither inside it nor in the runtime (``/usr/bin/python3`` is the runtime's).
    None for a program found on PATH, inside ``cwd``, in the runtime, or that is not there."""
    if os.sep not in program:
        return None
    real = (cwd / program).resolve()
    if not real.is_file() or inside(real, cwd.resolve()) or any(inside(real, r) for r in runtime()):
        return None
    return real


def named(argv: Sequence[str], cwd: Path) -> list[Path]:
    """What a command names that its sandbox must show: its program when named by a path
    (``./mybot``, ``/opt/x/run``), and every argument that is an absolute path that exists."""
    found = [Path(os.path.abspath(cwd / argv[0]))] if argv and os.sep in argv[0] else []
    return found + [Path(os.path.normpath(a)) for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]


def outside(argv: Sequence[str], cwd: Path, data: Iterable[Path] = ()) -> str | None:
    """Why a bot's command cannot run in its sandbox: it names (see :func:`named`) a path
    that lies, once resolved, outside its directory ``cwd``, its ``data`` and the runtime;
    None when all it names lies inside."""
    allowed = [cwd.resolve(), *(Path(d).resolve() for d in data), *runtime()]
    for path in named(argv, cwd):
        real = path.resolve()
        if not any(inside(real, folder) for folder in allowed):
            leads = f", which leads to {real}," if real != path else ""
            return (f"its command names {path}{leads} outside its directory {cwd.resolve()} and its data "
                    f"(list what the bot may read in its data = [...])")
    return None


@dataclass(frozen=True)
class Place:
    """A directory or file of a bot's as the tournament file names it (``written``: absolute,
    symlinks not followed) and where it really is (``real``)."""

    written: Path
    real: Path

    @classmethod
    def of(cls, path: Path) -> Place:
        return cls(Path(os.path.abspath(path)), path.resolve())

    def __str__(self) -> str:
        return str(self.written) if self.written == self.real else f"{self.written} (resolved: {self.real})"


@dataclass(frozen=True)
class Launched:
    """A launched bot as :func:`layout` checks it: its name, command, directory and data."""

    name: str
    command: Sequence[str]
    cwd: Place
    data: Sequence[Place]


def layout(bots: Sequence[Launched], output: Path, source: Path | None) -> tuple[int, str, str] | None:
    """The first path of a tournament's launched bots that its sandbox could not keep to the
    bot: ``(index of the bot, its key, why)``, or None. Refused: a ``cwd`` inside the output
    directory, or that is a home directory; a ``cwd`` or a data path that a symlink leads into a
    home or into another bot's directory (written there, nested directories are the organiser's
    choice); a data path inside the output directory, or the tournament file itself; a command
    that names a path outside the bot's directory and data (:func:`outside`)."""
    output = output.resolve()
    everyone_homes = homes()
    for i, bot in enumerate(bots):
        where = _masked(bot.cwd, output, everyone_homes, [b for b in bots if b is not bot])
        if where is not None:
            return i, "cwd", f"its cwd {bot.cwd} {where}: give the bot a directory of its own"
        if bot.cwd.real in everyone_homes:
            return i, "cwd", (f"its cwd {bot.cwd} is a home directory: the bot would see everything in it "
                              f"(give it a directory of its own)")
        for place in bot.data:
            if source is not None and place.real == source.resolve():
                return i, "data", f"its data {place} is the tournament file, which no bot may read"
            where = _masked(place, output, everyone_homes, [b for b in bots if b is not bot], mine=bot)
            if where is not None:
                return i, "data", f"its data {place} {where}"
        why = outside(bot.command, bot.cwd.real, [p.real for p in bot.data])
        if why is not None:
            return i, "command", why
    return None


def _masked(place: Place, output: Path, all_homes: set[Path], others: Sequence[Launched],
            mine: Launched | None = None) -> str | None:
    """Where ``place`` lies that its bot must not see (None: nowhere). Through a symlink, it may
    lead neither into a home nor into another bot's directory or data (unless its own bot's
    directory or data holds it too: shared on purpose)."""
    if inside(place.real, output):
        return f"is inside the output directory {output}, which no bot may read"
    if place.written == place.real:
        return None
    if home := next((h for h in all_homes if inside(place.real, h)), None):
        return f"leads into the home directory {home}"
    # what its bot sees anyway, as written (a symlink does not vouch for another)
    own = [p.real for p in (mine.cwd, *mine.data) if p.written == p.real] if mine is not None else []
    for other in others:
        for theirs in (other.cwd, *other.data):
            if theirs.written != place.written and inside(place.real, theirs.real) \
                    and not any(inside(place.real, o) for o in own):
                return f"leads into bot {other.name}'s files ({theirs.real})"
    return None


def others(mine: tuple[Path, Sequence[Path]], theirs: Iterable[tuple[Path | None, Sequence[Path]]]) -> set[Path]:
    """What one bot must not see of the others (each given as its ``cwd`` and data): their
    directories and data, resolved, unless the same is this bot's own (two versions of one bot
    side by side in one directory, data shared on purpose); never the runtime all share."""
    cwd, data = mine
    own = {cwd.resolve(), *(Path(d).resolve() for d in data)}
    found = {Path(p).resolve() for their_cwd, their_data in theirs for p in (*filter(None, [their_cwd]), *their_data)}
    return {p for p in found - own if not any(inside(p, r) for r in runtime()) and p != Path("/")}


def bot_from_command(name: str, command: str, protocol: BotProtocol = BotProtocol.GRPC) -> BotSpec:
    """A launched bot from its name and its command line (split as a shell does). Its
    directory (``cwd``) is the current one, but for a program of its own named by a path
    outside it (:func:`elsewhere`: ``/srv/g/bot``): then the program's own, as
    ``command = ["/srv/g/bot"]``, ``cwd = "/srv/g"`` in a ``[[bots]]`` table, which its
    sandbox shows instead of the current directory. What its arguments name by absolute path
    (``python /x/mybot.py``: the directory /x, where its own modules are too) is its data:
    the one who typed the command named it. A ValueError if the name is not a bot name, the
    command is empty, or its program lies right in a home directory (its sandbox would show
    all of the home)."""
    if not BOT_NAME.match(name):
        raise ValueError(f"bad bot name {name!r}")
    parts = tuple(shlex.split(command))
    if not parts:
        raise ValueError("the command is empty")
    named = [os.path.abspath(p) for p in parts[1:] if os.path.isabs(p) and os.path.exists(p)]
    data = {p if os.path.isdir(p) else os.path.dirname(p) for p in named}
    program, cwd = elsewhere(parts[0], Path.cwd()), None
    if program is not None:  # its own directory, not the current one
        if program.parent in homes():
            raise ValueError(f"its program {program} lies in the home directory {program.parent}, which its "
                             f"sandbox would show whole (give the bot a directory of its own)")
        parts, cwd = (str(program), *parts[1:]), str(program.parent)
    return BotSpec(name, parts, cwd, protocol=protocol, data=tuple(sorted(data)))
