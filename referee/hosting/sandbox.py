"""The wall around each launched bot: bubblewrap, and limits for its whole process tree.

``[limits] sandbox`` chooses it: ``"bwrap"`` runs every launched bot in
bubblewrap (and refuses to start where bubblewrap does not work), ``"none"``
runs bots as plain processes of this user, ``"auto"`` (the default) uses
bubblewrap when a quick probe works and otherwise runs without, saying so.

Inside bubblewrap a bot has its own pid, network, ipc, uts, mount and user
namespaces, no capabilities, a new session, and dies with the runner. Its
root is empty but for: the runtime (the system: ``/usr`` and the ``/bin``,
``/lib``... links; the interpreter and the referee's packages; the
installation of a program found on PATH), its own directory (``cwd``) and its
data, all read-only and resolved first (:mod:`referee.hosting.paths`: a
command naming anything outside them is refused); its own ``/proc`` and
``/dev``; the referee's Unix socket at ``/run/referee``, its only way out.
Masked even inside those directories: what the run writes (the output
directory, its redirected output), the tournament file, other bots' directories
and data, and home directories. Of its own directory it sees exactly what its
version covers: in a run that keeps versions, the private copy of its files
taken as they were hashed (:class:`versions.Snapshot`, bound at its own path:
a change to its files during the run reaches no process of it); otherwise the
directory (:func:`versions.view`), ``__pycache__``, version control, tools'
caches, other runs' output and what its ``exclude`` names masked, and with
``files`` declared only those. Its environment is only PATH, HOME, TMPDIR, the
locale and its ``env`` table.

Nothing of the runner's lets one sandbox signal another: where the prelude may mount (its
mount namespace), every directory a bot sees is an overlay of the sandbox's own (the same
files, inodes of its own: a lock, a lease taken there stays there), and as root its device
nodes and masks are its own too, and each bot process tree runs under a uid of its own
(:data:`BOT_UIDS`, in a user namespace the prelude makes), so that no count the kernel keeps per
user (processes, pending signals, pipe buffers) is shared. Where a sandbox's files are not all
its own inodes, locks are refused (ENOLCK); inotify, fanotify, leases and dnotify always are.

Its writable space is two tmpfs, its scratch at ``/tmp`` (HOME and TMPDIR)
and ``/dev/shm``, each of ``file_mb`` and of :attr:`Writable.inodes` inodes
(:class:`Writable`); the root and everything else is read-only. bubblewrap 0.8
has no inode option, so :mod:`~referee.hosting.prelude` mounts them, in a
mount namespace of its own (and, for a user other than root, a user namespace of
its own), and bubblewrap binds them; where that cannot work, bubblewrap mounts
them with their size only, and the sandbox line says so.

Limits are set before the bot's command is executed (:func:`limited`), so
there is no moment when a bot runs without them. Per process: CPU seconds, address space
(``memory_mb``), file size, open files, no core files. For the whole bot,
where this process may make cgroup v1 groups (as root): one ``pids`` and one
``memory`` group per bot process tree (``processes``, ``memory_mb``), joined
before exec; otherwise only the per-process limits hold, plus RLIMIT_NPROC where
the bot's uid is not root (a uid of its own, or the runner's): :func:`unbounded` says which
whole-bot limit cannot hold, and :func:`check_bounded` refuses a run whose file sets one,
unless it accepts it per process (``[limits] accept_per_process``). :class:`ProcessTree`
also finds every process a bot left behind, wherever it went (``setsid`` and
double forks included), to kill it; without one, :func:`kill_session` finds
those still in the bot's session. Where no memory group holds a bot,
memfd_create and SysV IPC are refused (the prelude's seccomp filter): the
memory they hold lies outside any address space.

CPU: where this process may make cgroup v1 ``cpu`` groups, each bot process
tree has one, of ``cpu.shares`` 1024 (an ordinary process's weight) per seat it
plays at once: however many processes a bot runs, while another bot decides the
kernel gives them together no more than their share (:data:`SHARES_PER_SEAT`). A tree
started for a match that waits for its turn (prepared while others play) has the least
share, :data:`SHARES_WAITING`, until its match plays: only the CPU the playing bots leave.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import resource
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.hosting import paths, versions
from referee.model import BotSpec, ConfigError, Limits, SandboxMode

SOCKET_DIR = "/run/referee"  # where the server's socket directory appears inside the sandbox
SOCKET_NAME = "referee.sock"
#: files of the sandbox's own /proc that show the machine's, not the sandbox's: masked
KERNEL_SHARED = ("/proc/keys", "/proc/key-users")
TOKEN_FD = 3  # the descriptor a launched bot reads its token from
USERNS_FD = 4  # the descriptor bubblewrap finds the bot's user namespace on (then closed)
#: the uids a bot process tree runs under, one drawn for each (as root): 0x7A000000-0x7AFFFFFF, which
#: systemd's ranges leave unused (neither users, nor system services, nor containers)
BOT_UIDS = range(0x7A000000, 0x7B000000)
BOT_UID_INSIDE = 1000  # what the bot is in its user namespace (root there is bubblewrap's)
#: the capabilities a bot keeps (number: bubblewrap's name), in its user namespace only: reading and
#: searching what the sandbox shows, whatever the modes of the runner's files (as when it ran as root)
BOT_CAPS = {2: "CAP_DAC_READ_SEARCH"}
#: the sandbox's own device nodes (as root): name, major, minor
DEVICES = (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7), ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0))
SCRATCH = "/tmp"  # the bot's writable scratch inside the sandbox: HOME and TMPDIR
SHM = "/dev/shm"  # its other writable place
PRELUDE = Path(__file__).with_name("prelude.py")  # run between fork and exec (limited)
PATH = "/usr/local/bin:/usr/bin:/bin"
NO_SANDBOX_RISK = ("bots run as this user with its files, processes and network: a hostile bot can read "
                   "other bots' tokens and the results, and kill other bots")


class SandboxUnavailable(ConfigError):
    """``sandbox = "bwrap"`` on a machine where bubblewrap does not work."""


class LimitUnbounded(ConfigError):
    """A whole-bot limit the tournament file sets that this runner cannot hold, not accepted per process."""


class PathRefused(ConfigError):
    """A bot whose sandbox would show it a path outside its own files (or hide what it needs)."""


@dataclass(frozen=True)
class Sandbox:
    """How launched bots are contained: ``kind`` "bwrap" or "none"; ``cgroups``: whole-bot
    memory and process limits by cgroup (else per-process limits only); ``warning``: the
    one line to print when bots run without a sandbox (None when they run in one); ``cpu``:
    each bot's process tree has its CPU share (cgroup ``cpu``); ``staged``: in bubblewrap, the
    bot's tmpfs are mounted by the prelude, with an inode count (else by bubblewrap, without),
    and what it sees are overlays of its own; ``own_uid``: each bot process tree runs under a
    uid of its own, with its own device nodes (as root, staged)."""

    kind: SandboxMode
    cgroups: bool
    warning: str | None = None
    cpu: bool = False
    staged: bool = False
    own_uid: bool = False

    @property
    def isolated(self) -> bool:
        return self.kind == SandboxMode.BWRAP

    def describe(self) -> str:
        """One line: what contains the bots and how their limits hold."""
        wall = ("bwrap (own namespaces; no network but the referee's socket; system read-only; "
                "output, tournament file and homes hidden)" if self.isolated else "none")
        processes = ("per bot (RLIMIT_NPROC, a uid of its own)" if self.own_uid and self.isolated
                     else "by RLIMIT_NPROC (not for root)")
        limits = ("memory and processes per bot (cgroup)" if self.cgroups
                  else f"memory per process (address space; memfd and SysV IPC refused), processes {processes}")
        cpu = ("a share per seat (cgroup cpu)" if self.cpu
               else "no share per bot (no cgroup cpu controller this process may use): a bot's processes can "
                    "slow the others")
        line = f"sandbox: {wall}; limits: {limits}, CPU time, file size and open files per process; CPU: {cpu}"
        if self.isolated:
            inodes = f"and {INODES_PER_MB} inodes per MB" if self.staged else "with no inode limit (no mount " \
                                                                              "namespace of its own here)"
            line += f"; writable: only {SCRATCH} and {SHM}, each a tmpfs of file_mb {inodes}"
            if self.own_uid:
                line += "; apart: a uid and inodes of its own (locks stay in its sandbox)"
            elif self.staged and os.getuid() == 0:
                line += "; apart: inodes of its own (locks stay in its sandbox), but root's uid"
            else:
                line += "; apart: locks refused (its files are not inodes of its own here)"
        return line


def resolve(mode: SandboxMode) -> Sandbox:
    """The sandbox for ``[limits] sandbox = mode``; SandboxUnavailable for "bwrap" where it cannot work."""
    cgroups, cpu = cgroup_parents() is not None, cpu_parent() is not None
    if mode == SandboxMode.NONE:
        return Sandbox(SandboxMode.NONE, cgroups, f"sandbox: none (as asked): {NO_SANDBOX_RISK}", cpu)
    why = probe()
    if why is None:
        own = os.getuid() == 0 and staging_probe(own_uid=True) is None
        return Sandbox(SandboxMode.BWRAP, cgroups, None, cpu, own or staging_probe(own_uid=False) is None, own)
    if mode == SandboxMode.BWRAP:
        raise SandboxUnavailable(f"sandbox = \"bwrap\" but {why}")
    return Sandbox(SandboxMode.NONE, cgroups, f"sandbox: none, {why}: {NO_SANDBOX_RISK}", cpu)


def unbounded(box: Sandbox) -> dict[str, str]:
    """The whole-bot limits (:data:`PER_PROCESS`) that cannot hold in ``box``, each with why: they
    hold per process only there. Memory needs a memory cgroup; processes a pids cgroup, or
    RLIMIT_NPROC on a uid that is not root (a uid of its own, or a runner that is not root)."""
    gaps = {}
    if not box.cgroups:
        gaps["memory_mb"] = "no memory cgroup this runner may make (cgroup v1, as root)"
        if os.getuid() == 0 and not (box.isolated and box.own_uid):
            gaps["processes"] = "no pids cgroup, and RLIMIT_NPROC does not bind a bot that runs as root"
    return gaps


def check_bounded(box: Sandbox, bots: Iterable[BotSpec]) -> None:
    """:class:`LimitUnbounded`, in one line, if a launched bot's file sets a whole-bot limit that
    cannot hold in ``box`` (:func:`unbounded`) and does not accept it per process."""
    gaps = unbounded(box)
    refused: dict[str, list[BotSpec]] = {}
    for spec in bots:
        for limit in gaps:
            if not spec.external and not spec.withdrawn and limit in spec.limits.written \
                    and getattr(spec.limits, limit) and limit not in spec.limits.accept_per_process:
                refused.setdefault(limit, []).append(spec)
    if not refused:
        return
    said = []
    for limit, specs in refused.items():
        values = "/".join(sorted({str(getattr(s.limits, limit)) for s in specs}))
        said.append(f"{limit} = {values} (bot{'s' if len(specs) > 1 else ''} {', '.join(s.name for s in specs)}) "
                    f"cannot hold for the whole bot here: {gaps[limit]}")
    accept = ", ".join(f'"{limit}"' for limit in refused)
    raise LimitUnbounded(f"{'; '.join(said)}; it would hold per process only: accept that with [limits] "
                         f"accept_per_process = [{accept}], or run where a cgroup can be made")


@functools.cache
def probe() -> str | None:
    """Why bubblewrap cannot run a sandbox here, or None when it can (``bwrap ... true``, once per run)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    try:
        done = subprocess.run([bwrap, *_walls(None), *_system(), "--", "true"], capture_output=True,
                              text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        return f"bubblewrap does not run ({err})"
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return f"bubblewrap does not work here ({lines[-1] if lines else f'exit code {done.returncode}'})"
    return None


@functools.cache
def staging_probe(own_uid: bool = False) -> str | None:
    """Why the prelude cannot mount a bot's tmpfs and overlays here (no mount namespace of its
    own), or (``own_uid``) cannot run it under a uid of its own, or None when it can: ``bwrap
    ... true`` so, once per run."""
    command = bwrap_command(["true"], cwd=Path("/"), socket_dir=None, scratch_mb=1, staged=True)
    try:
        done = subprocess.run(limited(command, Limits(), None, None, scratch_mb=1, staged=True, own_uid=own_uid),
                              capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        return str(err)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit code {done.returncode}"
    return None


# --- the writable space -----------------------------------------------------------------

INODES_PER_MB = 128  # a bot's tmpfs each have this many inodes per MB of file_mb
MIN_INODES = 1024
INODE_KB = 1.3  # kernel memory per empty tmpfs file with a long name, with room (measured: bench section 8b)


@dataclass(frozen=True)
class Writable:
    """What a bot with ``file_mb`` may write: two tmpfs (its scratch, /dev/shm), each of ``mb`` MB
    and ``inodes`` inodes (0: the kernel's defaults, half the memory); the rest is read-only."""

    mb: int
    inodes: int

    @classmethod
    def of(cls, file_mb: int) -> Writable:
        return cls(file_mb, max(MIN_INODES, INODES_PER_MB * file_mb) if file_mb else 0)

    @property
    def budget_mb(self) -> float:
        """The most a bot holds in them, data and inodes, without a memory cgroup."""
        return 2 * (self.mb + self.inodes * INODE_KB / 1024)

    def options(self) -> str:
        """The tmpfs mount options."""
        sizes = f",size={self.mb << 20},nr_inodes={self.inodes}" if self.mb else ""
        return f"mode=1777{sizes}"


@functools.cache
def staging_dir() -> Path:
    """An empty directory of this process's, over which each bot's prelude mounts its tmpfs in its
    own mount namespace (so it stays empty here; removed at exit)."""
    _sweep_stale_dirs()
    folder = Path(tempfile.mkdtemp(prefix=f"referee-{os.getpid()}-mnt-"))
    folder.chmod(0o755)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _staged(scratch_mb: int) -> list[tuple[str, str]]:
    """The prelude's mounts: a small tmpfs over :func:`staging_dir` (so that without the prelude
    the sources bubblewrap binds do not exist), and in it the bot's scratch and /dev/shm."""
    root, options = staging_dir(), Writable.of(scratch_mb).options()
    return [(str(root), "mode=755,size=65536,nr_inodes=1024"), (str(root / "tmp"), options),
            (str(root / "shm"), options)]


# --- the bubblewrap command ----------------------------------------------------------


def _walls(socket_dir: Path | None) -> list[str]:
    net = [] if socket_dir is not None else ["--share-net"]  # no socket: the bot needs the network
    return ["--unshare-all", *net, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--hostname", "bot", "--size", str(1 << 20), "--tmpfs", "/"]  # the root: read-only at the end


def _system() -> list[str]:
    """/usr read-only, and the top-level links into it (or directories) as they exist here."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def bwrap_command(argv: Sequence[str], *, cwd: Path, socket_dir: Path | None, hide: Iterable[Path] = (),
                  env: Mapping[str, str] | None = None, scratch_mb: int = 0, staged: bool = False,
                  data: Iterable[Path] = (), apart: Iterable[Path] = (), programs: Iterable[str] = (),
                  files: Sequence[str] = (), command: Sequence[str] = (), exclude: Sequence[str] = (),
                  snapshot: versions.Snapshot | None = None) -> list[str]:
    """``argv`` run in bubblewrap, in ``cwd`` (visible read-only at its own path, resolved), with
    its ``data`` (the same), reaching the referee through ``socket_dir`` (bound at /run/referee;
    None: the bot keeps the network). Masked even where they lie inside a visible directory:
    ``hide`` (the output directory, the tournament file: a ``cwd`` or data inside one is
    refused), ``apart`` (other bots' directories and data) and home directories (these two
    unless they hold what the bot sees: nested directories). :class:`PathRefused` also if the
    command names a path outside what the bot may see (:func:`paths.outside`). Writable: only
    its scratch and /dev/shm, tmpfs of ``scratch_mb`` (0: no size); ``staged``: the prelude
    mounts them (``limited(..., staged=True)``, with inode counts), bubblewrap binds them.
    ``programs``: more programs whose installations must be visible (the bot's own, under the
    stdio relay). Of ``cwd`` it shows what the bot's version covers (:func:`versions.view`):
    all of it, or with ``files`` (its ``[[bots]] files``) only those and what its ``command``
    (its own, as its table gives it) names, on an empty read-only ``cwd``; masked inside,
    ``__pycache__``, version control, tools' caches, other runs' output directories and what its
    ``exclude`` names. With a ``snapshot`` (:class:`versions.Snapshot`: its files as its version
    hashed them, in a run that keeps versions) it shows that copy in their place instead."""
    cwd, data = cwd.resolve(), {Path(d).resolve() for d in data}
    why = paths.outside(argv, cwd, data)
    if why is not None:
        raise PathRefused(why)
    hidden = {Path(p).resolve() for p in hide}
    for root, hider in ((root, hider) for root in (cwd, *data) for hider in hidden):
        if paths.inside(root, hider):
            raise PathRefused(f"{root} lies inside {hider}, which the bot must not see")
    masks = hidden | {Path(p).resolve() for p in apart} | paths.homes()
    shared = {*paths.runtime()}  # every bot's, never masked
    for program in (argv[0], *programs):
        if (home := paths.program_home(program)) is not None:
            shared.add(home)
    visible = {p for p in {*shared, cwd, *data} if not paths.inside(p, Path("/usr")) and p != Path("/")}
    # the bot's own directory, unless the runtime shows it anyway (or it is not shown: "/")
    mine = cwd in visible and not any(paths.inside(cwd, r) for r in shared)
    mounts = {path: ["--ro-bind", str(path), str(path)] for path in visible}
    own = versions.View(None, ())
    if mine and snapshot is not None:  # the copy of its files, as hashed: nothing else of its directory
        mounts.update(snapshot.mounts(p for p in visible if p != cwd and paths.inside(p, cwd)))
    elif mine:
        own = versions.view(cwd, files, command, hidden=masks | visible - {cwd}, exclude=exclude)
        masks |= set(own.masked)
        if own.shown is not None:  # only these of it, on an empty directory
            mounts[cwd] = ["--size", str(1 << 20), "--tmpfs", str(cwd)]
            for path in own.shown:
                link = ["--symlink", os.readlink(path), str(path)] if path.is_symlink() else None
                mounts.setdefault(path, link or ["--ro-bind", str(path), str(path)])
    args = ["bwrap", *_walls(socket_dir), *_system()]
    if staged and os.getuid() != 0:  # the prelude's user namespace maps this user to 0: map it back
        args += ["--uid", str(os.getuid()), "--gid", str(os.getgid())]
    # bubblewrap mounts in order: /tmp first (binds may lie under it), then parents before children
    args += _tmpfs(SCRATCH, "tmp", scratch_mb, staged)
    for path in sorted(mounts, key=lambda p: len(p.parts)):
        args += mounts[path]
    for path in sorted(masks, key=lambda p: len(p.parts)):
        # only what a visible directory would show, and never what the bot needs
        if not path.exists() or not any(v in path.parents for v in visible) \
                or any(paths.inside(v, path) for v in visible):
            continue
        if mine and snapshot is not None and not any(v in path.parents for v in visible - {cwd}):
            continue  # in its directory only: not in the copy (its version left it out)
        if path.is_dir():
            args += ["--size", "4096", "--tmpfs", str(path), "--remount-ro", str(path)]
        else:  # unreadable: bubblewrap binds without devices
            args += ["--ro-bind", "/dev/null", str(path)]
    if socket_dir is not None:
        args += ["--ro-bind", str(socket_dir), SOCKET_DIR]
    args += ["--proc", "/proc", "--dev", "/dev"]
    if mine and own.shown is not None:
        args += ["--remount-ro", str(cwd)]
    for kernel in KERNEL_SHARED:  # the machine's keys, not namespaced (and the prelude refuses keyctl)
        if os.path.exists(kernel):
            args += ["--ro-bind", "/dev/null", kernel]
    # /dev is a tmpfs of its own: read-only, but for a /dev/shm like the scratch; then the root
    args += [*_tmpfs(SHM, "shm", scratch_mb, staged), "--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--chdir", str(cwd), "--clearenv"]
    for key, value in {"PATH": PATH, "HOME": SCRATCH, "TMPDIR": SCRATCH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                       **(env or {})}.items():
        args += ["--setenv", key, value]
    return [*args, "--", *argv]


def with_env(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """``argv`` with the variables of ``env`` set by the prelude just before it (none: ``argv``):
    a bot's ``env`` reaches its own command, never a step of the referee's before it."""
    return [sys.executable, "-I", "-S", str(PRELUDE), json.dumps({"env": dict(env)}), *argv] if env else list(argv)


def _tmpfs(point: str, staged_name: str, mb: int, staged: bool) -> list[str]:
    """One of the bot's two writable places: bound from the prelude's mounts, or a tmpfs of bubblewrap's."""
    if staged:
        return ["--bind", str(staging_dir() / staged_name), point]
    return [*(["--size", str(mb << 20)] if mb else []), "--tmpfs", point]


def namespace_init(pid: int) -> int | None:
    """A pidfd of the init of the sandbox that the bubblewrap process ``pid`` runs (its child,
    pid 1 of the bot's pid namespace), or None if it has none (yet, or any more). Once that init
    has exited, so has every process of the namespace: the kernel kills them all and reaps them
    before it lets the init go."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return os.pidfd_open(int(children[0])) if children else None
    except (OSError, ValueError):
        return None


def wait_exited(pidfd: int, timeout: float = 5.0) -> bool:
    """Wait until the process of ``pidfd`` has exited (True), or ``timeout`` (False); closes it."""
    try:
        return bool(select.select([pidfd], [], [], timeout)[0])
    finally:
        os.close(pidfd)


def _sweep_stale_dirs() -> None:
    """The directories left by runners that were killed before they could remove theirs, removed
    (their names say which runner made them: ``referee-PID-...``)."""
    for stale in Path(tempfile.gettempdir()).glob("referee-[0-9]*-*"):
        pid = stale.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(stale, ignore_errors=True)


def make_socket_dir() -> Path:
    """A new directory for the referee's socket (mode 0755; its name says which runner made it), and
    the ones left by runners that were killed before they could remove theirs, removed."""
    _sweep_stale_dirs()
    folder = Path(tempfile.mkdtemp(prefix=f"referee-{os.getpid()}-"))
    folder.chmod(0o755)
    return folder


def exit_status(code: int | None, sandboxed: bool) -> int | None:
    """A launched process's return code as Popen's (negative: a signal); bubblewrap reports a
    bot killed by signal N as the exit code 128 + N."""
    if sandboxed and code is not None and 128 < code < 128 + 65:
        return -(code - 128)
    return code


# --- limits, set between fork and exec -------------------------------------------------


def limited(argv: Sequence[str], limits: Limits, tree: ProcessTree | None, token_fd: int | None, *,
            scratch_mb: int = 0, staged: bool = False, own_uid: bool | None = None) -> list[str]:
    """``argv`` started by the prelude (:mod:`~referee.hosting.prelude`), which joins ``tree``'s
    cgroups, mounts the bot's tmpfs (``staged``: for a ``bwrap_command(..., staged=True)`` of
    ``scratch_mb``) and the overlays that give its sandbox inodes of its own (:func:`_apart`),
    makes the user namespace of its own uid (``own_uid``; None: as root, when staged), refuses
    what must be (:func:`_refused`), sets the limits, moves the token's pipe from ``token_fd`` to
    :data:`TOKEN_FD`, then execs it: the bot (or bubblewrap) never runs unlimited. A wrapper
    rather than Popen's ``preexec_fn``: that makes the runner fork() while gRPC's threads run,
    and gRPC's fork handlers can then leave the runner's own gRPC stuck; without it Popen uses
    vfork."""
    root = os.getuid() == 0
    own_uid = staged and root if own_uid is None else own_uid and staged and root
    setup: dict[str, Any] = {"join": [str(d / "cgroup.procs") for d in tree.dirs] if tree is not None else [],
                   "mounts": _staged(scratch_mb) if staged else [], "uid": os.getuid(), "gid": os.getgid(),
                   "token_fd": token_fd, "to": TOKEN_FD}
    apart = False
    if staged:
        argv, setup["overlays"], apart = _apart(argv, devices=root)
        if root:
            setup["devices"] = [str(staging_dir() / "dev"), DEVICES]
    if own_uid:
        argv, setup["user"] = _as_own_user(argv)
    setup["refuse"] = _refused(tree, locks=not apart)
    wanted: list[tuple[int, int | tuple[int, int]]] = [(resource.RLIMIT_CORE, 0)]
    if limits.cpu_seconds:
        wanted.append((resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5)))
    if limits.memory_mb:
        wanted.append((resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024))
    if limits.file_mb:
        wanted.append((resource.RLIMIT_FSIZE, limits.file_mb * 1024 * 1024))
    if limits.open_files:
        wanted.append((resource.RLIMIT_NOFILE, limits.open_files))
    if limits.processes and not (tree and tree.has("pids")) and (own_uid or not root):
        wanted.append((resource.RLIMIT_NPROC, limits.processes + _counted_besides(own_uid, staged)))
    setup["rlimits"] = [(which, _within_hard(which, value)) for which, value in wanted]
    return [sys.executable, "-I", "-S", str(PRELUDE), json.dumps(setup), *argv]


def _refused(tree: ProcessTree | None, locks: bool) -> list[str]:
    """The prelude's groups of refused calls: the keyrings and word of other processes' doings
    on a file (inotify, fanotify, leases, dnotify) always; memfd and SysV IPC where no memory
    group holds the bot; locks where its files are not inodes of its own (``locks``)."""
    return ["keys", "notify", *([] if tree and tree.has("memory") else ["memory"]), *(["locks"] if locks else [])]


def _counted_besides(own_uid: bool, staged: bool) -> int:
    """What RLIMIT_NPROC counts besides the bot's own processes and threads: nothing under a uid
    of its own; bubblewrap's two in the user namespace the prelude makes for a user other than
    root (which counts only its own); otherwise every task this user runs."""
    if own_uid:
        return 0
    return 2 if staged else _tasks_of_user()


#: bubblewrap's options and how many words follow each (as :func:`bwrap_command` writes them)
_ARITY = {"--ro-bind": 2, "--bind": 2, "--dev-bind": 2, "--symlink": 2, "--setenv": 2, "--tmpfs": 1,
          "--remount-ro": 1, "--proc": 1, "--dev": 1, "--chdir": 1, "--size": 1, "--perms": 1, "--hostname": 1,
          "--cap-drop": 1, "--cap-add": 1, "--uid": 1, "--gid": 1, "--userns": 1}


def _apart(argv: Sequence[str], devices: bool) -> tuple[list[str], list[list[str]], bool]:
    """A bubblewrap command whose sandbox sees what ``argv``'s does, but as inodes of its own:
    each directory it binds (and the directory of each file) is bound from an overlay the
    prelude mounts for this sandbox alone (the mounts under it too); with ``devices`` (as root)
    its device nodes and its masks are the prelude's too. Returns the command, the overlays
    (``[directory, target, empty]``) and whether nothing of it is shared any more (its door,
    the runner's socket directory, aside: no other bot's sandbox shows it)."""
    stage = staging_dir()
    overlays: dict[Path, Path] = {}
    points = _mount_points()
    shared = not devices

    def own(path: Path) -> Path:
        if path not in overlays:
            overlays[path] = stage / "ro" / str(len(overlays))
        return overlays[path]

    out: list[str] = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        word, args = argv[i], list(argv[i + 1:i + 1 + _ARITY.get(argv[i], 0)])
        i += 1 + len(args)
        if word == "--ro-bind" and args[0] == "/dev/null":
            out += [word, str(stage / "dev" / "null") if devices else args[0], args[1]]
        elif word == "--ro-bind" and args[1] != SOCKET_DIR and not paths.inside(Path(args[0]), stage):
            source, dest = Path(args[0]), args[1]
            if source.is_dir():
                out += [word, str(own(source)), dest]
                for point in sorted(p for p in points if paths.inside(p, source) and p != source):
                    out += [word, str(own(point)), str(Path(dest) / point.relative_to(source))]
            elif source in points:  # a file mounted on its own: no overlay shows it
                out += [word, args[0], dest]
                shared = True
            else:
                out += [word, str(own(source.parent) / source.name), dest]
        else:
            out += [word, *args]
            if word == "--dev" and devices:
                for name, *_ in DEVICES:
                    out += ["--dev-bind", str(stage / "dev" / name), f"/dev/{name}"]
    return [*out, *argv[i:]], [[str(d), str(t), str(stage / "empty")] for d, t in overlays.items()], not shared


def _mount_points() -> set[Path]:
    """The mount points of this process's mount namespace (/proc/self/mountinfo, unescaped)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return set()
    found = set()
    for line in lines:
        point = line.split(" ")[4]
        found.add(Path(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point)))
    return found


def _as_own_user(argv: Sequence[str]) -> tuple[list[str], dict[str, int]]:
    """A bubblewrap command that joins the user namespace the prelude makes (:data:`USERNS_FD`)
    rather than making one, keeps what the bot's first step needs, and starts the bot through
    it: the prelude again, inside, which becomes :data:`BOT_UID_INSIDE` (a uid drawn from
    :data:`BOT_UIDS` outside) with only :data:`BOT_CAPS`. Returns it and the prelude's ``user``."""
    end = argv.index("--")
    net = [] if "--share-net" in argv[:end] else ["--unshare-net"]
    walls = ["--userns", str(USERNS_FD), "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
             *net]
    out: list[str] = []
    for word in argv[:end]:
        if word == "--unshare-all":
            out += walls
        elif word != "--share-net":
            out.append(word)
    at = next(i for i in range(len(out) - 1) if out[i:i + 2] == ["--cap-drop", "ALL"]) + 2
    out[at:at] = [word for cap in ("CAP_SETUID", "CAP_SETGID", *BOT_CAPS.values()) for word in ("--cap-add", cap)]
    become = {"become": {"uid": BOT_UID_INSIDE, "gid": BOT_UID_INSIDE, "keep": list(BOT_CAPS), "close": [USERNS_FD]}}
    first = [sys.executable, "-I", "-S", str(PRELUDE), json.dumps(become)]
    outside = BOT_UIDS.start + secrets.randbelow(len(BOT_UIDS))
    return [*out, "--", *first, *argv[end + 1:]], {"inside": BOT_UID_INSIDE, "outside": outside, "fd": USERNS_FD}


def _within_hard(which: int, value: int | tuple[int, int]) -> tuple[int, int]:
    soft, hard = value if isinstance(value, tuple) else (value, value)
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    return soft, hard


def _tasks_of_user() -> int:
    """Threads this user runs now (RLIMIT_NPROC counts them all, not only the bot's)."""
    uid, count = os.getuid(), 0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if proc.stat().st_uid == uid:
                count += len(os.listdir(proc / "task"))
        except OSError:
            pass
    return count


# --- one cgroup per bot process tree ----------------------------------------------------

CGROUPS = Path("/sys/fs/cgroup")


@functools.cache
def cgroup_parents() -> dict[str, Path] | None:
    """The cgroup v1 ``pids`` and ``memory`` groups of this process, when it may make groups
    under them (as root, on a hierarchy mounted writable); else None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    mine = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            mine[controller] = CGROUPS / controller / path.lstrip("/")
    parents: dict[str, Path] = {c: mine[c] for c in ("pids", "memory") if c in mine}
    if len(parents) < 2 or not all((p / "cgroup.procs").exists() for p in parents.values()):
        return None
    if not all(_may_make_groups(p) for p in parents.values()):
        return None
    _sweep_stale(parents.values())
    return parents


@functools.cache
def cpu_parent() -> Path | None:
    """The cgroup v1 ``cpu`` group of this process, when it may make groups under it (as root, on
    a hierarchy mounted writable, which takes ``cpu.shares``); else None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            parent = CGROUPS / "cpu" / path.lstrip("/")
            if (parent / "cpu.shares").exists() and _may_make_groups(parent):
                _sweep_stale([parent])
                return parent
    return None


def _may_make_groups(parent: Path) -> bool:
    trial = parent / f"referee-probe-{os.getpid()}"
    try:
        trial.mkdir()
        trial.rmdir()
    except OSError:
        return False
    return True


def _sweep_stale(parents: Iterable[Path]) -> None:
    """Groups a runner left (it was killed before it could remove them): what runs in them is
    killed, the groups removed. Their names say which runner made them (``referee-PID-...``)."""
    for parent in parents:
        for group in parent.glob("referee-*-*"):
            pid = group.name.split("-")[1]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                ProcessTree((group,), Limits()).remove(patience=0.5)


#: a bot process tree's cpu.shares per seat it plays at once: the weight of one ordinary process
SHARES_PER_SEAT = 1024
#: the cpu.shares of a process tree started for a match that waits for its turn (the kernel's least):
#: it has only the CPU that the bots playing leave (:meth:`ProcessTree.make`, ``waiting``)
SHARES_WAITING = 2


def _shares(seats: int) -> int:
    return min(SHARES_PER_SEAT * max(1, seats), 262144)


@dataclass(frozen=True)
class ProcessTree:
    """A launched bot's cgroups (``pids``, ``memory``, ``cpu``, those that can be made): its whole
    process tree, limited as one, given its CPU share as one, found and killed as one."""

    dirs: tuple[Path, ...]
    limits: Limits

    @classmethod
    def make(cls, label: str, limits: Limits, seats: int = 1, waiting: bool = False) -> ProcessTree | None:
        """New groups named ``label`` with the limits set (its CPU share: ``seats`` played at once; while
        ``waiting`` for its match's turn, :data:`SHARES_WAITING` until :meth:`playing`); None where no group
        can be made."""
        parents = dict(cgroup_parents() or {})
        if (cpu := cpu_parent()) is not None:
            parents["cpu"] = cpu
        if not parents:
            return None
        made: list[Path] = []
        try:
            for controller, parent in parents.items():
                group = parent / label
                group.mkdir()
                made.append(group)
                if controller == "pids" and limits.processes:
                    (group / "pids.max").write_text(str(limits.processes))
                if controller == "memory" and limits.memory_mb:
                    size = str(limits.memory_mb * 1024 * 1024)
                    (group / "memory.limit_in_bytes").write_text(size)
                    if (group / "memory.memsw.limit_in_bytes").exists():  # and no swapping past it
                        (group / "memory.memsw.limit_in_bytes").write_text(size)
                if controller == "cpu":
                    (group / "cpu.shares").write_text(str(SHARES_WAITING if waiting else _shares(seats)))
        except OSError:
            cls(tuple(made), limits).remove()
            return None
        return cls(tuple(made), limits)

    def playing(self, seats: int = 1) -> None:
        """Its match's turn has come: the CPU share of ``seats`` played at once (a tree made ``waiting``)."""
        for group in self.dirs:
            if CGROUPS / "cpu" in group.parents:
                try:
                    (group / "cpu.shares").write_text(str(_shares(seats)))
                except OSError:
                    pass  # its group is gone: so is the process (it died), which the match will find

    def has(self, controller: str) -> bool:
        """Whether the tree has a group of this controller (``pids``, ``memory``, ``cpu``)."""
        return any(CGROUPS / controller in d.parents for d in self.dirs)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for group in self.dirs:
            try:
                found.update(int(line) for line in (group / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return found

    def threads(self) -> list[int]:
        """The ids of every thread of the tree now (a v1 group's ``tasks``)."""
        for group in self.dirs:
            try:
                return [int(line) for line in (group / "tasks").read_text().split()]
            except OSError:
                continue
        return []

    def kill(self, patience: float = 5.0) -> None:
        """SIGKILL every process in the tree until none is left (forks racing the kill included)."""
        deadline = time.monotonic() + patience
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def remove(self, patience: float = 2.0) -> None:
        """Kill what is left, then remove the groups."""
        self.kill()
        for group in self.dirs:
            for _ in range(int(patience / 0.02)):  # a group is busy until its last process has been reaped
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)

    def limit_hit(self) -> str | None:
        """Which whole-bot limit the tree reached, if any (the memory limit's OOM kills, the process cap)."""
        for group in self.dirs:
            counters = _counters(group / "memory.oom_control") | _counters(group / "pids.events")
            if counters.get("oom_kill"):
                return f"over its memory limit of {self.limits.memory_mb} MB"
            if counters.get("max"):
                return f"reached its limit of {self.limits.processes} processes"
        return None


def kill_session(sid: int) -> None:
    """SIGKILL every process of session ``sid`` (a launched bot's: its pid), found in /proc: those
    that left its process group but not its session."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:  # after the name: state, ppid, pgrp, session
                os.kill(int(stat.parent.name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


def _counters(path: Path) -> dict[str, int]:
    try:
        return {key: int(value) for key, value in (line.split() for line in path.read_text().splitlines())}
    except (OSError, ValueError):
        return {}
