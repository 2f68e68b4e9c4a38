"""Writing results out: a file is replaced whole or not at all, and a write the disk refuses is
one error, :class:`WriteFailed` (exit code 6, ``referee/cli/exits.py``).

A full disk, a quota, a file past its size limit or an I/O error while results are written
(the store, the bots' logs, ``export``, ``view``) ends the command in one line; what was written
before stays intact (the store's matches are each one transaction; a file is written beside
its name and renamed over it), so the same command, once there is room, goes on from there. A
path that cannot be used at all (a missing directory, no permission) stays a usage error.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

#: the errors of a write that found no room or a failing device: WriteFailed (exit 6)
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class CannotWrite(ValueError):
    """A path that cannot be written at all: a missing directory, no permission (exit 2)."""


class WriteFailed(Exception):
    """Results that could not be written: the disk is full (or over quota), or failed."""

    @classmethod
    def of(cls, error: OSError, path: str | os.PathLike[str]) -> WriteFailed:
        """``cannot write PATH: No space left on device``."""
        return cls(f"cannot write {os.fspath(path)}: {error.strerror or error}")


def no_room(error: OSError) -> bool:
    """Whether a failed write found no room or a failing device (not a bad path)."""
    return error.errno in NO_ROOM


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all: into a file beside it, renamed over it
    once complete. Raises :class:`WriteFailed` when the disk refuses it, :class:`CannotWrite` for a
    path that cannot be written at all; either way no partial file is left and an old one is intact."""
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with open(partial, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, target)
    except OSError as err:
        try:
            partial.unlink()
        except OSError:
            pass
        if no_room(err):
            raise WriteFailed.of(err, target) from None
        raise CannotWrite(f"cannot write {target}: {err.strerror or err}") from None


def make_directory(path: str | os.PathLike[str]) -> Path:
    """``path`` as a directory, made with its parents if need be: :class:`WriteFailed` when the
    disk refuses it, :class:`CannotWrite` when it cannot be made (a file in the way, no permission)."""
    target = Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        if no_room(err):
            raise WriteFailed.of(err, target) from None
        raise CannotWrite(f"cannot create the directory {target}: {err.strerror or err}") from None
    return target
