"""The competition server's web site and HTTP API: Starlette routes as thin as a servicer.

Each route reads what the coordinator keeps (:class:`~referee.server.coordinator.Board`, the
server's store, the results stores read-only) or hands it a request (an upload, a phase move); no
game logic lives here. What a page may show follows :mod:`referee.results.release`: a record is
served to the public once released (and the finals' only once the competition is closed); an entrant
sees its own submissions, logs, and its own seat's view of its own matches; the organiser sees all.

Security (docs/security.md, "The competition server"): sessions and API tokens are random, stored
hashed; every form carries a CSRF token (an HMAC of a per-browser cookie); cookies are HttpOnly and
SameSite; failed logins are rate-limited by address and by name; every text an entrant or a bot
controls goes through Jinja2's autoescape or :mod:`referee.untrusted`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from referee.competition.ladder import NEXT, Phase, PhaseError
from referee.hosting import uploads
from referee.results import history, release
from referee.results.standings import Standings, to_json
from referee.results.store import DB_NAME, MatchRow, Store
from referee.server import auth
from referee.server.coordinator import PRIVATE, Coordinator, Refused, cpu_pressure
from referee.server.db import RUNNING, Status, Submission, User
from referee.view import report
from referee.view.about import about_html, about_of
from referee.view.logs import log_page, spans
from referee.view.page import asset, replay_page

SESSION_COOKIE, CSRF_COOKIE = "referee_session", "referee_csrf"
SESSION_S = 14 * 86400
#: the form fields of an upload besides the file (bytes): a request larger than the upload cap by more is refused
FORM_SLACK = 64 << 10
POLL_MS = 5000


@dataclass(frozen=True)
class Site:
    """What the routes share: the coordinator, the secret the CSRF tokens are keyed with, the templates."""

    coordinator: Coordinator
    secret: bytes
    env: jinja2.Environment
    #: failed logins, by address and by name (apart: a flood from many addresses cannot push a name's lock out)
    by_address: auth.LoginLimiter
    by_name: auth.LoginLimiter
    #: argon2 holds 64 MiB for ~0.1 s a check: at most this many at once
    hashing: asyncio.Semaphore
    secure: bool = False
    #: the leaderboard's live part as last rendered, with the state it was rendered from
    board: dict[str, Any] = field(default_factory=dict)

    @property
    def db(self) -> Any:
        return self.coordinator.db


def create_app(coordinator: Coordinator, secret: bytes, secure_cookies: bool = False) -> Starlette:
    env = jinja2.Environment(loader=jinja2.PackageLoader("referee.server", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    site = Site(coordinator, secret, env, auth.LoginLimiter(), auth.LoginLimiter(), asyncio.Semaphore(4),
                secure_cookies)

    def route(path: str, handler: Callable[[Site, Request], Awaitable[Response]], methods: tuple[str, ...] = ("GET",)
              ) -> Route:
        async def endpoint(request: Request) -> Response:
            return await handler(site, request)
        return Route(path, endpoint, methods=list(methods))

    routes = [
        route("/", leaderboard), route("/fragment/leaderboard", leaderboard_fragment),
        route("/entry/{name}", entry_page), route("/matches", matches_page),
        route("/match/{scope}/{number:int}", match_page), route("/log/{scope}/{number:int}", log_of_match),
        route("/register", register_form), route("/register", register, ("POST",)),
        route("/login", login_form), route("/login", login, ("POST",)), route("/logout", logout, ("POST",)),
        route("/me", me_page), route("/fragment/me", me_fragment), route("/me/token", new_token, ("POST",)),
        route("/me/password", new_password, ("POST",)),
        route("/upload", upload_form, ("POST",)),
        route("/organiser", organiser_page), route("/organiser/phase", organiser_phase, ("POST",)),
        route("/organiser/invite", organiser_invite, ("POST",)),
        route("/organiser/disable", organiser_disable, ("POST",)),
        route("/api/leaderboard", api_leaderboard), route("/api/submit", api_submit, ("POST",)),
        route("/api/submission/{sid:int}", api_submission),
        route("/api/phase", api_phase, ("POST",)), route("/api/invite", api_invite, ("POST",)),
    ]
    return Starlette(routes=routes)


# --- who is asking ---------------------------------------------------------------


def current_user(site: Site, request: Request) -> User | None:
    sid = request.cookies.get(SESSION_COOKIE)
    if not sid:
        return None
    user: User | None = site.db.session_user(auth.token_hash(sid))
    return user if user is not None and not user.disabled else None


def api_user(site: Site, request: Request) -> User | None:
    header = request.headers.get("authorization", "")
    if not header.startswith("Bearer "):
        return None
    user: User | None = site.db.by_token(auth.token_hash(header[7:].strip()))
    return user if user is not None and not user.disabled else None


def _csrf_seed(request: Request) -> tuple[str, bool]:
    """The browser's CSRF cookie (new: True when it has none yet)."""
    seed = request.cookies.get(CSRF_COOKIE)
    return (seed, False) if seed and len(seed) <= 100 else (auth.new_secret(), True)


