"""A bot's version (referee/hosting/versions.py): the bot, not its surroundings; regular files,
read once; and what runs is what was hashed.

Issue 34, item 3: a run's own outputs (its output directory, ``--markdown``, the files its standard
output and error go to) changed the candidate's version in the CI recipe of docs/regression.md, so
a cancelled SPRT could not resume; the kits' build output changed the sample bots' versions, so
``make demo``, ``make kits``, ``make demo`` stopped with exit 2. Issue 35, item 3: hashing read a
link to ``/dev/zero`` or a named pipe among an entrant's files, as root, outside any sandbox: the
run printed nothing and never started. Item 4: an entrant that rewrote its bot's files during a run
(an upload folder it still writes) had its new strategy play under the version hashed at the start.
The red team's fourth round: an unchecked-hash pyc in ``__pycache__``, or a module under a
dot-directory or beside a ``results.sqlite``, ran without being in the version.
"""

from __future__ import annotations

import hashlib
import json
import os
import py_compile
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from harness import (
    HOSTILE,
    ROOT,
    random_bot,
    require_sandbox,
    run_cli,
    sandbox_shows,
    store_view,
    tables,
    write_tournament,
)

from referee import model
from referee.competition import config as tconfig
from referee.hosting import sandbox, versions
from referee.model import BotSpec, ConfigError
from referee.results.store import Store


