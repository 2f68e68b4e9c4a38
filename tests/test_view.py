"""The HTML pages without a browser: what goes into them. Every page is self-contained (no
other host, no fonts, nothing loaded from anywhere); a seat's replay holds no card that seat
could not have seen at that step, by the engine's own account of what the seat saw; the
steps follow the engine (tests/test_view_browser.py checks what the browser shows)."""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path

import pytest

from referee import model, records
from referee.games import GAMES, play_out, random_legal
from referee.results.store import Store
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
    from referee.play.arena import HostedMatch
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


def test_the_report_and_the_live_page_count_faults_by_kind(tmp_path):
    """681 malformed answers are malformed answers, not illegal actions: each kind its own count."""
    directory = small_results(tmp_path / "res", "aegis", matches=4)
    store = Store(directory)
    row = next(store.matches())
    faults = [{"timeout": 2, "illegal": 0, "malformed": 681, "wrong_id": 1, "disconnect": 0, "no_session": 0,
               "error": 0},
              {"timeout": 0, "illegal": 4, "malformed": 0, "wrong_id": 0, "disconnect": 3, "no_session": 1,
               "error": 66}]
    store.db.execute("UPDATE matches SET results = ? WHERE key = ?", (json.dumps({**row.results, "faults": faults}),
                                                                      row.key))
    store.db.commit()
    charged = dict(zip(row.lineup, faults))
    text = report.write_report(directory, bootstrap=0).read_text()
    for bot, kinds in charged.items():
        cell = re.search(rf'<tr data-bot="{bot}">.*?<td class="faults" ([^>]*)>([^<]*)</td>', text).groups()
        assert cell[1] == "/".join(str(n) for n in kinds.values())
        assert dict(re.findall(r'data-([a-z-]+)="(\d+)"', cell[0])) == {
            k.replace("_", "-"): str(n) for k, n in kinds.items()}
    assert "faults t/i/m/w/d/n/e" in text
    listed = f"{row.lineup[0]} (seat 0): timeout 2, malformed 681, wrong_id 1; {row.lineup[1]} (seat 1): illegal 4, " \
             f"disconnect 3, no_session 1, error 66"
    assert listed in text
    table = live.standings_source(store, 0)()
    store.close()
    assert table["headers"][-1] == "faults t/i/m/w/d/n/e"
    cells = {r[1]: r[-1] for r in table["rows"]}
    assert {bot: cells[bot] for bot in charged} == {bot: "/".join(map(str, k.values())) for bot, k in charged.items()}


def lopsided_results(directory: Path, deal_sets: int) -> Path:
    """An Aegis round robin of x, y and loser, each deal set twice with the seats swapped: loser
    loses every match, x and y split theirs by the deal set (the games are random, the placings set)."""
    store = Store(directory)
    store.set_meta("config", json.dumps({"game": "aegis"}))
    k = 0
    for d in range(deal_sets):
        for pair in (("x", "y"), ("x", "loser"), ("y", "loser")):
            for lineup in (pair, pair[::-1]):
                state = GAMES["aegis"].new({}, seed=200 + k)
                play_out(state, random_legal(random.Random(k)))
                winner = "y" if "loser" not in lineup and (d + lineup.index("x")) % 3 == 0 else pair[0]
                placing = [1 if bot == winner else 2 for bot in lineup]
                results = {**state.results(), "placing": placing, "scores": [10 if p == 1 else 3 for p in placing]}
                store.save(f"{d}:{'|'.join(lineup)}", d, 200 + k, lineup, results,
                           records.to_record(state, seats=lineup), 0.1)
                k += 1
    store.close()
    return directory


