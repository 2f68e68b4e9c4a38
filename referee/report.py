"""Text output: match logs, result tables. Shared by the commands of referee/cli/."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from referee import games
from referee.games.base import GameState
from referee.games.text import table


def format_options(options: dict[str, Any]) -> str:
    return " ".join(f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in options.items())


def final_table(results: dict[str, Any], seats: Sequence[str]) -> list[str]:
    if list(seats) == default_seat_names(len(seats)):
        rows = [[i, results["scores"][i], results["placing"][i]] for i in range(len(seats))]
        return ["final scores:", table(["seat", "score", "place"], rows)]
    # a seat's label may carry its number (records.seat_labels): the seat column says it already
    rows = [[i, name.removesuffix(f" (seat {i})"), results["scores"][i], results["placing"][i]]
            for i, name in enumerate(seats)]
    return ["final scores:", table(["seat", "name", "score", "place"], rows)]


def default_seat_names(n: int) -> list[str]:
    return [f"seat {i}" for i in range(n)]


def results_report(game: str, results: dict[str, Any] | None, seats: Sequence[str]) -> list[str]:
    """The results as text: the game's own detail table, then the final scores."""
    if results is None:
        return ["(the game is not over)"]
    return games.get(game).render_results(results, seats) + final_table(results, seats)


# --- the log of a match, from its events --------------------------------------


def game_log(state: GameState, seats: Sequence[str]) -> list[str]:
    """A readable log of everything that happened (the referee's view: every hand).

    The engines' events already name cards (``"AS"``) and suits (``"S"``), so
    the log prints them as they are."""
    return list(games.get(state.game).render_log(state.events, seats))