def bot_dir(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    return tmp


def in_time(work, seconds: float = 60.0):
    """``work()``'s result, or a failure if it has not returned within ``seconds`` (the code before
    blocked for ever on a named pipe: the thread is left behind, a daemon)."""
    done: list = []

    def run() -> None:
        try:
            done.append(("value", work()))
        except BaseException as err:  # noqa: BLE001  (handed to the test)
            done.append(("error", err))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"still reading after {seconds:g} s"
    kind, value = done[0]
    if kind == "error":
        raise value
    return value


# --- what a version covers: the bot, not its surroundings (issue 34, item 3) ------------------------


def test_the_files_a_run_writes_are_its_output_directory_markdown_and_redirected_output(tmp_path):
    """paths.written: what the run names, and the regular files its stdout and stderr go to (a
    shell's ``> sprt.json 2> sprt.err``); not a pipe."""
    probe = ("import json, sys\nfrom referee.hosting import paths\n"
             "open(sys.argv[1], 'w').write(json.dumps([str(p) for p in paths.written(sys.argv[2], None)]))")
    with open(tmp_path / "sprt.json", "w") as out, open(tmp_path / "sprt.err", "w") as err:
        subprocess.run([sys.executable, "-c", probe, tmp_path / "found", tmp_path / "sprt.md"], stdout=out,
                       stderr=err, check=True, cwd=ROOT)
    assert json.loads((tmp_path / "found").read_text()) == [str(tmp_path / p) for p in ("sprt.md", "sprt.json",
                                                                                          "sprt.err")]
    subprocess.run([sys.executable, "-c", probe, tmp_path / "found", tmp_path / "sprt.md"], capture_output=True,
                   check=True, cwd=ROOT)
    assert json.loads((tmp_path / "found").read_text()) == [str(tmp_path / "sprt.md")]


def test_what_a_run_hides_is_left_out_of_every_version(tmp_path):
    """The SPRT's hidden paths (its output directory, --markdown, the tournament file, what its
    standard output and error go to) are neither in a version nor in its sandbox."""
    from referee.competition.sprt.setup import SprtSetup

    own = bot_dir(tmp_path, {"bot.py": "x", "sprt.md": "a report", "sprt.toml": "", "out/results.sqlite": "",
                             "sprt.json": "{}"})
    spec = BotSpec("new", ("python", "bot.py", "--read", "sprt.toml"), str(own))  # named: hidden all the same
    setup = SprtSetup("aegis", {}, spec, BotSpec("old", ("python", "bot.py"), str(own)), 1, None,
                      output=own / "out", source=own / "sprt.toml", markdown=own / "sprt.md")
    hidden = setup.hidden()
    assert set(versions.of(spec, hidden)["files"]) == {str(own / "bot.py"), str(own / "sprt.json")}
    argv = sandbox.bwrap_command(["python", "bot.py"], cwd=own, socket_dir=None, hide=hidden)
    assert not sandbox_shows(argv, own / "sprt.md") and not sandbox_shows(argv, own / "sprt.toml")
    snapshots = versions.Snapshots(tmp_path / "snaps")
    snapshots.take(spec, hidden)
    copy = snapshots.trees["new"].copy_of(own)
    assert sorted(p.name for p in copy.iterdir()) == ["bot.py", "sprt.json"]


def test_what_a_command_names_through_a_link_or_in_what_is_hidden_is_not_copied(tmp_path):
    """A word of its command that names the results store through a link, or a home's file, is
    neither in its version nor in its snapshot (the copy would have shown the store's seeds)."""
    own = bot_dir(tmp_path, {"bot.py": "x", "out/results.sqlite": "seeds", "home/secret.txt": "s"})
    (own / "out-link").symlink_to(own / "out")
    spec = BotSpec("b", ("python", "bot.py", "--read", "out-link/results.sqlite", "--read", "home/secret.txt",
                         str(own / "out" / "results.sqlite")), str(own))
    snapshots = versions.Snapshots(tmp_path / "snaps")
    version = snapshots.take(spec, [own / "out", own / "home"])
    assert set(version["files"]) == {str(own / "bot.py"), str(own / "out-link")}
    tree = snapshots.trees["b"].copy_of(own)
    assert sorted(p.name for p in tree.iterdir()) == ["bot.py", "out-link"] and (tree / "out-link").is_symlink()


def test_exclude_leaves_build_products_out_of_the_version_and_the_sandbox(tmp_path):
    """``exclude = [...]``: paths and patterns left out of the version (a build not made yet is no
    error), not shown either; what the command names stays in."""
    own = bot_dir(tmp_path / "bot", {"src/main.c": "int main;", "Makefile": "all:", "build/bot": "ELF",
                                     "build/cache/a.o": "o", "build/cache/index": "i", "lib/x.o": "o", "lib/x.c": "c",
                                     ".venv-like/y.o": "o"})
    bots = ('[[bots]]\nname = "c"\ncommand = ["./build/bot"]\ncwd = "bot"\nexclude = ["build", "**/*.o", "dist"]\n'
            '[[bots]]\nname = "r"\ncommand = ["python", "-m", "sample_bots.random"]\ncwd = "r"\n')
    path = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=1, seed=1, concurrency=1)
    (tmp_path / "r").mkdir()
    spec = tconfig.load(path).bots[0]
    assert spec.exclude == ("build", "**/*.o", "dist")
    version = versions.of(spec)
    assert set(version["files"]) == {str(own / p) for p in ("src/main.c", "Makefile", "build/bot", "lib/x.c",
                                                            ".venv-like/y.o")}  # a wildcard skips dot-names
    argv = sandbox.bwrap_command(["./build/bot"], cwd=own, socket_dir=None, exclude=spec.exclude,
                                 command=spec.command)
    shown = {str(f) for f in own.rglob("*") if f.is_file() and sandbox_shows(argv, f)}
    assert shown == set(version["files"])  # build/ masked around ./build/bot, what the command names
    with pytest.raises(ConfigError, match=r"bot 'c': exclude must be a list of paths or patterns"):
        tconfig.load(write_tournament(tmp_path / "t.toml", bots.replace('"dist"]', '3]'), game="aegis", deal_sets=1,
                                      seed=1, concurrency=1))


def test_a_pattern_never_follows_a_link(tmp_path):
    """``files = ["**/*.py"]`` over links to the directory itself and to ``/``: found at once, and
    nothing through a link (glob followed them: two loops made it explore 2^40 paths)."""
    own = bot_dir(tmp_path, {"bot.py": "", "pkg/mod.py": "", ".hidden/x.py": ""})
    for name, target in (("loop", "."), ("again", "."), ("root", "/")):
        (own / name).symlink_to(target)
    spec = BotSpec("b", ("python", "bot.py"), str(own), files=("**/*.py",))
    version = in_time(lambda: versions.of(spec), 60)
    assert set(version["files"]) == {str(own / "bot.py"), str(own / "pkg" / "mod.py")}
    assert versions.matches(own, "*/mod.py") and not versions.matches(own, "loop/*.py")


