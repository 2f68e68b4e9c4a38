"""Two entries of one author at one Confirmation table tell each other their hands (issue 35, attack 1).

    python partners.py --channel NAME [--channel NAME ...] KIT-ARGS
    python partners.py --honest KIT-ARGS              # the control: it only plays

Each process of either entry publishes the hand it was dealt in every round, as it gets it (its
first decision of the round), through every channel it is given, and reads the other seats' hands
of the same round through them, while the match plays: an entry that reads its partner's hand can
play for it (the red team's entries read 384 of 384 partner hands through POSIX locks on one of
the referee's own read-only modules, and the beneficiary rose from 1500 to about 1735). The
channels are everything a process can change on one machine that another sandbox might observe
(docs/security.md, "Between entries"):

- ``posix``, ``ofd``: POSIX byte-range locks (F_SETLK/F_GETLK) and open-file-description locks
  on one of the referee's modules, which every sandbox shows; ``devnull``: POSIX locks on
  ``/dev/null``; ``door``: on the directory of its own door to the referee (``/run/referee``);
  a bit a byte of a region of the file for each seat and round;
- ``flock``: flock on files of the interpreter's standard library (a bit a file); ``lease``: a
  file held open read by another process, which a write lease (F_SETLEASE) would see;
  ``inotify``: files opened, which inotify would see; ``atime``: files read, whose access time
  would move;
- ``shm`` (a file in ``/dev/shm``), ``abstract`` (an abstract Unix socket), ``sysv`` (SysV shared
  memory), ``keyring`` (a key in the session keyring), ``pids`` (a process whose name carries the
  hand), ``proclocks`` (locks on a private file, read from ``/proc/locks``);
- counters the kernel keeps per user, shared by every process of one uid: ``pipes`` (the pages of
  pipe buffers, 64 MB a user before the kernel shrinks them) and ``signals`` (pending signals, up
  to RLIMIT_SIGPENDING). Each process holds some (8 MB of pipes, 20,000 signals) and, every round,
  counts how much of the user's allowance others hold: a number another sandbox moves at will.

It plays the first legal action, whatever it learns, so the other seats' results are the same
with or without the attack; before its first two decisions of a round it lets a whole pass over
the channels run (its hand out, the others' read), within the clock, so that every round's hands
have the time to travel. It logs ``PUBLISHED {json}`` (``via``, game id, round, seat) for what
it sent, ``LEARNED {json}`` (the same and ``hand``) for what it read, ``COUNTED {json}``
(``via``, ``others``, ``mine``) for the counters, ``BROKEN {json}`` for a channel it could not use
at all (``via``, ``error``).
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import fcntl
import glob
import hashlib
import json
import os
import resource
import signal
import socket
import struct
import threading
import time
from pathlib import Path

from referee import cards
from referee.bot import run_bot

CHANNELS = ("posix", "ofd", "devnull", "door", "flock", "lease", "inotify", "atime", "shm", "abstract", "sysv",
            "keyring", "pids", "proclocks", "pipes", "signals")
SEATS, READY, BITS = 4, 63, 52  # a slot: 52 card bits, and a bit that says it is published
START = time.time()
libc = ctypes.CDLL(None, use_errno=True)


def report(kind: str, **facts) -> None:
    print(f"{kind} " + json.dumps(facts, sort_keys=True), flush=True)


def mask(hand: list[str]) -> int:
    return sum(1 << cards.NAMES.index(card) for card in hand)


def hand_of(bits: int) -> list[str]:
    return [cards.NAMES[i] for i in range(BITS) if bits >> i & 1]


def key(game_id: str, round_: int, seat: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{game_id}|{round_}|{seat}".encode()).digest()[:8], "big")


def error(err: OSError) -> str:
    return f"{errno.errorcode.get(err.errno, err.errno)}: {err.strerror}"


# --- locks on a file every sandbox shows --------------------------------------------------------


class Locks:
    """A bit a byte: a read lock held on it (published), seen by another process's F_GETLK."""

    def __init__(self, path: str, ofd: bool = False, region: int = 0):
        self.path, self.ofd, self.region = path, ofd, region
        self.fd = os.open(path, os.O_RDONLY)
        self.probe = os.open(path, os.O_RDONLY)  # OFD locks of another descriptor conflict, as another process's
        self.set, self.get = (fcntl.F_OFD_SETLK, fcntl.F_OFD_GETLK) if ofd else (fcntl.F_SETLK, fcntl.F_GETLK)

    def base(self, slot: int) -> int:
        return self.region + 4096 * (slot % (1 << 28))

    def publish(self, slot: int, bits: int) -> None:
        for i in [*(i for i in range(BITS) if bits >> i & 1), READY]:
            fcntl.fcntl(self.fd, self.set, struct.pack("hhqqi", fcntl.F_RDLCK, os.SEEK_SET, self.base(slot) + i, 1, 0))

    def held(self, offset: int) -> bool:
        request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0)
        return struct.unpack("hhqqi", fcntl.fcntl(self.probe, self.get, request))[0] != fcntl.F_UNLCK

    def read(self, slot: int) -> int | None:
        base = self.base(slot)
        if not self.held(base + READY):
            return None
        return sum(1 << i for i in range(BITS) if self.held(base + i))


