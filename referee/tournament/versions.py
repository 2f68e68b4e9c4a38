"""A launched bot's version, as far as the runner can see it: its command, its working
directory and every file of its own.

Its files are every file under its working directory (``cwd``), or, when its ``[[bots]]``
table declares ``files`` (paths, directories and glob patterns relative to ``cwd``), those;
and the files its command names (a word that is a file relative to ``cwd`` or absolute: a
script, a binary, a jar; the module of ``-m MODULE``). Each is hashed (SHA-256, whole), so a
changed module that the entry point imports is a new version, as a changed entry point is.

Left out of a directory: directories whose name starts with a dot (``.git``, ``.venv``,
caches), ``__pycache__``, the interpreter's own installation (a virtual environment inside
``cwd``), a directory holding a results store (another run's output) and what the run hides
from its bots (``hide``: the output directory, the tournament file, other bots' directories).
What the runner cannot see is not compared either: an interpreter upgrade, files outside its
directory that it reads at run time, its ``env``. An external bot has no version here.

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
from collections.abc import Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

from referee.tournament.config import BotSpec

#: a file changed this recently (seconds) when it was hashed is hashed again next time
RACY_S = 2.0
#: a results store: a directory holding one is another run's output, never part of a bot
_STORE = "results.sqlite"
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
    for i, word in enumerate(bot.command):
        if word.startswith("-"):
            continue
        module = i > 0 and bot.command[i - 1] == "-m"
        path = _module_file(cwd, word) if module else _file(cwd, word)
        if path is not None:
            paths[path] = None
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
    roots = [p for pattern in declared for p in _declared(cwd, pattern)] if declared else [cwd]
    interpreter = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}

    def left_out(path: Path) -> bool:
        return path in hidden or path in interpreter

    for root in roots:
        if root.is_dir() and not root.is_symlink():
            yield from _walk(root, left_out, interpreter)
        elif not left_out(root):
            yield root


def _declared(cwd: Path, pattern: str) -> Iterator[Path]:
    if glob.has_magic(pattern):
        for found in sorted(glob.glob(pattern, root_dir=cwd, recursive=True)):
            yield (cwd / found).absolute()
    elif (cwd / pattern).exists():
        yield (cwd / pattern).absolute()


def _walk(root: Path, left_out, interpreter: set[Path]) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        kept = []
        for name in sorted(dirs):
            path = here / name
            if path.is_symlink():
                yield path  # recorded as a link, not followed
            elif not (name.startswith(".") or name == "__pycache__" or left_out(path)
                      or (path / _STORE).exists()):
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
