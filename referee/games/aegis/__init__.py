"""Aegis, the two-player trick-taking game of RULES.md §2 (pure rules, no I/O).

A match (:class:`AegisMatch`, the registry's ``new_match``) is a draw for the
first master (§2.2) followed by games (:class:`AegisGame`, one deal each) until
someone wins by §2.8. Seats are 0 and 1; the roles *master* and *slave*
alternate every game.

The package, one job per module:

- ``notation``: the actions as ints, their notation (``STOP``, ``DECLARE 3``,
  ``EXCHANGE 2C 5H``) and its parsing;
- ``rules``: one game (one deal) as a state machine, its events and views;
- ``match``: the match over games (RULES 2.2, 2.8);
- ``determinization``: for search bots, :func:`determinize` turns one seat's
  observation into a full game (or match) state consistent with it;
- ``text``: a match's log and results as text;
- ``view``: the table as one viewer sees it, event by event (the HTML pages);
- ``typed``: the observation, events and results shaped as the protocol's typed messages;
- ``lineups``: which bots sit down together in duplicate play.

``SPEC`` is the registry entry: how to start a match, and the game's traits.
"""

from __future__ import annotations

from referee.games.aegis import lineups, text, typed
from referee.games.aegis.determinization import determinize
from referee.games.aegis.match import CALLED_LEAD, WINNING_SCORE, AegisMatch, hidden_cards
from referee.games.aegis.notation import (
    DECLARE,
    DECLINE,
    EXCHANGE,
    HAND_SIZE,
    MAX_DECLARATION,
    PASS,
    STOP,
    action_name,
    action_names,
    parse_action,
)
from referee.games.aegis.rules import (
    DECLARE_MASTER,
    DECLARE_SLAVE,
    EXCHANGE_MASTER,
    EXCHANGE_SLAVE,
    MASTER,
    MAX_EXCHANGES,
    NUM_TRICKS,
    OPTIONS,
    OVER,
    PHASE_NAMES,
    PLAY,
    RANK_BEATS,
    SLAVE,
    STOCK_SIZE,
    AegisGame,
    beats,
    deal,
    draw_master,
    follower_wins,
    score_game,
)
from referee.games.aegis.view import AegisView
from referee.games.base import GameSpec, RatedBy

SPEC = GameSpec(
    name="aegis",
    title="Aegis",
    num_seats=2,
    options=OPTIONS,
    new_match=lambda opts, shoe: AegisMatch(opts, shoe),
    action_name=action_name,
    parse_action=parse_action,
    seat_groups=lineups.seat_groups,
    duel_note=lineups.DUEL_NOTE,
    rated_by=RatedBy.PLACING,
    hidden_cards=hidden_cards,
    first_place_label="match wins %",
    seat_order="by seat index",
    render_log=text.render_log,
    render_results=text.render_results,
    typed=typed.TYPED,
    table_view=AegisView,
    summary="2 players: exchange up to 4 times, declare tricks, play 5 tricks with trumps, "
            "killers and a non-transitive ace; first to 25 or 10 ahead wins",
)

__all__ = [
    "STOP", "PASS", "DECLARE", "EXCHANGE", "DECLINE", "HAND_SIZE", "MAX_DECLARATION", "NUM_TRICKS",
    "MAX_EXCHANGES", "STOCK_SIZE", "WINNING_SCORE", "CALLED_LEAD", "MASTER", "SLAVE", "OPTIONS", "SPEC",
    "EXCHANGE_MASTER", "EXCHANGE_SLAVE", "DECLARE_MASTER", "DECLARE_SLAVE", "PLAY", "OVER", "PHASE_NAMES",
    "RANK_BEATS", "AegisGame", "AegisMatch", "action_name", "action_names", "parse_action",
    "beats", "follower_wins", "draw_master", "score_game", "deal", "determinize",
]
