"""What a run prints while it plays (referee/cli/progress.py): the terminal's status line fits its
width, the ETA is measured on this run's matches only, the live Elo counts stored results, plain
lines off a terminal, --verbose's per-match and "Score of" lines; and a real run's captured stderr."""

from __future__ import annotations

import io
import re

import pytest
from harness import run_cli, sample_bots, write_tournament

from referee.cli.progress import (
    Eta,
    LiveStandings,
    ProgressSettings,
    RunDisplay,
    duration,
    match_line,
    score_lines,
    status_line,
)
from referee.model import Played, Seating
from referee.results.store import MatchRow
from referee.runner import FaultKind


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def aegis_row(k: int, a: str, b: str, winner: int) -> MatchRow:
    scores = [10, 0] if winner == 0 else [0, 10]
    placing = [1, 2] if winner == 0 else [2, 1]
    return MatchRow(f"{k}:{a}|{b}", k, (a, b), {"scores": scores, "placing": placing})


def played(k: int, a: str, b: str, winner: int) -> Played:
    row = aegis_row(k, a, b, winner)
    results = {**row.results, "faults": [dict.fromkeys(FaultKind, 0)] * 2}
    return Played(Seating(k, k, (a, b)), results, {}, 0.5)


# --- the pieces ---------------------------------------------------------------------------


def test_durations():
    assert [duration(s) for s in (0, 3.4, 59.6, 90, 3599, 3600, 7500)] == \
        ["0s", "3s", "1m00s", "1m30s", "59m59s", "1h00m", "2h05m"]


@pytest.mark.parametrize("width", [80, 40, 20, 5])
def test_the_status_line_never_reaches_the_last_column(width):
    elos = [(f"bot-number-{i}", 1600 - 10 * i) for i in range(12)]
    line = status_line(1234, 5000, "ETA 1h02m", elos, width)
    assert len(line) <= width - 1
    if width >= 40:
        assert line.startswith("1234/5000 matches 24%  ETA 1h02m")
    if width == 80:
        assert line == "1234/5000 matches 24%  ETA 1h02m  Elo bot-number-0 1600, bot-number-1 1590 …"


def test_the_status_line_shows_every_bot_when_they_fit():
    line = status_line(3, 10, "ETA 5s", [("h", 1700.4), ("r1", 1299.6)], 80)
    assert line == "3/10 matches 30%  ETA 5s  Elo h 1700, r1 1300"


def test_the_eta_after_a_resume_counts_this_runs_matches_only():
    clock = Clock()
    eta = Eta(done_before=90, clock=clock)  # 90 of 100 stored by an earlier run
    assert eta.text(90, 100) == "ETA --"  # no pace yet
    clock.now += 20.0  # two matches in 20 s: 10 s each, 8 left
    assert eta.left(92, 100) == pytest.approx(80.0)
    assert eta.text(92, 100) == "ETA 1m20s"
    clock.now += 80.0
    assert eta.text(100, 100) == "done in 1m40s"


def test_match_lines_name_the_match_and_its_result():
    two = MatchRow("4:heuristic|search", 4, ("heuristic", "search"), {"scores": [13, 17], "placing": [2, 1]})
    assert match_line("aegis", 17, two) == \
        "Finished match 4:heuristic|search (aegis, no. 17): heuristic 13 – search 17"
    four = MatchRow("2:a|b|c|d", 2, ("a", "b", "c", "d"), {"scores": [-5, 26, -2, -2], "placing": [4, 1, 2, 2]})
    assert match_line("confirmation", 3, four) == \
        "Finished match 2:a|b|c|d (confirmation, no. 3): 1. b 26, 2. c -2, 2. d -2, 4. a -5"


