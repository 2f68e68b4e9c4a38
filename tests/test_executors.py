"""The executor interface with a scripted fake referee: order, concurrency, stopping,
dead bots. (The real implementations are exercised end to end by the tournament,
gauntlet, sprt and match tests, and byte for byte by tests/test_golden.py.)"""

from __future__ import annotations

import asyncio
import collections

import pytest

from referee.model import BotSpec, Played, Seating
from referee.play.executors import BotsDead, Executor, seat_capacity
from referee.play.executors.base import game_id_of
from referee.runner import Clock


class Scripted(Executor):
    """Plays nothing: each match takes ``delay(seating)`` seconds and 'wins' for seat 0."""

    def __init__(self, delay=lambda s: 0.01, dead=(), isolation="tournament"):
        super().__init__("aegis", {}, Clock(), bots=[], capacity={}, isolation=isolation)
        self.delay, self.dead = delay, set(dead)
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.running = self.most_at_once = 0
        self.by_deal_set: dict[int, int] = {}
        self.most_of_one_deal_set = 0

    async def _open(self, stack) -> str:
        return "nowhere"

    async def play(self, seating: Seating, match_id: str | None = None) -> Played:
        if set(seating.lineup) & self.dead:
            raise BotsDead({b: "died 3 times" for b in set(seating.lineup) & self.dead})
        return await super().play(seating, match_id)

    async def _run(self, seating: Seating, match_id: str, sessions=None):
        self.started.append(match_id)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        self.by_deal_set[seating.deal_set] = self.by_deal_set.get(seating.deal_set, 0) + 1
        self.most_of_one_deal_set = max(self.most_of_one_deal_set, self.by_deal_set[seating.deal_set])
        try:
            await asyncio.sleep(self.delay(seating))
        except asyncio.CancelledError:
            self.cancelled.append(match_id)
            raise
        finally:
            self.running -= 1
            self.by_deal_set[seating.deal_set] -= 1
        return {"scores": [1, 0], "placing": [1, 2]}, {"meta": {"game_id": match_id}}


def seatings(n: int, lineup=("a", "b")) -> list[Seating]:
    return [Seating(k, 100 + k, lineup) for k in range(n)]


def run(executor: Executor, *args, **kwargs):
    async def go():
        async with executor:
            await executor.play_all(*args, **kwargs)
    asyncio.run(go())


def test_every_seating_is_played_once_in_order_at_most_concurrency_at_a_time():
    ex, got = Scripted(), []
    run(ex, seatings(10), 3, got.append)
    assert ex.started == [game_id_of(s) for s in seatings(10)]  # each match's opaque id at the referee
    assert sorted(p.seating.key for p in got) == sorted(s.key for s in seatings(10))
    assert ex.most_at_once == 3
    assert all(p.record["meta"]["game_id"] == game_id_of(p.seating) and p.seconds >= 0 for p in got)


def test_returning_true_stops_new_matches_and_cancels_those_playing():
    ex, got = Scripted(delay=lambda s: 0.01 if s.deal_set == 0 else 5), []
    run(ex, seatings(10), 3, lambda p: got.append(p) or True)
    assert [p.seating.deal_set for p in got] == [0]
    assert ex.started == [game_id_of(s) for s in seatings(3)]  # nothing starts once 0 has said stop
    assert sorted(ex.cancelled) == sorted(game_id_of(s) for s in seatings(3)[1:])


