"""The competition server in one process (Starlette's test client over the real coordinator): an
entrant registers with an invite, uploads, sees its version built, validated and ranked, and watches
a replay; a failed build is shown to its owner and to nobody else; the attacks on the site (CSRF,
another entrant's logs and submissions by address, a held replay by address, script in names, login
guessing) are refused. The coordinator's checks and rounds are called here one at a time, as its loop
calls them."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import re
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from harness import PASSWORD, competition_file, require_sandbox, require_server

require_server()

from starlette.testclient import TestClient  # noqa: E402

from referee.competition import ladder  # noqa: E402
from referee.competition.ladder import Phase  # noqa: E402
from referee.hosting import build as tbuild  # noqa: E402
from referee.model import BotProtocol, SandboxMode  # noqa: E402
from referee.results import history  # noqa: E402
from referee.results.store import Store  # noqa: E402
from referee.server import auth  # noqa: E402
from referee.server import main as server_main  # noqa: E402
from referee.server.app import create_app  # noqa: E402
from referee.server.coordinator import Coordinator  # noqa: E402
from referee.server.db import Status  # noqa: E402

pytestmark = pytest.mark.e2e

COMPETITION = competition_file("Test ladder",
                               extra='[finals]\nstop = "order"\nmax_deal_sets = 2\n\n[uploads]\nper_hour = 20\n')

GOOD_BOT = {"bot.toml": 'command = ["python", "bot.py"]\nprotocol = "grpc"\n',
            "bot.py": "from sample_bots.random import main\nmain()\n"}


def zipped(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return out.getvalue()


def tarred(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


class World:
    def __init__(self, tmp_path: Path, text: str = COMPETITION) -> None:
        path = tmp_path / "competition.toml"
        path.write_text(text)
        self.spec = ladder.load(path)
        self.db = server_main.open_db(self.spec)
        self.organiser_file = server_main.ensure_organiser(self.db, self.spec.state)
        self.coordinator = Coordinator(self.spec, self.db)
        self.app = create_app(self.coordinator, server_main.secret_of(self.db))
        self.coordinator.move(Phase.OPEN)

    def client(self) -> TestClient:
        return TestClient(self.app, base_url="http://127.0.0.1")

    def invite(self, team: str | None = None) -> str:
        from referee.server import auth
        code = auth.new_invite()
        self.db.add_invite(code, team)
        return code

    def check_all(self) -> None:
        while self.coordinator.check_next():
            pass


def csrf(client: TestClient, page: str = "/login") -> str:
    text = client.get(page).text
    found = re.search(r'name="csrf" value="([^"]+)"', text) or re.search(r'csrf=([A-Za-z0-9_\-]+)"', text)
    assert found, text[:500]
    return found.group(1)


def register(world: World, name: str, team: str | None = None, invite: str | None = None
             ) -> tuple[TestClient, str]:
    """A browser that registered ``name`` (logged in), and the API token the page showed once."""
    client = world.client()
    reply = client.post("/register", data={"csrf": csrf(client, "/register"), "invite": invite or world.invite(),
                                           "name": name, "password": PASSWORD, "team": team or ""})
    assert reply.status_code == 200, reply.text[:800]
    token = re.search(r"Your API token \(shown once, keep it secret\): ([A-Za-z0-9_\-]+)", reply.text)
    assert token, reply.text[:800]
    return client, token.group(1)


def upload(client: TestClient, data: bytes, filename: str = "bot.zip", **fields: str) -> str:
    token = csrf(client, "/me")
    reply = client.post(f"/upload?csrf={token}", files={"file": (filename, data)}, data=fields)
    return reply.text


def alice_and_bob_accepted(world: World) -> tuple[TestClient, TestClient]:
    """Two entrants registered, each with the good bot uploaded and checked (accepted: both in play)."""
    alice, _ = register(world, "alice")
    bob, _ = register(world, "bob")
    for client in (alice, bob):
        upload(client, zipped(GOOD_BOT))
    world.check_all()
    return alice, bob


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    yield w
    w.db.close()


def test_an_entrant_registers_uploads_and_is_validated_ranked_and_replayed(world: World) -> None:
    alice, _ = register(world, "alice")
    bob, bob_token = register(world, "bob")
    assert "uploaded: submission" in upload(alice, zipped(GOOD_BOT))
    reply = bob.post("/api/submit", files={"file": ("bot.tar.gz", tarred(GOOD_BOT))},
                     headers={"Authorization": f"Bearer {bob_token}"})
    assert reply.status_code == 201, reply.text
    world.check_all()
    subs = {s.name: s for s in world.db.submissions()}
    assert subs["alice"].status == Status.ACCEPTED, subs["alice"].validation_log
    assert subs["bob"].status == Status.ACCEPTED
    assert subs["alice"].version == subs["bob"].version  # the same files, zip or tar: one content-addressed version
    me = alice.get("/me").text
    assert "4 validation match(es) against random, heuristic" in me and "accepted" in me
    store = Store(Path(subs["alice"].validation_dir), create=False)
    try:  # a gauntlet: alice against each house bot, in each seat; no match between house bots
        lineups = sorted(row.lineup for row in store.matches())
    finally:
        store.close()
    assert lineups == [("alice", "heuristic"), ("alice", "random"), ("heuristic", "alice"), ("random", "alice")]

    played = world.coordinator.ladder_round()
    assert played > 0
    board = alice.get("/").text
    assert 'data-bot="alice"' in board and 'data-bot="bob"' in board  # both ranked
    api = alice.get("/api/leaderboard").json()
    assert {line["name"] for line in api["standings"]["standings"]} >= {"alice", "bob"}

    matches = world.client().get("/matches").text  # anonymous: released replays
    links = re.findall(r'href="(/match/ladder/\d+)"', matches)
    assert links, matches[:1000]
    replay = world.client().get(links[0])
    assert replay.status_code == 200 and 'id="replay-data"' in replay.text and "every hand shown" in replay.text
    entry = world.client().get("/entry/alice").text
    assert subs["alice"].short in entry


def test_a_failed_build_is_shown_to_its_owner_and_nobody_else(world: World) -> None:
    carol, carol_token = register(world, "carol")
    dave, dave_token = register(world, "dave")
    broken = {"bot.toml": 'command = ["python", "bot.py"]\nbuild = ["sh", "-c", "echo compiling; '
                          'echo secret-compiler-error-17 >&2; exit 3"]\n', "bot.py": "print('hi')\n"}
    upload(carol, zipped(broken))
    world.check_all()
    sub = world.db.submissions("carol")[0]
    assert sub.status == Status.FAILED and "build failed" in (sub.reason or "")
    mine = carol.get("/me").text
    assert "secret-compiler-error-17" in mine and "exit code 3" in mine  # its owner sees why
    assert "secret-compiler-error-17" not in dave.get("/me").text  # another entrant does not
    assert "secret-compiler-error-17" not in world.client().get("/").text
    theirs = dave.get(f"/api/submission/{sub.id}", headers={"Authorization": f"Bearer {dave_token}"})
    assert theirs.status_code == 404
    own = carol.get(f"/api/submission/{sub.id}", headers={"Authorization": f"Bearer {carol_token}"}).json()
    assert own["status"] == "failed" and "secret-compiler-error-17" in own["build_log"]


def test_a_bot_that_faults_in_validation_is_refused_with_its_log(world: World) -> None:
    erin, _ = register(world, "erin")
    crashing = {"bot.toml": 'command = ["python", "bot.py"]\n',
                "bot.py": "import sys\nprint('about to crash <b>here</b>', flush=True)\nsys.exit(7)\n"}
    upload(erin, zipped(crashing))
    world.check_all()
    sub = world.db.submissions("erin")[0]
    assert sub.status == Status.FAILED and "validation failed" in (sub.reason or ""), sub.validation_log
    page = erin.get("/me").text
    assert "validation failed" in page
    assert "about to crash &lt;b&gt;here&lt;/b&gt;" in page  # what its bot printed, escaped: why it failed
    assert "did not start (ended before it connected (exit code 7))" in sub.validation_log
    assert str(world.spec.state) not in sub.validation_log  # none of the server's own paths
    assert sub.validation_log.count("about to crash") == 1  # its log's tail once, under its own heading


def test_forms_without_the_csrf_token_are_refused(world: World) -> None:
    alice, _ = register(world, "alice")
    for path, data in (("/logout", {}), ("/me/token", {}), ("/login", {"name": "alice", "password": PASSWORD})):
        assert alice.post(path, data=data).status_code == 403
        assert alice.post(path, data={**data, "csrf": "forged"}).status_code == 403
    reply = alice.post("/upload", files={"file": ("bot.zip", zipped(GOOD_BOT))})
    assert reply.status_code == 403 and world.db.submissions("alice") == []
    # another site's page posting with the victim's cookies cannot know the token: the same refusal
    other = world.client()
    assert other.post("/register", data={"csrf": csrf(alice, "/register"), "invite": world.invite(), "name": "mallory",
                                         "password": PASSWORD}).status_code == 403


def test_script_in_a_name_a_team_or_a_command_is_refused_or_escaped(world: World) -> None:
    client = world.client()
    for name, team in (("<script>alert(1)</script>", ""), ("zed", "<img src=x onerror=alert(1)>")):
        reply = client.post("/register", data={"csrf": csrf(client, "/register"), "invite": world.invite(),
                                               "name": name, "password": PASSWORD, "team": team})
        assert reply.status_code == 400
        assert "<script>alert" not in reply.text and "<img src=x" not in reply.text
    alice, _ = register(world, "alice")
    text = upload(alice, zipped({"bot.py": "print(1)\n"}), command="python bot.py <script>alert(1)</script>")
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;" in text


def test_logs_submissions_and_held_replays_by_address(world: World) -> None:
    alice, _ = alice_and_bob_accepted(world)
    mallory, mallory_token = register(world, "mallory")
    world.coordinator.ladder_round()
    store_numbers = re.findall(r'href="/log/ladder/(\d+)"', alice.get("/me").text)
    assert store_numbers
    n = store_numbers[0]
    assert alice.get(f"/log/ladder/{n}").status_code == 200
    assert mallory.get(f"/log/ladder/{n}").status_code == 404  # not her match: not her log
    assert world.client().get(f"/log/ladder/{n}", follow_redirects=False).status_code == 303
    for s in world.db.submissions():
        got = mallory.get(f"/api/submission/{s.id}", headers={"Authorization": f"Bearer {mallory_token}"})
        assert got.status_code == 404

    world.coordinator.move(Phase.FROZEN)
    world.coordinator.move(Phase.FINALS)
    world.coordinator.finals()
    anonymous = world.client()
    held = anonymous.get("/match/finals/1")
    assert held.status_code == 404 and "held" in held.text  # the finals' records: held until closed
    assert 'href="/match/finals/' not in anonymous.get("/matches").text
    mine = alice.get("/match/finals/1")
    assert mine.status_code == 200 and "as seen by" in mine.text  # her own seat's view of her own match
    organiser = world.client()
    password = re.search(r"password = (\S+)", world.organiser_file.read_text()).group(1)
    organiser.post("/login", data={"csrf": csrf(organiser), "name": "organiser", "password": password})
    assert "every hand shown" in organiser.get("/match/finals/1").text
    page = organiser.get("/organiser")
    assert page.status_code == 200 and 'id="org-phase">finals<' in page.text and "alice" in page.text
    assert alice.get("/organiser").status_code == 404 and anonymous.get("/organiser").status_code == 404
    world.coordinator.move(Phase.CLOSED)
    assert anonymous.get("/match/finals/1").status_code == 200
    board = anonymous.get("/").text
    assert "Finals" in board and "seed" in board.lower()


def test_failed_logins_are_rate_limited(world: World) -> None:
    register(world, "alice")
    client = world.client()
    codes = [client.post("/login", data={"csrf": csrf(client), "name": "alice", "password": "wrong password!"}
                         ).status_code for _ in range(6)]
    assert codes[:5] == [401] * 5 and codes[5] == 429
    right = client.post("/login", data={"csrf": csrf(client), "name": "alice", "password": PASSWORD})
    assert right.status_code == 429  # even the right password waits: the guesser cannot tell


def test_a_password_is_changed_with_the_current_one_and_the_other_sessions_end(world: World) -> None:
    alice, _ = register(world, "alice")
    elsewhere = world.client()  # alice logged in on another machine too
    assert elsewhere.post("/login", data={"csrf": csrf(elsewhere), "name": "alice", "password": PASSWORD}
                          ).status_code == 200
    assert elsewhere.get("/me", follow_redirects=False).status_code == 200
    new = "a new password, long enough"
    assert alice.post("/me/password", data={"current": PASSWORD, "new": new}).status_code == 403  # no CSRF token
    short = alice.post("/me/password", data={"csrf": csrf(alice, "/me"), "current": PASSWORD, "new": "short"})
    assert short.status_code == 400 and "at least 10 characters: the password is unchanged" in short.text
    changed = alice.post("/me/password", data={"csrf": csrf(alice, "/me"), "current": PASSWORD, "new": new})
    assert changed.status_code == 200 and "password changed; 1 other session(s) logged out" in changed.text
    assert alice.get("/me", follow_redirects=False).status_code == 200  # this session stays
    assert elsewhere.get("/me", follow_redirects=False).status_code == 303  # the other one is gone
    for password, code in ((PASSWORD, 401), (new, 200)):
        client = world.client()
        assert client.post("/login", data={"csrf": csrf(client), "name": "alice", "password": password}
                           ).status_code == code


def test_a_wrong_current_password_changes_nothing_and_counts_as_a_failed_login(world: World) -> None:
    """A session left open (a stolen cookie) cannot set a password without knowing the current one, nor
    guess it faster than the login form lets anyone."""
    alice, _ = register(world, "alice")
    codes = [alice.post("/me/password", data={"csrf": csrf(alice, "/me"), "current": "wrong password!",
                                              "new": "a new password, long enough"}).status_code for _ in range(6)]
    assert codes[:5] == [401] * 5 and codes[5] == 429
    client = world.client()  # the name's limit is the login form's too
    assert client.post("/login", data={"csrf": csrf(client), "name": "alice", "password": PASSWORD}
                       ).status_code == 429
    assert world.db.password_of("alice") is not None and auth.password_ok(world.db.password_of("alice"), PASSWORD)


def test_uploads_are_refused_outside_the_open_phase(world: World) -> None:
    alice, _ = register(world, "alice")
    world.coordinator.move(Phase.FROZEN)
    text = upload(alice, zipped(GOOD_BOT))
    assert "Uploads are closed" in text or "uploads are closed" in text
    assert world.db.submissions("alice") == []


def _bomb() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot.toml", 'command = ["python", "bot.py"]\n')
        with z.open("bot.py", "w", force_zip64=True) as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(300):  # 300 MB of zeros, about 300 KB deflated: the cap is 100 MB
                f.write(chunk)
    return out.getvalue()


def _symlinked() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        info = tarfile.TarInfo("bot.toml")
        data = b'command = ["python", "bot.py"]\n'
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("bot.py")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        t.addfile(link)
    return out.getvalue()


def test_hostile_uploads_through_the_route_are_refused_and_leave_nothing(world: World) -> None:
    _, token = register(world, "mallory")
    client = world.client()
    attacks = {"zip bomb": (_bomb(), "bot.zip", "over"),
               "path traversal": (zipped({"bot.toml": GOOD_BOT["bot.toml"], "../../escape.py": "x = 1\n"}),
                                  "bot.zip", ".."),
               "symlink": (_symlinked(), "bot.tar.gz", "link"),
               "oversized": (b"\0" * (21 << 20), "big.bin", "over the cap")}
    for what, (data, name, said) in attacks.items():
        reply = client.post("/api/submit", files={"file": (name, data)}, headers={"Authorization": f"Bearer {token}"})
        assert reply.status_code == 400, (what, reply.text)
        assert said in reply.json()["error"], (what, reply.json())
    assert world.db.submissions("mallory") == []
    versions = world.spec.state / "versions"
    assert not versions.exists() or [p.name for p in versions.iterdir() if p.name != ".incoming"] == []
    assert not (world.spec.state.parent / "escape.py").exists()
    assert not any((world.spec.state / "server" / "uploads").iterdir())  # the received files are removed


def test_passwords_tokens_and_sessions_are_stored_hashed(world: World) -> None:
    alice, token = register(world, "alice")
    session = alice.cookies.get("referee_session")
    assert session
    world.db.close()
    stored = b"".join(p.read_bytes() for p in (world.spec.state / "server").glob("server.sqlite*"))
    for secret in (PASSWORD, token, session):
        assert secret.encode() not in stored
    world.db = server_main.open_db(world.spec)


def test_a_hostile_build_reaches_no_network_and_no_server_file(world: World) -> None:
    require_sandbox()
    eve, _ = register(world, "eve")
    store = world.spec.state / "server" / "server.sqlite"
    build = f"""import socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    print("network: reached")
