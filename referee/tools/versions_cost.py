"""What a bot's version costs on a large bot directory: every file of it is hashed
(:mod:`referee.hosting.versions`), once, then only what changed (a cache by size, times and
inode, as the results directory keeps it); and, in a run whose bots are sandboxed, what its
snapshot costs: the private copy of its files, written as they are hashed, that its sandbox shows.

    python -m referee.tools.versions_cost                  # a 200 MB directory of 2,000 files, made here
    python -m referee.tools.versions_cost --mb 500 --files 50
    python -m referee.tools.versions_cost --dir PATH       # a directory of yours (read, never written)

Prints the size, then the seconds of: the first version (every file read), the next one (the
cache: nothing read), one after a file changed (that file read again); a run's start with its
snapshot, first (every file read, hashed and copied) and when it resumes (the cache: copied, not
hashed), the room the copy takes and its removal; what building one process's sandbox costs
(finding what to mask in the directory, or binding the copy); and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from referee.hosting import sandbox, versions
from referee.model import BotSpec

T = TypeVar("T")


def make_directory(folder: Path, mb: int, files: int) -> None:
    """``files`` files of random bytes, ``mb`` megabytes in all, in a few subdirectories."""
    size = mb * 1024 * 1024 // files
    for i in range(files):
        path = folder / f"part{i % 20:02d}" / f"file{i:05d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(os.urandom(size))


def timed(work: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def disk_mb(folder: Path) -> float:
    """What the files under ``folder`` take on the disk (their blocks), in MB."""
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*")) / 1e6


def hashing(bot: BotSpec, edit: bool) -> dict[str, Any]:
    """The version alone: first, from the cache, after one file changed (``edit``)."""
    cache: versions.Cache = {}
    first, version = timed(lambda: versions.of(bot, cache=cache))
    assert version is not None  # None only for an external bot: this one has a command
    total = sum(os.path.getsize(p) for p in version["files"] if os.path.isfile(p))
    print(f"bot directory: {bot.cwd}: {len(version['files'])} files, {total / 1e6:.0f} MB")
    print(f"first version (every file read):     {first:.2f} s ({total / 1e6 / first:.0f} MB/s)")
    again, same = timed(lambda: versions.of(bot, cache=cache))
    print(f"next version (the cache, none read): {again:.3f} s{'' if same == version else ' (CHANGED?)'}")
    if edit:
        changed = Path(next(iter(version["files"])))
        changed.write_bytes(os.urandom(changed.stat().st_size))
        after, new = timed(lambda: versions.of(bot, cache=cache))
        assert new is not None  # as above
        print(f"after one file changed (it is read): {after:.3f} s; {'; '.join(versions.changes(version, new))}")
        version = new
    return version


def snapshots(bot: BotSpec, scratch: Path) -> versions.Snapshot:
    """A run's start with its snapshot, and a resume's (the results directory's cache kept)."""
    cache: versions.Cache = {}
    root = scratch / "out" / versions.SNAPSHOTS
    first, _ = timed(lambda: versions.Snapshots(root).take(bot, cache=cache))
    room = disk_mb(root)
    print(f"run start with its snapshot (read, hashed, copied): {first:.2f} s; the copy takes {room:.0f} MB")
    time.sleep(versions.RACY_S + 0.5)  # the copy's files: old enough for the cache, as a resumed run's are
    taken = versions.Snapshots(root)
    again, _ = timed(lambda: taken.take(bot, cache=cache))
    print(f"resumed run's snapshot (the cache: copied, not hashed): {again:.2f} s")
    return taken.trees[bot.name]


def starts(bot: BotSpec, snapshot: versions.Snapshot) -> None:
    """Building one process's sandbox (bubblewrap's command): the directory, or the copy."""
    cwd = bot.cwd
    assert cwd is not None  # main gives the bot its directory

    def command(copy: versions.Snapshot | None) -> list[str]:
        return sandbox.bwrap_command(["python", "bot.py"], cwd=Path(cwd), socket_dir=None, snapshot=copy)

    for label, copy in (("its directory (masks found)", None), ("its snapshot (one bind)", snapshot)):
        seconds = statistics.median(timed(lambda: command(copy))[0] for _ in range(20))  # noqa: B023 (called in this iteration)
        print(f"a process's sandbox, showing {label}: {seconds * 1000:.1f} ms (median of 20)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="the size of the directory made (default 200)")
    parser.add_argument("--files", type=int, default=2000, help="how many files it holds (default 2000)")
    parser.add_argument("--dir", type=Path, default=None, help="measure this directory instead (not written)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="referee-versions-") as scratch:
        folder = (args.dir or Path(scratch) / "bot").resolve()
        if args.dir is None:
            folder.mkdir()
            make_directory(folder, args.mb, args.files)
            time.sleep(versions.RACY_S + 0.5)  # older than the racy window: cacheable, as a bot's files are
        bot = BotSpec("bot", ("python", "bot.py"), str(folder))
        hashing(bot, edit=args.dir is None)
        snapshot = snapshots(bot, Path(scratch))
        starts(bot, snapshot)
        removal, _ = timed(lambda: versions.Snapshots(snapshot.tree.parent))  # a new run removes what was left
        print(f"removing the copy (at the run's end): {removal:.2f} s")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
