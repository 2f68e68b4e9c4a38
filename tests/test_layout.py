"""The layout keeps its promise: no module outside ``referee/games/`` asks a game's name.

What differs between games is declared once, as traits on the game's
``GameSpec`` (docs/games.md); the rest of the referee reads the traits. This
test reads every module under ``referee/`` outside ``referee/games/`` and
fails, naming the file and line, on a comparison with a game's name
(``== "aegis"``, ``!= "confirmation"``, ``in ("aegis", ...)``, ``.game ==``),
a dict keyed by a game's name, or a ``match`` case on one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from referee.games import GAMES

ROOT = Path(__file__).resolve().parent.parent

#: modules that still ask a game's name, until their owner switches them to the traits (then the
#: entry goes: an entry with nothing left to excuse fails, so that this list only shrinks). An entry
#: is a module without ".py", and covers the package of that name too.
ALLOWED = {
    # developer tools that measure the sample bots game by game, as their --game / --variants /
    # --games-aegis arguments ask (each game's figures differ: bids made in Confirmation, match wins
    # in Aegis); like the bench choosing which games to time, not the referee deciding a rule
    "referee/tools/soak",
    "referee/tools/strength",
}


def _allowed(path: str) -> str | None:
    """The entry of ALLOWED that covers ``path``, if any."""
    module = path.removesuffix(".py")
    return next((entry for entry in ALLOWED if module == entry or module.startswith(entry + "/")), None)


def _is_name(node: ast.AST) -> bool:
    """A game's name as a literal, or a tuple/list/set of literals holding one."""
    if isinstance(node, ast.Constant):
        return node.value in GAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_name(e) for e in node.elts)
    return False


def _is_game(node: ast.AST) -> bool:
    """``something.game`` or a variable called ``game``."""
    return isinstance(node, ast.Attribute) and node.attr == "game" or isinstance(node, ast.Name) and node.id == "game"


def _asks(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        if any(_is_name(side) for side in sides):
            return True
        equality = all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)
        not_none = not any(isinstance(side, ast.Constant) and side.value is None for side in sides)
        return equality and not_none and any(_is_game(side) for side in sides)
    if isinstance(node, ast.Dict):
        return any(key is not None and _is_name(key) for key in node.keys)
    if isinstance(node, ast.MatchValue):
        return _is_name(node.value)
    return False


def name_questions(root: Path) -> dict[str, list[str]]:
    """Per module (path from ``root``), "line N: code" for each place that asks a game's name."""
    found: dict[str, list[str]] = {}
    for path in sorted((root / "referee").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("referee/games/"):
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        hits = sorted({node.lineno for node in ast.walk(ast.parse(source, rel)) if _asks(node)})
        if hits:
            found[rel] = [f"line {n}: {lines[n - 1].strip()}" for n in hits]
    return found


def test_no_module_outside_games_asks_a_games_name():
    found = name_questions(ROOT)
    unexcused = {path: hits for path, hits in found.items() if not _allowed(path)}
    assert not unexcused, "a game's traits belong on its GameSpec (docs/games.md), not in a branch on its name:\n" \
        + "\n".join(f"{path} {hit}" for path, hits in unexcused.items() for hit in hits)
    idle = ALLOWED - {_allowed(path) for path in found}
    assert not idle, f"nothing left to excuse (remove from ALLOWED): {sorted(idle)}"


@pytest.mark.parametrize("code", [
    'if game == "aegis": pass',
    'if st.game != "confirmation": pass',
    'x = 2 if cfg.game == "aegis" else 4',
    'ok = game in ("aegis", "confirmation")',
    'if state.game == other: pass',
    'table = {"confirmation": f, "aegis": g}',
    'match game:\n    case "aegis": pass',
])
def test_the_check_sees_each_way_of_asking(tmp_path, code):
    module = tmp_path / "referee" / "elsewhere.py"
    module.parent.mkdir()
    module.write_text(code + "\n")
    (tmp_path / "referee" / "games").mkdir()
    (tmp_path / "referee" / "games" / "mine.py").write_text(code + "\n")  # inside games/: allowed
    assert list(name_questions(tmp_path)) == ["referee/elsewhere.py"]


@pytest.mark.parametrize("code", [
    'spec = GAMES["aegis"]',
    'for game in ("aegis", "confirmation"): pass',
    'if game is None: pass',
    'if spec.rated_by is RatedBy.PLACING: pass',
])
def test_the_check_lets_data_and_traits_be(tmp_path, code):
    (tmp_path / "referee").mkdir()
    (tmp_path / "referee" / "elsewhere.py").write_text(code + "\n")
    assert name_questions(tmp_path) == {}


# --- referee/games/ is pure: the games, and the conformance check a game's author imports --------

#: what no module of referee/games/ may import (a test runner included: the conformance check is
#: imported by any runner), and the only modules of the package it may
IMPURE = ("grpc", "asyncio", "google", "pytest", "hypothesis")
PURE_OWN = ("referee.games", "referee.cards")


def impure_imports(root: Path) -> list[str]:
    """Per module of ``root``/referee/games, "path line N: module" for each import it may not make."""
    found = []
    for path in sorted((root / "referee" / "games").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{alias.name}" if node.module == "referee" else node.module
                         for alias in node.names]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                own = name == "referee" or name.startswith(PURE_OWN)
                if top in IMPURE or (top == "referee" and not own):
                    found.append(f"{rel} line {node.lineno}: {name}")
    return found


def test_games_import_nothing_impure():
    assert impure_imports(ROOT) == []


@pytest.mark.parametrize("code", ["import pytest", "import asyncio", "from grpc import aio",
                                  "from google.protobuf import json_format", "from referee import wire",
                                  "from referee.results import store", "    import hypothesis"])
def test_the_purity_check_sees_an_import(tmp_path, code):
    games = tmp_path / "referee" / "games"
    games.mkdir(parents=True)
    source = f"def f():\n{code}\n" if code.startswith(" ") else f"{code}\n"
    (games / "mine.py").write_text("from referee import cards\nfrom referee.games.base import GameSpec\n" + source)
    assert len(impure_imports(tmp_path)) == 1
