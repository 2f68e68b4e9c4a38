"""Plays one match: asks each seat for its decisions, enforces the clock and
the fault policy, and keeps the record.

The runner knows the engine's interface and nothing of gRPC: it talks to the
players of the seats through :class:`SeatLink` objects (a bot session of the
server, a scripted fake in the tests, or :class:`AbsentSeat`). The policy:

- every decision has ``clock.decision_s`` seconds; an overrun is taken from the
  seat's bank (``clock.bank_s`` per match). An answer later than decision time
  plus bank is a **timeout**: the bank is empty and the seat plays on by
  default for the rest of the match. Its detail says what the bot's processes
  spent meanwhile, where they can be read (``cpu``), and the host's load; a
  timeout in which the bot (or the referee) was starved of CPU is the host's,
  marked ``host_overloaded`` (the rule: :mod:`referee.hostload`);
- an answer that does not parse (**malformed**), that the rules refuse
  (**illegal**), that names another request (**wrong_id**), or that says the
  bot's own code failed (**error**: ``ActionReply.error``, what a kit answers
  when the bot's decision raised) is replaced by the default, and the seat goes
  on being asked;
- a seat whose connection is lost (**disconnect**), or that no session of its
  bot came to play (**no_session**), plays by default to the end.

The default is always the first legal action in canonical order. Every fault
is recorded (seat, kind, decision number, time, detail); the other seats'
results are untouched.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from referee import hostload, records
from referee.games.base import PUBLIC, ActionSyntaxError, Event, GameSpec, GameState, IllegalActionError, Shoe
from referee.untrusted import QUOTE_CHARS, capped, quoted


class FaultKind(StrEnum):
    """What a seat did wrong. The values are the names in records, results, the
    store's columns (in this order) and JSON."""

    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    MALFORMED = "malformed"
    WRONG_ID = "wrong_id"
    DISCONNECT = "disconnect"
    NO_SESSION = "no_session"
    ERROR = "error"  # last: a kind added later goes at the end (the store's columns, the tables' cells)


#: the longest decision time or bank a clock takes, in milliseconds (the protocol's clock is 32 bits of
#: milliseconds: about 49 days)
MAX_CLOCK_MS = 2**32 - 1


@dataclass(frozen=True)
class Clock:
    """Time per decision and a bank per seat per match, in seconds."""

    decision_s: float = 1.0
    bank_s: float = 10.0

    def __post_init__(self) -> None:
        if not self.decision_s > 0 or self.bank_s < 0:
            raise ValueError(f"a clock needs decision time > 0 and bank >= 0, got {self}")


@dataclass(frozen=True)
class GameInfo:
    """What a seat is told when its game starts."""

    game_id: str
    game: str
    options: dict[str, Any]
    seat: int
    seat_names: tuple[str, ...]
    clock: Clock


@dataclass(frozen=True)
class Decision:
    """A request for one seat's action."""

    request_id: int
    game_id: str
    seat: int
    observation: dict[str, Any]
    legal: tuple[int, ...]
    legal_names: tuple[str, ...]
    decision_left_s: float
    bank_left_s: float


@dataclass(frozen=True)
class Reply:
    """A seat's answer: the action by name or by index in the legal list.

    ``wrong_id`` marks an answer tagged with another request's id (the link
    delivers it to the request it must have meant, as a fault); ``error``, an
    answer that names no action but says what failed in the bot's own code."""

    name: str | None = None
    index: int | None = None
    wrong_id: bool = False
    error: str | None = None


@dataclass(frozen=True)
class Substitution:
    """A substituted decision: the action the referee played, the fault and why."""

    request_id: int
    game_id: str
    seat: int
    action: str
    fault: FaultKind | None
    reason: str
    bank_left_s: float


