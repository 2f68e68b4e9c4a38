"""The Python bot kit: a bot is a ``decide`` function and one call.

    from referee.bot import run_bot

    def decide(observation, legal_actions, game):
        return legal_actions[0]          # a name from the list, or its index

    run_bot(decide)                      # reads --address --name --token-fd --capacity

The kit connects, says hello, keeps the session alive (reconnecting with
backoff when the referee goes away), follows every game the session plays
(several at once: ``--capacity``), and answers each decision request with
what ``decide`` returns. ``game`` is a :class:`GameView`: the game's name,
rule options, the bot's seat, the seats' labels (``seat 0``...: a bot is never
told who its opponents are), the events seen so far, and the clock. A
``decide`` that raises is answered with an ``error`` (what it raised, and
where): the referee plays the first legal action and charges an ``error``
fault (docs/protocol.md §7), so a bug costs a decision, not the game, and
shows in the standings; the traceback goes to the bot's log.

Where it connects and why it cannot are in the log too: the first failure to
reach the referee is logged (with a hint when no ``--address`` was given: a
launched bot must pass the launcher's arguments on), and so is giving up.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import queue
import random
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import grpc
import orjson

from referee.process import tune_gc
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

PROTOCOL_VERSION = 1
log = logging.getLogger("referee.bot")

#: where a bot started without ``--address`` looks for the referee
DEFAULT_ADDRESS = "127.0.0.1:50051"
#: what a bot that was given no address is told when the default one does not answer
NO_ADDRESS_HINT = ("no --address given, so it tried the default: a launched bot gets --address and the rest "
                   "appended to its command, for run_bot to read in sys.argv (pass them on: run_bot(decide, rest)); "
                   "under protocol = \"stdio\" it gets none: this kit speaks gRPC")
#: the most characters of an error the kit sends the referee (it quotes at most 200)
ERROR_CHARS = 200
#: failures of ``decide`` logged with their traceback; after those, a line each
TRACEBACKS = 3


@dataclass
class GameView:
    """What the bot knows of one of its games (one seat of it)."""

    game_id: str
    game: str
    options: dict[str, str]
    seat: int
    seat_names: list[str]
    decision_ms: int
    bank_ms: int
    #: time left for the current decision and in the bank, in ms
    decision_ms_left: int = 0
    bank_ms_left: int = 0
    #: the engine codes of the current legal actions (same order as the names)
    legal_codes: list[int] = field(default_factory=list)
    #: free for the bot's own per-game state
    memory: dict[str, Any] = field(default_factory=dict)
    #: the bot's randomness for this game: seeded from --seed, the game id and the seat
    #: when --seed is given (the same game gets the same choices), else fresh
    rng: random.Random = field(default_factory=random.Random)
    #: the events received and not yet read, (index, kind, actor, data JSON): parsed when the bot reads ``events``
    _unread: list[tuple[int, str, int, str]] = field(default_factory=list, repr=False)
    _events: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event seen so far: {"index", "kind", "actor", "data"}."""
        if self._unread:
            self._events.extend({"index": index, "kind": kind, "actor": actor, "data": orjson.loads(data)}
                                for index, kind, actor, data in self._unread)
            self._unread = []
        return self._events

    def receive_events(self, events: Sequence[pb.GameEvent]) -> None:
        """Events from the referee; their JSON is parsed when the bot reads ``events``
        (a bot that never does never pays for it)."""
        self._unread += [(e.index, e.kind, e.actor, e.data_json) for e in events]

    def option(self, key: str, default: Any = None) -> Any:
        """A rule option with its type restored (true/false, numbers)."""
        text = self.options.get(key)
        if text is None:
            return default
        if text in ("true", "false"):
            return text == "true"
        return int(text) if text.lstrip("-").isdigit() else text


Decide = Callable[[dict[str, Any], list[str], GameView], "str | int"]


