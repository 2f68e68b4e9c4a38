"""Fixtures shared by the test modules. Plain helpers live beside this file:
``harness.py`` (the CLI in process or as a subprocess, tournament files, bot
processes against a RefereeServer) and ``helpers.py`` (decks from chosen
hands, quick play). Slow end-to-end tests carry the ``e2e`` marker, calibrations over many
simulated tournaments the ``slow`` one (``make test-fast`` leaves both out)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest
from harness import invoke_cli


def pytest_sessionstart(session):
    """With workers side by side (``make test``: ``-n 2``), the Node kit's packages are installed
    (when missing) before any test runs: installed by tests/test_node_bot.py on one worker, they
    would change the sample bots' version (their directory is the repository) under another
    worker's tests that compare versions. (tests/test_kits.py builds the kits in copies outside the
    repository.) Not for the fast tests, which play no kit."""
    if hasattr(session.config, "workerinput") or not getattr(session.config.option, "numprocesses", None) \
            or "not e2e" in (session.config.option.markexpr or ""):
        return
    from test_node_bot import install  # a test module: imported only for this session's start

    with contextlib.suppress(subprocess.TimeoutExpired):
        install()  # an install that fails (or hangs) is reported by tests/test_node_bot.py


@pytest.fixture
def invoke():
    """The ``referee`` command run in this process: ``invoke("ratings", path, "--format", "json")``
    returns click's Result (exit_code, output)."""
    return invoke_cli


def _children() -> list[str]:
    """This process's live children (not zombies), as 'pid command'."""
    me, found = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name_end = text.rindex(")")
        state, ppid = text[name_end + 2:].split()[:2]
        if int(ppid) == me and state != "Z":
            found.append(f"{stat.parent.name} {text[text.index('(') + 1:name_end]}")
    return found


@pytest.fixture(autouse=True)
def no_process_left_behind(request):
    """An end-to-end test must not leave a bot or server process running (docs/reliability.md:
    no orphans). Checked after each e2e test on Linux, with a few seconds' grace for a process
    that is being stopped."""
    check = request.node.get_closest_marker("e2e") is not None and Path("/proc/self/stat").exists()
    before = set(_children()) if check else set()
    yield
    if check:
        deadline = time.monotonic() + 5
        while (left := set(_children()) - before) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, f"processes left running after the test: {sorted(left)}"
