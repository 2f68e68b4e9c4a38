"""The runner's clock and fault policy, with scripted seats (no network)."""

from __future__ import annotations

import asyncio
import random

import pytest

from referee import records
from referee.games import GAMES
from referee.games.base import PUBLIC, Shoe
from referee.runner import (
    AbsentSeat,
    Clock,
    Decision,
    GameInfo,
    Reply,
    SeatGone,
    SeatLink,
    Substitution,
    run_match,
)


class ScriptedSeat(SeatLink):
    """Answers with ``policy(decision, n)`` (n = how many decisions it was asked so far)."""

    def __init__(self, policy=None, seed=0):
        self.rng = random.Random(seed)
        self.policy = policy or (lambda d, n: Reply(name=self.rng.choice(d.legal_names)))
        self.asked = 0
        self.events = []
        self.substitutions: list[Substitution] = []
        self.decisions: list[Decision] = []
        self.info: GameInfo | None = None
        self.results = None

    async def start(self, info):
        self.info = info

    def send_event(self, index, event):
        self.events.append((index, event))

    async def decide(self, decision):
        self.asked += 1
        self.decisions.append(decision)
        answer = self.policy(decision, self.asked)
        if asyncio.iscoroutine(answer):
            answer = await answer
        return answer

    def substituted(self, substitution):
        self.substitutions.append(substitution)

    def end(self, results):
        self.results = results


def play(game, links, options=None, clock=Clock(1.0, 2.0), seed=3):
    spec = GAMES[game]
    names = [f"bot{i}" for i in range(spec.num_seats)]
    return asyncio.run(run_match("g1", spec, options or {}, Shoe(seed), links, names, clock))


def test_well_behaved_seats_play_a_whole_game_with_no_fault():
    links = [ScriptedSeat(seed=i) for i in range(4)]
    out = play("confirmation", links, {"rounds": 2})
    assert out.state.is_terminal() and out.faults == []
    assert all(link.substitutions == [] for link in links)  # nothing was substituted
    assert records.replay(out.record).results == out.state.results()
    assert out.results["faults"][0] == dict.fromkeys(("timeout", "illegal", "malformed", "wrong_id",
                                                      "disconnect", "no_session", "error"), 0)
    for seat, link in enumerate(links):
        assert link.info.seat == seat and link.results == out.results
        # a seat gets exactly the events it may see, in order
        assert [e for _, e in link.events] == out.state.visible_events(seat)


def test_every_request_carries_the_seats_observation_and_legal_actions():
    links = [ScriptedSeat(seed=i) for i in range(2)]
    play("aegis", links)
    for seat, link in enumerate(links):
        for d in link.decisions:
            assert d.seat == seat and d.observation["seat"] == seat
            assert list(d.legal_names) == [GAMES["aegis"].action_name(a) for a in d.legal]


@pytest.mark.parametrize("answer, kind", [
    (Reply(name="XYZZY"), "malformed"),
    (Reply(index=999), "malformed"),
    (Reply(name="BID 14"), "malformed"),
    (Reply(wrong_id=True), "wrong_id"),
    (Reply(error="KeyError: 'AS' (at mybot.py:12 in decide)"), "error"),
])
def test_a_bad_answer_is_replaced_by_the_first_legal_action(answer, kind):
    bad = ScriptedSeat(lambda d, n: answer if n == 1 else Reply(index=0))
    links = [ScriptedSeat(seed=1), bad, ScriptedSeat(seed=2), ScriptedSeat(seed=3)]
    out = play("confirmation", links, {"rounds": 1})
    assert [(f.seat, f.kind) for f in out.faults] == [(1, kind)]
    first = bad.substitutions[0]
    assert first.fault == kind and first.action == "BID 0" and first.reason
    assert out.state.bids[1] == 0
    assert bad.asked > 1  # the seat goes on being asked


