"""An uploaded bot's build: its build command, run in a copy of its version, in the sandbox.

The version itself is immutable (:mod:`referee.hosting.uploads`); the build runs in a copy
(``dest``) that only it may write: in bubblewrap, with no network (not even the referee's: no
socket), the system and the runtime read-only, home directories and the server's state masked,
within a time cap (its whole process group killed at the cap) and the file-size and process
limits of a bot. What it printed is kept, escaped and capped (:mod:`referee.untrusted`), for its
owner to read. Once built, the copy is made read-only: it is what the bot's matches run.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.hosting import sandbox as tsandbox
from referee.hosting.launcher import program_of
from referee.model import SandboxMode
from referee.untrusted import capped, escaped

#: how much of a build's output is kept (characters, the tail)
LOG_CHARS = 64_000
#: a build's limits: file size (MB) and open files
FILE_MB, OPEN_FILES = 512, 1024


@dataclass(frozen=True)
class Built:
    ok: bool
    log: str
    seconds: float


def copy_version(source: Path, dest: Path) -> None:
    """``source``'s files into a new writable ``dest``."""
    shutil.copytree(source, dest, symlinks=True, copy_function=shutil.copyfile)
    for root, _dirs, files in os.walk(dest):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644 | (0o111 if _executable(source, dest, root, name) else 0))


def _executable(source: Path, dest: Path, root: str, name: str) -> bool:
    original = source / os.path.relpath(os.path.join(root, name), dest)
    try:
        return bool(original.stat().st_mode & stat.S_IXUSR)
    except OSError:
        return False


def freeze(directory: Path) -> None:
    """Make ``directory`` read-only, all through (what the matches run may not change)."""
    for root, _dirs, files in os.walk(directory, topdown=False):
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & 0o555)
        os.chmod(root, 0o555)


def thaw(directory: Path) -> None:
    """Writable again, to remove it."""
    for root, dirs, _ in os.walk(directory):
        os.chmod(root, 0o755)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)


def run_build(argv: Sequence[str], dest: Path, time_s: float, mode: SandboxMode,
              hide: Sequence[Path] = ()) -> Built:
    """Run the build command ``argv`` in ``dest`` (writable) within ``time_s``; ``mode``: the
    competition's sandbox ("none" runs it as it is, which only an organiser testing may ask)."""
    box = tsandbox.resolve(mode)
    argv = [program_of(argv[0]), *argv[1:]]
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="referee-build-") as empty:
        if box.isolated:
            args = tsandbox.bwrap_command(argv, cwd=dest, socket_dir=Path(empty), hide=hide, scratch_mb=FILE_MB)
            at = args.index("--chdir")
            args[at:at] = ["--bind", str(dest.resolve()), str(dest.resolve())]  # its copy: the one place it writes
            env = None
        else:
            args = list(argv)
            env = {"PATH": tsandbox.PATH, "HOME": empty, "TMPDIR": empty, "LANG": "C.UTF-8"}
        try:
            process = subprocess.Popen(args, cwd=dest, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_limits)
        except OSError as err:
            return Built(False, f"the build command could not start: {escaped(str(err), one_line=True)}", 0.0)
        try:
            out, _ = process.communicate(timeout=time_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill(process)
            out, _ = process.communicate()
            timed_out = True
    seconds = time.monotonic() - start
    text = escaped(out.decode("utf-8", "replace"))
    if len(text) > LOG_CHARS:
        text = f"[... {len(text) - LOG_CHARS} characters before this not kept]\n" + text[-LOG_CHARS:]
    if timed_out:
        return Built(False, text + f"\n[the build ran past its cap of {time_s:g} s and was stopped]", seconds)
    if process.returncode != 0:
        return Built(False, text + f"\n[the build failed: exit code {process.returncode}]", seconds)
    return Built(True, text + f"\n[built in {seconds:.1f} s]", seconds)


def _limits() -> None:  # between fork and exec
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_MB << 20, FILE_MB << 20))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def shown_command(argv: Sequence[str]) -> str:
    return capped(" ".join(argv), 400)