def copy_checkout(tmp: Path) -> Path:
    """The parts of this checkout the examples' bots see (their ``cwd`` is its root)."""
    root = tmp / "checkout"
    for part in ("examples", "sample_bots", "referee", "proto"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns(
            "__pycache__", "node_modules", "build", "bot"))  # a checkout where no kit was built
    return root


#: where `make kits` writes (sample_bots/*/Makefile, and npm ci for the Node kit): a few files each
KIT_BUILD = ("sample_bots/cpp/build/gen/referee/v1/referee.pb.cc", "sample_bots/cpp/build/referee.pb.o",
             "sample_bots/cpp/build/bot.o", "sample_bots/cpp/bot", "sample_bots/go/build/cache/00/0a-d",
             "sample_bots/go/build/gopath/src/refereekit/referee/v1/referee.pb.go",
             "sample_bots/go/build/bin/protoc-gen-go", "sample_bots/go/bot", "sample_bots/stdio_c/bot",
             "sample_bots/node/node_modules/.package-lock.json",
             "sample_bots/node/node_modules/@grpc/grpc-js/package.json")


@pytest.mark.parametrize("example", ["aegis.toml", "confirmation.toml", "adaptive.toml", "gauntlet.toml"])
def test_the_kits_build_output_does_not_change_the_sample_bots_versions(tmp_path, example):
    """``make demo``, ``make kits``, ``make demo``: the second demo found 1,634 files of the kits'
    builds in the sample bots' versions and stopped (exit 2). Here the build is files placed where
    it puts them (no compiler needed); every bot of the example keeps its version."""
    from referee.competition import gauntlet

    root = copy_checkout(tmp_path)
    path = root / "examples" / example
    cfg = gauntlet.load(path).tournament if example == "gauntlet.toml" else tconfig.load(path)
    hide = [cfg.output, path]
    before = {b.name: versions.of(b, hide) for b in cfg.bots}
    assert all(any(f.endswith("sample_bots/random.py") for f in v["files"]) for v in before.values())
    for built in KIT_BUILD:
        (root / built).parent.mkdir(parents=True, exist_ok=True)
        (root / built).write_bytes(os.urandom(64))
    after = {b.name: versions.of(b, hide) for b in cfg.bots}
    assert {name: versions.changes(before[name], v) for name, v in after.items()} == dict.fromkeys(before, [])


@pytest.mark.e2e
def test_the_ci_recipe_resumes_after_a_cancel(tmp_path):
    """docs/regression.md's job, in its layout (the candidate and the baseline in the workspace,
    the SPRT run from it with --output, --markdown and its JSON on stdout), cancelled by SIGTERM as
    a CI job is, then run again: it resumes from the saved matches. It stopped with exit 2 before
    (``bot pr changed ...: the files sprt.err, sprt.json, sprt.md``)."""
    ws = tmp_path / "workspace"
    for bot in ("candidate", "baseline"):
        bot_dir(ws / bot, {"bot.py": "from sample_bots.random import main\n\nmain()\n", "README.md": bot})
    command = (f"exec {sys.executable} -m referee sprt --game aegis --candidate 'pr=python candidate/bot.py' "
               f"--baseline 'base=python baseline/bot.py' --preset non-regression --seed 1 --max-units 20 "
               f"--concurrency 2 --output sprt-out --markdown sprt.md --format json > sprt.json 2> sprt.err")
    first = subprocess.Popen(["bash", "-c", command], cwd=ws)
    index = ws / "sprt-out" / "logs" / "matches.jsonl"  # a line per match and seat played
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and first.poll() is None:
        if index.exists() and len(index.read_text().splitlines()) >= 4:  # two matches played
            break
        time.sleep(0.05)
    first.send_signal(signal.SIGTERM)  # what a cancelled job's runner sends
    assert first.wait(timeout=120) == 130, (ws / "sprt.err").read_text()
    assert json.loads((ws / "sprt.json").read_text())["verdict"] == "interrupted" and (ws / "sprt.md").exists()
    stored = Store(ws / "sprt-out", create=False)
    try:
        before = {row.key: row.results for row in stored.matches()}
    finally:
        stored.close()
    assert before
    again = subprocess.run(["bash", "-c", command], cwd=ws, timeout=600, check=False)
    err = (ws / "sprt.err").read_text()
    assert again.returncode in (0, 1, 3), err
    assert "changed" not in err
    report = json.loads((ws / "sprt.json").read_text())
    assert report["verdict"] in ("H0", "H1", "inconclusive") and report["games"] >= len(before)
    stored = Store(ws / "sprt-out", create=False)
    try:
        after = {row.key: row.results for row in stored.matches()}
    finally:
        stored.close()
    assert {key: after[key] for key in before} == before  # counted, not played again
    assert not (ws / "sprt-out" / versions.SNAPSHOTS).exists()  # the bots' copies go with the run


