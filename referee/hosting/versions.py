"""A launched bot's version, as far as the runner can see it: its command, its working
directory and every file of its own; what its sandbox shows of those (:func:`view`); and a
private copy of them, taken as they are hashed, that its sandbox shows instead (:class:`Snapshots`).

**A version is the bot, not its surroundings.** Its files are every file under its working
directory (``cwd``), or, when its ``[[bots]]`` table declares ``files`` (paths, directories and
glob patterns relative to ``cwd``), those; less what its ``exclude`` names (the same kind of
patterns: build products, caches); and the files its command names (a word that is a file
relative to ``cwd`` or absolute: a script, a binary, a jar; the module of ``-m MODULE``; a
link's target too), excluded or not. Each is hashed (SHA-256, whole), so a changed module that
the entry point imports is a new version, as a changed entry point is. A pattern never follows
a link to a directory.

Left out of both, masked in the sandbox (:data:`MASKED`, :func:`masked`): ``__pycache__``
(a compiled file of the *unchecked-hash* kind runs whatever its source says, PEP 552; the
bot's files are read-only, so Python compiles from the source it is given), version control's
directories (``.git``, ``.hg``, ``.svn``: history is code outside the working tree), tools'
caches, and any directory holding a results store (another run's output: its results and
seeds). Every other dot-directory is part of the version. Left out of the version and not the
bot's to see as its own: the interpreter's installation (a virtual environment inside ``cwd``,
part of the runtime every bot shares; but the ``files`` a bot declares count when its ``cwd`` lies in
it, as the sample bots' in a normal install's site-packages), the home directories, and what the
run hides from its bots (``hide``: **the run's own outputs**, :func:`referee.hosting.paths.written`:
the output directory, a ``--markdown`` file, the files its standard output and error go to; the tournament file;
other bots' directories and data (:func:`apart`): masked). What the runner cannot see is not
compared either: an interpreter upgrade, its data (``data = [...]``, the organiser's), files
outside its directory that it reads at run time, its ``env``. An external bot has no version here.

**A version is regular files, read once.** A link is not followed: it is recorded by the digest
of the file it leads to when that is one of the bot's files (hashed as itself), else by its
target (``link to TARGET``); it must lead, resolved, into the bot's directory, its data or the
runtime; a device, a named pipe, a socket or a link leading elsewhere refuses the bot
(:class:`VersionRefused`, one line naming the file: reading ``/dev/zero`` or a FIFO as root would
stall the run). So do more than :data:`MAX_FILES` files, :data:`MAX_MB` megabytes, or
:data:`MAX_SECONDS` spent reading them. Each regular file is opened once (not following a link,
not blocking), and what is hashed is what is copied into the bot's snapshot.

Reading every file each run would cost a 200 MB bot a few seconds (``python -m
referee.tools.versions_cost`` measures it): a ``cache`` (kept in the results directory) maps
a file's path to its size, modification and change times, inode and digest, and a file whose
five are the same is not hashed again (it is still copied into a snapshot). The change time is
the kernel's (no tool can set it back), and a file changed less than :data:`RACY_S` before it
was hashed is not cached, since a second change in the same clock tick could leave its times
unchanged.
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import itertools
import json
import os
import shutil
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from referee.hosting import paths
from referee.model import BotSpec, ConfigError
from referee.untrusted import escaped

#: a file changed this recently (seconds) when it was hashed is hashed again next time
RACY_S = 2.0
#: a results store: a directory holding one is another run's output, never part of a bot
_STORE = "results.sqlite"
#: directories that are never part of a bot's files, wherever they lie in them: masked in its
#: sandbox, left out of its version (Python's compiled files, version control, tools' caches)
MASKED = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                    ".hypothesis"})
#: the most a version reads: files, megabytes (their sizes added up), seconds; past one the bot
#: is refused (its large files belong in its ``data``, which is the organiser's and not hashed)
MAX_FILES = 100_000
MAX_MB = 2048
MAX_SECONDS = 120.0
#: in a results directory: the private copies of the launched bots' files while a run plays
SNAPSHOTS = "snapshots"
#: what a version's cache holds per file: its path -> [size, mtime_ns, ctime_ns, inode, sha256]
Cache = MutableMapping[str, list[Any]]

_CHUNK = 1 << 20
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # never a link's target, never a FIFO's wait
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class VersionRefused(ConfigError):
    """A bot whose files cannot make a version: a device, a named pipe, a socket or a link that
    leads out of its directory among them, or more files, bytes or time than the caps allow."""


def of(bot: BotSpec, hide: Iterable[Path] = (), cache: Cache | None = None) -> dict[str, Any] | None:
    """``{"command": [...], "cwd": ..., "files": {path: sha256}}`` (absolute paths, sorted); None for
    an external bot. ``hide``: paths left out (what the sandbox hides from the bot).
    :class:`VersionRefused` for files that are not regular ones (see the module's docstring)."""
    return _take(bot, hide, cache, None)[0]


def short_id(version: dict[str, Any] | None) -> str | None:
    """A short name of a version (12 hex digits of the SHA-256 of its content); None for none."""
    if version is None:
        return None
    return hashlib.sha256(json.dumps(version, sort_keys=True).encode()).hexdigest()[:12]


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two versions of a bot, in words (at most three files named, escaped:
    their names are the entrant's)."""
    out = []
    if old.get("command") != new.get("command"):
        out.append("its command")
    if old.get("cwd") != new.get("cwd"):
        out.append("its working directory")
    before, after = old.get("files", {}), new.get("files", {})
    changed = [_shown(path) for path in sorted(set(before) | set(after)) if before.get(path) != after.get(path)]
    if len(changed) == 1:
        out.append(f"the file {changed[0]}")
    elif changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        out.append(f"the files {', '.join(changed[:3])}{more}")
    return out


def canonical(value: Any) -> str:
    """``value`` as JSON in one spelling (keys sorted, no spaces, not escaped to ASCII): what a hash
    is taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(version: Mapping[str, Any]) -> str:
    """The content hash of a bot's version as the runner records it (``{"command": [...], "cwd": ...,
    "files": {path: sha256}}``, :func:`of`): the SHA-256 of its command and
    of its files' digests by path relative to its directory, so that the same bot hashes the same on
    another machine or in another directory."""
    cwd = version.get("cwd") or "."
    base = os.path.abspath(cwd) if not os.path.isabs(cwd) else cwd
    relative = {}
    for path, digest in version.get("files", {}).items():
        rel = os.path.relpath(path, base)
        out = rel == os.pardir or rel.startswith(os.pardir + os.sep)  # not a file named "..data"
        relative[path if out else rel] = digest
    content = {"command": list(version.get("command", [])), "files": relative}
    return hashlib.sha256(canonical(content).encode()).hexdigest()


def apart(bot: BotSpec, bots: Iterable[BotSpec]) -> set[Path]:
    """What ``bot`` must not see or count as its own of the others in ``bots``: their directories
    and data (:func:`referee.hosting.paths.others`), as its sandbox masks them."""
    cwd = Path(bot.cwd or os.getcwd())
    return paths.others((cwd, [Path(p) for p in bot.data]),
                        [(Path(b.cwd) if b.cwd else None, [Path(p) for p in b.data])
                         for b in bots if b.name != bot.name])


def matches(cwd: Path, pattern: str) -> bool:
    """Whether a ``files`` entry (a path or a glob pattern, relative to ``cwd``) names anything."""
    return next(_declared(cwd, pattern), None) is not None


def own_files(cwd: Path, declared: Iterable[str] = (), hidden: Iterable[Path] = (),
              excluded: Iterable[Path] = ()) -> Iterator[Path]:
    """The files of a bot's own: under ``cwd``, or those ``declared``, without what is left out
    (see the module's docstring) and what is ``excluded`` (paths, resolved)."""
    hidden, excluded = set(hidden), set(excluded)
    # the interpreter's installation is the runtime, not the bot's; but a bot whose directory lies in it
    # (the sample bots of a normal install, in site-packages) has its own files there
    interpreter = {p for p in (Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve())
                   if not paths.inside(cwd.resolve(), p)}

    def left_out(path: Path) -> bool:
        return path in hidden or path in interpreter or path in excluded

    for root in _roots(cwd, declared, hidden | interpreter, excluded):
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
    ``cwd`` or absolute, the module of ``-m MODULE``; of one that is a link, where it leads too."""
    found = []
    for i, word in enumerate(command):
        if word.startswith("-"):
            continue
        module = i > 0 and command[i - 1] == "-m"
        path = _module_file(cwd, word) if module else _file(cwd, word)
        if path is not None:
            found.append(path)
            if path.is_symlink() and paths.inside(path.resolve(), cwd):
                found.append(path.resolve())
    return found


@dataclass(frozen=True)
class View:
    """What a bot's sandbox shows of its own directory: ``shown``, the paths under it that are
    bound (None: all of it), and ``masked``, the directories masked inside what is shown."""

    shown: tuple[Path, ...] | None
    masked: tuple[Path, ...]


def view(cwd: Path, declared: Sequence[str] = (), command: Sequence[str] = (), hidden: Iterable[Path] = (),
         exclude: Sequence[str] = ()) -> View:
    """What the sandbox of a bot in ``cwd`` shows of it: with ``declared`` files, those and the
    files its ``command`` names, else all of ``cwd``; masked inside, every directory
    :func:`masked` finds and what its ``exclude`` patterns name. ``hidden``: what the sandbox
    masks or shows anyway (the run's hidden paths, other bots', the runtime): not looked into.
    Found anew at each start, in the bot's directory as it is then (a run that keeps versions
    shows a :class:`Snapshot` instead)."""
    cwd = cwd.resolve()
    hidden = {Path(p).resolve() for p in hidden} | set(paths.runtime())
    named = [p for p in command_files(cwd, command) if paths.inside(p, cwd)]
    excluded = _around(_excluded(cwd, exclude), named)  # what its command names is shown, excluded or not
    if declared:
        roots = [*_roots(cwd, declared, hidden, excluded), *named]
        # shown at their own place: not through a link of the bot's directory (it would lead out)
        shown = tuple(dict.fromkeys(p for p in roots if p.parent.resolve() == p.parent))
    else:
        shown, roots = None, [cwd]
    found: list[Path] = []
    for root in roots:
        if root.is_dir() and not root.is_symlink():
            for _ in _walk(root, lambda p: p in hidden, found, excluded):
                pass
    return View(shown, tuple(found))


# --- snapshots: what a bot runs is what was hashed --------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """A private, read-only copy of one bot's files, written as they were hashed: ``tree``
    mirrors the machine's paths (the copy of ``/x/bot.py`` is ``tree/x/bot.py``). It holds the
    version's files under ``cwd`` and ``named``, those outside it (its command's, in its data),
    but not what lies in the runtime or its data: those are bound as themselves."""

    tree: Path
    cwd: Path
    named: tuple[Path, ...] = ()

    def copy_of(self, path: Path) -> Path:
        return self.tree / path.relative_to("/")

    def mounts(self, within: Iterable[Path]) -> dict[Path, list[str]]:
        """The bubblewrap binds that show the copy in place of the bot's files: its directory, and
        each named file outside it. ``within``: what else the sandbox mounts inside the directory
        (the runtime, its data): room is made for it in the copy (an empty directory or file,
        never through a link), since a read-only copy cannot take a mount point later."""
        writer = _Tree(self.tree)
        try:
            for path in within:
                writer.room(path.relative_to("/"), path.is_dir())
        finally:
            writer.close()
        binds = {self.cwd: ["--ro-bind", str(self.copy_of(self.cwd)), str(self.cwd)]}
        binds.update({p: ["--ro-bind", str(self.copy_of(p)), str(p)] for p in self.named})
        return binds


class Snapshots:
    """The snapshots of a run's launched bots, one directory each under ``root`` (a stale one,
    left by a run that was killed, is removed first). The sandbox shows a bot its snapshot in
    place of its directory, so a change to its files during the run (an upload folder, a synced
    checkout the entrant still writes) reaches no process of it: each plays what was hashed."""

    def __init__(self, root: Path):
        self.root = root
        shutil.rmtree(root, ignore_errors=True)
        self.trees: dict[str, Snapshot] = {}

    def take(self, bot: BotSpec, hide: Iterable[Path] = (), cache: Cache | None = None) -> dict[str, Any] | None:
        """The bot's version (as :func:`of`), its files copied as they are read."""
        tree = self.root / bot.name
        shutil.rmtree(tree, ignore_errors=True)
        version, snapshot = _take(bot, hide, cache, tree)
        if snapshot is not None:
            self.trees[bot.name] = snapshot
        return version

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        self.trees.clear()


