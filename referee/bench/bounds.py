"""What a bot that answers at the message cap costs the results directory:
``python -m referee.bench.bounds``.

A tournament of Aegis through ``referee tournament`` (its own process, launched bots, the
sandbox of ``--sandbox``): a hostile bot that answers 256 KiB of text (the largest message the
referee reads, less the reply's own fields) at every decision, against two random bots, then
``referee export`` and ``referee view`` of its results. Prints, per match, the bytes of the
store, the export and the report against the bound docs/records.md states, and the runner's
peak memory; and the same for a control run in which the hostile bot answers the first legal
action (which is also what the referee plays in its place, so the games are the same).

Before the bound (the runner of 91da2f2, the same 12 matches, load 32.5): 5.6 MB of store,
5.6 MB of export and 5.7 MB of report per match, the runner's peak 171 MB; with it (load 8.4):
17 KB, 14 KB and 77 KB, 61 MB (docs/records.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from referee import bot as kit
from referee import records
from referee.model import SandboxMode
from referee.results.store import Store

ROOT = Path(__file__).resolve().parents[2]
#: the hostile answer: as long as one message may be (server.MAX_MESSAGE_BYTES), less the reply's fields
ANSWER = "X" * (256 * 1024 - 200)
REPORT_PER_MATCH, REPORT_PER_DECISION = 64 * 1024, 1536  # the report's bound (docs/records.md)


def hostile_bot() -> None:
    """The bot: the kit, answering ANSWER (or, with --honest, the first legal action), one message at a time."""
    honest = "--honest" in sys.argv
    argv = [a for a in sys.argv[1:] if a not in ("--bot", "--honest")]
    # no batch: one answer is at the cap (mypy forbids assigning to a method: this patch is the point)
    kit.BotSession._messages = lambda self: iter(self._outbox.get, None)  # type: ignore[method-assign]
    kit.run_bot(lambda observation, legal, game: 0 if honest else ANSWER, argv, default_name="huge")


def tournament_file(directory: Path, honest: bool, sandbox: str, deal_sets: int) -> Path:
    huge = ["python", "-m", "referee.bench.bounds", "--bot", *(["--honest"] if honest else [])]
    bots = {"huge": huge, "random1": ["python", "-m", "sample_bots.random", "--seed", "1"],
            "random2": ["python", "-m", "sample_bots.random", "--seed", "2"]}
    text = (f'[tournament]\ngame = "aegis"\ndeal_sets = {deal_sets}\nseed = 7\nconcurrency = 2\noutput = "out"\n'
            f'\n[clock]\ndecision_ms = 5000\nbank_ms = 30000\n\n[limits]\nsandbox = "{sandbox}"\n')
    for name, command in bots.items():
        text += f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{ROOT}"\n'
    path = directory / "t.toml"
    path.write_text(text)
    return path


def peak_rss_mb(proc: subprocess.Popen[str], peak: list[float]) -> None:
    """Follow ``proc``'s high-water mark of resident memory (VmHWM) until it ends."""
    while proc.poll() is None:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak[0] = max(peak[0], int(line.split()[1]) / 1024)
        except OSError:
            pass
        time.sleep(0.05)


def size(path: Path) -> int:
    """Bytes of a file, or of every file under a directory."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(directory: Path, honest: bool, sandbox: str, deal_sets: int) -> dict[str, Any]:
    path = tournament_file(directory, honest, sandbox, deal_sets)
    started, peak = time.monotonic(), [0.0]
    proc = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(path), "--quiet", "--bootstrap", "0"],
                            cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watcher = threading.Thread(target=peak_rss_mb, args=(proc, peak))
    watcher.start()
    _, stderr = proc.communicate()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"the tournament failed (exit {proc.returncode}): {stderr[-2000:]}")
    seconds = time.monotonic() - started
    out = directory / "out"
    for command in (["export", str(out)], ["view", str(out)]):
        subprocess.run([sys.executable, "-m", "referee", *command], check=True, capture_output=True)
    store = Store(out, create=False)
    try:
        matches, bound, report_bound, faults, counted = 0, 0, 0, 0, 0
        for row in store.matches():
            record = store.record(row.key)
            assert record is not None  # the key of a stored match
            kept, decisions = len(record["meta"]["faults"]), len(record["actions"])
            tally = records.faults_of(record)
            matches, faults, counted = matches + 1, faults + tally.kept, counted + tally.counted
            bound += records.max_bytes(decisions, kept)
            report_bound += REPORT_PER_MATCH + REPORT_PER_DECISION * decisions + 1024 * kept
    finally:
        store.close()
    def per(n: int) -> float:  # KB per match
        return round(n / matches / 1024, 1)

    return {"run": "control (first legal action)" if honest else "answers of 256 KiB", "matches": matches,
            "faults_counted": counted, "faults_kept": faults, "seconds": round(seconds, 1),
            "store_kb": per(size(out / "results.sqlite")), "store_bound_kb": per(2 * bound + 64 * 1024),
            "export_kb": per(size(out / "export")), "export_bound_kb": per(bound + 1024 * matches),
            "report_kb": per(size(out / "report")), "report_bound_kb": per(report_bound),
            "logs_kb": round(size(out / "logs") / 1024, 1), "runner_peak_mb": round(peak[0], 1)}


def main() -> None:
    if "--bot" in sys.argv:
        return hostile_bot()
    parser = argparse.ArgumentParser(prog="python -m referee.bench.bounds", description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default=SandboxMode.AUTO.value, choices=[mode.value for mode in SandboxMode])
    parser.add_argument("--deal-sets", type=int, default=2, help="12 matches for 2 (default)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, honest in (("control", True), ("huge", False)):
            (Path(tmp) / name).mkdir()
            rows.append(measure(Path(tmp) / name, honest, args.sandbox, args.deal_sets))
    load = os.getloadavg()[0]
    print(f"per match, KB (load average {load:.2f}; bounds from docs/records.md):")
    print(tabulate([{k: v for k, v in r.items() if k != "seconds"} for r in rows], headers="keys"))
    if args.json:
        args.json.write_text(json.dumps({"load": load, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
