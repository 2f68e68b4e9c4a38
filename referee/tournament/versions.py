"""A launched bot's version, as far as the runner can see it: its command, its working
directory and every file of its own; and what its sandbox shows of those (:func:`view`).

**The version covers exactly what the sandbox shows of the bot's own files.** Its files are
every file under its working directory (``cwd``), or, when its ``[[bots]]`` table declares
``files`` (paths, directories and glob patterns relative to ``cwd``), those; and the files its
command names (a word that is a file relative to ``cwd`` or absolute: a script, a binary, a
jar; the module of ``-m MODULE``). Each is hashed (SHA-256, whole), so a changed module that
the entry point imports is a new version, as a changed entry point is. With ``files``
declared, the sandbox shows of ``cwd`` only those paths and the files the command names.

Left out of both, masked in the sandbox (:data:`MASKED`, :func:`masked`): ``__pycache__``
(a compiled file of the *unchecked-hash* kind runs whatever its source says, PEP 552; the
bot's files are read-only, so Python compiles from the source it is given), version control's
directories (``.git``, ``.hg``, ``.svn``: history is code outside the working tree), tools'
caches, and any directory holding a results store (another run's output: its results and
seeds). Every other dot-directory is part of the version. Left out of the version and not the
bot's to see as its own: the interpreter's installation (a virtual environment inside ``cwd``,
part of the runtime every bot shares) and what the run hides from its bots (``hide``: the
output directory, the tournament file, other bots' directories: masked). What the runner
cannot see is not compared either: an interpreter upgrade, its data (``data = [...]``, the
organiser's), files outside its directory that it reads at run time, its ``env``. An external
bot has no version here.

Reading every file each run would cost a 200 MB bot a few seconds (``python -m
referee.tools.versions_cost`` measures it): a ``cache`` (kept in the results directory) maps
a file's path to its size, modification and change times, inode and digest, and a file whose
five are the same is not read again. The change time is the kernel's (no tool can set it
back), and a file changed less than :data:`RACY_S` before it was hashed is not cached, since
a second change in the same clock tick could leave its times unchanged.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.tournament.config import BotSpec

#: a file changed this recently (seconds) when it was hashed is hashed again next time
RACY_S = 2.0
#: a results store: a directory holding one is another run's output, never part of a bot
_STORE = "results.sqlite"
#: directories that are never part of a bot's files, wherever they lie in them: masked in its
#: sandbox, left out of its version (Python's compiled files, version control, tools' caches)
MASKED = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                    ".hypothesis"})
#: what a version's cache holds per file: its path -> [size, mtime_ns, ctime_ns, inode, sha256]
Cache = MutableMapping[str, list]


def of(bot: BotSpec, hide: Iterable[Path] = (), cache: Cache | None = None) -> dict[str, Any] | None:
    """``{"command": [...], "cwd": ..., "files": {path: sha256}}`` (absolute paths, sorted); None for
    an external bot. ``hide``: paths left out (what the sandbox hides from the bot)."""
    if bot.external:
        return None
    cwd = Path(bot.cwd or ".").resolve()
    hidden = {Path(p).resolve() for p in hide}
    paths = dict.fromkeys(own_files(cwd, bot.files, hidden))
    paths.update(dict.fromkeys(command_files(cwd, bot.command)))
    files = {str(p): _digest(p, cache) for p in sorted(paths)}
    return {"command": list(bot.command), "cwd": bot.cwd, "files": files}


def short_id(version: dict[str, Any] | None) -> str | None:
    """A short name of a version (12 hex digits of the SHA-256 of its content); None for none."""
    if version is None:
        return None
    return hashlib.sha256(json.dumps(version, sort_keys=True).encode()).hexdigest()[:12]


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two versions of a bot, in words (at most three files named)."""
    out = []
    if old.get("command") != new.get("command"):
        out.append("its command")
    if old.get("cwd") != new.get("cwd"):
        out.append("its working directory")
    before, after = old.get("files", {}), new.get("files", {})
    changed = [path for path in sorted(set(before) | set(after)) if before.get(path) != after.get(path)]
    if len(changed) == 1:
        out.append(f"the file {changed[0]}")
    elif changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        out.append(f"the files {', '.join(changed[:3])}{more}")
    return out


def matches(cwd: Path, pattern: str) -> bool:
    """Whether a ``files`` entry (a path or a glob pattern, relative to ``cwd``) names anything."""
    return next(_declared(cwd, pattern), None) is not None


def own_files(cwd: Path, declared: Iterable[str] = (), hidden: Iterable[Path] = ()) -> Iterator[Path]:
    """The files of a bot's own: under ``cwd``, or those ``declared``, without what is left out
    (see the module's docstring)."""
    hidden = set(hidden)
    interpreter = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}

    def left_out(path: Path) -> bool:
        return path in hidden or path in interpreter

    for root in _roots(cwd, declared, hidden | interpreter):
        if root.is_dir() and not root.is_symlink():
            yield from _walk(root, left_out)
        else:
            yield root


