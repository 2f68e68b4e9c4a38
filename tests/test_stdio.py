"""stdio bots (``protocol = "stdio"``): the relay's lines, and the same treatment as over gRPC.

The fast tests check the relay's pieces: the lines it writes (proto3 JSON, one line, as
json_format prints it), the lines it reads, the request a bad line answers, its command line
and the config key. The end-to-end ones play a misbehaving bot twice, in the real sandbox under
the real launcher: once as a gRPC bot (tests/bots/proto_bot.py) and once as its stdio twin
(tests/bots/stdio_bot.py), both drawing the same moves; each pair must give the same game and
the same faults, and the opponent none.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import sys
from itertools import product
from pathlib import Path

import pytest
from google.protobuf import json_format
from harness import ROOT, require_sandbox

from referee import games
from referee.competition.config import load
from referee.games.base import ActionSyntaxError
from referee.hosting import stdio
from referee.hosting.launcher import STDIO_RELAY, Launcher
from referee.model import BotSpec, ConfigError, Seating
from referee.play import wire
from referee.runner import Clock
from referee.untrusted import quoted
from referee.v1 import referee_pb2 as pb

# --- the lines ------------------------------------------------------------------------------


def request(request_id: int, game_id: str, seat: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(request=pb.DecisionRequest(request_id=request_id, game_id=game_id, seat=seat,
                                                        observation_json='{"seat": 0, "hand": ["AS"]}',
                                                        legal_actions=["AS", "BID 3"], legal_codes=[2**60, 3]))


def test_a_referee_message_is_one_line_of_proto3_json_with_camel_case_strings_for_64_bits_and_no_defaults():
    line = stdio.to_line(request(7, "g1", 0))
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
    data = json.loads(line)
    assert data == {"request": {"requestId": "7", "gameId": "g1", "observationJson": '{"seat": 0, "hand": ["AS"]}',
                                "legalActions": ["AS", "BID 3"], "legalCodes": [str(2**60), "3"]}}  # no seat: 0
    end = json.loads(stdio.to_line(pb.RefereeMessage(game_end=pb.GameEnd(game_id="g1", seat=2, scores=[-3, 0]))))
    assert end == {"gameEnd": {"gameId": "g1", "seat": 2, "scores": ["-3", "0"]}}
    text = json.loads(stdio.to_line(pb.RefereeMessage(refusal=pb.Refusal(reason=pb.Refusal.BAD_TOKEN,
                                                                         message="caf\u00e9\nbar"))))
    assert text == {"refusal": {"reason": "BAD_TOKEN", "message": "caf\u00e9\nbar"}}  # enums by name


async def _every_message(game: str, variants: list[dict], form: int) -> list[pb.RefereeMessage]:
    """Every message the referee sends to sessions asking for ``form`` in a match of each variant: the
    welcome, starts, requests (a careless seat's substitutions) and ends; and a refusal."""
    from referee.play.arena import Arena

    arena = Arena(tokens={f"s{i}": "t" for i in range(4)})
    seen: list[pb.RefereeMessage] = []
    seats = games.GAMES[game].num_seats

    async def bot(name: str, careless: bool) -> None:
        session = arena.open_session(pb.Hello(protocol_version=1, bot_name=name, token="t", capacity=2,
                                              data_form=form))
        rng = random.Random(name)
        while (message := await session.outbox.get()) is not None:
            seen.append(message)
            if message.WhichOneof("kind") == "request":
                r = message.request
                reply = pb.ActionReply(request_id=r.request_id, game_id=r.game_id, seat=r.seat,
                                       index=rng.randrange(len(r.legal_actions)))
                if careless and rng.random() < 0.1:
                    reply.name = "XYZZY"
                session.on_reply(reply)

    bots = [asyncio.create_task(bot(f"s{i}", careless=i == 1)) for i in range(seats)]
    await asyncio.sleep(0)
    for options in variants:
        await arena.run_match(game, options, [f"s{i}" for i in range(seats)], seed=len(seen))
    for sessions in list(arena.sessions.values()):
        for session in list(sessions):
            arena.close_session(session)
    await asyncio.gather(*bots)
    return [*seen, wire.welcome("s9", "referee"), wire.refusal(pb.Refusal.BAD_TOKEN, "caf\u00e9 \"x\"\n")]


VARIANTS = {"confirmation": [{"rounds": 1, "double": d, "blind": b, "pairs": p, "trump": t}
                             for d, b, p, t in product([False, True], [False, True], [False, True],
                                                       ["dealer-card", "random-suit"])],
            "aegis": [{"promise": "table"}, {"promise": "4plus"}]}


@pytest.mark.parametrize("form", [pb.DATA_TYPED, pb.DATA_BOTH, pb.DATA_JSON])
@pytest.mark.parametrize("game", sorted(VARIANTS))
def test_the_relays_lines_are_json_formats_text_for_every_message_of_every_variant(game, form):
    messages = asyncio.run(_every_message(game, VARIANTS[game], form))
    kinds = {m.WhichOneof("kind") for m in messages}
    assert kinds >= {"welcome", "refusal", "game_start", "request", "result", "game_end"}, kinds
    for message in messages:
        assert stdio.to_line(message) == json_format.MessageToJson(message, indent=None).encode() + b"\n"


def test_a_bot_line_is_read_in_camel_case_or_the_protos_names_and_a_bad_one_says_why():
    for line in (b'{"action": {"requestId": "7", "gameId": "g1", "seat": 1, "index": 0}}\n',
                 b'{"action": {"request_id": 7, "game_id": "g1", "seat": 1, "index": 0}}'):
        message = stdio.parse_line(line)
        assert message.action.request_id == 7 and message.action.seat == 1
        assert message.action.WhichOneof("choice") == "index"  # index 0 is set, not a default
    for bad in (b"AS", b'{"action": {"requestId": "x"}}', b'{"action": {}, "comment": 1}', b"\xff\xfe",
                b"[" * 100_000):
        with pytest.raises(ValueError) as err:
            stdio.parse_line(bad)
        assert str(err.value)


def test_the_answer_to_a_line_that_does_not_parse_is_malformed_in_every_game():
    """The relay answers a bad line with this name: no game's notation may read it as an action,
    so that the referee charges a malformed answer whatever the game."""
    for line in ("XYZZY", "AS", "STOP", "BID 3", "CONFIRM", ""):  # the bot's line is quoted in it: even an action
        text = stdio.MALFORMED.format(number=3, line=quoted(line),
                                      why="Failed to load JSON: Expecting value: line 1 column 1 (char 0).")
        for _name, spec in games.GAMES.items():
            with pytest.raises(ActionSyntaxError):
                spec.new(seed=1).parse_action(text)


def test_a_bad_line_is_quoted_in_the_log_escaped_and_capped(capsys):
    """Issue 34, item 8: the log quotes the line that is not a message (through referee.untrusted)."""
    relay = stdio.StdioRelay(None, "unused", "bot", "", 1)
    relay.open.sent(request(3, "g1", 0))
    line = b"\x1b]0;owned\x07 not JSON \xff" + b"y" * 1000 + b"\n"
    answer = relay._malformed(7, line, "Failed to load JSON: Expecting value: line 1 column 1 (char 0).")
    said = capsys.readouterr().err
    assert said.startswith("stdio relay: line 7 is not a BotMessage in proto3 JSON: '\\x1b]0;owned\\x07 not JSON "
                           "\\xff" + "y" * 170 + "...' (1024 characters, 194 kept) (Failed to load JSON: Expecting "
                           "value: line 1 column 1 (char 0).): the malformed answer to request 3 of g1 seat 0")
    assert said.isascii() and "\x1b" not in said and said.count("\n") == 1
    assert answer.action.request_id == 3 and answer.action.name.startswith(
        "(stdio) line 7 is not a BotMessage in proto3 JSON: '\\x1b]0;owned\\x07 not JSON \\xff")
    assert "(1024 characters, 34 kept): Failed to load JSON" in answer.action.name  # the bad byte: 4 characters
    # no request open: logged, quoted, sent as answering nothing
    unasked = relay._malformed(8, b"also not JSON\n", "why")
    assert capsys.readouterr().err == ("stdio relay: line 8 is not a BotMessage in proto3 JSON: 'also not JSON' (why); "
                                       "no request is open: it answers nothing (past a few such messages the referee "
                                       "closes the session: docs/protocol.md §2)\n")
    assert unasked == pb.BotMessage()


def test_a_bad_line_answers_the_oldest_request_still_open():
    open_ = stdio.OpenRequests()
    for rid, gid, seat in ((1, "a", 0), (4, "b", 2), (2, "a", 1)):
        open_.sent(request(rid, gid, seat))
    open_.sent(request(5, "a", 0))  # a new request for a seat replaces its old one, at the end
    open_.answered(pb.BotMessage(action=pb.ActionReply(request_id=999, game_id="b", seat=2)))  # settled, wrong id
    open_.sent(pb.RefereeMessage(result=pb.ActionResult(request_id=2, game_id="a", seat=1)))   # substituted
    assert open_.take_oldest() == ("a", 0, 5)
    assert open_.take_oldest() is None
    open_.sent(request(6, "c", 1))
    open_.sent(pb.RefereeMessage(game_end=pb.GameEnd(game_id="c", seat=1)))
    assert open_.take_oldest() is None


def test_a_bad_line_with_no_request_open_is_sent_on_as_a_message_that_answers_nothing():
    """So that the referee counts it against the session's allowance, as a gRPC bot's message that
    answers no request (docs/protocol.md §2), instead of the relay swallowing it."""
    relay = stdio.StdioRelay(None, "unix:/nowhere", "b", "t", 1)
    nothing = relay._malformed(3, b"{\n", "Failed to load JSON")
    assert nothing is not None and nothing.WhichOneof("kind") is None and relay.unanswerable == 1
    relay.open.sent(request(5, "g", 0))
    answer = relay._malformed(4, b"{\n", "Failed to load JSON")
    assert (answer.action.request_id, answer.action.game_id) == (5, "g") and relay.unanswerable == 1
    assert answer.action.name.startswith("(stdio) line 4 is not a BotMessage")


def documented_exchange() -> list[tuple[str, str]]:
    """The lines of docs/protocol.md §16's example exchange: (direction, JSON), a message's lines joined."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    block = re.search(r"<!-- stdio-exchange -->\n```\n(.*?)```", text, re.S).group(1)
    messages: list[tuple[str, str]] = []
    for line in block.splitlines():
        if line[:2] in ("< ", "> "):
            messages.append((line[0], line[2:]))
        elif line.strip() != "...":
            messages[-1] = (messages[-1][0], messages[-1][1] + line)
    return messages


def test_the_documented_exchange_is_made_of_messages_of_the_protocol():
    """Each line of §16's example is a RefereeMessage (<) or a BotMessage (>) in proto3 JSON, with
    only names the proto has, in camelCase (what the relay prints), and answers copy their request."""
    messages = documented_exchange()
    assert [d for d, _ in messages] == ["<", "<", "<", ">", "<", ">", "<"]
    last_request = None
    for direction, text in messages:
        message = json_format.Parse(text, pb.RefereeMessage() if direction == "<" else pb.BotMessage())
        if direction == "<":  # what the relay prints: camelCase, nothing at its default (but optional fields)
            assert json.loads(stdio.to_line(message)) == json.loads(text)
        if direction == "<" and message.WhichOneof("kind") == "request":
            last_request = message.request
        elif direction == ">":
            answer = message.action
            assert (answer.request_id, answer.game_id, answer.seat) == (
                last_request.request_id, last_request.game_id, last_request.seat)
            assert answer.name in last_request.legal_actions


def test_the_relays_line_limit_is_the_referees_message_limit():
    from referee.play.server import MAX_MESSAGE_BYTES

    assert stdio.MAX_LINE == MAX_MESSAGE_BYTES


# --- the config and the launcher ------------------------------------------------------------


def write_config(tmp_path: Path, bot: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(f'[tournament]\ngame = "aegis"\n\n[[bots]]\nname = "a"\ncommand = "python x.py"\n\n{bot}\n')
    return path


def test_protocol_is_read_from_a_bots_table(tmp_path):
    config = load(write_config(tmp_path, '[[bots]]\nname = "b"\ncommand = "./mybot"\nprotocol = "stdio"'))
    assert [b.protocol for b in config.bots] == ["grpc", "stdio"]


@pytest.mark.parametrize("bot, message", [
    ('[[bots]]\nname = "b"\ncommand = "./mybot"\nprotocol = "json"', "t.toml:11: bot 'b': protocol must be one of "
                                                                      "grpc, stdio, got 'json'"),
    ('[[bots]]\nname = "b"\nexternal = true\ntoken = "t"\nprotocol = "stdio"', "t.toml:12: bot 'b' is external: it "
                                                                               "connects by itself, over gRPC"),
])
def test_a_bad_protocol_is_refused_with_its_line(tmp_path, bot, message):
    with pytest.raises(ConfigError) as err:
        load(write_config(tmp_path, bot))
    assert str(err.value).startswith(f"{tmp_path}/{message}")


def test_a_stdio_bot_is_started_under_the_relay_with_its_command_as_it_is():
    spec = BotSpec("mine", ("python", "bot.py", "--deep"), protocol="stdio")
    launcher = Launcher([spec], "127.0.0.1:5000", {"mine": "t"}, {"mine": 3}, None)
    assert launcher.command(launcher.bots["mine"]) == [
        *STDIO_RELAY, "--address", "127.0.0.1:5000", "--name", "mine", "--token-fd", "3", "--capacity", "3",
        "--", sys.executable, "bot.py", "--deep"]


def test_a_stdio_bots_own_program_is_visible_in_its_sandbox(tmp_path, monkeypatch):
    """Under the relay the sandbox's program is the referee's interpreter: the installation of the
    bot's own program, found on PATH, must be bound too (here one outside /usr, as /opt/node/bin/node
    would be). A program named by a path must lie in the bot's own files (docs/tournaments.md)."""
    from referee.hosting import sandbox

    program = tmp_path / "opt" / "mylang" / "bin" / "mylang"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{program.parent}:{os.environ['PATH']}")
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    args = sandbox.bwrap_command([*STDIO_RELAY, "--", "mylang", "bot.ml"], cwd=bot_dir, socket_dir=None,
                                 programs=["mylang"])
    binds = {args[i + 1] for i, arg in enumerate(args) if arg == "--ro-bind"}
    assert str((tmp_path / "opt" / "mylang").resolve()) in binds
    without = sandbox.bwrap_command([*STDIO_RELAY, "--", "mylang", "bot.ml"], cwd=bot_dir, socket_dir=None)
    assert str((tmp_path / "opt" / "mylang").resolve()) not in {without[i + 1] for i, a in enumerate(without)
                                                                if a == "--ro-bind"}
    with pytest.raises(sandbox.PathRefused, match="outside its directory"):
        sandbox.bwrap_command([*STDIO_RELAY, "--", str(program), "bot.ml"], cwd=bot_dir, socket_dir=None,
                              programs=[str(program)])


