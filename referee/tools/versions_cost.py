"""What a bot's version costs on a large bot directory: every file of it is hashed
(:mod:`referee.tournament.versions`), once, then only what changed (a cache by size, times and
inode, as the results directory keeps it).

    python -m referee.tools.versions_cost                  # a 200 MB directory of 2,000 files, made here
    python -m referee.tools.versions_cost --mb 500 --files 50
    python -m referee.tools.versions_cost --dir PATH       # a directory of yours (read, never written)

Prints the size, then the seconds of: the first version (every file read), the next one (the
cache: nothing read), and one after a file changed (that file read again); and the load average.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from referee.tournament import versions
from referee.tournament.config import BotSpec


def make_directory(folder: Path, mb: int, files: int) -> None:
    """``files`` files of random bytes, ``mb`` megabytes in all, in a few subdirectories."""
    size = mb * 1024 * 1024 // files
    for i in range(files):
        path = folder / f"part{i % 20:02d}" / f"file{i:05d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(os.urandom(size))


def timed(bot: BotSpec, cache: dict) -> tuple[float, dict]:
    started = time.perf_counter()
    version = versions.of(bot, cache=cache)
    return time.perf_counter() - started, version


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="the size of the directory made (default 200)")
    parser.add_argument("--files", type=int, default=2000, help="how many files it holds (default 2000)")
    parser.add_argument("--dir", type=Path, default=None, help="measure this directory instead (not written)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="referee-versions-") as scratch:
        folder = args.dir or Path(scratch)
        if args.dir is None:
            make_directory(folder, args.mb, args.files)
            time.sleep(versions.RACY_S + 0.5)  # older than the racy window: cacheable, as a bot's files are
        bot = BotSpec("bot", ("python", "bot.py"), str(folder))
        cache: dict = {}
        first, version = timed(bot, cache)
        total = sum(os.path.getsize(p) for p in version["files"] if os.path.isfile(p))
        print(f"bot directory: {folder}: {len(version['files'])} files, {total / 1e6:.0f} MB")
        print(f"first version (every file read):     {first:.2f} s ({total / 1e6 / first:.0f} MB/s)")
        again, same = timed(bot, cache)
        print(f"next version (the cache, none read): {again:.3f} s{'' if same == version else ' (CHANGED?)'}")
        if args.dir is None:
            changed = Path(next(iter(version["files"])))
            changed.write_bytes(os.urandom(changed.stat().st_size))
            after, new = timed(bot, cache)
            print(f"after one file changed (it is read): {after:.3f} s; "
                  f"{'; '.join(versions.changes(version, new))}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
