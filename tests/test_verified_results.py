"""A result reaches the store only once its record replays through the engine: a forged one, handed
back by an executor (a Ray worker or a remote referee is not trusted), is refused and not stored, and
the genuine results of the same run are (referee/competition/run.py, ``unverified``)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from harness import ROOT, write_tournament

from referee.competition import config as tconfig
from referee.competition import run as trun
from referee.competition import service
from referee.model import Played
from referee.play.executors.base import Executor
from referee.results.store import Store

BOTS = "".join(f"""
[[bots]]
name = "{name}"
command = ["python", "-m", "sample_bots.{kind}", "--seed", "{seed}"]
cwd = "{ROOT}"
""" for name, kind, seed in (("r1", "random", 1), ("h", "heuristic", 3)))
TABLES = '\n[clock]\ndecision_ms = 2000\nbank_ms = 10000\n\n[limits]\nsandbox = "none"\n' + BOTS


def _forgeries(played: Played) -> dict[str, Played]:
    """Ways a worker could lie about a genuine match."""
    swapped = dict(played.results, scores=list(reversed(played.results["scores"])),
                   placing=list(reversed(played.results["placing"])))
    other_seed = copy.deepcopy(played.record)
    other_seed["seed"] = int(other_seed["seed"]) + 1
    bad_action = copy.deepcopy(played.record)
    bad_action["actions"] = bad_action["actions"][:-1]  # cut short: the game is not over
    stated = copy.deepcopy(played.record)
    stated["results"]["scores"] = list(reversed(stated["results"]["scores"]))
    decks = copy.deepcopy(played.record)
    decks["decks"][0] = list(reversed(decks["decks"][0]))
    return {"scores swapped": dataclasses.replace(played, results=swapped),
            "another seed": dataclasses.replace(played, record=other_seed),
            "record cut short": dataclasses.replace(played, record=bad_action),
            "record's results changed too": dataclasses.replace(played, record=stated, results=dict(
                played.results, scores=stated["results"]["scores"],
                placing=list(reversed(played.results["placing"])))),
            "stacked deck": dataclasses.replace(played, record=decks)}


class Recorder:
    def __init__(self) -> None:
        self.said: list[str] = []

    def say(self, line: str) -> None:
        self.said.append(line)

    def started(self, *args: Any) -> None:
        pass

    def playing(self, *args: Any):
        return lambda *a: None

    def watch(self, arena: Any) -> None:
        pass

    def play(self, work):
        import asyncio
        return asyncio.run(work)


@pytest.mark.e2e
def test_a_forged_result_is_refused_and_the_genuine_ones_are_stored(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_tournament(tmp_path / "t.toml", TABLES, game="aegis", deal_sets=4, seed=7, concurrency=1)
    config = tconfig.load(path)
    forged: dict[str, str] = {}
    kinds = iter(["scores swapped", "another seed", "record cut short", "record's results changed too",
                  "stacked deck"])
    genuine = Executor.play_all

    async def lying(self: Executor, seatings: Any, concurrency: int, on_played: Any, on_dead: Any = None) -> None:
        def forging(p: Played) -> Any:
            if p.seating.deal_set == 0:
                return on_played(p)  # deal set 0's matches: genuine
            kind = next(kinds, None)
            if kind is None:
                return on_played(p)
            forged[p.seating.key] = kind
            assert trun.unverified(config, p) is None  # the genuine one verifies
            return on_played(_forgeries(p)[kind])
        await genuine(self, seatings, concurrency, forging, on_dead)

    monkeypatch.setattr(Executor, "play_all", lying)
    observer = Recorder()
    outcome = service.run_tournament(service.TournamentRequest(config, bootstrap=50), observer)
    assert len(forged) == 5
    store = Store(config.output, create=False)
    try:
        stored = store.done()
    finally:
        store.close()
    assert stored.isdisjoint(forged)  # none of the forged results is stored
    assert outcome.saved == 8 - 5 and len(stored) == 3
    refused = [line for line in observer.said if "its result was refused" in line]
    assert len(refused) == 5, observer.said
    for key in forged:
        assert any(key in line for line in refused)

    # the control: the same tournament with honest results stores every match, and a rerun plays the refused
    monkeypatch.setattr(Executor, "play_all", genuine)
    again = service.run_tournament(service.TournamentRequest(config, bootstrap=50), Recorder())
    assert again.saved == 8 and again.played == 5
