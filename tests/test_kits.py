"""The starter kits build, play legal moves and beat the random bot, in the sandbox, in both games.

Each kit (docs/writing-a-bot.md, "Another language") is built as ``make kits`` builds it (a no-op
once built: .ci/run builds them before the suite), then examples/kits.toml is played in bubblewrap
as a gauntlet whose candidate is the random bot, so that each kit meets it alone: Aegis, and
Confirmation on the same bots. A kit beats the random bot when, over their matches, it wins more
of their pairwise results than it loses and scores more points. Nobody may be charged a fault. Two stdio bots that
are no kits play too, only to play without a fault: sample_bots/stdio_random.py, and
tests/bots/docs_stdio_bot.py, written from docs/protocol.md §16 alone.

A kit whose toolchain is missing is left out of the gauntlets, and its tests skip with the reason;
under REFEREE_REQUIRE_KITS=1 (CI) they fail instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import ROOT, require_kit, require_sandbox

from referee import games
from referee.tournament import gauntlet
from referee.tournament.config import BotSpec

pytestmark = pytest.mark.e2e

KITS_FILE = ROOT / "examples" / "kits.toml"
GOPATH = Path("/usr/share/gocode/src")


@dataclass(frozen=True)
class Kit:
    """A starter kit: its directory, what its build needs, and the build (None: nothing to build)."""

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
#: the kits, as `make kits` builds them (the Node kit's packages: the Makefile's rule for them)
KITS = {
    "cpp": Kit(SAMPLES / "cpp", ("make", "g++", "pkg-config", "protoc", "grpc_cpp_plugin"),
               ("make", "-C", "sample_bots/cpp", "-j2"), pkg_config=("grpc++", "protobuf")),
    "go": Kit(SAMPLES / "go", ("make", "go", "protoc", "protoc-gen-go-grpc"), ("make", "-C", "sample_bots/go"),
              sources=(GOPATH / "google.golang.org/grpc", GOPATH / "google.golang.org/protobuf/cmd/protoc-gen-go")),
    "c-stdio": Kit(SAMPLES / "stdio_c", ("make", "cc"), ("make", "-C", "sample_bots/stdio_c")),
    "node": Kit(SAMPLES / "node", ("node", "npm"), ("make", "sample_bots/node/node_modules/.package-lock.json")),
    "python": Kit(SAMPLES, (), None),
}
#: stdio bots that are no kits: they must play without a fault
STDIO_SAMPLES = (
    BotSpec("stdio-python", ("python", "-m", "sample_bots.stdio_random"), str(ROOT), protocol="stdio"),
    BotSpec("stdio-docs", ("python", "tests/bots/docs_stdio_bot.py"), str(ROOT), protocol="stdio"),
)
#: each game's gauntlet: few deal sets, short Confirmation games (the kits beat random by far: see the tests)
GAMES = {"aegis": ({}, 2), "confirmation": ({"rounds": 3}, 2)}


def build_all() -> dict[str, tuple[str | None, subprocess.CompletedProcess | None]]:
    """Every kit whose toolchain is here, built as `make kits` builds it (a no-op once built):
    {kit: (None or why its toolchain is missing, its build or None)}."""
    done = {}
    for name, kit in KITS.items():
        missing = kit.missing()
        done[name] = missing, None
        if missing is None and kit.build is not None:
            done[name] = None, subprocess.run(kit.build, cwd=ROOT, capture_output=True, text=True, timeout=900,
                                              check=False)
    return done


@pytest.fixture(scope="module")
def built() -> dict[str, str | None]:
    """Every kit whose toolchain is here, built: {kit: None, or why it is missing}. A build that fails fails."""
    kits = build_all()
    for name, (_, done) in kits.items():
        assert done is None or done.returncode == 0, \
            f"building the {name} kit failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return {name: missing for name, (missing, _) in kits.items()}


@pytest.fixture(scope="module")
def played(built, tmp_path_factory) -> dict[str, tuple[list, Path]]:
    """Each game's gauntlet of the random bot against every kit built and the stdio samples:
    {game: (its stored matches, its output directory)}."""
    require_sandbox()
    cfg = gauntlet.load(KITS_FILE)
    bots = [b for b in cfg.tournament.bots if built.get(b.name) is None] + list(STDIO_SAMPLES)
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


def test_the_kits_file_names_every_kit():
    assert {b.name for b in gauntlet.load(KITS_FILE).tournament.bots} == {"random", *KITS}


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("kit", sorted(KITS))
def test_a_kit_builds_plays_legal_moves_and_beats_the_random_bot(built, played, kit, game):
    require_kit(built[kit])
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