# --- a version is regular files, read once (issue 35, item 3) --------------------------------------


def plant(folder: Path, kind: str) -> Path:
    """A file of ``kind`` among a bot's files, as a tar, a zip or a checkout can ship one."""
    path = folder / "model.bin"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        here = os.getcwd()
        os.chdir(folder)  # a socket's path is at most 107 bytes: bound by a relative one
        try:
            listener = socket.socket(socket.AF_UNIX)
            listener.bind(path.name)
            listener.close()
        finally:
            os.chdir(here)
    elif kind == "device":
        try:
            os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 5))  # as /dev/zero
        except PermissionError:
            pytest.skip("making a device needs CAP_MKNOD (root)")
    elif kind == "link-out":
        path.symlink_to("/etc/passwd")
    return path


KINDS = {"dev-zero": "is a link to /dev/zero, which leads out of its directory", "fifo": "is a named pipe (FIFO)",
         "socket": "is a socket", "device": "is a device", "link-out": "is a link to /etc/passwd, which leads out"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_that_is_not_regular_refuses_the_bot_in_one_line(tmp_path, kind):
    own = bot_dir(tmp_path / "bot", {"bot.py": "x"})
    planted = plant(own, kind)
    spec = BotSpec("mine", ("python", "bot.py"), str(own))
    with pytest.raises(versions.VersionRefused) as refused:
        in_time(lambda: versions.of(spec), 60)
    message = str(refused.value)
    assert message.startswith(f"bot mine: its file {planted} {KINDS[kind]}") and "\n" not in message


def test_a_link_stays_a_link_and_must_lead_among_the_bots_files_its_data_or_the_runtime(tmp_path):
    own = bot_dir(tmp_path / "bot", {"bot.py": "x", "lib/real.py": "y"})
    data = bot_dir(tmp_path / "data", {"table.txt": "t"})
    for name, target in (("lib/alias.py", "real.py"), ("lib/up", ".."), ("table", str(data / "table.txt")),
                         ("env", "/usr/bin/env"), ("broken", "nowhere")):
        (own / name).symlink_to(target)
    spec = BotSpec("b", ("python", "bot.py"), str(own), data=(str(data),))
    files = versions.of(spec)["files"]
    assert files[str(own / "lib" / "alias.py")] == files[str(own / "lib" / "real.py")]  # the file it leads to
    assert files[str(own / "lib" / "up")] == "link to .." and files[str(own / "broken")] == "link to nowhere"
    assert files[str(own / "table")] == f"link to {data / 'table.txt'}" and files[str(own / "env")] == \
        "link to /usr/bin/env"
    assert files[str(own / "lib" / "real.py")] == hashlib.sha256(b"y").hexdigest()
    with pytest.raises(versions.VersionRefused, match=rf"its file {own / 'table'} is a link to {data}"):
        versions.of(BotSpec("b", ("python", "bot.py"), str(own)))  # without it as its data


def test_a_name_with_control_characters_is_shown_escaped(tmp_path):
    own = bot_dir(tmp_path / "bot", {"bot.py": "x"})
    os.mkfifo(own / "\x1b]0;owned\x07")
    with pytest.raises(versions.VersionRefused) as refused:
        versions.of(BotSpec("b", ("python", "bot.py"), str(own)))
    assert "\x1b" not in str(refused.value) and "\\x1b]0;owned\\x07" in str(refused.value)


@pytest.mark.parametrize("cap, value, why", [("MAX_FILES", 3, "it has more than 3 files"),
                                             ("MAX_MB", 0, "its files hold more than 0 MB"),
                                             ("MAX_SECONDS", -1, "reading its files took more than -1 s")])
def test_a_version_reads_at_most_so_many_files_bytes_and_seconds(tmp_path, monkeypatch, cap, value, why):
    own = bot_dir(tmp_path / "bot", {f"f{i}.py": "x" for i in range(5)})
    monkeypatch.setattr(versions, cap, value)
    with pytest.raises(versions.VersionRefused, match=f"^bot b: {why}.* under {own}, more than a version reads"):
        versions.of(BotSpec("b", ("python", "f0.py"), str(own)))


# --- what runs is what was hashed (issue 35, item 4) --------------------------------------------


def test_a_snapshot_holds_what_was_hashed_and_a_later_change_does_not_reach_it(tmp_path):
    own = bot_dir(tmp_path / "bot", {"bot.py": "print(1)", "lib/m.py": "A = 1", "notes/n.txt": "n"})
    (own / "run.sh").write_text("#!/bin/sh\n")
    (own / "run.sh").chmod(0o755)
    (own / "lib" / "alias.py").symlink_to("m.py")
    data = bot_dir(tmp_path / "data", {"helper.py": "h", "big.bin": "b"})
    spec = BotSpec("b", ("python", "bot.py", str(data / "helper.py")), str(own), data=(str(data),))
    snapshots = versions.Snapshots(tmp_path / "out" / versions.SNAPSHOTS)
    version = snapshots.take(spec)
    assert version == versions.of(spec)
    snap = snapshots.trees["b"]
    copied = {str(p.relative_to(snap.copy_of(own))) for p in snap.copy_of(own).rglob("*") if not p.is_dir()}
    assert copied == {"bot.py", "lib/m.py", "lib/alias.py", "notes/n.txt", "run.sh"}
    for name in ("bot.py", "lib/m.py", "notes/n.txt"):
        copy = snap.copy_of(own / name)
        assert hashlib.sha256(copy.read_bytes()).hexdigest() == version["files"][str(own / name)]
        assert stat.S_IMODE(copy.stat().st_mode) == 0o444
    assert stat.S_IMODE(snap.copy_of(own / "run.sh").stat().st_mode) == 0o555
    assert os.readlink(snap.copy_of(own / "lib" / "alias.py")) == "m.py"
    # what its command names in its data is copied and bound over it; the rest of its data is shown as it is
    assert snap.named == (data / "helper.py",) and snap.copy_of(data / "helper.py").read_text() == "h"
    assert not snap.copy_of(data / "big.bin").exists()
    (own / "lib" / "m.py").write_text("A = 2")  # in place: a hard link would follow it
    (own / "bot.py").unlink()
    (own / "bot.py").write_text("print(2)")
    assert snap.copy_of(own / "lib" / "m.py").read_text() == "A = 1"
    assert snap.copy_of(own / "bot.py").read_text() == "print(1)"
    snapshots.remove()
    assert not (tmp_path / "out" / versions.SNAPSHOTS).exists()


def test_the_sandbox_shows_the_snapshot_and_room_is_made_without_following_a_link(tmp_path):
    """The copy is bound at the bot's own path (its data and the runtime inside it are bound as
    themselves, on room made in the copy); masks inside it are not needed: it lacks what they hide."""
    own = bot_dir(tmp_path / "bot", {"bot.py": "x", "nets/w.bin": "w", "out/results.sqlite": "",
                                     "other/b.py": "theirs"})
    (own / "venv").symlink_to(own / "nets")  # in its files: a link where the sandbox wants room
    spec = BotSpec("b", ("python", "bot.py"), str(own), data=(str(own / "nets" / "w.bin"),))
    snapshots = versions.Snapshots(tmp_path / "snaps")
    snapshots.take(spec, [own / "out", own / "other"])
    snap = snapshots.trees["b"]
    binds = snap.mounts([own / "nets" / "w.bin", own / "venv" / "lib"])
    assert binds == {own: ["--ro-bind", str(snap.copy_of(own)), str(own)]}
    assert snap.copy_of(own / "nets" / "w.bin").read_text() == ""  # room for the data file, empty
    assert sorted(p.name for p in (own / "nets").iterdir()) == ["w.bin"]  # nothing made through the link
    argv = sandbox.bwrap_command(["python", "bot.py"], cwd=own, socket_dir=None, hide=[own / "out"],
                                 apart=[own / "other"], data=[own / "nets" / "w.bin"], snapshot=snap)
    at = argv.index(str(snap.copy_of(own)))
    assert argv[at - 1:at + 2] == ["--ro-bind", str(snap.copy_of(own)), str(own)]
    assert str(own / "out") not in argv and str(own / "other") not in argv  # not in the copy: no mask
    assert sandbox_shows(argv, own / "nets" / "w.bin")


# --- the attacks, in the real sandbox --------------------------------------------------------------


def competition(tmp: Path, deal_sets: int) -> Path:
    """The changer (tests/bots/hostile/changer: it plays the strategy in its strategy.py and logs
    its name once per process), a victim and a third bot, in Aegis, one process per match."""
    bots = tables(("changer", ["python", "bot.py"], "changer"), random_bot("victim", 1), random_bot("third", 2))
    return write_tournament(tmp / "t.toml", bots, game="aegis", deal_sets=deal_sets, seed=8, concurrency=1,
                            extra='isolation = "match"')


def victim_results(out: Path) -> dict[str, tuple]:
    """Per stored match of the victim's: its seat, the scores, the placing, its faults."""
    store = Store(out, create=False)
    try:
        return {r.key: (seat := r.lineup.index("victim"), r.scores, r.placing, r.faults[seat])
                for r in store.matches() if "victim" in r.lineup}
    finally:
        store.close()


def entrant(tmp: Path) -> None:
    for name in ("victim", "third"):
        (tmp / name).mkdir(parents=True, exist_ok=True)
    shutil.copytree(HOSTILE / "changer", tmp / "changer", ignore=shutil.ignore_patterns("planted.py", "__pycache__"))


@pytest.fixture(scope="module")
def played_once(tmp_path_factory) -> tuple[Path, dict]:
    """A competition's first deal set, played with the changer honest: its directory and the
    victim's results."""
    require_sandbox()
    tmp = tmp_path_factory.mktemp("competition")
    entrant(tmp)
    done = run_cli("tournament", competition(tmp, 1), "--quiet", "--bootstrap", "20")
    assert done.returncode == 0, done.stderr
    return tmp, victim_results(tmp / "out")


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "socket", "device"])
def test_a_planted_pipe_device_or_link_to_dev_zero_is_refused_within_seconds(played_once, kind):
    """The entrant ships ``model.bin`` as a link to /dev/zero, a named pipe, a socket or a device
    (a tar, a zip or a checkout can hold one), and the competition grows by a deal set. Before:
    the run printed nothing and hashed zeros until killed, or blocked for ever on the pipe. Now it
    is refused before its first match, in one line naming the file (exit 2), and the victim's
    results already stored are untouched."""
    tmp, victim = played_once
    planted = plant(tmp / "changer", kind)
    try:
        started = time.monotonic()
        done = run_cli("tournament", competition(tmp, 2), "--quiet", "--bootstrap", "20", timeout=120)
        seconds = time.monotonic() - started
    finally:
        planted.unlink()
        competition(tmp, 1)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and errors[0].startswith(f"Error: bot changer: its file {planted} {KINDS[kind]}"), \
        done.stderr
    assert "Traceback" not in done.stderr
    assert victim_results(tmp / "out") == victim, "the stored results changed"
    print(f"{kind}: refused in {seconds:.1f} s")