# --- the same treatment as over gRPC, in the sandbox -------------------------------------------

CLOCK = Clock(decision_s=1.5, bank_s=1.0)  # a hang costs 2.5 s; a loaded machine, none of the others
SEED = 4242
#: mode: (its arguments, the fault kinds it must be charged with). A flood's junk is charged as it
#: arrives, to an open request or as a stray, until past the allowance of messages that answer no
#: request its session is closed; when depends on timing: for it only the kinds count.
CASES = {
    "random": ([], set()),
    "crash": (["--after", "3"], {"disconnect"}),
    "hang": (["--after", "2"], {"timeout"}),
    "illegal": (["--after", "1"], {"illegal"}),
    "garbage": (["--after", "1"], {"malformed"}),
    "flood": (["--after", "2", "--flood", "200"], {"wrong_id", "disconnect"}),
    "huge": (["--after", "2"], {"disconnect"}),
}


def twins() -> list[BotSpec]:
    """For each case its gRPC bot and its stdio twin, and their opponent, a deterministic bot."""
    bots = [BotSpec("opponent", ("python", "-m", "sample_bots.heuristic"), str(ROOT))]
    for mode, (args, _) in CASES.items():
        common = ("--mode", mode, "--seed", "7", *args)
        bots.append(BotSpec(f"grpc-{mode}", ("python", "tests/bots/proto_bot.py", *common), str(ROOT)))
        bots.append(BotSpec(f"stdio-{mode}", ("python", "tests/bots/stdio_bot.py", *common), str(ROOT),
                            protocol="stdio"))
    return bots