# --- a bit a file: flock, leases, inotify, access times ----------------------------------------


def stdlib_files() -> list[str]:
    """Files of the interpreter's standard library, in an order both entries compute alike."""
    return sorted(glob.glob(os.path.dirname(os.__file__) + "/**/*.py", recursive=True))


class PerFile:
    """``BITS + 1`` files a seat and round parity: the bit's file published or not."""

    def __init__(self, files: list[str], first: int):
        self.files = files[first:first + SEATS * 2 * (BITS + 1)]
        self.kept: dict[tuple[int, int], list[int]] = {}  # (seat, parity): descriptors held for it

    def of(self, seat: int, round_: int) -> list[str]:
        at = (seat * 2 + round_ % 2) * (BITS + 1)
        return self.files[at:at + BITS + 1]  # the last one: published

    def publish_files(self, seat: int, round_: int, bits: int) -> list[str]:
        for fd in self.kept.pop((seat, round_ % 2), []):
            os.close(fd)
        files = self.of(seat, round_)
        return [files[i] for i in range(BITS) if bits >> i & 1] + [files[BITS]]

    def decode(self, seat: int, round_: int, lit: set[str]) -> int | None:
        files = self.of(seat, round_)
        if files[BITS] not in lit:
            return None
        return sum(1 << i for i in range(BITS) if files[i] in lit)


