"""A hostile Aegis bot that passes its hands to its twin through the page cache (what remains open).

Under isolation = "match" no two processes of one bot run it at once, but one process can
leave marks that the next one reads in what the machine's kernel keeps between them. Here, the
page cache of a file both can read (its own directory is read-only, and so is /usr; a read-only
file is enough): each bit is a pair of pages of ``--file``, one cached and one not.

- **Sender** (the first match of a deal set, its seat 0): for each deal it writes the five cards
  it holds (6 bits each) into the region of that deal set and deal: every page of the region
  dropped from the cache (``posix_fadvise(DONTNEED)``, which any reader may ask), then, for each
  bit, one page of its pair read back in (page ``2i + bit``; read-ahead off: ``FADV_RANDOM``).
- **Receiver** (the twin, its seat 1, whose opponent holds those very cards): for each deal it
  times a read of each page of each pair: the cached one answers in a few microseconds, the other
  from the disk in tens (``mincore``, ``cachestat`` and ``preadv2(RWF_NOWAIT)``, which would read
  nothing, are the owner's, or refused through the sandbox's overlays). One page of a pair clearly
  faster: a bit; neither: unread.
- **At one table** (``--table``, Confirmation: two entries of one author in one match, issue 35):
  each writes the hand it was dealt in every round (52 bits: a bit a card) into its seat's region
  of that match and round at its first decision, and at its second (every seat has bid by then)
  reads the regions of the seats of its author's other entries (``--author``: their names' common
  beginning): ``RECEIVED {json}`` (``round``, ``seat``, bits, cards).

Each deal it logs ``SENT {json}`` (sender: the cards) or ``RECEIVED {json}`` (receiver: the bits,
``null`` for unread, and the cards they spell when all were read). With ``--payload N`` the
sender also writes N bits of a pseudo-random payload both sides can compute, and the receiver
logs ``PAYLOAD {json}``: how many it read right and unread (what the channel can carry). It plays the first legal
action throughout (its opponent's games are the same whatever it learns); ``--honest`` only plays.
``python -m referee.tools.covert`` runs it in a tournament and prints the channel's bandwidth.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import mmap
import os
import time

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
parser.add_argument("--table", action="store_true")  # Confirmation: to the other entry at the same table
parser.add_argument("--author", default="")  # at a table: its author's entries' names begin so
mine, kit_args = parser.parse_known_args()
HONEST, FILE, PAYLOAD, TABLE, AUTHOR = mine.honest, mine.file, mine.payload, mine.table, mine.author
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


def mapped(first: int, count: int) -> mmap.mmap:
    """``count`` pages from ``first``, mapped, read-ahead off (each page touched is read alone: a
    read through the sandbox's overlay would read ahead, whatever ``posix_fadvise`` says)."""
    pages = mmap.mmap(fd, count * PAGE, prot=mmap.PROT_READ, offset=first * PAGE)
    pages.madvise(mmap.MADV_RANDOM)
    return pages


def write(first: int, bits: list[int]) -> None:
    """Every page of the bits dropped from the cache, then the page of each bit read back in."""
    os.posix_fadvise(fd, first * PAGE, 2 * len(bits) * PAGE if not TABLE else aligned(2 * len(bits)) * PAGE,
                     os.POSIX_FADV_DONTNEED)
    with mapped(first, 2 * len(bits)) as pages:
        for i, bit in enumerate(bits):
            pages[(2 * i + bit) * PAGE]


def send(deal_set: int, deal: int, hand: list[str]) -> None:
    write(region(deal_set, deal), [(CARDS.index(card) >> k) & 1 for card in sorted(hand, key=CARDS.index)
                                   for k in range(BITS)])


def timed(pages: mmap.mmap, page: int) -> int:
    """Nanoseconds to read a byte of mapped ``page`` (which brings it into the cache)."""
    started = time.perf_counter_ns()
    pages[page * PAGE]
    return time.perf_counter_ns() - started


def read(first: int, count: int) -> list[int | None]:
    """``count`` bits from page ``first``: the page of a pair that reads at least 4 times faster
    (cached), or None (unread)."""
    bits: list[int | None] = []
    with mapped(first, 2 * count) as pages:
        for i in range(count):
            zero, one = timed(pages, 2 * i), timed(pages, 2 * i + 1)
            bits.append(1 if 4 * one < zero else 0 if 4 * zero < one else None)
    return bits


def receive(deal_set: int, deal: int) -> tuple[list[int | None], list[str] | None]:
    bits = read(region(deal_set, deal), HAND * BITS)
    if None in bits:
        return bits, None
    values = [sum(bits[c * BITS + k] << k for k in range(BITS)) for c in range(HAND)]
    return bits, [CARDS[v] if v < len(CARDS) else "?" for v in values]


TABLE_BITS, SLOTS, ROUNDS, SEATS = 52, 16, 4, 4  # a slot per match (4 deal sets), rounds 1-4
turns: dict[tuple[str, int], int] = {}  # (match, round): its decisions so far


def slot(game_id: str) -> int:
    """A match's slot, the same for both entries: its deal set, and where the first name in
    alphabetical order sits (each of a deal set's rotations puts it elsewhere)."""
    deal_set, lineup = game_id.split(":", 1)
    names = lineup.split("|")
    return (int(deal_set.split("/")[-1]) * SEATS + names.index(min(names))) % SLOTS


def aligned(pages: int) -> int:
    """Regions begin on 64 KB: the kernel caches a file by folios of up to that here, and drops
    only those a range covers whole (so that no region's pages share one with another's)."""
    return -(-pages // FOLIO) * FOLIO


FOLIO = 16  # pages


def table_region(game_id: str, round_: int, seat: int) -> int:
    """Where a seat's hand of a round of a match lies: 2 pages a bit (a bit a card)."""
    return ((slot(game_id) * ROUNDS + (round_ - 1) % ROUNDS) * SEATS + seat) * aligned(2 * TABLE_BITS)


def table_payload(game_id: str, seat: int) -> int:
    """Where a seat's payload of a match lies (written in its first round), after every hand."""
    return SLOTS * ROUNDS * SEATS * aligned(2 * TABLE_BITS) + (slot(game_id) * SEATS + seat) * aligned(2 * PAYLOAD)


def at_table(obs, game) -> None:
    now = (game.game_id, obs["round"])
    turns[now] = turns.get(now, 0) + 1
    where = {"game_id": game.game_id, "round": obs["round"]}
    if turns[now] == 1:  # its first decision, a bid: its whole hand
        hand = obs["hand"]
        write(table_region(game.game_id, obs["round"], obs["seat"]), [int(card in hand) for card in CARDS])
        if obs["round"] == 1 and PAYLOAD:
            write(table_payload(game.game_id, obs["seat"]), payload(obs["seat"]))
        print("SENT " + json.dumps({**where, "seat": obs["seat"], "cards": sorted(hand, key=CARDS.index)}), flush=True)
    elif turns[now] == 2:  # every seat has bid: read its author's other entries
        names = game.game_id.split(":", 1)[1].split("|")
        for seat in range(SEATS):
            if seat == obs["seat"] or not names[seat].startswith(AUTHOR) or names[seat] == names[obs["seat"]]:
                continue
            bits = read(table_region(game.game_id, obs["round"], seat), TABLE_BITS)
            cards = [CARDS[i] for i in range(TABLE_BITS) if bits[i]] if None not in bits else None
            print("RECEIVED " + json.dumps({**where, "seat": seat, "bits": bits, "cards": cards}), flush=True)
            if obs["round"] == 1 and PAYLOAD:
                got, want = read(table_payload(game.game_id, seat), PAYLOAD), payload(seat)
                print("PAYLOAD " + json.dumps({**where, "seat": seat, "right": sum(g == w for g, w in zip(got, want)),
                                               "unread": got.count(None), "bits": PAYLOAD}), flush=True)


def decide(obs, legal, game):
    if fd is None:
        return 0
    if TABLE:
        at_table(obs, game)
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
