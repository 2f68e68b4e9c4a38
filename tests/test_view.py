"""The HTML pages without a browser: what goes into them. Every page is self-contained (no
other host, no fonts, nothing loaded from anywhere); a seat's replay holds no card that seat
could not have seen at that step, by the engine's own account of what the seat saw; the
steps follow the engine (tests/test_view_browser.py checks what the browser shows)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from referee import records
from referee.games import GAMES, play_out, random_legal
from referee.tournament.store import Store
from referee.view import live, report
from referee.view.page import replay_page
from referee.view.steps import replay_data

ASSETS = Path(report.__file__).parent / "assets"
CARD = re.compile(r"\b[2-9TJQKA][SHDC]\b")
NAMES = ["alice", "bob", "carol", "dave"]


def played_record(game: str, seed: int, options: dict | None = None) -> dict:
    state = GAMES[game].new(options or {}, seed=seed)
    play_out(state, random_legal(random.Random(seed)))
    return records.to_record(state, seats=NAMES[:state.num_seats])


def small_results(directory: Path, game: str = "aegis", matches: int = 4) -> Path:
    """A results directory like a tournament's: matches of random players in a store."""
    store = Store(directory)
    store.set_meta("config", json.dumps({"game": game}))
    bots = ["r1", "r2", "r3", "r4"]
    for i in range(matches):
        spec = GAMES[game]
        state = spec.new({"rounds": 2} if "rounds" in spec.options else {}, seed=100 + i)
        play_out(state, random_legal(random.Random(i)))
        lineup = tuple(bots[(i + s) % len(bots)] for s in range(spec.num_seats))
        store.save(f"{i // 2}:{'|'.join(lineup)}", i // 2, 100 + i, lineup, state.results(),
                   records.to_record(state, seats=lineup), 0.1)
    store.close()
    return directory


def references_elsewhere(text: str) -> list[str]:
    """Whatever in a page could load something from another host (or any file at all)."""
    found = re.findall(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text, re.IGNORECASE)
    found += re.findall(r"@import|@font-face|url\(|<link\b|<iframe\b|\bsrc\s*=", text, re.IGNORECASE)
    return found


def every_page(tmp_path: Path) -> dict[str, str]:
    pages = {}
    for game in GAMES:
        record = played_record(game, 3)
        pages[f"{game} replay"] = replay_page(record)
        pages[f"{game} seat 1"] = replay_page(record, viewer=1)
        directory = small_results(tmp_path / game, game)
        index = report.write_report(directory, bootstrap=50)
        pages[f"{game} report"] = index.read_text()
        for replay in sorted((index.parent / report.REPLAYS).iterdir()):
            pages[f"{game} {replay.name}"] = replay.read_text()
    pages["live"] = live.LivePage("live").html()
    return pages


def test_every_page_references_no_other_host(tmp_path):
    pages = every_page(tmp_path)
    assert len(pages) > 10
    for name, text in pages.items():
        assert not references_elsewhere(text), f"{name}: {references_elsewhere(text)}"


@pytest.mark.parametrize("text", [
    '<script src="https://cdn.example.com/x.js"></script>', "@import 'x.css';",
    "@font-face { font-family: X; }", '<img src="a.png">', "background: url(a.png)",
    '<link rel="stylesheet" href="//fonts.example.com/css">',
])
def test_the_check_sees_a_reference(text):
    assert references_elsewhere(f"<html>{text}</html>")


def test_the_scripts_know_no_game():
    """The pages' scripts render any game's frames: nothing in them names a game."""
    for asset in ASSETS.iterdir():
        text = asset.read_text().lower()
        for game in GAMES:
            assert game not in text, f"{asset.name} names {game}"


def seen_by(record: dict, seat: int) -> list[set[str]]:
    """Per step (the deal, then each action): every card the seat has seen so far, by the engine's
    account (its observation and the events it was sent)."""
    steps: list[set[str]] = []

    def step(state) -> None:
        text = json.dumps(state.observation(seat)) + json.dumps([list(e) for e in state.visible_events(seat)])
        steps.append(set(CARD.findall(text)))

    records.replay(record, on_step=step)
    return steps


@pytest.mark.parametrize("game, seed", [("aegis", 1), ("confirmation", 1)])
def test_a_seats_replay_holds_no_card_hidden_from_it(game, seed):
    options = {"blind": True, "rounds": 3} if game == "confirmation" else {}
    record = played_record(game, seed, options)
    for seat in range(GAMES[game].num_seats):
        data = replay_data(record, viewer=seat)
        seen = seen_by(record, seat)
        assert len(data["steps"]) == len(seen) == len(record["actions"]) + 1
        for k, (step, known) in enumerate(zip(data["steps"], seen)):
            shown = set(CARD.findall(json.dumps(step)))
            assert shown <= known, f"step {k}: seat {seat} is shown {sorted(shown - known)}"
        # the others' hands at the deal are nowhere on the first step
        first = data["steps"][0]["frame"]["seats"]
        assert all(first[s]["hand"] is None for s in range(len(first)) if s != seat)
        assert first[seat]["hand"]
        # nor does the page carry the record's deck orders
        page = replay_page(record, viewer=seat)
        data_text = page[page.index('id="replay-data">'):]
        assert "decks" not in json.loads(data_text[data_text.index(">") + 1:data_text.index("</script>")])


def test_every_hand_is_shown_in_the_referees_view():
    record = played_record("confirmation", 4, {"rounds": 1})
    first = replay_data(record)["steps"][0]["frame"]["seats"]
    assert [len(s["hand"]) for s in first] == [13, 13, 13, 13]


