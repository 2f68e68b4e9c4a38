"""The live page (``--http PORT`` of ``referee serve`` and ``referee tournament``): the games in
progress as a spectator sees them, the standings as matches finish, the progress.

A small HTTP server on the referee's own event loop (asyncio streams, no dependency) serves
two things: ``/`` the page (self-contained, like every page here) and ``/state`` its data as
JSON, which the page asks for every second. A game in progress is shown from the public
events the arena hands its spectators, fed to the game's table view: the same path as a
spectator's, so no hand, exchange or blind choice reaches the browser (a finished match's
record is never read here). It listens on 127.0.0.1 unless told otherwise.

The public events of a match still being played are not for the bots: the seat-swapped twin of
a deal set holds, in other seats, the very cards of its twin's hands. So the page, like the
referee's Spectate call, needs a token: given in its address (``/?token=...``, which the page
passes on to ``/state``), compared in constant time; without the right one, 403. ``token=None``
makes it public (``referee serve --public-spectators``, or a server without bot tokens).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import socket
import urllib.parse
from collections.abc import AsyncIterator, Callable
from typing import Any

from referee import games
from referee.results import standings
from referee.view.about import about_html, about_of
from referee.view.page import page

log = logging.getLogger("referee.live")

#: the lines of each game's story the page shows
LINES = 10

LIVE_BODY = """<div id="about-box">{about}</div>
<p id="progress" class="muted"></p>
<div id="live-layout">
<div><h2>Games in progress</h2><div id="games"><p class="muted">none yet</p></div></div>
<div><h2>Standings</h2><div id="standings"><p class="muted">no finished match yet</p></div></div>
</div>"""


class CannotServe(Exception):
    """The live page cannot listen where it is asked to (a busy port, an address not this machine's)."""


def listen(host: str, port: int) -> socket.socket:
    """The live page's socket, bound and listening (before anything else starts: a busy port then
    stops a run in one line, with nothing left behind); a CannotServe if it cannot be."""
    try:
        return socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as err:
        why = os.strerror(err.errno) if err.errno else str(err)
        raise CannotServe(f"--http {port}: cannot listen on {host}:{port}: {why}") from None


class LivePage:
    """What the live page shows, read from an arena (:meth:`watch`), the progress of a run
    (:meth:`progress`) and, if given, ``standings()``: ``{"headers": [...], "rows": [[...]]}``
    or None, and ``about()``: the block on the tournament (:func:`referee.view.about.about_html`,
    escaped HTML); both computed only when ``finished`` changes."""

    def __init__(self, title: str, standings: Callable[[], dict[str, Any] | None] | None = None,
                 token: str | None = None, about: Callable[[], str] | None = None):
        self.title = title
        self.token = token  # None: public
        self.arena: Any = None
        self.finished = 0
        self.total: int | None = None
        self._standings = standings
        self._about = about
        self._cached: tuple[int, dict[str, Any] | None, str] | None = None

    def watch(self, arena: Any) -> None:
        """Show the games of this arena (:class:`referee.play.arena.Arena`)."""
        self.arena = arena

    def progress(self, finished: int, total: int, played: Any = None) -> None:
        """The run's progress (the signature of a tournament's progress callback)."""
        self.finished, self.total = finished, total

    def games(self) -> list[dict[str, Any]]:
        """The games in progress, each from its public events only."""
        out = []
        for game_id, hosted in list(self.arena.matches.items()) if self.arena is not None else []:
            if hosted.outcome is not None:
                continue
            info = hosted.info
            view = games.get(info.game).table_view(list(info.seat_names), info.options)
            lines = []
            for _, event in list(hosted.public):
                view.feed(event)
                if line := view.describe(event):
                    lines.append(line)
            out.append({"id": game_id, "title": games.get(info.game).title, "seats": list(info.seat_names),
                        "frame": view.frame(), "lines": lines[-LINES:]})
        return out

    def state(self) -> dict[str, Any]:
        finished_here = sum(1 for m in self.arena.matches.values() if m.outcome is not None) if self.arena else 0
        key = self.finished if self.total is not None else finished_here
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, self._standings() if self._standings else None, self._about() if self._about else "")
        _, standings, about = self._cached
        return {"title": self.title, "games": self.games(), "finished": key, "total": self.total,
                "standings": standings, "about": about}

    def html(self) -> str:
        return page(self.title, "live: games in progress show public information only; updated every second",
                    LIVE_BODY.format(about=self.state()["about"]), styles=("common.css", "table.css", "live.css"),
                    scripts=("cards.js", "table.js", "live.js"))

    # --- serving --------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), 10)
            while await asyncio.wait_for(reader.readline(), 10) not in (b"\r\n", b"\n", b""):
                pass  # the headers: nothing in them matters here
            method, target, *_ = request.decode("latin-1").split() + ["", ""]
            path, _, query = target.partition("?")
            given = urllib.parse.parse_qs(query).get("token", [""])[0]
            if method != "GET":
                status, kind, body = "405 Method Not Allowed", "text/plain", b"GET only\n"
            elif self.token is not None and not secrets.compare_digest(given.encode(), self.token.encode()):
                status, kind, body = "403 Forbidden", "text/plain", b"this page needs its token: /?token=...\n"
            elif path == "/":
                status, kind, body = "200 OK", "text/html; charset=utf-8", self.html().encode()
            elif path == "/state":
                status, kind, body = "200 OK", "application/json", json.dumps(self.state()).encode()
            else:
                status, kind, body = "404 Not Found", "text/plain", b"not found\n"
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
                         f"Cache-Control: no-store\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
        except (TimeoutError, ConnectionError, UnicodeDecodeError):
            pass
        finally:
            writer.close()

    @contextlib.asynccontextmanager
    async def serving(self, port: int = 0, host: str = "127.0.0.1",
                      sock: socket.socket | None = None) -> AsyncIterator[str]:
        """Serve the page while the block runs (on ``sock`` if given: :func:`listen`); yields its
        address (http://HOST:PORT/)."""
        if sock is not None:
            server = await asyncio.start_server(self._handle, sock=sock)
        else:
            server = await asyncio.start_server(self._handle, host, port)
        bound = server.sockets[0].getsockname()[1]
        url = f"http://{host}:{bound}/"
        if self.token is not None:
            url += "?" + urllib.parse.urlencode({"token": self.token})
        log.info("live page: %s", url)
        try:
            yield url
        finally:
            server.close()
            await server.wait_closed()


