"""The bots' logs as pages, for an organiser who publishes them (``referee view DIR --logs``).

A launched bot's output goes to ``logs/NAME.log`` (:mod:`referee.hosting.launcher`),
where the runner marks every match it plays, and indexes where the markers are in
``logs/matches.jsonl`` (:data:`~referee.hosting.launcher.MATCH_INDEX`; a Ray worker's
bots log under ``logs/worker-N/``). Each log becomes ``logs/NAME.html`` in the report: its
lines numbered, each an anchor (``#L12``), a range (``#L12-L40``) highlighted; a match's
replay links each launched seat's range. The range comes from the index, never from the
marker lines: the rest of a log is the bot's own text, which could imitate them.

A log is the bot's text: it is escaped (HTML, and any control character that reached the
file shown as ``\\xNN``). Publishing is off by default, since a log may hold what a bot's
author wants kept private. The lines of a match whose record is held
(:mod:`referee.results.release`) are left out, one line saying which and why in their place
(the other lines keep their numbers): a bot may print the cards it held.
"""

from __future__ import annotations

import bisect
import html
import json
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from referee import files
from referee.hosting.launcher import MATCH_INDEX
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


def log_page(text: str, title: str, back_link: str, marks: AbstractSet[int] = frozenset(),
             held: dict[int, tuple[int, str]] | None = None) -> str:
    """One log as a page: every line numbered and escaped, ``#Ln-Lm`` highlighted, the lines
    ``marks`` (the match markers the index locates) marked; ``held``: ranges of lines left out
    (first line -> the last and why), each shown as one line saying so."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    held = held or {}
    parts, n = [], 1
    while n <= len(lines):
        if n in held:
            last, why = held[n]
            parts.append(f'<div id="L{n}" class="line held"><a class="n" href="#L{n}">{n}-{last}</a>'
                         f'{html.escape(f"--- {last - n + 1} line(s) left out: {why}")}</div>')
            n = last + 1
            continue
        parts.append(f'<div id="L{n}" class="line{" mark" if n in marks else ""}">'
                     f'<a class="n" href="#L{n}">{n}</a>{html.escape(_visible(lines[n - 1]))}</div>')
        n += 1
    body = "".join(parts)
    subtitle = (f'as the bot wrote it, with the runner\'s lines (they start "---"; a match\'s markers in blue, '
                f'where the runner\'s index places them) &middot; '
                f'<a href="{html.escape(back_link)}" style="color:#9cc8ff">tournament report</a>')
    return page(title, subtitle, f'<div id="log-lines">{body}</div>', styles=("common.css", "log.css"),
                scripts=("log.js",))


def _visible(line: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)


def publish(logs: Path, out: Path, back_link: str = "../index.html",
            held: Callable[[str], str | None] = lambda match: None) -> dict[str, str]:
    """Write a page for every log under ``logs`` into ``out``; returns each top-level log's bot and
    its page (relative to ``out``). ``held(match id)``: why that match's lines are left out (None:
    they are not)."""
    marks: dict[str, set[int]] = {}
    ranges: dict[str, list[tuple[int, int, str]]] = {}
    for (match, _), span in spans(logs).items():
        marks.setdefault(span.log, set()).update((span.first, span.last))
        if (why := held(match)) is not None:
            ranges.setdefault(span.log, []).append((span.first, span.last, f"match {match}: {why}"))
    pages = {}
    for path in sorted(logs.rglob("*.log")):
        name = str(path.relative_to(logs))
        target = out / page_name(name)
        files.make_directory(target.parent)
        depth = "../" * (len(Path(name).parts) - 1)
        text = path.read_bytes().decode("utf-8", "replace")
        files.write_text(target, log_page(text, f"log of {path.stem}" + (f" ({path.parent.name})" if depth else ""),
                                          depth + back_link, marks.get(name, set()), _merged(ranges.get(name, []))))
        if not depth:
            pages[path.stem] = page_name(name)
    return pages


def _merged(ranges: list[tuple[int, int, str]]) -> dict[int, tuple[int, str]]:
    """Ranges of lines (first, last, why), those that overlap made one: first -> (last, why)."""
    out: dict[int, tuple[int, str]] = {}
    start = None
    for first, last, why in sorted(ranges):
        if start is not None and first <= out[start][0]:
            out[start] = (max(last, out[start][0]), out[start][1])
        else:
            start = first
            out[start] = (last, why)
    return out


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
