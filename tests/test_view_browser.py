"""The pages in a real browser: headless Chromium (Debian's) driven by Playwright for Python.

A replay is stepped through with the keyboard and what the page shows is compared with the
engine's replay of the record: each trick's winner, each round's or game's scores, the final
scores; a seat's replay shows, at every step, only cards the engine says that seat had seen;
the report's standings are those of ``referee ratings``; the live page of a running tournament
shows its standings change. One browser per module. Without chromium or Playwright these skip
with the reason; under REFEREE_REQUIRE_BROWSER=1 (.ci/run) they fail instead."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from harness import CHROMIUM, ROOT, require_browser, write_tournament
from test_view import CARD, played_record, seen_by, small_results

from referee import records
from referee.view.page import replay_page

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
        elo = {"upper": f"< {line['hi']:.0f}", "lower": f"> {line['lo']:.0f}"}.get(line["bound"], f"{line['elo']:.0f}")
        assert row.query_selector("td.elo").inner_text() == elo  # a bound where the bot won or lost everything
        for cls in ("lo", "hi"):
            assert row.query_selector(f"td.{cls}").inner_text() == f"{line[cls]:.0f}"
    assert page.query_selector("svg#elo-bars circle") and page.query_selector("#head-to-head td[data-pct]")
    page.click("#matches a >> nth=0")
    assert page.title().startswith("Aegis: ")
    assert position(page) == 0


def test_the_live_page_shows_a_running_tournaments_standings_change(page, tmp_path):
    bots = "".join(f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{ROOT}"\n'
                   for name, command in [("random", ["python", "-m", "sample_bots.random", "--seed", "1"]),
                                         ("heuristic", ["python", "-m", "sample_bots.heuristic"]),
                                         ("search", ["python", "-m", "sample_bots.search", "--think-ms", "15"])])
    config = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=4, seed=3, concurrency=2)
    proc = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(config), "--http", "0", "-q"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if match := re.search(r"live page: (http://127\.0\.0\.1:\d+/\S*)", line):
                url = match.group(1)
        assert url, "no live page address"
        page.goto(url)
        page.wait_for_selector("#standings-table", timeout=60000)
        first = page.inner_text("#standings-table")
        finished = int(page.get_attribute("#progress", "data-finished"))
        page.wait_for_function(f"() => Number(document.getElementById('progress').dataset.finished) > {finished}",
                               timeout=60000)
        page.wait_for_function("t => document.getElementById('standings-table').innerText !== t", arg=first,
                               timeout=10000)
        games = page.query_selector_all(".game")
        assert page.query_selector_all(".game .hand .card") == []  # a spectator sees no hand
        assert games or proc.poll() is not None
    finally:
        proc.wait(timeout=120)
    assert proc.returncode == 0
    assert "played 24 match(es) now" in proc.stderr.read()