# --- reading a bot's files --------------------------------------------------------------------


@dataclass
class _Budget:
    """What reading one bot's files may take (:data:`MAX_FILES`, :data:`MAX_MB`, :data:`MAX_SECONDS`)."""

    bot: str
    cwd: Path
    files: int = 0
    listed: int = 0  # bytes, by the files' sizes
    read: int = 0    # bytes read
    deadline: float = field(default_factory=lambda: time.monotonic() + MAX_SECONDS)

    def found(self, size: int) -> None:
        self.files += 1
        self.listed += size
        if self.files > MAX_FILES:
            self._refuse(f"it has more than {MAX_FILES:,} files")
        self._check(self.listed)

    def reading(self, size: int) -> None:
        self.read += size
        self._check(self.read)

    def _check(self, size: int) -> None:
        if size > MAX_MB << 20:
            self._refuse(f"its files hold more than {MAX_MB:,} MB")
        if time.monotonic() > self.deadline:
            self._refuse(f"reading its files took more than {MAX_SECONDS:g} s "
                         f"({self.files:,} file(s), {self.read / 1e6:,.0f} MB read)")

    def _refuse(self, why: str) -> None:
        raise VersionRefused(f"bot {self.bot}: {why} under {_shown(self.cwd)}, more than a version reads "
                             f"({MAX_FILES:,} files, {MAX_MB:,} MB, {MAX_SECONDS:g} s): declare what it runs "
                             f"in files = [...], leave build products out with exclude = [...], or give "
                             f"large files such as weights as its data = [...] (docs/tournaments.md)")


