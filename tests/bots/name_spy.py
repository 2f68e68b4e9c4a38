"""A bot that shows everything it is told: its command line, its environment and its working
directory as one line (``SPY {...}``), then every message it receives as a line of JSON
(``tests/bots/proto_bot.py --trace``), playing random legal actions. For tests/test_teams.py: no
entry's name but its own, and no team, reaches a bot.

    python tests/bots/name_spy.py --address A --name N --token-fd FD --capacity C
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

PROTO_BOT = Path(__file__).resolve().parent / "proto_bot.py"

if __name__ == "__main__":
    print("SPY " + json.dumps({"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}), flush=True)
    sys.argv = [str(PROTO_BOT), *sys.argv[1:], "--trace"]
    runpy.run_path(str(PROTO_BOT), run_name="__main__")
