"""How much a bot's processes can tell each other through the page cache, in the real sandbox.

    python -m referee.tools.covert                        # 6 deal sets, a file in the bot's own directory
    python -m referee.tools.covert --file /usr/lib/...    # a file of the system's instead (one nobody maps)
    python -m referee.tools.covert --deal-sets 10 --payload 16384 --json covert.json
    python -m referee.tools.covert --entries 2            # two entries of one author at one table

Twins (the default): one process of a bot tells the next, in the twin match, under isolation = "match".
With ``--entries 2``: two entries of one author (one directory) at one Confirmation table with two
random bots tell each other the hand each was dealt, in every round, while the match plays.

No two processes of one bot run it at once (docs/security.md), but the machine's kernel
keeps things between them: here, which pages of a file both may read are in the page cache.
The hostile bot of ``tests/bots/hostile/pagecache.py`` plays a real tournament (Aegis, itself
against a random bot, ``sandbox = "bwrap"``, one match at a time): in the first match of each
deal set it writes the cards it holds into the cache, a bit per pair of pages; in the twin,
where its opponent holds those cards, it reads them back; and as many bits more of a payload
both sides can compute (``--payload``), to measure what the channel carries. The tool compares
what it read with the records, and prints the channel's bandwidth: bits read right, wrong and
unread, per twin match and per second of the run, and the opponent's cards learned. It needs
bubblewrap (exit 2 without) and a checkout (the hostile bot lives in its tests).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from referee import records
from referee.competition import config as tconfig
from referee.competition import run as trun
from referee.hosting import sandbox
from referee.results.store import Store

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "tests" / "bots" / "hostile" / "pagecache.py"
PAGES_PER_HANDS = 2 * 16 * 5 * 6  # a deal set's hands in the bot's file: 16 deals, 5 cards, 6 bits, 2 pages a bit

TABLE = """
[tournament]
game = "confirmation"
deal_sets = {deal_sets}
concurrency = 1
output = "out"
isolation = "match"

[tournament.options]
rounds = 4

[clock]
decision_ms = 5000
bank_ms = 20000

[limits]
sandbox = "bwrap"

[[bots]]
name = "alice"
command = {command}
cwd = "author"

[[bots]]
name = "alice2"
command = {command}
cwd = "author"

[[bots]]
name = "honest1"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "honest1"

[[bots]]
name = "honest2"
command = ["python", "-m", "sample_bots.random", "--seed", "2"]
cwd = "honest2"
"""
TABLE_BITS, TABLE_SLOTS, TABLE_ROUNDS, TABLE_SEATS = 52, 16, 4, 4  # as pagecache.py lays out its file at a table


def folios(pages: int) -> int:
    """``pages`` rounded up to whole 64 KB folios, as pagecache.py lays its regions."""
    return -(-pages // 16) * 16

TOURNAMENT = """
[tournament]
game = "aegis"
deal_sets = {deal_sets}
concurrency = 1
output = "out"
isolation = "match"

[clock]
decision_ms = 5000
bank_ms = 20000

[limits]
sandbox = "bwrap"