@pytest.mark.e2e
def test_the_control_run_grows_with_the_victims_results_unchanged(played_once, tmp_path):
    """The same competition with nothing planted: it grows and plays, and the victim's first deal
    set is what the attacks left stored."""
    _, victim = played_once
    entrant(tmp_path)
    assert run_cli("tournament", competition(tmp_path, 1), "--quiet", "--bootstrap", "20").returncode == 0
    done = run_cli("tournament", competition(tmp_path, 2), "--quiet", "--bootstrap", "20")
    assert done.returncode == 0, done.stderr
    grown = victim_results(tmp_path / "out")
    assert {key: grown[key] for key in victim} == victim and len(grown) == 2 * len(victim)


def rewritten_run(tmp: Path, rewrite: bool) -> tuple[list[str], int, dict, Store]:
    """Two deal sets, the changer in 8 matches, each its own process. With ``rewrite``, once its
    first match is over the entrant rewrites its strategy.py in place with another strategy (the
    last legal action). The strategies its processes logged, how many of those started after the
    rewrite, the victim's results, and the store (open)."""
    require_sandbox()
    entrant(tmp)
    run = subprocess.Popen([sys.executable, "-m", "referee", "tournament", str(competition(tmp, 2)), "--quiet",
                            "--bootstrap", "20"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log, after = tmp / "out" / "logs" / "changer.log", None
    while rewrite and after is None and run.poll() is None:
        text = log.read_text() if log.exists() else ""
        if "--- match" in text and ": ends" in text:
            after = len(text)
            with open(tmp / "changer" / "strategy.py", "r+") as strategy:  # in place: a hard link would follow
                strategy.write((HOSTILE / "changer" / "planted.py").read_text())
                strategy.truncate()
        time.sleep(0.02)
    _, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    lines = log.read_text()
    ran = [line.split()[1] for line in lines.splitlines() if line.startswith("STRATEGY ")]
    later = sum(1 for line in lines[after or len(lines):].splitlines() if line.startswith("STRATEGY "))
    return ran, later, victim_results(tmp / "out"), Store(tmp / "out", create=False)


@pytest.mark.e2e
def test_a_bot_rewritten_during_the_run_plays_what_was_hashed(tmp_path):
    """Before: the strategy swapped after the first matches, and the later ones played it, all
    recorded under the first version. Now every process runs the copy taken as the version was
    hashed; the victim's results equal a control run's, where nothing is rewritten."""
    ran, later, victim, store = rewritten_run(tmp_path / "attack", rewrite=True)
    try:
        assert later >= 1, "no process started after the rewrite: the attack had no chance"
        assert len(ran) == 9 and set(ran) == {"reviewed"}, ran  # its 8 matches and the start-up check
        seats = {r.versions[r.lineup.index("changer")] for r in store.matches() if "changer" in r.lineup}
        (version,) = seats
        files = json.loads(store.db.execute("SELECT version FROM bot_versions WHERE id = ?", (version,))
                           .fetchone()[0])["files"]
        reviewed = (HOSTILE / "changer" / "strategy.py").read_bytes()
        assert files[str(tmp_path / "attack" / "changer" / "strategy.py")] == hashlib.sha256(reviewed).hexdigest()
    finally:
        store.close()
    assert not (tmp_path / "attack" / "out" / versions.SNAPSHOTS).exists()
    control_ran, _, control, control_store = rewritten_run(tmp_path / "control", rewrite=False)
    control_store.close()
    assert set(control_ran) == {"reviewed"} and victim == control


# --- what runs without being in the version: a pyc, a hidden module (the red team's fourth round) ---


def plant_pyc(folder: Path) -> Path:
    """planted.py compiled as ``__pycache__/strategy.<tag>.pyc``, unchecked: Python loads it whatever
    strategy.py says (PEP 552), and the version leaves ``__pycache__`` out."""
    target = folder / "__pycache__" / f"strategy.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(HOSTILE / "changer" / "planted.py"), cfile=str(target), dfile="strategy.py",
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)
    return target


def planted_run(tmp_path: Path, plant: bool) -> tuple[set[str], dict]:
    """The changer and a victim on one deal set, then the competition grown by a deal set, with
    (``plant``) or without a pyc planted between: the strategies the changer ran, and the victim's
    results in the store. None for the strategies when the grown run refused the changed bot."""
    require_sandbox()
    (tmp_path / "victim").mkdir(parents=True)
    shutil.copytree(HOSTILE / "changer", tmp_path / "changer", ignore=shutil.ignore_patterns("planted.py",
                                                                                            "__pycache__"))
    bots = tables(("changer", ["python", "bot.py"], "changer"), random_bot("victim", 1))
    first = write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=1, seed=8, concurrency=1,
                             extra='isolation = "match"')
    run = run_cli("tournament", first, "--quiet", "--bootstrap", "20")
    assert run.returncode == 0, run.stderr
    if plant:
        plant_pyc(tmp_path / "changer")
    write_tournament(tmp_path / "t.toml", bots, game="aegis", deal_sets=2, seed=8, concurrency=1,
                     extra='isolation = "match"')  # the competition grows by a deal set
    again = run_cli("tournament", first, "--quiet", "--bootstrap", "20")
    if again.returncode == 2:
        assert "bot changer changed" in again.stderr, again.stderr
        return None, store_view(tmp_path / "out")[0]
    assert again.returncode == 0, again.stderr
    ran = {line.split()[1] for line in (tmp_path / "out" / "logs" / "changer.log").read_text().splitlines()
           if line.startswith("STRATEGY ")}
    return ran, store_view(tmp_path / "out")[0]


