"""A hostile Aegis bot that tries to run before its turn, in the process prepared for its next match.

Under isolation = "match" a bot's next process may be started while its last one plays; it runs
only the referee's starter (referee/hosting/starter.py), which imports the kit and waits for its
token, written once the last process is gone. This bot plants code where a Python start-up
would run it early, so that, if the starter ran any of it, it would run while the last process
still plays (and could take over what it knows):

- ``sitecustomize.py`` and ``usercustomize.py`` in its directory, which ``site`` imports at
  start-up when its directory is on the path (``--env``: the test gives it ``PYTHONPATH=.``);
- ``typing_extensions.py`` in its directory, a module the kit's own imports load (the starter
  imports the kit before the token comes): a shim that marks, then loads the real one.

Each planted file, when it runs, logs ``EARLY {"what", "began", "pid", "at"}`` (``began``: when its
process began, from ``/proc/self/stat``; ``at``: the boot clock). The bot itself logs ``FIRST``
(the same fields) as its first line and ``LAST`` once its session is over, and always plays the
first legal action (its opponent's results are the same whatever it does). ``--plant DIR``
writes the planted files into DIR (the test's set-up).

    python early.py (the kit's arguments)       python early.py --plant DIR
"""

from __future__ import annotations

import os
import sys

MARK = '''
import json, os, time
def _began():
    with open("/proc/self/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
print("{kind} " + json.dumps({{"what": "{what}", "began": _began(), "pid": os.getpid(),
                               "at": time.clock_gettime(time.CLOCK_BOOTTIME)}}), flush=True)
'''

SHIM = '''
import importlib, os, sys
_here = os.path.dirname(os.path.abspath(__file__))
_path = sys.path[:]
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules[__name__]
try:
    _real = importlib.import_module(__name__)
finally:
    sys.path[:] = _path
sys.modules[__name__] = _real
'''


def plant(directory: str) -> None:
    for name in ("sitecustomize", "usercustomize"):
        with open(os.path.join(directory, f"{name}.py"), "w") as out:
            out.write(MARK.format(kind="EARLY", what=name))
    with open(os.path.join(directory, "typing_extensions.py"), "w") as out:
        out.write(MARK.format(kind="EARLY", what="typing_extensions") + SHIM)


def mark(kind: str) -> None:
    exec(MARK.format(kind=kind, what="bot"))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plant"]:
        plant(sys.argv[2])
        sys.exit(0)
    mark("FIRST")
    from referee.bot import run_bot

    run_bot(lambda observation, legal, game: 0, default_name="early")
    mark("LAST")
