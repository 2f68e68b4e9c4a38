"""A bounded load test on loopback: many bot sessions, 64+ matches at once.

Every game completes and no bot that answered in time is charged a fault.
Sized to about a minute on 2 cores (a figure, not an assertion: the test
prints it)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections import Counter

import pytest
from harness import serve

from referee.play import wire
from referee.runner import Clock

pytestmark = pytest.mark.e2e

BOTS = {f"b{i}": 2 for i in range(8)}  # 8 bot names, 2 processes (sessions) each


def test_64_concurrent_matches_complete_without_faults(monkeypatch):
    # the kit's sessions ask for batches: count those sent, and the batched answers received
    sent, received = Counter(), Counter()
    pack, unpack = wire.batch, wire.replies

    def counted_batch(messages):
        sent[len(messages)] += 1
        return pack(messages)

    def counted_replies(message):
        answers = unpack(message)
        received[len(answers)] += 1
        return answers

    monkeypatch.setattr(wire, "batch", counted_batch)
    monkeypatch.setattr(wire, "replies", counted_replies)

    async def main(server, bots):
        for name, copies in BOTS.items():
            for k in range(copies):
                bots.sample(name, "--capacity", "24", "--seed", str(k))
        names = list(BOTS)
        started = time.monotonic()
        matches = [server.arena.run_match("aegis", {}, [names[i % 8], names[(i + 1) % 8]], seed=i,
                                          clock=Clock(5.0, 30.0)) for i in range(48)]
        matches += [server.arena.run_match("confirmation", {"rounds": 1},
                                           [names[(i + k) % 8] for k in range(4)], seed=i,
                                           clock=Clock(5.0, 30.0)) for i in range(24)]
        outcomes = await asyncio.gather(*matches)
        return outcomes, time.monotonic() - started, len(server.arena.sessions)

    outcomes, seconds, bots = serve(main, output=subprocess.DEVNULL, connect_timeout=30)
    decisions = sum(len(o.state.actions) for o in outcomes)
    print(f"\n{len(outcomes)} concurrent matches, {decisions} decisions in {seconds:.1f} s "
          f"({decisions / seconds:.0f} decisions/s) over 16 sessions of {bots} bots")
    print(f"batches sent (size: count): {dict(sorted(sent.items()))}; "
          f"answers received together: {dict(sorted(received.items()))}")
    assert len(outcomes) == 72
    for out in outcomes:
        assert out.state.is_terminal()
        assert out.faults == [], out.faults
    assert min(sent) > 1 and sum(sent.values()) > 10  # a batch is never of one message
    assert max(received) > 1
