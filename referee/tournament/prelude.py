"""What runs between the launcher's fork and a bot's exec: ``python -I -S prelude.py SETUP ARGV...``.

Not imported: the launcher runs this file by its path (standard library only, no site: a
few ms), and it execs ARGV (the bot, or bubblewrap with the bot) once SETUP, a JSON object,
is done, in this order:

- ``join``: the cgroup files (``.../cgroup.procs``) to write its pid into;
- ``mounts``: tmpfs to mount, ``[[path, options], ...]`` in order (a parent before its
  children), in a mount namespace of its own, private, so that no one else sees them; a
  user other than root first makes a user namespace of its own, where it is root (``uid``,
  ``gid``: its ids outside, mapped to 0; bubblewrap maps them back with ``--uid``/``--gid``).
  bubblewrap binds them into the sandbox: this is how a bot's tmpfs get an inode count,
  which bubblewrap 0.8 cannot give;
- ``refuse``: groups of system calls that fail with ENOSYS, by a seccomp filter: ``"keys"``
  (add_key, request_key, keyctl: the kernel's keyrings, which every process of a session
  shares, the runner's among them; a bot would read the runner's keys and pass its own to its
  twin through them, whatever the sandbox) and ``"memory"`` (memfd_create and the SysV IPC
  calls shmget, semget, msgget: memory they hold lies outside any address space, so where no
  memory cgroup holds a bot, nothing else would bound it);
- ``rlimits``: ``[[resource, [soft, hard]], ...]``;
- ``token_fd``, ``to``: the token's pipe moved onto its descriptor.

Anything that fails stops it with one line on stderr and exit code 125 (127: ARGV cannot
be run): the bot never runs without its walls.
"""

import ctypes
import errno
import json
import os
import resource
import struct
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2

#: per architecture (its AUDIT_ARCH value): the system calls of each group, and the lowest number
#: refused as a whole (x86_64's x32 calls)
REFUSED = {
    0xC000003E: ({"memory": (29, 64, 68, 319),  # x86_64: shmget, semget, msgget, memfd_create
                  "keys": (248, 249, 250)}, 0x40000000),  # add_key, request_key, keyctl
    0x40000003: ({"memory": (117, 393, 395, 399, 356),  # i386: ipc, semget, shmget, msgget, memfd_create
                  "keys": (286, 287, 288)}, None),
    0xC00000B7: ({"memory": (186, 190, 194, 279),  # aarch64: msgget, semget, shmget, memfd_create
                  "keys": (217, 218, 219)}, None),
}

libc = ctypes.CDLL(None, use_errno=True)


def fail(what: str) -> None:
    code = ctypes.get_errno()
    sys.stderr.write(f"referee prelude: {what}: {os.strerror(code) if code else 'failed'}\n")
    sys.exit(125)


def mount_private(mounts: list, uid: int, gid: int) -> None:
    if os.getuid() == 0:
        flags = CLONE_NEWNS
    else:  # a user namespace of its own, where it may mount
        flags = CLONE_NEWNS | CLONE_NEWUSER
    if libc.unshare(flags) != 0:
        fail("cannot make a mount namespace")
    if flags & CLONE_NEWUSER:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        fail("cannot make the mount namespace private")
    for path, options in mounts:
        os.makedirs(path, exist_ok=True)
        if libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()) != 0:
            fail(f"cannot mount a tmpfs ({options}) on {path}")


def refuse(groups: list) -> None:
    """A seccomp filter: the calls of these groups of REFUSED fail with ENOSYS, on the architectures
    it knows."""
    ld_arch, ld_nr = (0x20, 0, 0, 4), (0x20, 0, 0, 0)  # BPF_LD | BPF_W | BPF_ABS: seccomp_data.arch, .nr
    allow, deny = (0x06, 0, 0, 0x7FFF0000), (0x06, 0, 0, 0x00050000 | errno.ENOSYS)  # BPF_RET
    program = [ld_arch]
    for arch, (calls, from_nr) in REFUSED.items():
        numbers = [nr for group in groups for nr in calls[group]]
        body = [ld_nr]
        if from_nr is not None:
            body.append(("jge", from_nr))
        body += [("jeq", nr) for nr in numbers]
        body.append(allow)
        program.append((0x15, 0, len(body), arch))  # BPF_JEQ: this architecture, or skip its body
        program += body
    program.append(allow)
    deny_at = len(program)
    program.append(deny)
    code = b""
    for i, op in enumerate(program):
        if op[0] in ("jeq", "jge"):  # to deny if true, on otherwise
            op = (0x15 if op[0] == "jeq" else 0x35, deny_at - i - 1, 0, op[1])
        code += struct.pack("HBBI", *op)
    buffer = ctypes.create_string_buffer(code)

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Program(len(program), ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        fail("cannot set no_new_privs")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        fail("cannot install the seccomp filter")


def prepare(setup: dict) -> None:
    for path in setup.get("join", ()):
        with open(path, "w") as procs:
            procs.write(str(os.getpid()))
    if setup.get("mounts"):
        mount_private(setup["mounts"], setup["uid"], setup["gid"])
    if setup.get("refuse"):
        refuse(setup["refuse"])
    for which, value in setup.get("rlimits", ()):
        resource.setrlimit(which, tuple(value))
    token_fd, to = setup.get("token_fd"), setup.get("to")
    if token_fd is not None and token_fd != to:
        os.dup2(token_fd, to)
        os.close(token_fd)


def main() -> None:
    try:
        prepare(json.loads(sys.argv[1]))
    except (OSError, ValueError) as err:
        where = f" ({err.filename})" if getattr(err, "filename", None) else ""
        sys.stderr.write(f"referee prelude: {getattr(err, 'strerror', None) or err}{where}\n")
        sys.exit(125)
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as err:
        sys.stderr.write(f"referee prelude: cannot run {sys.argv[2]}: {err.strerror or err}\n")
        sys.exit(127)


if __name__ == "__main__":
    main()