def _take(bot: BotSpec, hide: Iterable[Path], cache: Cache | None,
          tree: Path | None) -> tuple[dict[str, Any] | None, Snapshot | None]:
    """The bot's version and, with ``tree``, its snapshot there: every file read once."""
    if bot.external:
        return None, None
    cwd = Path(bot.cwd or ".").resolve()
    hidden = {Path(p).resolve() for p in hide} | paths.homes()
    data = [Path(p).resolve() for p in bot.data]
    budget = _Budget(bot.name, cwd)
    # what its command names, at its own place (not through a link), but for what the run hides
    # (``--look t.toml`` names the tournament file, ``--read out-link/results.sqlite`` a store)
    commanded = [p for p in command_files(cwd, bot.command)
                 if p.parent.resolve() == p.parent and not _under(str(p), [str(h) for h in hidden])]
    found: dict[Path, os.stat_result] = {}
    for path in itertools.chain(own_files(cwd, bot.files, hidden, _excluded(cwd, bot.exclude)), commanded):
        if path not in found:  # counted as it is found: a directory of a million files is refused early
            found[path] = _regular_or_link(path, bot.name, [cwd, *data, *paths.runtime()], budget)
    writer = _Tree(tree) if tree is not None else None
    files: dict[str, str] = {}
    named: list[Path] = []
    links: list[tuple[PurePath, str]] = []
    runtime, asked = [str(r) for r in paths.runtime()], set(commanded)
    try:
        for path in sorted(found):
            copy = None
            # the runtime and its data are shown as themselves (the organiser's), but for what its command names
            if writer is not None and not _under(str(path), runtime) \
                    and (path in asked or not _under(str(path), [str(d) for d in data])):
                copy = path.relative_to("/")
                named += [] if _under(str(path), [str(cwd)]) else [path]
            if stat.S_ISLNK(found[path].st_mode):
                target = os.readlink(path)
                files[str(path)] = f"link to {target}"
                if copy is not None:
                    links.append((copy, target))  # made last: nothing is written through a link
            else:
                files[str(path)] = _digest(path, found[path], bot.name, cache, budget, writer, copy)
        for path in (p for p in found if stat.S_ISLNK(found[p].st_mode)):
            real = Path(os.path.realpath(path))  # a link to one of its files: that file's digest, not read again
            if real in found and stat.S_ISREG(found[real].st_mode):
                files[str(path)] = files[str(real)]
        if writer is not None:
            for where, target in links:
                writer.link(where, target)
            writer.room(cwd.relative_to("/"), True)
    finally:
        if writer is not None:
            writer.close()
    version = {"command": list(bot.command), "cwd": bot.cwd, "files": files}
    return version, Snapshot(tree, cwd, tuple(named)) if tree is not None else None


