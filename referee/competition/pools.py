"""Making a reference pool: the house bots of a game play each other, and their fit is the pool file.

:func:`make` is ``referee pool make GAME`` as a service (a web front end calls it too): the house pool
(:data:`HOUSE`: random, the heuristic weakened by 75% and by 50% random moves, the heuristic, the
search bot) plays a round robin among itself as a tournament does (:func:`referee.competition.service.run_tournament`:
sandboxed, stored as it goes, resumed by the same request), then
:func:`referee.results.pool.make` fits the pool from the run's results, each bot's version being the
:func:`~referee.results.pool.content_hash` of the version the store recorded, and the pool file is
written. A run that did not end (interrupted, a bot that died for good) writes no pool: its results
stay, and the same request plays what is missing. docs/pool.md is the user's side.

    request = MakeRequest("aegis", Path("aegis.pool.json"), Path("aegis.pool.results"), deal_sets=100)
    made = make(request, observer)          # made.pool: the Pool written to request.output, or None
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee import games
from referee.competition import config as tconfig
from referee.competition import service
from referee.model import SandboxMode, TournamentConfig
from referee.results import pool as poolfile
from referee.results import standings
from referee.results.pool import Pool, PoolBot
from referee.results.store import Store

#: where the project's own pools live (package data: a normal install has them too), one a game:
#: ``GAME.pool.json``, made by ``make pools``
SHIPPED = Path(__file__).resolve().parent.parent / "pools"
#: the package of the house bots, whose parent directory is every house bot's working directory
SAMPLE_BOTS = "sample_bots"


@dataclass(frozen=True)
class HouseBot:
    """A bot of the house pool: its name, its command (run in the directory holding ``sample_bots``),
    and ``files``: exactly the sample bots' modules it imports (relative to that directory), so that its
    version changes when its own code does, not when the referee package or another bot does."""

    name: str
    command: tuple[str, ...]
    files: tuple[str, ...]


_INIT = "sample_bots/__init__.py"
_HEURISTIC = ("sample_bots/heuristic.py", "sample_bots/heuristic_aegis.py", "sample_bots/heuristic_confirmation.py")

#: The house pool, the same for every game (each bot plays both): from random to search, the weakened
#: heuristics filling the gaps. The search bot stops at 20 samples a decision (``--rollouts``), not at a
#: time (``--think-ms`` 400 is only a ceiling, under the clock's own cap of half the decision time
#: left): its strength is then the same on a faster or a busier machine, which a pool's scale needs.
HOUSE: tuple[HouseBot, ...] = (
    HouseBot("random", ("python", "-m", "sample_bots.random"), (_INIT, "sample_bots/random.py")),
    HouseBot("weakened-75", ("python", "-m", "sample_bots.weakened", "--noise", "0.75"),
             (_INIT, "sample_bots/weakened.py", *_HEURISTIC)),
    HouseBot("weakened-50", ("python", "-m", "sample_bots.weakened", "--noise", "0.50"),
             (_INIT, "sample_bots/weakened.py", *_HEURISTIC)),
    HouseBot("heuristic", ("python", "-m", "sample_bots.heuristic"), (_INIT, *_HEURISTIC)),
    HouseBot("search", ("python", "-m", "sample_bots.search", "--rollouts", "20", "--think-ms", "400"),
             (_INIT, "sample_bots/search.py", "sample_bots/search_core.py", "sample_bots/search_aegis.py",
              "sample_bots/search_confirmation.py", *_HEURISTIC)),
)


class PoolMakeError(ValueError):
    """A pool that cannot be made as asked: no sample bots installed, an output the pool file cannot
    go to, results that fit no scale (one line)."""


@dataclass(frozen=True)
class MakeRequest:
    """A pool to make: the game, the pool file to write (``output``) and the run's results directory
    (``results``: the same request resumes it), the deal sets, the clock (ms), the game's options
    (checked as a tournament file's), the master seed (None: drawn, kept in the results directory),
    matches at once, the sandbox, the bots whose stored matches are dropped (``rerun``), the fit's
    bootstrap resamples, and ``bots``: the house bots to play, by name (none named: all of them)."""

    game: str
    output: Path
    results: Path
    deal_sets: int = 100
    decision_ms: int = 1000
    bank_ms: int = 10000
    options: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    concurrency: int = 2
    sandbox: SandboxMode = SandboxMode.AUTO
    rerun: tuple[str, ...] = ()
    bootstrap: int = 1000
    bots: tuple[str, ...] = ()


@dataclass(frozen=True)
class Made:
    """What :func:`make` did: the run's outcome (its exit code, what it saved) and the pool it wrote to
    ``path`` (None: the run did not end, nothing written)."""

    run: service.Outcome
    pool: Pool | None
    path: Path


def shipped(game: str) -> Path:
    """The path of the project's pool of ``game`` (it may not exist: the game has none)."""
    return SHIPPED / f"{game}.pool.json"


def sample_bots_home() -> Path:
    """The directory holding the ``sample_bots`` package (a checkout's root, or site-packages)."""
    spec = importlib.util.find_spec(SAMPLE_BOTS)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise PoolMakeError("the house pool's bots are the sample bots, and the sample_bots package is not "
                            "installed here (install referee with its sample bots)")
    return Path(locations[0]).resolve().parent


def house_bots(names: tuple[str, ...] = ()) -> tuple[HouseBot, ...]:
    """The house bots named (none named: all of :data:`HOUSE`), in the house's order; PoolMakeError for
    a name not in the house, or fewer than two."""
    known = [b.name for b in HOUSE]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise PoolMakeError(f"no house bot {', '.join(map(repr, unknown))} (the house pool: {', '.join(known)})")
    chosen = tuple(b for b in HOUSE if not names or b.name in names)
    if len(chosen) < 2:
        raise PoolMakeError(f"a pool needs at least two bots, got {', '.join(b.name for b in chosen)}")
    return chosen


def house_config(request: MakeRequest) -> TournamentConfig:
    """The round robin of the house pool in the request's setting, checked as a tournament file is
    (:func:`referee.competition.config.parse`); its errors name the pool file to be written."""
    output = request.output.resolve()
    cwd = os.path.relpath(sample_bots_home(), output.parent)
    tournament: dict[str, Any] = {
        "game": request.game, "options": dict(request.options), "deal_sets": request.deal_sets,
        "concurrency": request.concurrency, "output": str(request.results.resolve()),
        "title": f"Reference pool: {request.game}",
        "description": f"The house pool's round robin, fitted into the pool file {output.name}.",
        **({"seed": request.seed} if request.seed is not None else {}),
    }
    data = {
        "tournament": tournament,
        "clock": {"decision_ms": request.decision_ms, "bank_ms": request.bank_ms},
        "limits": {"sandbox": str(request.sandbox)},
        "bots": [{"name": b.name, "command": list(b.command), "cwd": cwd, "files": list(b.files)}
                 for b in house_bots(request.bots)],
    }
    return tconfig.parse(tconfig.ConfigFile(output, "", data))


def make(request: MakeRequest, observer: service.Observer) -> Made:
    """Play the house pool of the request's game among itself and, when the run ends with every
    match played, fit and write the pool file. Raises :class:`PoolMakeError` (and what a tournament
    raises: ConfigError, StoreError, ...) before anything is played for a request that cannot be made."""
    games.get(request.game)  # an unknown game: GameError
    output = request.output.resolve()
    if output.is_dir():
        raise PoolMakeError(f"{request.output} is a directory: give the pool file's path (--output)")
    if not output.parent.is_dir():
        raise PoolMakeError(f"cannot write the pool file {request.output}: no directory {output.parent}")
    results = request.results.resolve()
    if output == results or results in output.parents:
        raise PoolMakeError(f"the pool file {request.output} would be in its run's results directory "
                            f"{request.results}: give another --output or --results")
    config = service.prepared(house_config(request))
    outcome = service.run_tournament(service.TournamentRequest(config, request.rerun, bootstrap=request.bootstrap),
                                     observer)
    if outcome.ending is not service.Ending.DONE:
        return Made(outcome, None, output)
    made = fitted(request, config, cwd=config.bots[0].cwd)
    poolfile.write(made, output)
    return Made(outcome, made, output)


def fitted(request: MakeRequest, config: TournamentConfig, cwd: str | None) -> Pool:
    """The pool fitted from the results directory of its run."""
    store = Store(config.output, create=False)
    try:
        rows = list(store.matches())
        recorded = store.recorded_versions()
    finally:
        store.close()
    written = os.path.relpath(cwd or ".", request.output.resolve().parent)
    bots = []
    for b in house_bots(request.bots):
        if b.name not in recorded:
            raise PoolMakeError(f"{config.output}: no version of {b.name} recorded: play the pool again in a new "
                                f"results directory")
        bots.append(PoolBot(b.name, b.command, poolfile.content_hash(recorded[b.name]), written, b.files))
    clock = {"decision_ms": request.decision_ms, "bank_ms": request.bank_ms}
    try:
        return poolfile.make(config.game, config.options, clock, bots, standings.pair_results_of(config.game, rows),
                             bootstrap=request.bootstrap)
    except ValueError as e:
        raise PoolMakeError(f"{config.output}: the pool cannot be fitted: {e}") from None

