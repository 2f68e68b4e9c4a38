"""Executors: where and how a schedule's matches are played.

One abstract :class:`Executor` (launch the bots, play a match, play many at
once) with named implementations, as python-chess has one ``Protocol`` and
its ``UciProtocol``/``XBoardProtocol``:

- :class:`LocalExecutor`: a referee in this process, on a free loopback port;
- :class:`RemoteExecutor`: a ``referee serve`` elsewhere, through its ``RunMatch`` call.

Tournaments, gauntlets, SPRT runs and ``referee match`` all play through one.
"""

from referee.tournament.executors.base import BotsDead, BotsNotReady, Executor, Played, seat_capacity
from referee.tournament.executors.local import LocalExecutor
from referee.tournament.executors.remote import RemoteExecutor, RemoteRefereeError

__all__ = ["BotsDead", "BotsNotReady", "Executor", "LocalExecutor", "Played", "RemoteExecutor", "RemoteRefereeError", "seat_capacity", "executor_for"]


def executor_for(server: str | None, admin_token: str | None = None, **kwargs) -> Executor:
    """The remote executor when a ``server`` address is given, else the local one."""
    if server is None:
        return LocalExecutor(**kwargs)
    return RemoteExecutor(server=server, admin_token=admin_token, **kwargs)
