"""The docs hold: the bots of docs/writing-a-bot.md play a real match, every rule
section the code cites is a heading of docs/rules.md, no doc names a file (a heading,
a test file, a test) that the repository lacks, and the README stays a short way into every doc."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, run_cli

from referee.competition import config, gauntlet, ladder

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


@pytest.mark.parametrize("name", ["aegis.toml", "confirmation.toml", "gauntlet.toml", "kits.toml", "adaptive.toml"])
def test_the_example_files_are_valid(name):
    path = ROOT / "examples" / name
    cfg = gauntlet.load(path) if name in ("gauntlet.toml", "kits.toml") else config.load(path)
    assert cfg is not None


def test_the_example_competition_file_is_valid():
    spec = ladder.load(ROOT / "examples" / "competition.toml")
    assert spec.ladder.fill and spec.house.bots


# --- every file a doc names is in the repository ---------------------------------------------
#
# What counts as naming a file of the repository, and what does not (a rule each, not a list of
# exceptions):
# - a Markdown link to a relative target must reach a file or directory of the repository, and
#   its #anchor, if any, a heading of that page;
# - an inline code span that is a relative path whose first part is an entry of the repository's
#   root (or of the doc's own folder) must exist; a part in capitals (NAME), in <angle brackets>,
#   or with a * is a placeholder, matched by any name; a pytest id (path::test) names its test;
# - a test file named bare in an inline code span (`test_x.py`, `test_x.py::test_y`,
#   `test_x.py[case]`) must be a file of tests/ and hold the test it names; a test named bare
#   (`test_y`, `::test_y` after a pytest id, `test_y[case]`) must be a test of some file of tests/;
# - a relative path that climbs out of the repository (../shared/...) is outside every reader's
#   checkout: it may not be named at all;
# - a document name in capitals (README.md, RULES.md) is a repository's by convention: some file
#   of the repository must have that name;
# - an absolute path (/usr/bin/chromium, /run/referee/referee.sock) names the machine's files, a
#   bare lowercase name (mybot.py, bench.json) or a path under a folder the repository lacks
#   (mybot/bot.py, out/) the reader's own: not checked; neither is a fenced code block (a
#   command or a program, whose files are the reader's; tests run the blocks that matter).
# The proto's comments are read like the prose of a doc.

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_SPAN = re.compile(r"`([^`\n]+)`")
_DOC_NAME = re.compile(r"(?<![\w/.-])([A-Z][A-Z0-9_]*\.md)\b")
_PROTO_PATH = re.compile(r"(?<![\w/.:-])((?:\.\./)*[\w.-]+/[\w./<>*-]*[\w/>*])")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]+$|[<*{]|N{3,}")
_TEST_FILE_SPAN = re.compile(r"(test_\w+\.py)(?:::(test_\w+))?(?:\[[^\]]*\])?")
_TEST_NAME_SPAN = re.compile(r"(?:::)?(test_\w+)(?:\[[^\]]*\])?")


def _segment(part: str) -> str:
    """A path's part as a pattern: a placeholder in capitals or <brackets> is any name, * any text."""
    if re.fullmatch(r"[A-Z][A-Z_]+|<[^>]+>", part):
        return "[^/]+"
    return re.sub(r"<[^>]+>|N{3,}", "[^/]+", re.escape(part).replace(r"\*", "[^/]*").replace(r"\<", "<")
                  .replace(r"\>", ">"))


def repository_files(root: Path) -> set[str]:
    """The files of the repository (tracked, or new and not ignored), as paths from ``root``."""
    import subprocess

    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                                capture_output=True, text=True, check=True).stdout.split("\n")
        return {f for f in listed if f and (root / f).exists()}
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: what is on disk
        return {p.relative_to(root).as_posix() for p in root.rglob("*")
                if p.is_file() and not {".git", ".venv"} & set(p.relative_to(root).parts)}