except OSError as err:
    print("network: refused", err)
try:
    open({str(store)!r}, "rb").read(16)
    print("store: read")
except OSError as err:
    print("store: refused", err)
try:
    open({str(world.spec.state / "versions" / "planted")!r}, "w").write("x")
    print("versions: written")
except OSError as err:
    print("versions: refused", err)
"""
    upload(eve, zipped({**GOOD_BOT, "build.py": build,
                        "bot.toml": 'command = ["python", "bot.py"]\nbuild = ["python", "build.py"]\n'}))
    world.check_all()
    sub = world.db.submissions("eve")[0]
    log = sub.build_log
    assert "network: refused" in log and "store: refused" in log and "versions: refused" in log, log
    assert "reached" not in log and "store: read" not in log and "written" not in log
    assert sub.status == Status.ACCEPTED  # the build itself ran (and the bot then validated)
    # the control: the same build without the sandbox reads the store (the attack is real)
    copy = world.spec.state.parent / "unsandboxed"
    tbuild.copy_version(Path(sub.directory), copy)
    bare = tbuild.run_build(["python", "build.py"], copy, 60, SandboxMode.NONE)
    assert "store: read" in bare.log, bare.log


def _lineups(world: World) -> list[tuple[str, ...]]:
    store = Store(world.spec.state / "ladder", create=False)
    try:
        return [row.lineup for row in store.matches(every=True)]
    finally:
        store.close()


def test_a_version_that_keeps_faulting_on_the_ladder_is_stopped_and_leaves_it(tmp_path: Path) -> None:
    world = World(tmp_path, COMPETITION.replace("deal_sets_per_round = 1",
                                                "deal_sets_per_round = 1\nfault_count = 3\nfault_share = 0.1"))
    try:
        alice, _ = register(world, "alice")
        bob, _ = register(world, "bob")
        # bob's bot plays well on deal set 0 (its validation's), then an illegal action on every later one
        sly = {"bot.toml": GOOD_BOT["bot.toml"], "bot.py": (
            "from referee.bot import run_bot\n"
            "def decide(observation, legal, game):\n"
            "    return 999 if not game.game_id.startswith('0:') else 0\n"
            "run_bot(decide, None, default_name='sly')\n")}
        upload(alice, zipped(GOOD_BOT))
        upload(bob, zipped(sly))
        world.check_all()
        assert [s.status for s in world.db.submissions("bob")] == [Status.ACCEPTED]
        for _ in range(3):
            world.coordinator.ladder_round()
        sub = world.db.submissions("bob")[0]
        assert sub.status == Status.STOPPED and "faults" in (sub.reason or ""), sub
        assert "stopped" in bob.get("/me").text and sub.reason in bob.get("/me").text
        before = _lineups(world)
        world.coordinator.ladder_round()
        assert _lineups(world) == before  # out of the ladder: with one entry left, nothing more is played
        assert "fewer than two entries" in world.coordinator.board.ladder
    finally:
        world.db.close()


def test_a_new_version_plays_at_once_and_team_mates_never_meet(world: World) -> None:
    team = world.invite(team="acme")
    mate = world.invite(team="acme")
    clients = {"ann": register(world, "ann", invite=team)[0], "amy": register(world, "amy", invite=mate)[0],
               "bea": register(world, "bea")[0]}
    assert world.db.user("ann").team == world.db.user("amy").team == "acme"
    for name in ("ann", "bea"):
        upload(clients[name], zipped(GOOD_BOT))
    world.check_all()
    for _ in range(2):
        world.coordinator.ladder_round()
    assert not any("amy" in lineup for lineup in _lineups(world))
    upload(clients["amy"], zipped(GOOD_BOT))  # a newcomer: seated in the very next round
    world.check_all()
    before = len(_lineups(world))
    world.coordinator.ladder_round()
    new = _lineups(world)[before:]
    amy = sum("amy" in lineup for lineup in new)
    assert amy >= 2 and amy >= sum("ann" in lineup for lineup in new), new  # a full twin, at once
    assert not any({"ann", "amy"} <= set(lineup) for lineup in _lineups(world))  # team-mates never at one table


def test_an_overloaded_host_pauses_the_ladder_and_a_full_disk_stops_uploads_and_matches(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    alice, _ = alice_and_bob_accepted(world)
    world.coordinator.pressure = lambda: 95.0  # the kernel's CPU pressure: the host is overloaded
    assert world.coordinator._step() == 0
    assert "overloaded" in (world.coordinator.board.paused or "") and _no_ladder(world)
    world.coordinator.pressure = lambda: 5.0
    assert world.coordinator._step() > 0 and world.coordinator.board.paused is None
    stored = len(_lineups(world))


    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: real(path)._replace(free=10 << 20))
    assert world.coordinator._step() == 0
    assert "disk is full" in (world.coordinator.board.paused or "")
    assert len(_lineups(world)) == stored  # nothing played, nothing lost
    text = upload(alice, zipped({**GOOD_BOT, "extra.py": "x = 1\n"}))
    assert "disk is full" in text and len(world.db.submissions("alice")) == 1
    monkeypatch.setattr(shutil, "disk_usage", real)
    assert world.coordinator._step() > 0  # room again: it resumes


def _no_ladder(world: World) -> bool:
    return not (world.spec.state / "ladder" / "results.sqlite").exists()


def test_the_deadline_freezes_the_latest_accepted_versions(tmp_path: Path) -> None:
    world = World(tmp_path, COMPETITION.replace('state = "state"', 'state = "state"\ndeadline = 2999-01-01T00:00:00Z'))
    try:
        alice, _ = register(world, "alice")
        upload(alice, zipped(GOOD_BOT))
        world.check_all()
        past = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)  # the clock moved past the deadline
        world.coordinator.spec = dataclasses.replace(world.coordinator.spec, deadline=past)
        assert "deadline" in upload(alice, zipped(GOOD_BOT))  # refused at once, before the coordinator looks
        world.coordinator._step()
        assert world.db.phase() == Phase.FROZEN
        assert [s.name for s in world.db.frozen()] == ["alice"]
        assert "closed" in upload(alice, zipped(GOOD_BOT)).lower()
    finally:
        world.db.close()


def test_a_new_version_starts_with_no_rating_and_the_old_ones_row_stays(world: World) -> None:
    alice, _ = alice_and_bob_accepted(world)
    world.coordinator.ladder_round()
    first = world.db.latest_accepted()["alice"]
    upload(alice, zipped({**GOOD_BOT, "bot.py": "from sample_bots.heuristic import main\nmain()\n"}))
    world.check_all()
    second = world.db.latest_accepted()["alice"]
    assert second.id != first.id and second.version != first.version
    world.coordinator.ladder_round()
    store = Store(world.spec.state / "ladder", create=False)
    try:
        versions = {row.versions[row.lineup.index("alice")] for row in store.matches()}
        rows = history.of_store(store, "alice")
    finally:
        store.close()
    assert len(versions) == 1  # only the new version's matches count: it started from no rating
    assert rows is not None and len(rows[0].versions) == 2  # both versions keep their row
    assert "alice" in world.client().get("/entry/alice").text


def test_secure_cookies_are_marked_secure_httponly_and_samesite(world: World) -> None:
    app = create_app(world.coordinator, server_main.secret_of(world.db), secure_cookies=True)
    client = TestClient(app, base_url="https://127.0.0.1")
    reply = client.get("/register")
    cookie = reply.headers["set-cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    plain = world.client().get("/register").headers["set-cookie"]
    assert "Secure" not in plain and "HttpOnly" in plain


def test_without_the_server_extra_referee_server_says_so_in_one_line(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:

    from click.testing import CliRunner

    from referee.cli import referee
    path = tmp_path / "competition.toml"
    path.write_text(COMPETITION)
    import referee.server as server_package
    for name in [m for m in sys.modules if m == "referee.server.main" or m.startswith("uvicorn")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delattr(server_package, "main", raising=False)
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # not installed
    result = CliRunner().invoke(referee, ["server", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == ("Error: referee server needs the server extra (uvicorn is not installed): "
                                     "pip install 'referee[server]'")


def test_a_bad_competition_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from referee.cli import referee
    path = tmp_path / "competition.toml"
    for text, said in ((COMPETITION.replace("[tournament]\n", "[tournament]\nschedule = \"adaptive\"\n"),
                        "tournament.schedule: a competition's coordinator sets it"),
                       (COMPETITION.replace('title = "Test ladder"', 'title = "Test ladder"\nsecret = 1'),
                        "unknown key 'secret' in [competition]"),
                       (COMPETITION.replace("[finals]\n", "[finals]\nconfidence = 2\n"),
                        "finals.confidence must be a number from 0.5 to 0.999999"),
                       (COMPETITION.replace("fill = true", "fill = \"yes\""),
                        "ladder.fill must be true or false, got 'yes'")):
        path.write_text(text)
        result = CliRunner().invoke(referee, ["server", str(path)])
        assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1


def test_the_ladder_fills_its_rounds_unless_told_not_to(tmp_path: Path) -> None:
    """``[ladder] fill`` (true by default) reaches the ladder's tournament as ``plan_fill``."""
    path = tmp_path / "competition.toml"
    entrants = [ladder.Contender(name, None, ("python", "bot.py"), BotProtocol.GRPC, tmp_path) for name in "ab"]
    unsaid, off = COMPETITION.replace("fill = true\n", ""), COMPETITION.replace("fill = true", "fill = false")
    for text, fill in ((unsaid, True), (off, False)):
        path.write_text(text)
        spec = ladder.load(path)
        assert spec.ladder.fill is fill
        assert ladder.ladder_config(spec, entrants, 4).rule.fill is fill


