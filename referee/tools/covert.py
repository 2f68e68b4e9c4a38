"""How much one process of a bot can tell the next through the page cache, under isolation = "match".

    python -m referee.tools.covert                        # 6 deal sets, a file in the bot's own directory
    python -m referee.tools.covert --file /usr/lib/...    # a file of the system's instead (one nobody maps)
    python -m referee.tools.covert --deal-sets 10 --payload 16384 --json covert.json

No two processes of one bot are alive at once (docs/security.md), but the machine's kernel
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

from tabulate import tabulate

from referee import records
from referee.tournament import config as tconfig
from referee.tournament import run as trun
from referee.tournament import sandbox

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "tests" / "bots" / "hostile" / "pagecache.py"
PAGES_PER_HANDS = 2 * 16 * 5 * 6  # a deal set's hands in the bot's file: 16 deals, 5 cards, 6 bits, 2 pages a bit

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


def victim_hands(record: dict) -> dict[int, list[str]]:
    seat = record["seats"].index("victim")
    state = records.replay(record).state
    return {e.data["game"]: e.data["cards"] for e in state.events if e.kind == "hand" and e.seat == seat}


def pages_needed(deal_sets: int, payload: int) -> int:
    return deal_sets * (PAGES_PER_HANDS + 2 * payload)


def measure(deal_sets: int, payload: int, file: Path | None, workdir: Path) -> dict:
    """Play the tournament in ``workdir``; what was sent, read, and right."""
    (workdir / "attacker").mkdir(parents=True)
    (workdir / "victim").mkdir()
    shutil.copy(BOT, workdir / "attacker")
    pages = pages_needed(deal_sets, payload)
    if file is None:  # a file of its own, as an entrant would ship it
        file = workdir / "attacker" / "blob.bin"
        with file.open("wb") as blob:
            blob.write(os.urandom(pages * os.sysconf("SC_PAGE_SIZE")))
            blob.flush()
            os.fsync(blob.fileno())  # written back: pages the cache may drop
    fd = os.open(file, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # no marks of an earlier run
    finally:
        os.close(fd)
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
        truth = {row.key: victim_hands(store.record(row.key)) for row in store.matches()}
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


RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]  # as the bot numbers them: 6 bits a card, lowest first
BITS = 6


def tally(sent: list[dict], received: list[dict], truth: dict[str, dict[int, list[str]]]) -> dict:
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


def report(result: dict) -> str:
    b, c = result["bits"], result["cards"]
    twins = result["deal_sets"]
    rows = [["bits", b["right"], b["wrong"], b["unread"], round(b["right"] / twins, 1),
             round(b["right"] / result["seconds"], 1)],
            ["opponent's cards", c["right"], c["wrong"], c["unread"], round(c["right"] / twins, 1), ""]]
    if (p := result["payload"])["bits"]:
        rows.append(["payload bits", p["right"], p["bits"] - p["right"] - p["unread"], p["unread"],
                     round(p["right"] / twins, 1), round(p["right"] / result["seconds"], 1)])
    head = (f"page-cache channel between a bot's processes, isolation = \"match\", sandbox bwrap: "
            f"{result['matches']} matches ({twins} twins) in {result['seconds']} s; file {result['file']}; "
            f"load average {result['load_average']} (1/5/15 min) at the start")
    return head + "\n\n" + tabulate(rows, ["read in the twin", "right", "wrong", "unread", "right per twin match",
                                           "right per second"], tablefmt="github")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.tools.covert", description=__doc__.splitlines()[0])
    parser.add_argument("--deal-sets", type=int, default=6, help="twin pairs to play (default 6)")
    parser.add_argument("--file", type=Path, help="the file whose pages carry the bits (default: one of the "
                                                  "bot's own, in its directory, as large as needed)")
    parser.add_argument("--payload", type=int, default=4096,
                        help="bits more sent a twin pair, beside the hands (default 4096): what the channel carries")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if (why := sandbox.probe()) is not None:
        parser.exit(2, f"Error: the channel is measured in the sandbox, and {why}\n")
    if not BOT.exists():
        parser.exit(2, f"Error: {BOT} is not there (the hostile bot lives in the checkout's tests)\n")
    if args.file is not None and not args.file.is_file():
        parser.exit(2, f"Error: --file {args.file} is not a file\n")
    pages = pages_needed(args.deal_sets, args.payload)
    if args.file is not None and args.file.stat().st_size < pages * os.sysconf("SC_PAGE_SIZE"):
        parser.exit(2, f"Error: --file {args.file} has fewer than the {pages} pages needed\n")
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="referee-covert-") as tmp:
        result = measure(args.deal_sets, args.payload, args.file.resolve() if args.file else None, Path(tmp))
    result["load_average"] = load
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
