"""The red team's figures (round 4), each from real tournaments of tests/bots/hostile/entrant.py
against a random bot (Aegis, ``sandbox = "bwrap"``, ``isolation = "match"``, one match at a time):

    .venv/bin/python tests/bots/hostile/figures.py [--deal-sets 8] [--only clock|keyring|load]

- ``clock``: how much a bot's process tells its twin through the moment it ends (the next one's
  start): twins whose value was read right, at 4, 8 and 16 values a twin;
- ``keyring``: hands carried to the twin by keys in the runner's session keyring (the run under
  session_keyring.py, as a login or a systemd service), the organiser's key read, bytes left behind;
- ``load``: what a bot makes the runner do, outside its CPU share: ListGames calls the referee
  refuses (``--attack calls``) and ESC bytes on its stdout (``--attack flood``): the victim's
  decision times and the runner's CPU, against a control run (200 ms a decision, 1 s bank).

It prints the machine's load average with each table (the figures move with it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from referee import records as rec

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = Path(__file__).resolve().parent
RANKS, SUITS = "23456789TJQKA", "SHDC"
CARDS = [r + s for s in SUITS for r in RANKS]

TOURNAMENT = """
[tournament]
game = "aegis"
deal_sets = {deal_sets}
seed = 8
concurrency = 1
output = "out"
isolation = "match"

[clock]
decision_ms = {decision_ms}
bank_ms = {bank_ms}

[limits]
sandbox = "bwrap"

[[bots]]
name = "entrant"
command = {command}
cwd = "attacker"

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "victim"
"""


def tournament(args: list[str], deal_sets: int, decision_ms: int = 3000, bank_ms: int = 10000,
               keyring: bool = False) -> tuple[Path, float]:
    """A run in a fresh directory; its output directory and the runner's CPU seconds."""
    folder = Path(tempfile.mkdtemp(prefix="redteam-"))
    for name in ("attacker", "victim"):
        (folder / name).mkdir()
    shutil.copy(HOSTILE / "entrant.py", folder / "attacker")
    (folder / "t.toml").write_text(TOURNAMENT.format(deal_sets=deal_sets, decision_ms=decision_ms, bank_ms=bank_ms,
                                                     command=json.dumps(["python", "entrant.py", *args])))
    command = [sys.executable, "-m", "referee", "tournament", str(folder / "t.toml"), "--quiet", "--bootstrap", "20"]
    if keyring:
        command = [sys.executable, str(HOSTILE / "session_keyring.py"), str(folder / "keyring.json"), *command]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"the tournament failed: {done.stderr.strip()}")
    return folder / "out", (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def reports(out: Path, kind: str) -> list[dict]:
    log = out / "logs" / "entrant.log"
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines() if line.startswith(kind + " ")]


def records(out: Path) -> list[dict]:
    subprocess.run([sys.executable, "-m", "referee", "export", str(out)], cwd=ROOT, capture_output=True, check=True)
    return [json.loads(p.read_text()) for p in sorted((out / "export").glob("*.json"))]


def victim_hand(record: dict, deal: int) -> list[str]:
    seat = record["seats"].index("victim")
    return next(e.data["cards"] for e in rec.replay(record).state.events
                if e.kind == "hand" and e.seat == seat and e.data["game"] == deal)


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def clock(deal_sets: int) -> None:
    print(f"clock: the twin reads its opponent's first card (modulo the values a twin) from when it starts; {load()}")
    delays = []
    for levels in (4, 8, 16):
        out, _ = tournament(["--attack", "clock", "--levels", str(levels)], deal_sets)
        ends = reports(out, "EXIT")
        delays += [b["start"] - a["at"] for a, b in zip(ends, ends[1:])]
        by_match = {r["meta"]["key"]: r for r in records(out)}
        learned = [r for r in reports(out, "LEARNED") if r["via"] == "clock"]
        right = near = 0
        for r in learned:
            truth = CARDS.index(victim_hand(by_match[r["game_id"]], 1)[0]) % levels
            right += r["value"] == truth
            near += min((r["value"] - truth) % levels, (truth - r["value"]) % levels) <= 1
        print(f"  {levels:2} values ({levels.bit_length() - 1} bits): {right} of {len(learned)} twins right, "
              f"{near} within one value")
        shutil.rmtree(out.parent)
    delays.sort()
    print(f"  the runner's delay from a process's end to its next one's start: {1000 * delays[0]:.0f} ms to "
          f"{1000 * delays[-1]:.0f} ms, median {1000 * delays[len(delays) // 2]:.0f} ms ({len(delays)} starts)")


def keyring(deal_sets: int) -> None:
    out, _ = tournament(["--attack", "keyring"], deal_sets, keyring=True)
    by_match = {r["meta"]["key"]: r for r in records(out)}
    learned = [r for r in reports(out, "LEARNED") if r["via"] == "keyring"]
    right = sum(r["opponent_hand"] is not None
                and sorted(r["opponent_hand"]) == sorted(victim_hand(by_match[r["game_id"]], r["deal"]))
                for r in learned)
    left = json.loads((out.parent / "keyring.json").read_text())
    found = sum(r["opponent_hand"] is not None for r in learned)
    print(f"keyring ({load()}): the victim's whole hand read in {right} of {len(learned)} deals of the twins "
          f"({found} found, {found - right} wrong; the others were not dealt in the first match); the "
          f"organiser's key read {len(reports(out, 'FOUND'))} time(s); left in the keyring after the run: "
          f"{left['keys']} keys, {left['bytes']} bytes")
    shutil.rmtree(out.parent)


def decisions(out: Path) -> tuple[float, float, int]:
    """The victim's mean and slowest decision (ms) and its timeouts, over the run."""
    total = answered = slowest = timeouts = 0
    for record in records(out):
        seat = record["seats"].index("victim")
        times = record["meta"]["decision_times"][seat]
        total, answered = total + times["total_s"], answered + times["answered"]
        slowest = max(slowest, times["slowest_s"])
        timeouts += record["meta"]["fault_counts"][seat]["timeout"]
    return 1000 * total / answered, 1000 * slowest, timeouts


def runner_load(deal_sets: int) -> None:
    print(f"load: the victim's decisions (200 ms a decision, 1 s bank) while the attacker makes the runner work; "
          f"{load()}")
    for label, args in (("control", ["--honest"]), ("calls", ["--attack", "calls"]), ("flood", ["--attack", "flood"])):
        out, cpu = tournament(args, deal_sets, decision_ms=200, bank_ms=1000)
        mean, slowest, timeouts = decisions(out)
        print(f"  {label:8} victim mean {mean:6.2f} ms, slowest {slowest:7.2f} ms, {timeouts} timeout(s); "
              f"runner and bots {cpu:5.2f} CPU s")
        shutil.rmtree(out.parent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deal-sets", type=int, default=8)
    parser.add_argument("--only", choices=["clock", "keyring", "load"])
    args = parser.parse_args()
    for name, part in (("clock", clock), ("keyring", keyring), ("load", runner_load)):
        if args.only in (None, name):
            part(args.deal_sets)


if __name__ == "__main__":
    main()