def test_score_lines_count_wins_losses_and_draws_from_the_first_bots_side():
    live = LiveStandings("confirmation")
    # a 10, b 20, a 10, c 0: a never meets a; both a lose to b and beat c; b beats c
    live.add(MatchRow("0:a|b|a|c", 0, ("a", "b", "a", "c"), {"scores": [10, 20, 10, 0], "placing": [2, 1, 2, 4]}))
    # b 5, a 5, b 0, c 9: a draws with the first b and beats the second; c beats all three
    live.add(MatchRow("1:b|a", 1, ("b", "a", "b", "c"), {"scores": [5, 5, 0, 9], "placing": [2, 2, 4, 1]}))
    assert live.tally == {("a", "b"): [1, 2, 1], ("a", "c"): [2, 1, 0], ("b", "c"): [1, 2, 0]}
    assert score_lines(live.tally, ["a", "b", "c"]) == [
        "Score of a vs b: 1 - 2 - 1  [0.375] 4",
        "Score of a vs c: 2 - 1 - 0  [0.667] 3",
        "Score of b vs c: 1 - 2 - 0  [0.333] 3",
    ]
    assert score_lines(live.tally, ["c", "b", "a"]) == [
        "Score of c vs b: 2 - 1 - 0  [0.667] 3",
        "Score of c vs a: 1 - 2 - 0  [0.333] 3",
        "Score of b vs a: 2 - 1 - 1  [0.625] 4",
    ]


def test_a_costly_fit_is_not_repeated_at_once_unless_fresh():
    clock = Clock()
    live = LiveStandings("aegis", [aegis_row(0, "a", "b", 0)], clock)
    first = live.elos()
    live._cost = 1.0  # as if that fit had taken a second
    live.add(aegis_row(1, "a", "b", 1))
    clock.now += 10.0
    assert live.elos() == first  # not refitted for fifty seconds
    clock.now += 40.0
    assert live.elos() != first and dict(live.elos())["a"] == pytest.approx(1500)
    live._cost = 1.0
    live.add(aegis_row(2, "a", "b", 1))
    assert dict(live.elos(fresh=True))["b"] > 1500


def test_live_standings_include_the_stored_results():
    stored = [aegis_row(k, "a", "b", 0) for k in range(10)]  # a won ten stored matches
    live = LiveStandings("aegis", stored)
    live.add(aegis_row(10, "a", "b", 1))  # b wins the first of this run
    elos = dict(live.elos())
    assert elos["a"] > elos["b"] + 100
    assert dict(LiveStandings("aegis", [aegis_row(10, "a", "b", 1)]).elos())["b"] > 1500


# --- the display ------------------------------------------------------------------------


def display(tty: bool, settings: ProgressSettings, clock: Clock, width: int = 80, stored=(), total: int = 20):
    stream = Terminal(tty)
    return stream, RunDisplay("aegis", total, settings, stored=stored, number_of=lambda key: int(key.split(":")[0]) + 1,
                              names=["b", "a"], stream=stream, clock=clock, width=lambda: width)


@pytest.mark.parametrize("width", [80, 40])
def test_on_a_terminal_one_line_is_redrawn_within_the_width(width):
    clock = Clock()
    stream, shown = display(True, ProgressSettings(verbose=True, score_every=3), clock, width,
                            stored=[aegis_row(k, "a", "b", 0) for k in range(10)])
    shown.update(10, 20, None)
    for k in range(10, 20):
        clock.now += 3.0
        shown.update(k + 1, 20, played(k, "a", "b", 1))
    shown.close()
    text = stream.getvalue()
    lines = text.split("\n")
    status = [part for line in lines for part in line.split("\r") if "matches" in part]
    assert status and all(len(part) <= width - 1 for part in status)
    assert status[0].startswith("10/20 matches 50%  ETA --")
    assert any(part.startswith("11/20 matches 55%  ETA 27s") for part in status)  # 3 s a match, 9 left
    assert status[-1].startswith("20/20 matches 100%  done in 30s") and text.endswith("\n")
    assert "Elo a 1500, b 1500" in status[-1] or "Elo b 1500, a 1500" in status[-1] or width < 60  # 10 wins each
    finished = [line.split("\r")[-1] for line in lines if "Finished match" in line]
    assert finished[0] == "Finished match 10:a|b (aegis, no. 11): a 0 – b 10" and len(finished) == 10
    scores = [line.split("\r")[-1] for line in lines if "Score of" in line]
    assert scores[0] == "Score of b vs a: 3 - 10 - 0  [0.231] 13"  # the stored results counted too
    assert len(scores) == 4  # after 3, 6 and 9 matches of this run, and at the end


