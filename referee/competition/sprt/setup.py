"""What an SPRT run needs, from an SPRT file or from command-line options (and both: the
options override the file's)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee import games, model
from referee.competition import config as tconfig
from referee.competition.config import ConfigFile
from referee.hosting import paths
from referee.model import BotSpec, ExecutorSpec, Isolation, PoolSpec, SandboxMode
from referee.model.teams import TeamError
from referee.runner import Clock
from referee.stats.sprt import EloModel, check_hypotheses

#: ``(elo0, elo1)`` of the presets in each Elo model (docs/regression.md, "Presets"). Normalized:
#: fishtest's <0, 2> and <-1.75, 0.25> (normalized Elo too) scaled by 12.5, an SPRT of about a
#: thousand games at its bounds whatever the game. Logistic: this project's own, about a minute of
#: CI in Aegis (its units are worth 8 independent games) but twice that in Confirmation (3).
PRESETS: dict[str, dict[EloModel, tuple[float, float]]] = {
    "stronger": {EloModel.NORMALIZED: (0.0, 25.0), EloModel.LOGISTIC: (0.0, 20.0)},
    "non-regression": {EloModel.NORMALIZED: (-22.0, 3.0), EloModel.LOGISTIC: (-17.5, 2.5)},
}
DEFAULT_MODEL = EloModel.NORMALIZED
#: the default cap on units (see docs/regression.md for how it compares with the expected length)
DEFAULT_MAX_UNITS = 2000
_SPRT_KEYS = {"candidate", "baseline", "preset", "elo0", "elo1", "elo_model", "alpha", "beta", "max_units"}


class SetupError(ValueError):
    """Hypotheses given both ways, or half of one way; ``key`` is the one at fault."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Hypotheses:
    """H0: the candidate is ``elo0`` Elo stronger, against H1: ``elo1``, in the ``model``'s Elo;
    from a preset, or given."""

    elo0: float
    elo1: float
    preset: str | None = None
    model: EloModel = DEFAULT_MODEL

    @classmethod
    def of_preset(cls, preset: str, model: EloModel = DEFAULT_MODEL) -> Hypotheses:
        return cls(*PRESETS[preset][model], preset, model)

    @classmethod
    def given(cls, preset: str | None, elo0: float | None, elo1: float | None, model: EloModel | None = None,
              name: Callable[[str], str] = "--{}".format) -> Hypotheses | None:
        """The hypotheses of a preset, or of elo0 and elo1, in ``model`` (default: normalized);
        None if neither is given. A SetupError if both are, or one Elo without the other (``name``
        spells the keys)."""
        _check_choice(preset, elo0, elo1, name)
        model = EloModel(model or DEFAULT_MODEL)
        if preset is not None:
            return cls.of_preset(preset, model)
        if elo0 is not None and elo1 is not None:  # both or neither (checked above)
            return cls(elo0, elo1, None, model)
        return None


def _check_choice(preset: Any, elo0: Any, elo1: Any, name: Callable[[str], str]) -> None:
    if preset is not None and (elo0 is not None or elo1 is not None):
        raise SetupError(f"give {name('preset')} or {name('elo0')} and {name('elo1')}, not both", "preset")
    if (elo0 is None) != (elo1 is None):
        raise SetupError(f"{name('elo0')} and {name('elo1')} go together", "elo0" if elo0 is not None else "elo1")


