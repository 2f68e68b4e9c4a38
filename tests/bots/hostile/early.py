"""A hostile Aegis bot that tries to run before its turn, in the process prepared for its next match.

Under isolation = "match" a bot's next process may be started while its last one plays; it runs
only the referee's starter (referee/hosting/starter.py), which imports the kit and waits for its
token, written once the last process is gone. This bot plants code where a Python start-up
would run it early, so that, if the starter ran any of it, it would run while the last process
still plays (and could take over what it knows):

- ``sitecustomize.py`` and ``usercustomize.py`` in its directory, which ``site`` imports at
  start-up when its directory is on the path (``--env``: the test gives it ``PYTHONPATH=.``);
- ``typing_extensions.py`` in its directory, a module the kit's own imports load (the starter
  imports the kit before the token comes): a shim that marks, then loads the real one;
- ``early.so`` (``--plant DIR --native``, built with the C compiler), a library whose constructor
  marks, for ``LD_PRELOAD`` in its ``env`` (the red team's: the dynamic loader runs it in every
  process started with that variable, before any of its code, whatever the interpreter's options).

Each planted file, when it runs, logs ``EARLY {"what", "began", "pid", "at"}`` (``began``: when its
process began, from ``/proc/self/stat``; ``at``: the boot clock). The bot itself logs ``FIRST``
(the same fields) as its first line and ``LAST`` once its session is over, and always plays the
first legal action (its opponent's results are the same whatever it does). ``--plant DIR``
writes the planted files into DIR (the test's set-up).

    python early.py (the kit's arguments)       python early.py --plant DIR [--native COMPILER]
"""

from __future__ import annotations

import os
import subprocess
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


NATIVE = r"""
#include <stdio.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void early(void) {
    char stat[1024] = {0};
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
    if (f) fclose(f);
    stat[n] = 0;
    char *p = stat;
    for (char *q = stat; *q; q++) if (*q == ')') p = q + 1;  /* after "pid (comm)" */
    unsigned long long start = 0;
    /* fields 3 (state) to 22 (starttime): skip 19 */
    for (int field = 0; field < 20; field++) {
        while (*p == ' ') p++;
        if (field == 19) sscanf(p, "%llu", &start);
        while (*p && *p != ' ') p++;
    }
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    printf("EARLY {\"what\": \"ld_preload\", \"began\": %.17g, \"pid\": %d, \"at\": %.17g}\n",
           (double)start / sysconf(_SC_CLK_TCK), (int)getpid(), now.tv_sec + now.tv_nsec / 1e9);
    fflush(stdout);
}
"""


def plant(directory: str, compiler: str | None = None) -> None:
    """The planted files in ``directory``; with ``compiler``, ``early.so`` too."""
    if compiler is not None:
        source = os.path.join(directory, "early.c")
        with open(source, "w") as out:
            out.write(NATIVE)
        subprocess.run([compiler, "-shared", "-fPIC", "-x", "c", "-o", os.path.join(directory, "early.so"), source],
                       check=True)
        os.unlink(source)
    for name in ("sitecustomize", "usercustomize"):
        with open(os.path.join(directory, f"{name}.py"), "w") as out:
            out.write(MARK.format(kind="EARLY", what=name))
    with open(os.path.join(directory, "typing_extensions.py"), "w") as out:
        out.write(MARK.format(kind="EARLY", what="typing_extensions") + SHIM)


def mark(kind: str) -> None:
    exec(MARK.format(kind=kind, what="bot"))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plant"]:
        plant(sys.argv[2], sys.argv[4] if sys.argv[3:4] == ["--native"] else None)
        sys.exit(0)
    mark("FIRST")
    from referee.bot import run_bot  # late: after its first instant, which must come before any import of its own

    run_bot(lambda observation, legal, game: 0, default_name="early")
    mark("LAST")
