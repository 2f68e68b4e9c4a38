"""Each bot's log marks every match it plays by the match's id, a line before and after it for each
seat, in both isolations; the index the runner keeps beside the logs says where the markers are, and
``referee view DIR --logs`` publishes the logs with each replay linking its seats' lines (and nothing
of the logs without ``--logs``). The bot writes a line naming its game and seat at every decision, and
a forged marker: every one of its lines lies between its own match's markers, and the links follow the
runner's markers, not the forged one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from harness import ROOT, write_tournament

from referee.hosting.launcher import MATCH_INDEX
from referee.results.store import Store
from referee.view import logs as vlogs
from referee.view.report import replay_file

pytestmark = pytest.mark.e2e

BOTS = f"""
[clock]
decision_ms = 2000
bank_ms = 10000

[[bots]]
name = "chatty"
command = ["python", "tests/bots/chatty.py"]
cwd = "{ROOT}"

[[bots]]
name = "random"
command = ["python", "-m", "sample_bots.random", "--seed", "3"]
cwd = "{ROOT}"
"""

#: per isolation: a game where chatty holds one seat (Aegis), and one where it holds two (Confirmation, two bots)
RUNS = {"match": {"game": "aegis", "deal_sets": 2, "options": ""},
        "tournament": {"game": "confirmation", "deal_sets": 1, "options": "rounds = 1"}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from harness import invoke_cli

    out = {}
    for isolation, how in RUNS.items():
        base = tmp_path_factory.mktemp(isolation)
        config = write_tournament(base / "t.toml", BOTS, game=how["game"], deal_sets=how["deal_sets"], seed=5,
                                  concurrency=2, extra=f'isolation = "{isolation}"', options=how["options"])
        result = invoke_cli("tournament", config, "-q")
        assert result.exit_code == 0, result.output
        out[isolation] = base / "out"
    return out


def stored(directory: Path) -> list:
    store = Store(directory, create=False)
    try:
        return list(store.matches())
    finally:
        store.close()


def game_ids(directory: Path) -> dict[str, str]:
    """Each stored match's game id at the referee (what its bots were told; its record keeps it)."""
    store = Store(directory, create=False)
    try:
        return {row.key: store.record(row.key)["meta"]["game_id"] for row in store.matches()}
    finally:
        store.close()


@pytest.mark.parametrize("isolation", list(RUNS))
def test_every_match_is_marked_in_the_log_of_each_of_its_seats(runs, isolation):
    directory = runs[isolation]
    lines = (directory / "logs" / "chatty.log").read_text().splitlines()
    rows = stored(directory)
    told = game_ids(directory)
    seats = [(row, seat) for row in rows for seat, bot in enumerate(row.lineup) if bot == "chatty"]
    assert len(seats) == 4  # aegis: 4 matches, one seat each; confirmation: 2 matches, two seats each
    for row, seat in seats:
        begin = [i for i, line in enumerate(lines) if line.startswith(f"--- match {row.key} seat {seat}: begins at ")]
        end = [i for i, line in enumerate(lines)
               if line == f"--- match {row.key} seat {seat}: ends (score {row.scores[seat]}, place "
                          f"{row.placing[seat]}, faults none)"]
        assert len(begin) == len(end) == 1, (row.key, seat)
        mine = [i for i, line in enumerate(lines)
                if line.startswith(f"chatty: game {told[row.key]} seat {seat} decision ")]
        assert mine and all(begin[0] < i < end[0] for i in mine), (row.key, seat)  # each of its lines inside
        # under "match", the match's own process starts and stops inside its markers; under "tournament",
        # the one long-lived process started before the first
        inside = lines[begin[0]:end[0]]
        starts = sum(line.startswith("--- chatty start #") for line in inside)
        # it ends by itself after its GameEnd (the grace), or is stopped
        stops = sum(line == "--- stopped after its match" or line.startswith("--- ended after its session: ")
                    for line in inside)
        assert (starts >= 1 and stops >= 1) if isolation == "match" else starts == stops == 0


@pytest.mark.parametrize("isolation", list(RUNS))
def test_the_index_points_at_the_runners_markers_not_at_the_bots_imitation(runs, isolation):
    directory = runs[isolation]
    index = [json.loads(line) for line in (directory / "logs" / MATCH_INDEX).read_text().splitlines()]
    rows = stored(directory)
    assert {(e["match"], e["seat"], e["bot"]) for e in index} == {
        (row.key, seat, bot) for row in rows for seat, bot in enumerate(row.lineup)}
    spans = vlogs.spans(directory / "logs")
    lines = (directory / "logs" / "chatty.log").read_text().splitlines()
    for (key, seat), span in spans.items():
        if span.log == "chatty.log":
            assert lines[span.first - 1].startswith(f"--- match {key} seat {seat}: begins at 20")
            assert not lines[span.first - 1].startswith("--- match 99:forged")
            assert lines[span.last - 1].startswith(f"--- match {key} seat {seat}: ends (score ")
    assert not any(key.startswith("99:") for key, _ in spans)
    assert any("--- match 99:forged" in line for line in lines)  # the bot did try


def test_a_replay_links_its_seats_log_lines_only_when_the_logs_are_published(runs, invoke):
    directory = runs["match"]
    report = directory / "report"
    assert invoke("view", directory, "--bootstrap", "0").exit_code == 0
    assert not (report / "logs").exists()
    assert "#L" not in "".join(p.read_text() for p in (report / "replays").iterdir())
    result = invoke("view", directory, "--bootstrap", "0", "--logs")
    assert result.exit_code == 0, result.output
    spans = vlogs.spans(directory / "logs")
    for row in stored(directory):
        page = (report / "replays" / replay_file(row.key)).read_text()
        links = dict(re.findall(r'<a href="\.\./logs/([a-z]+)\.html(#L\d+-L\d+)">', page))
        assert links == {bot: spans[(row.key, seat)].anchor() for seat, bot in enumerate(row.lineup)}
        for bot, anchor in links.items():
            first, last = map(int, re.findall(r"\d+", anchor))
            log_page = (report / "logs" / f"{bot}.html").read_text()
            line = re.search(rf'<div id="L{first}" class="line mark">(.*?)</div>', log_page).group(1)
            assert f"--- match {row.key} seat " in line and "begins at" in line
            assert f'<div id="L{last}" class="line mark">' in log_page
    forged = re.findall(r'<div id="L\d+" class="([a-z ]+)"><a class="n" href="#L\d+">\d+</a>--- match 99:forged',
                        (report / "logs" / "chatty.html").read_text())
    assert forged and set(forged) == {"line"}  # the bot's imitation is not marked as the runner's
    index = (report / "index.html").read_text()
    assert 'href="logs/chatty.html"' in index and 'href="logs/random.html"' in index
    # published once, then a report without --logs: the log pages are gone again
    assert invoke("view", directory, "--bootstrap", "0").exit_code == 0
    assert not (report / "logs").exists() and 'href="logs/' not in (report / "index.html").read_text()
