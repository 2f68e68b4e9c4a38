"""A hostile Aegis bot whose processes pass each other what they were dealt (issue 24, attacks 1 and 2).

Under isolation = "match" each match gets fresh processes, but a deal set's two matches are
the same deals with the seats swapped: what this bot holds in one is its opponent's hand in
the other (the twin). So each process of this bot tries to tell the others what it holds:

- ``--attack locks``: through POSIX byte-range locks on its own (read-only) program file,
  which every sandbox of the bot shares (or ``--file PATH``: one every sandbox shows, one of the
  referee's own modules, for two entries of one author, issue 35): it publishes its hand of each deal as locks held,
  reads the twin's, and **relays**: a thread takes, as its own, every hand it sees published by
  another process, so that the hand outlives its publisher for as long as this process lives
  (the red team's relay: held in a concurrent match of another deal set until the twin comes),
  and it plays slowly (within the clock) while it keeps a hand the twin has not read.
- ``--attack sessions``: through a count the referee keeps over the run. In the first match of
  a deal set (its seat 0) it opens extra sessions, as many as encode the first card it was
  dealt; in the twin (seat 1) it reads the number in its own ``session_id`` and decodes it,
  knowing how many sessions an honest run opens (two a match: its process and the victim's,
  and two for the start-up check), the tournament's being a 2-bot Aegis one, played one match
  at a time in the schedule's order. (A process of it plays one seat, and its sessions may offer
  no more: each extra session waits for a place, and it gives up on the first not welcomed within
  a second. ``SENT`` says how many it tried and how many were welcomed.)

It always plays the first legal action, so its play, and its opponent's results, are the
same whatever it learns. Every deal it logs ``LEARNED {json}`` (``via``, the game id, its seat,
the deal, and what it read: ``opponent_hand`` or ``opponent_card``, ``null`` for nothing).
``--honest`` plays without attacking (the control run).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import struct
import threading
import time

import grpc

from referee import bot as kit
from referee.bot import PROTOCOL_VERSION, run_bot, token_from_fd
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]
DEAL_SETS, DEALS = 8, 16  # the regions the relay watches (Aegis: 3 to 15 deals a match)
M = len(CARDS)           # the sessions channel carries one card: 0..51

parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
parser.add_argument("--honest", action="store_true")
parser.add_argument("--attack", action="append", default=[], choices=["locks", "sessions"])
parser.add_argument("--file", default=os.path.abspath(__file__), help="the file whose locks carry the hands")
parser.add_argument("--token-fd", type=int)
mine, kit_args = parser.parse_known_args()
HONEST, ATTACKS = mine.honest, set(mine.attack)
# the token: read here (the kit would close its descriptor), handed to the kit on its command line
TOKEN = token_from_fd(mine.token_fd) if mine.token_fd is not None else ""
kit_args += ["--token", TOKEN]
where = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
where.add_argument("--name", default="channels")
where.add_argument("--address", default="127.0.0.1:50051")
located = where.parse_known_args(kit_args)[0]
NAME, ADDRESS = located.name, located.address


def learned(via: str, game, seat: int, deal: int, **what) -> None:
    print("LEARNED " + json.dumps({"via": via, "game_id": game.game_id, "seat": seat, "deal": deal, **what}),
          flush=True)


# --- the locks, and their relay ---------------------------------------------------------------

fd = os.open(mine.file, os.O_RDONLY)
mine: set[int] = set()  # the regions this process holds (its own hands, and those it relays)
relayed: set[int] = set()  # those it took from another process
read_by_twin: set[int] = set()  # those the twin has read (it says so with a lock of its own)
lock = threading.Lock()
READY, READ = 63, 62  # the offsets, in a region, of "published" and "read by the twin"


def region(deal_set: int, deal: int, seat: int) -> int:
    return 1_000_000 + ((deal_set * DEALS + deal) * 2 + seat) * 64


def hold(base: int, cards: list[str]) -> None:
    with lock:
        if base in mine:
            return
        mine.add(base)
        for card in cards:
            take(base + CARDS.index(card))
        take(base + READY)  # last


def take(offset: int) -> None:
    fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, offset, os.SEEK_SET)


def held(offset: int) -> bool:
    """Held by another process (F_GETLK does not see this process's own locks)."""
    request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0)
    return struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, request))[0] != fcntl.F_UNLCK


def read(base: int) -> list[str]:
    return [card for i, card in enumerate(CARDS) if held(base + i)]


