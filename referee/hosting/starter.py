"""How a process for one match starts: ``python -I -m referee.hosting.starter -- ARGV...``.

With ``isolation = "match"`` every process started for one match begins here, and a bot's next
one may be started while its last one still plays (a prepared process:
:meth:`~referee.hosting.launcher.Launcher.start_for_match` with ``held=True``), in its own
sandbox, with its limits. It runs only this module, the referee's own code, until the launcher
writes its token into descriptor 3: at once for a process not prepared, and for a prepared one
once every other process of that bot is gone (:meth:`~referee.hosting.launcher.Launcher.release`).
Meanwhile it does what every start of a Python bot on the kit does: the interpreter starts and
imports the kit (:data:`PRELOAD`: gRPC, protobuf, the generated messages), the slow part of a
start (docs/benchmarks.md). Then, once the token has come:

- it hands the token on in a pipe of its own at descriptor 3, as the launcher would have;
- **warm**: where ARGV is ``python [-P] -m MODULE ARGS...`` or ``python [-P] SCRIPT.py ARGS...``
  (a file) with this interpreter, it runs the bot in this process as that command would (``sys.argv``,
  ``sys.path[0]``, ``__main__``), the kit already imported;
- **cold** otherwise (another program, other interpreter options, the bot's ``env`` table
  (ARGV is then the prelude that sets it, :func:`~referee.hosting.sandbox.with_env`), a
  ``PYTHON*`` variable in the environment, a user site that exists, or a module of
  :data:`PRELOAD`'s that the bot's first path would give otherwise): it execs ARGV, as if this
  had not been.

It runs isolated (``-I``: no ``PYTHON*`` variable, no user site, no current directory on the
path), so nothing of the bot's (its files, its environment) runs before its token comes; it
prints nothing (the bot's log is the bot's). Without a token (its descriptor closed: the
match it was made for did not need it) it ends with code 0, having run nothing of the bot's.
"""

from __future__ import annotations

import importlib.machinery
import os
import runpy
import site
import sys
from typing import NamedTuple

#: what a prepared process imports before its token comes: the bot kit, and with it gRPC and protobuf
PRELOAD = "referee.bot"
#: the descriptor the token comes through (referee.hosting.sandbox.TOKEN_FD)
TOKEN_FD = 3
#: variables of the environment this process does as the interpreter would, once the bot runs here
#: (any other ``PYTHON*`` one: the bot runs cold)
EMULATED = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")


def preload() -> set[str]:
    """Import :data:`PRELOAD`; the top-level names of the modules that brought (none if it failed)."""
    before = set(sys.modules)
    try:
        __import__(PRELOAD)
    except Exception:  # the bot may not need it: then it runs cold, as without this
        return set()
    return {name.partition(".")[0] for name in set(sys.modules) - before}


def read_token() -> str:
    """The token, once the launcher writes it (a line); "" if its descriptor closes without one."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(TOKEN_FD, 256)
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace").strip()


def hand_on(token: str) -> None:
    """The token in a new pipe at :data:`TOKEN_FD`, for the bot to read as the launcher's."""
    reader, writer = os.pipe()
    os.write(writer, f"{token}\n".encode())
    os.close(writer)
    os.dup2(reader, TOKEN_FD)
    os.close(reader)


class Warm(NamedTuple):
    """A command this process can run in place: ``python [-P] -m MODULE ARGS`` or ``python [-P] SCRIPT.py ARGS``."""

    module: bool
    target: str
    args: list[str]
    path: str | None  # what it puts first on ``sys.path``: the script's directory, or for -m the current one


def warm_form(argv: list[str]) -> Warm | None:
    """The command ``argv`` as one this process can run in place; None if it cannot."""
    if len(argv) < 2 or argv[0] != sys.executable:
        return None
    safe = argv[1] == "-P"  # nothing put first on the path
    rest = argv[2:] if safe else argv[1:]
    if len(rest) >= 2 and rest[0] == "-m" and rest[1] and not rest[1].startswith("-"):
        return Warm(True, rest[1], rest[2:], None if safe else os.getcwd())
    if rest and rest[0].endswith(".py") and os.path.isfile(rest[0]):  # not a directory or a zip to run
        return Warm(False, rest[0], rest[1:], None if safe else os.path.dirname(os.path.realpath(rest[0])))
    return None


def shadowed(path: str, names: set[str]) -> bool:
    """Whether one of ``names``, imported already, would have come from ``path`` instead."""
    for name in names:
        loaded = sys.modules.get(name)
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, [path])
        except (ImportError, OSError, ValueError):
            return True
        if spec is None:
            continue
        if loaded is None:
            return True
        origin = spec.origin if spec.origin not in (None, "namespace") else None
        if origin is None or os.path.realpath(origin) != os.path.realpath(getattr(loaded, "__file__", "") or ""):
            return True
    return False


def run_warm(warm: Warm) -> None:
    """Run the bot here, as its command would."""
    if warm.path is not None:
        sys.path.insert(0, warm.path)
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        sys.dont_write_bytecode = True
    if os.environ.get("PYTHONUNBUFFERED"):
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(write_through=True)  # type: ignore[union-attr]
    sys.argv = [warm.target, *warm.args]  # run_module puts the module's file in argv[0]
    if warm.module:
        runpy.run_module(warm.target, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(warm.target, run_name="__main__")


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        sys.exit(2)
    form = warm_form(argv)
    # what an interpreter started otherwise would do differently (here: -I)
    cold = form is None or any(k.startswith("PYTHON") and k not in EMULATED for k in os.environ) \
        or os.path.isdir(site.getusersitepackages())
    loaded = set() if cold else preload()
    token = read_token()
    if not token:
        sys.exit(0)  # not needed: nothing of the bot's has run
    hand_on(token)
    if form is not None and loaded and (form.path is None or not shadowed(form.path, loaded)):
        run_warm(form)
        return
    try:
        os.execvp(argv[0], argv)
    except OSError as err:
        sys.stderr.write(f"cannot run {argv[0]}: {err.strerror or err}\n")
        sys.exit(127)


if __name__ == "__main__":
    main()
