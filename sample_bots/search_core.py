"""The search bot's game-independent part: a budget and the sampling loop.

:mod:`sample_bots.search` (the bot) computes a :class:`Budget` per decision
and hands it to the game's module (:mod:`sample_bots.search_confirmation`,
:mod:`sample_bots.search_aegis`), which calls :func:`run_search` with its
candidates, its sampler and its playout.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: samples before candidates may be dropped, and how sure the drop must be (in standard errors)
PRUNE_AFTER = 6
PRUNE_Z = 2.5


@dataclass
class Budget:
    """When to stop sampling: after ``samples`` samples or at ``deadline`` (perf_counter), whichever first."""

    samples: int | None = None
    deadline: float | None = None

    def more(self, done: int) -> bool:
        if self.samples is not None and done >= self.samples:
            return False
        return self.deadline is None or time.perf_counter() < self.deadline


@dataclass
class SearchResult:
    choice: int           # index into the candidates
    samples: int
    playouts: int
    means: list[float]


def run_search(candidates: Sequence[Any], prior: int, sample: Callable[[], Any],
               playout: Callable[[Any, Any], float], budget: Budget) -> SearchResult:
    """Sample, play every surviving candidate out on each sample, keep the best mean.

    ``sample()`` makes a fresh determinized state; ``playout(state, candidate)``
    plays the candidate on a copy of it and returns the value. ``prior`` (an
    index) wins ties and is the answer when nothing could be sampled."""
    n = len(candidates)
    values: list[list[float]] = [[] for _ in range(n)]
    active = list(range(n))
    done = playouts = 0
    next_prune = PRUNE_AFTER
    while len(active) > 1 and budget.more(done):
        state = sample()
        for i in active:
            values[i].append(playout(state, candidates[i]))
        playouts += len(active)
        done += 1
        if done == next_prune:
            active = _prune(active, values, done)
            next_prune += max(2, done // 4)
    means = [sum(v) / len(v) if v else -math.inf for v in values]
    if done == 0:
        return SearchResult(prior, 0, 0, means)
    choice = max(active, key=lambda i: (means[i], i == prior))
    return SearchResult(choice, done, playouts, means)


def _prune(active: list[int], values: list[list[float]], done: int) -> list[int]:
    """Drop the candidates that are worse than the best by more than PRUNE_Z standard errors (paired)."""
    best = max(active, key=lambda i: sum(values[i]))
    vb = values[best]
    keep = []
    for i in active:
        if i == best:
            keep.append(i)
            continue
        diffs = [b - x for b, x in zip(vb, values[i])]
        m = sum(diffs) / done
        var = sum((d - m) ** 2 for d in diffs) / (done - 1)
        if m > 0 and m > PRUNE_Z * math.sqrt(var / done) + 1e-9:
            continue
        keep.append(i)
    return keep
