"""Is the candidate stronger than the baseline? A sequential probability ratio test on duplicate units.

Pure statistics first (no I/O), then the runner that plays the units.

Duplicate units
---------------
Games are played in **units** of two on the same deals with the seats swapped:

- Aegis: one match with the candidate in seat 0 and the baseline in seat 1,
  and the same deal set with the seats swapped.
- Confirmation: the candidate and the baseline each fill two seats, A B A B,
  and the same deal set again with the seats swapped, B A B A (with *pairs*
  the two copies of a bot are partners, so it is team against team).

A game's result for the candidate is 1, ½ or 0: Aegis by the match winner
(the placing); Confirmation by the candidate's **total score over its two
seats** against the baseline's total over its two seats (higher wins, equal
is a draw). A unit's two results add up to 0, ½, 1, 1½ or 2 points: the five
outcomes of fishtest's *pentanomial* model. The deals are the same for both
games of a unit, so the luck of the cards mostly cancels within the unit; the
pentanomial model measures the variance of units directly instead of
assuming independent games, which is where the savings come from.

The test (GSPRT, as fishtest's ``LLR_logistic``)
-----------------------------------------------
Hypotheses are in logistic Elo: ``H0: elo = elo0`` against ``H1: elo = elo1``
where a difference of ``elo`` gives the candidate the expected score per game
``s(elo) = 1 / (1 + 10 ** (-elo / 400))``. With ``a_i`` the per-game score of
outcome ``i`` (0, ¼, ½, ¾, 1: the unit's points over two) and ``p̂_i`` the
observed frequencies of the ``N`` units, the generalized log-likelihood
ratio is

    LLR = N * Σ_i p̂_i * log(p1_i / p0_i)

where ``p0`` and ``p1`` are the **maximum-likelihood** pentanomial
distributions under the constraint that the mean score is ``s(elo0)``,
resp. ``s(elo1)``. By Lagrange multipliers the constrained MLE is
``p_i = p̂_i / (1 + x * (a_i - s))``, with ``x`` the unique root of the
secular equation ``Σ_i p̂_i (a_i - s) / (1 + x (a_i - s)) = 0`` in the
interval where every ``1 + x (a_i - s)`` is positive; the left side is
strictly decreasing there, so a bracketed Newton iteration finds it (warm
started from the previous unit's root, it takes two or three steps). As in
fishtest, an outcome never observed counts 0.001 (so that the MLE exists from
the first unit). This is the exact MLE, not the normal approximation
``LLR ≈ N (s1 - s0)(2 μ - s0 - s1) / (2 σ²)`` (``μ``, ``σ²``: the mean and
variance of the per-unit score), which :func:`llr_normalized` computes for
comparison; the two agree closely once ``N`` is large.

The test stops at the first unit after which ``LLR >= log((1 - β) / α)``
(H1 accepted) or ``LLR <= log(β / (1 - α))`` (H0 accepted), or at the cap.
Units are counted in the order of their index (deal set), whatever order
they finish in, so a run is reproducible whatever the concurrency.

Estimates
---------
The Elo estimate is ``elo(μ)`` for the mean per-game score ``μ``, with the
95% interval ``elo(μ ± 1.96 σ / √N)`` and the likelihood of superiority
``LOS = Φ((μ - ½) / (σ / √N))``, ``σ`` being the standard deviation of the
per-unit score. They are not corrected for the bias of the early stop (a
test that stops early on a lucky streak overstates the difference).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

from referee.runner import Clock
from referee.tournament import config as tconfig
from referee.tournament.config import BotSpec, read_toml
from referee.tournament.ratings import Record

#: the per-game score of a unit's five outcomes (unit points 0, 0.5, 1, 1.5, 2, halved)
PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
#: the per-game score of one game's three outcomes (loss, draw, win)
TRINOMIAL = (0.0, 0.5, 1.0)
#: fishtest's count for an outcome never observed
EPSILON = 1e-3
#: ``(elo0, elo1)`` of the presets: fishtest's <0, 2> and <-1.75, 0.25>, scaled by 10 (docs/regression.md)
PRESETS: dict[str, tuple[float, float]] = {"stronger": (0.0, 20.0), "non-regression": (-17.5, 2.5)}
_Z95 = NormalDist().inv_cdf(0.975)

H1, H0, INCONCLUSIVE, INTERRUPTED = "H1", "H0", "inconclusive", "interrupted"


# --- Elo and scores -------------------------------------------------------------


def expected_score(elo: float) -> float:
    """The expected score per game of a player ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of(score: float) -> float:
    """The Elo difference that gives this expected score (±inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's stopping bounds on the LLR: (accept H0 at or below, accept H1 at or above)."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


# --- the likelihood ratio ---------------------------------------------------------


def _regularized(counts: Sequence[float]) -> tuple[float, list[float]]:
    """(N, frequencies) with fishtest's EPSILON for empty outcomes."""
    reg = [max(float(c), EPSILON) for c in counts]
    n = sum(reg)
    return n, [c / n for c in reg]


