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

The sampling loop is game-independent (:mod:`sample_bots.search_core`); the
candidates, samples and rollout policies are the game's
(:mod:`sample_bots.search_confirmation`, :mod:`sample_bots.search_aegis`). The
rollout policies read the engine state directly and are cheap:
a few microseconds a card (Aegis exchanges and declarations in playouts follow
the heuristic bot). Aegis samples lean to strong opponent hands once the
opponent has exchanged (it kept its good cards; ``determinize`` alone deals
them uniformly, which made the bot overbid).

Budget: ``--think-ms`` (default 150 ms) per decision, never more than half of
the time the referee says is left for the decision; ``--rollouts N`` caps the
number of samples instead (each plays every surviving candidate once), which
makes a decision reproducible from ``game.rng`` when no clock applies (the
in-process measurement of ``referee.tools.strength``). With no time at all the bot
answers the heuristic's choice at once. Whatever happens, the answer is an
index into the legal actions.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.bot import GameView, run_bot
from sample_bots import heuristic, search_aegis, search_confirmation
from sample_bots.search_core import Budget

#: the game's search: ``choose(observation, legal codes, prior index, view, budget)`` -> index
CHOOSERS = {
    "confirmation": search_confirmation.choose,
    "aegis": search_aegis.choose,
}

#: share of the decision time left that one decision may use at most
CLOCK_SHARE = 0.5

#: experiments: search only in these phases (env SEARCH_PHASES=play,declare), the heuristic elsewhere
_PHASES = set(os.environ["SEARCH_PHASES"].split(",")) if os.environ.get("SEARCH_PHASES") else None


@dataclass(frozen=True)
class Settings:
    """The bot's budget: ``think_ms`` per decision; ``rollouts`` caps the samples (``None``: by time only)."""

    think_ms: float = 150.0
    rollouts: int | None = None


def policy(settings: Settings) -> Callable[[dict[str, Any], list[str], GameView], int]:
    """``decide`` with these settings."""
    return functools.partial(decide, settings=settings)


def budget_for(game: GameView, settings: Settings = Settings()) -> Budget | None:
    """The budget of a decision; ``None`` when there is no time to search at all.

    The time is ``min(think_ms, CLOCK_SHARE * decision_ms_left)`` when the
    game has a clock (``game.decision_ms > 0``, as with the referee); in
    process, with no clock, ``think_ms`` alone. A fixed ``rollouts`` budget
    applies in addition (and alone when there is no clock)."""
    think, rollouts = settings.think_ms, settings.rollouts
    has_clock = bool(getattr(game, "decision_ms", 0))
    ms = think
    if has_clock:
        ms = min(think, CLOCK_SHARE * max(0, getattr(game, "decision_ms_left", 0)))
    if ms <= 0 and (has_clock or rollouts is None):
        return None
    deadline = None if (rollouts is not None and not has_clock) else time.perf_counter() + ms / 1000
    return Budget(samples=rollouts, deadline=deadline)


def _codes(observation: dict[str, Any], legal_actions: list[str], game: GameView) -> list[int]:
    codes = list(getattr(game, "legal_codes", None) or [])
    if len(codes) == len(legal_actions):
        return codes
    from referee.games import GAMES
    spec = GAMES[observation.get("game") or game.game]
    return [spec.parse_action(name) for name in legal_actions]


def decide(observation: dict[str, Any], legal_actions: list[str], game: GameView,
           settings: Settings = Settings()) -> int:
    """The index of the chosen action in ``legal_actions``."""
    if len(legal_actions) <= 1:
        return 0
    if _PHASES is not None and observation.get("phase") not in _PHASES and \
            f"{observation.get('phase')}-{observation.get('role')}" not in _PHASES:
        return legal_actions.index(heuristic.decide(observation, legal_actions, game))
    name = observation.get("game") or getattr(game, "game", "")
    prior_name = heuristic.decide(observation, legal_actions, game)
    prior = legal_actions.index(prior_name) if prior_name in legal_actions else 0
    choose = CHOOSERS.get(name)
    if choose is None:
        return prior
    budget = budget_for(game, settings)
    if budget is None:
        return prior
    codes = _codes(observation, legal_actions, game)
    try:
        return choose(observation, codes, prior, game, budget)
    except Exception:  # an unforeseen state costs the search, not the decision
        logging.getLogger("search").exception("search failed; answering the heuristic's choice")
        return prior


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--think-ms", type=float, default=Settings.think_ms,
                        help="time per decision in ms (capped at half the decision time left)")
    parser.add_argument("--rollouts", type=int, default=None,
                        help="cap on the samples per decision (each plays every candidate out once)")
    args, rest = parser.parse_known_args(argv)
    run_bot(policy(Settings(args.think_ms, args.rollouts)), rest, default_name="search")


if __name__ == "__main__":
    main()