@functools.cache
def slugs(markdown: str) -> frozenset[str]:
    """The anchors of a page's headings, as GitHub makes them (a repeated heading gets -1, -2...)."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*$", _FENCE.sub("", markdown), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n, unique = 0, slug
        while unique in found:
            n += 1
            unique = f"{slug}-{n}"
        found.add(unique)
    return frozenset(found)


def missing_references(doc: str, text: str, files: set[str], pages: dict[str, str]) -> list[str]:
    """What ``text`` (the doc at path ``doc`` from the root, or a proto) names that the repository
    lacks, one line each. ``pages`` maps a Markdown file's path to its text (for anchors)."""
    folders = {str(Path(f).parents[i]) for f in files for i in range(len(Path(f).parents) - 1)}
    here = Path(doc).parent
    entries = {f.split("/")[0] for f in files}
    names = {Path(f).name for f in files}
    prose = _FENCE.sub("", text)
    found: list[str] = []

    def resolve(target: str, base: Path = here) -> str | None:
        """The path from the root (``target`` relative to ``base``), or None when it leaves the repository."""
        parts: list[str] = []
        for part in (base / target).parts:
            if part == "..":
                if not parts:
                    return None
                parts.pop()
            elif part != ".":
                parts.append(part)
        return "/".join(parts)

    def exists(path: str) -> bool:
        path = path.rstrip("/")
        if not any(_PLACEHOLDER.search(part) for part in path.split("/")):
            return path in files or path in folders or path == ""
        pattern = re.compile("/".join(_segment(p) for p in path.split("/")))
        return any(pattern.fullmatch(f) for f in files | folders)

    def check_path(shown: str, target: str, anchor: str | None = None, base: Path = here) -> str | None:
        path = resolve(target, base)
        if path is None:
            found.append(f"{doc}: {shown}: outside the repository")
        elif not exists(path):
            found.append(f"{doc}: {shown}: no such file or directory")
        elif anchor and path in pages and anchor not in slugs(pages[path]):
            found.append(f"{doc}: {shown}: no heading #{anchor} in {path}")
        return path

    for target in _LINK.findall(prose):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in slugs(text):
                found.append(f"{doc}: {target}: no such heading here")
            continue
        check_path(target, path, anchor)
    spans = _SPAN.findall(prose) if doc.endswith(".md") else _PROTO_PATH.findall(prose)
    if doc.endswith(".md"):
        found += missing_tests(doc, spans, files)
    for span in spans:
        span = span.rstrip(".,;:)")
        if " " in span or "/" not in span or span.startswith(("/", "~", "$", "-")) or "://" in span:
            continue
        path, _, test = span.partition("::")
        first = path.split("/")[0]
        if first == ".." or (here / first).as_posix() in folders:
            source = check_path(span, path)  # from the doc's folder
        elif first in entries:
            source = check_path(span, path, base=Path("."))  # from the root
        else:
            continue  # the reader's own folder
        name = test.split("[")[0].split("::")[-1]  # a parametrized case, or a method of a test class
        if test and source in files and not re.search(rf"def {re.escape(name)}\b", (ROOT / source).read_text()):
                found.append(f"{doc}: {span}: no test {test} in {source}")
    for name in _DOC_NAME.findall(prose):
        if name not in names:
            found.append(f"{doc}: {name}: no file of that name in the repository")
    return found


@functools.cache
def _source(path: str) -> str:
    return (ROOT / path).read_text()


def _defines(source: str, test: str) -> bool:
    return re.search(rf"def {re.escape(test)}\b", _source(source)) is not None


def missing_tests(doc: str, spans: list[str], files: set[str]) -> list[str]:
    """The test files and tests that the inline code spans ``spans`` of ``doc`` name bare (without
    ``tests/``) and tests/ lacks, one line each."""
    test_files = sorted(f for f in files if re.fullmatch(r"tests/test_\w+\.py", f))
    found: list[str] = []
    for span in spans:
        span = span.rstrip(".,;:)")
        if named := _TEST_FILE_SPAN.fullmatch(span):
            source, test = f"tests/{named[1]}", named[2]
            if source not in files:
                found.append(f"{doc}: {span}: no such file in tests/")
            elif test and not _defines(source, test):
                found.append(f"{doc}: {span}: no test {test} in {source}")
        elif (named := _TEST_NAME_SPAN.fullmatch(span)) and not any(_defines(f, named[1]) for f in test_files):
            found.append(f"{doc}: {span}: no test {named[1]} in tests/")
    return found


