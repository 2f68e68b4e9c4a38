"""Weak and broken told apart (issue 34, items 2 and 8): bots that fail as entrants' bots did in a
ten-entry competition, each a real process under the real launcher, and what the referee says of each.

- a Python-kit bot whose ``decide`` raises on every decision: an ``error`` fault each time, in the
  gauntlet's and the SPRT's outputs, the standings (text, JSON) and the report;
- a bot that drops the launcher's arguments: its log says where it tried to connect, and why;
- a stdio bot entered as a gRPC bot (it ends at once, exit code 0): the error says protocol = "stdio";
- a gRPC bot entered as a stdio bot, and a stdio bot that answers nothing: the relay tells which in
  the log (it read nothing of its stdin / it read it and wrote nothing).

(A stdio bot writing a line that is not a message: tests/test_stdio.py, the twins' "garbage" case.)
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from harness import ROOT, require_sandbox, run_cli, write_tournament

from referee.model import BotSpec, Seating
from referee.results.store import Store
from referee.runner import Clock
from referee.view import report

#: a bot on the Python kit whose decide raises on every decision (an index past the end)
BROKEN = """from referee.bot import run_bot


def decide(observation, legal, game):
    return legal[len(legal)]


run_bot(decide, default_name="broken")
"""
#: a bot that gives run_bot an argument list of its own: the launcher's --address and the rest are lost
ARGLESS = """from referee.bot import run_bot

run_bot(lambda observation, legal, game: 0, argv=[], default_name="argless")
"""
#: a stdio bot that reads every message and answers none
MUTE = """import sys

for line in sys.stdin:
    pass
