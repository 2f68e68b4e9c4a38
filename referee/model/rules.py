"""An adaptive tournament's stopping rule, the rounds it chose and why it stopped: values (the
scheduler that uses them: :mod:`referee.competition.adaptive`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from referee.stats import sequences

#: the fairness bound: from its first deal set on, an entry plays at least this share of the matches of
#: the entry that played the most in the same deal sets
FAIRNESS = 0.5
#: the default cap, level and margin of a rule (docs/tournaments.md, "The margin": why 75 Elo)
MAX_DEAL_SETS, CONFIDENCE, TIE_ELO = 400, 0.95, 75.0

Table = tuple[str, ...]


class RuleError(ValueError):
    """A stopping rule that cannot be read (the message says why)."""


@dataclass(frozen=True)
class Rule:
    """A stated stopping rule: ``order`` (``top`` None) or the top ``top`` entries and their order,
    at ``confidence``, a pair settled when ordered or within ``±tie_elo`` (0: ordered only); and
    the cap, ``max_deal_sets``, always there. ``ahead``: how many deal sets are chosen at once (from
    the results so far; the rule is looked at between batches), so that their matches can be played
    at the same time (a deal set's matches never are, under isolation = "match"). ``fill``: such a
    batch's deal sets get more tables, until its matches can keep every match slot busy
    (:func:`referee.competition.adaptive.filled`)."""

    top: int | None = None
    confidence: float = CONFIDENCE
    max_deal_sets: int = MAX_DEAL_SETS
    tie_elo: float = TIE_ELO
    ahead: int = 1
    fill: bool = False

    @classmethod
    def parse(cls, text: str, confidence: float = CONFIDENCE, max_deal_sets: int = MAX_DEAL_SETS,
              tie_elo: float = TIE_ELO) -> Rule:
        """``"order"`` or ``"top:K"`` (K at least 1)."""
        if text == "order":
            return cls(None, confidence, max_deal_sets, tie_elo)
        head, _, k = text.partition(":")
        if head == "top" and k.isdigit() and int(k) >= 1:
            return cls(int(k), confidence, max_deal_sets, tie_elo)
        raise RuleError(f'must be "order" or "top:K" with K a whole number from 1, got {text!r}')

    @property
    def name(self) -> str:
        return "order" if self.top is None else f"top:{self.top}"

    @property
    def margin(self) -> str:
        """How a pair within the margin is shown: ``within ±50 Elo``."""
        return f"within ±{self.tie_elo:g} Elo"

    def describe(self) -> str:
        what = "every adjacent pair" if self.top is None else f"the top {self.top} and their order"
        how = f"ordered or {self.margin}" if self.tie_elo > 0 else "ordered"
        return (f"stop = {self.name} ({what} {how}, at {self.confidence:.0%} over every look), "
                f"at most {self.max_deal_sets} deal sets")


@dataclass(frozen=True)
class Round:
    """One deal set of an adaptive tournament and the tables chosen to play it."""

    deal_set: int
    tables: tuple[Table, ...]


@dataclass(frozen=True)
class Claim:
    """What the rule says of two entries, ``a`` above ``b`` in the fit: ``verdict`` "above" (ordered),
    "within" (within the margin) or "open"; the fit's difference ``elo`` and the bounds at the last
    look, ``lo`` and ``hi``: an order's ``lo`` only (``a`` is at least that far above ``b``), a
    margin's two ends, an open pair's confidence sequence (None: a stop stored before they were kept)."""

    a: str
    b: str
    verdict: sequences.PairVerdict
    elo: float | None = None
    lo: float | None = None
    hi: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", sequences.PairVerdict(self.verdict))  # a stored stop's: a string

    def shown(self, tie_elo: float) -> str:
        """The claim as the tables show it: "above", "within ±50 Elo", "open"."""
        return f"within ±{tie_elo:g} Elo" if self.verdict == sequences.WITHIN else self.verdict


@dataclass(frozen=True)
class Stop:
    """Why a tournament stopped: ``rule`` ("order", "top:K" or "max_deal_sets"), whether the rule
    was met (``settled``), after how many deal sets, what it said of each pair it looked at
    (``pairs``: :class:`Claim`), with its margin (``tie_elo``), in a sentence (``text``)."""

    rule: str
    settled: bool
    deal_sets: int
    matches: int
    text: str
    pairs: tuple[Claim, ...] = ()
    tie_elo: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "pairs": [{**asdict(c), "shown": c.shown(self.tie_elo)} for c in self.pairs]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Stop:
        """A stop as the store keeps it; one kept before pairs had verdicts (``[a, b, P(a above b)]``,
        ``joint``) reads with each pair "above" if the rule was met, else "open"."""
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        pairs = tuple(Claim(**{k: v for k, v in p.items() if k != "shown"}) if isinstance(p, Mapping)
                      else Claim(p[0], p[1], sequences.ABOVE if data["settled"] else sequences.OPEN)
                      for p in data.get("pairs", ()))
        return cls(**{**fields, "pairs": pairs})

    def claim(self, a: str, b: str) -> Claim | None:
        """What the rule said of ``a`` and ``b`` (either way round), if it looked at them."""
        return next((c for c in self.pairs if {c.a, c.b} == {a, b}), None)