@dataclass(frozen=True)
class Fault:
    seat: int
    kind: FaultKind
    decision: int       # the match's decision number (0-based), -1 when outside any decision
    at_s: float         # seconds since the match started
    detail: str
    host_overloaded: bool = False  # a timeout that is the host's: the bot was starved of CPU (referee.hostload)
    cpu: hostload.Spent | None = None  # a timeout's: what the bot's processes spent, where measured

    def to_dict(self) -> dict[str, Any]:
        marked = {"host_overloaded": True} if self.host_overloaded else {}
        spent = {"cpu": self.cpu.to_dict()} if self.cpu is not None else {}
        return {"seat": self.seat, "kind": self.kind, "decision": self.decision,
                "at_s": round(self.at_s, 3), "detail": self.detail, **marked, **spent}


class SeatGone(Exception):
    """The seat's connection is lost; it cannot be asked any more."""


class SeatLink(ABC):
    """How the runner talks to the player of one seat."""

    #: set by the runner: call with a detail string to charge a stray reply to this seat
    report_stray: Callable[[str], None] = staticmethod(lambda detail: None)

    @abstractmethod
    async def start(self, info: GameInfo) -> None:
        """The game starts; raises SeatGone if the player is already gone."""

    @abstractmethod
    def send_event(self, index: int, event: Event) -> None:
        """An event this seat may see (never blocks)."""

    @abstractmethod
    async def decide(self, decision: Decision) -> Reply:
        """Ask for an action; raises SeatGone when the connection is lost.

        The runner cancels the call when time runs out."""

    @abstractmethod
    def substituted(self, substitution: Substitution) -> None:
        """The referee played another action than the seat's answer, a fault (never blocks)."""

    @abstractmethod
    def end(self, results: dict[str, Any]) -> None:
        """The game is over (never blocks); the link may release the seat."""


class AbsentSeat(SeatLink):
    """A seat that no session came to play: it is never asked."""

    async def start(self, info: GameInfo) -> None:
        raise SeatGone("no session of the bot connected")

    def send_event(self, index: int, event: Event) -> None:
        pass

    async def decide(self, decision: Decision) -> Reply:  # pragma: no cover - never asked
        raise SeatGone("absent")

    def substituted(self, substitution: Substitution) -> None:
        pass

    def end(self, results: dict[str, Any]) -> None:
        pass


#: fault records kept per seat and match (all are counted; past this only counted)
MAX_FAULT_RECORDS = 50
#: the most characters of a fault's detail (ASCII: what a bot sent is quoted, escaped and cut,
#: :func:`referee.untrusted.quoted`); with MAX_FAULT_RECORDS, what bounds a record's faults
MAX_DETAIL = 300


@dataclass
class MatchOutcome:
    game_id: str
    state: GameState
    seat_names: tuple[str, ...]
    faults: list[Fault]
    record: dict[str, Any]
    counts: list[dict[str, int]]
    results: dict[str, Any] = field(default_factory=dict)

    def fault_counts(self) -> list[dict[str, int]]:
        return [dict(c) for c in self.counts]


