"""What runs between the launcher's fork and a bot's exec: ``python -I -S prelude.py SETUP ARGV...``.

Not imported: the launcher runs this file by its path (standard library only, no site: a
few ms), and it execs ARGV (the bot, or bubblewrap with the bot) once SETUP, a JSON object,
is done, in this order:

- ``join``: the cgroup files (``.../cgroup.procs``) to write its pid into;
- ``token_fd``, ``to``: the token's pipe moved onto its descriptor;
- ``mounts``: tmpfs to mount, ``[[path, options], ...]`` in order (a parent before its
  children), in a mount namespace of its own, private, so that no one else sees them; a
  user other than root first makes a user namespace of its own, where it is root (``uid``,
  ``gid``: its ids outside, mapped to 0; bubblewrap maps them back with ``--uid``/``--gid``).
  bubblewrap binds them into the sandbox: this is how a bot's tmpfs get an inode count,
  which bubblewrap 0.8 cannot give;
- ``devices``: ``[path, [[name, major, minor], ...]]``: a tmpfs of the sandbox's own device
  nodes (``null``, ``zero``...), made here and then read-only (as root only: nobody else may);
- ``overlays``: ``[[directory, target, empty], ...]``: each directory the sandbox shows,
  mounted again at ``target`` as a read-only overlay (``empty`` its empty upper layer): the
  same files, but inodes of this sandbox's own, so that what a bot does to them (a lock, a
  lease) stays in its sandbox. One that cannot be mounted so is bound as it is, and locks
  are then refused (``refuse`` gets ``"locks"``);
- ``user``: ``{"inside", "outside", "fd"}`` (as root): a user namespace owned by the uid
  ``outside`` (a uid of this bot's alone), where uid 0 is root and ``inside`` is ``outside``,
  open on descriptor ``fd`` for bubblewrap (``--userns``): every count the kernel keeps per
  user (processes, pending signals, pipe buffers) is then the bot's own;
- ``refuse``: groups of system calls that fail, by a seccomp filter (:data:`GROUPS`): ``"keys"``
  (add_key, request_key, keyctl: the kernel's keyrings, which every process of a session
  shares, the runner's among them; a bot would read the runner's keys and pass its own to its
  twin through them, whatever the sandbox), ``"memory"`` (memfd_create and the SysV IPC
  calls shmget, semget, msgget: memory they hold lies outside any address space, so where no
  memory cgroup holds a bot, nothing else would bound it), ``"notify"`` (inotify, fanotify,
  leases, dnotify: word of what other processes do to a file) and ``"locks"`` (flock and the
  fcntl locks: ENOLCK, where a sandbox's files are not its own inodes);
- ``rlimits``: ``[[resource, [soft, hard]], ...]``.

Inside the sandbox, ``python -I -S prelude.py '{"become": {...}}' ARGV...`` is the bot's first
step where ``user`` was given: as root of that namespace it becomes ``uid``/``gid`` (the bot's
uid outside), keeping of its capabilities only ``keep`` (in that namespace: reading the files
the sandbox shows, whatever their mode, as root did), closes ``close`` and execs ARGV.

``python -I -S prelude.py '{"env": {NAME: VALUE, ...}}' ARGV...`` sets the bot's ``env`` table and
execs ARGV: the last step before the bot's own command, so that what the bot's environment says
(``LD_PRELOAD``, ``OPENSSL_CONF``...) reaches its command alone, never a step of the referee's
(this prelude's ``become``, the starter of a prepared process).

Anything that fails stops it with one line on stderr and exit code 125 (127: ARGV cannot
be run): the bot never runs without its walls.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import struct
import sys

TYPE_CHECKING = False  # typing is not imported at run time (a few ms before every bot); mypy reads this as True
if TYPE_CHECKING:
    from typing import Any

    #: SETUP: a JSON object (see above)
    Setup = dict[str, Any]
    #: one instruction of a classic BPF program (code, jt, jf, k)
    Op = tuple[int, int, int, int]

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x1, 0x2, 0x4, 0x20, 0x1000, 0x4000, 0x40000
PR_SET_KEEPCAPS, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 8, 38, 22, 2
PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAPABILITY_VERSION_3 = 47, 2, 0x20080522

#: the errno of each group's refusal
ERRNO = {"keys": errno.ENOSYS, "memory": errno.ENOSYS, "notify": errno.ENOSYS, "locks": errno.ENOLCK}
#: fcntl's commands of each group (all architectures: the 64-bit lock commands of 32-bit ones too)
COMMANDS = {"locks": (5, 6, 7, 12, 13, 14, 36, 37, 38),  # F_GETLK, F_SETLK, F_SETLKW, their 64s, F_OFD_*
            "notify": (1024, 1025, 1026)}  # F_SETLEASE, F_GETLEASE, F_NOTIFY
#: per architecture (its AUDIT_ARCH value): the system calls of each group, fcntl's numbers, and the
#: lowest number refused as a whole (x86_64's x32 calls)
GROUPS = {
    0xC000003E: ({"memory": (29, 64, 68, 319),  # x86_64: shmget, semget, msgget, memfd_create
                  "keys": (248, 249, 250),  # add_key, request_key, keyctl
                  "notify": (253, 294, 300),  # inotify_init, inotify_init1, fanotify_init
                  "locks": (73,)}, (72,), 0x40000000),  # flock; fcntl
    0x40000003: ({"memory": (117, 393, 395, 399, 356),  # i386: ipc, semget, shmget, msgget, memfd_create
                  "keys": (286, 287, 288),
                  "notify": (291, 332, 338),
                  "locks": (143,)}, (55, 221), None),  # fcntl, fcntl64
    0xC00000B7: ({"memory": (186, 190, 194, 279),  # aarch64: msgget, semget, shmget, memfd_create
                  "keys": (217, 218, 219),
                  "notify": (26, 262),  # inotify_init1, fanotify_init
                  "locks": (32,)}, (25,), None),
}

libc = ctypes.CDLL(None, use_errno=True)


def fail(what: str) -> None:
    code = ctypes.get_errno()
    sys.stderr.write(f"referee prelude: {what}: {os.strerror(code) if code else 'failed'}\n")
    sys.exit(125)


def mount_private(setup: Setup) -> bool:
    """The sandbox's own mounts (``mounts``, ``devices``, ``overlays``) in a mount namespace of
    its own; whether every overlay could be mounted (else locks must be refused)."""
    if os.getuid() == 0:
        flags = CLONE_NEWNS
    else:  # a user namespace of its own, where it may mount
        flags = CLONE_NEWNS | CLONE_NEWUSER
    if libc.unshare(flags) != 0:
        fail("cannot make a mount namespace")
    if flags & CLONE_NEWUSER:
        uid, gid = setup["uid"], setup["gid"]
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        fail("cannot make the mount namespace private")
    for path, options in setup.get("mounts", ()):
        tmpfs(path, options, MS_NOSUID | MS_NODEV)
    if setup.get("devices"):
        devices(*setup["devices"])
    private = True
    for directory, target, empty in setup.get("overlays", ()):
        private = overlay(directory, target, empty) and private
    return private


def tmpfs(path: str, options: str, flags: int) -> None:
    os.makedirs(path, exist_ok=True)
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", flags, options.encode()) != 0:
        fail(f"cannot mount a tmpfs ({options}) on {path}")


def devices(path: str, nodes: list[list[Any]]) -> None:  # [[name, major, minor], ...]
    """The sandbox's own device nodes, on a tmpfs of their own, then read-only (a device node
    is written through, a read-only mount does not stop that)."""
    tmpfs(path, "mode=755,size=4096,nr_inodes=16", MS_NOSUID)
    for name, major, minor in nodes:
        node = os.path.join(path, name)
        os.mknod(node, 0o20666, os.makedev(major, minor))
        os.chmod(node, 0o666)
    if libc.mount(None, path.encode(), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID, None) != 0:
        fail(f"cannot make {path} read-only")


def overlay(directory: str, target: str, empty: str) -> bool:
    """``directory`` at ``target``, a read-only overlay of its own (True), or bound as it is
    where overlayfs will not take it (False)."""
    os.makedirs(target, exist_ok=True)
    os.makedirs(empty, exist_ok=True)
    escaped = [p.replace("\\", "\\\\").replace(":", "\\:").replace(",", "\\,") for p in (empty, directory)]
    options = f"lowerdir={escaped[0]}:{escaped[1]}".encode()
    if libc.mount(b"overlay", target.encode(), b"overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, options) == 0:
        return True
    if libc.mount(directory.encode(), target.encode(), None, MS_BIND | MS_REC, None) != 0:
        fail(f"cannot show {directory}")
    return False


def user_namespace(inside: int, outside: int, fd: int) -> None:
    """A user namespace made by a child that has become ``outside`` (so that the kernel's counts
    per user, up to the machine's, are of that uid alone), mapping 0 to root and ``inside`` to
    ``outside``, open on ``fd``."""
    ready, go = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:
        made = b"0"
        try:
            os.setgroups([])
            os.setresgid(outside, outside, outside)
            os.setresuid(outside, outside, outside)
            made = b"1" if libc.unshare(CLONE_NEWUSER) == 0 else b"0"
        finally:
            os.write(ready[1], made)
            os.read(go[0], 1)
            os._exit(0)
    try:
        if os.read(ready[0], 1) != b"1":
            fail("cannot make a user namespace for the bot's own uid")
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w") as f:
                f.write(f"0 0 1\n{inside} {outside} 1\n")
        namespace = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
    finally:
        os.write(go[1], b"x")
        os.waitpid(pid, 0)
    if namespace != fd:
        os.dup2(namespace, fd)
        os.close(namespace)


def refuse(groups: list[str]) -> None:
    """A seccomp filter: the calls of these groups fail (:data:`ERRNO`), on the architectures
    it knows; for fcntl, only its commands of the groups (its second argument's low 32 bits)."""
    ld_arch, ld_nr, ld_cmd = (0x20, 0, 0, 4), (0x20, 0, 0, 0), (0x20, 0, 0, 24)  # BPF_LD|W|ABS: arch, nr, args[1]
    allow = (0x06, 0, 0, 0x7FFF0000)

    def deny(group: str) -> Op:
        return 0x06, 0, 0, 0x00050000 | ERRNO[group]  # SECCOMP_RET_ERRNO

    def when(value: int, then: list[Op], compare: int = 0x15) -> list[Op]:  # BPF_JEQ (0x35: JGE): then, or skip it
        return [(compare, 0, len(then), value), *then]

    program = [ld_arch]
    for arch, (calls, fcntl, from_nr) in GROUPS.items():
        body = [ld_nr]
        if from_nr is not None:
            body += when(from_nr, [deny("keys")], 0x35)
        for group in groups:
            for nr in calls[group]:
                body += when(nr, [deny(group)])
        commands = [ld_cmd]
        for group in groups:
            for command in COMMANDS.get(group, ()):
                commands += when(command, [deny(group)])
        if len(commands) > 1:
            for nr in fcntl:
                body += when(nr, [*commands, allow])
        body.append(allow)
        program += when(arch, body)
    program.append(allow)
    if any(op[2] > 255 for op in program):
        fail("the seccomp filter is too long")
    code = b"".join(struct.pack("HBBI", *op) for op in program)
    buffer = ctypes.create_string_buffer(code)

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Program(len(program), ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        fail("cannot set no_new_privs")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        fail("cannot install the seccomp filter")


def become(uid: int, gid: int, keep: list[int], close: list[int]) -> None:
    """Root of the sandbox's user namespace becomes the bot's uid, with only the capabilities
    ``keep`` (ambient: its children keep them too)."""
    if libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0:
        fail("cannot keep capabilities")
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    mask = sum(1 << cap for cap in keep)
    header = struct.pack("Ii", CAPABILITY_VERSION_3, 0)
    data = struct.pack("6I", mask, mask, mask, 0, 0, 0)  # effective, permitted, inheritable (caps 0-31; 32-63)
    if libc.capset(header, data) != 0:
        fail("cannot set capabilities")
    for cap in keep:
        if libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0:
            fail("cannot keep a capability")
    for fd in close:
        try:
            os.close(fd)
        except OSError:
            pass


def prepare(setup: Setup) -> None:
    for path in setup.get("join", ()):
        with open(path, "w") as procs:
            procs.write(str(os.getpid()))
    token_fd = setup.get("token_fd")
    if token_fd is not None and token_fd != setup["to"]:
        os.dup2(token_fd, setup["to"])
        os.close(token_fd)
    refused = list(setup.get("refuse", ()))
    mounted = setup.get("mounts") or setup.get("overlays")
    if mounted and not mount_private(setup) and "locks" not in refused:  # an overlay could not be mounted
        refused.append("locks")
    if setup.get("user"):
        user_namespace(setup["user"]["inside"], setup["user"]["outside"], setup["user"]["fd"])
    if refused:
        refuse(refused)
    for which, value in setup.get("rlimits", ()):
        resource.setrlimit(which, tuple(value))


def main() -> None:
    try:
        setup = json.loads(sys.argv[1])
        if "become" in setup:
            become(**setup["become"])
        elif "env" in setup:
            os.environ.update(setup["env"])
        else:
            prepare(setup)
    except (OSError, ValueError) as err:
        filename = getattr(err, "filename", None)
        where = f" ({filename})" if filename else ""
        sys.stderr.write(f"referee prelude: {getattr(err, 'strerror', None) or err}{where}\n")
        sys.exit(125)
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as err:
        sys.stderr.write(f"referee prelude: cannot run {sys.argv[2]}: {err.strerror or err}\n")
        sys.exit(127)


if __name__ == "__main__":
    main()