@pytest.mark.parametrize("deal_sets", [2, 10])
def test_the_report_the_live_page_and_the_terminal_show_every_rating_alike(tmp_path, deal_sets):
    """One decision (standings.shown) for every output: the terminal printed the demo's random as
    "< 1360" with no interval while the report printed "low 662, high 1360" under a full error bar
    (662: the prior's side of a bound, which means nothing); on two deal sets the live page printed
    "low -2616, high 4442". Now the report's and the live page's cells are the terminal's, a bound is
    a bar open on its unknown side, and too few games has no bar."""
    from referee.results import standings

    directory = lopsided_results(tmp_path / "res", deal_sets)
    text = report.write_report(directory, bootstrap=200).read_text()
    store = Store(directory, create=False)
    st = standings.of_store(store, bootstrap=200)
    terminal = {b.name: standings.elo_cells(b) for b in st.lines}
    rated = {s["name"]: (s["shown"]["elo"], s["shown"]["interval"]) for s in standings.to_json(st)["standings"]}
    live_rows = live.standings_source(store, 200)()
    store.close()
    assert live_rows["headers"][2:4] == ["Elo", "95% interval"]
    assert {row[1]: tuple(row[2:4]) for row in live_rows["rows"]} == terminal == rated
    in_report = dict((bot, (elo, interval)) for bot, elo, interval in re.findall(
        r'<tr data-bot="([^"]+)">.*?<td class="elo" data-shown="[^"]+">([^<]*)</td><td class="interval">([^<]*)</td>',
        text))
    assert {bot: tuple(html.unescape(c) for c in cells) for bot, cells in in_report.items()} == terminal
    assert "<th>low</th>" not in text
    svg = text.split('<svg id="elo-bars"')[1].split("</svg>")[0]
    loser = terminal["loser"]
    if deal_sets == 10:
        assert loser[0].startswith("< ") and loser[1] == "-"  # the demo's bound
        assert '<g class="bound" data-bot="loser">' in svg  # open towards the edge: an arrow, no dot
    else:
        assert loser == ("-", standings.TOO_FEW) and 'data-bot="loser"' not in svg
    assert "<title>loser:" not in svg.replace('<g class="bound" data-bot="loser"><title>loser:', "")
    shown = [standings.shown_line(b) for b in st.lines]
    assert svg.count("<circle") == sum(s.elo is not None for s in shown)
    ticks = [float(t) for t in re.findall(r'class="tick">([-\d.]+)<', svg)]
    ends = [v for s in shown for v in (s.elo, s.lo, s.hi) if v is not None]
    assert min(ticks) > min(ends) - 200 and max(ticks) < max(ends) + 200  # the axis spans what is shown, no more


def published_results(directory: Path, title: str | None = 'Spring <cup> & "friends"', seed_drawn: bool = False,
                      released: bool = False) -> Path:
    """A results directory as a tournament of ``tournament.toml`` leaves it: its configuration (a title,
    a description with markup in it), its bots, the sandbox and isolation it ran in, matches."""
    from referee.competition import config as tconfig
    from referee.model import BotSpec

    small_results(directory, "aegis", matches=4)
    home = directory.parent / "bots"  # they never start: an empty directory, quicker to hash than the checkout
    home.mkdir(exist_ok=True)
    bots = [BotSpec(name, ("python", "-m", "sample_bots.random"), cwd=str(home)) for name in ("r1", "r2", "r3", "r4")]
    cfg = model.TournamentConfig("aegis", {"promise": "table"}, tuple(bots), 2, 123456789, tconfig.Clock(0.5, 4),
                                   2, directory, seed_drawn=seed_drawn, title=title,
                                   description="The first <b>paragraph</b>.\n\nA second & last one.")
    store = Store(directory)
    store.claim(cfg.fingerprint(), cfg.describe(), cfg.bots)
    store.set_meta("sandbox", "sandbox: bwrap (own namespaces; no network); limits: memory per bot (cgroup); "
                              "writable: only /tmp and /dev/shm, each a tmpfs of file_mb and 128 inodes per MB")
    store.set_meta("isolation", "match")
    if released:
        store.release_seed()
    store.close()
    return directory


