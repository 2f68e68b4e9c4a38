"""The games, registered in one table.

``GAMES[name]`` is a :class:`~referee.games.base.GameSpec`; ``GAMES[name].new(options, seed)``
starts a match. Nothing in this package does I/O.
"""

from __future__ import annotations

from referee.games import aegis, confirmation
from referee.games.base import GameSpec, GameError, IllegalActionError, OptionError

GAMES: dict[str, GameSpec] = {spec.name: spec for spec in (confirmation.SPEC, aegis.SPEC)}


def get(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except KeyError:
        raise OptionError(f"unknown game {name!r} (known: {', '.join(GAMES)})") from None


__all__ = ["GAMES", "get", "GameSpec", "GameError", "IllegalActionError", "OptionError"]
