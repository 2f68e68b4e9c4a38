"""The pages in a real browser: headless Chromium (Debian's) driven by Playwright for Python.

A replay is stepped through with the keyboard and what the page shows is compared with the
engine's replay of the record: each trick's winner, each round's or game's scores, the final
scores; a seat's replay shows, at every step, only cards the engine says that seat had seen;
the report's standings are those of ``referee ratings``; the live page of a running tournament
shows its standings change. At 390 and 1280 px no page scrolls sideways and the report and the
live page show their title and metadata (a drawn seed secret while the run plays, released in
the report after); a replay's link leads to its seat's lines in a published log. One browser per
module. Without chromium or Playwright these skip
with the reason; under REFEREE_REQUIRE_BROWSER=1 (.ci/run) they fail instead."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from harness import CHROMIUM, ROOT, require_browser, write_tournament
from test_view import CARD, lopsided_results, played_record, published_results, seen_by, small_results

from referee import records
from referee.games import GAMES
from referee.view import report
from referee.view.page import replay_page

GAME_TITLES = {name: spec.title for name, spec in GAMES.items()}

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def browser():
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    yield page
    page.close()


def open_replay(page, tmp_path, record, viewer=None, step=None):
    path = tmp_path / f"replay{viewer}.html"
    path.write_text(replay_page(record, viewer=viewer))
    page.goto(path.as_uri() + (f"#step={step}" if step is not None else ""))
    return path


def walk(page, read: str, arg=None) -> list:
    """Step through the whole replay with the page's own keyboard handler (an ArrowRight keydown
    per step, in the page: one round trip for the walk), ``read(arg)`` after each step."""
    return page.evaluate(f"""arg => {{
      const read = {read};
      const out = [read(arg)];
      const total = Number(/ (\\d+)$/.exec(document.getElementById("position").textContent)[1]);
      for (let k = 0; k < total; k++) {{
        document.dispatchEvent(new KeyboardEvent("keydown", {{ key: "ArrowRight", bubbles: true }}));
        out.push(read(arg));
      }}
      return out;
    }}""", arg)


#: what one step shows: the position, the last trick won (its text and winner)
READ_STEP = """() => {
  const last = document.querySelector("#table .last-trick");
  return [document.getElementById("position").textContent, last.textContent, last.dataset.winner];
}"""


def position(page) -> int:
    return int(re.search(r"step (\d+) /", page.text_content("#position")).group(1))


@pytest.mark.parametrize("game, options", [("confirmation", {"rounds": 3, "double": True}), ("aegis", {})])
def test_stepping_through_a_replay_shows_the_engines_tricks_and_scores(page, tmp_path, game, options):
    record = played_record(game, 21, options)
    rep = records.replay(record)
    seats = rep.seats
    winners = [seats[e.seat] for e in rep.state.events if e.kind == "trick"]
    open_replay(page, tmp_path, record)
    steps = len(record["actions"])
    shown, label = [], None
    read = walk(page, READ_STEP)
    assert len(read) == steps + 1
    for k, (at, text, winner) in enumerate(read):
        assert at == f"step {k} / {steps}"
        if text and text != label:
            shown.append(seats[int(winner)])
            assert shown[-1] + " wins" in text
            label = text
    assert shown == winners
    # the scores table, row by row, against the results the engine computed
    rows = [[c.inner_text() for c in r.query_selector_all("td")] for r in page.query_selector_all("#scores-body tr")]
    if game == "confirmation":
        assert len(rows) == 3
        for row, r in zip(rows, rep.results["rounds"]):
            for s in range(4):
                assert row[3 + s].endswith(f"{r['points'][s]:+d} = {r['totals'][s]}"), (row, r)
    else:
        assert len(rows) == len(rep.results["games"])
        for row, g in zip(rows, rep.results["games"]):
            assert row[5] == f"{g['points'][0]}-{g['points'][1]}"
    final = ", ".join(f"{name} {score}" for name, score in zip(seats, rep.results["scores"]))
    assert page.text_content("#final") == f"final scores: {final}"


def test_the_address_keeps_the_step_and_the_jumps_move(page, tmp_path):
    record = played_record("confirmation", 5, {"rounds": 2})
    path = open_replay(page, tmp_path, record, step=20)
    assert position(page) == 20
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash") == "#step=21"
    page.goto(path.as_uri() + "#step=21")
    page.reload()
    assert position(page) == 21
    page.keyboard.press("ArrowDown")  # the next round
    assert page.eval_on_selector("#chapter", "s => s.options[s.selectedIndex].text") == "round 2"
    assert position(page) > 21
    page.select_option("#chapter", index=0)
    assert position(page) == 0
    page.keyboard.press("End")
    assert position(page) == len(record["actions"])
    page.click("#play")  # at the end, play starts over from the deal
    page.wait_for_function("() => /step [1-9]/.test(document.getElementById('position').textContent)")
    page.click("#play")


#: every card on the page (data-card), the text this step adds (its log entry, the table's
#: information, the scores), the cards in the other seats' hands
READ_CARDS = """seat => [
  Array.from(document.querySelectorAll("[data-card]"), c => c.dataset.card),
  ["#log .entry.current", "#info", "#scores", "#faults"].map(s => document.querySelector(s).textContent).join(" "),
  document.querySelectorAll(`#table .seat:not([data-seat="${seat}"]) .hand .card`).length,
]"""


def test_a_seats_replay_shows_no_card_hidden_from_it(page, tmp_path):
    record = played_record("aegis", 8)
    seat = 1
    seen = seen_by(record, seat)
    open_replay(page, tmp_path, record, viewer=seat)
    source = page.content()
    assert '"viewer":1' in source
    read = walk(page, READ_CARDS, seat)
    assert len(read) == len(seen)
    for k, ((cards, text, others), known) in enumerate(zip(read, seen)):
        shown = set(cards) | set(CARD.findall(text))
        assert shown <= known, f"step {k}: {sorted(shown - known)}"
        assert others == 0, f"step {k}: the other seat's hand is in the page"


def test_the_reports_standings_are_those_of_referee_ratings(page, tmp_path, invoke):
    directory = small_results(tmp_path / "res", "aegis", matches=8)
    result = invoke("view", directory, "--bootstrap", "200")
    assert result.exit_code == 0, result.output
    rated = json.loads(invoke("ratings", directory, "--format", "json", "--bootstrap", "200").output)
    page.goto((directory / "report" / "index.html").as_uri())
    rows = page.query_selector_all("#standings tbody tr")
    assert len(rows) == len(rated["standings"])
    for row, line in zip(rows, rated["standings"]):
        assert row.get_attribute("data-bot") == line["name"]
        # the terminal's cells: a bound where the bot won or lost everything, too few games on little play
        assert row.query_selector("td.elo").inner_text() == line["shown"]["elo"]
        assert row.query_selector("td.interval").inner_text() == line["shown"]["interval"]
    assert page.query_selector("svg#elo-bars circle") and page.query_selector("#head-to-head td[data-pct]")
    page.click("#matches a >> nth=0")
    assert page.title().startswith("Aegis: ")
    assert position(page) == 0


def test_a_bound_reads_as_the_terminal_prints_it_and_is_drawn_open(page, tmp_path, invoke):
    """The demo's random: "< 1360" in the terminal, and in the report (not "low 662, high 1360" under a
    full bar): the same cells, and a bar from the bound to the plot's edge with an arrow, no dot; after
    two deal sets the same bot is "too few games" there as in the terminal, and not drawn."""
    for deal_sets in (10, 2):
        directory = lopsided_results(tmp_path / f"res{deal_sets}", deal_sets)
        assert invoke("view", directory, "--bootstrap", "200").exit_code == 0
        printed = invoke("ratings", directory, "--bootstrap", "200").output
        cells = re.search(r"^\s+\d+\s+loser\s+(.+?)\s{2,}(.+?)\s{2,}\d", printed, re.M).groups()
        page.goto((directory / "report" / "index.html").as_uri())
        row = page.query_selector('#standings tbody tr[data-bot="loser"]')
        assert (row.query_selector("td.elo").inner_text(), row.query_selector("td.interval").inner_text()) == cells
        bound = page.query_selector('svg#elo-bars g.bound[data-bot="loser"]')
        if deal_sets == 10:
            assert cells[0].startswith("< ") and cells[1] == "-"
            box, plot = bound.bounding_box(), page.query_selector("svg#elo-bars").bounding_box()
            assert plot["x"] <= box["x"] and box["x"] + box["width"] <= plot["x"] + plot["width"]
            assert box["x"] - plot["x"] < 140  # open towards the low end: from the plot's left edge
        else:
            assert cells == ("-", "too few games") and bound is None


# --- the pages on a phone (390 px wide) and on a desktop (1280 px) ---------------------------

WIDTHS = (390, 1280)


def fits(page) -> None:
    """The page does not scroll sideways: what is wider (a table) scrolls inside its own box."""
    width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert width[0] <= width[1], f"the page is {width[0]} px wide in a {width[1]} px window"


def facts(page) -> dict[str, str]:
    return dict(page.evaluate("""() => Array.from(document.querySelectorAll("#facts tr"),
                                  r => [r.dataset.fact, r.querySelector("td").innerText])"""))


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def sized(browser, request):
    page = browser.new_page(viewport={"width": request.param, "height": 800})
    yield page
    page.close()


@pytest.mark.parametrize("game, options", [("confirmation", {"rounds": 2}), ("aegis", {})])
def test_a_replay_fits_the_width(sized, tmp_path, game, options):
    record = played_record(game, 6, options)
    record["meta"] = {"game_id": "3:alice|bob", "faults": []}
    open_replay(sized, tmp_path, record, step=12)
    fits(sized)
    assert sized.text_content("h1").startswith(f"{GAME_TITLES[game]}: alice v bob")
    assert "match 3:alice|bob;" in sized.text_content("header .sub") and "options: " in sized.text_content("header")
    box = sized.evaluate("document.getElementById('table').getBoundingClientRect().right")
    assert box <= sized.viewport_size["width"]  # the card table itself fits, not only the page
    sized.keyboard.press("End")
    fits(sized)


def write_logs(directory) -> None:
    """Logs of r1 and r2 as the launcher writes them: each match they played marked, and indexed."""
    from referee.hosting.launcher import MATCH_INDEX
    from referee.results.store import Store

    store = Store(directory, create=False)
    rows = list(store.matches())
    store.close()
    (directory / "logs").mkdir()
    index = []
    for bot in ("r1", "r2"):
        text = f"--- {bot} start #1 at 2026-01-01 10:00:00: python -m sample_bots.random\n".encode()
        for row in rows:
            for seat in (s for s, b in enumerate(row.lineup) if b == bot):
                begins = len(text)
                text += (f"--- match {row.key} seat {seat}: begins at 2026-01-01 10:00:01\n"
                         f"thinking about {row.key} <b>hard</b>, {'a very long line of thought ' * 8}\n"
                         f"--- match {row.key} seat {seat}: ends (score 1, place 1, faults none)\n").encode()
                index.append({"match": row.key, "bot": bot, "seat": seat, "log": f"{bot}.log", "begins": begins,
                              "ends": len(text), "played": True})
        (directory / "logs" / f"{bot}.log").write_bytes(text)
    (directory / "logs" / MATCH_INDEX).write_text("".join(json.dumps(e) + "\n" for e in index))


def test_the_report_fits_the_width_with_its_title_and_metadata(sized, tmp_path):
    directory = published_results(tmp_path / "res")
    write_logs(directory)
    sized.goto(report.write_report(directory, bootstrap=50, publish_logs=True).as_uri())
    fits(sized)
    assert sized.text_content("h1") == 'Spring <cup> & "friends"' and sized.title() == 'Spring <cup> & "friends"'
    assert sized.inner_text("#about p") == "The first <b>paragraph</b>."
    shown = facts(sized)
    assert set(shown) == {"game", "seed", "clock", "sandbox", "isolation", "played"}
    assert shown["seed"].startswith("123456789 ") and shown["game"] == "Aegis; options: promise=table"
    assert sized.eval_on_selector_all("#entries tbody tr", "rows => rows.map(r => r.dataset.entry)") == [
        "r1", "r2", "r3", "r4"]
    width = sized.viewport_size["width"]
    for chart in ("svg#elo-bars", "svg#points"):
        assert sized.eval_on_selector(chart, "c => c.getBoundingClientRect().right") <= width  # it scales
    wide = sized.eval_on_selector("#matches", "t => [t.parentElement.scrollWidth, t.parentElement.clientWidth]")
    assert (wide[0] > wide[1]) is (width == 390)  # on a phone the match list scrolls in its own box
    # a match's replay, and from it its first seat's lines in that bot's log, highlighted
    key = sized.inner_text("#matches tbody tr >> nth=0 >> a")
    sized.click("#matches a >> nth=0")
    fits(sized)
    sized.click("#logs a >> nth=0")
    fits(sized)
    marked = sized.eval_on_selector_all("#log-lines .line.sel", "lines => lines.map(l => l.innerText)")
    assert len(marked) == 3 and f"--- match {key} seat 0: begins" in marked[0] and "<b>hard</b>" in marked[1]
    assert marked[2].endswith(f"--- match {key} seat 0: ends (score 1, place 1, faults none)")


def test_the_live_page_fits_and_shows_a_running_tournaments_standings_change(browser, tmp_path, invoke):
    """A drawn seed: secret on the live page while the run plays, in the report once it has ended."""
    bots = "".join(f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{ROOT}"\n'
                   for name, command in [("random", ["python", "-m", "sample_bots.random", "--seed", "1"]),
                                         ("heuristic", ["python", "-m", "sample_bots.heuristic"]),
                                         ("search", ["python", "-m", "sample_bots.search", "--think-ms", "15"])])
    config = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=4, seed=3, concurrency=2,
                              extra='title = "Live cup"\ndescription = "Three sample bots."')
    config.write_text(config.read_text().replace("seed = 3\n", ""))
    err_file = (tmp_path / "stderr").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(config), "--http", "0", "-q"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=err_file, text=True)
    pages = {width: browser.new_page(viewport={"width": width, "height": 800}) for width in WIDTHS}
    page = pages[1280]
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()  # the address is on standard output (issue 34, item 9)
            if match := re.search(r"live page: (http://127\.0\.0\.1:\d+/\S*)", line):
                url = match.group(1)
        assert url, "no live page address"
        for p in pages.values():
            p.goto(url)
        page.wait_for_selector("#standings-table", timeout=60000)
        for p in pages.values():
            p.wait_for_selector("#standings-table", timeout=60000)
            fits(p)
            assert p.text_content("h1") == "Live cup" and p.inner_text("#about p") == "Three sample bots."
            shown = facts(p)
            assert shown["seed"] == "drawn from the system's entropy; secret until the run ends"
            assert {"game", "clock", "sandbox", "isolation", "played"} <= set(shown)
            assert p.eval_on_selector_all("#entries tbody tr", "rows => rows.map(r => r.dataset.entry)") == [
                "random", "heuristic", "search"]
        first = page.inner_text("#standings-table")
        finished = int(page.get_attribute("#progress", "data-finished"))
        page.wait_for_function(f"() => Number(document.getElementById('progress').dataset.finished) > {finished}",
                               timeout=60000)
        page.wait_for_function("t => document.getElementById('standings-table').innerText !== t", arg=first,
                               timeout=10000)
        games = page.query_selector_all(".game")
        assert page.query_selector_all(".game .hand .card") == []  # a spectator sees no hand
        assert games or proc.poll() is not None
        pages[390].wait_for_function("() => document.querySelector('.game') !== null"
                                     " || /not answering/.test(document.getElementById('progress').textContent)",
                                     timeout=30000)
        fits(pages[390])  # with the games in progress drawn, if any is still playing
    finally:
        proc.wait(timeout=120)
        err_file.close()
        for p in pages.values():
            p.close()
    assert proc.returncode == 0
    err = (tmp_path / "stderr").read_text()
    assert "played 24 match(es) now" in err
    seed = re.search(r"master seed: (\d+)", err).group(1)
    result = invoke("view", tmp_path / "out", "--bootstrap", "50")
    assert result.exit_code == 0, result.output
    report_page = browser.new_page(viewport={"width": 390, "height": 800})
    report_page.goto((tmp_path / "out" / "report" / "index.html").as_uri())
    fits(report_page)
    assert facts(report_page)["seed"].startswith(f"{seed} (drawn from the system's entropy, released")
    report_page.close()