class Swallowing(Scripted):
    """Loses the first cancellation that reaches a playing match, as Python 3.11's
    ``asyncio.wait_for`` does when it meets the awaited result: the match ends normally."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.swallowed = False

    async def _run(self, seating: Seating, match_id: str, sessions=None):
        try:
            return await super()._run(seating, match_id, sessions)
        except asyncio.CancelledError:
            if self.swallowed:
                raise
            self.swallowed = True
            return {"scores": [1, 0], "placing": [1, 2]}, {"meta": {"game_id": match_id}}


def test_a_cancellation_lost_by_one_match_still_stops_its_worker():
    ex, got = Swallowing(delay=lambda s: 0.2), []

    async def go():
        async with ex:
            task = asyncio.ensure_future(ex.play_all(seatings(20), 2, got.append))
            await asyncio.sleep(0.1)  # both workers in their first match
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(go())
    assert ex.swallowed
    assert len(ex.started) == 2, "no match starts once the run is cancelled, even on the worker that lost it"


def test_a_generator_is_read_only_as_workers_free_up():
    ex, taken = Scripted(), []

    def source():
        for s in seatings(6):
            taken.append(s.key)
            yield s

    run(ex, source(), 2, lambda p: len(taken) >= 3)
    assert len(taken) <= 4 and len(ex.started) < 6


def test_dead_bots_are_skipped_with_on_dead_and_stop_everything_without():
    line = seatings(2) + seatings(2, ("a", "x"))
    ex, dead, got = Scripted(dead={"x"}), [], []
    run(ex, line, 2, got.append, lambda s, err: dead.append((s.lineup, err.reasons)))
    assert len(got) == 2 and dead == [(("a", "x"), {"x": "died 3 times"})] * 2
    with pytest.raises(BotsDead, match="bot x died 3 times"):
        run(Scripted(dead={"x"}), line, 2, got.append)


def test_an_error_in_a_callback_is_raised_as_itself_not_as_a_group():
    def fail(p: Played) -> None:
        raise ValueError("bad result")

    with pytest.raises(ValueError, match="bad result"):
        run(Scripted(), seatings(3), 2, fail)


def test_an_empty_match_id_lets_the_referee_name_the_match():
    async def go():
        async with Scripted() as ex:
            return await ex.play(Seating(0, 1, ("a", "b")), match_id="")
    assert asyncio.run(go()).record["meta"]["game_id"] == ""


def test_seat_capacity_is_the_most_seats_in_one_match_times_concurrency():
    s = [Seating(0, 1, ("a", "b", "a", "b")), Seating(0, 1, ("a", "b", "c", "c")), Seating(0, 1, ("c", "a", "b", "a"))]
    assert seat_capacity(s, 3) == {"a": 6, "b": 6, "c": 6}


def deal_sets(n: int) -> list[Seating]:
    """Each deal set played by two pairs, both ways round (four matches)."""
    return [Seating(k, 100 + k, lineup) for k in range(n)
            for lineup in (("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"))]


@pytest.mark.parametrize("isolation", ["tournament", "match"])
def test_with_isolation_match_no_two_matches_of_one_deal_set_play_at_once(isolation):
    ex, got = Scripted(isolation=isolation), []
    run(ex, deal_sets(3), 3, got.append)
    assert sorted(p.seating.key for p in got) == sorted(s.key for s in deal_sets(3))
    assert ex.most_at_once == 3  # still three at a time: other deal sets' matches fill in
    assert ex.most_of_one_deal_set == (1 if isolation == "match" else 3)


def test_a_single_deal_set_with_isolation_match_plays_one_match_at_a_time():
    ex, got = Scripted(isolation="match"), []
    run(ex, deal_sets(1), 4, got.append)
    assert len(got) == 4 and ex.most_at_once == 1


class Launching(Scripted):
    """As Scripted, with launched bots (whose processes play no part: each match only 'plays' in
    ``_run``) and external ones; counts how many matches of each bot play at once."""

    def __init__(self, launched, external=(), **kwargs):
        super().__init__(**kwargs)
        self.alive: collections.Counter[str] = collections.Counter()  # a bot's 'processes', started to retired
        self.most_alive: collections.Counter[str] = collections.Counter()
        self.up = self.most_up = 0  # matches whose processes are up (waiting for their turn, or playing)
        self.sandbox_mode = "none"
        self.bots = [BotSpec(n, ("true",)) for n in launched] + [BotSpec(n, external=True, token="t") for n in external]
        self.tokens = {b.name: "t" for b in self.bots}
        self.startup_check = False
        self.by_bot: collections.Counter[str] = collections.Counter()
        self.most_of_one_bot: collections.Counter[str] = collections.Counter()

    async def _restart(self, lineup):
        return []

    def _prepare(self, seating):
        pass  # its 'processes' are counted in _play_fresh; prepared ones: tests/test_prepared.py

    async def _play_fresh(self, seating, match_id):
        launched = {b.name for b in self.bots if not b.external} & set(seating.lineup)
        self.alive.update(launched)
        for bot in launched:
            self.most_alive[bot] = max(self.most_alive[bot], self.alive[bot])
        self.up += 1
        self.most_up = max(self.most_up, self.up)
        try:
            return await self._in_turn(seating, match_id, seating.lineup)
        finally:
            self.up -= 1
            self.alive.subtract(launched)

    async def _run(self, seating, match_id, sessions=None):
        for bot in set(seating.lineup):
            self.by_bot[bot] += 1
            self.most_of_one_bot[bot] = max(self.most_of_one_bot[bot], self.by_bot[bot])
        try:
            return await super()._run(seating, match_id, sessions)
        finally:
            self.by_bot.subtract(set(seating.lineup))


def round_robin(n: int, bots: str) -> list[Seating]:
    """Every pair of ``bots`` on each of ``n`` deal sets, both ways round."""
    pairs = [(a, b) for a in bots for b in bots if a != b]
    return [Seating(k, 100 + k, lineup) for k in range(n) for lineup in pairs]


@pytest.mark.parametrize("isolation", ["tournament", "match"])
def test_with_isolation_match_no_two_processes_of_a_launched_bot_play_at_once(isolation):
    ex, got = Launching("abcd", external=["x"], isolation=isolation), []
    schedule = round_robin(2, "abcd") + [Seating(9, 109, ("x", "a")), Seating(10, 110, ("b", "x"))]
    run(ex, schedule, 4, got.append)
    assert sorted(p.seating.key for p in got) == sorted(s.key for s in schedule)
    launched = {bot: ex.most_of_one_bot[bot] for bot in "abcd"}
    if isolation == "match":
        assert launched == dict.fromkeys("abcd", 1)
        assert ex.most_alive == dict.fromkeys("abcd", 1), "a match prepared ahead never shares a bot with one playing"
        assert ex.most_at_once == 2  # two matches of disjoint pairs still play together
    else:
        assert max(launched.values()) > 1
    assert ex.most_of_one_bot["x"] >= 1  # an external bot holds nothing: it is its owner's process


def test_with_isolation_match_the_next_matches_start_their_processes_while_these_play():
    ex, got = Launching("abcdefgh", isolation="match", delay=lambda s: 0.05), []
    pairs = ["ab", "cd", "ef", "gh", "ab", "cd", "ef", "gh"]
    schedule = [Seating(k // 2, 100 + k // 2, tuple(pair)) for k, pair in enumerate(pairs)]  # two a deal set
    run(ex, schedule, 2, got.append)
    assert sorted(p.seating.key for p in got) == sorted(s.key for s in schedule)
    assert ex.most_at_once == 2, "no more matches play at once than asked"
    assert ex.most_of_one_deal_set == 1, "a match prepared ahead waits while its deal set is being played"
    assert ex.most_up == 4, "two more matches have their processes up, waiting for their turn"
    assert all(p.seconds < 1 for p in got), "a match's time counts from its turn"
