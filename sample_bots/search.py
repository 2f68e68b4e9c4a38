"""search: determinized Monte Carlo with the project's own engines, for both games.

    python -m sample_bots.search --address HOST:PORT --name search --token TOKEN [--think-ms 150] [--rollouts N]

For every decision with more than one legal action the bot

1. lists a few *candidate* actions (every card it may play, less the cards
   that are equivalent to a lower one; the bids, declarations, confirmation
   choices and exchanges near what the heuristic bot would do, plus the
   heuristic's own choice);
2. repeatedly *samples* a full state consistent with its observation
   (``determinize(observation, rng, options)`` of the game's engine), and
   for each candidate plays that same sample out from a copy: the candidate,
   then a fast rollout policy for every seat to the end of the deal
   (Confirmation: the end of the round; Aegis: the end of the game);
3. scores each playout from its own point of view (Confirmation: its points
   for the round, in *pairs* the team's; Aegis: its game points minus the
   opponent's, plus a bonus or malus when the game ends the match) and plays
   the candidate with the best mean. Candidates that are clearly worse than
   the best (paired over the same samples) are dropped on the way, so the
   samples go to the close calls.

The rollout policies (:mod:`sample_bots.search_confirmation`,
:mod:`sample_bots.search_aegis`) read the engine state directly and are cheap:
a few microseconds a card (Aegis exchanges and declarations in playouts follow
the heuristic bot). Aegis samples lean to strong opponent hands once the
opponent has exchanged (it kept its good cards; ``determinize`` alone deals
them uniformly, which made the bot overbid).

Budget: ``--think-ms`` (default 150 ms) per decision, never more than half of
the time the referee says is left for the decision; ``--rollouts N`` caps the
number of samples instead (each plays every surviving candidate once), which
makes a decision reproducible from ``game.rng`` when no clock applies (the
in-process measurement of ``tools/strength.py``). With no time at all the bot
answers the heuristic's choice at once. Whatever happens, the answer is an
index into the legal actions.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.bot import GameView, run_bot
from sample_bots import heuristic

#: defaults, changed by the command line (or by :func:`configure` in process)
THINK_MS = 150.0
ROLLOUTS: int | None = None
#: share of the decision time left that one decision may use at most
CLOCK_SHARE = 0.5
#: samples before candidates may be dropped, and how sure the drop must be (in standard errors)
PRUNE_AFTER = 6
PRUNE_Z = 2.5


#: experiments: search only in these phases (env SEARCH_PHASES=play,declare), the heuristic elsewhere
_PHASES = set(os.environ["SEARCH_PHASES"].split(",")) if os.environ.get("SEARCH_PHASES") else None


def configure(think_ms: float | None = None, rollouts: int | None = None) -> None:
    """Set the default budget (``rollouts=None``: by time only)."""
    global THINK_MS, ROLLOUTS
    if think_ms is not None:
        THINK_MS = float(think_ms)
    ROLLOUTS = rollouts


@dataclass
class Budget:
    """When to stop sampling: after ``samples`` samples or at ``deadline`` (perf_counter), whichever first."""

    samples: int | None = None
    deadline: float | None = None

    def more(self, done: int) -> bool:
        if self.samples is not None and done >= self.samples:
            return False
        return self.deadline is None or time.perf_counter() < self.deadline


def budget_for(game: GameView, think_ms: float | None = None, rollouts: int | None = None) -> Budget | None:
    """The budget of a decision; ``None`` when there is no time to search at all.

    The time is ``min(think_ms, CLOCK_SHARE * decision_ms_left)`` when the
    game has a clock (``game.decision_ms > 0``, as with the referee); in
    process, with no clock, ``think_ms`` alone. A fixed ``rollouts`` budget
    applies in addition (and alone when there is no clock)."""
    think = THINK_MS if think_ms is None else think_ms
    rollouts = ROLLOUTS if rollouts is None else rollouts
    has_clock = bool(getattr(game, "decision_ms", 0))
    ms = think
    if has_clock:
        ms = min(think, CLOCK_SHARE * max(0, getattr(game, "decision_ms_left", 0)))
    if ms <= 0 and (has_clock or rollouts is None):
        return None
    deadline = None if (rollouts is not None and not has_clock) else time.perf_counter() + ms / 1000
    return Budget(samples=rollouts, deadline=deadline)


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


def _codes(observation: dict[str, Any], legal_actions: list[str], game: GameView) -> list[int]:
    codes = list(getattr(game, "legal_codes", None) or [])
    if len(codes) == len(legal_actions):
        return codes
    from referee.games import GAMES
    spec = GAMES[observation.get("game") or game.game]
    return [spec.parse_action(name) for name in legal_actions]


def decide(observation: dict[str, Any], legal_actions: list[str], game: GameView,
           think_ms: float | None = None, rollouts: int | None = None) -> int:
    """The index of the chosen action in ``legal_actions``."""
    if len(legal_actions) <= 1:
        return 0
    if _PHASES is not None and observation.get("phase") not in _PHASES and \
            f"{observation.get('phase')}-{observation.get('role')}" not in _PHASES:
        return legal_actions.index(heuristic.decide(observation, legal_actions, game))
    name = observation.get("game") or getattr(game, "game", "")
    prior_name = heuristic.decide(observation, legal_actions, game)
    prior = legal_actions.index(prior_name) if prior_name in legal_actions else 0
    module = _module(name)
    if module is None:
        return prior
    budget = budget_for(game, think_ms, rollouts)
    if budget is None:
        return prior
    codes = _codes(observation, legal_actions, game)
    try:
        return module.choose(observation, codes, prior, game, budget)
    except Exception:  # an unforeseen state costs the search, not the decision
        import logging
        logging.getLogger("search").exception("search failed; answering the heuristic's choice")
        return prior


def _module(name: str):
    if name == "confirmation":
        from sample_bots import search_confirmation
        return search_confirmation
    if name == "aegis":
        from sample_bots import search_aegis
        return search_aegis
    return None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--think-ms", type=float, default=THINK_MS,
                        help="time per decision in ms (capped at half the decision time left)")
    parser.add_argument("--rollouts", type=int, default=None,
                        help="cap on the samples per decision (each plays every candidate out once)")
    args, rest = parser.parse_known_args(argv)
    configure(args.think_ms, args.rollouts)
    run_bot(decide, rest, default_name="search")


if __name__ == "__main__":
    main()