async def checked_form(site: Site, request: Request) -> dict[str, Any] | Response:
    """A form posted from one of the site's own pages: its fields, or a 403 page (no CSRF token, or a wrong one)."""
    form = await request.form(max_files=0, max_fields=20, max_part_size=64 << 10)
    seed = request.cookies.get(CSRF_COOKIE)
    given = form.get("csrf")
    if not seed or not isinstance(given, str) or not auth.csrf_ok(site.secret, seed, given):
        return render(site, request, "form.html", 403, flash="refused: the form's CSRF token is missing or wrong "
                      "(reload the page and try again)", flash_error=True, title="refused", action="/", fields=[],
                      button="home", method="get")
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def entrants_form(site: Site, request: Request) -> tuple[User, dict[str, Any]] | Response:
    """A form an entrant posts from its own page: who is logged in and the form's fields (:func:`checked_form`),
    or where to go instead (the login page; a 403 page)."""
    user = current_user(site, request)
    if user is None:
        return RedirectResponse("/login", 303)
    form = await checked_form(site, request)
    return form if isinstance(form, Response) else (user, form)


def render(site: Site, request: Request, template: str, status: int = 200, **values: Any) -> Response:
    coordinator = site.coordinator
    spec = coordinator.spec
    seed, new = _csrf_seed(request)
    values.setdefault("user", current_user(site, request))
    values.setdefault("flash", None)
    values.setdefault("flash_error", False)
    values.setdefault("poll", False)
    values.setdefault("title", spec.title)
    text = site.env.get_template(template).render(
        competition=spec.title, game=spec.game, phase=site.db.phase(), csrf=auth.csrf_token(site.secret, seed),
        deadline=spec.deadline.isoformat() if spec.deadline else None, css=_CSS, poll_ms=POLL_MS, **values)
    response = HTMLResponse(text, status_code=status)
    if new:
        response.set_cookie(CSRF_COOKIE, seed, httponly=True, samesite="strict", secure=site.secure)
    _headers(response)
    return response


def _headers(response: Response) -> None:
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-store"


_CSS = asset("common.css") + "\n" + asset("report.css")


def page_of(html_text: str, status: int = 200) -> Response:
    response = HTMLResponse(html_text, status_code=status)
    _headers(response)
    return response


def not_found(site: Site, request: Request, what: str = "no such page") -> Response:
    return render(site, request, "form.html", 404, flash=what, flash_error=True, title="not found", action="/",
                  fields=[], button="home", method="get")


# --- the public pages --------------------------------------------------------------


async def leaderboard(site: Site, request: Request) -> Response:
    return render(site, request, "leaderboard.html", board=await asyncio.to_thread(board_html, site), poll=True,
                  title="leaderboard")


async def leaderboard_fragment(site: Site, request: Request) -> Response:
    return page_of(await asyncio.to_thread(board_html, site))


def board_html(site: Site) -> str:
    """The leaderboard's live part, rendered once per state of the board (200 clients polling cost one render)."""
    c = site.coordinator
    b = c.board
    phase = site.db.phase()
    entries = _entries(site)
    late = phase in (Phase.FINALS, Phase.CLOSED)
    state = " · ".join(x for x in (b.paused, b.ladder, f"finals: {b.finals}" if late else None) if x)
    stamp = (id(b.standings), id(b.finals_standings), state, tuple(sorted(map(str, entries))), phase)
    if site.board.get("stamp") == stamp:
        return str(site.board["text"])
    finals = b.finals_standings
    published = _standings_html(finals) if finals is not None and phase == Phase.CLOSED else None
    if published is not None:  # the finals' facts: the seed (released with the records), the clock, the dates
        published = _finals_about(site) + published
    text = site.env.get_template("board.html").render(
        state=state, standings=_standings_html(b.standings), entries=entries,
        finals=published or ("<p>The finals are being played: their results are shown when the competition "
                             "closes.</p>" if phase == Phase.FINALS else None))
    site.board.update(stamp=stamp, text=text)
    return text


