"""heuristic: plays both games sensibly by explicit rules.

    python -m sample_bots.heuristic --address HOST:PORT --name heuristic --token TOKEN

A bot for the referee built from the observation alone (never hidden
information), fast (well under 2 ms a decision) and deterministic.

Confirmation (:mod:`sample_bots.heuristic_confirmation`)
    Bids the tricks its hand should take (honours that can wait for the
    higher cards to fall, long trumps, spare trumps for ruffing short suits);
    the dealer takes the nearest allowed number. Plays to make exactly its
    bid: wins cheaply while tricks are needed, ducks once the bid is full;
    confirms when the remaining tricks are within reach of what its hand still
    holds, otherwise revises to the realistic number. In *pairs* it plays for
    the team's bid and leaves a partner's winning card alone.

Aegis (:mod:`sample_bots.heuristic_aegis`)
    Values each card by the exact chance that it holds when led against a
    random opponent hand (the ace loses to number cards, trumps can be ruffed
    only by a void opponent, trump leads fall to killers); exchanges weak
    cards (the master only while the raised floor e + 1 is worth it);
    declares, passes or overcalls by expected points; plays to win or duck
    each trick according to the tally that pays best.

Whatever happens, the answer is one of the legal actions.
"""

from __future__ import annotations

from typing import Any

from referee.bot import GameView, run_bot
from sample_bots import heuristic_aegis, heuristic_confirmation

POLICIES = {
    "confirmation": heuristic_confirmation.decide,
    "aegis": heuristic_aegis.decide,
}


def decide(observation: dict[str, Any], legal_actions: list[str], game: GameView) -> str:
    """The rule-based choice for the game at hand, always one of ``legal_actions``."""
    name = str(observation.get("game") or getattr(game, "game", ""))
    policy = POLICIES.get(name)
    choice = policy(observation, legal_actions) if policy else legal_actions[0]
    return choice if choice in legal_actions else legal_actions[0]


def main(argv: list[str] | None = None) -> None:
    run_bot(decide, argv, default_name="heuristic")


if __name__ == "__main__":
    main()