class BotSession:
    """One session with the referee; ``run()`` returns when it ends."""

    def __init__(self, decide: Decide, address: str, name: str, token: str = "", capacity: int = 1,
                 on_game_end: Callable[[GameView, dict[str, Any]], None] | None = None, seed: int | None = None):
        self.decide = decide
        self.seed = seed
        self.address = address
        self.name = name
        self.token = token
        self.capacity = max(1, capacity)
        self.on_game_end = on_game_end
        self.games: dict[tuple[str, int], GameView] = {}
        self.games_ended = 0
        self._failures = itertools.count(1)  # decide's failures (next() is atomic: the workers share it)
        self._outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()  # C-coded: cheaper per reply
        self._workers = ThreadPoolExecutor(max_workers=self.capacity, thread_name_prefix="decide")

    def _messages(self) -> Iterator[pb.BotMessage]:
        """What the session sends: the Hello, then the answers, those ready together in one message."""
        outbox = self._outbox
        while (message := outbox.get()) is not None:
            if message.WhichOneof("kind") != "action" or outbox.empty():
                yield message
                continue
            answers = [message.action]
            while not outbox.empty():
                queued = outbox.get()
                if queued is None:  # the end: after this batch
                    outbox.put(None)
                    break
                answers.append(queued.action)
            yield pb.BotMessage(actions=pb.ActionReplies(replies=answers))

    def run(self, max_games: int = 0) -> str:
        """Play until the referee ends the session (or ``max_games`` games ended).
        Returns why it ended: "refused: ...", "done", "closed"."""
        self._outbox.put(pb.BotMessage(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=self.name,
                                                      token=self.token, capacity=self.capacity,
                                                      batching=True)))
        # each handler takes the message's field of its kind (read by name: getattr)
        handlers: dict[str, Callable[[Any], None]] = {
            "request": self._on_request, "game_start": self._on_game_start, "game_end": self._on_game_end,
            "result": self._on_result, "welcome": self._on_welcome}
        with grpc.insecure_channel(self.address) as channel:
            stream = pb_grpc.RefereeStub(channel).Play(self._messages())
            try:
                for message in stream:
                    if message.WhichOneof("kind") == "refusal":
                        return f"refused: {message.refusal.message}"
                    for one in message.batch.messages if message.WhichOneof("kind") == "batch" else (message,):
                        kind = one.WhichOneof("kind")
                        handler = handlers.get(kind)
                        if handler is not None:
                            handler(getattr(one, kind))
                    if max_games and self.games_ended >= max_games:
                        return "done"
                return "closed"
            finally:
                self._outbox.put(None)
                self._workers.shutdown(wait=False, cancel_futures=True)

    # --- messages from the referee -------------------------------------------

    def _on_welcome(self, welcome: pb.Welcome) -> None:
        log.info("%s: connected to %s as session %s", self.name, welcome.server, welcome.session_id)

    def _on_game_start(self, start: pb.GameStart) -> None:
        rng = random.Random(f"{self.seed}:{start.game_id}:{start.seat}") if self.seed is not None else None
        self.games[(start.game_id, start.seat)] = GameView(
            start.game_id, start.game, dict(start.options), start.seat, list(start.seat_names),
            start.clock.decision_ms, start.clock.bank_ms, rng=rng or random.Random())

    def _on_request(self, request: pb.DecisionRequest) -> None:
        view = self.games.get((request.game_id, request.seat))
        if view is None:  # a request for a game we never saw start: answer safely
            view = GameView(request.game_id, "", {}, request.seat, [], 0, 0)
        view.receive_events(request.events)
        view.decision_ms_left = request.decision_ms_left
        view.bank_ms_left = request.bank_ms_left
        view.legal_codes = list(request.legal_codes)
        observation = orjson.loads(request.observation_json)
        legal = list(request.legal_actions)
        if self.capacity == 1:  # one seat at a time: no thread to hand the decision to
            self._answer(request.request_id, request.game_id, request.seat, observation, legal, view)
        else:
            self._workers.submit(self._answer, request.request_id, request.game_id, request.seat,
                                 observation, legal, view)

    def _answer(self, request_id: int, game_id: str, seat: int, observation: dict[str, Any], legal: list[str],
                view: GameView) -> None:
        reply = pb.ActionReply(request_id=request_id, game_id=game_id, seat=seat)
        try:
            choice = self.decide(observation, legal, view)
        except Exception as err:  # noqa: BLE001 - a bug in decide costs one decision, and is said so
            reply.error = self._failed(err, game_id, seat)
        else:
            if isinstance(choice, int) and not isinstance(choice, bool):
                reply.index = choice
            else:
                reply.name = str(choice)
        self._outbox.put(pb.BotMessage(action=reply))

    def _failed(self, err: Exception, game_id: str, seat: int) -> str:
        """Log what ``decide`` raised (the traceback, for the first few) and return the error to answer."""
        error = describe_error(err)
        number = next(self._failures)
        if number <= TRACEBACKS:
            log.error("%s: decide raised (game %s seat %d): the referee plays the first legal action and charges "
                      "an error fault", self.name, game_id, seat, exc_info=err)
        else:
            log.error("%s: decide raised again (game %s seat %d): %s (%d times in this session; the first %d "
                      "tracebacks are above)", self.name, game_id, seat, error, number, TRACEBACKS)
        return error

    def _on_result(self, result: pb.ActionResult) -> None:
        if result.status == pb.ActionResult.SUBSTITUTED and result.fault != pb.FAULT_ERROR:  # that one is logged
            log.warning("%s: game %s seat %d: %s was played for us: %s", self.name, result.game_id,
                        result.seat, result.action, result.reason)

    def _on_game_end(self, end: pb.GameEnd) -> None:
        view = self.games.pop((end.game_id, end.seat), None)
        self.games_ended += 1
        if view is None:
            return
        view.receive_events(end.events)
        if self.on_game_end is not None:
            self.on_game_end(view, orjson.loads(end.results_json))