def test_the_steps_follow_the_engine():
    """Each trick's winner and each round's or game's row come from the engine's events."""
    for game in GAMES:
        record = played_record(game, 7, {"rounds": 2} if game == "confirmation" else {})
        rep = records.replay(record)
        winners = [e.seat for e in rep.state.events if e.kind == "trick"]
        data = replay_data(record)
        shown, last = [], None
        for step in data["steps"]:
            trick = step["frame"]["last_trick"]
            if trick is not None and trick != last:
                shown.append(trick["winner"])
                last = trick
        assert shown == winners
        rows = data["scores"]["rows"]
        assert len(rows) == len(rep.results.get("rounds", rep.results.get("games", [])))


def test_faults_are_marked_at_their_decision_and_a_seat_sees_no_others_detail():
    record = played_record("aegis", 9)
    record["meta"] = {"faults": [{"seat": 1, "kind": "timeout", "decision": 3, "at_s": 1.0, "detail": "late"}]}
    steps = replay_data(record)["steps"]
    assert [k for k, s in enumerate(steps) if s["faults"]] == [4]  # step 0 is the deal
    assert steps[4]["faults"] == [{"seat": 1, "kind": "timeout", "detail": "late"}]
    assert replay_data(record, viewer=0)["steps"][4]["faults"] == [{"seat": 1, "kind": "timeout"}]


def test_view_command_writes_a_replay_and_a_report(tmp_path, invoke):
    path = tmp_path / "game.json"
    records.write(path, played_record("aegis", 3))
    result = invoke("view", path)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(tmp_path / "game.html")
    assert "replay-data" in (tmp_path / "game.html").read_text()
    result = invoke("view", path, "--seat", "2")
    assert result.exit_code == 2 and "--seat" in result.output and "seats 0..1" in result.output
    small_results(tmp_path / "res")
    result = invoke("view", tmp_path / "res", "--out", tmp_path / "rep", "--bootstrap", "20")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(tmp_path / "rep" / "index.html")
    assert len(list((tmp_path / "rep" / "replays").iterdir())) == 4
    (tmp_path / "bad.json").write_text("{}")
    result = invoke("view", tmp_path / "bad.json")
    assert result.exit_code == 1 and "missing field" in result.output
    result = invoke("view", tmp_path / "empty")
    assert result.exit_code == 2
    (tmp_path / "empty").mkdir()
    result = invoke("view", tmp_path / "empty")
    assert result.exit_code == 2 and "neither a game record nor a results directory" in result.output


def test_the_live_page_shows_a_game_from_its_public_events_only():
    from referee.arena import HostedMatch
    from referee.runner import Clock, GameInfo

    state = GAMES["aegis"].new({}, seed=4)
    play_out(state, random_legal(random.Random(4)), limit=40)
    hosted = HostedMatch(GameInfo("g1", "aegis", state.options, 0, ("alice", "bob"), Clock()))
    for index, event in enumerate(state.events):
        if event.to == -1:
            hosted.publish(index, event)

    class FakeArena:
        matches = {"g1": hosted}

    page = live.LivePage("live")
    page.watch(FakeArena())
    shown = json.dumps(page.state())
    public = set(CARD.findall(json.dumps([list(e) for e in state.public_events()])))
    hidden = set(CARD.findall(json.dumps([list(e) for e in state.events]))) - public
    assert hidden, "the game so far has hidden cards (the hands)"
    assert set(CARD.findall(shown)) <= public
    assert [g["id"] for g in page.state()["games"]] == ["g1"]


@pytest.mark.e2e
def test_serve_http_serves_the_live_page():
    import subprocess
    import sys
    import urllib.request

    from harness import ROOT

    proc = subprocess.Popen([sys.executable, "-m", "referee", "serve", "--port", "0", "--http", "0"], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for _ in range(50):
            line = proc.stderr.readline()
            if match := re.search(r"live page: (http://127\.0\.0\.1:\d+/)", line):
                url = match.group(1)
                break
        assert url, "no live page address in the log"
        assert "<title>referee: live</title>" in urllib.request.urlopen(url, timeout=10).read().decode()
        state = json.loads(urllib.request.urlopen(url + "state", timeout=10).read())
        assert state["games"] == [] and state["finished"] == 0 and state["standings"] is None
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_live_page_needs_its_token_unless_public():
    """The public events of a match being played are not for bots (its twin holds the same cards
    in other seats): without the token the page and its data answer 403."""
    import asyncio
    import urllib.error
    import urllib.request

    async def fetch(url: str) -> tuple[int, bytes]:
        def get() -> tuple[int, bytes]:
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    return response.status, response.read()
            except urllib.error.HTTPError as err:
                return err.code, err.read()
        return await asyncio.to_thread(get)

    async def main():
        secret = live.LivePage("t", token="s3cret")
        async with secret.serving(0) as url:
            assert url.endswith("/?token=s3cret")
            base = url.split("?")[0]
            assert (await fetch(url))[0] == 200
            assert (await fetch(base + "state?token=s3cret"))[0] == 200
            for wrong in (base, base + "state", base + "state?token=s3cre", base + "?token=bot-token"):
                status, body = await fetch(wrong)
                assert status == 403 and b"games" not in body
        public = live.LivePage("t")
        async with public.serving(0) as url:
            assert "token" not in url and (await fetch(url + "state"))[0] == 200

    asyncio.run(main())