@pytest.mark.e2e
def test_a_planted_pyc_cannot_change_what_runs_under_the_same_version(tmp_path):
    """Either defence will do: the grown run refuses the changed bot, or what it runs is what was
    hashed (here: the sandbox masks ``__pycache__``, and Python compiles the source it is shown).
    The control, the same competition grown without a pyc, gives the victim the same results."""
    ran, victim = planted_run(tmp_path / "attack", plant=True)
    assert ran in (None, {"reviewed"}), f"the second run played the planted strategy under the old version: {ran}"
    control_ran, control = planted_run(tmp_path / "control", plant=False)
    assert control_ran == {"reviewed"} and len(control) == 4
    assert victim == control if ran is not None else len(victim) == 2  # refused: the first deal set only


HIDING_PLACES = {
    # where the entrant puts the code it changes (its entry point adds the directory to sys.path;
    # before the defence, the sandbox showed the bot all of them)
    "pycache": None,  # __pycache__/strategy.<tag>.pyc: Python itself prefers it
    "dot-directory": ".config/strategy.py",
    "store-directory": "brain/strategy.py",  # beside a file named results.sqlite: "another run's output"
    "vcs-directory": ".hg/strategy.py",
    "undeclared": "strategy.py",  # outside the bot's declared files = ["bot.py"]
}


