"""Where matches are hosted: bot sessions, seat assignment, running matches,
spectators. No game logic (that is the engine's) and no gRPC (the servicer in
``server.py`` turns streams into calls of this module). A session's messages
are the protocol's, built by ``wire.py``; refusals and what spectators see are
plain values that the servicer translates.

A :class:`Session` is one connected bot stream: the messages for it wait in
its outbox, and its replies resolve the decision the runner awaits. A match
is started with a lineup of bot names; each seat goes to a session of that
bot with free capacity (waiting up to ``connect_timeout``), or plays by
default when none comes. Where the runner says how many seats a bot plays at
once (``seats``), its sessions may offer no more; and a session may send only
UNASKED_ALLOWANCE messages that answer no request (docs/protocol.md §2).

Spectators see a match's public events live and its results at its end. Its
record (seed, decks, every hand) may be *held*: a match on the same deals as
another (duplicate play) would give that other's hidden cards away, so a held
record reaches spectators only once :meth:`Arena.release` names the match.
Who may spectate at all is :meth:`Arena.check_spectator`'s decision.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from referee import games
from referee.games.base import Event, Shoe
from referee.hostload import BotCpu
from referee.play import wire
from referee.runner import (
    AbsentSeat,
    Clock,
    Decision,
    GameInfo,
    MatchOutcome,
    Reply,
    SeatGone,
    SeatLink,
    Substitution,
    run_match,
)
from referee.untrusted import escaped, quoted
from referee.v1 import referee_pb2 as pb

log = logging.getLogger("referee")

#: the longest bot name a Hello may give (the tournament's names are at most 40 characters)
MAX_NAME = 64
#: messages a session may send that answer no request before the referee closes it (docs/protocol.md §2).
#: A bot that keeps to the protocol sends none: it answers each request once, and a request it answers
#: late, after its timeout, stays open until that answer comes. The allowance is for a bug's odd extra
#: message (a duplicate answer, a banner a stdio bot prints); past it a flood costs the flooder its session.
UNASKED_ALLOWANCE = 16
#: a bot's sessions closed by the referee whose reason is logged (warned) one by one; then every HUSHED-th
HUSHED = 100
#: seconds the seats a session closed by the referee offered stay taken: its bot's next session waits
#: that long for them (a flooder closed again and again comes back at most once a second per seat)
EXPELLED_HOLD_S = 1.0


def shown(name: str) -> str:
    """A name (or an id) from a bot, as the log shows it: quoted and escaped, at most MAX_NAME
    characters of it (:func:`referee.untrusted.quoted`)."""
    return quoted(name, MAX_NAME)


def new_id(prefix: str) -> str:
    """A new session or game id: random, never a count. A count over the run would be a memory
    that outlives a bot's process: one process opens sessions, a later one reads how many
    (docs/security.md)."""
    return f"{prefix}{secrets.token_hex(6)}"


def instance_of(name: str) -> str:
    """The bot a session name stands for: ``NAME#TAG`` is an instance of bot NAME (a process
    started for one match, or one run's bots on a shared server), with NAME's token."""
    return name.split("#", 1)[0]


class RefusalReason(Enum):
    """Why a hello is not accepted (the protocol's Refusal.Reason)."""

    UNSUPPORTED_VERSION = "unsupported_version"
    BAD_HELLO = "bad_hello"
    BAD_TOKEN = "bad_token"
    TOO_MANY_SESSIONS = "too_many_sessions"


class Refused(Exception):
    """A hello the referee does not accept."""

    def __init__(self, reason: RefusalReason, message: str):
        super().__init__(message)
        self.reason = reason


class SpectatorRefused(Exception):
    """A Spectate or ListGames the server does not answer: ``missing`` when no token was
    given (the caller is not authenticated), else the token is wrong."""

    def __init__(self, message: str, missing: bool):
        super().__init__(message)
        self.missing = missing


class Session:
    """One bot connection: an outbox of messages and the seats it plays."""

    def __init__(self, session_id: str, bot_name: str, capacity: int, batching: bool = False,
                 data_form: int = pb.DATA_JSON):
        self.session_id = session_id
        self.bot_name = bot_name
        self.capacity = capacity
        self.batching = batching
        #: the forms of the game data it gets (Hello.data_form)
        self.data_form = data_form
        self.outbox: asyncio.Queue[pb.RefereeMessage | None] = asyncio.Queue()
        self.seats: dict[tuple[str, int], SessionSeat] = {}
        self.reserved = 0
        self.closed = False
        #: messages that answered no request: no answer in them (a second Hello, an empty message), or an
        #: answer with none open; past UNASKED_ALLOWANCE the session is closed
        self.unasked = 0
        #: replies that named a game this session does not play (logged, the first ones one by one)
        self.stray_replies = 0
        #: requests sent and not answered yet (a late answer still answers one): what a batch may answer
        self.open_requests = 0
        self.oversized_batches = 0
        #: why the referee closed the session, if it did (None: the bot left, or it is open)
        self.expelled: str | None = None

    @property
    def free(self) -> int:
        return 0 if self.closed else self.capacity - len(self.seats) - self.reserved

    def send(self, message: pb.RefereeMessage) -> None:
        if not self.closed:
            self.outbox.put_nowait(message)

    async def next_message(self) -> pb.RefereeMessage | None:
        """The next message to write (None: the session is over); for a bot that
        accepts batches, everything queued by then, in one message."""
        message = await self.outbox.get()
        if message is None or not self.batching or self.outbox.empty():
            return message
        messages = [message]
        while not self.outbox.empty():
            queued = self.outbox.get_nowait()
            if queued is None:  # the end: written after this batch
                self.outbox.put_nowait(None)
                break
            messages.append(queued)
        return wire.batch(messages)

    def on_replies(self, replies: Sequence[pb.ActionReply], batched: bool) -> bool:
        """Handle one message of the bot's, the replies it holds (none: a message that is no answer);
        False if the session must be closed (see :attr:`expelled`).

        The work one message costs is bounded by what the session was asked: each reply answers one
        of its open requests. A message that answers none (it holds no reply, or a reply comes with no
        request open) is *unasked*: the first UNASKED_ALLOWANCE are handled as ever (a reply for a
        seat of its games is charged as ``wrong_id``), the next closes the session before any work
        on it (its seats are then ``disconnect`` faults). A batch may hold at most as many replies as
        the session has open requests: a larger one is not read; the first is a ``wrong_id`` fault
        charged to every seat the session plays, and logged; the second closes the session."""
        if not replies:
            return self._unasked("a message that holds no answer")
        if batched and len(replies) > self.open_requests:
            self.oversized_batches += 1
            why = f"a batch of {len(replies)} replies with {self.open_requests} request(s) open"
            if self.oversized_batches > 1:
                self.expelled = f"closed by the referee: a second oversized batch ({why})"
                return False
            detail = f"{why}: ignored (a batch may answer only open requests; a second one closes the session)"
            log.warning("session %s (%s): %s", self.session_id, shown(self.bot_name), detail)
            for link in list(self.seats.values()):
                link.report_stray(detail)
            return True
        for answer in replies:
            if self.open_requests:
                self.open_requests -= 1
            elif not self._unasked("an answer with no request open"):
                return False
            self.on_reply(answer)
        return True

    def _unasked(self, what: str) -> bool:
        """Count a message that answers no request; False (the session must be closed) past the allowance."""
        self.unasked += 1
        if self.unasked <= UNASKED_ALLOWANCE:
            return True
        self.expelled = (f"closed by the referee: {self.unasked} messages that answer no request (the last: {what}; "
                         f"a session may send {UNASKED_ALLOWANCE})")
        return False

    def on_reply(self, message: pb.ActionReply) -> None:
        """Route a bot's ActionReply to the seat and decision it names."""
        request_id, game_id, seat, reply = wire.reply(message)
        link = self.seats.get((game_id, seat))
        if link is not None:
            link.deliver(request_id, reply)
            return
        # mis-tagged: a request id of ours under another game or seat is answered, as a fault
        meant = [other for other in self.seats.values() if other.pending_id == request_id]
        if len(meant) == 1:
            meant[0].deliver(request_id, Reply(wrong_id=True))
            return
        ours = [other for (gid, _), other in self.seats.items() if gid == game_id]
        if ours:  # a seat of one of our games that is not ours: charged, never applied
            ours[0].report_stray(f"reply for seat {seat}, which this session does not play")
            return
        self.stray_replies += 1
        if self.stray_replies <= 10 or self.stray_replies % 1000 == 0:
            log.info("session %s (%s): %d reply(ies) for games it does not play (last: %s seat %d)",
                     self.session_id, shown(self.bot_name), self.stray_replies, shown(game_id), seat)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for link in list(self.seats.values()):
            link.lost(self.expelled or "the bot's session ended")
        self.outbox.put_nowait(None)


class SessionSeat(SeatLink):
    """A seat played by a bot session: engine values go out through wire.py."""

    def __init__(self, session: Session, on_release: Any, events: wire.EventCache | None = None):
        self.session = session
        self._on_release = on_release
        self._event_cache = events or wire.EventCache()  # shared by the seats of a match
        self.info: GameInfo | None = None
        self._events: list[wire.WireEvent] = []  # seen by the seat, not yet sent
        self._pending: tuple[int, asyncio.Future[Reply]] | None = None
        self._gone: str | None = None

    async def start(self, info: GameInfo) -> None:
        self.info = info
        session = self.session
        session.reserved -= 1
        session.seats[(info.game_id, info.seat)] = self
        if session.closed:
            self.lost("the bot's session ended")
            raise SeatGone(self._gone)
        session.send(wire.game_start(info))

    def send_event(self, index: int, event: Event) -> None:
        # kept for the seat's next request or its game end: one message, not one per event
        self._events.append(self._event_cache(index, event))

    def _take_events(self) -> list[wire.WireEvent]:
        events, self._events = self._events, []
        return events

    async def decide(self, decision: Decision) -> Reply:
        if self._gone:
            raise SeatGone(self._gone)
        info = self.info
        assert info is not None  # the runner starts a seat before it asks for a decision
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._pending = (decision.request_id, future)
        self.session.open_requests += 1
        self.session.send(wire.request(decision, self._take_events(), self.session.data_form, info.game))
        try:
            return await future
        finally:
            self._pending = None

    @property
    def pending_id(self) -> int | None:
        return self._pending[0] if self._pending is not None else None

    def deliver(self, request_id: int, reply: Reply) -> None:
        if self._pending is None:
            self.report_stray(f"reply to request {request_id}, but no request is open")
            return
        expected, future = self._pending
        if not future.done():
            future.set_result(reply if request_id == expected else Reply(wrong_id=True))

    def lost(self, why: str) -> None:
        self._gone = why
        if self._pending is not None and not self._pending[1].done():
            self._pending[1].set_exception(SeatGone(why))

    def substituted(self, substitution: Substitution) -> None:
        self.session.send(wire.substituted(substitution))

    def end(self, results: dict[str, Any]) -> None:
        info = self.info
        assert info is not None  # the runner starts a seat before it ends its game
        self.session.send(wire.game_end(info.game_id, info.seat, results, self._take_events(),
                                        self.session.data_form, info.game))
        self.session.seats.pop((info.game_id, info.seat), None)
        self._on_release()


@dataclass(frozen=True)
class Ended:
    """A match's end, as spectators see it: its results (which hold only what was public)."""

    results: dict[str, Any]


@dataclass(frozen=True)
class RecordHeld:
    """Told a spectator after a match's end when its record is held back (it follows once released)."""


@dataclass(frozen=True)
class Released:
    """A match's full record, given to a spectator once it is released."""

    record: dict[str, Any]


#: what a spectator is told: the start, each public event as (index, event), the end, then
#: RecordHeld and/or the Released record (never the outcome itself: it holds the record)
Spectated = GameInfo | tuple[int, Event] | Ended | RecordHeld | Released
#: what a match tells its watchers' queues: ("event", index, event), ("end",) or ("changed",)
Told = tuple[str, int, Event] | tuple[str]


@dataclass
class HostedMatch:
    """A match the arena runs or ran, as spectators see it. ``held``: its record is not
    for spectators yet; ``dropped``: the arena no longer keeps it."""

    info: GameInfo
    held: bool = False
    public: list[tuple[int, Event]] = field(default_factory=list)
    watchers: list[asyncio.Queue[Told]] = field(default_factory=list)
    outcome: MatchOutcome | None = None
    dropped: bool = False

    def publish(self, index: int, event: Event) -> None:
        self.public.append((index, event))
        self._tell(("event", index, event))

    def finish(self, outcome: MatchOutcome) -> None:
        self.outcome = outcome
        self._tell(("end",))

    def release(self) -> None:
        self.held = False
        self._tell(("changed",))

    def drop(self) -> None:
        self.dropped = True
        self._tell(("changed",))

    def _tell(self, item: Told) -> None:
        for queue in self.watchers:
            queue.put_nowait(item)


class Arena:
    """Sessions, seat assignment and the matches in progress.

    ``tokens`` maps bot name -> secret; None accepts any bot (for a private
    machine). ``admin_token`` guards RunMatch for remote runners. With tokens,
    spectating and listing need ``spectator_token`` (or the admin token) unless
    ``public_spectators`` says anyone may (see :meth:`check_spectator`).
    """

    def __init__(self, tokens: Mapping[str, str] | None = None, admin_token: str | None = None,
                 connect_timeout: float = 10.0, keep_finished: int = 200, server_name: str = "referee",
                 max_sessions_per_bot: int = 32, spectator_token: str | None = None,
                 public_spectators: bool = False, seats: Mapping[str, int] | None = None):
        self.tokens = dict(tokens) if tokens is not None else None
        #: the seats a bot (or a process started for one match) plays at once, where the runner knows it:
        #: its sessions may offer that many seats in all, and a session more is refused (:meth:`open_session`)
        self.seats = dict(seats or {})
        self._expelled: dict[str, int] = {}  # sessions closed by the referee, per bot (for the log)
        #: per room (:meth:`_room_of`), the seats of sessions closed by the referee still held: (until, seats)
        self._held: dict[str, list[tuple[float, int]]] = {}
        self._room_changed: dict[str, asyncio.Event] = {}  # set (and replaced) when a room may have a place
        self.admin_token = admin_token
        self.spectator_token = spectator_token
        self.public_spectators = public_spectators
        self.connect_timeout = connect_timeout
        self.keep_finished = keep_finished
        self.server_name = server_name
        self.max_sessions_per_bot = max_sessions_per_bot
        self.sessions: dict[str, list[Session]] = {}
        self.matches: OrderedDict[str, HostedMatch] = OrderedDict()
        self._changed = asyncio.Event()  # set (and replaced) when a session opens, closes or frees a seat

    # --- sessions -------------------------------------------------------------

    def open_session(self, hello: pb.Hello) -> Session:
        """Check a Hello; raises Refused."""
        if hello.protocol_version != wire.PROTOCOL_VERSION:
            raise Refused(RefusalReason.UNSUPPORTED_VERSION,
                          f"protocol version {hello.protocol_version} is not supported "
                          f"(this referee speaks {wire.PROTOCOL_VERSION})")
        if not hello.bot_name:
            raise Refused(RefusalReason.BAD_HELLO, "the Hello has no bot_name")
        if len(hello.bot_name) > MAX_NAME:
            raise Refused(RefusalReason.BAD_HELLO, f"the bot_name is {len(hello.bot_name)} characters long "
                                                   f"(at most {MAX_NAME})")
        if escaped(hello.bot_name, one_line=True) != hello.bot_name:
            raise Refused(RefusalReason.BAD_HELLO, f"the bot_name {shown(hello.bot_name)} holds control characters")
        bot = instance_of(hello.bot_name)
        if self.tokens is not None:  # NAME#TAG: an instance of bot NAME (one run's), with NAME's token
            expected = self.tokens.get(hello.bot_name, self.tokens.get(bot))
            # as bytes: a token of any characters is compared (and refused), never an error
            if expected is None or not secrets.compare_digest(expected.encode(), hello.token.encode()):
                raise Refused(RefusalReason.BAD_TOKEN, f"unknown bot {hello.bot_name!r} or wrong token")
        if hello.data_form not in wire.DATA_FORMS:
            raise Refused(RefusalReason.BAD_HELLO, f"the Hello asks for data_form {hello.data_form}, which is "
                                                   f"none of DATA_JSON (0), DATA_TYPED (1), DATA_BOTH (2)")
        self._check_room(hello.bot_name)
        capacity = min(max(1, hello.capacity), 256)
        session = Session(new_id("s"), hello.bot_name, capacity, hello.batching, hello.data_form)
        self.sessions.setdefault(hello.bot_name, []).append(session)
        log.info("session %s: bot %r connected (capacity %d)", session.session_id, session.bot_name,
                 session.capacity)
        self._notify()
        return session

    def _room_of(self, name: str) -> str:
        """Whose room a session named ``name`` takes: its own where its seats are known (a process started
        for one match, ``NAME#ID``), else its bot's (``NAME``, and every ``NAME#TAG`` of it)."""
        return name if name in self.seats else instance_of(name)

    def _check_room(self, name: str) -> None:
        """Raise Refused (TOO_MANY_SESSIONS) unless a session may open under ``name``. Where the seats of
        its room are known, its open sessions may offer that many seats in all (their Hello capacities),
        and no more: a session beyond that could only idle or flood. Elsewhere (a bot the runner does not
        know) a bot has at most max_sessions_per_bot. A session the referee closed keeps its place for
        EXPELLED_HOLD_S more."""
        room = self._room_of(name)
        mine = [s for n, open_ in self.sessions.items() if n == room or instance_of(n) == room for s in open_]
        held = self._still_held(room)
        if room in self.seats:
            offered, seats = sum(s.capacity for s in mine) + sum(n for _, n in held), self.seats[room]
            if offered >= seats:
                lately = f", {len(held)} closed by the referee less than {EXPELLED_HOLD_S:g} s ago" if held else ""
                raise Refused(RefusalReason.TOO_MANY_SESSIONS,
                              f"bot {shown(room)} plays at most {seats} seat(s) at once, and its sessions offer "
                              f"{offered} already ({len(mine)} open{lately})")
        elif len(mine) + len(held) >= self.max_sessions_per_bot:
            raise Refused(RefusalReason.TOO_MANY_SESSIONS,
                          f"bot {shown(room)} already has {self.max_sessions_per_bot} sessions")

    async def open_session_when_room(self, hello: pb.Hello, patience: float) -> Session:
        """:meth:`open_session`; but a Hello refused only for want of room (TOO_MANY_SESSIONS) waits up to
        ``patience`` seconds for a session of its room to close, then is refused. A bot that comes back
        while its last session is still closing is taken; a bot that asks for sessions it cannot have
        waits, and costs the referee nothing meanwhile (not a refusal, and a new stream, each time)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + patience
        while True:
            try:
                return self.open_session(hello)
            except Refused as refused:
                if refused.reason is not RefusalReason.TOO_MANY_SESSIONS:
                    raise
                if loop.time() >= deadline:
                    raise Refused(refused.reason, f"{refused} (waited {patience:g} s for one to close)") from None
            room = self._room_of(hello.bot_name)
            changed = self._room_changed.setdefault(room, asyncio.Event())
            try:
                async with asyncio.timeout_at(deadline):
                    await changed.wait()
            except TimeoutError:
                pass

    def _room_freed(self, room: str) -> None:
        """Wake the Hellos waiting for a place in ``room``."""
        changed = self._room_changed.pop(room, None)
        if changed is not None:
            changed.set()

    def admit(self, bot: str, token: str, seats: int | None = None) -> None:
        """Accept sessions of ``bot`` with ``token`` from now on (a bot started for one match), for
        ``seats`` seats at once in all when given."""
        if self.tokens is not None:
            self.tokens[bot] = token
        if seats is not None:
            self.seats[bot] = seats

    def dismiss(self, bot: str) -> None:
        """Accept no new session of ``bot`` (its match is over)."""
        if self.tokens is not None:
            self.tokens.pop(bot, None)
        self.seats.pop(bot, None)

    def close_session(self, session: Session) -> None:
        room = self._room_of(session.bot_name)
        if session.expelled and not session.closed:
            self._say_expelled(session)
            self._hold(room, session.capacity)
        session.close()
        peers = self.sessions.get(session.bot_name, [])
        if session in peers:
            peers.remove(session)
            log.info("session %s: bot %r disconnected", session.session_id, session.bot_name)
            self._room_freed(room)
        self._notify()

    def _still_held(self, room: str) -> list[tuple[float, int]]:
        """The places of ``room``'s sessions the referee closed that are still held, (until, seats) each."""
        if room not in self._held:
            return []
        now = asyncio.get_running_loop().time()
        held = [(until, seats) for until, seats in self._held.pop(room) if until > now]
        if held:
            self._held[room] = held
        return held

    def _hold(self, room: str, seats: int) -> None:
        """Keep the place of a session the referee closed taken for EXPELLED_HOLD_S."""
        loop = asyncio.get_running_loop()
        self._held.setdefault(room, []).append((loop.time() + EXPELLED_HOLD_S, seats))
        loop.call_later(EXPELLED_HOLD_S, self._room_freed, room)

    def _say_expelled(self, session: Session) -> None:
        """Warn that the referee closed the session, and why: a bot's first few, then one in HUSHED
        (a flooder coming back again and again must not flood the organiser's terminal instead)."""
        bot = instance_of(session.bot_name)
        count = self._expelled[bot] = self._expelled.get(bot, 0) + 1
        if count <= 3 or count % HUSHED == 0:
            more = f" ({count} sessions of this bot closed so; one in {HUSHED} is logged from now on)" \
                if count >= 3 else ""
            log.warning("session %s (%s): %s%s", session.session_id, shown(session.bot_name), session.expelled, more)

    def wake(self) -> None:
        """Wake the waiting claims to look again (e.g. a launched bot's process ended)."""
        self._notify()

    def _notify(self) -> None:
        """Wake the claims waiting for a session."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _reserve(self, bot: str) -> Session | None:
        candidates = [s for s in self.sessions.get(bot, []) if s.free > 0]
        if not candidates:
            return None
        session = max(candidates, key=lambda s: s.free)  # spread seats over sessions
        session.reserved += 1
        return session

    async def claim(self, bot: str, deadline: float, gone: Callable[[str], bool] | None = None) -> Session | None:
        """A session of ``bot`` with a free seat, reserved; None if none by the
        deadline, or as soon as ``gone(bot)`` says it will not come.

        It waits for a session to open or free a seat, for :meth:`wake`, or
        for the deadline; ``gone`` is asked each time it wakes (whoever
        answers it calls :meth:`wake` when the answer may have changed)."""
        loop = asyncio.get_running_loop()
        while (session := self._reserve(bot)) is None:
            if loop.time() >= deadline or (gone is not None and gone(bot)):
                return None
            changed = self._changed
            try:
                async with asyncio.timeout_at(deadline):
                    await changed.wait()
            except TimeoutError:
                pass
        return session

    def connected(self, bot: str) -> int:
        return sum(1 for s in self.sessions.get(bot, []) if not s.closed)

    # --- matches --------------------------------------------------------------

    async def run_match(self, game: str, options: Mapping[str, Any] | None, lineup: Sequence[str],
                        seed: int | None = None, decks: Sequence[Sequence[int]] | None = None,
                        suits: Sequence[int] | None = None, clock: Clock = Clock(),
                        game_id: str | None = None, gone: Callable[[str], bool] | None = None,
                        sessions: Sequence[str] | None = None, hold: bool = False,
                        meter: Callable[[str], BotCpu | None] | None = None) -> MatchOutcome:
        """Play one match between connected bots; raises OptionError for a bad game or option.

        ``hold``: spectators get the match's record only once :meth:`release` names it (they
        get its public events and results as always).

        ``sessions`` names, seat by seat, the sessions to seat (by default the
        line-up's names): a bot started for this match alone connects under a
        name of its own, while the record names the bot. ``gone(name)`` may
        tell that a session will not come (its process died), to stop waiting
        for it before ``connect_timeout``. ``meter(name)``: the processes of the
        bot that connects as ``name``, where this process launched it (a timeout
        then says whose time it was, :mod:`referee.hostload`)."""
        spec = games.get(game)
        checked = spec.check_options(options)
        if len(lineup) != spec.num_seats:
            raise games.OptionError(f"{game} needs {spec.num_seats} bots in the lineup, got {len(lineup)}")
        game_id = game_id or new_id("g")
        if game_id in self.matches:
            raise games.OptionError(f"game id {game_id!r} is already in use")
        if sessions is not None and len(sessions) != len(lineup):
            raise games.OptionError(f"{len(sessions)} session names for {len(lineup)} seats")
        deadline = asyncio.get_running_loop().time() + self.connect_timeout
        names = sessions or lineup
        claimed = await asyncio.gather(*(self.claim(name, deadline, gone) for name in names))
        meters = [meter(name) if meter is not None and s else None for name, s in zip(names, claimed)]
        events = wire.EventCache()
        links: list[SeatLink] = [SessionSeat(s, self._notify, events) if s else AbsentSeat() for s in claimed]
        hosted = HostedMatch(GameInfo(game_id, game, checked, 0, tuple(lineup), clock), held=hold)
        self.matches[game_id] = hosted
        self._forget_old()
        log.info("game %s: %s %s", game_id, game, " v ".join(lineup))
        outcome = await run_match(game_id, spec, checked, Shoe(seed, decks, suits), links, lineup, clock,
                                  on_public_event=hosted.publish, meters=meters)
        hosted.finish(outcome)
        log.info("game %s over: scores %s, placing %s, %d fault(s)", game_id, outcome.results["scores"],
                 outcome.results["placing"], len(outcome.faults))
        return outcome

    def _forget_old(self) -> None:
        """Keep the last ``keep_finished`` finished matches (held or not): a record held longer
        is never given out (the runner that started the match has it)."""
        finished = [gid for gid, m in self.matches.items() if m.outcome is not None]
        for gid in finished[: max(0, len(finished) - self.keep_finished)]:
            self.matches.pop(gid).drop()

    def release(self, game_ids: Sequence[str]) -> list[str]:
        """Give the held records of these matches to spectators (a running match's as soon as it
        ends); returns the ids that were held. Unknown ids are ignored."""
        released = []
        for gid in game_ids:
            hosted = self.matches.get(gid)
            if hosted is not None and hosted.held:
                hosted.release()
                released.append(gid)
        if released:
            log.info("released the records of %d match(es)", len(released))
        return released

    def check_spectator(self, token: str) -> None:
        """Raise SpectatorRefused unless ``token`` lets its holder spectate and list matches:
        anyone may on a server without bot tokens or with ``public_spectators``; else the
        spectator token or the admin token is needed."""
        if self.tokens is None or self.public_spectators:
            return
        if not token:
            raise SpectatorRefused("this server needs a spectator token to watch or list games "
                                   "(the request's token field)", missing=True)
        if not any(secret and secrets.compare_digest(secret.encode(), token.encode())
                   for secret in (self.spectator_token, self.admin_token)):
            raise SpectatorRefused("wrong spectator token", missing=False)

    async def spectate(self, game_id: str) -> AsyncIterator[Spectated]:
        """The match's GameInfo, its public events as (index, event) (those so far, then
        live) and, once it is over, its results (Ended); then, if its record is held,
        RecordHeld, and its Released record once released (nothing more if the arena
        forgets the match first). KeyError for no such match."""
        hosted = self.matches.get(game_id)
        if hosted is None:
            raise KeyError(game_id)
        # no await until the first yield: the snapshot and the queue split the events exactly
        queue: asyncio.Queue[Told] = asyncio.Queue()
        hosted.watchers.append(queue)
        so_far = list(hosted.public)
        running = hosted.outcome is None
        try:
            yield hosted.info
            for index, event in so_far:
                yield index, event
            while running and (item := await queue.get())[0] != "end":
                if len(item) == 3:  # ("event", index, event), not a release of the running match
                    yield item[1], item[2]
            outcome = hosted.outcome
            assert outcome is not None  # over: when asked, or its "end" came
            yield Ended(outcome.results)
            if hosted.held:
                yield RecordHeld()
                while hosted.held and not hosted.dropped:  # each change puts an item in the queue
                    await queue.get()
            if not hosted.held:
                yield Released(outcome.record)
        finally:
            hosted.watchers.remove(queue)