def _finals_about(site: Site) -> str:
    store = _open(site, "finals")
    if store is None:
        return ""
    try:
        return about_html(about_of(store, "finals"))
    finally:
        store.close()


def _standings_html(st: Standings | None) -> str | None:
    if st is None:
        return None
    return report.standings_table(st) + "<h3>P(rank)</h3>" + report.ranks_table(st)


@dataclass(frozen=True)
class EntryLine:
    name: str
    team: str
    version: str
    status: str

    def __str__(self) -> str:
        return f"{self.name}/{self.version}/{self.status}"


def _entries(site: Site) -> list[EntryLine]:
    latest: dict[str, Submission] = {}
    accepted = site.db.latest_accepted()
    for s in site.db.submissions():  # newest first
        latest.setdefault(s.name, s)
    lines = []
    for u in site.db.users():
        if u.organiser:
            continue
        s = accepted.get(u.name) or latest.get(u.name)
        status = "disabled" if u.disabled else (s.status if s else "no upload yet")
        if s is not None and s.status == Status.ACCEPTED and latest[u.name].id != s.id:
            status = f"accepted (a newer upload is {latest[u.name].status})"
        lines.append(EntryLine(u.name, u.team, s.short if s else "", str(status)))
    return lines


async def entry_page(site: Site, request: Request) -> Response:
    name = request.path_params["name"]
    user = site.db.user(name)
    if user is None or user.organiser:
        return not_found(site, request, "no such entry")
    subs = [s for s in site.db.submissions(name) if s.status in (Status.ACCEPTED, Status.STOPPED) or s.frozen]
    histories = await asyncio.to_thread(_history, site, name)
    chart = report.history_section(histories) if histories else None
    return render(site, request, "entry.html", title=name, name=name, team=user.team,
                  subs=[{"short": s.short, "when": _when(s.uploaded), "status": s.status} for s in subs],
                  history=chart)


def _history(site: Site, name: str) -> list[history.EntryHistory] | None:
    store = _open(site, "ladder")
    if store is None:
        return None
    try:
        return history.of_store(store, name)
    finally:
        store.close()