def standings_source(store: Any, bootstrap: int) -> Callable[[], dict[str, Any] | None]:
    """The live standings of a tournament's store: the table of ``referee ratings`` (the same
    :func:`referee.results.standings.of_store`, without its head to head, which the page does
    not show and which would cost a fit per pair of bots in the referee's loop), as headers and rows."""
    def table() -> dict[str, Any] | None:
        rows = list(store.matches())
        if not rows:
            return None
        st = standings.of_store(store, rows, bootstrap=bootstrap, pairs=False)
        return {"headers": ["rank", "bot", standings.elo_header(st), "95% interval", "matches", "score %", "W-D-L",
                            standings.FAULTS_HEADER],
                "rows": [[i, b.name, *standings.elo_cells(b, st), b.matches,  # as the terminal shows them
                          "-" if b.score_pct is None else f"{b.score_pct:.1f}", f"{b.wins}-{b.draws}-{b.losses}",
                          standings.fault_cell(b.faults)]
                         for i, b in enumerate(st.lines, 1)],
                "legend": standings.FAULTS_LEGEND}

    return table


def about_source(store: Any, name: str) -> Callable[[], str]:
    """The block on a tournament that its store describes (``name``: its directory's, for the
    default title), as the report shows it."""
    return lambda: about_html(about_of(store, name))


def arena_tally(arena: Any) -> Callable[[], dict[str, Any] | None]:
    """Standings of a standalone referee: per bot, its finished matches the arena still keeps
    (first places and mean points, from each match's results)."""

    def table() -> dict[str, Any] | None:
        tally: dict[str, list[int]] = {}
        for hosted in list(arena.matches.values()):
            if hosted.outcome is None:
                continue
            results = hosted.outcome.results
            for seat, bot in enumerate(hosted.info.seat_names):
                entry = tally.setdefault(bot, [0, 0, 0])
                entry[0] += 1
                entry[1] += results["placing"][seat] == 1
                entry[2] += results["scores"][seat]
        if not tally:
            return None
        order = sorted(tally.items(), key=lambda kv: (-kv[1][1] / kv[1][0], kv[0]))
        return {"headers": ["rank", "bot", "matches", "first places", "mean points"],
                "rows": [[i, bot, n, wins, f"{points / n:.2f}"] for i, (bot, (n, wins, points)) in enumerate(order, 1)]}

    return table
