"""The stdio relay: a bot that reads its stdin and writes its stdout, played over gRPC.

A ``[[bots]]`` table with ``protocol = "stdio"`` is started by the launcher as

    python -P -m referee.hosting.stdio --address ADDRESS --name NAME --token-fd 3 --capacity N -- COMMAND...

inside the bot's own sandbox, so the relay's CPU and memory count with the bot's
and nothing new crosses the wall. The relay reads the token, starts COMMAND
(with nothing appended) and opens an ordinary session with the referee: the
server sees a gRPC bot like any other. Then, both ways at once:

- each ``RefereeMessage`` (the Welcome first; a Batch unpacked into its
  messages) is written to the bot's stdin as one line of proto3 JSON, as
  ``google.protobuf.json_format`` prints it (camelCase names, 64-bit integers
  as strings, fields at their default left out). The session asks for the
  game data typed (``DATA_TYPED``): a request's observation is the object
  named as the game (``"aegis": {...}``), an event's data and a game's
  results likewise, in place of JSON texts inside the JSON;
- each line the bot writes to stdout is parsed as a ``BotMessage`` in proto3
  JSON and sent as it is. Blank lines are skipped. A line that does not parse
  is a **malformed answer**: it answers the oldest request the bot has open
  with a name no game's notation reads (``(stdio) line N ...``, the line
  quoted and the reason), so the referee substitutes and records a
  ``malformed`` fault as for any bad name; the log quotes the line (escaped
  and capped, :mod:`referee.untrusted`). With no request open it answers
  nothing: it is sent on as a message that holds no answer, which the referee
  counts as it counts a gRPC bot's messages that answer no request (past its
  allowance, ``arena.UNASKED_ALLOWANCE``, the session is closed and its seats
  are lost: ``disconnect``), and logged (the first :data:`QUIET_AFTER`). A
  line longer than :data:`MAX_LINE` ends the session at once, as a
  message over the server's limit breaks a gRPC stream (its seats are lost:
  ``disconnect``), and the bot is stopped;
- the bot's stderr is the relay's: the bot's log.

A bot that has written nothing on its stdout when one of its decisions times out
(or when it ends) is told apart in its log: one that has not read its stdin
either does not speak this protocol (a gRPC bot entered with ``protocol =
"stdio"``: it gets no arguments here, and connects nowhere); one that read it
and answered nothing has forgotten to answer on stdout, or to flush.

When the bot ends (or closes its stdout), the session ends; when the session
ends, the bot's stdin is closed and it has :data:`GRACE_S` to exit before it
is killed. The relay exits as the bot did (its exit code, or the same
signal), so the launcher's account of a death stays the bot's; 3 when the
referee refused the session, 1 when the relay ended the bot.
"""

from __future__ import annotations

import argparse
import array
import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import threading
from collections.abc import Iterator, Sequence
from typing import IO, Any

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from referee.process import tune_gc
from referee.untrusted import QUOTE_CHARS, capped, quoted
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

#: the longest line read from the bot, newline included: the referee's largest message (server.MAX_MESSAGE_BYTES)
MAX_LINE = 256 * 1024
#: seconds a bot has to exit once its session is over and its stdin closed
GRACE_S = 2.0
#: lines that did not parse and had no request to answer: logged one by one up to this many, then counted
QUIET_AFTER = 5
#: what a line that does not parse answers: a text no game's notation reads as an action
MALFORMED = "(stdio) line {number} is not a BotMessage in proto3 JSON: {line}: {why}"
#: characters of a line that does not parse quoted in the answer's name (the fault's detail) and in the log
NAME_QUOTE_CHARS, LOG_QUOTE_CHARS = 40, 200
#: characters of the parser's reason kept
WHY_CHARS = 160

EXIT_REFUSED, EXIT_ENDED = 3, 1


def say(text: str) -> None:
    """One line in the bot's log (the relay's stderr is the bot's)."""
    print(f"stdio relay: {text}", file=sys.stderr, flush=True)


def to_line(message: pb.RefereeMessage) -> bytes:
    """A referee message as the bot reads it: one line of proto3 JSON (ASCII, escapes for the rest),
    the very text of ``json_format.MessageToJson(message, indent=None)`` (tests/test_stdio.py checks),
    made faster: json_format asks each field's descriptor in Python what to do with it, on every
    message, and the typed game data nest many small messages; here that is decided once per field."""
    try:
        return json.dumps(_json_object(message)).encode() + b"\n"
    except _Unplanned:  # a kind of field the plan does not know: the slow way
        return json_format.MessageToJson(message, indent=None).encode() + b"\n"