def secular_root(values: Sequence[float], probs: Sequence[float], s: float, start: float = 0.0) -> float:
    """The root ``x`` of ``Σ p_i d_i / (1 + x d_i) = 0`` with ``d_i = a_i - s``, in the interval
    where every ``1 + x d_i`` (of an outcome with ``p_i > 0``) is positive.

    ``s`` must lie strictly between the smallest and the largest value of positive probability."""
    d = [a - s for a, p in zip(values, probs) if p > 0]
    p = [q for q in probs if q > 0]
    top, bottom = max(d), min(d)
    if top <= 0.0 or bottom >= 0.0:
        raise ValueError(f"the mean {s} is not strictly inside the values of positive probability")
    lo, hi = -1.0 / top, -1.0 / bottom  # the poles: the root is strictly between them
    x = start if lo < start < hi else 0.0
    for _ in range(200):
        f = fp = 0.0
        for pi, di in zip(p, d):
            t = di / (1.0 + x * di)
            f += pi * t
            fp -= pi * t * t
        if f > 0.0:  # f decreases: the root is above x
            lo = x
        elif f < 0.0:
            hi = x
        else:
            return x
        new = x - f / fp
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - x) <= 1e-13 * max(1.0, abs(x)):
            return new
        x = new
    return x


def mle_with_mean(values: Sequence[float], probs: Sequence[float], s: float,
                  start: float = 0.0) -> tuple[list[float], float]:
    """The distribution on ``values`` of mean ``s`` that maximises ``Σ p̂_i log p_i`` (the
    constrained MLE for observed frequencies ``probs``), and its multiplier ``x``."""
    x = secular_root(values, probs, s, start)
    return [p / (1.0 + x * (a - s)) for a, p in zip(values, probs)], x


