"""The games, registered in one table.

``GAMES[name]`` is a :class:`~referee.games.base.GameSpec`; ``GAMES[name].new(options, seed)``
starts a match, and the spec's traits say what the rest of the referee needs to know of the
game. Each game is a package of its own (``aegis/``, ``confirmation/``); adding one is its
package and one line here. Nothing in this package does I/O.
"""

from __future__ import annotations

from referee.games import aegis, confirmation
from referee.games.base import (
    GameError,
    GameSpec,
    IllegalActionError,
    OptionError,
    RatedBy,
    first_legal,
    play_out,
    random_legal,
)

GAMES: dict[str, GameSpec] = {spec.name: spec for spec in (confirmation.SPEC, aegis.SPEC)}


def get(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except KeyError:
        raise OptionError(f"unknown game {name!r} (known: {', '.join(GAMES)})") from None


__all__ = ["GAMES", "get", "GameSpec", "GameError", "IllegalActionError", "OptionError", "RatedBy",
           "play_out", "random_legal", "first_legal"]
