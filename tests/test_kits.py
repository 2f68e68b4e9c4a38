"""The starter kits build outside the repository, play legal moves and beat the random bot, in
the sandbox, in both games.

Each kit (docs/writing-a-bot.md, "Another language") is copied out of the repository into a
temporary directory, without what a build makes, and built there with the one command its README
gives (``make``, ``npm ci``), once for the module; then examples/kits.toml is played in bubblewrap
as a gauntlet whose candidate is the random bot, each kit's ``[[bots]]`` table run in its copy, so
that each kit meets it alone: Aegis, and Confirmation on the same bots. A kit beats the random bot
when, over their matches, it wins more of their pairwise results than it loses and scores more
points. Nobody may be charged a fault. Two stdio bots that are no kits play too, only to play
without a fault: sample_bots/stdio_random.py, and tests/bots/docs_stdio_bot.py, written from
docs/protocol.md §16 alone. The Python kit is the installed package (``referee.bot``): nothing of it
is copied, and its bots play from anywhere (tests/test_docs.py plays docs/writing-a-bot.md's from a
temporary directory). ``referee match`` plays a compiled kit's copy given by the absolute path of its
program, from the repository's root, with the sandbox and without.

A kit whose toolchain is missing is left out of the gauntlets, and its tests skip with the reason;
under REFEREE_REQUIRE_KITS=1 (CI) they fail instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import ROOT, require_kit, require_sandbox

from referee import games
from referee.competition import gauntlet
from referee.hosting import sandbox
from referee.model import BotSpec

pytestmark = pytest.mark.e2e

KITS_FILE = ROOT / "examples" / "kits.toml"
GOPATH = Path("/usr/share/gocode/src")


@dataclass(frozen=True)
class Kit:
    """A starter kit: its directory, what its build needs, and the build: the one command its README
    gives, run in a copy of the directory (None: nothing to build, and nothing copied)."""

    directory: Path
    programs: tuple[str, ...]
    build: tuple[str, ...] | None
    sources: tuple[Path, ...] = ()   # packaged sources the build needs
    pkg_config: tuple[str, ...] = ()  # libraries pkg-config must know

    def missing(self) -> str | None:
        """What of the toolchain is not here, in one line; None when it all is."""
        lacking = [p for p in self.programs if shutil.which(p) is None]
        lacking += [str(s) for s in self.sources if not s.exists()]
        if self.pkg_config and shutil.which("pkg-config") is not None and subprocess.run(
                ["pkg-config", "--exists", *self.pkg_config], check=False).returncode != 0:
            lacking.append(f"pkg-config {' '.join(self.pkg_config)}")
        if not lacking:
            return None
        return f"the {self.directory.name} kit's toolchain is missing: {', '.join(lacking)} (.ci/run installs it)"


SAMPLES = ROOT / "sample_bots"
#: the kits and the one command that builds each in a copy of its directory (its README's)
KITS = {
    "cpp": Kit(SAMPLES / "cpp", ("make", "g++", "pkg-config", "protoc", "grpc_cpp_plugin"), ("make", "-j2"),
               pkg_config=("grpc++", "protobuf")),
    "go": Kit(SAMPLES / "go", ("make", "go", "protoc", "protoc-gen-go-grpc"), ("make",),
              sources=(GOPATH / "google.golang.org/grpc", GOPATH / "google.golang.org/protobuf/cmd/protoc-gen-go")),
    "c-stdio": Kit(SAMPLES / "stdio_c", ("make", "cc"), ("make",)),
    "node": Kit(SAMPLES / "node", ("node", "npm"), ("npm", "ci", "--no-audit", "--no-fund")),
    "python": Kit(SAMPLES, (), None),
}
#: what a build makes in a kit's directory (.gitignore): left out of its copy, which builds from nothing
MADE = shutil.ignore_patterns("build", "bot", "node_modules", "__pycache__")
#: stdio bots that are no kits: they must play without a fault
STDIO_SAMPLES = (
    BotSpec("stdio-python", ("python", "-m", "sample_bots.stdio_random"), str(ROOT), protocol="stdio"),
    BotSpec("stdio-docs", ("python", "tests/bots/docs_stdio_bot.py"), str(ROOT), protocol="stdio"),
)
#: each game's gauntlet: few deal sets, short Confirmation games (the kits beat random by far: see the tests)
GAMES = {"aegis": ({}, 2), "confirmation": ({"rounds": 3}, 2)}


@dataclass(frozen=True)
class Copy:
    """A kit as its build left it: its copy's directory (None: a kit with nothing to build plays
    from its own), or why it is not there (its toolchain is missing)."""

    directory: Path | None
    missing: str | None = None


@pytest.fixture(scope="module")
def copies(tmp_path_factory) -> dict[str, Copy]:
    """Every kit, copied out of the repository and built there with its one command (when its
    toolchain is here: else why not). A build that fails fails."""
    out = tmp_path_factory.mktemp("kits")
    assert not out.is_relative_to(ROOT), f"{out}: copy the kits out of the repository (a --basetemp outside it)"
    found = {}
    for name, kit in KITS.items():
        if kit.build is None:
            found[name] = Copy(None)
        elif (missing := kit.missing()) is not None:
            found[name] = Copy(None, missing)
        else:
            copy = shutil.copytree(kit.directory, out / kit.directory.name, ignore=MADE)
            done = subprocess.run(kit.build, cwd=copy, capture_output=True, text=True, timeout=900, check=False)
            assert done.returncode == 0, (f"{' '.join(kit.build)} in a copy of the {name} kit failed:\n"
                                          f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            found[name] = Copy(copy)
    return found


def in_its_copy(bot: BotSpec, copies: dict[str, Copy]) -> BotSpec:
    """A bot of examples/kits.toml, run from its kit's copy when it has one (its table's command, its cwd the copy)."""
    copy = copies.get(bot.name)
    return bot if copy is None or copy.directory is None else dataclasses.replace(bot, cwd=str(copy.directory))


@pytest.fixture(scope="module")
def played(copies, tmp_path_factory) -> dict[str, tuple[list, Path]]:
    """Each game's gauntlet of the random bot against every kit built (in its copy) and the stdio
    samples: {game: (its stored matches, its output directory)}."""
    require_sandbox()
    cfg = gauntlet.load(KITS_FILE)
    bots = [in_its_copy(b, copies) for b in cfg.tournament.bots if b.name not in KITS or copies[b.name].missing is None]
    bots += STDIO_SAMPLES
    out = {}
    for game, (options, deal_sets) in GAMES.items():
        directory = tmp_path_factory.mktemp(f"kits-{game}")
        one = dataclasses.replace(cfg, tournament=dataclasses.replace(
            cfg.tournament, game=game, options=games.get(game).check_options(options), deal_sets=deal_sets,
            bots=tuple(bots), output=directory, sandbox="bwrap"))
        store = gauntlet.open_store(one)
        try:
            asyncio.run(gauntlet.run(one, store))
            out[game] = (list(store.matches()), directory)
        finally:
            store.close()
    return out


def test_the_kits_file_names_every_kit_in_its_directory():
    bots = {b.name: b for b in gauntlet.load(KITS_FILE).tournament.bots}
    assert set(bots) == {"random", *KITS}
    for name, kit in KITS.items():  # the table its copy plays, with the copy's directory for its cwd
        assert bots[name].cwd == str(kit.directory if kit.build is not None else ROOT), name


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("kit", sorted(KITS))
def test_a_kit_builds_outside_the_repository_plays_legal_moves_and_beats_the_random_bot(copies, played, kit,
                                                                                        game):
    require_kit(copies[kit].missing)
    rows, directory = played[game]
    theirs = [row for row in rows if kit in row.lineup]
    assert theirs, f"the {kit} kit played no match of {game}"
    for row in theirs:  # legal moves, in time, connected: no fault for anyone
        assert all(sum(seat.values()) == 0 for seat in row.faults), (row.key, row.faults, log(directory, kit))
    [versus] = [v for v in gauntlet.versus(game, rows, "random", bootstrap=0) if v.baseline == kit]
    assert versus.losses > versus.wins and versus.points_diff < 0, (kit, game, versus)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_stdio_samples_play_without_a_fault(played, game):
    rows, directory = played[game]
    for bot in STDIO_SAMPLES:
        theirs = [row for row in rows if bot.name in row.lineup]
        assert len(theirs) >= 2, bot.name
        for row in theirs:
            assert all(sum(seat.values()) == 0 for seat in row.faults), (row.key, row.faults, log(directory, bot.name))
    assert "BROKEN" not in log(directory, "stdio-docs")


#: the compiled kits, and how `referee match` takes each
COMPILED = {"cpp": "--bot", "go": "--bot", "c-stdio": "--stdio-bot"}
#: a stdio bot that says where it runs and whether it sees the current directory's files, then plays at random
PROBE = """#!{python}
import os, sys
print(f"probe: in {{os.getcwd()}}; sees {marker}: {{os.path.exists({marker!r})}}", file=sys.stderr, flush=True)
"""


def sandboxed(box: str, monkeypatch) -> None:
    """`referee match` in bubblewrap (``bwrap``: where it cannot work, the test skips, or fails under
    REFEREE_REQUIRE_SANDBOX=1), or as on a machine without it (``none``)."""
    if box == "bwrap":
        require_sandbox()
    else:
        monkeypatch.setattr(sandbox, "probe", lambda: "bubblewrap is not installed (apt-get install bubblewrap)")


def match_from_the_root(invoke, monkeypatch, *bots: str):
    """``referee match aegis`` from the repository's root: the bots' programs here lie outside it."""
    monkeypatch.chdir(ROOT)
    result = invoke("match", "aegis", "--seed", "3", "--no-log", *bots,
                    "--bot", "random=python -m sample_bots.random --seed 1")
    assert result.exit_code == 0, result.output
    assert "final scores" in result.stdout and "fault" not in result.stdout, result.output
    return result


@pytest.mark.parametrize("box", ["bwrap", "none"])
@pytest.mark.parametrize("kit", sorted(COMPILED))
def test_referee_match_plays_a_kits_copy_given_by_the_absolute_path_of_its_program(copies, kit, box, invoke,
                                                                                    monkeypatch):
    require_kit(copies[kit].missing)
    sandboxed(box, monkeypatch)
    result = match_from_the_root(invoke, monkeypatch, COMPILED[kit], f"{kit}={copies[kit].directory / 'bot'}")
    assert f"sandbox: {box}" in result.stderr


@pytest.mark.parametrize("box", ["bwrap", "none"])
def test_a_program_outside_the_current_directory_runs_in_its_own(tmp_path, box, invoke, monkeypatch, capfd):
    """Its own directory is where it runs and what its sandbox shows: not the current directory."""
    sandboxed(box, monkeypatch)
    own = tmp_path / "probe"
    own.mkdir()
    marker = ROOT / "pyproject.toml"
    program = own / "bot"
    program.write_text(PROBE.format(python=sys.executable, marker=str(marker))
                       + (SAMPLES / "stdio_random.py").read_text())
    program.chmod(0o755)
    match_from_the_root(invoke, monkeypatch, "--stdio-bot", f"probe={program}")
    said = capfd.readouterr().err
    assert f"probe: in {own.resolve()}; sees {marker}: {box == 'none'}" in said, said


def log(directory: Path, bot: str) -> str:
    path = directory / "logs" / f"{bot}.log"
    return path.read_text(errors="replace")[-3000:] if path.exists() else f"(no log at {path})"


def test_a_missing_toolchain_is_named_in_one_line():
    kit = Kit(Path("/src/mykit"), ("no-such-compiler",), None, sources=(Path("/no/such/source"),))
    assert kit.missing() == ("the mykit kit's toolchain is missing: no-such-compiler, /no/such/source "
                             "(.ci/run installs it)")


def test_a_missing_toolchain_skips_but_fails_in_ci(monkeypatch):
    monkeypatch.delenv("REFEREE_REQUIRE_KITS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no cc"):
        require_kit("no cc")
    monkeypatch.setenv("REFEREE_REQUIRE_KITS", "1")
    with pytest.raises(pytest.fail.Exception, match="REFEREE_REQUIRE_KITS=1 but no cc"):
        require_kit("no cc")
    require_kit(None)  # nothing missing: neither
