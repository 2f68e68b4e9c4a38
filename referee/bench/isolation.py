"""Section 8 of the bench: what ``isolation = "match"`` costs, in games per minute.

Under ``"match"`` every launched bot plays each match in a process of its own, and no two
processes of one bot run it at once (docs/security.md): no two matches that share a
launched bot play together (its next process is prepared meanwhile, running only the
referee's starter until the last one is gone). The same tournaments are played, whole, through the code of
``referee tournament`` (launching and sandboxing included), three ways:

- ``tournament``: long-lived bots, ``concurrency`` matches at once;
- ``match, before``: a fresh process per match, with the rule this project had before (only the
  matches of one deal set kept apart), kept here, in the bench only, to measure against;
- ``match``: a fresh process per match, one process of a bot at a time (the rule now).

The tournaments: three random bots (every pair of them shares a bot, so ``"match"`` plays one
match at a time), six random bots (three pairs can play at once), and examples/aegis.toml's
sample bots (a search bot thinking 40 ms a decision), on fewer deal sets. Random bots answer at
once: their matches cost what starting and stopping processes costs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

from referee.bench import served
from referee.hosting import sandbox
from referee.model import BotSpec, Isolation, Seating, TournamentConfig
from referee.play.executors import LocalExecutor

WAYS = ("tournament", "match, before", "match")


def _before(self: LocalExecutor, seating: Seating) -> set[tuple[str, Any]]:
    """The rule before: under isolation = "match", only a deal set's matches kept apart."""
    return {("deal set", seating.deal_set)} if self.isolation == Isolation.MATCH else set()


@contextlib.contextmanager
def rule(way: str) -> Iterator[None]:
    """The executor's rule for ``way`` while it plays."""
    if way == "match, before":  # nor were processes prepared then (two of a bot may play at once here)
        with mock.patch.object(LocalExecutor, "_holds", _before), \
                mock.patch.object(LocalExecutor, "_prepare", lambda self, seating: None):
            yield
    else:
        yield


def random_bots(n: int) -> tuple[BotSpec, ...]:
    return tuple(BotSpec(f"random{i}", ("python", "-m", "sample_bots.random", "--seed", str(i)), str(served.ROOT))
                 for i in range(1, n + 1))


def tournaments() -> list[tuple[str, Callable[[TournamentConfig], TournamentConfig]]]:
    """(name, change(config)) for each tournament of the section, built on examples/aegis.toml."""
    def field(n: int, deal_sets: int) -> Callable[[TournamentConfig], TournamentConfig]:
        return lambda cfg: dataclasses.replace(cfg, bots=random_bots(n), deal_sets=deal_sets)
    return [("3 random bots, 4 deal sets", field(3, 4)), ("6 random bots, 2 deal sets", field(6, 2)),
            ("examples/aegis.toml, 4 deal sets", lambda cfg: dataclasses.replace(cfg, deal_sets=4))]


async def measure(workdir: Path) -> dict[str, Any]:
    path = served.ROOT / "examples" / "aegis.toml"
    rows: list[dict[str, Any]] = []
    for name, change in tournaments():
        for way in WAYS:
            isolation = Isolation.TOURNAMENT if way == Isolation.TOURNAMENT else Isolation.MATCH
            before = machine_cpu()
            with rule(way):
                row = await served.tournament(path, workdir / f"{len(rows)}",
                                              lambda cfg: dataclasses.replace(change(cfg), isolation=isolation))  # noqa: B023 (called in this iteration)
            cpu = machine_cpu() - before
            rows.append({"tournament": name, "way": way, **row,
                         "cpu_s_per_match": round(cpu / row["matches"], 3) if row["matches"] else None})
    unavailable = sandbox.probe()  # examples/aegis.toml: sandbox = "auto"
    return {"rows": rows, "sandbox": "bwrap" if unavailable is None else f"none ({unavailable})"}


def machine_cpu() -> float:
    """The CPU-seconds the whole machine has spent so far (``/proc/stat``: user, nice, system, irq and softirq
    of every core), so that what a bot's processes cost, sandbox and kernel included, is counted wherever it
    ran; the machine must be otherwise idle for a difference of two readings to be a run's."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return sum(int(fields[i]) for i in (1, 2, 3, 6, 7)) / os.sysconf("SC_CLK_TCK")


def table(result: dict[str, Any]) -> tuple[list[list[Any]], list[str]]:
    """The rows as the report prints them: games/minute, and each against ``match, before``."""
    before = {r["tournament"]: r["games_per_minute"] for r in result["rows"] if r["way"] == "match, before"}
    out = []
    for r in result["rows"]:
        ratio = r["games_per_minute"] / before[r["tournament"]] if before.get(r["tournament"]) else None
        out.append([r["tournament"], r["way"], r["concurrency"], r["matches"], r["seconds"], r["games_per_minute"],
                    f"{ratio:.2f}" if ratio is not None else "", r.get("cpu_s_per_match", "")])
    return out, ["tournament", "isolation", "at once (asked)", "matches", "seconds", "games/minute",
                 "vs match, before", "machine CPU s/match"]