def describe_error(err: BaseException) -> str:
    """What an exception says, in a line, with where it was raised: ``KeyError: 'AS' (at mybot.py:12 in decide)``."""
    text = " ".join(f"{type(err).__name__}: {err}".split()) if str(err) else type(err).__name__
    frames = traceback.extract_tb(err.__traceback__)
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    room = max(20, ERROR_CHARS - len(where))
    return (text if len(text) <= room else text[:room - 3] + "...") + where


def token_from_fd(fd: int) -> str:
    """The token the launcher wrote into descriptor ``fd`` (its first line, stripped); ``fd`` is closed.
    Raises OSError when ``fd`` is not an open, readable descriptor."""
    with open(fd, encoding="utf-8", closefd=True) as source:
        return source.readline().strip()


def _token(args: argparse.Namespace) -> str:
    """The token of the command line: ``--token TOKEN`` (given by hand) or ``--token-fd FD``
    (what the launcher gives); both, or an unreadable descriptor, end the bot with code 2."""
    if args.token_fd is None:
        token: str = args.token
        return token
    if args.token:
        print(f"{args.name}: give --token or --token-fd, not both", file=sys.stderr)
        sys.exit(2)
    try:
        return token_from_fd(args.token_fd)
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        print(f"{args.name}: cannot read the token from --token-fd {args.token_fd}: {reason}", file=sys.stderr)
        sys.exit(2)


def run_bot(decide: Decide, argv: Sequence[str] | None = None, default_name: str = "bot",
            on_game_end: Callable[[GameView, dict[str, Any]], None] | None = None) -> None:
    """The command line of a bot: ``--address --name --token-fd (or --token) --capacity --games --seed``.

    Reconnects with backoff (0.2 s doubling to 5 s) when the referee is not
    there or the session breaks, until ``--games`` games are done (0 = forever)
    or ``--retry-for`` seconds pass without a connection. Ends (exit code 0) when the
    referee ends the session (its stream closes with status OK): it has no more games for it."""
    parser = argparse.ArgumentParser(description=f"{default_name}: a bot for the referee")
    parser.add_argument("--address", default=None,
                        help=f"the referee (HOST:PORT or unix:PATH; default {DEFAULT_ADDRESS})")
    parser.add_argument("--name", default=default_name, help="the bot's name in line-ups")
    parser.add_argument("--token", default="", help="the bot's secret token (for a bot started by hand)")
    parser.add_argument("--token-fd", type=int, default=None, metavar="FD",
                        help="read the token from inherited descriptor FD (its first line), as the launcher gives it")
    parser.add_argument("--capacity", type=int, default=1, help="how many seats it plays at once")
    parser.add_argument("--games", type=int, default=0, help="stop after this many games (0 = never)")
    parser.add_argument("--retry-for", type=float, default=30.0,
                        help="give up after this many seconds without reaching the referee")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the bot's randomness (per game: the same game, the same choices)")
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args(argv)
    token = _token(args)
    tune_gc()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format=f"%(asctime)s {args.name} %(levelname)s %(message)s")
    address = args.address or DEFAULT_ADDRESS
    hint = None if args.address else f"{args.name}: {NO_ADDRESS_HINT}"  # a line of its own: a log's tail shows it whole
    played = 0
    delay, lost_since, told = 0.2, time.monotonic(), False
    while True:
        session = BotSession(decide, address, args.name, token, args.capacity, on_game_end, args.seed)
        detail = ""
        try:
            why = session.run(max_games=args.games - played if args.games else 0)
        except grpc.RpcError as err:
            why = f"connection: {err.code().name}"
            detail = " ".join((err.details() or "").split())
        played += session.games_ended
        if why.startswith("refused"):
            print(f"{args.name}: {why}", file=sys.stderr)
            sys.exit(3)
        if args.games and played >= args.games or why == "closed":
            return
        if session.games_ended:
            lost_since, delay, told = time.monotonic(), 0.2, False
        if time.monotonic() - lost_since > args.retry_for:
            print(f"{args.name}: no referee at {address} for {args.retry_for:g} s ({why}); giving up", file=sys.stderr)
            if hint and not told:
                print(hint, file=sys.stderr)
            sys.exit(4)
        if not told:  # the first failure of an outage: where, and why (a log with nothing says nothing)
            log.warning("%s: cannot reach the referee at %s (%s%s); trying again for %g s", args.name, address,
                        why, f": {detail}" if detail else "", args.retry_for)
            if hint:
                log.warning(hint)
            told = True
        else:
            log.info("%s: session ended (%s); reconnecting in %.1f s", args.name, why, delay)
        time.sleep(delay)
        delay = min(delay * 2, 5.0)


def serialized(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a decide function so calls never overlap (for bots with shared state)."""
    lock = threading.Lock()

    def locked(*args: Any) -> Any:
        with lock:
            return fn(*args)
    return locked
