"""The exit codes of a run, as values: the service computes a run's from its outcome
(:mod:`referee.competition.service`), the ``referee`` command exits with them (:mod:`referee.cli.exits`
maps its errors to them)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    #: a check failed: an invalid record, stated results that do not match
    CHECK_FAILED = 1
    #: bad usage: a usage error, an unreadable file, bad JSON, a bad rule option
    USAGE = 2
    #: sprt: no verdict when --max-units units were played; tournament (schedule = "adaptive") and ratings
    #: of its results: max_deal_sets reached before the stop rule was met (the standings are printed)
    INCONCLUSIVE = 3
    #: tournament, gauntlet: a bot died for good mid-run and did not play all its matches (the
    #: standings mark it; the same command plays them)
    INCOMPLETE = 4
    #: tournament, gauntlet (absent = "withdraw"): an entry did not start, or died for good, and was
    #: withdrawn; the others played all their matches (4 wins when both apply: matches are missing)
    WITHDRAWN = 5
    #: the results could not be written (a full disk, an I/O error): what was stored before is
    #: intact, and the same command, once there is room, plays only what is missing
    WRITE_FAILED = 6
    #: interrupted (Ctrl-C): what finished is saved (tournament, gauntlet) or reported (sprt)
    INTERRUPTED = 130
    # the verdicts of sprt, aliases of the codes above: a CI job passes on H1 and fails on H0
    #: sprt: H1 accepted (the candidate is stronger, or shows no regression)
    H1_ACCEPTED = 0
    #: sprt: H0 accepted (the candidate is not stronger, or is a regression): a failed check
    H0_ACCEPTED = 1