class _Unplanned(Exception):
    """A field :func:`_json_object` leaves to json_format (floats, bytes, well-known types)."""


_INT64 = {FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64}
#: per field: its JSON name, how its value is written, whether it is repeated
_PLANS: dict[FieldDescriptor, tuple[str, str, bool]] = {}


def _plan(field: FieldDescriptor) -> tuple[str, str, bool]:
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        value = message.fields_by_name["value"]
        if value.cpp_type != FieldDescriptor.CPPTYPE_STRING or value.type == FieldDescriptor.TYPE_BYTES:
            raise _Unplanned(field.full_name)
        kind = "map"
    elif message is not None:
        if message.file.package == "google.protobuf":
            raise _Unplanned(field.full_name)
        kind = "message"
    elif field.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
        kind = "enum"
    elif field.cpp_type in _INT64:
        kind = "int64"  # as a string
    elif field.type == FieldDescriptor.TYPE_BYTES or field.cpp_type in (FieldDescriptor.CPPTYPE_FLOAT,
                                                                         FieldDescriptor.CPPTYPE_DOUBLE):
        raise _Unplanned(field.full_name)
    else:
        kind = "plain"  # strings, bools, 32-bit integers: as they are
    return field.json_name, kind, field.is_repeated


def _json_object(message: Message) -> dict[str, Any]:
    """The message as json_format's printer makes it before ``json.dumps``: the fields that are set
    (ListFields: those at their default are left out), in field order, by their JSON names."""
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        plan = _PLANS.get(field)
        if plan is None:
            plan = _PLANS[field] = _plan(field)
        name, kind, repeated = plan
        if kind == "message":
            out[name] = [_json_object(v) for v in value] if repeated else _json_object(value)
        elif kind == "plain":
            out[name] = list(value) if repeated else value
        elif kind == "int64":
            out[name] = [str(v) for v in value] if repeated else str(value)
        elif kind == "map":
            out[name] = {str(key): value[key] for key in value}
        else:  # an enum by its name (a number no name has: as json_format, the number)
            assert field.enum_type is not None  # an enum field's (_plan's "enum")
            names = field.enum_type.values_by_number
            out[name] = [_enum(names, v) for v in value] if repeated else _enum(names, value)
    return out


def _enum(names: Any, number: int) -> str | int:
    value = names.get(number)
    return number if value is None else value.name


def parse_line(line: bytes) -> pb.BotMessage:
    """A line of the bot's as a BotMessage; ValueError (with json_format's reason) when it is not one."""
    try:
        return json_format.Parse(line.decode("utf-8"), pb.BotMessage())
    except (json_format.ParseError, UnicodeDecodeError, RecursionError) as err:
        raise ValueError(str(err).strip() or type(err).__name__) from None


