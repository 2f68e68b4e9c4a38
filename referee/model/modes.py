"""The modes a competition runs in, and an entry's status: each one a ``StrEnum``, so that what the
code compares is a member, named once here. A member equals its string and formats as it, so the
tournament file's values, the store, JSON, the pages and printed output keep the same strings (the
config reader, :mod:`referee.competition.config`, turns a file's strings into members)."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar


class SandboxMode(StrEnum):
    """``[limits] sandbox``: what launched bots run in (:mod:`referee.hosting.sandbox`); a resolved
    sandbox's kind is BWRAP or NONE. (Not ``Sandbox``: that is the resolved one, in hosting.)"""

    AUTO = "auto"  # bubblewrap where it works, plain processes (with a warning) where it does not
    BWRAP = "bwrap"  # bubblewrap, or refuse to start
    NONE = "none"  # plain processes of this user


class BotProtocol(StrEnum):
    """``[[bots]] protocol``: how a launched bot speaks to the referee."""

    GRPC = "grpc"  # gRPC itself
    STDIO = "stdio"  # lines of JSON through the stdio relay (referee/hosting/stdio.py)


class ExecutorKind(StrEnum):
    """``[executor] kind`` (``--executor``): where matches are played."""

    LOCAL = "local"  # in this process
    RAY = "ray"  # by match workers on a Ray cluster


class Absent(StrEnum):
    """``[tournament] absent``: what a run does with an entry that is not running and connected
    within startup_s (or that dies for good)."""

    STOP = "stop"  # stop before any match (its matches are missing)
    WITHDRAW = "withdraw"  # withdraw it (the others play)


class Isolation(StrEnum):
    """``[tournament] isolation``: how a bot's processes live."""

    TOURNAMENT = "tournament"  # through the run
    MATCH = "match"  # a fresh one for every match


class Release(StrEnum):
    """``[tournament] release``: when a match's record reaches spectators (:mod:`referee.results.release`)."""

    DEAL_SET = "deal-set"  # once its deal set is over
    END = "end"  # once every match of the schedule is stored


class ScheduleKind(StrEnum):
    """``[tournament] schedule``: which tables are played."""

    ROUND_ROBIN = "round-robin"  # every table on each of deal_sets deal sets
    ADAPTIVE = "adaptive"  # deal set after deal set, where the ranking is least certain, until a stop rule


class Lineup(StrEnum):
    """``[gauntlet] lineup``: who sits with the candidate (:mod:`referee.competition.gauntlet`)."""

    DUEL = "duel"  # one baseline at a time
    FIELD = "field"  # baselines in every other seat (games of more than two seats)


class EntryStatus(StrEnum):
    """An entry's status in a results directory (:class:`referee.results.store.Entry`)."""

    PLAYING = "playing"
    DID_NOT_START = "did not start"  # not running and connected within startup_s (absent = "withdraw")
    WITHDRAWN = "withdrawn"  # withdrawn = true in the tournament file
    DEAD = "dead"  # died for good (absent = "withdraw")


M = TypeVar("M", bound=StrEnum)


def member(kind: type[M], value: object) -> M | None:
    """The member of ``kind`` that ``value`` (read from a tournament file, a store, a command line)
    names, None if it names none (the reader's error lists ``', '.join(kind)``: every value)."""
    return next((m for m in kind if m == value), None)
