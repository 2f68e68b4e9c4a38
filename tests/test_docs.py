"""The docs hold: the bots of docs/writing-a-bot.md play a real match, and every rule
section the code cites is a heading of docs/rules.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import ROOT, run_cli

RULE_BOOK = ROOT / "docs" / "rules.md"


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


@pytest.mark.e2e
def test_writing_a_bot_examples_play_a_match(tmp_path):
    blocks = python_blocks(ROOT / "docs" / "writing-a-bot.md")
    assert len(blocks) == 3  # the smallest bot, a Confirmation bot, an Aegis bot
    for i, code in enumerate(blocks):
        bot = tmp_path / f"bot{i}.py"
        bot.write_text(code)
        plays = (("aegis", []), ("confirmation", ["-o", "rounds=2"]))
        for game, extra in plays[:1] if 'obs["killers"]' in code else plays:
            out = run_cli("match", game, "--bot", f"mine=python {bot}", "--bot", "random=python -m sample_bots.random",
                          "--no-log", *extra, timeout=120)
            assert out.returncode == 0, out.stderr
            assert "final scores" in out.stdout and "fault" not in out.stdout, out.stdout


# What the code cites: the section an illegal action names (``IllegalActionError("1.4", ...)``, also
# ``NotYourTurnError``, ``rule = "1.8" if ... else "1.6"`` and a phase's table of rules) and the
# "RULES 2.6" / "RULES.md §3" / "RULES §4" of docstrings and comments.
_RAISED = re.compile(r'(?:IllegalActionError|NotYourTurnError)\(\s*"(\d+(?:\.\d+)*)"')
_RULE_LINE = re.compile(r'\brule\b.*|def _rule\b.*\n.*')
_RULE_NUMBER = re.compile(r'"(\d+(?:\.\d+)*)"')
_CITED = re.compile(r'\bRULES(?:\.md)?\s*(?:§\s*)?(\d+(?:\.\d+)*)')
_HEADING = re.compile(r'^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s', re.M)


def cited_sections() -> dict[str, set[str]]:
    """Every rule section cited in referee/ and tests/ -> the files citing it."""
    cited: dict[str, set[str]] = {}
    for path in sorted([*(ROOT / "referee").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        if path.name == "test_docs.py":
            continue
        text = path.read_text()
        numbers = set(_RAISED.findall(text)) | set(_CITED.findall(text))
        if path.parent.parent.name == "games" or path.parent.name == "games":
            for line in _RULE_LINE.findall(text):
                numbers |= set(_RULE_NUMBER.findall(line))
        for number in numbers:
            cited.setdefault(number, set()).add(str(path.relative_to(ROOT)))
    return cited


def headings(text: str) -> set[str]:
    return set(_HEADING.findall(text))


def missing_sections(rule_book: str, cited: dict[str, set[str]]) -> dict[str, list[str]]:
    """The cited sections that are not a heading number of the rule book -> the files citing them."""
    found = headings(rule_book)
    return {n: sorted(files) for n, files in cited.items() if n not in found}


def test_rule_book_has_every_cited_section():
    cited = cited_sections()
    # the scan finds what it must: the engines' rules and the sections the docstrings cite
    assert {"1", "2", "3", "4", "1.4", "1.5", "1.6", "1.8", "2.4", "2.5", "2.6", "2.8"} <= set(cited), sorted(cited)
    missing = missing_sections(RULE_BOOK.read_text(), cited)
    assert not missing, f"docs/rules.md has no heading for: {missing}"


def test_rule_book_check_fails_without_a_heading():
    text = RULE_BOOK.read_text()
    cited = cited_sections()
    for number in sorted(cited):
        without = re.sub(rf"^#{{2,6}}\s+{re.escape(number)}\.?\s.*$", "", text, count=1, flags=re.M)
        assert without != text, f"no heading {number} to remove"
        assert number in missing_sections(without, cited), number


@pytest.mark.parametrize("name", ["aegis.toml", "confirmation.toml", "gauntlet.toml", "kits.toml"])
def test_the_example_files_are_valid(name):
    from referee.tournament import config, gauntlet

    path = ROOT / "examples" / name
    cfg = gauntlet.load(path) if name in ("gauntlet.toml", "kits.toml") else config.load(path)
    assert cfg is not None