@dataclass(frozen=True)
class SprtSetup:
    """Everything an SPRT run needs: the game, the two bots, the hypotheses and the cap."""

    game: str
    options: dict[str, Any]
    candidate: BotSpec
    baseline: BotSpec
    seed: int
    clock: Clock
    concurrency: int = 2
    elo0: float = PRESETS["stronger"][DEFAULT_MODEL][0]
    elo1: float = PRESETS["stronger"][DEFAULT_MODEL][1]
    alpha: float = 0.05
    beta: float = 0.05
    max_units: int = DEFAULT_MAX_UNITS
    output: Path | None = None
    preset: str | None = "stronger"
    sandbox: SandboxMode = SandboxMode.AUTO  # [limits] sandbox of an SPRT file
    source: Path | None = None       # the SPRT file, hidden from the bots
    isolation: Isolation = Isolation.TOURNAMENT  # [tournament] isolation of an SPRT file
    startup_s: float = 30.0          # [tournament] startup_s of an SPRT file
    elo_model: EloModel = DEFAULT_MODEL  # the unit of elo0 and elo1
    executor: ExecutorSpec = ExecutorSpec()  # [executor] of an SPRT file, or --executor
    title: str | None = None         # [tournament] title and description of an SPRT file (the report's)
    description: str | None = None
    markdown: Path | None = None     # --markdown FILE: written by the run, hidden from the bots
    pool: PoolSpec | None = None     # [pool] of an SPRT file: the pool whose bot the baseline is (docs/pool.md)

    def __post_init__(self) -> None:
        check_hypotheses(self.elo0, self.elo1, self.alpha, self.beta, self.elo_model)
        if self.candidate.name == self.baseline.name:
            raise ValueError(f"the candidate and the baseline have the same name {self.candidate.name!r}")

    def hidden(self) -> list[Path]:
        """What the run hides from its bots, and leaves out of their versions: what it writes (its
        output directory, ``--markdown``, the files its standard output and error go to) and the file."""
        return [*paths.written(self.output, self.markdown), *filter(None, [self.source])]

    def fingerprint(self) -> str:
        """What must not change in an output directory: what shapes the units' results."""
        return json.dumps({"sprt": [self.candidate.name, self.baseline.name], "game": self.game,
                           "options": self.options, "seed": self.seed,
                           "clock": [self.clock.decision_s, self.clock.bank_s]}, sort_keys=True)

    def describe(self) -> dict[str, Any]:
        return {"game": self.game, "options": self.options, "seed": self.seed,
                "sprt": {"candidate": self.candidate.name, "baseline": self.baseline.name, "elo0": self.elo0,
                         "elo1": self.elo1, "elo_model": str(self.elo_model), "alpha": self.alpha,
                         "beta": self.beta, "max_units": self.max_units},
                "clock": {"decision_ms": round(self.clock.decision_s * 1000),
                          "bank_ms": round(self.clock.bank_s * 1000)},
                "concurrency": self.concurrency, **model.publication(self.title, self.description)}

    def with_overrides(self, hypotheses: Hypotheses | None = None, *, elo_model: EloModel | None = None,
                       seed: int | None = None,
                       decision_ms: int | None = None, bank_ms: int | None = None, alpha: float | None = None,
                       beta: float | None = None, max_units: int | None = None, concurrency: int | None = None,
                       output: str | Path | None = None) -> SprtSetup:
        """This set-up with what is given (not None) in place of its own: command-line options
        over an SPRT file. A ValueError if the result is not a valid set-up. An ``elo_model`` alone
        restates the file's preset in that model (explicit elo0 and elo1 are taken in it as they are)."""
        changes: dict[str, Any] = {}
        if hypotheses is None and elo_model is not None:
            hypotheses = (Hypotheses.of_preset(self.preset, elo_model) if self.preset is not None
                          else Hypotheses(self.elo0, self.elo1, None, elo_model))
        if hypotheses is not None:
            changes.update(elo0=hypotheses.elo0, elo1=hypotheses.elo1, preset=hypotheses.preset,
                           elo_model=hypotheses.model)
        given = {"seed": seed, "alpha": alpha, "beta": beta, "max_units": max_units, "concurrency": concurrency}
        changes.update({key: value for key, value in given.items() if value is not None})
        if output is not None:
            changes["output"] = Path(output).resolve()
        if decision_ms is not None or bank_ms is not None:
            clock = self.clock
            if decision_ms is not None:
                clock = dataclasses.replace(clock, decision_s=decision_ms / 1000)
            if bank_ms is not None:
                clock = dataclasses.replace(clock, bank_s=bank_ms / 1000)
            changes["clock"] = clock
        return dataclasses.replace(self, **changes)


def from_options(game: str, candidate: BotSpec, baseline: BotSpec, seed: int, *,
                 options: Mapping[str, str] | None = None, hypotheses: Hypotheses | None = None,
                 decision_ms: int = 1000, bank_ms: int = 10000, alpha: float = 0.05, beta: float = 0.05,
                 max_units: int = DEFAULT_MAX_UNITS, concurrency: int = 2,
                 output: str | Path | None = None) -> SprtSetup:
    """A set-up from command-line options: the game's rule options as strings (checked: an
    OptionError), the hypotheses of the stronger preset unless others are given. A ValueError
    if it is not a valid set-up."""
    hypotheses = hypotheses or Hypotheses.of_preset("stronger")
    return SprtSetup(game, games.get(game).parse_options(dict(options or {})), candidate, baseline, seed,
                     Clock(decision_ms / 1000, bank_ms / 1000), concurrency, hypotheses.elo0, hypotheses.elo1,
                     alpha, beta, max_units, Path(output).resolve() if output else None, hypotheses.preset,
                     elo_model=hypotheses.model)