class OpenRequests:
    """The requests the bot has been sent and has not settled, oldest first: a request is settled by
    an answer naming its seat (the referee takes an answer with another id as the wrong answer to
    it), by an ActionResult for it, or by its game's end; a new request for the seat replaces it."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def sent(self, message: pb.RefereeMessage) -> None:
        kind = message.WhichOneof("kind")
        with self._lock:
            if kind == "request":
                r = message.request
                self._open.pop((r.game_id, r.seat), None)
                self._open[(r.game_id, r.seat)] = r.request_id
            elif kind == "result":
                done = message.result
                if self._open.get((done.game_id, done.seat)) == done.request_id:
                    del self._open[(done.game_id, done.seat)]
            elif kind == "game_end":
                self._open.pop((message.game_end.game_id, message.game_end.seat), None)

    def answered(self, message: pb.BotMessage) -> None:
        kind = message.WhichOneof("kind")
        replies = [message.action] if kind == "action" else message.actions.replies if kind == "actions" else []
        with self._lock:
            for reply in replies:
                self._open.pop((reply.game_id, reply.seat), None)

    def take_oldest(self) -> tuple[str, int, int] | None:
        """The oldest open request, (game id, seat, request id), now settled; None when none is open."""
        with self._lock:
            if not self._open:
                return None
            (game_id, seat), request_id = next(iter(self._open.items()))
            del self._open[(game_id, seat)]
            return game_id, seat, request_id


class StdioRelay:
    """One session of the referee at ``address`` for the bot process ``bot`` (its stdin and stdout pipes).

    The session's messages are read from the bot's stdout as gRPC asks for them (in gRPC's thread
    that sends them), so a bot that writes faster than the referee reads is held up by its own
    pipe; what comes from the referee is written to its stdin in the thread that calls :meth:`run`."""

    def __init__(self, bot: subprocess.Popen[bytes], address: str, name: str, token: str, capacity: int):
        self.bot = bot
        self.address = address
        # DATA_TYPED: the bot reads the game data as objects (the field named as the game), not as JSON texts
        self.hello = pb.BotMessage(hello=pb.Hello(protocol_version=1, bot_name=name, token=token,
                                                  capacity=max(1, capacity), batching=True,
                                                  data_form=pb.DATA_TYPED))
        self.open = OpenRequests()
        self.refused = False
        self.overlong = False   # the bot wrote a line over MAX_LINE: the relay ended the session
        self.unanswerable = 0   # lines that did not parse with no request open (each sent as an unasked message)
        self.lines = 0          # lines read from the bot's stdout
        self.sent = 0           # bytes written to its stdin
        self.told_silent = False  # its log says it wrote nothing (silence())

    def run(self) -> None:
        """Until the session or the bot's stdout ends."""
        stdin = self.bot.stdin
        assert stdin is not None  # the bot is started with pipes
        with grpc.insecure_channel(self.address) as channel:
            call = pb_grpc.RefereeStub(channel).Play(self._messages())
            try:
                self._write_bot(call, stdin)
            except grpc.RpcError as err:
                say(f"the session ended: {err.code().name} {err.details() or ''}".rstrip())
            finally:
                call.cancel()

    def _write_bot(self, stream: Iterator[pb.RefereeMessage], stdin: IO[bytes]) -> None:
        for message in stream:
            messages = message.batch.messages if message.WhichOneof("kind") == "batch" else (message,)
            for one in messages:
                self.open.sent(one)
                if one.WhichOneof("kind") == "result" and one.result.fault == pb.FAULT_TIMEOUT:
                    r = one.result
                    self.tell_if_silent(f"request {r.request_id} ({capped(r.game_id, 80)} seat {r.seat}) timed out")
            data = b"".join(to_line(one) for one in messages)
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, ValueError):  # the bot closed its stdin (or ended): the session is over
                return
            self.sent += len(data)
            if message.WhichOneof("kind") == "refusal":
                self.refused = True
                say(f"refused by the referee ({pb.Refusal.Reason.Name(message.refusal.reason)}): "
                    f"{message.refusal.message}")
                return

    def _messages(self) -> Iterator[pb.BotMessage]:
        """The Hello, then the bot's lines, parsed; at the end of its output the session ends."""
        yield self.hello
        stdout = self.bot.stdout
        assert stdout is not None  # the bot is started with pipes
        try:
            while line := stdout.readline(MAX_LINE + 1):
                self.lines = number = self.lines + 1
                if len(line) > MAX_LINE:  # what came before it is sent; then the session ends
                    self.overlong = True
                    say(f"line {number} is longer than {MAX_LINE // 1024} KB: the session is closed (its seats "
                        f"are lost, as for a gRPC message over the referee's limit) and the bot stopped")
                    self.bot.kill()
                    return
                if not line.strip():
                    continue
                try:
                    message = parse_line(line)
                except ValueError as err:
                    yield self._malformed(number, line, str(err))
                    continue
                self.open.answered(message)
                yield message
        finally:
            if self.unanswerable > QUIET_AFTER:
                say(f"{self.unanswerable} lines did not parse with no request open (the first {QUIET_AFTER} shown)")

    def _malformed(self, number: int, line: bytes, why: str) -> pb.BotMessage:
        """What a line that does not parse is: the malformed answer to the oldest open request, or, with
        none open, a message that holds no answer (which the referee counts against the session's
        allowance, as it counts a gRPC bot's messages that answer no request). The log quotes the line,
        and the answer's name its head (escaped and capped: the bot wrote them)."""
        text = line.removesuffix(b"\n").decode("utf-8", "backslashreplace")
        why = capped(why, WHY_CHARS)
        bad = f"line {number} is not a BotMessage in proto3 JSON: {quoted(text, LOG_QUOTE_CHARS)} ({why})"
        oldest = self.open.take_oldest()
        if oldest is None:
            self.unanswerable += 1
            if self.unanswerable <= QUIET_AFTER:
                say(f"{bad}; no request is open: it answers nothing (past a few such messages the referee "
                    f"closes the session: docs/protocol.md §2)")
            return pb.BotMessage()
        game_id, seat, request_id = oldest
        say(f"{bad}: the malformed answer to request {request_id} of {capped(game_id, 80)} seat {seat}")
        return pb.BotMessage(action=pb.ActionReply(request_id=request_id, game_id=game_id, seat=seat,
                                                   name=malformed_name(number, text, why)))

    def tell_if_silent(self, when: str) -> None:
        """Once, in the log: the bot has written nothing on its stdout (``when``: at what moment), and
        whether it read its stdin, which tells a bot that speaks another protocol from one that does
        not answer (or does not flush)."""
        if self.lines or self.told_silent or not self.sent:
            return
        self.told_silent = True
        unread = unread_bytes(self.bot.stdin)
        if unread is not None and unread >= self.sent:
            say(f"{when}, and the bot has written nothing on its stdout and read nothing of its stdin (the "
                f"{self.sent} bytes of the referee's messages are still in the pipe): it does not speak stdio. "
                f"A bot that connects to the referee itself (gRPC, to the --address it is given) is entered "
                f"without protocol = \"stdio\" (with it, its command gets no arguments and it connects nowhere)")
        else:
            read = "" if unread is None else f"{self.sent - unread} of "
            say(f"{when}, and the bot has written nothing on its stdout, though it read {read}the {self.sent} "
                f"bytes of the referee's messages on its stdin: a stdio bot answers each request with one line "
                f"of JSON on stdout, and flushes it (docs/protocol.md §16)")