@pytest.fixture(scope="module")
def twin_matches(tmp_path_factory):
    """Every bot of twins() against the opponent, all at once, on the same deals (Aegis)."""
    from referee.play.executors import LocalExecutor

    require_sandbox()
    bots = twins()
    logs = tmp_path_factory.mktemp("stdio-twins")
    capacity = {b.name: 1 for b in bots} | {"opponent": len(bots) - 1}

    async def main():
        async with LocalExecutor("aegis", {}, CLOCK, bots, capacity, log_dir=logs, sandbox="bwrap") as executor:
            played = await asyncio.gather(*(executor.play(Seating(0, SEED, (b.name, "opponent")))
                                            for b in bots[1:]))
            return {p.seating.lineup[0]: p for p in played}, executor.sandbox.kind

    played, kind = asyncio.run(main())
    assert kind == "bwrap"
    return played, logs


def faults(played) -> list[tuple[int, str, int]]:
    return [(f["seat"], f["kind"], f["decision"]) for f in played.record["meta"]["faults"]]


@pytest.mark.e2e
@pytest.mark.parametrize("mode", sorted(CASES))
def test_a_stdio_bot_misbehaving_is_treated_as_a_grpc_bot_doing_the_same(twin_matches, mode):
    played, logs = twin_matches
    grpc_bot, stdio_bot = played[f"grpc-{mode}"], played[f"stdio-{mode}"]
    log = (logs / f"stdio-{mode}.log").read_text(errors="replace")
    for bot in (stdio_bot, grpc_bot):
        kinds = {kind for _, kind, _ in faults(bot)}
        if mode == "flood":  # its junk lands on open requests (wrong_id) or past the allowance of strays
            # (disconnect): which, as it arrives; the session closing is the chatter test's, below
            assert "wrong_id" in kinds and kinds <= CASES[mode][1], faults(bot)
        else:
            assert kinds == CASES[mode][1], faults(bot)
    assert all(seat == 0 for seat, _, _ in faults(stdio_bot))  # the opponent (seat 1) is never charged
    if mode != "flood":
        assert stdio_bot.record["actions"] == grpc_bot.record["actions"], log[-2000:]
        assert faults(stdio_bot) == faults(grpc_bot), log[-2000:]
        assert stdio_bot.results["scores"] == grpc_bot.results["scores"]
    if mode == "garbage":  # the line is quoted, escaped and capped: in the fault's detail (its head) and the log
        detail = next(f["detail"] for f in stdio_bot.record["meta"]["faults"])
        assert "(stdio) line 2 is not a BotMessage in proto3 JSON: 'XYZZY 42, not JSON \\" in detail, detail
        assert "x1b[31m####" in detail  # the escape, escaped (and again by the engine's repr)
        assert "(300 characters, 37 kept): Failed to load JSON: " in detail and "\x1b" not in detail
        assert ("stdio relay: line 2 is not a BotMessage in proto3 JSON: 'XYZZY 42, not JSON \\x1b[31m" + "#" * 173
                + "...' (300 characters, 197 kept) (Failed to load JSON: ") in log, log[-2000:]
    if mode == "huge":
        assert "longer than 256 KB: the session is closed" in log