class MatchRunner:
    """Runs one match over its seat links. Use :func:`run_match`."""

    def __init__(self, game_id: str, spec: GameSpec, options: dict[str, Any], shoe: Shoe,
                 links: Sequence[SeatLink], seat_names: Sequence[str], clock: Clock = Clock(),
                 on_public_event: Callable[[int, Event], None] | None = None,
                 meters: Sequence[hostload.BotCpu | None] | None = None):
        if len(links) != spec.num_seats or len(seat_names) != spec.num_seats:
            raise ValueError(f"{spec.name} needs {spec.num_seats} seats, got {len(links)}")
        self.game_id = game_id
        self.spec = spec
        self.state = spec.new_match(spec.check_options(options), shoe)
        self.links = list(links)
        self.seat_names = tuple(seat_names)
        self.clock = clock
        self.on_public_event = on_public_event
        self.banks = [clock.bank_s] * spec.num_seats
        self.out: list[FaultKind | None] = [None] * spec.num_seats   # why a seat plays by default
        self.faults: list[Fault] = []
        self.counts: list[dict[str, int]] = [dict.fromkeys(FaultKind, 0) for _ in range(spec.num_seats)]
        self.decisions = 0
        # per seat, the answered decisions' times: [count, total s, slowest s, past decision time]
        self.times = [[0, 0.0, 0.0, 0] for _ in range(spec.num_seats)]
        self._next_request = 1
        self._sent = 0
        self._t0 = time.monotonic()
        self.host = hostload.monitor()  # asked only when a decision runs out of time
        #: per seat, its bot's processes where they can be read (a bot launched here), else None
        self.meters = list(meters) if meters is not None else [None] * spec.num_seats
        #: per seat, a timeout found the host's, until the bot's late answer or the match's end says
        #: what it ran on that decision in all: (its fault's index, the first reading, the host's load)
        self._unsettled: dict[int, tuple[int, hostload.Reading, str]] = {}

    # --- faults -------------------------------------------------------------

    def _fault(self, seat: int, kind: FaultKind, detail: str, decision: int | None = None,
               cpu: hostload.Spent | None = None) -> str:
        """Charge a fault to the seat; returns its detail as kept (escaped, at most MAX_DETAIL characters).
        ``cpu``: a timeout's measure of the bot, which says whether it is the host's."""
        number = self.decisions if decision is None else decision
        detail = capped(detail, MAX_DETAIL)
        self.counts[seat][kind] += 1
        if sum(self.counts[seat].values()) <= MAX_FAULT_RECORDS:  # a flood is counted, not kept
            hosts = cpu is not None and cpu.hosts
            self.faults.append(Fault(seat, kind, number, time.monotonic() - self._t0, detail, hosts, cpu))
        return detail

    def _stray_reporter(self, seat: int) -> Callable[[str], None]:
        def report(detail: str) -> None:
            if self.out[seat] is None:  # a seat already out (e.g. timed out) is not charged again
                self._fault(seat, FaultKind.WRONG_ID, detail, decision=-1)
            elif seat in self._unsettled:  # its late answer: what it ran on that decision in all
                self._settle(seat)
        return report

    def _timed_out(self, seat: int, budget: float, first: hostload.Reading | None, load: hostload.Load) -> str:
        """Charge a timeout: its detail says what the bot spent over the decision's measured part
        and whose time it was, or why that is not measured, and the host's load meanwhile."""
        meter, spent = self.meters[seat], None
        if meter is None:
            unmeasured = "a bot not launched here"
        elif first is None:  # the runner's own loop ran that late
            unmeasured = "the referee's first reading came too late"
        else:
            spent = meter.spent(first, budget)
            unmeasured = "none of its processes found"
        detail = _timeout_detail(budget, unmeasured if spent is None else spent, load.describe())
        self._fault(seat, FaultKind.TIMEOUT, detail, cpu=spent)
        if spent is not None and first is not None and spent.hosts and self.faults and self.faults[-1].cpu is spent:
            self._unsettled[seat] = (len(self.faults) - 1, first, load.describe())
        return detail

    def _settle(self, seat: int) -> None:
        """A timeout found the host's, judged again by the CPU its bot ran on the decision in all,
        now (its late answer, or the match's end): more than its clock, it is the bot's own."""
        index, first, load = self._unsettled.pop(seat)
        fault, meter = self.faults[index], self.meters[seat]
        assert meter is not None and fault.cpu is not None  # kept only for a measured timeout (_timeout)
        total = meter.read().since(first, fault.cpu.clock)
        if total is None:
            return
        spent = dataclasses.replace(fault.cpu, total=total.ran)
        detail = capped(_timeout_detail(spent.clock, spent, load), MAX_DETAIL)
        self.faults[index] = dataclasses.replace(fault, detail=detail, host_overloaded=spent.hosts, cpu=spent)

    # --- events ---------------------------------------------------------------

    def _flush_events(self) -> None:
        events = self.state.events
        for index in range(self._sent, len(events)):
            event = events[index]
            if event.to == PUBLIC:
                for seat, link in enumerate(self.links):
                    if self.out[seat] is None:
                        link.send_event(index, event)
                if self.on_public_event is not None:
                    self.on_public_event(index, event)
            elif self.out[event.to] is None:
                self.links[event.to].send_event(index, event)
        self._sent = len(events)

    # --- one decision ---------------------------------------------------------

    async def _ask(self, seat: int) -> tuple[int, int, FaultKind | None, str]:
        """(request id or 0, action, fault kind or None, reason) for one seat's decision."""
        state = self.state
        legal = state.legal_actions(seat)
        default = legal[0]
        if self.out[seat] is not None:
            return 0, default, None, f"the seat plays by default ({self.out[seat]})"
        request_id = self._next_request
        self._next_request += 1
        decision = Decision(request_id, self.game_id, seat, state.observation(seat), tuple(legal),
                            tuple(state.action_names(legal)), self.clock.decision_s, self.banks[seat])
        budget = self.clock.decision_s + self.banks[seat]
        started = time.monotonic()
        meter, first = self.meters[seat], []
        # the bot's first reading, only in a decision that runs long (none costs a fast one anything)
        probe = asyncio.get_running_loop().call_later(
            self.clock.decision_s * hostload.PROBE_AT, lambda: first.append(meter.read())) if meter else None
        try:
            # a deadline on this task, not wait_for (which wraps the call in a task of its own)
            async with asyncio.timeout(budget):
                reply = await self.links[seat].decide(decision)
        except TimeoutError:
            self.banks[seat] = 0.0
            self.out[seat] = FaultKind.TIMEOUT
            detail = self._timed_out(seat, budget, first[0] if first else None, self.host.since(started))
            return request_id, default, FaultKind.TIMEOUT, detail
        except SeatGone as gone:
            self.out[seat] = FaultKind.DISCONNECT
            detail = f"connection lost: {gone}"
            self._fault(seat, FaultKind.DISCONNECT, detail)
            return request_id, default, FaultKind.DISCONNECT, detail
        finally:
            if probe is not None:
                probe.cancel()
        elapsed = time.monotonic() - started
        times = self.times[seat]
        times[0] += 1
        times[1] += elapsed
        times[2] = max(times[2], elapsed)
        overrun = elapsed - self.clock.decision_s
        if overrun > 0:
            times[3] += 1
            self.banks[seat] = max(0.0, self.banks[seat] - overrun)
        if reply.wrong_id:
            detail = "the answer names another request id"
            self._fault(seat, FaultKind.WRONG_ID, detail)
            return request_id, default, FaultKind.WRONG_ID, detail
        if reply.error is not None:
            detail = self._fault(seat, FaultKind.ERROR, f"the bot's own code failed: {quoted(reply.error)}")
            return request_id, default, FaultKind.ERROR, detail
        return (request_id, *self._check(seat, legal, reply))

    def _check(self, seat: int, legal: list[int], reply: Reply) -> tuple[int, FaultKind | None, str]:
        if reply.index is not None:
            if 0 <= reply.index < len(legal):
                return legal[reply.index], None, ""
            detail = f"index {reply.index} is outside the {len(legal)} legal actions"
            self._fault(seat, FaultKind.MALFORMED, detail)
            return legal[0], FaultKind.MALFORMED, detail
        text = reply.name or ""
        try:
            action = self.state.parse_action(text)
        except ActionSyntaxError as err:
            # the engine's reason quotes the whole text: past QUOTE_CHARS, the runner quotes its head
            detail = str(err) if len(text) <= QUOTE_CHARS else f"not an action: {quoted(text)}"
            return legal[0], FaultKind.MALFORMED, self._fault(seat, FaultKind.MALFORMED, detail)
        if action in legal:
            return action, None, ""
        try:  # the engine names the rule broken; a refused action changes nothing
            self.state.apply(seat, action)
        except IllegalActionError as err:
            detail = f"{quoted(text, 60)}: {err}"  # it parsed, so it is short, unless padded: the rule is kept
        else:  # pragma: no cover - legal_actions and apply disagree: an engine bug
            raise AssertionError(f"{self.spec.name}: {reply.name!r} was applied but not listed as legal")
        return legal[0], FaultKind.ILLEGAL, self._fault(seat, FaultKind.ILLEGAL, detail)

    def _play(self, seat: int, action: int, fault: FaultKind | None, reason: str, request_id: int) -> None:
        self.state.apply(seat, action)
        self.decisions += 1
        if fault is not None:
            self.links[seat].substituted(Substitution(request_id, self.game_id, seat, self.state.action_name(action),
                                                      fault, reason, self.banks[seat]))

    # --- the match ------------------------------------------------------------

    async def run(self) -> MatchOutcome:
        info = [GameInfo(self.game_id, self.spec.name, self.state.options, seat, self.seat_names, self.clock)
                for seat in range(self.spec.num_seats)]
        for seat, link in enumerate(self.links):
            link.report_stray = self._stray_reporter(seat)
            try:
                await link.start(info[seat])
            except SeatGone as gone:
                kind = FaultKind.NO_SESSION if isinstance(link, AbsentSeat) else FaultKind.DISCONNECT
                self.out[seat] = kind
                self._fault(seat, kind, str(gone))
        self._flush_events()
        state = self.state
        while seats := state.to_act():
            if len(seats) == 1:
                answers = [await self._ask(seats[0])]
            else:  # a simultaneous decision: ask all at once, apply in seat order
                answers = await asyncio.gather(*(self._ask(seat) for seat in seats))
            for seat, (request_id, action, fault, reason) in zip(seats, answers):
                self._play(seat, action, fault, reason, request_id)
            self._flush_events()
        for seat in list(self._unsettled):  # the bots that have not answered late: what they ran until now
            self._settle(seat)
        results = state.results()
        outcome = MatchOutcome(self.game_id, state, self.seat_names, self.faults,
                               records.to_record(state, seats=list(self.seat_names)), self.counts)
        outcome.results = {**results, "faults": outcome.fault_counts()}
        outcome.record["meta"] = {"game_id": self.game_id, "faults": [f.to_dict() for f in self.faults],
                                  # every fault counted, by seat and kind; the first of each seat kept above
                                  "fault_counts": outcome.fault_counts(), "faults_kept_per_seat": MAX_FAULT_RECORDS,
                                  "decision_times": [
                                      {"answered": n, "total_s": round(total, 6), "slowest_s": round(slowest, 6),
                                       "over_decision_time": over} for n, total, slowest, over in self.times],
                                  "clock": {"decision_s": self.clock.decision_s, "bank_s": self.clock.bank_s}}
        for link in self.links:
            link.end(outcome.results)
        return outcome


def _timeout_detail(budget: float, spent: hostload.Spent | str, load: str) -> str:
    """What a timeout's fault says: the bot's measure and whose time it was, or why it is not
    measured (``spent``, a string); and the host's load meanwhile (``load``), as a fact."""
    if isinstance(spent, str):
        measure = f"its CPU not measured ({spent}): whose is not said"
    else:
        measure = spent.describe()
    return f"no answer within {budget:.3f} s (decision time + bank); {measure}; host: {load}"


async def run_match(game_id: str, spec: GameSpec, options: dict[str, Any], shoe: Shoe,
                    links: Sequence[SeatLink], seat_names: Sequence[str], clock: Clock = Clock(),
                    on_public_event: Callable[[int, Event], None] | None = None,
                    meters: Sequence[hostload.BotCpu | None] | None = None) -> MatchOutcome:
    """Play one match to the end. Never raises for anything a seat does. ``meters``: per seat, its
    bot's processes where they can be read (:class:`~referee.hostload.BotCpu`), else None."""
    runner = MatchRunner(game_id, spec, options, shoe, links, seat_names, clock, on_public_event, meters)
    return await runner.run()
