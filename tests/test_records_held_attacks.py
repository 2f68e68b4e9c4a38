"""Nothing released early (issue 15; docs/security.md "Records and spectators").

Whole duplicate deal sets of Aegis, played by ``referee tournament --server`` on a real
``referee serve``, between a hostile bot (tests/bots/hostile/attacker.py, attack
``spectate``: it lists the server's games and watches each, again and again, with no
token and guessed ones) and a victim; beside them a spectator client of the test's own
watches every match from its start. The seat-swapped twin of a match is played on the
same deals: a record (seed, decks, every hand) given out before the twin is over gives
the twin's cards away. So, for every record anyone got, the server's own listing taken
the moment it came must show every match of its deal set (with ``release = "end"``:
every match) finished; before it, nothing carried the deal set's seed or a deck, and
the events were exactly the match's public ones. A CONTROL run, with the attacker
playing honestly, must give the victim the same results.

The worst case is the server of ``--public-spectators`` (anyone may watch): there the
attacker sees its matches' public events and results, and must still get no record
before its deal set is over. With a spectator token, the attacker gets nothing at all.
The bots run without the sandbox here: what is tested is the wire, which a bot elsewhere
(an external one) reaches the same way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from harness import ROOT, write_tournament
from test_sandbox_attacks import HOSTILE, victim_results

from referee import records
from referee.model import deal_seed
from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

pytestmark = pytest.mark.e2e

SEED = 4_242_001
DEAL_SETS = 2
ADMIN, SPECTATOR = "admin-" + uuid.uuid4().hex, "watch-" + uuid.uuid4().hex
TOKENS = {"attacker": "attacker-" + uuid.uuid4().hex, "victim": "victim-" + uuid.uuid4().hex}


@dataclass
class Watched:
    """One match as the spectator client saw it: each message with its arrival, and the
    server's listing taken the moment the record came."""

    game_id: str
    messages: list[pb.SpectatorMessage] = field(default_factory=list)
    listing_at_record: list[tuple[str, bool]] | None = None
    error: str | None = None


class Spectator:
    """Lists the server's games every 50 ms and watches each new one to its record."""

    def __init__(self, address: str, token: str):
        self.channel = grpc.insecure_channel(address)
        self.stub = pb_grpc.RefereeStub(self.channel)
        self.token = token
        self.watched: dict[str, Watched] = {}
        self.threads: list[threading.Thread] = []
        self.stop = threading.Event()
        self.poller = threading.Thread(target=self._poll, daemon=True)
        self.poller.start()

    def listing(self) -> list[tuple[str, bool]]:
        return [(g.game_id, g.finished) for g in self.stub.ListGames(pb.ListGamesRequest(token=self.token),
                                                                     timeout=10).games]

    def _poll(self) -> None:
        while not self.stop.is_set():
            try:
                games = self.listing()
            except grpc.RpcError:
                games = []
            for game_id, _ in games:
                if game_id not in self.watched:
                    self.watched[game_id] = Watched(game_id)
                    thread = threading.Thread(target=self._watch, args=(self.watched[game_id],), daemon=True)
                    thread.start()
                    self.threads.append(thread)
            time.sleep(0.05)

    def _watch(self, w: Watched) -> None:
        try:
            for message in self.stub.Spectate(pb.SpectateRequest(game_id=w.game_id, token=self.token), timeout=300):
                if message.WhichOneof("kind") == "record_json":
                    w.listing_at_record = self.listing()
                w.messages.append(message)
        except grpc.RpcError as err:
            w.error = f"{err.code().name}: {err.details()}"

    def close(self) -> dict[str, Watched]:
        """Stop listing; wait for the streams (every record is released by the run's end)."""
        self.stop.set()
        self.poller.join(10)
        for thread in self.threads:
            thread.join(30)
        self.channel.close()
        return self.watched


@dataclass
class Run:
    returncode: int
    stderr: str
    log: str
    victim: dict
    watched: dict[str, Watched]

    @property
    def reports(self) -> list[dict]:
        return [json.loads(line.split("ATTACK ", 1)[1]) for line in self.log.splitlines() if "ATTACK {" in line]

    def of(self, attack: str) -> list[dict]:
        return [r for r in self.reports if r["attack"] == attack]


def serve(tmp: Path, *args: str) -> tuple[subprocess.Popen, str]:
    log_path = tmp / "serve.log"
    tokens = [arg for name, token in TOKENS.items() for arg in ("--token", f"{name}={token}")]
    server = subprocess.Popen([sys.executable, "-m", "referee", "serve", "--port", "0", *tokens, *args],
                              stderr=open(log_path, "w"), stdout=subprocess.DEVNULL,
                              env={**os.environ, "REFEREE_ADMIN_TOKEN": ADMIN})
    for _ in range(400):
        found = re.search(r"listening on (\S+)", log_path.read_text())
        if found:
            return server, found.group(1)
        time.sleep(0.05)
    server.kill()
    raise AssertionError(log_path.read_text())


