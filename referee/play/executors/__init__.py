"""Executors: where and how a schedule's matches are played.

One abstract :class:`Executor` (launch the bots, play a match, play many at
once) with named implementations, as python-chess has one ``Protocol`` and
its ``UciProtocol``/``XBoardProtocol``:

- :class:`LocalExecutor`: a referee in this process, on a free loopback port;
- :class:`RemoteExecutor`: a ``referee serve`` elsewhere, through its ``RunMatch`` call;
- :class:`~referee.play.executors.ray.RayExecutor`: match workers on a Ray cluster, each
  with its own referee and bots (``--executor ray``; Ray is imported only then).

Tournaments, gauntlets, SPRT runs and ``referee match`` all play through one.
"""

from typing import Any

from referee.model import ExecutorKind, ExecutorSpec, Played
from referee.play.executors.base import BotsDead, BotsNotReady, Executor, seat_capacity
from referee.play.executors.local import LocalExecutor
from referee.play.executors.ray import ClusterError, RayExecutor
from referee.play.executors.remote import RemoteExecutor, RemoteRefereeError

__all__ = ["BotsDead", "BotsNotReady", "ClusterError", "Executor", "LocalExecutor", "Played", "RemoteExecutor",
           "RemoteRefereeError", "seat_capacity", "executor_for"]


def executor_for(server: str | None, admin_token: str | None = None, spec: ExecutorSpec | None = None,
                 **kwargs: Any) -> Executor:
    """The remote executor when a ``server`` address is given, the Ray one when ``spec`` says
    ``ray``, else the local one."""
    if spec is not None and spec.kind == ExecutorKind.RAY:
        return RayExecutor(spec=spec, **kwargs)
    if server is None:
        return LocalExecutor(**kwargs)
    return RemoteExecutor(server=server, admin_token=admin_token, **kwargs)
