"""The package's layers (docs/architecture.md): no module imports a layer above its own, and no
two packages import each other, imports made inside functions counted.

The layers, from the bottom: the core (cards, games, records, the runner, statistics, and the
small leaf modules beside them), the model (typed values), hosting (bot processes), play (the
arena, the gRPC server, executors), results (the store and what is read from it), competition
(the file, schedules, runs, the SPRT), and the adapters on top (the CLI, the HTML views, tools,
bench, the Python bot kit). The check is a function of a source tree, so that a planted
violation can be shown to fail it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: each layer's packages or modules (under ``referee``), bottom first; a module may import its own
#: layer and those below
LAYERS: tuple[tuple[str, ...], ...] = (
    ("", "cards", "games", "records", "runner", "stats", "untrusted", "files", "hostload", "process",
     "report", "v1"),
    ("model",),
    ("hosting",),
    ("play",),
    ("results",),
    ("competition",),
    ("cli", "view", "tools", "bench", "bot", "server", "__main__"),
)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str:
    """The package (or top-level module) of ``referee.X...``: ``X`` ("" for ``referee`` itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(module: str) -> int:
    name = unit(module)
    for i, members in enumerate(LAYERS):
        if name in members:
            return i
    raise KeyError(f"{module}: in no layer (add its package to LAYERS and to docs/architecture.md)")


def imports(root: Path) -> list[tuple[str, int, str]]:
    """Every import of a ``referee`` module in the tree: (importer, line, imported), at any depth."""
    found = []
    for path in sorted((root / "referee").rglob("*.py")):
        if "v1" in path.relative_to(root / "referee").parts:
            continue
        me = module_name(root, path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [(me, node.lineno, n) for n in names if n == "referee" or n.startswith("referee.")]
    return found


def upward(root: Path) -> list[str]:
    """Each import of a module in a layer above the importer's."""
    return [f"{me}:{line} imports {them} (layer {layer(them)} above {layer(me)})"
            for me, line, them in imports(root) if layer(them) > layer(me)]


def cycles(root: Path) -> list[str]:
    """Pairs of packages (or top-level modules) that import each other, directly or through others."""
    edges: dict[str, set[str]] = {}
    for me, _, them in imports(root):
        if unit(me) != unit(them) and unit(them):
            edges.setdefault(unit(me), set()).add(unit(them))

    def reaches(a: str, b: str) -> bool:
        seen, todo = set(), [a]
        while todo:
            for n in edges.get(todo.pop(), ()):
                if n == b:
                    return True
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return False
    units = sorted(edges)
    return [f"{a} <-> {b}" for i, a in enumerate(units) for b in units[i + 1:] if reaches(a, b) and reaches(b, a)]


def test_no_module_imports_a_layer_above_its_own():
    assert upward(ROOT) == []


def test_no_two_packages_import_each_other():
    assert cycles(ROOT) == []


def test_every_package_is_in_a_layer():
    for path in (ROOT / "referee").iterdir():
        if path.name.startswith((".", "__pycache__")) or (path.is_file() and path.suffix != ".py") or \
                path.name == "__init__.py":
            continue
        if path.is_dir() and not any(path.rglob("*.py")):
            continue  # package data, no module: the shipped pools (referee/pools/)
        assert layer(f"referee.{path.stem}") >= 0


def plant(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp / "referee" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp


@pytest.mark.parametrize("code", ["from referee.competition import run", "import referee.cli",
                                  "def f():\n    from referee.results.store import Store  # late\n"])
def test_an_upward_import_is_seen_at_any_depth(tmp_path, code):
    root = plant(tmp_path, {"__init__.py": "", "hosting/__init__.py": "", "hosting/launcher.py": code + "\n"})
    assert [line.split(" imports ")[0] for line in upward(root)] == [
        f"referee.hosting.launcher:{2 if code.startswith('def') else 1}"]


def test_a_cycle_between_packages_is_seen_even_inside_a_function(tmp_path):
    root = plant(tmp_path, {"__init__.py": "", "results/__init__.py": "", "competition/__init__.py": "",
                            "results/store.py": "def f():\n    from referee.competition import run\n",
                            "competition/run.py": "from referee.results import store\n"})
    assert cycles(root) == ["competition <-> results"]


def test_a_package_in_no_layer_is_refused():
    with pytest.raises(KeyError, match="in no layer"):
        layer("referee.nowhere.x")


REASON = "# late:"


def late_imports(root: Path) -> dict[str, list[tuple[int, bool]]]:
    """Each file's imports made inside a function or class (not at module level, where an import
    under ``if TYPE_CHECKING:`` or ``try:`` counts as module level): (line, whether it gives its
    reason). The reason is a ``# late: ...`` comment on the import's line or on the line above the
    run of import lines it belongs to (blank lines between its groups, as isort sorts them, included)."""
    found: dict[str, list[tuple[int, bool]]] = {}
    for path in sorted((root / "referee").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if "v1" in path.relative_to(root / "referee").parts:
            continue
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text, str(path))
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        top = {id(n) for stmt in tree.body if not isinstance(stmt, defs) for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
                i = node.lineno - 1
                while i > 0 and REASON not in lines[i] and (_importing(lines[i - 1]) or (
                        not lines[i - 1].strip() and i > 1 and _importing(lines[i - 2]))):
                    i -= 1
                reasoned = REASON in lines[node.lineno - 1] or (i > 0 and lines[i - 1].strip().startswith(REASON))
                found.setdefault(rel, []).append((node.lineno, reasoned))
    return found


def _importing(line: str) -> bool:
    return line.strip().startswith(("import ", "from "))


def unreasoned(root: Path) -> list[str]:
    """Function-level imports without a reason."""
    return [f"{rel}:{line}: a function-level import without a '{REASON} <reason>' comment"
            for rel, imps in late_imports(root).items() for line, ok in imps if not ok]


def test_every_function_level_import_says_why_it_is_late():
    assert unreasoned(ROOT) == []


def test_an_import_inside_a_function_without_a_reason_is_refused(tmp_path):
    root = plant(tmp_path, {"__init__.py": "", "hosting/launcher.py":
                            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import json\n"
                            "def f():\n    import os\n"
                            "def g():\n    import ray  # late: an optional extra\n"
                            "def h():\n    # late: grpc, which the CLI's help does not load\n    import grpc\n"
                            "    from referee.v1 import referee_pb2\n"
                            "class C:\n    def m(self):\n        import re  # not a reason\n"
                            "def i():\n    # late: grpc, in isort's groups\n    import grpc\n\n"
                            "    from referee.v1 import referee_pb2\n"
                            "def j():\n    import json  # late: why\n\n    x = 1\n\n    import csv\n"})
    assert sorted(unreasoned(root), key=lambda found: int(found.split(":")[1])) == [
        "referee/hosting/launcher.py:5: a function-level import without a '# late: <reason>' comment",
        "referee/hosting/launcher.py:14: a function-level import without a '# late: <reason>' comment",
        "referee/hosting/launcher.py:25: a function-level import without a '# late: <reason>' comment"]