def tournament(tmp: Path, attack: list[str], serve_args: list[str], release: str = "deal-set",
               spectator_token: str = "") -> Run:
    """``referee serve`` (``serve_args``) and ``referee tournament --server`` on it: the attacker
    (``attack``: its arguments) and the victim, DEAL_SETS deal sets one match at a time, with
    the spectator client watching throughout."""
    tmp.mkdir(parents=True, exist_ok=True)
    command = ["python", str(HOSTILE / "attacker.py"), "--victim", "victim", *attack]
    tables = f"""
[limits]
sandbox = "none"

[[bots]]
name = "attacker"
token = "{TOKENS['attacker']}"
command = {json.dumps(command)}

[[bots]]
name = "victim"
command = ["python", "-m", "sample_bots.heuristic"]  # no randomness: the ids at the server differ by run
cwd = "{ROOT}"
token = "{TOKENS['victim']}"

[clock]
decision_ms = 5000
bank_ms = 30000
"""
    path = write_tournament(tmp / "t.toml", tables, game="aegis", deal_sets=DEAL_SETS, seed=SEED, concurrency=1,
                            output="out", extra=f'release = "{release}"')
    server, address = serve(tmp, *serve_args)
    spectator = Spectator(address, spectator_token)
    try:
        done = subprocess.run([sys.executable, "-m", "referee", "tournament", str(path), "--server", address,
                               "--quiet", "--bootstrap", "20"], cwd=tmp, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "REFEREE_ADMIN_TOKEN": ADMIN})
        time.sleep(0.5)  # the last listing
        watched = spectator.close()
    finally:
        server.terminate()
        server.wait(10)
    log_path = tmp / "out" / "logs" / "attacker.log"
    return Run(done.returncode, done.stderr, log_path.read_text(errors="replace") if log_path.exists() else "",
               victim_results(tmp / "out"), watched)


@pytest.fixture(scope="module")
def control(tmp_path_factory) -> Run:
    run = tournament(tmp_path_factory.mktemp("control"), ["--honest"], ["--spectator-token", SPECTATOR],
                     spectator_token=SPECTATOR)
    assert run.returncode == 0, run.stderr
    assert len(run.victim["matches"]) == 2 * DEAL_SETS, run.victim
    return run


def deal_set_of(game_id: str) -> int:
    """The deal set of a tournament's match id at the server (RUN/DEALSET:LINEUP)."""
    return int(game_id.split("/", 1)[1].split(":", 1)[0])


def assert_nothing_early(game_id: str, listing: list[tuple[str, bool]], release: str) -> None:
    """The listing taken when ``game_id``'s record came shows every match it could give away
    over: its deal set's (both seatings), or with release = "end" every match."""
    k = deal_set_of(game_id)
    twins = [(g, finished) for g, finished in listing if release == "end" or deal_set_of(g) == k]
    expected = 2 * DEAL_SETS if release == "end" else 2
    assert len(twins) == expected and all(finished for _, finished in twins), (game_id, listing)


def assert_spectator_learned_nothing_early(run: Run, release: str) -> None:
    """Every match was watched from its start to its released record; before the record, no
    message carried the deal set's seed or a deck, and the events were the public ones."""
    assert len(run.watched) == 2 * DEAL_SETS, list(run.watched)
    for game_id, w in run.watched.items():
        assert w.error is None, w.error
        kinds = [m.WhichOneof("kind") for m in w.messages]
        assert kinds[0] == "game_start" and kinds[-1] == "record_json", kinds
        assert kinds.count("record_json") == 1 and kinds.index("game_end") < kinds.index("record_json")
        assert_nothing_early(game_id, w.listing_at_record, release)
        record = json.loads(w.messages[-1].record_json)
        seed = deal_seed(SEED, deal_set_of(game_id))
        assert record["seed"] == seed
        before = b"".join(m.SerializeToString() for m in w.messages[:-1])
        assert str(seed).encode() not in before and b"decks" not in before
        events = [(m.event.kind, json.loads(m.event.data_json)) for m in w.messages if m.WhichOneof("kind") == "event"]
        assert events == [(e.kind, e.data) for e in records.replay(record).state.public_events()]


def test_with_public_spectators_a_bot_watching_its_matches_gets_no_record_before_its_deal_set_is_over(
        tmp_path, control):
    run = tournament(tmp_path, ["--attack", "spectate"], ["--public-spectators"])
    assert run.returncode == 0, run.stderr[-2000:]
    reports = run.of("spectate")
    assert reports, f"the attack did not report; log:\n{run.log[-3000:]}"
    held = run.of("spectate-held")
    assert held and held[0]["kinds"][-2:] == ["game_end", "record_held"], held  # it asked while the twin played
    got = {game_id: r for report in reports for game_id, r in report["records"].items()}
    assert len(got) >= 1, reports[-1]  # once released, the records do come: the attack can see them
    for game_id, r in got.items():
        assert_nothing_early(game_id, [tuple(g) for g in r["listing"]], "deal-set")
        assert r["seed"] == deal_seed(SEED, deal_set_of(game_id))
    assert_spectator_learned_nothing_early(run, "deal-set")
    assert run.victim == control.victim, "the victim's results differ from the control run's"


def test_with_a_spectator_token_a_bot_can_neither_list_nor_watch_and_release_end_holds_every_record(
        tmp_path, control):
    run = tournament(tmp_path, ["--attack", "spectate"], ["--spectator-token", SPECTATOR], release="end",
                     spectator_token=SPECTATOR)
    assert run.returncode == 0, run.stderr[-2000:]
    reports = run.of("spectate")
    assert reports, f"the attack did not report; log:\n{run.log[-3000:]}"
    for report in reports:
        assert report["listed"] == [] and report["records"] == {}, report
        assert set(report["refused"].values()) == {"UNAUTHENTICATED", "PERMISSION_DENIED"}, report["refused"]
    assert_spectator_learned_nothing_early(run, "end")
    assert run.victim == control.victim, "the victim's results differ from the control run's"