[[bots]]
name = "pagecache"
command = {command}
cwd = "attacker"
{data}

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random"]
cwd = "victim"
"""


def victim_hands(record: dict[str, Any]) -> dict[int, list[str]]:
    seat = record["seats"].index("victim")
    state = records.replay(record).state
    return {e.data["game"]: e.data["cards"] for e in state.events if e.kind == "hand" and e.seat == seat}


def pages_needed(deal_sets: int, payload: int) -> int:
    return deal_sets * (PAGES_PER_HANDS + 2 * payload)


def measure(deal_sets: int, payload: int, file: Path | None, workdir: Path) -> dict[str, Any]:
    """Play the tournament in ``workdir``; what was sent, read, and right."""
    (workdir / "attacker").mkdir(parents=True)
    (workdir / "victim").mkdir()
    shutil.copy(BOT, workdir / "attacker")
    pages = pages_needed(deal_sets, payload)
    if file is None:  # a file of its own, as an entrant would ship it
        file = workdir / "attacker" / "blob.bin"
        blob(file, pages)
    forget(file)
    command = ["python", "pagecache.py", "--file", str(file), "--payload", str(payload)]
    data = "" if file.is_relative_to(workdir / "attacker") or file.is_relative_to("/usr") else f'data = ["{file}"]'
    path = workdir / "t.toml"
    path.write_text(TOURNAMENT.format(deal_sets=deal_sets, command=json.dumps(command), data=data))
    cfg = tconfig.load(path)
    store = trun.open_store(cfg)
    try:
        started = time.perf_counter()
        asyncio.run(trun.run(cfg, store))
        seconds = time.perf_counter() - started
        truth = {key: victim_hands(record) for key, record in _stored(store).items()}
        matches = len(truth)
    finally:
        store.close()
    lines = [line for log in (workdir / "out" / "logs").glob("pagecache*.log") for line in log.read_text().splitlines()]
    sent = [json.loads(line[5:]) for line in lines if line.startswith("SENT ")]
    received = [json.loads(line[9:]) for line in lines if line.startswith("RECEIVED ")]
    carried = [json.loads(line[8:]) for line in lines if line.startswith("PAYLOAD ")]
    return {"file": str(file), "deal_sets": deal_sets, "matches": matches, "seconds": round(seconds, 2),
            **tally(sent, received, truth),
            "payload": {"bits": payload * len(carried), "right": sum(c["right"] for c in carried),
                        "unread": sum(c["unread"] for c in carried)}}


def blob(path: Path, pages: int) -> None:
    """A file of ``pages`` random pages, written back to the disk (pages the cache may drop)."""
    with path.open("wb") as f:
        f.write(os.urandom(pages * os.sysconf("SC_PAGE_SIZE")))
        f.flush()
        os.fsync(f.fileno())


def forget(path: Path) -> None:
    """Every page of ``path`` out of the cache: no marks of an earlier run, and no large folio left
    from its writing (the kernel drops a folio only when a range covers it whole)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def measure_table(deal_sets: int, payload: int, workdir: Path) -> dict[str, Any]:
    """Two entries of one author (``--table``) at a Confirmation table in ``workdir``: what each
    read of the other's hands, and of a payload, against the records."""
    for name in ("author", "honest1", "honest2"):
        (workdir / name).mkdir(parents=True)
    shutil.copy(BOT, workdir / "author")
    file = workdir / "author" / "blob.bin"
    blob(file, TABLE_SLOTS * TABLE_SEATS * (TABLE_ROUNDS * folios(2 * TABLE_BITS) + folios(2 * payload)))
    forget(file)
    command = ["python", "pagecache.py", "--table", "--author", "alice", "--file", str(file), "--payload", str(payload)]
    path = workdir / "t.toml"
    path.write_text(TABLE.format(deal_sets=deal_sets, command=json.dumps(command)))
    cfg = tconfig.load(path)
    store = trun.open_store(cfg)
    try:
        started = time.perf_counter()
        asyncio.run(trun.run(cfg, store))
        seconds = time.perf_counter() - started
        truth = {key: dealt(record) for key, record in _stored(store).items()}
    finally:
        store.close()
    lines = [line for log in (workdir / "out" / "logs").glob("alice*.log") for line in log.read_text().splitlines()]
    received = [json.loads(line[9:]) for line in lines if line.startswith("RECEIVED ")]
    carried = [json.loads(line[8:]) for line in lines if line.startswith("PAYLOAD ")]
    bits = {"right": 0, "wrong": 0, "unread": 0}
    hands = {"right": 0, "wrong": 0, "unread": 0}
    partner = [r for r in received if r["game_id"].split(":", 1)[1].split("|")[r["seat"]].startswith("alice")]
    for got in partner:
        hand = truth[got["game_id"]][(got["round"], got["seat"])]
        want = [int(card in hand) for card in CARDS]
        for w, r in zip(want, got["bits"]):
            bits["unread" if r is None else "right" if r == w else "wrong"] += 1
        hands["unread" if None in got["bits"] else "right" if got["bits"] == want else "wrong"] += 1
    carried = [c for c in carried if c["game_id"].split(":", 1)[1].split("|")[c["seat"]].startswith("alice")]
    return {"file": str(file), "mode": "table", "deal_sets": deal_sets, "matches": len(truth),
            "seconds": round(seconds, 2), "bits": bits, "cards": hands, "received_hands": len(partner),
            "payload": {"bits": payload * len(carried), "right": sum(c["right"] for c in carried),
                        "unread": sum(c["unread"] for c in carried)}}


def _stored(store: Store) -> dict[str, dict[str, Any]]:
    """The record of each stored match, by its key."""
    out = {}
    for row in store.matches():
        record = store.record(row.key)
        assert record is not None  # the key of a stored match
        out[row.key] = record
    return out


def dealt(record: dict[str, Any]) -> dict[tuple[int, int], list[str]]:
    """Every seat's hand in every round of a Confirmation match, from its record."""
    hands: dict[tuple[int, int], list[str]] = {}
    round_ = 0
    for event in records.replay(record).state.events:
        if event.kind == "round":
            round_ = event.data["round"]
        elif event.kind == "deal":
            assert event.seat is not None  # a hand is dealt to one seat
            hands[(round_, event.seat)] = event.data
    return hands


RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]  # as the bot numbers them: 6 bits a card, lowest first
BITS = 6


def tally(sent: list[dict[str, Any]], received: list[dict[str, Any]],
          truth: dict[str, dict[int, list[str]]]) -> dict[str, Any]:
    """Bits and cards read right, wrong and unread, against the victim's hands in the twin (the
    cards the sender held: the same deals, the seats swapped)."""
    bits = {"right": 0, "wrong": 0, "unread": 0}
    cards = {"right": 0, "wrong": 0, "unread": 0}
    written = {(s["deal_set"], s["deal"]) for s in sent}
    for got in received:
        hand = sorted(truth[got["game_id"]].get(got["deal"], []), key=CARDS.index)
        if not hand or (got["deal_set"], got["deal"]) not in written:
            continue  # a deal the twin reached and its sender did not: nothing was sent
        for c, card in enumerate(hand):
            want = [(CARDS.index(card) >> k) & 1 for k in range(BITS)]
            read = got["bits"][c * BITS:(c + 1) * BITS]
            for w, r in zip(want, read):
                bits["unread" if r is None else "right" if r == w else "wrong"] += 1
            cards["unread" if None in read else "right" if read == want else "wrong"] += 1
    return {"sent_deals": len(sent), "received_deals": len(received), "bits": bits, "cards": cards}


def report(result: dict[str, Any]) -> str:
    b, c = result["bits"], result["cards"]
    table = result.get("mode") == "table"
    per = result["matches"] if table else result["deal_sets"]  # a match at a table, a twin pair otherwise
    unit, what = ("match", "partner's hands (whole)") if table else ("twin match", "opponent's cards")
    rows = [["bits", b["right"], b["wrong"], b["unread"], round(b["right"] / per, 1),
             round(b["right"] / result["seconds"], 1)],
            [what, c["right"], c["wrong"], c["unread"], round(c["right"] / per, 1), ""]]
    if (p := result["payload"])["bits"]:
        rows.append(["payload bits", p["right"], p["bits"] - p["right"] - p["unread"], p["unread"],
                     round(p["right"] / per, 1), round(p["right"] / result["seconds"], 1)])
    if table:
        head = (f"page-cache channel between two entries of one author at one Confirmation table, isolation = "
                f"\"match\", sandbox bwrap: {result['matches']} matches in {result['seconds']} s")
    else:
        head = (f"page-cache channel between a bot's processes, isolation = \"match\", sandbox bwrap: "
                f"{result['matches']} matches ({per} twins) in {result['seconds']} s")
    head += f"; file {result['file']}; load average {result['load_average']} (1/5/15 min) at the start"
    return head + "\n\n" + tabulate(rows, [f"read {'at the table' if table else 'in the twin'}", "right", "wrong",
                                           "unread", f"right per {unit}", "right per second"], tablefmt="github")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.tools.covert", description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, choices=(1, 2), default=1,
                        help="1: a bot's processes, twin to twin (default); 2: two entries of one author at one table")
    parser.add_argument("--deal-sets", type=int, help="deal sets to play (default 6; 2 with --entries 2)")
    parser.add_argument("--file", type=Path, help="the file whose pages carry the bits (default: one of the "
                                                  "bot's own, in its directory, as large as needed; twins only)")
    parser.add_argument("--payload", type=int,
                        help="bits more sent beside the hands (default 4096 a twin pair; 256 an entry and match "
                             "with --entries 2): what the channel carries")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    table = args.entries == 2
    deal_sets = args.deal_sets or (2 if table else 6)
    payload = args.payload if args.payload is not None else (256 if table else 4096)
    if (why := sandbox.probe()) is not None:
        parser.exit(2, f"Error: the channel is measured in the sandbox, and {why}\n")
    if not BOT.exists():
        parser.exit(2, f"Error: {BOT} is not there (the hostile bot lives in the checkout's tests)\n")
    if args.file is not None and (table or not args.file.is_file()):
        parser.exit(2, f"Error: --file {args.file} is not a file\n" if not table
                    else "Error: --file is for twins: two entries use a file of their own directory\n")
    pages = pages_needed(deal_sets, payload)
    if args.file is not None and args.file.stat().st_size < pages * os.sysconf("SC_PAGE_SIZE"):
        parser.exit(2, f"Error: --file {args.file} has fewer than the {pages} pages needed\n")
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="referee-covert-") as tmp:
        if table:
            result = measure_table(deal_sets, payload, Path(tmp))
        else:
            result = measure(deal_sets, payload, args.file.resolve() if args.file else None, Path(tmp))
    result["load_average"] = load
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