@pytest.mark.parametrize("place", HIDING_PLACES)
def test_a_change_where_the_version_does_not_look_makes_a_new_version(tmp_path, place):
    """The rule (docs/tournaments.md, "Bot versions"): the version covers exactly what the sandbox
    shows of the bot's own files. So a change is a new version, or lies where the sandbox shows
    the bot nothing; and file by file, the bubblewrap command shows what the version holds."""
    folder = tmp_path / "changer"
    shutil.copytree(HOSTILE / "changer", folder, ignore=shutil.ignore_patterns("planted.py", "__pycache__"))
    if HIDING_PLACES[place] is not None and place != "undeclared":
        hidden = folder / HIDING_PLACES[place]
        hidden.parent.mkdir()
        shutil.copy(folder / "strategy.py", hidden)
        if place == "store-directory":
            (hidden.parent / "results.sqlite").touch()
    files = ("bot.py",) if place == "undeclared" else ()
    spec = model.BotSpec("changer", ("python", "bot.py"), cwd=str(folder), files=files)
    before = versions.of(spec)
    if HIDING_PLACES[place] is None:
        changed = plant_pyc(folder)
    else:
        changed = folder / HIDING_PLACES[place]
        shutil.copy(HOSTILE / "changer" / "planted.py", changed)
    after = versions.of(spec)
    argv = sandbox.bwrap_command(["python", "bot.py"], cwd=folder, socket_dir=None, files=files,
                                 command=spec.command)
    assert after != before or not sandbox_shows(argv, changed), f"the {place} changed under the same version"
    shown = {str(f) for f in folder.rglob("*") if f.is_file() and sandbox_shows(argv, f)}
    assert shown == set(after["files"]), f"shown, not in the version: {shown - set(after['files'])}"


def test_the_cost_tool_prints_its_figures(capsys, monkeypatch):
    """A tiny run of python -m referee.tools.versions_cost (the figures come from a 200 MB bot)."""
    from referee.tools import versions_cost

    monkeypatch.setattr(versions, "RACY_S", 0.0)
    versions_cost.main(["--mb", "1", "--files", "10"])
    out = capsys.readouterr().out
    for figure in ("first version (every file read)", "run start with its snapshot (read, hashed, copied)",
                   "resumed run's snapshot (the cache: copied, not hashed)", "showing its snapshot (one bind)",
                   "removing the copy"):
        assert figure in out, out
    assert "CHANGED?" not in out