def test_off_a_terminal_a_plain_line_every_n_matches_or_s_seconds():
    clock = Clock()
    stream, shown = display(False, ProgressSettings(every=4, seconds=30), clock, total=12)
    shown.update(0, 12, None)
    for k in range(12):
        clock.now += 100.0 if k == 5 else 1.0  # the sixth match takes 100 s: a line for the time
        shown.update(k + 1, 12, played(k, "a", "b", 0))
    shown.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert [line.split(",")[0] for line in lines] == [
        "progress: 4/12 matches (33%)", "progress: 6/12 matches (50%)", "progress: 10/12 matches (83%)",
        "progress: 12/12 matches (100%)"]
    assert re.fullmatch(r"progress: 4/12 matches \(33%\), 4 in 4s this run, ETA 8s; Elo a 1\d{3}, b 1\d{3}", lines[0])
    assert lines[-1].startswith("progress: 12/12 matches (100%), 12 in 1m51s this run, done in 1m51s; Elo a ")


def test_quiet_prints_nothing_but_verbose_lines():
    clock = Clock()
    stream, shown = display(False, ProgressSettings(quiet=True), clock, total=2)
    shown.update(0, 2, None)
    shown.update(1, 2, played(0, "a", "b", 0))
    shown.update(2, 2, played(1, "a", "b", 0))
    assert stream.getvalue() == ""
    stream, shown = display(False, ProgressSettings(quiet=True, verbose=True), clock, total=1)
    shown.update(0, 1, None)
    shown.update(1, 1, played(0, "a", "b", 0))
    assert stream.getvalue().splitlines() == ["Finished match 0:a|b (aegis, no. 1): a 10 – b 0",
                                              "Score of b vs a: 0 - 1 - 0  [0.000] 1"]


# --- a real run, its output captured (not a terminal) -------------------------------------

BOTS = sample_bots(r1="python -m sample_bots.random --seed 1", h="python -m sample_bots.heuristic")


@pytest.mark.e2e
def test_a_captured_run_prints_progress_and_verbose_lines(tmp_path):
    path = write_tournament(tmp_path / "t.toml", BOTS, game="aegis", deal_sets=5, seed=7,
                            concurrency=2, output="out")
    done = run_cli("tournament", path, "--verbose", "--score-every", "4", "--progress-every", "3",
                   "--bootstrap", "0")
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    finished = [line for line in err if line.startswith("Finished match ")]
    assert len(finished) == 10
    line_of = re.compile(r"Finished match \d:(r1|h)\|(r1|h) \(aegis, no. (\d+)\): (r1|h) -?\d+ – (r1|h) -?\d+$")
    numbers = sorted(int(line_of.match(line).group(3)) for line in finished)
    assert numbers == list(range(1, 11))
    assert len([line for line in err if re.fullmatch(r"Score of r1 vs h: \d+ - \d+ - \d+  \[\d\.\d{3}\] \d+", line)]) \
        == 3  # after 4 and 8 matches, and at the end
    progress = [line for line in err if line.startswith("progress: ")]
    assert len(progress) >= 4 and progress[-1].startswith("progress: 10/10 matches (100%), 10 in ")
    assert all(re.search(r"(ETA (--|\d+[smh])|done in)", line) for line in progress)
    assert "Finished" not in done.stdout and "progress:" not in done.stdout
    # resumed with nothing left: the stored results still make the standings line
    again = run_cli("tournament", path, "--bootstrap", "0")
    assert again.returncode == 0 and "played 0 match(es) now, 10 in all" in again.stderr
