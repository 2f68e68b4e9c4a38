"""A heuristic bot that dies for good after its first N games: it counts the games it has
finished in a file (across its restarts) and exits, code 1, once the count reaches N; a
process started after that exits at once, before it connects (a bot that cannot come back).

    CRASH_COUNT_FILE=PATH python tests/bots/crash_after.py --after 2  (then the kit's arguments)

(The count file comes in the environment, and lies outside the bot's directory: a file there, or
named on the command line, is part of the bot's version, and this one changes as it plays.)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from referee.bot import run_bot
from sample_bots.heuristic import decide


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--after", type=int, required=True)
    args, kit = parser.parse_known_args()
    path = Path(os.environ["CRASH_COUNT_FILE"])

    def count() -> int:
        return int(path.read_text() or 0) if path.exists() else 0

    if count() >= args.after:
        print(f"crash_after: {count()} games played already; giving up", file=sys.stderr, flush=True)
        sys.exit(1)

    def on_game_end(view, results) -> None:
        path.write_text(str(count() + 1))
        if count() >= args.after:
            print(f"crash_after: {count()} games played; dying", file=sys.stderr, flush=True)
            os._exit(1)

    run_bot(decide, kit, default_name="crash", on_game_end=on_game_end)


if __name__ == "__main__":
    main()
