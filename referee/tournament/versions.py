"""A launched bot's version, as far as the runner can see it: its command, its working
directory and the files its command names.

A word of the command that names a file (relative to the bot's working directory, or
absolute: a script, a binary, a jar) and the module of ``-m MODULE`` found under the
working directory (``MODULE.py``, or its package's ``__main__.py`` or ``__init__.py``) are hashed (SHA-256),
so that a new version of a script is seen although its command line is the same. What
the runner cannot see is not compared: the modules a script imports, an interpreter
upgrade, files it reads at run time. An external bot has no version here (it starts by
itself).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from referee.tournament.config import BotSpec

#: the largest file hashed whole; past it, its size and first and last megabyte
_WHOLE = 64 * 1024 * 1024


def of(bot: BotSpec) -> dict[str, Any] | None:
    """``{"command": [...], "cwd": ..., "files": {word: sha256}}``; None for an external bot."""
    if bot.external:
        return None
    cwd = Path(bot.cwd or ".")
    files = {}
    for i, word in enumerate(bot.command):
        if word.startswith("-"):
            continue
        module = i > 0 and bot.command[i - 1] == "-m"
        path = _module_file(cwd, word) if module else _file(cwd, word)
        if path is not None:
            files[word] = _digest(path)
    return {"command": list(bot.command), "cwd": bot.cwd, "files": files}


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two versions of a bot, in words."""
    out = []
    if old.get("command") != new.get("command"):
        out.append("its command")
    if old.get("cwd") != new.get("cwd"):
        out.append("its working directory")
    before, after = old.get("files", {}), new.get("files", {})
    out += [f"the file {word}" for word in sorted(set(before) | set(after)) if before.get(word) != after.get(word)]
    return out


def _file(cwd: Path, word: str) -> Path | None:
    try:
        path = cwd / word  # an absolute word stays itself
        return path if path.is_file() else None
    except (OSError, ValueError):  # a word too long or with a NUL for a path: not a file
        return None


def _module_file(cwd: Path, module: str) -> Path | None:
    base = cwd.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__main__.py", base / "__init__.py"):
        found = _file(cwd, str(path))
        if found is not None:
            return found
    return None


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            if size <= _WHOLE:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            else:
                h.update(str(size).encode() + f.read(1 << 20))
                f.seek(-(1 << 20), 2)
                h.update(f.read())
    except OSError as err:
        return f"unreadable: {err.strerror or err}"
    return h.hexdigest()