def organiser_client(world: World) -> TestClient:
    client = world.client()
    password = re.search(r"password = (\S+)", world.organiser_file.read_text()).group(1)
    client.post("/login", data={"csrf": csrf(client), "name": "organiser", "password": password})
    return client


def test_the_organiser_invites_disables_and_moves_the_competition_on(world: World) -> None:
    organiser = organiser_client(world)
    page = organiser.post("/organiser/invite", data={"csrf": csrf(organiser, "/organiser"), "team": "acme"})
    code = re.search(r"new invite code: ([A-Z0-9-]+)", page.text).group(1)
    bob, bob_token = register(world, "bob", invite=code)
    assert world.db.user("bob").team == "acme"
    upload(bob, zipped(GOOD_BOT))
    world.check_all()
    page = organiser.post("/organiser/disable", data={"csrf": csrf(organiser, "/organiser"), "name": "bob",
                                                      "why": "cheating <script>"})
    assert "bob disabled" in page.text and "&lt;script&gt;" in page.text and "<script>" not in page.text.split(
        "<body>")[1].split("<script>")[0]
    assert all(c.withdrawn for c in world.coordinator.contenders() if c.name == "bob")  # out of the ladder
    assert bob.get("/me", follow_redirects=False).status_code == 303  # its session no longer works
    reply = bob.post("/api/submit", files={"file": ("bot.zip", zipped(GOOD_BOT))},
                     headers={"Authorization": f"Bearer {bob_token}"})
    assert reply.status_code == 401
    moved = organiser.post("/organiser/phase", data={"csrf": csrf(organiser, "/organiser"), "to": "frozen"})
    assert world.db.phase() == Phase.FROZEN and "the competition is frozen now" in moved.text
    wrong = organiser.post("/organiser/phase", data={"csrf": csrf(organiser, "/organiser"), "to": "open"})
    assert wrong.status_code == 400 and "only finals follows" in wrong.text
    assert world.client().post("/organiser/phase", data={"csrf": "x", "to": "finals"}).status_code == 404