"""
RANDOM = ("python", "-m", "sample_bots.random")
FAULTS = "faults t/i/m/w/d/n/e"


def bot_dir(tmp_path: Path, name: str, text: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "bot.py").write_text(text)
    return directory


def error_cell(line: str) -> int:
    """The error count of a fault cell ("0/0/0/0/0/0/119"), the last number of a standings line."""
    cell = line.split()[-1]
    assert cell.count("/") == 6, line
    return int(cell.rsplit("/", 1)[1])


@pytest.mark.e2e
def test_a_kit_bot_whose_decide_raises_shows_its_errors_in_the_gauntlet_standings_and_report(tmp_path):
    broken = bot_dir(tmp_path, "broken", BROKEN)
    tables = (f'\n[clock]\ndecision_ms = 2000\nbank_ms = 10000\n\n[gauntlet]\ncandidate = "broken"\n'
              f'\n[[bots]]\nname = "broken"\ncommand = ["python", "bot.py"]\ncwd = "{broken}"\n'
              f'\n[[bots]]\nname = "random"\ncommand = {json.dumps(list(RANDOM))}\ncwd = "{ROOT}"\n')
    config = write_tournament(tmp_path / "gauntlet.toml", tables, game="aegis", deal_sets=1, seed=7, concurrency=1)
    done = run_cli("gauntlet", config)
    assert done.returncode in (0, 1), done.stderr
    lines = {line.split()[1]: line for line in done.stdout.splitlines() if line.split()[1:2] in (["broken"], ["random"])
             and line.split()[0].isdigit()}
    assert FAULTS in done.stdout and "errors of its own code (a decision that raised)" in done.stdout
    errors = error_cell(lines["broken"])
    assert errors > 0 and error_cell(lines["random"]) == 0
    assert lines["broken"].split()[-1] == f"0/0/0/0/0/0/{errors}"  # no other fault: only its own errors

    out = tmp_path / "out"
    ratings = json.loads(run_cli("ratings", out, "--format", "json", "--bootstrap", "0").stdout)
    faults = {line["name"]: line["faults"] for line in ratings["standings"]}
    assert faults["broken"] == {"timeout": 0, "illegal": 0, "malformed": 0, "wrong_id": 0, "disconnect": 0,
                                "no_session": 0, "error": errors}
    assert not any(faults["random"].values())
    store = Store(out, create=False)
    rows = list(store.matches())
    details = [f["detail"] for row in rows for f in store.record(row.key)["meta"]["faults"]]
    store.close()
    assert details and all(d == "the bot's own code failed: 'IndexError: list index out of range (at bot.py:5 in "
                                 "decide)'" for d in details)
    page = report.write_report(out, bootstrap=0).read_text()
    assert re.search(rf'<tr data-bot="broken">.*?<td class="faults" [^>]*data-error="{errors}"[^>]*>'
                     rf'0/0/0/0/0/0/{errors}</td>', page)
    assert "broken (seat 0): error " in page and FAULTS in page
    log = (out / "logs" / "broken.log").read_text()
    assert log.count("Traceback (most recent call last)") == 3  # the first three; then a line each
    assert log.count("decide raised") == errors
    assert re.search(r"--- match \S+ seat \d: ends \(score -?\d+, place \d, faults error \d+\)", log)


@pytest.mark.e2e
def test_a_kit_bot_whose_decide_raises_shows_its_errors_in_the_sprt_output(tmp_path):
    bot_dir(tmp_path, "broken", BROKEN)
    done = run_cli("sprt", "--game", "aegis", "--candidate", "broken=python bot.py", "--baseline",
                   f"random={' '.join(RANDOM)}", "--max-units", "1", "--seed", "3", "--format", "json",
                   cwd=tmp_path / "broken")
    assert done.returncode == 3, done.stderr  # no verdict at the cap of one unit
    result = json.loads(done.stdout)
    assert result["faults"]["broken"].get("error", 0) > 0 and not result["faults"]["random"]
    text = run_cli("sprt", "--game", "aegis", "--candidate", "broken=python bot.py", "--baseline",
                   f"random={' '.join(RANDOM)}", "--max-units", "1", "--seed", "3", cwd=tmp_path / "broken").stdout
    assert re.search(rf"{FAULTS}: broken 0/0/0/0/0/0/[1-9]\d*, random 0/0/0/0/0/0/0;", text), text


def start(bots: list[BotSpec], lineups: list[tuple[str, ...]], log_dir: Path, startup_s: float = 20.0,
          clock: Clock = Clock(1.0, 1.0)):
    """Play ``lineups`` (Aegis, one deal set) with these bots launched in the sandbox; each seat's
    capacity is its count over the line-ups. Returns the played matches."""
    from referee.play.executors import LocalExecutor

    capacity = {b.name: sum(lineup.count(b.name) for lineup in lineups) or 1 for b in bots}

    async def main():
        async with LocalExecutor("aegis", {}, clock, bots, capacity, log_dir=log_dir, sandbox="bwrap",
                                 startup_s=startup_s) as executor:
            return await asyncio.gather(*(executor.play(Seating(0, 11, lineup)) for lineup in lineups))

    return asyncio.run(main())


@pytest.mark.e2e
def test_a_bot_that_drops_the_launchers_arguments_says_where_it_tried_to_connect(tmp_path):
    from referee.play.executors import BotsNotReady

    require_sandbox()  # no network in it: the default address answers nobody, whatever the machine runs
    bots = [BotSpec("argless", ("python", "bot.py"), str(bot_dir(tmp_path, "argless", ARGLESS))),
            BotSpec("random", RANDOM, str(ROOT))]
    with pytest.raises(BotsNotReady) as caught:
        start(bots, [("argless", "random")], tmp_path / "logs", startup_s=4)
    message = str(caught.value)
    assert message.startswith("bot argless did not connect within 4 s (its process runs: it connects elsewhere "
                              "than the --address it is given, or it takes longer to start than startup_s): "), message
    assert "argless: cannot reach the referee at 127.0.0.1:50051 (connection: UNAVAILABLE" in message
    assert "argless: no --address given, so it tried the default" in message  # the log's tail, in the error


@pytest.mark.e2e
def test_a_stdio_bot_entered_as_a_grpc_bot_is_told_about_protocol_stdio(tmp_path):
    from referee.play.executors import BotsNotReady

    require_sandbox()
    bots = [BotSpec("stdio", ("python", "-m", "sample_bots.stdio_random"), str(ROOT)),
            BotSpec("random", RANDOM, str(ROOT))]
    with pytest.raises(BotsNotReady) as caught:
        start(bots, [("stdio", "random")], tmp_path / "logs")
    assert str(caught.value).splitlines()[0] == (
        'bot stdio ended before it connected (exit code 0); a bot that ends at once with exit code 0 is often a '
        'stdio bot, which finds its stdin empty: enter it with protocol = "stdio" in its [[bots]] table '
        '(referee match: --stdio-bot): no match was played')


@pytest.mark.e2e
def test_a_grpc_bot_entered_as_stdio_and_a_mute_stdio_bot_are_told_apart_in_their_logs(tmp_path):
    require_sandbox()
    logs = tmp_path / "logs"
    bots = [BotSpec("grpc", RANDOM, str(ROOT), protocol="stdio"),
            BotSpec("mute", ("python", "bot.py"), str(bot_dir(tmp_path, "mute", MUTE)), protocol="stdio"),
            BotSpec("random", RANDOM, str(ROOT))]
    played = start(bots, [("grpc", "random"), ("mute", "random")], logs, clock=Clock(0.3, 0.3))
    for match in played:
        kinds = [(f["seat"], f["kind"]) for f in match.record["meta"]["faults"]]
        assert kinds == [(0, "timeout")], kinds  # it answered nothing: its first decision timed out
    grpc_log = (logs / "grpc.log").read_text()
    assert re.search(r"stdio relay: request \d+ \(0:m[0-9a-f]{16} seat 0\) timed out, and the bot has written "
                     r"nothing on its stdout and read nothing of its stdin \(the \d+ bytes of the referee's messages "
                     r"are still in the pipe\): it does not speak stdio\. A bot that connects to the referee itself "
                     r"\(gRPC, to the --address it is given\) is entered without protocol = \"stdio\"", grpc_log)
    assert "cannot reach the referee at 127.0.0.1:50051" in grpc_log  # the kit, under the relay: no --address
    mute_log = (logs / "mute.log").read_text()
    assert re.search(r"stdio relay: request \d+ \(0:m[0-9a-f]{16} seat 0\) timed out, and the bot has written nothing "
                     r"on its stdout, though it read (\d+) of the \1 bytes of the referee's messages on its stdin: a "
                     r"stdio bot answers each request with one line of JSON on stdout, and flushes it", mute_log)
    assert mute_log.count("stdio relay: ") == 1 and grpc_log.count("stdio relay: ") == 1  # said once