def relay() -> None:
    """Every hand another process publishes, held by this one too, for as long as it lives; and
    every "read by the twin" mark it sees, kept too."""
    while True:
        for deal_set in range(DEAL_SETS):
            for deal in range(1, DEALS):
                for seat in (0, 1):
                    base = region(deal_set, deal, seat)
                    if base not in mine and held(base + READY):
                        hold(base, read(base))
                        relayed.add(base)
                    if base not in read_by_twin and held(base + READ):
                        read_by_twin.add(base)
                        take(base + READ)
        time.sleep(0.02)


def keeping() -> bool:
    """Whether this process keeps a hand that the twin has not read yet (it then plays slowly,
    within the clock, so that its match, and its locks, outlive the publisher's)."""
    return bool(relayed - read_by_twin)


def read_twin(base: int, wait: float = 0.1) -> list[str] | None:
    end = time.monotonic() + wait
    while not held(base + READY):
        if time.monotonic() > end:
            return None
        time.sleep(0.01)
    hand = read(base)
    read_by_twin.add(base)
    take(base + READ)
    return hand


# --- the sessions ------------------------------------------------------------------------------

welcome: list[str] = []
_welcome = kit.BotSession._on_welcome


def _on_welcome(self, message) -> None:
    _welcome(self, message)
    welcome.append(message.session_id)


kit.BotSession._on_welcome = _on_welcome


def number(session_id: str) -> int | None:
    """The count in a session id ``s{count}``; None for any other form."""
    found = re.fullmatch(r"s(\d{1,9})", session_id)
    return int(found.group(1)) if found else None


def offset(deal_set: int, seat: int) -> int | None:
    """This process's session count past the honest base of its match: the match's index in the
    schedule's order is 2 x deal set + seat; before it, two sessions for the start-up check and
    two per match."""
    count = number(welcome[0]) if welcome else None
    return None if count is None else count - (2 + 2 * (2 * deal_set + seat))


def open_sessions(count: int) -> tuple[int, int]:
    """Up to ``count`` sessions more, each opened (Hello, Welcome) and closed, until one is not welcomed
    within a second: (how many it tried, how many were welcomed)."""
    opened = tried = 0
    with grpc.insecure_channel(ADDRESS) as channel:
        stub = pb_grpc.RefereeStub(channel)
        while tried < count:
            tried += 1
            hello = pb.BotMessage(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=NAME, token=TOKEN,
                                                 capacity=1))
            try:
                stream = stub.Play(iter([hello]), timeout=1.0)
                welcomed = next(stream).WhichOneof("kind") == "welcome"
                stream.cancel()
            except (grpc.RpcError, StopIteration):
                welcomed = False
            if not welcomed:
                break
            opened += 1
    return tried, opened


# --- the bot ------------------------------------------------------------------------------------

done: set[tuple[str, int]] = set()


def decide(obs, legal, game):
    if HONEST:
        return 0
    if keeping():
        time.sleep(0.05)
    deal_set = int(game.game_id.split(":")[0].split("/")[-1])
    deal, seat = obs["game_number"], obs["seat"]
    if (game.game_id, deal) in done:
        return 0
    done.add((game.game_id, deal))
    hand = next(ev["data"]["cards"] for ev in game.events
                if ev["kind"] == "hand" and ev["actor"] == seat and ev["data"]["game"] == deal)
    if "locks" in ATTACKS:
        hold(region(deal_set, deal, seat), hand)
        learned("locks", game, seat, deal, opponent_hand=read_twin(region(deal_set, deal, 1 - seat)))
    if "sessions" in ATTACKS and deal == 1:
        known = offset(deal_set, seat)
        if seat == 0:  # the first match of its deal set: send its first card (a count it cannot read: as if 0)
            value = CARDS.index(hand[0])
            tried, opened = open_sessions((4 * value - (known or 0)) % (4 * M) or 4 * M)
            print("SENT " + json.dumps({"game_id": game.game_id, "card": hand[0], "tried": tried, "sessions": opened}),
                  flush=True)
        elif seat == 1:  # the twin: its opponent holds what this bot held in seat 0
            card = None if known is None else CARDS[round((known % (4 * M)) / 4) % M]
            learned("sessions", game, seat, deal, opponent_card=card, session_id=welcome[0] if welcome else None)
    return 0


if __name__ == "__main__":
    if "locks" in ATTACKS:
        threading.Thread(target=relay, daemon=True).start()
    run_bot(decide, kit_args, default_name="channels")