def test_the_report_says_what_the_tournament_was(tmp_path):
    directory = published_results(tmp_path / "res")
    text = report.write_report(directory, bootstrap=0).read_text()
    assert "<title>Spring &lt;cup&gt; &amp; &quot;friends&quot;</title>" in text
    assert "<h1>Spring &lt;cup&gt; &amp; &quot;friends&quot;</h1>" in text
    assert "<p>The first &lt;b&gt;paragraph&lt;/b&gt;.</p><p>A second &amp; last one.</p>" in text
    facts = dict(re.findall(r'<tr data-fact="([a-z-]+)"><th class="l">[a-z-]+</th><td class="l">(.*?)</td></tr>', text))
    assert facts["game"] == "Aegis; options: promise=table"
    assert facts["seed"].startswith("123456789 (given in the tournament file")
    assert facts["clock"] == "500 ms per decision, and a bank of 4000 ms per seat per match"
    # the public's sentence, not the organiser's detail of how each limit holds (issue 34, item 9)
    assert facts["sandbox"].startswith("bubblewrap: each bot in namespaces of its own, with no network")
    assert "inodes" not in text and "file_mb" not in text
    assert facts["isolation"].startswith("match: a fresh process of each bot for every match")
    store = Store(directory, create=False)
    first, last = store.dates()
    entries = store.entries()
    store.close()
    assert first <= last and re.fullmatch(r'from <time datetime="[0-9T:Z-]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC</time> '
                                          r'to <time datetime="[0-9T:Z-]+">[^<]+</time>', facts["played"])
    assert [e.name for e in entries] == ["r1", "r2", "r3", "r4"] and all(e.status == "playing" for e in entries)
    assert len({e.version for e in entries}) == 1 and re.fullmatch(r"[0-9a-f]{12}", entries[0].version)
    for e in entries:
        assert f'<tr data-entry="{e.name}" data-status="playing"><td class="l">{e.name}</td>' \
               f'<td class="l"><code>{e.version}</code></td><td class="l">entered</td></tr>' in text
    # without a title, the game and the directory's name
    untitled = published_results(tmp_path / "cup", title=None)
    assert "<h1>Aegis tournament: cup</h1>" in report.write_report(untitled, bootstrap=0).read_text()


@pytest.mark.parametrize("drawn, released, shown", [(False, False, True), (True, False, False), (True, True, True)])
def test_a_drawn_seed_is_shown_only_once_released(tmp_path, drawn, released, shown):
    directory = published_results(tmp_path / "res", seed_drawn=drawn, released=released)
    text = report.write_report(directory, bootstrap=0).read_text()
    store = Store(directory, create=False)
    about = live.about_source(store, "res")()
    store.close()
    for page in (text, about):
        assert ("123456789" in page) is shown
        assert ("secret until the run ends" in page) is (not shown)


def test_a_released_seed_is_not_shown_while_records_are_held(tmp_path):
    """The master seed deals every deal set: while an entry did not start, it would give away
    every card it will play, as the records would (red team finding 3)."""
    directory = published_results(tmp_path / "res", seed_drawn=True, released=True)
    store = Store(directory)
    store.set_entries("did not start", {"r4": "exit code 3"})
    store.close()
    text = report.write_report(directory, bootstrap=0).read_text()
    assert "123456789" not in text and "not shown while records are held while r4 did not start" in text