def masked(path: Path) -> bool:
    """Whether a directory of a bot's is never part of its files (masked in its sandbox, left out
    of its version): one named in :data:`MASKED`, or one holding a results store."""
    return path.name in MASKED or (path / _STORE).exists()


def command_files(cwd: Path, command: Sequence[str]) -> list[Path]:
    """The files a bot's command names (``cwd`` resolved): a word that is a file relative to
    ``cwd`` or absolute, the module of ``-m MODULE``."""
    found = []
    for i, word in enumerate(command):
        if word.startswith("-"):
            continue
        module = i > 0 and command[i - 1] == "-m"
        path = _module_file(cwd, word) if module else _file(cwd, word)
        if path is not None:
            found.append(path)
    return found


@dataclass(frozen=True)
class View:
    """What a bot's sandbox shows of its own directory: ``shown``, the paths under it that are
    bound (None: all of it), and ``masked``, the directories masked inside what is shown."""

    shown: tuple[Path, ...] | None
    masked: tuple[Path, ...]


def view(cwd: Path, declared: Sequence[str] = (), command: Sequence[str] = (), hidden: Iterable[Path] = ()) -> View:
    """What the sandbox of a bot in ``cwd`` shows of it: with ``declared`` files, those and the
    files its ``command`` names, else all of ``cwd``; masked inside, every directory
    :func:`masked` finds. ``hidden``: what the sandbox masks or shows anyway (the run's hidden
    paths, other bots', the runtime): not looked into. Found anew at each start, in the bot's
    directory as it is then."""
    from referee.tournament import paths

    cwd = cwd.resolve()
    hidden = {Path(p).resolve() for p in hidden} | set(paths.runtime())
    if declared:
        roots = [*_roots(cwd, declared, hidden), *(p for p in command_files(cwd, command) if paths.inside(p, cwd))]
        # shown at their own place: not through a link of the bot's directory (it would lead out)
        shown = tuple(dict.fromkeys(p for p in roots if p.parent.resolve() == p.parent))
    else:
        shown, roots = None, [cwd]
    found: list[Path] = []
    for root in roots:
        if root.is_dir() and not root.is_symlink():
            for _ in _walk(root, lambda p: p in hidden, found):
                pass
    return View(shown, tuple(found))


def _roots(cwd: Path, declared: Iterable[str], hidden: set[Path]) -> list[Path]:
    """The paths a bot's own files are found under: ``cwd``, or each ``declared`` match that is
    not, and does not lie in, what is left out (hidden, or a masked directory)."""
    if not declared:
        return [cwd]
    roots = []
    for root in (p for pattern in declared for p in _declared(cwd, pattern)):
        if any(root == h or h in root.parents for h in hidden):
            continue
        parts = root.relative_to(cwd).parts if cwd in root.parents else ()
        between = [cwd.joinpath(*parts[:n]) for n in range(1, len(parts))]  # the directories down to it
        if root.is_dir() and not root.is_symlink() and masked(root) or any(masked(d) for d in between):
            continue
        roots.append(root)
    return roots


def _declared(cwd: Path, pattern: str) -> Iterator[Path]:
    if glob.has_magic(pattern):
        for found in sorted(glob.glob(pattern, root_dir=cwd, recursive=True)):
            yield Path(os.path.normpath(cwd / found))
    elif (cwd / pattern).exists():
        yield Path(os.path.normpath(cwd / pattern))


def _walk(root: Path, left_out: Callable[[Path], bool], found: list[Path] | None = None) -> Iterator[Path]:
    """The files under ``root`` (a link to a directory as a file: not followed), without what is
    ``left_out`` and the masked directories (each added to ``found``)."""
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        kept = []
        for name in sorted(dirs):
            path = here / name
            if path.is_symlink():
                yield path  # recorded as a link, not followed
            elif left_out(path):
                continue
            elif masked(path):
                if found is not None:
                    found.append(path)
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            if not left_out(here / name):
                yield here / name


def _file(cwd: Path, word: str) -> Path | None:
    try:
        path = cwd / word  # an absolute word stays itself
        return path.absolute() if path.is_file() else None
    except (OSError, ValueError):  # a word too long or with a NUL for a path: not a file
        return None


def _module_file(cwd: Path, module: str) -> Path | None:
    base = cwd.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__main__.py", base / "__init__.py"):
        found = _file(cwd, str(path))
        if found is not None:
            return found
    return None


def _digest(path: Path, cache: Cache | None) -> str:
    """The file's SHA-256 (a link to a directory: where it points), from the cache when its size,
    times and inode are those cached."""
    try:
        if path.is_symlink() and path.is_dir():
            return f"link to {os.readlink(path)}"
        st = path.stat()
        stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        key = str(path)
        if cache is not None and (hit := cache.get(key)) is not None and hit[:4] == stamp:
            return hit[4]
        h = hashlib.sha256()
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as err:
        return f"unreadable: {err.strerror or err}"
    if cache is not None and time.time() - max(st.st_mtime, st.st_ctime) > RACY_S:
        cache[key] = [*stamp, h.hexdigest()]
    return h.hexdigest()
