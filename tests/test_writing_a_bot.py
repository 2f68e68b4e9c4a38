"""docs/writing-a-bot.md as a bot author outside the repository follows it: the smallest bot
and the Aegis example, saved in a directory of their own, enter a tournament with no PYTHONPATH
and play every match without a fault; the strength tool measures the example from its file."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from harness import ROOT, run_cli

from referee.results.store import Store

pytestmark = pytest.mark.e2e

DOC = ROOT / "docs" / "writing-a-bot.md"

TOURNAMENT = """
[tournament]
game = "aegis"
deal_sets = 1
seed = 11
output = "results"

[[bots]]
name = "mine"
command = ["python", "mybot.py"]
cwd = "bots"

[[bots]]
name = "aegisbot"
command = ["python", "aegisbot.py"]
cwd = "bots"

[[bots]]
name = "random"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
"""


def _examples() -> dict[str, str]:
    return dict(re.findall(r"<!-- example: (\S+) -->\s*```python\n(.*?)```", DOC.read_text(), re.S))


@pytest.fixture
def author(tmp_path):
    """A bot author's directory, outside the repository, and an environment without PYTHONPATH."""
    bots = tmp_path / "bots"
    bots.mkdir()
    for name, code in _examples().items():
        (bots / name).write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return tmp_path, env


def test_the_doc_has_both_examples():
    assert set(_examples()) == {"mybot.py", "aegisbot.py"}


def test_bots_outside_the_repository_play_a_tournament(author):
    home, env = author
    (home / "t.toml").write_text(TOURNAMENT)
    run = run_cli("tournament", "t.toml", "--quiet", cwd=home, env=env, timeout=240)
    assert run.returncode == 0, run.stderr
    store = Store(home / "results", create=False)
    try:
        rows = list(store.matches())
        assert len(rows) == 6  # 3 pairs x 1 deal set x 2 seatings
        for row in rows:
            assert all(sum(per_seat.values()) == 0 for per_seat in row.faults), (row.key, row.faults)
    finally:
        store.close()


def test_the_strength_tool_measures_a_bot_file(author):
    home, env = author
    run = subprocess.run([sys.executable, "-m", "referee.tools.strength", "--game", "aegis", "--bot",
                          "./aegisbot.py", "--against", "random", "--games", "4", "--seed", "1"],
                         cwd=home / "bots", env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "bot v other" in run.stdout
