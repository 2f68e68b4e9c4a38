"""The bots' logs as pages, for an organiser who publishes them (``referee view DIR --logs``).

A launched bot's output goes to ``logs/NAME.log`` (:mod:`referee.tournament.launcher`),
where the runner marks every match it plays, and indexes where the markers are in
``logs/matches.jsonl`` (:data:`~referee.tournament.launcher.MATCH_INDEX`; a Ray worker's
bots log under ``logs/worker-N/``). Each log becomes ``logs/NAME.html`` in the report: its
lines numbered, each an anchor (``#L12``), a range (``#L12-L40``) highlighted; a match's
replay links each launched seat's range. The range comes from the index, never from the
marker lines: the rest of a log is the bot's own text, which could imitate them.

A log is the bot's text: it is escaped (HTML, and any control character that reached the
file shown as ``\\xNN``). Publishing is off by default, since a log may hold what a bot's
author wants kept private.
"""

from __future__ import annotations

import bisect
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

from referee import files
from referee.tournament.launcher import MATCH_INDEX
from referee.view.page import page

#: where the report keeps the log pages
LOGS = "logs"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Span:
    """The lines of one log (its path under the logs directory) that one seat's match spans."""

    log: str
    first: int  # line numbers, 1 first: the match's begin marker
    last: int  # its end marker

    def anchor(self) -> str:
        return f"#L{self.first}-L{self.last}"


def page_name(log: str) -> str:
    """The page of a log (``worker-1/bot.log`` -> ``worker-1/bot.html``)."""
    return str(Path(log).with_suffix(".html"))


def spans(logs: Path) -> dict[tuple[str, int], Span]:
    """Every (match id, seat) the index files under ``logs`` name, with its lines: the last entry of
    a match that was played out (a match played again after an interruption or ``--rerun``: the
    last play, the one stored). Entries whose log is gone or shorter than they say are left out."""
    found: dict[tuple[str, int], Span] = {}
    starts: dict[Path, list[int]] = {}
    for index in sorted(logs.rglob(MATCH_INDEX)):
        for line in index.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                e = json.loads(line)
                match, seat, name, begins, ends = e["match"], int(e["seat"]), e["log"], int(e["begins"]), int(e["ends"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short when a run was killed
            path = index.parent / name
            if not e.get("played") or Path(name).name != name or not path.is_file():
                continue
            if path not in starts:
                data = path.read_bytes()
                starts[path] = [0] + [m.end() for m in re.finditer(rb"\n", data)]
            lines = starts[path]
            if ends > lines[-1] or begins > ends:
                continue
            found[(match, seat)] = Span(str(path.relative_to(logs)), bisect.bisect_right(lines, begins),
                                        bisect.bisect_left(lines, ends))
    return found


def log_page(text: str, title: str, back_link: str, marks: set[int] = frozenset()) -> str:
    """One log as a page: every line numbered and escaped, ``#Ln-Lm`` highlighted, the lines
    ``marks`` (the match markers the index locates) marked."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    body = "".join(f'<div id="L{n}" class="line{" mark" if n in marks else ""}">'
                   f'<a class="n" href="#L{n}">{n}</a>{html.escape(_visible(line))}</div>'
                   for n, line in enumerate(lines, 1))
    subtitle = (f'as the bot wrote it, with the runner\'s lines (they start "---"; a match\'s markers in blue, '
                f'where the runner\'s index places them) &middot; '
                f'<a href="{html.escape(back_link)}" style="color:#9cc8ff">tournament report</a>')
    return page(title, subtitle, f'<div id="log-lines">{body}</div>', styles=("common.css", "log.css"),
                scripts=("log.js",))


def _visible(line: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)


def publish(logs: Path, out: Path, back_link: str = "../index.html") -> dict[str, str]:
    """Write a page for every log under ``logs`` into ``out``; returns each top-level log's bot and
    its page (relative to ``out``)."""
    marks: dict[str, set[int]] = {}
    for span in spans(logs).values():
        marks.setdefault(span.log, set()).update((span.first, span.last))
    pages = {}
    for path in sorted(logs.rglob("*.log")):
        name = str(path.relative_to(logs))
        target = out / page_name(name)
        files.make_directory(target.parent)
        depth = "../" * (len(Path(name).parts) - 1)
        text = path.read_bytes().decode("utf-8", "replace")
        files.write_text(target, log_page(text, f"log of {path.stem}" + (f" ({path.parent.name})" if depth else ""),
                                          depth + back_link, marks.get(name, set())))
        if not depth:
            pages[path.stem] = page_name(name)
    return pages


def withdraw(out: Path) -> None:
    """Remove the log pages an earlier ``--logs`` wrote into ``out`` (and nothing else)."""
    if not out.is_dir():
        return
    for path in sorted(out.rglob("*.html"), reverse=True):
        path.unlink()
    for folder in sorted((p for p in out.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    if not any(out.iterdir()):
        out.rmdir()