# --- the SPRT file ----------------------------------------------------------------------


def load(path: str | Path) -> SprtSetup:
    """An SPRT file: a tournament file with exactly two bots and an [sprt] table (docs/regression.md)."""
    return parse(tconfig.read(path))


def parse(loc: ConfigFile) -> SprtSetup:
    s, rest = loc.split("sprt", _SPRT_KEYS, 'with candidate = "BOT", one of the two [[bots]]')
    t = rest.data.get("tournament")
    if isinstance(t, dict):
        for key in ("deal_sets", "max_groups", "schedule", "stop", "confidence", "max_deal_sets"):
            if key in t:
                raise loc.error(f"tournament.{key} has no meaning for an SPRT: it plays units until a verdict "
                                f"or sprt.max_units", "tournament", key)
    base = tconfig.parse(rest)
    names = [b.name for b in base.bots]
    if len(names) != 2:
        raise loc.error(f"an SPRT needs exactly two bots, the candidate and the baseline; got {len(names)}",
                        "bots", "name", 2 if len(names) > 2 else 0)
    candidate = s.get("candidate")
    if candidate not in names:
        raise loc.error(f"sprt.candidate must name one of the bots ({', '.join(names)}), got {candidate!r}",
                        "sprt", "candidate")
    other = names[1 - names.index(candidate)]
    baseline = s.get("baseline", other)
    if baseline != other:
        raise loc.error(f"sprt.baseline must be the other bot, {other!r}, got {baseline!r}", "sprt", "baseline")
    if base.pool is not None and baseline not in base.pool.bots:
        raise loc.error(f"sprt: with a [pool], the baseline is its bot (pool.bots = [\"NAME\"]) and the candidate "
                        f"one of the [[bots]]; the baseline here is {baseline!r}", "sprt", "candidate")
    teams = base.teams
    try:
        teams.settle([] if teams.apart([candidate, baseline]) else [candidate, baseline],
                     f"sprt: the candidate {candidate} and the baseline {baseline} are of one team "
                     f"({teams.shared([candidate, baseline])}), and an SPRT seats them together")
    except TeamError as err:
        raise tconfig.team_error(loc, base, err) from None

    def number(key: str, default: float) -> float:
        value = s.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise loc.error(f"sprt.{key} must be a number, got {value!r}", "sprt", key)
        return float(value)

    model = s.get("elo_model", str(DEFAULT_MODEL))
    if model not in list(EloModel):
        raise loc.error(f"sprt.elo_model must be one of {', '.join(EloModel)}, got {model!r}", "sprt", "elo_model")
    model = EloModel(model)
    preset = s.get("preset")
    if preset is not None and preset not in PRESETS:
        raise loc.error(f"sprt.preset must be one of {', '.join(PRESETS)}, got {preset!r}", "sprt", "preset")
    try:
        _check_choice(preset, s.get("elo0"), s.get("elo1"), "sprt.{}".format)
    except SetupError as err:
        raise loc.error(str(err), "sprt", err.key) from None
    if "elo0" in s:
        elo0, elo1 = number("elo0", 0.0), number("elo1", 0.0)
    else:
        preset = preset or "stronger"
        elo0, elo1 = PRESETS[preset][model]
    alpha, beta = number("alpha", 0.05), number("beta", 0.05)
    try:
        check_hypotheses(elo0, elo1, alpha, beta, model)
    except ValueError as err:
        raise loc.error(f"sprt: {err}", "sprt", "elo0" if "elo" in str(err) else "alpha") from None
    max_units = loc.integer("sprt", "max_units", s.get("max_units", DEFAULT_MAX_UNITS), 1)
    bots = {b.name: b for b in base.bots}
    has_output = isinstance(t, dict) and "output" in t
    return SprtSetup(base.game, base.options, bots[candidate], bots[baseline], base.seed, base.clock,
                     base.concurrency, elo0, elo1, alpha, beta, max_units, base.output if has_output else None,
                     preset, base.sandbox, base.source, base.isolation, base.startup_s, model, base.executor,
                     base.title, base.description, pool=base.pool)