def malformed_name(number: int, line: str, why: str) -> str:
    """The answer to a line that does not parse: its head quoted and the reason, in at most QUOTE_CHARS
    characters (what the runner keeps whole in the fault's detail, the engine's reason after it)."""
    head = MALFORMED.format(number=number, line=quoted(line, NAME_QUOTE_CHARS), why="")
    room = QUOTE_CHARS - len(head)
    return head + (why if len(why) <= room else capped(why, max(1, room - 32)))


def unread_bytes(stream: IO[bytes] | None) -> int | None:
    """How many bytes written to a pipe its reader has not taken yet (FIONREAD); None if unknown."""
    if stream is None:
        return None
    count = array.array("i", [0])
    try:
        fcntl.ioctl(stream.fileno(), termios.FIONREAD, count)
    except (OSError, ValueError, AttributeError):
        return None
    return count[0]


def read_token(fd: int) -> str:
    with open(fd, encoding="utf-8", closefd=True) as source:
        return source.readline().strip()


def _close(stream: IO[bytes]) -> None:
    try:
        stream.close()  # flushes first: blocks while a bot that reads nothing has its pipe full
    except (OSError, ValueError):
        pass


def finish(bot: subprocess.Popen[bytes], relay: StdioRelay) -> int:
    """Close the bot's stdin, give it GRACE_S to end, then kill it; the relay's exit status."""
    relay.tell_if_silent("its session is over" if bot.poll() is None else f"the bot ended ({_how(bot.returncode)})")
    threading.Thread(target=_close, args=(bot.stdin,), daemon=True).start()  # a kill unblocks it
    try:
        code = bot.wait(GRACE_S)
    except subprocess.TimeoutExpired:
        say(f"the session is over and the bot did not exit within {GRACE_S:g} s: killed")
        bot.kill()
        bot.wait()
        return EXIT_REFUSED if relay.refused else EXIT_ENDED
    if relay.refused:
        return EXIT_REFUSED
    if relay.overlong:
        return EXIT_ENDED
    return code


def _how(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"


def exit_as(code: int) -> None:
    """Exit as the bot did: with its code, or killed by the same signal."""
    if code < 0:
        sig = -code
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m referee.hosting.stdio",
                                     description="Relay a stdin/stdout bot to the referee (docs/protocol.md §16).")
    parser.add_argument("--address", required=True, help="the referee (HOST:PORT or unix:PATH)")
    parser.add_argument("--name", required=True, help="the bot's name")
    parser.add_argument("--token-fd", type=int, default=None, metavar="FD", help="the token's descriptor")
    parser.add_argument("--token", default="", help="the token, for a relay started by hand")
    parser.add_argument("--capacity", type=int, default=1, help="seats the bot plays at once")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the bot's command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("the bot's command is missing (after --)")
    token = args.token
    if args.token_fd is not None:
        try:
            token = read_token(args.token_fd)
        except (OSError, UnicodeDecodeError) as err:
            say(f"cannot read the token from descriptor {args.token_fd}: {err}")
            sys.exit(2)
    tune_gc()
    try:
        bot = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as err:
        say(f"cannot start the bot {command[0]!r}: {err.strerror or err}")
        sys.exit(127)
    relay = StdioRelay(bot, args.address, args.name, token, args.capacity)
    try:
        relay.run()
    except KeyboardInterrupt:
        pass
    exit_as(finish(bot, relay))


if __name__ == "__main__":
    main()
