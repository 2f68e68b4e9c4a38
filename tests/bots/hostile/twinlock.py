"""A hostile Aegis bot that colludes with itself across twin matches (the red team's attack).

With isolation = "match" each match gets fresh processes in sandboxes of their own; but the
seat-swapped twin of a match holds, in the other seat, the very cards this one holds. Two
processes of this bot playing twin matches at the same time publish their dealt hands through
POSIX byte-range locks on their own (read-only) program file, which every sandbox shares, and
each reads the other's: the opponent's hand. It always plays the first legal action, so its
play is the same whatever it learns; each deal it logs ``LEARNED {json}`` with what it read
(``null``: nothing, its twin was not playing at the same time). ``--honest`` skips the locks."""

import fcntl
import json
import os
import struct
import sys
import time

from referee.bot import run_bot

RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]
HONEST = "--honest" in sys.argv
if HONEST:
    sys.argv.remove("--honest")
fd = os.open(os.path.abspath(__file__), os.O_RDONLY)
published: set[tuple[int, int, int]] = set()
learned: dict[tuple[str, int], list[str] | None] = {}


def region(deal_set: int, deal: int, seat: int) -> int:
    return 1_000_000 + ((deal_set * 64 + deal) * 2 + seat) * 64


def publish(deal_set: int, deal: int, seat: int, cards: list[str]) -> None:
    if (deal_set, deal, seat) in published:
        return
    published.add((deal_set, deal, seat))
    base = region(deal_set, deal, seat)
    fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, base + 63, os.SEEK_SET)  # "ready"
    for card in cards:
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, base + CARDS.index(card), os.SEEK_SET)


def held(offset: int) -> bool:
    request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0)
    return struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, request))[0] != fcntl.F_UNLCK


def read_other(deal_set: int, deal: int, seat: int, wait: float = 1.5) -> list[str] | None:
    base = region(deal_set, deal, seat)
    end = time.monotonic() + wait
    while not held(base + 63):
        if time.monotonic() > end:
            return None
        time.sleep(0.01)
    return [card for i, card in enumerate(CARDS) if held(base + i)]


def decide(obs, legal, game):
    if HONEST:
        return 0
    deal_set = int(game.game_id.split(":")[0].split("/")[-1])
    deal, seat = obs["game_number"], obs["seat"]
    mine = next(ev["data"]["cards"] for ev in game.events
                if ev["kind"] == "hand" and ev["actor"] == seat and ev["data"]["game"] == deal)
    publish(deal_set, deal, seat, mine)
    if (game.game_id, deal) not in learned:
        learned[game.game_id, deal] = other = read_other(deal_set, deal, 1 - seat)
        print("LEARNED " + json.dumps({"game_id": game.game_id, "seat": seat, "deal": deal,
                                       "opponent_hand": other}), flush=True)
    return 0


if __name__ == "__main__":
    run_bot(decide, default_name="twinlock")