def documents(files: set[str]) -> list[str]:
    """README.md, docs/*.md, tests/README.md, every README under sample_bots/ and examples/, and the protos."""
    return sorted(f for f in files if f in ("README.md", "tests/README.md") or re.fullmatch(r"docs/[^/]+\.md", f)
                  or re.fullmatch(r"(sample_bots|examples)/(.+/)?README\.md", f)
                  or re.fullmatch(r"proto/.+\.proto", f))


def test_no_doc_names_a_file_the_repository_lacks():
    files = repository_files(ROOT)
    docs = documents(files)
    assert {"README.md", "docs/protocol.md", "docs/rules.md", "sample_bots/node/README.md", "tests/README.md",
            "proto/referee/v1/referee.proto"} <= set(docs)
    pages = {f: (ROOT / f).read_text() for f in files if f.endswith(".md")}
    missing = [line for doc in docs for line in missing_references(doc, (ROOT / doc).read_text(), files, pages)]
    assert not missing, "\n".join(missing)


def test_the_reference_check_finds_what_it_must_and_nothing_else():
    files = {"README.md", "docs/rules.md", "docs/protocol.md", "referee/games/aegis/view.py",
             "tests/test_docs.py", "sample_bots/heuristic_aegis.py", "sample_bots/node/bot.js"}
    pages = {"docs/rules.md": "# The rule book\n## 1. Confirmation\n", "docs/protocol.md": "## 9. On the wire\n"}
    text = "\n".join([
        "## 9. On the wire",
        "The rules are in RULES.md and [the rule book](rules.md#1-confirmation), see [9](#9-on-the-wire).",
        "Bad: [gone](gone.md), [anchor](rules.md#2-aegis), `referee/games/chess/rules.py`, `../shared/DESIGN.md`,",
        "`tests/test_docs.py::test_nothing_like_this`, [up](../../outside.md).",
        "Fine: `referee/games/NAME/view.py`, `referee/games/<game>/`, `sample_bots/heuristic*.py`, README.md,",
        "`/usr/bin/chromium`, `/run/referee/referee.sock`, `mybot/bot.py`, `bench.json`, `out/`,",
        "`tests/test_docs.py::test_the_reference_check_finds_what_it_must_and_nothing_else`.",
        "Bad, bare: `test_gone.py`, `test_docs.py::test_nothing_like_this`, `::test_nothing_at_all`,",
        "`test_nothing_at_all[a case]`. Fine: `test_docs.py`, `test_docs.py[a case]`,",
        "`::test_rule_book_has_every_cited_section`, `test_docs.py::test_rule_book_has_every_cited_section`,",
        "`test_the_example_files_are_valid[a case]`.",
        "```sh", "cat referee/nowhere.py RULES.md", "```",
    ])
    found = missing_references("docs/protocol.md", text, files, pages)
    assert found == [
        "docs/protocol.md: gone.md: no such file or directory",
        "docs/protocol.md: rules.md#2-aegis: no heading #2-aegis in docs/rules.md",
        "docs/protocol.md: ../../outside.md: outside the repository",
        "docs/protocol.md: test_gone.py: no such file in tests/",
        "docs/protocol.md: test_docs.py::test_nothing_like_this: no test test_nothing_like_this in tests/test_docs.py",
        "docs/protocol.md: ::test_nothing_at_all: no test test_nothing_at_all in tests/",
        "docs/protocol.md: test_nothing_at_all[a case]: no test test_nothing_at_all in tests/",
        "docs/protocol.md: referee/games/chess/rules.py: no such file or directory",
        "docs/protocol.md: ../shared/DESIGN.md: no such file or directory",
        "docs/protocol.md: tests/test_docs.py::test_nothing_like_this: no test test_nothing_like_this in "
        "tests/test_docs.py",
        "docs/protocol.md: RULES.md: no file of that name in the repository",
    ], found