@pytest.mark.e2e
def test_a_stdio_bot_that_chatters_on_stdout_loses_its_decisions_then_its_session_and_holds_up_nobody(
        twin_matches, tmp_path):
    """Debug text written to stdout without end: each open request is answered malformed by the next
    line, and a line with none open answers nothing, as a gRPC message answering no request: past the
    allowance of those the session is closed (its seat: disconnect, with the reason). The game goes on
    at the referee's pace and the relay's log stays short."""
    from referee.play.executors import LocalExecutor

    bots = [BotSpec("opponent", ("python", "-m", "sample_bots.heuristic"), str(ROOT)),
            BotSpec("chatter", ("python", "tests/bots/stdio_bot.py", "--mode", "chatter"), str(ROOT),
                    protocol="stdio")]

    async def main():
        async with LocalExecutor("aegis", {}, CLOCK, bots, {"opponent": 1, "chatter": 1}, log_dir=tmp_path,
                                 sandbox="bwrap") as executor:
            return await executor.play(Seating(0, SEED, ("chatter", "opponent")))

    played = asyncio.run(main())
    control = twin_matches[0]["grpc-random"]
    kinds = {kind for _, kind, _ in faults(played)}
    assert kinds <= {"malformed", "wrong_id", "disconnect"} and "disconnect" in kinds, faults(played)
    closed = next(f["detail"] for f in played.record["meta"]["faults"] if f["kind"] == "disconnect")
    assert "closed by the referee: 17 messages that answer no request" in closed, closed
    assert all(seat == 0 for seat, _, _ in faults(played))
    assert played.record["meta"]["decision_times"][0]["slowest_s"] < CLOCK.decision_s
    assert len((tmp_path / "chatter.log").read_bytes()) < 200_000
    assert played.results["faults"][1] == control.results["faults"][1]  # the opponent: no fault


def test_referee_match_takes_stdio_bots_and_refuses_a_name_given_twice(invoke):
    assert invoke("match", "aegis").exit_code == 2
    assert "give the bots to play: --bot NAME=COMMAND or --stdio-bot NAME=COMMAND" in invoke("match", "aegis").output
    twice = invoke("match", "aegis", "--stdio-bot", "a=./x", "--bot", "a=./y")
    assert twice.exit_code == 2 and "the bot name 'a' is given twice" in twice.output
