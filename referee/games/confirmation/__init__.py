"""Confirmation: 4 players, bidding, trick play and a mid-round confirm/revise choice (RULES.md §1).

One :class:`Confirmation` state plays a whole game of ``rounds`` rounds (8 by
default; ``rounds=1`` is a single deal).

The package, one job per module:

- ``notation``: the actions as ints, their notation (``BID 3``, ``CONFIRM``,
  ``REVISE 4``) and its parsing;
- ``rules``: the game as a state machine, its events and views;
- ``determinization``: for search bots, :func:`determinize` turns one seat's
  observation into a full state consistent with it (the hidden hands sampled);
- ``text``: a game's log and results as text;
- ``view``: the table as one viewer sees it, event by event (the HTML pages);
- ``typed``: the observation, events and results shaped as the protocol's typed messages;
- ``lineups``: which bots sit down together in duplicate play.

``SPEC`` is the registry entry: how to start a game, and the game's traits.
"""

from __future__ import annotations

from referee.games.base import GameError, GameSpec, RatedBy
from referee.games.confirmation import lineups, text, typed
from referee.games.confirmation.determinization import determinize
from referee.games.confirmation.notation import BID, CONFIRM, MAX_BID, REVISE, action_name, choice_name, parse_action
from referee.games.confirmation.rules import (
    BIDDING,
    CONFIRMING,
    NUM_SEATS,
    OPTIONS,
    OVER,
    PLAYING,
    TRICKS,
    Confirmation,
    hidden_cards,
    round_points,
    seat_points,
    trick_winner,
)
from referee.games.confirmation.view import ConfirmationView

SPEC = GameSpec(
    name="confirmation",
    title="Confirmation",
    num_seats=NUM_SEATS,
    options=OPTIONS,
    new_match=Confirmation,
    action_name=action_name,
    parse_action=parse_action,
    seat_groups=lineups.seat_groups,
    duel_note=lineups.DUEL_NOTE,
    rated_by=RatedBy.SCORE,
    hidden_cards=hidden_cards,
    first_place_label="first place %",
    seat_order="seat 0 deals first",
    render_log=text.render_log,
    render_results=text.render_results,
    typed=typed.TYPED,
    table_view=ConfirmationView,
    summary="4 players: bid your tricks, then confirm or revise mid-round (RULES.md §1)",
)

__all__ = [
    "NUM_SEATS", "TRICKS", "MAX_BID", "BID", "CONFIRM", "REVISE", "BIDDING", "PLAYING", "CONFIRMING", "OVER",
    "OPTIONS", "SPEC", "Confirmation", "GameError", "action_name", "parse_action", "choice_name", "round_points",
    "seat_points", "trick_winner", "determinize",
]
