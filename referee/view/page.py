"""HTML pages: one self-contained file each, its styles, scripts and data inline."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from referee.view.steps import replay_data


def asset(name: str) -> str:
    return resources.files("referee.view").joinpath("assets", name).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """JSON safe inside a <script> element: no ``<``, ``>`` or ``&`` at all (each a \\u escape, which
    JSON reads back as the same character), so that nothing a bot wrote (``</script>``, ``<!--``)
    can end the element early or change how the browser parses the rest of the page."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def scroll(table: str) -> str:
    """A table in a box no wider than the page, which scrolls sideways when the table is wider."""
    return f'<div class="scroll">{table}</div>'


def page(title: str, subtitle: str, body: str, styles: tuple[str, ...] = ("common.css",),
         scripts: tuple[str, ...] = (), data: Any = None, data_id: str = "page-data") -> str:
    """A whole HTML document: the named assets inline, ``data`` as JSON in a script element."""
    css = "\n".join(asset(name) for name in styles)
    js = "\n".join(asset(name) for name in scripts)
    data_tag = ("" if data is None
                else f'<script type="application/json" id="{data_id}">{embed_json(data)}</script>\n')
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>\n{css}\n</style>\n</head>\n<body>\n"
            f"<header><h1>{html.escape(title)}</h1><div class=\"sub\">{subtitle}</div></header>\n"
            f"<main>\n{body}\n</main>\n{data_tag}"
            + (f"<script>\n{js}\n</script>\n" if js else "") + "</body>\n</html>\n")


REPLAY_BODY = """<div id="controls">
<button id="first" title="first step (Home)">|&#x25c0;</button>
<button id="back" title="step back (&#x2190;)">&#x25c0;</button>
<button id="play" title="play / pause (space)">play</button>
<button id="forward" title="step forward (&#x2192;)">&#x25b6;</button>
<button id="last" title="last step (End)">&#x25b6;|</button>
<select id="speed" title="speed"><option value="1000">1 step/s</option><option value="400" selected>2.5 steps/s</option>
<option value="150">7 steps/s</option></select>
<select id="chapter" title="jump to (&#x2191; &#x2193;)"></select>
<select id="trick" title="jump to a trick"></select>
<span id="position"></span>
</div>
<div id="info"></div>
<div id="layout">
<div><div id="table" class="table"></div><div id="faults"></div>
<div id="scores"><h2 id="scores-title"></h2><div class="scroll"><table class="grid"><thead id="scores-head"></thead>
<tbody id="scores-body"></tbody></table></div><p id="final"></p></div></div>
<div id="side"><div id="log"></div>
<div class="muted">&#x2190; &#x2192; step, &#x2191; &#x2193; round or game, space play/pause, Home/End;
the address keeps the step.</div>
</div>
</div>"""


def replay_page(record: Mapping[str, Any], viewer: int | None = None, back_link: str | None = None,
                logs: Sequence[tuple[str, str]] = ()) -> str:
    """The HTML replay of a record: every hand (``viewer`` None) or one seat's view; ``logs``: a
    link (its text, its address) to each seat's lines of the match in its bot's log."""
    data = replay_data(record, viewer)
    seats = data["seats"]
    who = ("every hand shown" if viewer is None
           else f"as seen by {_seat(seats, viewer)}: others' hidden cards are not in this page")
    options = ", ".join(f"{k}={json.dumps(v)}" for k, v in data["options"].items())
    match = f"match {data['match']}; " if data["match"] else ""
    subtitle = html.escape(f"{match}{' v '.join(seats)}; {who}; options: {options}")
    if back_link:
        subtitle += f' &middot; <a href="{html.escape(back_link)}" style="color:#9cc8ff">tournament report</a>'
    body = REPLAY_BODY
    if logs:
        links = " &middot; ".join(f'<a href="{html.escape(href)}">{html.escape(text)}</a>' for text, href in logs)
        body = f'<p id="logs" class="muted">the bots\' logs of this match: {links}</p>\n' + body
    return page(f"{data['title']}: {' v '.join(seats)}", subtitle, body,
                styles=("common.css", "table.css", "replay.css"), scripts=("cards.js", "table.js", "replay.js"),
                data=data, data_id="replay-data")


def _seat(seats: list[str], seat: int) -> str:
    """A seat named with its number: ``alice (seat 1)``, or its label when that already carries it."""
    label = seats[seat]
    return label if label.endswith(f"(seat {seat})") else f"{label} (seat {seat})"