def test_every_entry_is_listed_with_its_status_and_reason():
    from referee.results.store import Entry
    from referee.view.about import About, about_html

    entries = [Entry("alpha", "playing", None, "0123456789"),
               Entry("broken", "did not start", "ended before it connected (exit code 3) <oops>", "abcdefabcd"),
               Entry("gone", "withdrawn", "withdrawn = true in the tournament file", None),
               Entry("crash", "dead", "died 4 times (last: exit code 1)", "fedcba9876")]
    block = about_html(About("t", None, "Aegis", {}, None, None, None, None, None, entries),
                       {"alpha": "logs/alpha.html"})
    rows = re.findall(r'<tr data-entry="([a-z]+)" data-status="([a-z ]+)">(.*?)</tr>', block)
    assert [(name, status) for name, status, _ in rows] == [(e.name, e.status) for e in entries]
    cells = {name: re.findall(r"<td class=\"l\">(.*?)</td>", row) for name, _, row in rows}
    assert cells["alpha"] == ['alpha <a class="log" href="logs/alpha.html">log</a>', "<code>0123456789</code>",
                              "entered"]
    assert cells["broken"][2] == "did not start: ended before it connected (exit code 3) &lt;oops&gt;"
    assert cells["gone"][1:] == ["<code>-</code>", "withdrawn: withdrawn = true in the tournament file"]
    assert cells["crash"][2] == "dead: died 4 times (last: exit code 1)"


def test_the_live_page_shows_the_tournament_block(tmp_path):
    directory = published_results(tmp_path / "res", seed_drawn=True)
    store = Store(directory, create=False)
    try:
        page = live.LivePage("Spring cup", live.standings_source(store, 0), about=live.about_source(store, "res"))
        state = page.state()
        assert '<tr data-fact="seed">' in state["about"] and "secret until the run ends" in state["about"]
        assert "123456789" not in json.dumps(state)
        assert '<div id="about-box"><section id="about">' in page.html()
        assert "<title>Spring cup</title>" in page.html()
    finally:
        store.close()


def test_a_published_log_is_escaped_and_the_index_is_read_with_care(tmp_path):
    from referee.view import logs

    page = logs.log_page("--- a start #1\nnul \x00 esc \x1b[2J <script>alert(1)</script> & é\n", "log of a",
                         "../index.html")
    assert "\x00" not in page and "\x1b" not in page
    assert "nul \\x00 esc \\x1b[2J &lt;script&gt;alert(1)&lt;/script&gt; &amp; é" in page
    assert '<div id="L2" class="line"><a class="n" href="#L2">2</a>' in page
    directory = tmp_path / "logs"
    directory.mkdir()
    (directory / "a.log").write_bytes(b"x\n--- match 0:a|b seat 0: begins\ny\n--- match 0:a|b seat 0: ends\n")
    (directory / "matches.jsonl").write_text("\n".join([
        json.dumps({"match": "0:a|b", "bot": "a", "seat": 0, "log": "a.log", "begins": 2, "ends": 64,
                    "played": True}),
        json.dumps({"match": "1:a|b", "bot": "a", "seat": 0, "log": "a.log", "begins": 2, "ends": 9999,
                    "played": True}),  # past the end of its log (cut): left out
        json.dumps({"match": "2:a|b", "bot": "a", "seat": 0, "log": "../../etc/passwd", "begins": 0, "ends": 1,
                    "played": True}),  # not a log of this directory: left out
        json.dumps({"match": "3:a|b", "bot": "a", "seat": 0, "log": "a.log", "begins": 2, "ends": 64,
                    "played": False}),  # cut short: left out
        '{"match": "4:a|b", "bot": "a", "se',  # a line a kill cut short
    ]))
    assert logs.spans(directory) == {("0:a|b", 0): logs.Span("a.log", 2, 4)}