# --- the README: a newcomer's page, short, and a way into every doc -------------------------------

README = ROOT / "README.md"
README_MAX_LINES = 200  # issue 31: a newcomer's README, under 200 lines; figures live in docs/benchmarks.md


def readme_doc_links(text: str) -> list[str]:
    """The docs/*.md pages the README links to (anchors dropped), in order."""
    return [target.partition("#")[0] for target in _LINK.findall(_FENCE.sub("", text))
            if re.fullmatch(r"docs/[^/]+\.md", target.partition("#")[0])]


def test_the_readme_is_short_and_leads_to_every_doc():
    text = README.read_text()
    assert len(text.splitlines()) < README_MAX_LINES, f"README.md has {len(text.splitlines())} lines"
    files = repository_files(ROOT)
    pages = {f: (ROOT / f).read_text() for f in files if f.endswith(".md")}
    linked = readme_doc_links(text)
    # every docs/*.md link resolves, to its page and its heading (the check every doc gets, on the README alone)
    assert linked and not missing_references("README.md", text, files, pages)
    docs = {f for f in files if re.fullmatch(r"docs/[^/]+\.md", f)}
    assert docs - set(linked) == set(), f"docs the README does not link: {sorted(docs - set(linked))}"


def test_the_readme_check_finds_a_bad_doc_link():
    files = {"README.md", "docs/rules.md"}
    pages = {"docs/rules.md": "# The rule book\n## 1. Confirmation\n"}
    text = "[rules](docs/rules.md#1-confirmation), [gone](docs/gone.md), [anchor](docs/rules.md#2-aegis)"
    assert readme_doc_links(text) == ["docs/rules.md", "docs/gone.md", "docs/rules.md"]
    assert missing_references("README.md", text, files, pages) == [
        "README.md: docs/gone.md: no such file or directory",
        "README.md: docs/rules.md#2-aegis: no heading #2-aegis in docs/rules.md",
    ]


def test_the_readme_two_commands_are_make_targets():
    block = re.search(r"## Two commands\n+```sh\n(.*?)```", README.read_text(), re.S)
    assert block, "README.md has no '## Two commands' block"
    targets = re.findall(r"^make (\S+)", block.group(1), re.M)
    assert targets == ["demo", "test"], targets
    makefile = (ROOT / "Makefile").read_text()
    for target in targets:
        assert re.search(rf"^{target}: install\b", makefile, re.M), f"no '{target}: install' rule in the Makefile"


# Python blocks a doc marks `<!-- runs as is -->` are whole programs: each runs, exit 0.
_RUNS = re.compile(r"<!-- runs as is -->\s*```python\n(.*?)```", re.S)


@pytest.mark.parametrize("doc", ["docs/games.md"])
def test_the_marked_doc_programs_run(doc, tmp_path):
    programs = _RUNS.findall((ROOT / doc).read_text())
    assert programs, f"{doc} marks no program"
    for i, code in enumerate(programs):
        (tmp_path / f"p{i}.py").write_text(code)
        run = subprocess.run([sys.executable, f"p{i}.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr


@pytest.mark.e2e
def test_the_readme_bot_plays_a_match(tmp_path):
    blocks = python_blocks(README)
    assert len(blocks) == 1  # the tour's bot
    (tmp_path / "mybot.py").write_text(blocks[0])
    out = run_cli("match", "aegis", "--bot", f"mine=python {tmp_path / 'mybot.py'}", "--bot",
                  "random=python -m sample_bots.random", "--no-log", timeout=120)
    assert out.returncode == 0, out.stderr
    assert "final scores" in out.stdout and "fault" not in out.stdout, out.stdout
