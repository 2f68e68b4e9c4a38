"""The docs' code runs: the bots of docs/writing-a-bot.md play a real match."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import ROOT, run_cli

pytestmark = pytest.mark.e2e


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_writing_a_bot_examples_play_a_match(tmp_path):
    blocks = python_blocks(ROOT / "docs" / "writing-a-bot.md")
    assert len(blocks) == 2
    for i, code in enumerate(blocks):
        bot = tmp_path / f"bot{i}.py"
        bot.write_text(code)
        for game, extra in (("aegis", []), ("confirmation", ["-o", "rounds=2"])):
            out = run_cli("match", game, "--bot", f"mine=python {bot}", "--bot", "random=python -m sample_bots.random",
                          "--no-log", *extra, timeout=120)
            assert out.returncode == 0, out.stderr
            assert "final scores" in out.stdout and "fault" not in out.stdout, out.stdout
