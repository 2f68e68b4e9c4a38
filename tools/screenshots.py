"""Take the screenshots of the README and docs/viewer.md (docs/images/) from the demo's results, in headless Chromium.

    make demo && .venv/bin/python tools/screenshots.py

A Confirmation replay, stepped into its first round's play, and the Aegis report."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
IMAGES = ROOT / "docs" / "images"


def main() -> None:
    replays = sorted((OUT / "confirmation" / "report" / "replays").glob("*.html"))
    report = OUT / "aegis" / "report" / "index.html"
    if not replays or not report.exists():
        sys.exit("no demo results: run `make demo` first")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 1300, "height": 820})
        page.goto(replays[0].as_uri() + "#step=40")
        page.wait_for_timeout(300)
        page.screenshot(path=IMAGES / "replay.png")
        page = browser.new_page(viewport={"width": 1120, "height": 1300})
        page.goto(report.as_uri())
        page.wait_for_timeout(300)
        page.screenshot(path=IMAGES / "report.png")
        browser.close()
    print(f"wrote {IMAGES / 'replay.png'} and {IMAGES / 'report.png'}")


if __name__ == "__main__":
    main()
