"""A hostile Aegis bot that passes its hands to its twin through the page cache (what remains open).

Under isolation = "match" no two processes of one bot are alive at once, but one process can
leave marks that the next one reads in what the machine's kernel keeps between them. Here, the
page cache of a file both can read (its own directory is read-only, and so is /usr; a read-only
file is enough): each bit is a pair of pages of ``--file``, one cached and one not.

- **Sender** (the first match of a deal set, its seat 0): for each deal it writes the five cards
  it holds (6 bits each) into the region of that deal set and deal: every page of the region
  dropped from the cache (``posix_fadvise(DONTNEED)``, which any reader may ask), then, for each
  bit, one page of its pair read back in (page ``2i + bit``; read-ahead off: ``FADV_RANDOM``).
- **Receiver** (the twin, its seat 1, whose opponent holds those very cards): for each deal it
  asks which page of each pair is cached (``mincore``, which reads nothing: the owner of a file may
  ask it; timing a read, or ``preadv2(RWF_NOWAIT)``, would tell anyone). Exactly one page of a
  pair cached: a bit; both or neither: unread.

Each deal it logs ``SENT {json}`` (sender: the cards) or ``RECEIVED {json}`` (receiver: the bits,
``null`` for unread, and the cards they spell when all were read). With ``--payload N`` the
sender also writes N bits of a pseudo-random payload both sides can compute, and the receiver
logs ``PAYLOAD {json}``: how many it read right and unread (what the channel can carry). It plays the first legal
action throughout (its opponent's games are the same whatever it learns); ``--honest`` only plays.
``python -m referee.tools.covert`` runs it in a tournament and prints the channel's bandwidth.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import mmap
import os

from referee.bot import run_bot

RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]
PAGE = os.sysconf("SC_PAGE_SIZE")
BITS = 6  # a card: 0..51
HAND = 5  # Aegis deals five cards a hand
DEALS = 16  # regions per deal set (Aegis: 3 to 15 deals a match)


parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
parser.add_argument("--honest", action="store_true")
parser.add_argument("--file")
parser.add_argument("--payload", type=int, default=0)  # bits more a twin pair, of a pseudo-random payload
mine, kit_args = parser.parse_known_args()
HONEST, FILE, PAYLOAD = mine.honest, mine.file, mine.payload
fd = None if HONEST or FILE is None else os.open(FILE, os.O_RDONLY)
if fd is not None:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead: one page read, one page cached
done: set[tuple[str, int]] = set()


def block(deal_set: int) -> int:
    """The first page of a deal set's pages: its deals' hands, then its payload; two pages a bit."""
    return deal_set * 2 * (DEALS * HAND * BITS + PAYLOAD)


def region(deal_set: int, deal: int) -> int:
    return block(deal_set) + 2 * deal * HAND * BITS


def payload(deal_set: int) -> list[int]:
    """The payload of a deal set: bits both sides compute (what is measured is the channel)."""
    return [int(b) for b in bin(int.from_bytes(hashlib.sha256(b"%d" % deal_set).digest() * (PAYLOAD // 256 + 1)))[3:]][
        :PAYLOAD]


def write(first: int, bits: list[int]) -> None:
    """Every page of the bits dropped from the cache, then the page of each bit read back in."""
    os.posix_fadvise(fd, first * PAGE, 2 * len(bits) * PAGE, os.POSIX_FADV_DONTNEED)
    for i, bit in enumerate(bits):
        os.pread(fd, 1, (first + 2 * i + bit) * PAGE)


def send(deal_set: int, deal: int, hand: list[str]) -> None:
    write(region(deal_set, deal), [(CARDS.index(card) >> k) & 1 for card in sorted(hand, key=CARDS.index)
                                   for k in range(BITS)])


libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def cached(first: int, count: int) -> list[bool]:
    """Which of ``count`` pages from ``first`` are in the page cache (mincore: it reads nothing)."""
    length = count * PAGE
    address = libc.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, first * PAGE)
    vector = (ctypes.c_ubyte * count)()
    try:
        if libc.mincore(address, length, vector) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
    finally:
        libc.munmap(address, length)
    return [bool(v & 1) for v in vector]


def read(first: int, count: int) -> list[int | None]:
    """``count`` bits from page ``first``: exactly one page of a pair cached, or None (unread)."""
    pages = cached(first, 2 * count)
    return [None if pages[2 * i] == pages[2 * i + 1] else int(pages[2 * i + 1]) for i in range(count)]


def receive(deal_set: int, deal: int) -> tuple[list[int | None], list[str] | None]:
    bits = read(region(deal_set, deal), HAND * BITS)
    if None in bits:
        return bits, None
    values = [sum(bits[c * BITS + k] << k for k in range(BITS)) for c in range(HAND)]
    return bits, [CARDS[v] if v < len(CARDS) else "?" for v in values]


def decide(obs, legal, game):
    if fd is None:
        return 0
    deal_set = int(game.game_id.split(":")[0].split("/")[-1])
    deal, seat = obs["game_number"], obs["seat"]
    if (game.game_id, deal) in done or deal >= DEALS:
        return 0
    done.add((game.game_id, deal))
    where = {"game_id": game.game_id, "deal_set": deal_set, "deal": deal, "seat": seat}
    if seat == 0:
        hand = next(ev["data"]["cards"] for ev in game.events
                    if ev["kind"] == "hand" and ev["actor"] == seat and ev["data"]["game"] == deal)
        send(deal_set, deal, hand)
        print("SENT " + json.dumps({**where, "cards": sorted(hand, key=CARDS.index)}), flush=True)
        if deal == 1 and PAYLOAD:
            write(block(deal_set) + 2 * DEALS * HAND * BITS, payload(deal_set))
    else:
        if deal == 1 and PAYLOAD:
            got, want = read(block(deal_set) + 2 * DEALS * HAND * BITS, PAYLOAD), payload(deal_set)
            print("PAYLOAD " + json.dumps({**where, "right": sum(g == w for g, w in zip(got, want)),
                                           "unread": got.count(None), "bits": PAYLOAD}), flush=True)
        bits, cards = receive(deal_set, deal)
        print("RECEIVED " + json.dumps({**where, "bits": bits, "cards": cards}), flush=True)
    return 0


if __name__ == "__main__":
    run_bot(decide, kit_args, default_name="pagecache")
