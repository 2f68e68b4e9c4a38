"""Process-wide settings for the long-running processes: the referee server and bots."""

from __future__ import annotations

import gc


def tune_gc() -> None:
    """Tune the process's garbage collector for playing (process-wide, idempotent).

    Every decision allocates hundreds of short-lived objects (the observation,
    its JSON, messages, futures), so with the default first threshold (700)
    the collector runs every few decisions and scans the young objects each
    time: 12-15% of the referee's own CPU per decision (a bot's is alike).
    Collecting every 20,000 allocations instead, with what was loaded before
    play frozen out of the scans, keeps that to a few per cent; what it
    costs is a few more megabytes of garbage waiting for a collection."""
    if gc.get_threshold()[0] < 20_000:
        gc.freeze()
        gc.set_threshold(20_000, 50, 100)
