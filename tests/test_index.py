"""tests/README.md, the index of the tests: every test file is named in its index by layer, and
every test file it names exists; and every test file named anywhere in the repository (a doc, a
comment, the Makefile, another test) exists."""

from __future__ import annotations

import re

from harness import ROOT
from test_docs import repository_files

TESTS = ROOT / "tests"
_NAME = re.compile(r"\btest_\w+\.py\b")


def index_problems(readme: str, files: set[str]) -> list[str]:
    """What is wrong with the index ``readme`` for the test files ``files``: a file missing from
    its section "By layer", or a name that is no file."""
    by_layer = readme.partition("## By layer")[2].partition("\n## ")[0]
    problems = [f"{name}: not in tests/README.md's index by layer"
                for name in sorted(files - set(_NAME.findall(by_layer)))]
    problems += [f"{name}: named in tests/README.md, no such file in tests/"
                 for name in sorted(set(_NAME.findall(readme)) - files)]
    return problems


def test_files() -> set[str]:
    return {path.name for path in TESTS.glob("test_*.py")}


test_files.__test__ = False  # a helper, not a test


def test_every_test_file_is_in_the_index_and_every_name_is_a_file():
    assert index_problems((TESTS / "README.md").read_text(), test_files()) == []


def test_the_index_check_finds_a_missing_file_and_a_stale_name():
    readme = (TESTS / "README.md").read_text()
    assert index_problems(readme, test_files() | {"test_new_feature.py"}) == [
        "test_new_feature.py: not in tests/README.md's index by layer"]
    named_elsewhere = readme.replace("## By layer", "## By layer\n\n`test_gone.py`", 1)
    assert index_problems(named_elsewhere, test_files()) == [
        "test_gone.py: named in tests/README.md, no such file in tests/"]
    only_in_features = readme.replace("`test_ray.py`, `test_load.py`,", "`test_load.py`,", 1)
    assert "test_ray.py: not in tests/README.md's index by layer" in index_problems(only_in_features, test_files())


def stale_names(texts: dict[str, str], files: set[str]) -> list[str]:
    """Each test file that one of ``texts`` (by path) names, as ``test_x.py`` or ``tests/test_x.py``,
    and that is not one of ``files``: a name left behind by a rename."""
    return [f"{path}: {name}: no such file in tests/" for path, text in sorted(texts.items())
            for name in sorted(set(_NAME.findall(text)) - files)]


def test_every_test_file_the_repository_names_exists():
    # the checks of stale names name stale files on purpose: test_docs.py's and this file's examples
    own = {"tests/test_docs.py", "tests/test_index.py"}
    texts = {path: (ROOT / path).read_bytes().decode(errors="replace") for path in repository_files(ROOT) - own}
    assert stale_names(texts, test_files()) == []


def test_the_stale_name_check_finds_a_renamed_file():
    texts = {"docs/security.md": "| attack | `tests/test_attacks.py::test_x` |",
             "Makefile": "pytest tests/test_index.py",
             "tests/test_x.py": "# the same tournament as tests/test_redteam.py (and test_index.py)"}
    assert stale_names(texts, test_files()) == ["docs/security.md: test_attacks.py: no such file in tests/",
                                                "tests/test_x.py: test_redteam.py: no such file in tests/"]
