"""How wide each page is in a window 390 px and 1280 px wide (headless Chromium): a page wider than
its window scrolls sideways, which the pages must never do (docs/viewer.md, "On a phone").

    make demo && .venv/bin/python tools/page_widths.py            # the demo's reports and a replay of each
    .venv/bin/python tools/page_widths.py out/x/report/index.html  # or any pages

Prints one line per page and window: the page's width (``document.documentElement.scrollWidth``)."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
WIDTHS = (390, 1280)


def demo_pages() -> list[Path]:
    pages = []
    for name in ("aegis", "confirmation"):
        report = ROOT / "out" / name / "report"
        pages += [report / "index.html", *sorted((report / "replays").glob("*.html"))[:1]]
    return [p for p in pages if p.exists()]


def main() -> None:
    pages = [Path(a) for a in sys.argv[1:]] or demo_pages()
    if not pages:
        sys.exit("no pages: run `make demo` first, or name the pages")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        for width in WIDTHS:
            page = browser.new_page(viewport={"width": width, "height": 800})
            for path in pages:
                page.goto(path.resolve().as_uri())
                wide = page.evaluate("document.documentElement.scrollWidth")
                print(f"{width:5d} px window: {wide:5d} px wide{'  (scrolls sideways)' if wide > width else ''}  "
                      f"{path.relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else path}")
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
