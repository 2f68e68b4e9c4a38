"""A match of Aegis, RULES.md 2.2 and 2.8: the draw for the first master, then games
(:class:`~referee.games.aegis.rules.AegisGame`, one deal each) until someone wins.

Seats are 0 and 1; the roles *master* and *slave* alternate every game. The
master draw uses a deck of its own: seat 0 draws its card 0, seat 1 its card 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee.cards import cards_of
from referee.games.aegis.notation import action_name, action_names, parse_action
from referee.games.aegis.rules import OPTIONS, OVER, AegisGame, card_names, copy_result, draw_master
from referee.games.base import Event, GameState, NotYourTurnError, Shoe, check_options, places_by_score

WINNING_SCORE = 25
CALLED_LEAD = 10


class AegisMatch(GameState):
    """A match of Aegis (RULES 2.2 and 2.8): the master draw, then games to 25 or a 10-point lead.

    ``AegisMatch(options, shoe)``: the first ``shoe.deck()`` is the master draw
    (seat 0 draws card 0, seat 1 card 1), then one ``shoe.deck()`` per game.
    The current game's decisions are delegated to :attr:`current` (an
    :class:`AegisGame` writing into this match's ``events``).
    """

    game = "aegis"
    num_seats = 2

    def __init__(self, options: Mapping[str, Any] | None = None, shoe: Shoe | None = None):
        options = check_options("aegis", OPTIONS, options)
        shoe = shoe if shoe is not None else Shoe()
        draw = shoe.deck()
        self._start(options, shoe, draw[:2], [0, 0], [])

    @classmethod
    def resume(cls, options: Mapping[str, Any] | None, shoe: Shoe, draw_cards: Sequence[int],
               totals: Sequence[int], past_results: Sequence[Mapping[str, Any]]) -> AegisMatch:
        """A match continued after the games of ``past_results`` (match scores ``totals``;
        ``draw_cards`` its master draw), its next game dealt from ``shoe``. The past games
        exist only as their results; ``events`` start at the draw, then the next game's deal."""
        match = cls.__new__(cls)
        match._start(check_options("aegis", OPTIONS, options), shoe, draw_cards, totals,
                     [PastGame(r) for r in past_results])
        return match

    def _start(self, options: dict[str, Any], shoe: Shoe, draw_cards: Sequence[int], totals: Sequence[int],
               games: list[AegisGame | PastGame]) -> None:
        self.options = options
        self.shoe = shoe
        self.events: list[Event] = []
        self.actions: list[tuple[int, int]] = []
        self.draw_cards = list(draw_cards)
        self.first_master = draw_master(self.draw_cards[0], self.draw_cards[1])
        self.draw_names = card_names(self.draw_cards)
        self.events.append(Event("master_draw", None, {"cards": list(self.draw_names),
                                                        "master": self.first_master}))
        self.totals = list(totals)
        self.games = games  # finished games
        self.winner: int | None = None
        self.ended_by: str | None = None
        self.current = self._new_game()

    def _new_game(self) -> AegisGame:
        number = len(self.games) + 1
        master = self.first_master if number % 2 == 1 else 1 - self.first_master
        return AegisGame(master, self.shoe.deck(), self.options, number=number, shoe=self.shoe,
                         events=self.events)

    # -- the interface --

    def to_act(self) -> tuple[int, ...]:
        return () if self.winner is not None else self.current.to_act()

    def is_terminal(self) -> bool:
        return self.winner is not None

    def legal_actions(self, seat: int) -> list[int]:
        return [] if self.winner is not None else self.current.legal_actions(seat)

    def apply(self, seat: int, action: int) -> None:
        if self.winner is not None:
            raise NotYourTurnError("2.8", "the match is over; no seat acts")
        game = self.current
        game.apply(seat, action)
        self.actions.append((seat, action))
        if game.phase == OVER:
            self._game_over(game)

    def _game_over(self, game: AegisGame) -> None:
        self.games.append(game)
        a, b = self.totals[0] + game.points[0], self.totals[1] + game.points[1]
        self.totals = [a, b]
        if a >= WINNING_SCORE and b >= WINNING_SCORE:
            self.winner, self.ended_by = _result(game)["winner"], "both-25"
        elif a >= WINNING_SCORE or b >= WINNING_SCORE:
            self.winner, self.ended_by = (0 if a >= WINNING_SCORE else 1), "25"
        elif abs(a - b) >= CALLED_LEAD:
            self.winner, self.ended_by = (0 if a > b else 1), "called"
        if self.winner is None:
            self.current = self._new_game()
        else:
            self.events.append(Event("match_end", self.winner, {
                "scores": list(self.totals), "winner": self.winner, "placing": self.placing(),
                "ended_by": self.ended_by, "games": len(self.games)}))

    def scores(self) -> list[int]:
        return list(self.totals)

    def placing(self) -> list[int]:
        if self.winner is not None:
            return [1, 2] if self.winner == 0 else [2, 1]
        return places_by_score(self.totals)

    action_name = staticmethod(action_name)
    action_names = staticmethod(action_names)
    parse_action = staticmethod(parse_action)

    # -- views --

    def observation(self, seat: int) -> dict[str, Any]:
        """The current game's view for ``seat`` plus the match: the draw, totals, past games."""
        obs = self.current.observation(seat)
        if self.winner is not None:
            obs["to_act"] = []
        obs["options"] = dict(self.options)
        obs["draw"] = {"cards": list(self.draw_names), "master": self.first_master}
        obs["match_scores"] = list(self.totals)
        obs["games"] = [copy_result(_result(g)) for g in self.games]
        obs["match_over"] = self.winner is not None
        obs["winner"] = self.winner
        obs["ended_by"] = self.ended_by
        return obs

    def results(self) -> dict[str, Any]:
        return {
            "scores": self.scores(),
            "placing": self.placing(),
            "winner": self.winner,
            "ended_by": self.ended_by,
            "draw": {"cards": list(self.draw_names), "master": self.first_master},
            "num_games": len(self.games),
            "games": [copy_result(_result(g)) for g in self.games],
        }


def _result(game: AegisGame | PastGame) -> dict[str, Any]:
    """A finished game's result (a match keeps only finished games, whose result is set)."""
    assert game.result is not None
    return game.result


class PastGame:
    """A finished game of a resumed match, known only by its result (what the match reads of it)."""

    def __init__(self, result: Mapping[str, Any]):
        self.result = copy_result(result)
        self.points = list(self.result["points"])


def hidden_cards(match: AegisMatch, seat: int) -> list[int]:
    """The cards of the game in play whose place ``seat`` may not know (RULES §4, the ``hidden_cards``
    trait): the other seat's hand, the stock not yet drawn, and the cards the other discarded."""
    game, other = match.current, 1 - seat
    discarded = [c for exchange in game.own_exchanges[other] for c in exchange["discarded"]]
    return cards_of(game.hands[other]) + list(game.stock[game.drawn:]) + discarded
