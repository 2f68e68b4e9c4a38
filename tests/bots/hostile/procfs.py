"""What a process can learn about the others through /proc, as a hostile bot sees it.

The attacks keep to the tournament's own process tree (see :func:`tournament_tree`):
a real entrant would look at every process of the machine, but a test run must not
read, or signal, the machine's other processes. The tree is found from the top (the
nearest ancestor running ``-m referee``), so a sandbox that leaked the host's pids
would still show the attacker every other bot of its tournament.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

PROC = Path("/proc")


def pids() -> list[int]:
    return sorted(int(p.name) for p in PROC.iterdir() if p.name.isdigit())


def argv(pid: int) -> list[str]:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def parent(pid: int) -> int | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2:].split()[1])


def ancestors(pid: int) -> list[int]:
    """The pid's parent, its parent's parent... as far as this process can see."""
    found = []
    while (pid := parent(pid)) and pid not in found:
        found.append(pid)
    return found


def children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for pid in pids():
        if (up := parent(pid)) is not None:
            tree.setdefault(up, []).append(pid)
    return tree


def descendants(pid: int, tree: dict[int, list[int]] | None = None) -> set[int]:
    tree = children() if tree is None else tree
    found, todo = set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def tournament_root() -> int:
    """The runner (``python -m referee ...``) if this process can see it among its
    ancestors, else its parent (in a pid namespace: the sandbox's init)."""
    for pid in ancestors(os.getpid()):
        args = argv(pid)
        if any(a == "-m" and b == "referee" for a, b in itertools.pairwise(args)):
            return pid
    return os.getppid()


def tournament_tree() -> list[int]:
    """Every process of the tournament this process can see, but itself, its own
    children and its ancestors below the root: the other bots and the runner."""
    me = os.getpid()
    tree = children()
    root = tournament_root()
    mine = {me} | descendants(me, tree) | (set(ancestors(me)) - {root})
    return sorted(({root} | descendants(root, tree)) - mine)


def others() -> list[int]:
    """The tournament's processes that are not this one's ancestors: those it may kill."""
    return [pid for pid in tournament_tree() if pid not in ancestors(os.getpid())]


def environ(pid: int | str) -> dict[str, str]:
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {key: value for key, _, value in pairs}


def link(path: Path | str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def open_files(pid: int) -> Iterator[tuple[str, str]]:
    """(``/proc/PID/fd/N``, where it points) for each descriptor of the process."""
    fds = PROC / str(pid) / "fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return
    for name in names:
        if (target := link(fds / name)) is not None:
            yield str(fds / name), target


def memory(pid: int, limit: int = 1 << 30) -> Iterator[bytes]:
    """The process's writable private memory (heap, anonymous maps), region by region,
    up to ``limit`` bytes; nothing if it may not be read."""
    try:
        maps = (PROC / str(pid) / "maps").read_text().splitlines()
        mem = open(PROC / str(pid) / "mem", "rb", buffering=0)  # noqa: SIM115 - closed below
    except OSError:
        return
    with mem:
        for line in maps:
            fields = line.split()
            span, perms = fields[0], fields[1]
            name = fields[5] if len(fields) > 5 else ""
            if not perms.startswith("rw") or (name and not name.startswith("[heap")):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            size = min(end - start, limit, 256 << 20)
            try:
                mem.seek(start)
                chunk = mem.read(size)
            except (OSError, OverflowError, ValueError):
                continue
            limit -= len(chunk)
            yield chunk
            if limit <= 0:
                return
