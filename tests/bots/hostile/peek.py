"""A hostile bot that reads what it should not, by the paths it is given (issue 24, attacks 3 and 4).

    python peek.py [--read PATH ...] [--list PATH ...] [--store PATH ...] KIT-ARGS
    python peek.py --honest KIT-ARGS

At its first decision of every match it tries each path and reports, in one line
``PEEK {json}``: for ``--read``, the file's first 40 bytes, its size and whether it looks like
``/etc/shadow`` (``root:`` at the start); for ``--list``, the names in the directory; for
``--store``, a results store opened read-only: the master seed and the deal seeds of its records;
and where it runs (``cwd``).
Errors are reported as their ``strerror``. It plays the first legal action throughout (so its
opponents' games are the same whatever it finds); ``--honest`` only plays.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import tempfile

from referee.bot import run_bot

parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
parser.add_argument("--honest", action="store_true")
parser.add_argument("--read", action="append", default=[])
parser.add_argument("--list", action="append", default=[])
parser.add_argument("--store", action="append", default=[])
mine, kit_args = parser.parse_known_args()
done: set[str] = set()


def read(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            head = f.read(40)
        return {"size": os.path.getsize(path), "head": head.decode("utf-8", "replace"),
                "shadow": head.startswith(b"root:")}
    except OSError as err:
        return {"error": err.strerror}


def listing(path: str) -> dict:
    try:
        return {"names": sorted(os.listdir(path))}
    except OSError as err:
        return {"error": err.strerror}


def store(path: str) -> dict:
    """Copied to its scratch with its write-ahead log (its directory is read-only), then read."""
    try:
        copy = os.path.join(tempfile.mkdtemp(), "stolen.sqlite")
        for suffix in ("", "-wal"):
            if os.path.exists(path + suffix) or not suffix:
                shutil.copyfile(path + suffix, copy + suffix)
        db = sqlite3.connect(copy)
        try:
            seeds = sorted({json.loads(text)["seed"] for (text,) in db.execute("SELECT record FROM matches")})
            master = [json.loads(value)["seed"] for (value,) in db.execute("SELECT value FROM meta WHERE key = "
                                                                           "'fingerprint'")]
        finally:
            db.close()
        return {"seeds": seeds, "master_seed": master}
    except (sqlite3.Error, OSError, KeyError, ValueError) as err:
        return {"error": str(err)}


def decide(obs, legal, game):
    if not mine.honest and game.game_id not in done:
        done.add(game.game_id)
        found = {"read": {p: read(p) for p in mine.read}, "list": {p: listing(p) for p in mine.list},
                 "store": {p: store(p) for p in mine.store}, "cwd": os.getcwd()}
        print("PEEK " + json.dumps({"game_id": game.game_id, **found}, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    run_bot(decide, kit_args, default_name="peek")