def test_the_report_holds_back_the_records_of_a_deal_set_still_to_play(tmp_path, invoke):
    """Red team finding 3: a deal set with a match still to play is listed with its results, no
    replay (an earlier report's removed), its matches' lines cut from the published logs, said on
    stderr; export writes every record, warning of the held ones."""
    directory = small_results(tmp_path / "res")  # deal sets 0 and 1, two matches each
    logs_dir = directory / "logs"
    logs_dir.mkdir()
    text = ("--- match 0:r2|r3 seat 1: begins\nmy hand 2S 3S\n--- match 0:r2|r3 seat 1: ends\n"
            "--- match 1:r3|r4 seat 0: begins\nmy hand AS KS\n--- match 1:r3|r4 seat 0: ends\n")
    (logs_dir / "r3.log").write_text(text)
    middle = text.index("--- match 1:")
    (logs_dir / "matches.jsonl").write_text("".join(
        json.dumps({"match": key, "bot": "r3", "seat": seat, "log": "r3.log", "begins": begins, "ends": ends,
                    "played": True}) + "\n"
        for key, seat, begins, ends in (("0:r2|r3", 1, 0, middle), ("1:r3|r4", 0, middle, len(text)))))
    replays = directory / "report" / report.REPLAYS
    assert invoke("view", directory, "--bootstrap", "0").exit_code == 0 and len(list(replays.iterdir())) == 4
    store = Store(directory)
    store.set_schedule([*(r.key for r in store.matches()), "1:r1|r3"])  # deal set 1: a match still to play
    store.set_meta("isolation", "match")
    store.close()
    result = invoke("view", directory, "--bootstrap", "0", "--logs")
    assert result.exit_code == 0, result.output
    line = ("2 match record(s) of deal set 1 held until every match of their deal set is played (an entry still "
            "to play one would know its cards)")
    assert result.stderr == f"report: {line}\n"
    assert sorted(p.name for p in replays.iterdir()) == ["0_r1,r2.html", "0_r2,r3.html"]
    index = (directory / "report" / "index.html").read_text()
    assert line in index and index.count("(replay held)") == 2 and "1_r3,r4.html" not in index
    assert "<td class=\"l\">r3 " in index  # its results are public
    log = (directory / "report" / "logs" / "r3.html").read_text()
    assert "2S 3S" in log and "AS KS" not in log and "3 line(s) left out: match 1:r3|r4: held until" in log
    store = Store(directory)
    store.set_meta("isolation", "tournament")  # a process's lines may tell any of its matches: held whole
    store.close()
    result = invoke("view", directory, "--bootstrap", "0", "--logs")
    assert result.exit_code == 0 and "the bots' logs are held" in result.stderr
    assert not (directory / "report" / "logs").exists()
    result = invoke("export", directory)
    assert result.exit_code == 0 and "4 match record(s)" in result.stdout
    assert result.stderr.startswith(f"warning: {line}; written here all the same")


def test_the_pages_show_the_later_seeds_of_deal_sets_added_once_released():
    from referee.view.about import seed_text

    config = {"seed": 11, "seed_drawn": True, "later_seeds": [[4, 22]]}
    assert "secret" in seed_text(config, released=False) and "22" not in seed_text(config, released=False)
    shown = seed_text(config, released=True)
    assert shown.startswith("11 (drawn") and "deal sets from 4 on: 22" in shown


def test_two_seats_of_one_bot_read_apart_in_the_replay_and_its_log(tmp_path, invoke):
    """A line-up of fewer entries than seats puts one bot in two seats: the log, the tables and
    the replay page name each seat apart (item 9 of issue 34: two `heuristic` columns and
    "final scores: heuristic -6, ..., heuristic 23" said nothing of which was which)."""
    state = GAMES["confirmation"].new({"rounds": 1}, seed=5)
    play_out(state, random_legal(random.Random(5)))
    record = records.to_record(state, seats=["heuristic", "random", "heuristic", "search"])
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record))
    done = invoke("replay", str(path), "--log")
    assert done.exit_code == 0, done.output
    assert "heuristic (seat 0)" in done.output and "heuristic (seat 2)" in done.output
    log, final = done.output.split("final scores:")
    assert not re.search(r"heuristic(?! \(seat)", log), log
    # the final table has a seat column: there the names stand as they are
    assert re.search(r"\n +0 +heuristic +-?\d", final) and re.search(r"\n +2 +heuristic +-?\d", final), final
    data = replay_data(record)
    assert data["seats"] == ["heuristic (seat 0)", "random", "heuristic (seat 2)", "search"]
    assert "as seen by heuristic (seat 2):" in replay_page(record, viewer=2)
    assert "as seen by random (seat 1):" in replay_page(record, viewer=1)