def test_an_error_the_bot_answers_is_its_own_fault_quoted_escaped_and_capped():
    """A kit whose decide raised answers what it raised: charged as an error (not a weak move),
    its text quoted as any text of the bot's, escaped and cut."""
    said = "ValueError: \x1b[2J" + "x" * 5000
    bad = ScriptedSeat(lambda d, n: Reply(error=said) if n % 2 else Reply(index=0))
    out = play("aegis", [bad, ScriptedSeat(seed=1)])
    errors = [f for f in out.faults if f.kind == "error"]
    assert errors and all(f.seat == 0 for f in out.faults) and len(errors) == len(out.faults)
    assert out.results["faults"][0]["error"] == (bad.asked + 1) // 2 and out.results["faults"][1]["error"] == 0
    detail = errors[0].detail
    assert detail.startswith("the bot's own code failed: 'ValueError: \\x1b[2Jxxx") and "\x1b" not in detail
    assert f"({len(said)} characters, " in detail and len(detail) <= 300
    assert bad.substitutions[0].fault == "error" and out.state.is_terminal()


def test_an_illegal_answer_names_the_rule():
    # seat 1 bids first; then answers a card during the bidding
    bad = ScriptedSeat(lambda d, n: Reply(name="AS") if n == 1 else Reply(index=0))
    out = play("confirmation", [ScriptedSeat(), bad, ScriptedSeat(), ScriptedSeat()], {"rounds": 1})
    assert [(f.seat, f.kind) for f in out.faults] == [(1, "illegal")]
    assert "rule 1.4" in out.faults[0].detail and "rule 1.4" in bad.substitutions[0].reason


def test_overruns_come_out_of_the_bank_then_the_seat_is_defaulted():
    async def slow(d, n):
        await asyncio.sleep(0.15)
        return Reply(index=0)

    slowpoke = ScriptedSeat(slow)
    links = [slowpoke, ScriptedSeat(seed=1)]
    out = play("aegis", links, clock=Clock(0.05, 0.25))
    # each answer overruns by ~0.1 s: the bank absorbs two, the third times out
    assert [f.kind for f in out.faults] == ["timeout"]
    assert out.faults[0].seat == 0
    assert slowpoke.asked == 3
    banks = [d.bank_left_s for d in slowpoke.decisions]
    assert banks[0] == 0.25 and banks[0] > banks[1] > banks[2] > 0
    assert out.state.is_terminal()  # the match goes on: the seat plays by default


def test_a_lost_connection_defaults_the_seat_to_the_end():
    def vanish(d, n):
        if n == 3:
            raise SeatGone("bye")
        return Reply(index=0)

    gone = ScriptedSeat(vanish)
    out = play("confirmation", [ScriptedSeat(), ScriptedSeat(), gone, ScriptedSeat()], {"rounds": 1})
    assert [(f.seat, f.kind) for f in out.faults] == [(2, "disconnect")]
    assert gone.asked == 3 and out.state.is_terminal()


def test_a_seat_nobody_came_to_play_is_defaulted_and_charged():
    out = play("aegis", [AbsentSeat(), ScriptedSeat()])
    assert [(f.seat, f.kind) for f in out.faults] == [(0, "no_session")]
    assert out.state.is_terminal()


def test_faults_do_not_change_the_other_seats_results():
    """Same deal, same answers from seats 0, 2, 3: a faulty seat 1 that always
    answers what the default would be leaves everything identical."""
    def first(d, n):
        return Reply(index=0)

    clean = play("confirmation", [ScriptedSeat(first) for _ in range(4)], {"rounds": 1})
    faulty = play("confirmation", [ScriptedSeat(first), ScriptedSeat(lambda d, n: Reply(name="junk")),
                                   ScriptedSeat(first), ScriptedSeat(first)], {"rounds": 1})
    assert faulty.state.results() == clean.state.results()
    assert {f.seat for f in faulty.faults} == {1}


def test_simultaneous_choices_are_asked_together():
    asked_at = {}

    async def confirm_slowly(d, n):
        if d.legal_names[0] == "CONFIRM":
            asked_at[d.seat] = asyncio.get_running_loop().time()
            await asyncio.sleep(0.1)
        return Reply(index=0)

    links = [ScriptedSeat(confirm_slowly) for _ in range(4)]
    out = play("confirmation", links, {"rounds": 1})
    assert sorted(asked_at) == [0, 1, 2, 3]
    assert max(asked_at.values()) - min(asked_at.values()) < 0.05  # all four at once
    assert out.faults == []


def test_private_events_reach_only_their_seat():
    links = [ScriptedSeat(seed=i) for i in range(4)]
    play("confirmation", links, {"rounds": 1, "blind": True})
    for seat, link in enumerate(links):
        assert all(e.to in (PUBLIC, seat) for _, e in link.events)
        assert sum(1 for _, e in link.events if e.kind == "deal") == 1