def _under(path: str, folders: Iterable[str]) -> bool:
    """:func:`referee.hosting.paths.inside` for absolute paths as strings (per file: quicker)."""
    return any(path == f or path.startswith(f if f.endswith("/") else f + "/") for f in folders)


def _regular_or_link(path: Path, bot: str, allowed: Sequence[Path], budget: _Budget) -> os.stat_result:
    """The file's own status (not a link's target's) if it may be part of a version: a regular
    file, or a link that leads into ``allowed`` (the bot's directory, its data, the runtime).
    Anything else refuses the bot, in one line naming it."""
    try:
        st = os.lstat(path)
    except OSError:  # gone since it was listed: hashed as unreadable
        budget.found(0)
        return os.stat_result((stat.S_IFREG, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    budget.found(st.st_size if stat.S_ISREG(st.st_mode) else 0)
    if stat.S_ISREG(st.st_mode):
        return st
    if stat.S_ISLNK(st.st_mode):
        real = Path(os.path.realpath(path))
        if any(paths.inside(real, place) for place in allowed):
            return st
        raise VersionRefused(f"bot {bot}: its file {_shown(path)} is a link to {_shown(os.readlink(path))}, which "
                             f"leads out of its directory {_shown(allowed[0])} (to {_shown(real)}): a bot's files are "
                             f"regular files, and links that stay among them, its data or the runtime")
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
            else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file")
    raise VersionRefused(f"bot {bot}: its file {_shown(path)} is {kind}: a bot's files are regular files, "
                         f"directories and links (remove it from {_shown(allowed[0])}, or leave it out with "
                         f"exclude = [...])")


def _digest(path: Path, listed: os.stat_result, bot: str, cache: Cache | None, budget: _Budget,
            writer: _Tree | None, copy: PurePath | None) -> str:
    """The SHA-256 of a regular file, opened once (not through a link, never waiting on it). With
    ``copy``, the file is copied there in ``writer``'s tree and the copy is what is hashed: the
    version is what the bot will run. A file whose size, times and inode (as ``listed``, or once
    opened and again once copied) are those cached is not hashed again: not even opened, unless
    it is copied."""
    hit = cache.get(str(path)) if cache is not None else None
    if copy is None and hit is not None and hit[:4] == _stamp(listed):
        return str(hit[4])  # the digest this module cached (a str)
    try:
        fd = os.open(path, _READ)
    except OSError as err:
        return f"unreadable: {err.strerror or err}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # it changed since it was listed
            raise VersionRefused(f"bot {bot}: its file {_shown(path)} changed into something that is not a "
                                 f"regular file while it was read")
        stamp = _stamp(st)
        out = writer.file(copy, 0o555 if st.st_mode & 0o111 else 0o444) if writer is not None and copy else None
        if out is None:
            digest = _hashed(fd, budget)
        else:
            try:
                _copied(fd, out, st.st_size, budget)
                unchanged = hit is not None and hit[:4] == stamp == _stamp(os.fstat(fd))
                digest = hit[4] if hit is not None and unchanged else _hashed(out, budget, again=True)
            finally:
                os.close(out)
    except OSError as err:
        return f"unreadable: {err.strerror or err}"
    finally:
        os.close(fd)
    if cache is not None and time.time() - max(st.st_mtime, st.st_ctime) > RACY_S:
        cache[str(path)] = [*stamp, digest]
    return digest


def _stamp(st: os.stat_result) -> list[int]:
    """What the cache compares: size, modification and change times, inode."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _hashed(fd: int, budget: _Budget, again: bool = False) -> str:
    """The SHA-256 of what ``fd`` holds, from its start (``again``: a copy already counted)."""
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, _CHUNK):
        budget.reading(0 if again else len(chunk))
        h.update(chunk)
    return h.hexdigest()


def _copied(fd: int, out: int, size: int, budget: _Budget) -> None:
    """``fd`` copied into ``out``: by the kernel (no pass through this process), else read and
    written; a copy that came out short (a file system whose kernel copy stops early) is made again."""
    copied = 0
    try:
        while moved := os.copy_file_range(fd, out, _CHUNK * 64):
            copied += moved
            budget.reading(moved)
    except OSError:  # no kernel copy between these two (another file system): by hand
        copied = -1
    if copied >= size:
        return
    os.lseek(fd, 0, os.SEEK_SET)
    os.lseek(out, 0, os.SEEK_SET)
    os.ftruncate(out, 0)
    while chunk := os.read(fd, _CHUNK):
        budget.reading(len(chunk))
        view_ = memoryview(chunk)
        while view_:
            view_ = view_[os.write(out, view_):]


class _Tree:
    """A snapshot being written under ``root``: every directory reached by descriptor, never
    through a link, so nothing is written outside it whatever links the bot's files hold."""

    def __init__(self, root: Path):
        root.mkdir(parents=True, exist_ok=True)
        self.top = os.open(root, _DIR)
        self.chain: list[tuple[str, int]] = []  # the directories open below the root, in order

    def _dir(self, parts: Sequence[str]) -> int | None:
        """The directory ``parts`` below the root, made where it is missing; None where a link or
        a file stands in the way."""
        n = 0
        while n < len(self.chain) and n < len(parts) and self.chain[n][0] == parts[n]:
            n += 1
        for _, fd in reversed(self.chain[n:]):
            os.close(fd)
        del self.chain[n:]
        fd = self.chain[-1][1] if self.chain else self.top
        for name in parts[n:]:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                fd = os.open(name, _DIR, dir_fd=fd)
            except OSError:
                return None
            self.chain.append((name, fd))
        return fd

    def file(self, rel: PurePath, mode: int) -> int | None:
        parent = self._dir(rel.parts[:-1])
        if parent is None:
            return None
        try:
            return os.open(rel.name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                           dir_fd=parent)
        except FileExistsError:
            return None

    def link(self, rel: PurePath, target: str) -> None:
        parent = self._dir(rel.parts[:-1])
        if parent is not None:
            try:
                os.symlink(target, rel.name, dir_fd=parent)
            except FileExistsError:  # a directory of the copy stands there (files reached through the link)
                pass

    def room(self, rel: PurePath, is_dir: bool) -> None:
        """An empty directory (or file) at ``rel``, unless something stands there already."""
        if is_dir:
            self._dir(rel.parts)
            return
        out = self.file(rel, 0o444)
        if out is not None:
            os.close(out)

    def close(self) -> None:
        for _, fd in reversed(self.chain):
            os.close(fd)
        self.chain.clear()
        os.close(self.top)


# --- finding a bot's files ----------------------------------------------------------------------


def _roots(cwd: Path, declared: Iterable[str], hidden: set[Path], excluded: Set[Path] = frozenset()) -> list[Path]:
    """The paths a bot's own files are found under: ``cwd``, or each ``declared`` match that is
    not, and does not lie in, what is left out (hidden, excluded, or a masked directory)."""
    if not declared:
        return [cwd]
    roots = []
    for root in (p for pattern in declared for p in _declared(cwd, pattern)):
        if any(root == h or h in root.parents for h in hidden | excluded) or root.parent.resolve() != root.parent:
            continue  # left out, or reached through a link (it would lead out, or into what is masked)
        parts = root.relative_to(cwd).parts if cwd in root.parents else ()
        between = [cwd.joinpath(*parts[:n]) for n in range(1, len(parts))]  # the directories down to it
        if root.is_dir() and not root.is_symlink() and masked(root) or any(masked(d) for d in between):
            continue
        roots.append(root)
    return roots


def _excluded(cwd: Path, patterns: Iterable[str]) -> set[Path]:
    """What ``exclude`` patterns name under ``cwd`` (nothing is fine: a build not made yet)."""
    return {p for pattern in patterns for p in _declared(cwd, pattern)}


def _around(excluded: set[Path], keep: Sequence[Path]) -> set[Path]:
    """``excluded`` but ``keep``: a directory that holds a path to keep is replaced by what it
    holds beside it (down to the path itself)."""
    out = set()
    for path in excluded:
        if not any(paths.inside(k, path) for k in keep):
            out.add(path)
        elif path not in keep and path.is_dir() and not path.is_symlink():
            out |= _around({path / name for name in os.listdir(path)}, keep)
    return out


def _declared(cwd: Path, pattern: str) -> Iterator[Path]:
    """What a pattern names under ``cwd``, sorted: a path, or a glob (``*``, ``?``, ``[...]``
    within a name, ``**`` for any depth; as :mod:`glob`, a wildcard does not match a name that
    starts with a dot). Never through a link to a directory."""
    if not glob.has_magic(pattern):
        path = cwd / pattern
        if path.exists():
            yield Path(os.path.normpath(path))
        return
    parts = PurePath(pattern).parts
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base = Path(os.path.normpath(cwd.joinpath(*parts[:fixed])))
    if base.is_dir() and not base.is_symlink():
        yield from sorted(dict.fromkeys(_matching(base, parts[fixed:])))


def _matching(base: Path, parts: Sequence[str]) -> Iterator[Path]:
    if not parts:
        yield base
        return
    part, rest = parts[0], parts[1:]
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return
    if part == "**":
        yield from _matching(base, rest)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                yield from _matching(Path(entry.path), parts)
        return
    for entry in entries:
        if not glob.has_magic(part):
            hit = entry.name == part
        else:
            hit = fnmatch.fnmatchcase(entry.name, part) and (part.startswith(".") or not entry.name.startswith("."))
        if not hit:
            continue
        if not rest:
            yield Path(entry.path)
        elif entry.is_dir(follow_symlinks=False):
            yield from _matching(Path(entry.path), rest)


def _walk(root: Path, left_out: Callable[[Path], bool], found: list[Path] | None = None,
          excluded: Set[Path] = frozenset()) -> Iterator[Path]:
    """The files under ``root`` (a link to a directory as a file: not followed), without what is
    ``left_out`` and the masked directories (each added to ``found``, as is what is ``excluded``)."""
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        kept = []
        for name in sorted(dirs):
            path = here / name
            if path.is_symlink() and path not in excluded:
                yield path  # recorded as a link, not followed
            elif left_out(path):
                continue
            elif path in excluded or masked(path):
                if found is not None:
                    found.append(path)
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            path = here / name
            if path in excluded:
                if found is not None:
                    found.append(path)
            elif not left_out(path):
                yield path


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


def _shown(path: Path | str) -> str:
    """A path of the entrant's, for a message: on one line, its control characters escaped."""
    return escaped(str(path), one_line=True)