def _when(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _open(site: Site, scope: str) -> Store | None:
    if scope not in ("ladder", "finals"):
        return None
    out = site.coordinator.spec.state / scope
    return Store(out, create=False) if (out / DB_NAME).exists() else None


def _public(site: Site, scope: str) -> bool:
    """Whether the public may see a store's released records (the finals': once the competition is closed)."""
    return scope == "ladder" or site.db.phase() == Phase.CLOSED


async def matches_page(site: Site, request: Request) -> Response:
    user = current_user(site, request)
    rows = await asyncio.to_thread(_match_lines, site, user)
    note = ("Replays of a deal set are released once every match of it is played; the finals' once the "
            "competition is closed." + (" As the organiser you see every replay." if user and user.organiser else ""))
    return render(site, request, "matches.html", title="matches", matches=rows, note=note)


def _match_lines(site: Site, user: User | None) -> list[dict[str, Any]]:
    lines = []
    for scope in ("finals", "ladder"):
        store = _open(site, scope)
        if store is None:
            continue
        try:
            held = release.held_in(store)
            numbers = store.numbers()
            for row in sorted(store.matches(every=True), key=lambda r: -numbers.get(r.key, 0))[:500]:
                why = _held_why(site, scope, held, row)
                visible = why is None or (user is not None and user.organiser)
                lines.append({"number": f"{scope} {numbers.get(row.key)}", "deal_set": row.deal_set,
                              "lineup": " v ".join(row.lineup),
                              "href": f"/match/{scope}/{numbers.get(row.key)}" if visible else None, "why": why})
        finally:
            store.close()
    return lines


def _held_why(site: Site, scope: str, held: release.Held, row: MatchRow) -> str | None:
    if not _public(site, scope):
        return "the finals' records are released when the competition closes"
    return held.why(row.deal_set)


async def match_page(site: Site, request: Request) -> Response:
    scope, number = request.path_params["scope"], request.path_params["number"]
    user = current_user(site, request)
    found = await asyncio.to_thread(_record_for, site, scope, number, user)
    if isinstance(found, str):
        return not_found(site, request, found)
    record, viewer = found
    text = await asyncio.to_thread(replay_page, record, viewer, "/matches")
    return page_of(text)


def _record_for(site: Site, scope: str, number: int, user: User | None) -> tuple[dict[str, Any], int | None] | str:
    """A match's record and whose view of it the asker may have (None: every hand), or why not (one line).
    Held: nobody but the organiser, and the entrant who played it (its own seat's view)."""
    store = _open(site, scope)
    if store is None:
        return "no such match"
    try:
        row = _match_numbered(store, number)
        if row is None:
            return "no such match"
        key = row.key
        record = store.record(key)
        if record is None:
            return "no such match"
        if user is not None and user.organiser:
            return record, None
        why = _held_why(site, scope, release.held_in(store), row)
        if user is not None and user.name in row.lineup and why is not None:
            return record, row.lineup.index(user.name)
        if why is not None:
            return "no such match, or its record is held: " + why
        return record, None
    finally:
        store.close()


async def log_of_match(site: Site, request: Request) -> Response:
    """An entrant's own bot's lines of one of its matches (nobody else's: the organiser sees all)."""
    scope, number = request.path_params["scope"], request.path_params["number"]
    user = current_user(site, request)
    if user is None:
        return RedirectResponse("/login", 303)
    text = await asyncio.to_thread(_log_lines, site, scope, number, user)
    if text is None:
        return not_found(site, request, "no such log")
    return page_of(log_page(text, f"log of match {scope} {number}", "/me"))


def _match_numbered(store: Store, number: int) -> MatchRow | None:
    """The stored match of that number (its id on the pages), counted or not; None if there is none."""
    key = next((k for k, n in store.numbers().items() if n == number), None)
    return None if key is None else next((r for r in store.matches(every=True) if r.key == key), None)


def _log_lines(site: Site, scope: str, number: int, user: User) -> str | None:
    store = _open(site, scope)
    if store is None:
        return None
    try:
        row = _match_numbered(store, number)
    finally:
        store.close()
    if row is None or not (user.organiser or user.name in row.lineup):
        return None
    logs = site.coordinator.spec.state / scope / "logs"
    parts = []
    for (match, seat), span in sorted(spans(logs).items()):
        if match != row.key or not (user.organiser or row.lineup[seat] == user.name):
            continue
        lines = (logs / span.log).read_text(encoding="utf-8", errors="replace").split("\n")
        parts.append("\n".join(lines[span.first - 1:span.last]))
    return "\n".join(parts) if parts else "(no line of this match was kept)"


# --- entrants ----------------------------------------------------------------------

_REGISTER_FIELDS = [("invite", "invite code", "text", "off"), ("name", "name (3-24 letters, digits, - and _)",
                                                                  "text", "username"),
                    ("password", "password (at least 10 characters)", "password", "new-password"),
                    ("team", "team (optional; an invite for a team names it)", "text", "off")]


def _fields(spec: list[tuple[str, str, str, str]], values: dict[str, str] | None = None) -> list[dict[str, Any]]:
    values = values or {}
    return [{"name": n, "label": label, "type": t, "auto": a, "required": n not in ("team",),
             "value": values.get(n, "") if t != "password" else ""} for n, label, t, a in spec]


async def register_form(site: Site, request: Request) -> Response:
    return render(site, request, "form.html", title="register", action="/register", button="register",
                  fields=_fields(_REGISTER_FIELDS))


async def register(site: Site, request: Request) -> Response:
    form = await checked_form(site, request)
    if isinstance(form, Response):
        return form
    name, password = form.get("name", "").strip(), form.get("password", "")
    invite = auth.canonical_invite(form.get("invite", "")) or form.get("invite", "").strip()[:64]
    team = form.get("team", "").strip() or None
    token = auth.new_secret()
    try:
        auth.check_name(name, "name")
        if team is not None:
            auth.check_name(team, "team name")
        similar = auth.look_alike(name, site.db.looks())
        if similar is not None:
            raise ValueError(f"the name {name!r} is too like {similar!r}, which is taken")
        auth.check_password(password)
        async with site.hashing:
            stored = await asyncio.to_thread(auth.hash_password, password)
        site.db.register(name, auth.skeleton(name), team, stored, auth.token_hash(token), invite)
    except ValueError as err:
        return render(site, request, "form.html", 400, title="register", action="/register", button="register",
                      fields=_fields(_REGISTER_FIELDS, form), flash=str(err), flash_error=True)
    response = await _logged_in(site, request, name, token)
    return response


async def _logged_in(site: Site, request: Request, name: str, token: str | None) -> Response:
    sid = auth.new_secret()
    site.db.add_session(auth.token_hash(sid), name, SESSION_S)
    if token is not None:  # shown once, on the next page
        response = render(site, request, "form.html", title="registered", action="/me", fields=[], button="continue",
                          method="get", user=site.db.user(name),
                          flash=f"Welcome, {name}. Your API token (shown once, keep it secret): {token}")
        response.status_code = 200
    else:
        response = RedirectResponse("/me", 303)
    response.set_cookie(SESSION_COOKIE, sid, max_age=SESSION_S, httponly=True, samesite="lax", secure=site.secure)
    return response


_LOGIN_FIELDS = [("name", "name", "text", "username"), ("password", "password", "password", "current-password")]


async def login_form(site: Site, request: Request) -> Response:
    return render(site, request, "form.html", title="log in", action="/login", button="log in",
                  fields=_fields(_LOGIN_FIELDS))


async def login(site: Site, request: Request) -> Response:
    form = await checked_form(site, request)
    if isinstance(form, Response):
        return form
    name, password = form.get("name", "").strip()[:64], form.get("password", "")[:300]
    address = auth.address_key(request.client.host if request.client else None)
    named = f"name:{auth.skeleton(name)}"
    wait = max(site.by_address.retry_after(address), site.by_name.retry_after(named))
    if wait > 0:  # before the password is looked at: the guesser learns nothing from a right one now
        response = render(site, request, "form.html", 429, title="log in", action="/login", button="log in",
                          fields=_fields(_LOGIN_FIELDS, form), flash_error=True,
                          flash=f"too many failed logins: try again in {int(wait) + 1} s")
        response.headers["Retry-After"] = str(int(wait) + 1)
        return response
    stored = site.db.password_of(name)
    async with site.hashing:  # a name with no account costs the same check as a wrong password
        ok = await asyncio.to_thread(auth.password_ok, stored, password)
    user = site.db.user(name) if ok else None
    if user is None or user.disabled:
        site.by_address.failed(address)
        site.by_name.failed(named)
        return render(site, request, "form.html", 401, title="log in", action="/login", button="log in",
                      fields=_fields(_LOGIN_FIELDS, form), flash="wrong name or password", flash_error=True)
    site.by_address.succeeded(address)
    site.by_name.succeeded(named)
    if stored is not None and auth.needs_rehash(stored):
        async with site.hashing:
            site.db.set_password(name, await asyncio.to_thread(auth.hash_password, password))
    return await _logged_in(site, request, name, None)


async def logout(site: Site, request: Request) -> Response:
    form = await checked_form(site, request)
    if isinstance(form, Response):
        return form
    sid = request.cookies.get(SESSION_COOKIE)
    if sid:
        site.db.end_session(auth.token_hash(sid))
    response = RedirectResponse("/", 303)
    response.delete_cookie(SESSION_COOKIE)
    return response


async def new_token(site: Site, request: Request) -> Response:
    posted = await entrants_form(site, request)
    if isinstance(posted, Response):
        return posted
    user, _ = posted
    token = auth.new_secret()
    site.db.set_token(user.name, auth.token_hash(token))
    return await _me(site, request, user, token=token)


async def new_password(site: Site, request: Request) -> Response:
    """A new password, given the current one (a session left open on another machine cannot change it): its
    failures count as failed logins of the name (the same limit), and every other session of the account
    ends (the new password is what logs in from now on)."""
    posted = await entrants_form(site, request)
    if isinstance(posted, Response):
        return posted
    user, form = posted
    named = f"name:{auth.skeleton(user.name)}"
    wait = site.by_name.retry_after(named)
    if wait > 0:
        response = await _me(site, request, user, flash=f"too many wrong passwords: try again in {int(wait) + 1} s",
                             error=True, status=429)
        response.headers["Retry-After"] = str(int(wait) + 1)
        return response
    async with site.hashing:
        ok = await asyncio.to_thread(auth.password_ok, site.db.password_of(user.name), form.get("current", "")[:300])
    if not ok:
        site.by_name.failed(named)
        return await _me(site, request, user, flash="the current password is wrong: the password is unchanged",
                         error=True, status=401)
    site.by_name.succeeded(named)
    new = form.get("new", "")
    try:
        auth.check_password(new)
    except auth.PasswordRefused as err:
        return await _me(site, request, user, flash=f"{err}: the password is unchanged", error=True, status=400)
    async with site.hashing:
        site.db.set_password(user.name, await asyncio.to_thread(auth.hash_password, new))
    ended = site.db.end_other_sessions(user.name, auth.token_hash(request.cookies.get(SESSION_COOKIE, "")))
    return await _me(site, request, user, flash=f"password changed; {ended} other session(s) logged out")


async def me_page(site: Site, request: Request) -> Response:
    user = current_user(site, request)
    if user is None:
        return RedirectResponse("/login", 303)
    return await _me(site, request, user)


async def _me(site: Site, request: Request, user: User, token: str | None = None, flash: str | None = None,
              error: bool = False, status: int = 200) -> Response:
    rules = site.coordinator.spec.uploads
    matches = await asyncio.to_thread(_my_matches, site, user)
    return render(site, request, "me.html", status, title="my submissions", token=token, poll=True,
                  base=str(request.base_url).rstrip("/"), uploads_open=site.db.phase() == Phase.OPEN,
                  limits=f"{rules.upload_bytes >> 20} MB, {rules.per_hour} uploads an hour",
                  submissions=_submissions_html(site, user), matches=matches, flash=flash, flash_error=error,
                  user=user)


def _my_matches(site: Site, user: User) -> list[dict[str, Any]]:
    found: list[tuple[int, dict[str, Any]]] = []
    for scope in ("finals", "ladder"):
        store = _open(site, scope)
        if store is None:
            continue
        try:
            numbers = store.numbers()
            for row in store.matches(every=True):
                if user.name in row.lineup:
                    n = numbers.get(row.key, 0)
                    found.append((n, {"number": f"{scope} {n}", "deal_set": row.deal_set,
                                      "lineup": " v ".join(row.lineup), "view": f"/match/{scope}/{n}",
                                      "log": f"/log/{scope}/{n}"}))
        finally:
            store.close()
    return [m for _, m in sorted(found, key=lambda x: -x[0])][:300]


async def me_fragment(site: Site, request: Request) -> Response:
    user = current_user(site, request)
    if user is None:
        return PlainTextResponse("not logged in", 401)
    return page_of(_submissions_html(site, user))


def _submissions_html(site: Site, user: User) -> str:
    subs = site.db.submissions(user.name)
    return site.env.get_template("submissions.html").render(subs=[_submission_view(s, i == 0)
                                                                  for i, s in enumerate(subs)])


def _submission_view(s: Submission, newest: bool) -> dict[str, Any]:
    m = s.manifest
    return {"id": s.id, "short": s.short, "status": s.status, "reason": s.reason, "when": _when(s.uploaded),
            "command": " ".join(m.get("command", [])), "protocol": m.get("protocol", "grpc"),
            "build": " ".join(m["build"]) if m.get("build") else None, "build_log": s.build_log or "(not yet)",
            "validation_log": s.validation_log or "(not yet)", "open": newest}


# --- uploads -------------------------------------------------------------------------


async def _receive_upload(site: Site, request: Request) -> tuple[Path, str, dict[str, str]] | str:
    """The upload's file saved to a temporary file, its name and the other fields; or why it is refused."""
    cap = site.coordinator.spec.uploads.upload_bytes
    length = request.headers.get("content-length")
    if length is None or not length.isdigit():
        return "an upload must say its length (Content-Length)"
    if int(length) > cap + FORM_SLACK:
        return f"the upload is {int(length) >> 10} KB, over the cap of {cap >> 20} MB"
    form = await request.form(max_files=1, max_fields=10, max_part_size=64 << 10)
    file = form.get("file")
    if not isinstance(file, UploadFile) or not file.filename:
        return "no file in the upload (the field 'file')"
    fd, name = tempfile.mkstemp(prefix="upload-", dir=_incoming(site))
    size = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := await file.read(1 << 20):
            size += len(chunk)
            if size > cap:
                out.close()
                os.unlink(name)
                return f"the upload is over the cap of {cap >> 20} MB"
            out.write(chunk)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    return Path(name), file.filename, fields


def _incoming(site: Site) -> Path:
    folder = site.coordinator.spec.state / PRIVATE / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _manifest(fields: dict[str, str]) -> uploads.Manifest | None:
    command = fields.get("command", "").strip()
    if not command:
        return None
    protocol = fields.get("protocol") or "grpc"
    text = f"command = {_toml_string(command)}\nprotocol = {_toml_string(protocol)}\n"
    if fields.get("build", "").strip():
        text += f"build = {_toml_string(fields['build'].strip())}\n"
    return uploads.read_manifest(text, "the form")


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


async def _submit(site: Site, user: User, request: Request) -> Submission | str:
    received = await _receive_upload(site, request)
    if isinstance(received, str):
        return received
    path, filename, fields = received
    try:
        manifest = _manifest(fields)
        return await asyncio.to_thread(site.coordinator.submit, user.name, path, filename, manifest)
    except (Refused, uploads.UploadRefused) as err:
        return str(err)
    finally:
        path.unlink(missing_ok=True)


async def upload_form(site: Site, request: Request) -> Response:
    user = current_user(site, request)
    if user is None:
        return RedirectResponse("/login", 303)
    seed = request.cookies.get(CSRF_COOKIE)
    # the CSRF token comes in the form's address: the body is read once, by the upload, after its size is checked
    given = request.query_params.get("csrf")
    if not seed or not given or not auth.csrf_ok(site.secret, seed, given):
        return await _me(site, request, user, flash="refused: the form's CSRF token is missing or wrong (reload "
                         "the page and try again)", error=True, status=403)
    got = await _submit(site, user, request)
    if isinstance(got, str):
        return await _me(site, request, user, flash=f"upload refused: {got}", error=True, status=400)
    return await _me(site, request, user, flash=f"uploaded: submission {got.id}, version {got.short}; it is checked "
                     f"now (build, then a validation match): this page shows how it goes")


# --- the organiser -----------------------------------------------------------------


def _organiser(site: Site, request: Request) -> User | None:
    user = current_user(site, request)
    return user if user is not None and user.organiser else None


async def organiser_page(site: Site, request: Request, flash: str | None = None, error: bool = False,
                         status: int = 200) -> Response:
    user = _organiser(site, request)
    if user is None:
        return not_found(site, request)
    c = site.coordinator
    phase = site.db.phase()
    latest: dict[str, str] = {}
    for s in site.db.submissions():
        latest.setdefault(s.name, f"{s.short} {s.status}")
    users = [{"name": u.name, "team": u.team, "disabled": u.disabled, "latest": latest.get(u.name, "")}
             for u in site.db.users() if not u.organiser]
    load = cpu_pressure()
    return render(site, request, "organiser.html", status, title="organiser", state=c.board.ladder,
                  finals=c.board.finals, next_phase=NEXT[phase],
                  executor=str(c.executor.kind) if c.executor else "local",
                  load=(f"CPU pressure {load:.0f}% (scheduling pauses above 60%)" if load is not None else
                        "CPU pressure not reported by this kernel") + (f"; paused: {c.board.paused}"
                                                                        if c.board.paused else ""),
                  waiting=site.db.waiting(), errors=c.board.errors, invites=site.db.invites(), users=users,
                  flash=flash, flash_error=error)


async def organiser_phase(site: Site, request: Request) -> Response:
    if _organiser(site, request) is None:
        return not_found(site, request)
    form = await checked_form(site, request)
    if isinstance(form, Response):
        return form
    try:
        await asyncio.to_thread(site.coordinator.move, Phase(form.get("to", "")))
    except (PhaseError, ValueError) as err:
        return await organiser_page(site, request, str(err), True, 400)
    return await organiser_page(site, request, f"the competition is {site.db.phase()} now")


async def organiser_invite(site: Site, request: Request) -> Response:
    if _organiser(site, request) is None:
        return not_found(site, request)
    form = await checked_form(site, request)
    if isinstance(form, Response):
        return form
    team = form.get("team", "").strip() or None
    try:
        if team is not None:
            auth.check_name(team, "team name")
    except ValueError as err:
        return await organiser_page(site, request, str(err), True, 400)
    code = auth.new_invite()
    site.db.add_invite(code, team)
    return await organiser_page(site, request, f"new invite code: {code}")


async def organiser_disable(site: Site, request: Request) -> Response:
    if _organiser(site, request) is None:
        return not_found(site, request)
    form = await checked_form(site, request)
    if isinstance(form, Response):
        return form
    name = form.get("name", "")
    if site.db.user(name) is None:
        return await organiser_page(site, request, "no such entrant", True, 400)
    why = None if form.get("enable") else (form.get("why", "").strip()[:200] or "disabled by the organiser")
    site.db.disable(name, why)
    return await organiser_page(site, request, f"{name} {'enabled' if why is None else 'disabled'}")


# --- the API (referee submit, scripts) ------------------------------------------------


async def api_leaderboard(site: Site, request: Request) -> Response:
    st = site.coordinator.board.standings
    return JSONResponse({"competition": site.coordinator.spec.title, "phase": site.db.phase(),
                         "ladder": site.coordinator.board.ladder, "standings": to_json(st) if st else None,
                         "entries": [e.__dict__ for e in _entries(site)]})


async def api_submit(site: Site, request: Request) -> Response:
    user = api_user(site, request)
    if user is None:
        return JSONResponse({"error": "no valid API token (Authorization: Bearer TOKEN)"}, 401)
    got = await _submit(site, user, request)
    if isinstance(got, str):
        return JSONResponse({"error": got}, 400)
    return JSONResponse(_submission_json(got), 201)


async def api_submission(site: Site, request: Request) -> Response:
    user = api_user(site, request)
    if user is None:
        return JSONResponse({"error": "no valid API token (Authorization: Bearer TOKEN)"}, 401)
    sub = site.db.submission(request.path_params["sid"])
    if sub is None or (sub.name != user.name and not user.organiser):
        return JSONResponse({"error": "no such submission of yours"}, 404)
    return JSONResponse(_submission_json(sub))


async def _api_organiser(site: Site, request: Request) -> tuple[dict[str, Any], None] | tuple[None, Response]:
    """The JSON body of an organiser's API call, or the response refusing it."""
    user = api_user(site, request)
    if user is None or not user.organiser:
        return None, JSONResponse({"error": "the organiser's API token is needed (Authorization: Bearer TOKEN)"}, 401)
    try:
        body = await request.json()
    except ValueError:
        return None, JSONResponse({"error": "the body must be a JSON object"}, 400)
    if not isinstance(body, dict):
        return None, JSONResponse({"error": "the body must be a JSON object"}, 400)
    return body, None


async def api_phase(site: Site, request: Request) -> Response:
    """The organiser moves the competition on: ``{"to": "frozen"}`` (``referee organise move``)."""
    body, refused = await _api_organiser(site, request)
    if body is None:
        assert refused is not None
        return refused
    try:
        await asyncio.to_thread(site.coordinator.move, Phase(str(body.get("to", ""))))
    except ValueError as err:  # PhaseError, or no such phase
        said = str(err) if isinstance(err, PhaseError) else f"no phase {body.get('to')!r} (one of: " \
            f"{', '.join(Phase)})"
        return JSONResponse({"error": said}, 400)
    return JSONResponse({"phase": site.db.phase()})


async def api_invite(site: Site, request: Request) -> Response:
    """A new invite code (``{"team": "acme"}`` or ``{}``; ``referee organise invite``)."""
    body, refused = await _api_organiser(site, request)
    if body is None:
        assert refused is not None
        return refused
    team = body.get("team")
    try:
        if team is not None:
            auth.check_name(str(team), "team name")
    except ValueError as err:
        return JSONResponse({"error": str(err)}, 400)
    code = auth.new_invite()
    site.db.add_invite(code, None if team is None else str(team))
    return JSONResponse({"invite": code, "team": team}, 201)


def _submission_json(s: Submission) -> dict[str, Any]:
    return {"id": s.id, "entrant": s.name, "version": s.version, "status": s.status, "reason": s.reason,
            "done": s.status not in (Status.QUEUED, *RUNNING), "build_log": s.build_log,
            "validation_log": s.validation_log}