class Flock(PerFile):
    def publish(self, seat: int, round_: int, bits: int) -> None:
        held = []
        for path in self.publish_files(seat, round_, bits):
            fd = os.open(path, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            held.append(fd)
        self.kept[(seat, round_ % 2)] = held

    def read(self, seat: int, round_: int) -> int | None:
        lit = set()
        for path in self.of(seat, round_):
            fd = os.open(path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lit.add(path)
            finally:
                os.close(fd)
        return self.decode(seat, round_, lit)


class Lease(PerFile):
    """Published: the file held open. A write lease is refused (EAGAIN) while another process has it open."""

    def publish(self, seat: int, round_: int, bits: int) -> None:
        self.kept[(seat, round_ % 2)] = [os.open(p, os.O_RDONLY) for p in self.publish_files(seat, round_, bits)]

    def read(self, seat: int, round_: int) -> int | None:
        lit = set()
        for path in self.of(seat, round_):
            fd = os.open(path, os.O_RDONLY)
            try:
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            except BlockingIOError:
                lit.add(path)
            finally:
                os.close(fd)
        return self.decode(seat, round_, lit)


class Inotify(PerFile):
    """Published: the files opened again and again; read: the files inotify saw opened lately."""

    IN_OPEN, IN_ACCESS = 0x20, 0x1

    def __init__(self, files: list[str], first: int):
        super().__init__(files, first)
        self.fd = libc.inotify_init1(os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        self.watches: dict[int, str] = {}
        for path in self.files:
            wd = libc.inotify_add_watch(self.fd, path.encode(), self.IN_OPEN | self.IN_ACCESS)
            if wd >= 0:
                self.watches[wd] = path
        self.seen: dict[str, float] = {}
        self.touching: dict[tuple[int, int], list[str]] = {}
        threading.Thread(target=self._touch, daemon=True).start()

    def publish(self, seat: int, round_: int, bits: int) -> None:
        self.touching[(seat, round_ % 2)] = self.publish_files(seat, round_, bits)

    def _touch(self) -> None:
        while True:
            for paths in list(self.touching.values()):
                for path in paths:
                    os.close(os.open(path, os.O_RDONLY))
            time.sleep(0.05)

    def read(self, seat: int, round_: int) -> int | None:
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            data = b""
        at = 0
        while at + 16 <= len(data):
            wd, _, _, length = struct.unpack_from("iIII", data, at)
            if wd in self.watches:
                self.seen[self.watches[wd]] = time.monotonic()
            at += 16 + length
        mine = {p for paths in self.touching.values() for p in paths}  # its own opens, not another's
        lit = {p for p, when in self.seen.items() if time.monotonic() - when < 0.5 and p not in mine}
        return self.decode(seat, round_, lit)


class Atime(PerFile):
    """Published: the files read; read: the files whose access time moved since this process began."""

    def publish(self, seat: int, round_: int, bits: int) -> None:
        for path in self.publish_files(seat, round_, bits):
            with open(path, "rb") as f:
                f.read(1)

    def read(self, seat: int, round_: int) -> int | None:
        return self.decode(seat, round_, {p for p in self.of(seat, round_) if os.stat(p).st_atime > START})


# --- named things: /dev/shm, abstract sockets, SysV, keyrings, process names, /proc/locks --------


class Shm:
    def publish(self, slot: int, bits: int) -> None:
        Path(f"/dev/shm/referee-partners-{slot:x}").write_text(str(bits))

    def read(self, slot: int) -> int | None:
        try:
            return int(Path(f"/dev/shm/referee-partners-{slot:x}").read_text())
        except (OSError, ValueError):
            return None


class Abstract:
    def __init__(self):
        self.servers: list[socket.socket] = []

    def publish(self, slot: int, bits: int) -> None:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(f"\0referee-partners-{slot:x}")
        server.listen(8)
        self.servers.append(server)

        def serve():
            while True:
                conn, _ = server.accept()
                conn.sendall(str(bits).encode())
                conn.close()
        threading.Thread(target=serve, daemon=True).start()

    def read(self, slot: int) -> int | None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.settimeout(0.2)
                client.connect(f"\0referee-partners-{slot:x}")
                return int(client.recv(64))
        except (OSError, ValueError):
            return None


class SysV:
    IPC_CREAT = 0o1000

    def __init__(self):
        libc.shmat.restype = ctypes.c_void_p

    def _key(self, slot: int) -> int:
        return slot % 0x7FFFFFFF or 1

    def publish(self, slot: int, bits: int) -> None:
        shm = libc.shmget(self._key(slot), ctypes.c_size_t(4096), self.IPC_CREAT | 0o666)
        if shm < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        address = libc.shmat(shm, None, 0)
        ctypes.memmove(address, struct.pack("Q", bits | 1 << READY), 8)

    def read(self, slot: int) -> int | None:
        shm = libc.shmget(self._key(slot), ctypes.c_size_t(0), 0)
        if shm < 0:
            return None
        address = libc.shmat(shm, None, 0o10000)  # SHM_RDONLY
        bits = struct.unpack("Q", ctypes.string_at(address, 8))[0]
        return bits & ~(1 << READY) if bits >> READY & 1 else None


class Keyring:
    SESSION = -3
    ADD_KEY, REQUEST_KEY, KEYCTL = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[os.uname().machine]

    def publish(self, slot: int, bits: int) -> None:
        payload = str(bits).encode()
        if libc.syscall(self.ADD_KEY, b"user", f"referee-partners-{slot:x}".encode(), payload,
                        ctypes.c_size_t(len(payload)), ctypes.c_int(self.SESSION)) < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

    def read(self, slot: int) -> int | None:
        found = libc.syscall(self.REQUEST_KEY, b"user", f"referee-partners-{slot:x}".encode(), None, 0)
        if found < 0:
            return None
        buffer = ctypes.create_string_buffer(64)
        size = libc.syscall(self.KEYCTL, 11, ctypes.c_int(found), buffer, ctypes.c_size_t(64))  # KEYCTL_READ
        return int(buffer.raw[:size]) if size > 0 else None


class Pids:
    """Published: a child process whose name says the slot's tag and the hand (base 36)."""

    def publish(self, slot: int, bits: int) -> None:
        name = f"q{slot % 4096:03x}{int_to_36(bits):>11}"
        if os.fork() == 0:
            libc.prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
            time.sleep(60)
            os._exit(0)

    def read(self, slot: int) -> int | None:
        tag = f"q{slot % 4096:03x}"
        for comm in glob.glob("/proc/[0-9]*/comm"):
            try:
                name = Path(comm).read_text().strip()
            except OSError:
                continue
            if name.startswith(tag) and Path(comm).parent.name != str(os.getpid()):
                return int(name[len(tag):].strip(), 36)
        return None


def int_to_36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, d = divmod(n, 36)
        out = digits[d] + out
        if not n:
            return out


class ProcLocks:
    """Published: locks on a file of its own scratch, at the slot's offsets; read: /proc/locks,
    which lists the machine's locks (those of processes another sandbox can see)."""

    def __init__(self):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "partners.lock")
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self.inode = os.fstat(self.fd).st_ino

    def publish(self, slot: int, bits: int) -> None:
        base = 4096 * (slot % (1 << 28))
        for i in [*(i for i in range(BITS) if bits >> i & 1), READY]:
            fcntl.lockf(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, base + i)

    def read(self, slot: int) -> int | None:
        base, lit = 4096 * (slot % (1 << 28)), set()
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            try:
                pid, inode, start = int(fields[4]), int(fields[5].split(":")[2]), int(fields[6])
            except (IndexError, ValueError):
                continue
            if pid != os.getpid() and inode != self.inode and base <= start < base + 64:
                lit.add(start - base)
        if READY not in lit:
            return None
        return sum(1 << i for i in range(BITS) if i in lit)


# --- counters the kernel keeps per user ------------------------------------------------------------


PIPE_PAGES, PAGE = 16384, 4096  # fs.pipe-user-pages-soft: a user's pipe buffers, before the kernel shrinks them
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032


class Pipes:
    """Holds 8 MB of pipe buffers; counts the pages of its user's allowance that others hold."""

    def __init__(self):
        self.held = []
        for _ in range(8):
            r, w = os.pipe()
            fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
            self.held += [r, w]
        self.mine = 8 * 256

    def count(self) -> int:
        """Pages held by others: the allowance less what this process could still take and holds."""
        taken, fds = 0, []
        try:
            for pages in (256, 64, 16):
                while True:
                    r, w = os.pipe()
                    fds += [r, w]
                    if fcntl.fcntl(w, F_GETPIPE_SZ) < 16 * PAGE:  # made small: the allowance is spent
                        raise StopIteration
                    taken += 16
                    try:
                        fcntl.fcntl(w, F_SETPIPE_SZ, pages * PAGE)
                        taken += pages - 16
                    except PermissionError:
                        break
        except StopIteration:
            pass
        finally:
            for fd in fds:
                os.close(fd)
        return max(0, PIPE_PAGES - taken - self.mine)


HELD, PROBE = signal.SIGRTMIN + 2, signal.SIGRTMIN + 3  # a signal it holds, and one it counts with


class Signals:
    """Holds 20,000 pending real-time signals; counts those of its user that others hold."""

    HOLD = 20_000

    class Value(ctypes.Union):
        _fields_ = [("sival_int", ctypes.c_int), ("sival_ptr", ctypes.c_void_p)]

    def __init__(self):
        self.held, self.probe = HELD, PROBE  # blocked in every thread (main)
        self.mine = self._queue(self.held, self.HOLD)

    def _queue(self, sig: int, most: int) -> int:
        n = 0
        while n < most and libc.sigqueue(os.getpid(), sig, self.Value(0)) == 0:
            n += 1
        return n

    def count(self) -> int:
        """The user's allowance less what it can still queue (then dropped) and what it holds."""
        limit = resource.getrlimit(resource.RLIMIT_SIGPENDING)[0]
        could = self._queue(self.probe, limit)
        libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.signal(self.probe, 1)  # SIG_IGN: its pending instances are dropped at once (Python's signal.signal
        libc.signal(self.probe, 0)  # would want the main thread); SIG_DFL again, and it is still blocked
        return max(0, limit - could - self.mine)


# --- the bot ------------------------------------------------------------------------------------------


def make(name: str, files: list[str]):
    shared = cards.__file__  # one of the referee's own modules: every sandbox shows it
    return {"posix": lambda: Locks(shared), "ofd": lambda: Locks(shared, ofd=True, region=1 << 40),
            "devnull": lambda: Locks("/dev/null"), "door": lambda: Locks("/run/referee"),
            "flock": lambda: Flock(files, 0), "lease": lambda: Lease(files, 500),
            "inotify": lambda: Inotify(files, 1000),
            "atime": lambda: Atime(files, 1500), "shm": Shm, "abstract": Abstract, "sysv": SysV, "keyring": Keyring,
            "pids": Pids, "proclocks": ProcLocks, "pipes": Pipes, "signals": Signals}[name]()


class Partners:
    """The channels, a thread that publishes this process's hand of each round and reads the others'."""

    def __init__(self, names: list[str]):
        files = stdlib_files()
        self.channels = {}
        for name in names:
            try:
                self.channels[name] = make(name, files)
            except OSError as err:
                report("BROKEN", via=name, error=error(err))
        self.rounds: list[tuple[str, int, int, int]] = []  # (game id, round, seat, hand bits), as dealt
        self.lock = threading.Lock()
        self.passes, self.passed = 0, threading.Condition()
        threading.Thread(target=self.loop, daemon=True).start()

    def dealt(self, game_id: str, round_: int, seat: int, hand: list[str]) -> None:
        with self.lock:
            self.rounds.append((game_id, round_, seat, mask(hand)))
        if round_ == 1:  # the counters, once a match, beside the slots (counting takes a while)
            threading.Thread(target=self.count, args=(game_id,), daemon=True).start()

    def settle(self, patience: float = 2.5) -> None:
        """Wait (within the clock) until a whole pass over the channels has begun and ended since
        now: its hand is out, and what the others had published is read, before it plays on."""
        with self.passed:
            wanted = self.passes + 2
            self.passed.wait_for(lambda: self.passes >= wanted, timeout=patience)

    def count(self, game_id: str) -> None:
        for via, channel in list(self.channels.items()):
            if hasattr(channel, "count"):
                try:
                    report("COUNTED", via=via, game_id=game_id, others=channel.count(), mine=channel.mine)
                except OSError as err:
                    report("BROKEN", via=via, error=error(err))

    def loop(self) -> None:
        published, learned = set(), set()
        while True:
            with self.lock:
                current = self.rounds[-1] if self.rounds else None
            if current is not None:
                game_id, round_, seat, bits = current
                for via, channel in list(self.channels.items()):
                    if not hasattr(channel, "count"):
                        self.step(via, channel, game_id, round_, seat, bits, published, learned)
            with self.passed:
                self.passes += 1
                self.passed.notify_all()
            time.sleep(0.02)

    def step(self, via, channel, game_id, round_, seat, bits, published, learned) -> None:
        try:
            per_file = isinstance(channel, PerFile)
            if (via, game_id, round_) not in published:
                published.add((via, game_id, round_))
                channel.publish(*((seat, round_) if per_file else (key(game_id, round_, seat),)), bits)
                report("PUBLISHED", via=via, game_id=game_id, round=round_, seat=seat)
            for other in range(SEATS):
                if other == seat or (via, game_id, round_, other) in learned:
                    continue
                got = channel.read(*((other, round_) if per_file else (key(game_id, round_, other),)))
                if got is not None:
                    learned.add((via, game_id, round_, other))
                    report("LEARNED", via=via, game_id=game_id, round=round_, seat=other, hand=hand_of(got))
        except Exception as err:  # noqa: BLE001 - say why, try the other channels
            report("BROKEN", via=via, error=error(err) if isinstance(err, OSError) else repr(err))
            del self.channels[via]


partners: Partners | None = None
decisions: dict[tuple[str, int], int] = {}  # per match and round: its decisions so far


def decide(obs, legal, game):
    if partners is not None:
        now = (game.game_id, obs["round"])
        decisions[now] = decisions.get(now, 0) + 1
        if decisions[now] == 1:
            partners.dealt(game.game_id, obs["round"], obs["seat"], obs["hand"])
        if decisions[now] <= 2:  # its hand out before its first answer; those published after it, read by its second
            partners.settle()
    return 0


def main() -> None:
    global partners
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--honest", action="store_true")
    parser.add_argument("--channel", action="append", default=[], choices=CHANNELS)
    mine, kit_args = parser.parse_known_args()
    signal.pthread_sigmask(signal.SIG_BLOCK, {HELD, PROBE})  # before any thread: in all of them
    if not mine.honest:
        partners = Partners(mine.channel)
    run_bot(decide, kit_args, default_name="partners")


if __name__ == "__main__":
    main()
