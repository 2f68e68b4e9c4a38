"""The newcomer's journey in Debian's Chromium (Playwright), against a real ``referee server`` started
as the README says: register with an invite code, upload the sample bot, see it built, validated and
ranked, watch a replay; a second entrant's build fails, and its owner sees why while the first
entrant does not. The pages at 390 px and 1280 px never scroll sideways."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from harness import PASSWORD, ROOT, require_server
from test_server_process import Server
from test_view_browser import browser  # noqa: F401  (the fixture: Chromium, once a module)

require_server()

pytestmark = pytest.mark.e2e


def zipped(directory: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as z:
        for path in sorted(directory.iterdir()):
            if path.is_file():
                z.write(path, path.name)
    return out


def register(page, url: str, invite: str, name: str) -> None:
    page.goto(url + "/")
    page.click("text=register")
    page.fill("#invite", invite)
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_selector("#flash")
    assert "Your API token" in page.inner_text("#flash")
    page.click("#submit")  # continue: to my submissions


def no_sideways_scroll(page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


def test_a_newcomer_registers_uploads_is_ranked_and_watches_a_replay(browser, tmp_path: Path) -> None:
    server = Server(tmp_path)
    server.file.write_text((ROOT / "examples" / "competition.toml").read_text().replace('cwd = ".."',
                                                                                        f'cwd = "{ROOT}"'))
    try:
        printed = server.start("--open", "--invites", "3", "--state", str(tmp_path / "state"))
        invites = re.findall(r"invite code: (\S+)", printed)
        upload_bot = zipped(ROOT / "examples" / "upload-bot", tmp_path / "upload-bot.zip")
        broken = tmp_path / "broken.zip"  # the sample bot with a build that fails
        with zipfile.ZipFile(broken, "w") as z:
            z.writestr("bot.toml", 'command = ["python", "bot.py"]\n'
                                   'build = ["sh", "-c", "echo missing-header-xyz >&2; exit 2"]\n')
            z.writestr("bot.py", (ROOT / "examples" / "upload-bot" / "bot.py").read_text())

        ann = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        register(ann, server.url, invites[0], "ann")
        ann.set_input_files("#file", str(upload_bot))
        ann.click("#upload")
        assert "uploaded: submission" in ann.inner_text("#flash")
        ann.wait_for_selector('.submission[data-status="accepted"]', timeout=180_000)  # the page polls
        assert "validated: no fault" in ann.inner_text(".submission .validation-log")

        ben = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        register(ben, server.url, invites[1], "ben")
        ben.set_input_files("#file", str(broken))
        ben.click("#upload")
        ben.wait_for_selector('.submission[data-status="failed"]', timeout=180_000)
        assert "missing-header-xyz" in ben.inner_text(".submission .build-log")  # its owner sees why
        assert no_sideways_scroll(ben)
        ann.reload()
        assert "missing-header-xyz" not in ann.content()  # another entrant does not

        ben.set_input_files("#file", str(upload_bot))  # ben's fixed version: now two entries play
        ben.click("#upload")
        ben.wait_for_selector('.submission[data-status="accepted"]', timeout=180_000)

        ann.goto(server.url + "/")
        ann.wait_for_selector('#standings tr[data-bot="ann"]', timeout=180_000)  # ranked: the board polls
        assert ann.locator('#standings tr[data-bot="ben"]').count() == 1
        assert no_sideways_scroll(ann)

        ann.click("text=matches")
        ann.wait_for_selector('a[href^="/match/ladder/"]', timeout=60_000)
        ann.click('a[href^="/match/ladder/"] >> nth=0')
        ann.wait_for_selector("#controls")
        before = ann.inner_text("#position")
        ann.click("#forward")
        assert ann.inner_text("#position") != before  # the replay steps

        narrow = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        for path in ("/", "/matches", "/entry/ann", "/login", "/register"):
            narrow.goto(server.url + path)
            assert no_sideways_scroll(narrow), path

        # the organiser's page: a new invite code, the entrants, the phase moved on
        password = re.search(r"password = (\S+)", (tmp_path / "state" / "server" / "organiser.txt").read_text())
        narrow.goto(server.url + "/login")
        narrow.fill("#name", "organiser")
        narrow.fill("#password", password.group(1))
        narrow.click("#submit")
        narrow.wait_for_url("**/me")  # logged in: the session cookie is set
        narrow.click("#password-change summary")  # the generated password is changed for the organiser's own
        narrow.fill("#current", password.group(1))
        narrow.fill("#new", "the organiser's own password")
        narrow.click("#change-password")
        assert "password changed" in narrow.inner_text("#flash")
        assert no_sideways_scroll(narrow)
        narrow.goto(server.url + "/organiser")
        assert narrow.locator("#invite").count() == 1, narrow.content()[:3000]
        narrow.click("#invite")
        code = re.search(r"new invite code: (\S+)", narrow.inner_text("#flash")).group(1)
        assert code in narrow.inner_text("#invites")
        assert "ann" in narrow.inner_text("#entrants") and "ben" in narrow.inner_text("#entrants")
        assert no_sideways_scroll(narrow)
        narrow.click("#move")
        assert narrow.inner_text("#org-phase") == "frozen"
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill()