def llr(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (elo1) against H0 (elo0), exact MLE (see the module)."""
    return _llr(counts, values, expected_score(elo0), expected_score(elo1))[0]


def _llr(counts: Sequence[float], values: Sequence[float], s0: float, s1: float,
         start: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float, float]:
    if sum(counts) <= 0:
        return 0.0, 0.0, 0.0
    n, probs = _regularized(counts)
    x0 = secular_root(values, probs, s0, start[0])
    x1 = secular_root(values, probs, s1, start[1])
    total = sum(p * (math.log1p(x0 * (a - s0)) - math.log1p(x1 * (a - s1))) for a, p in zip(values, probs))
    return n * total, x0, x1


def llr_normalized(counts: Sequence[float], values: Sequence[float], elo0: float, elo1: float) -> float:
    """The normal approximation ``N (s1 - s0)(2 μ - s0 - s1) / (2 σ²)`` of :func:`llr`."""
    if sum(counts) <= 0:
        return 0.0
    n, probs = _regularized(counts)
    mu = sum(a * p for a, p in zip(values, probs))
    var = sum(p * (a - mu) ** 2 for a, p in zip(values, probs))
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)


# --- estimates --------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """The candidate's mean per-game score and Elo difference from outcome counts."""

    n: int
    score: float | None  # mean per-game score
    se: float | None  # its standard error
    elo: float | None
    elo_lo: float | None  # the 95% interval
    elo_hi: float | None
    los: float | None  # likelihood of superiority, in [0, 1]


def estimate(counts: Sequence[int], values: Sequence[float] = PENTANOMIAL) -> Estimate:
    n = sum(counts)
    if n == 0:
        return Estimate(0, None, None, None, None, None, None)
    mu = sum(a * c for a, c in zip(values, counts)) / n
    var = sum(c * (a - mu) ** 2 for a, c in zip(values, counts)) / n
    se = math.sqrt(var / n)
    if se > 0.0:
        los = NormalDist().cdf((mu - 0.5) / se)
    else:
        los = 1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5
    return Estimate(n, mu, se, elo_of(mu), elo_of(mu - _Z95 * se), elo_of(mu + _Z95 * se), los)


# --- the test ---------------------------------------------------------------------


class SPRT:
    """The state of one test: outcome counts, the LLR and its bounds.

    ``values`` are the per-game scores of the outcomes (:data:`PENTANOMIAL` for duplicate
    units, :data:`TRINOMIAL` for single games); :meth:`add` takes an outcome's index."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
                 values: Sequence[float] = PENTANOMIAL):
        check_hypotheses(elo0, elo1, alpha, beta)
        self.elo0, self.elo1, self.alpha, self.beta = float(elo0), float(elo1), float(alpha), float(beta)
        self.values = tuple(values)
        self.counts = [0] * len(self.values)
        self.s0, self.s1 = expected_score(elo0), expected_score(elo1)
        self.lower, self.upper = bounds(alpha, beta)
        self._x = (0.0, 0.0)
        self._llr: float | None = 0.0

    @property
    def n(self) -> int:
        return sum(self.counts)

    def add(self, outcome: int) -> None:
        self.counts[outcome] += 1
        self._llr = None

    def llr(self) -> float:
        if self._llr is None:
            self._llr, x0, x1 = _llr(self.counts, self.values, self.s0, self.s1, self._x)
            self._x = (x0, x1)
        return self._llr

    def verdict(self) -> str | None:
        """H1 or H0 once the LLR has crossed a bound, else None."""
        value = self.llr()
        if value >= self.upper:
            return H1
        if value <= self.lower:
            return H0
        return None


def check_hypotheses(elo0: float, elo1: float, alpha: float, beta: float) -> None:
    """Raises ValueError unless elo0 < elo1 and 0 < α, β with α + β < 1."""
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise ValueError(f"elo0 must be less than elo1, got elo0 = {elo0}, elo1 = {elo1}")
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"alpha and beta must be in (0, 1) with alpha + beta < 1, got {alpha}, {beta}")


def run_test(draw: Callable[[], int], sprt: SPRT, max_n: int) -> tuple[str, int]:
    """Feed outcomes from ``draw()`` (an outcome index) until a verdict or ``max_n``; the
    verdict (H1, H0 or inconclusive) and how many were used. For simulations."""
    for _ in range(max_n):
        sprt.add(draw())
        verdict = sprt.verdict()
        if verdict is not None:
            return verdict, sprt.n
    return INCONCLUSIVE, sprt.n


# --- a model of duplicate play, for simulations -------------------------------------


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def duplicate_model(elo: float, luck: float = 1.0, draws: float = 0.0,
                    points: int = 200) -> tuple[list[float], list[float]]:
    """The outcome distributions of a simple model of duplicate play whose expected score is
    exactly ``s(elo)``: (pentanomial of a unit, trinomial of one game).

    Each unit draws a deal luck ``L ~ Normal(0, luck)`` (in logits); the candidate wins the
    first game with probability ``σ(δ + L)`` and the swapped game with ``σ(δ - L)`` (the same
    cards, the other side), each game being a draw with probability ``draws`` instead. ``δ``
    is solved so that the mean score is ``s(elo)``. ``luck = 0`` gives independent games; the
    larger ``luck``, the more the two games of a unit split 1-1 and the more duplicate play
    gains. The trinomial is the distribution of one game alone (the same for both seats)."""
    if luck < 0 or not 0.0 <= draws < 1.0:
        raise ValueError("luck must be >= 0 and draws in [0, 1)")
    target = expected_score(elo)
    normal = NormalDist()
    lucks = [luck * normal.inv_cdf((k + 0.5) / points) for k in range(points)]

    def dists(delta: float) -> tuple[list[float], list[float]]:
        penta = [0.0] * 5
        tri = [0.0] * 3
        for swing in lucks:
            g1 = _game(_logistic(delta + swing), draws)
            g2 = _game(_logistic(delta - swing), draws)
            for i, p in enumerate(g1):
                tri[i] += 0.5 * p / points
                for j, q in enumerate(g2):
                    penta[i + j] += p * q / points
            for i, q in enumerate(g2):
                tri[i] += 0.5 * q / points
        return penta, tri

    lo, hi = -30.0, 30.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        tri = dists(mid)[1]
        if tri[1] * 0.5 + tri[2] < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    penta, tri = dists(0.5 * (lo + hi))
    # the last digits: tilt onto the exact mean (a no-op up to rounding)
    penta = mle_with_mean(PENTANOMIAL, penta, target)[0]
    tri = mle_with_mean(TRINOMIAL, tri, target)[0]
    return penta, tri


def _game(p_win: float, draws: float) -> tuple[float, float, float]:
    return (1.0 - draws) * (1.0 - p_win), draws, (1.0 - draws) * p_win


# --- an SPRT between two bots: the setup ---------------------------------------------------

#: the default cap on units (see docs/regression.md for how it compares with the expected length)
DEFAULT_MAX_UNITS = 2000
_SPRT_KEYS = {"candidate", "baseline", "preset", "elo0", "elo1", "alpha", "beta", "max_units"}


class SprtError(RuntimeError):
    """An SPRT that cannot go on (a bot that never came to play)."""


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
    elo0: float = PRESETS["stronger"][0]
    elo1: float = PRESETS["stronger"][1]
    alpha: float = 0.05
    beta: float = 0.05
    max_units: int = DEFAULT_MAX_UNITS
    output: Path | None = None
    preset: str | None = "stronger"

    def __post_init__(self) -> None:
        check_hypotheses(self.elo0, self.elo1, self.alpha, self.beta)
        if self.candidate.name == self.baseline.name:
            raise ValueError(f"the candidate and the baseline have the same name {self.candidate.name!r}")

    def fingerprint(self) -> str:
        """What must not change in an output directory: what shapes the units' results."""
        import json

        return json.dumps({"sprt": [self.candidate.name, self.baseline.name], "game": self.game,
                           "options": self.options, "seed": self.seed,
                           "clock": [self.clock.decision_s, self.clock.bank_s]}, sort_keys=True)

    def describe(self) -> dict[str, Any]:
        return {"game": self.game, "options": self.options, "seed": self.seed,
                "sprt": {"candidate": self.candidate.name, "baseline": self.baseline.name, "elo0": self.elo0,
                         "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta, "max_units": self.max_units},
                "clock": {"decision_ms": round(self.clock.decision_s * 1000),
                          "bank_ms": round(self.clock.bank_s * 1000)},
                "concurrency": self.concurrency}


def load(path: str | Path) -> SprtSetup:
    """An SPRT file: a tournament file with exactly two bots and an [sprt] table (docs/regression.md)."""
    path, text, data = read_toml(path)
    return parse(data, path, text)


def parse(data: dict[str, Any], path: Path, text: str = "") -> SprtSetup:
    loc = tconfig._Locator(path, text)
    data = dict(data)
    s = tconfig.take_table(data, "sprt", _SPRT_KEYS, loc, 'with candidate = "BOT", one of the two [[bots]]')
    t = data.get("tournament")
    if isinstance(t, dict):
        for key in ("deal_sets", "max_groups"):
            if key in t:
                raise loc.error(f"tournament.{key} has no meaning for an SPRT: it plays units until a verdict "
                                f"or sprt.max_units", "tournament", key)
    base = tconfig.parse(data, path, text)
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

    def number(key: str, default: float) -> float:
        value = s.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise loc.error(f"sprt.{key} must be a number, got {value!r}", "sprt", key)
        return float(value)

    preset = s.get("preset")
    if preset is not None:
        if preset not in PRESETS:
            raise loc.error(f"sprt.preset must be one of {', '.join(PRESETS)}, got {preset!r}", "sprt", "preset")
        if "elo0" in s or "elo1" in s:
            raise loc.error("give sprt.preset or sprt.elo0 and sprt.elo1, not both", "sprt", "preset")
    if ("elo0" in s) != ("elo1" in s):
        raise loc.error("sprt.elo0 and sprt.elo1 go together", "sprt", "elo0" if "elo0" in s else "elo1")
    if "elo0" in s:
        elo0, elo1 = number("elo0", 0.0), number("elo1", 0.0)
    else:
        preset = preset or "stronger"
        elo0, elo1 = PRESETS[preset]
    alpha, beta = number("alpha", 0.05), number("beta", 0.05)
    try:
        check_hypotheses(elo0, elo1, alpha, beta)
    except ValueError as err:
        raise loc.error(f"sprt: {err}", "sprt", "elo0" if "elo" in str(err) else "alpha") from None
    max_units = tconfig._int(loc, "sprt", "max_units", s.get("max_units", DEFAULT_MAX_UNITS), 1)
    bots = {b.name: b for b in base.bots}
    has_output = isinstance(t, dict) and "output" in t
    return SprtSetup(base.game, base.options, bots[candidate], bots[baseline], base.seed, base.clock,
                     base.concurrency, elo0, elo1, alpha, beta, max_units, base.output if has_output else None,
                     preset)


# --- units and their outcomes -----------------------------------------------------------


def unit_lineups(game: str, candidate: str, baseline: str) -> list[tuple[str, ...]]:
    """The two line-ups of a unit: the candidate first, then the seats swapped."""
    if game == "aegis":
        return [(candidate, baseline), (baseline, candidate)]
    return [(candidate, baseline, candidate, baseline), (baseline, candidate, baseline, candidate)]


def game_outcome(game: str, lineup: Sequence[str], results: Mapping[str, Any], candidate: str,
                 baseline: str) -> tuple[float, float]:
    """(the candidate's result 1 / 0.5 / 0, its points minus the baseline's) of one match.

    Aegis: by the match winner (placing). Confirmation: by the total score of the candidate's
    seats against the baseline's seats."""
    mine = [s for s, b in enumerate(lineup) if b == candidate]
    theirs = [s for s, b in enumerate(lineup) if b == baseline]
    scores = results["scores"]
    margin = float(sum(scores[s] for s in mine) - sum(scores[s] for s in theirs))
    if game == "aegis":
        placing = results["placing"]
        diff = float(placing[theirs[0]] - placing[mine[0]])  # lower place is better
    else:
        diff = margin
    return (1.0 if diff > 0 else 0.0 if diff < 0 else 0.5), margin


@dataclass
class Unit:
    """One finished duplicate unit."""

    index: int
    scores: tuple[float, ...]  # the candidate's result in each game
    margins: tuple[float, ...]  # the candidate's points minus the baseline's, per game
    faults: dict[str, Counter] = field(default_factory=dict)

    @property
    def points(self) -> float:
        return sum(self.scores)


def make_unit(game: str, index: int, lineups: Sequence[Sequence[str]], results: Sequence[Mapping[str, Any]],
              candidate: str, baseline: str) -> Unit:
    scores, margins = [], []
    faults: dict[str, Counter] = {candidate: Counter(), baseline: Counter()}
    for lineup, res in zip(lineups, results):
        score, margin = game_outcome(game, lineup, res, candidate, baseline)
        scores.append(score)
        margins.append(margin)
        for seat, counts in enumerate(res.get("faults") or []):
            faults[lineup[seat]].update({k: v for k, v in counts.items() if v})
    return Unit(index, tuple(scores), tuple(margins), faults)


class Tally:
    """The units counted so far, in order, and the test's state."""

    def __init__(self, sprt: SPRT):
        self.sprt = sprt
        self.units: list[Unit] = []
        self.record = Record()  # the candidate's games: wins, draws, losses
        self.faults: dict[str, Counter] = {}
        self.verdict: str | None = None
        self.started = time.monotonic()
        self.seconds = 0.0

    def add(self, unit: Unit) -> str | None:
        """Count a unit (not after a verdict); returns the verdict, if reached."""
        if self.verdict is not None:
            return self.verdict
        self.units.append(unit)
        for score in unit.scores:
            self.record.add(score)
        for bot, counts in unit.faults.items():
            self.faults.setdefault(bot, Counter()).update(counts)
        self.sprt.add(round(unit.points * 2))
        self.verdict = self.sprt.verdict()
        self.seconds = time.monotonic() - self.started
        return self.verdict

    @property
    def games(self) -> int:
        return self.record.games

    @property
    def wins(self) -> int:
        return self.record.wins

    @property
    def draws(self) -> int:
        return self.record.draws

    @property
    def losses(self) -> int:
        return self.record.losses


# --- playing the units --------------------------------------------------------------------


async def run(setup: SprtSetup, tally: Tally, progress: Callable[[Tally], None] | None = None,
              store: Any = None, server: str | None = None, admin_token: str | None = None,
              connect_timeout: float = 30.0) -> str:
    """Play units (``setup.concurrency`` matches at a time, units started in order) until a
    verdict or ``setup.max_units``; returns H1, H0 or inconclusive. ``tally`` holds what was
    counted even if this is interrupted. With a ``store``, every match is saved and matches
    already in it are not played again (a run resumes where it stopped)."""
    from referee.tournament.executors import BotsDead, Played, executor_for, seat_capacity
    from referee.tournament.schedule import Seating, deal_seed

    c, b = setup.candidate.name, setup.baseline.name
    lineups = unit_lineups(setup.game, c, b)

    def seating(k: int, j: int) -> Seating:
        return Seating(k, deal_seed(setup.seed, k), lineups[j])

    stored = {row.key: row.results for row in store.matches()} if store is not None else {}
    finished: dict[int, list[Mapping[str, Any] | None]] = {}
    counted = 0

    def record(s: Seating, results: Mapping[str, Any]) -> bool:
        """Count one match; True once the test is over (a verdict, or max_units counted)."""
        nonlocal counted
        k, j = s.deal_set, lineups.index(s.lineup)
        for seat, counts in enumerate(results.get("faults") or []):
            if counts.get("no_session"):
                raise SprtError(f"bot {s.lineup[seat]!r} did not come to play (no session within "
                                f"{connect_timeout:g} s): check its command and its log")
        finished.setdefault(k, [None] * len(lineups))[j] = results
        while counted in finished and all(r is not None for r in finished[counted]):
            unit = make_unit(setup.game, counted, lineups, finished.pop(counted), c, b)
            counted += 1
            verdict = tally.add(unit)
            if progress:
                progress(tally)
            if verdict is not None or counted >= setup.max_units:
                return True
        return False

    over = False

    def to_play() -> Iterator[Seating]:
        """The units' matches in order; those already stored are counted, not played."""
        nonlocal over
        for k in range(setup.max_units):
            for j in range(len(lineups)):
                s = seating(k, j)
                if s.key not in stored:
                    yield s
                elif record(s, stored[s.key]):
                    over = True
                if over:
                    return

    def played(p: Played) -> bool:
        nonlocal over
        s = p.seating
        if store is not None:
            store.save(s.key, s.deal_set, s.seed, s.lineup, p.results, p.record, p.seconds)
        over = over or record(s, p.results)
        return over

    def dead(s: Seating, err: BotsDead) -> None:
        raise SprtError(f"{err}: the test cannot go on")

    capacity = seat_capacity([seating(0, j) for j in range(len(lineups))], setup.concurrency)
    log_dir = setup.output / "logs" if setup.output is not None else None
    executor = executor_for(server, admin_token, game=setup.game, options=setup.options, clock=setup.clock,
                            bots=[setup.candidate, setup.baseline], capacity=capacity, log_dir=log_dir,
                            connect_timeout=connect_timeout)
    async with executor:
        await executor.play_all(to_play(), setup.concurrency, played, dead)
    return tally.verdict or INCONCLUSIVE


# --- the report ---------------------------------------------------------------------------


def conclusion(verdict: str, elo0: float, elo1: float) -> str:
    """Words for a verdict: 'stronger' / 'not stronger' when elo0 >= 0, else 'no regression' / 'regression'."""
    if verdict == H1:
        return "stronger" if elo0 >= 0 else "no regression"
    if verdict == H0:
        return "not stronger" if elo0 >= 0 else "regression"
    return "no verdict: the cap was reached" if verdict == INCONCLUSIVE else "no verdict: interrupted"


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def summary(setup: SprtSetup, tally: Tally, status: str) -> dict[str, Any]:
    """Everything the outputs show, JSON-ready (an infinite Elo is null)."""
    sprt = tally.sprt
    est = estimate(sprt.counts)
    margins = [sum(u.margins) for u in tally.units]
    n = len(margins)
    mean = sum(margins) / n if n else None
    half = None
    if n >= 2:
        sd = math.sqrt(sum((m - mean) ** 2 for m in margins) / (n - 1))
        half = _Z95 * sd / math.sqrt(n)
    return {
        "game": setup.game, "options": setup.options, "seed": setup.seed,
        "candidate": setup.candidate.name, "baseline": setup.baseline.name,
        "preset": setup.preset, "elo0": setup.elo0, "elo1": setup.elo1, "alpha": setup.alpha, "beta": setup.beta,
        "verdict": status, "conclusion": conclusion(status, setup.elo0, setup.elo1),
        "llr": sprt.llr(), "llr_lower": sprt.lower, "llr_upper": sprt.upper,
        "llr_normalized": llr_normalized(sprt.counts, sprt.values, setup.elo0, setup.elo1),
        "units": sprt.n, "games": tally.games, "max_units": setup.max_units,
        "wins": tally.wins, "draws": tally.draws, "losses": tally.losses,
        "pentanomial": list(sprt.counts),
        "score": est.score, "elo": _finite(est.elo), "elo_lo": _finite(est.elo_lo), "elo_hi": _finite(est.elo_hi),
        "elo_text": _elo_text(est), "los": est.los,
        "points_per_unit": mean, "points_per_unit_95": half,
        "faults": {bot: dict(counts) for bot, counts in sorted(tally.faults.items())},
        "seconds": round(tally.seconds, 1),
    }


def _signed(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.{digits}f}"


def _elo_text(est: Estimate) -> str:
    if est.elo is None:
        return "-"
    return f"{_signed(est.elo)} [{_signed(est.elo_lo)}, {_signed(est.elo_hi)}]"


def _hypotheses(s: Mapping[str, Any]) -> str:
    preset = f" (preset {s['preset']})" if s["preset"] else ""
    return (f"H0 Elo {_signed(s['elo0'], 2)} against H1 Elo {_signed(s['elo1'], 2)}{preset}, "
            f"alpha {s['alpha']:g}, beta {s['beta']:g}")


def _faults_text(s: Mapping[str, Any]) -> str:
    def three(counts: Mapping[str, int]) -> str:
        return (f"{counts.get('timeout', 0)}/{sum(counts.get(k, 0) for k in ('illegal', 'malformed', 'wrong_id'))}"
                f"/{sum(counts.get(k, 0) for k in ('disconnect', 'no_session'))}")
    return ", ".join(f"{bot} {three(s['faults'].get(bot, {}))}" for bot in (s["candidate"], s["baseline"]))


def _verdict_text(s: Mapping[str, Any]) -> str:
    words = {"stronger": "is stronger", "not stronger": "is not stronger", "no regression": "shows no regression",
             "regression": "is weaker (a regression)"}
    if s["verdict"] in (H1, H0):
        return f"{s['verdict']} accepted: {s['candidate']} {words[s['conclusion']]}"
    return s["conclusion"]


def text(s: Mapping[str, Any]) -> str:
    from referee.report import format_options

    lo = s["los"]
    margin = _signed(s["points_per_unit"], 2)
    if s["points_per_unit_95"] is not None:
        margin += f" ± {s['points_per_unit_95']:.2f} (95%)"
    lines = [
        (f"SPRT {s['game']} ({format_options(s['options'])}; seed {s['seed']}): {s['candidate']} against "
         f"{s['baseline']}; {_hypotheses(s)}"),
        f"verdict: {_verdict_text(s)}",
        (f"LLR {s['llr']:.2f} (bounds {s['llr_lower']:.2f}, {s['llr_upper']:.2f}) after {s['units']} unit(s) "
         f"({s['games']} games; cap {s['max_units']} units)"),
        f"Elo {s['elo_text']} (95%), LOS {'-' if lo is None else f'{100 * lo:.1f}%'}",
        (f"W-D-L {s['wins']}-{s['draws']}-{s['losses']}; pentanomial (units scoring 0, 0.5, 1, 1.5, 2 points) "
         f"{' '.join(str(c) for c in s['pentanomial'])}"),
        f"points per unit ({s['candidate']} - {s['baseline']}) {margin}",
        f"faults t/i/d: {_faults_text(s)}; {s['seconds']:.0f} s",
    ]
    return "\n".join(lines)


def markdown(s: Mapping[str, Any]) -> str:
    """One paragraph for a pull request."""
    from referee import __version__
    from referee.report import format_options

    lo = s["los"]
    verdict = {H1: f"**H1 accepted: {s['conclusion']}**", H0: f"**H0 accepted: {s['conclusion']}**"}.get(
        s["verdict"], f"**{s['conclusion']}**")
    margin = _signed(s["points_per_unit"], 2)
    if s["points_per_unit_95"] is not None:
        margin += f" ± {s['points_per_unit_95']:.2f}"
    return (
        f"**SPRT `{s['candidate']}` vs `{s['baseline']}`** ({s['game']}, {format_options(s['options'])}): "
        f"{verdict} after {s['units']} duplicate units ({s['games']} games). "
        f"LLR {s['llr']:.2f} (bounds {s['llr_lower']:.2f}, {s['llr_upper']:.2f}) for {_hypotheses(s)}. "
        f"Elo {s['elo_text']} (95%), LOS {'-' if lo is None else f'{100 * lo:.1f}%'}; "
        f"W-D-L {s['wins']}-{s['draws']}-{s['losses']}, pentanomial {s['pentanomial']}; "
        f"points per unit {margin}. Seed {s['seed']}, referee {__version__}.\n")
