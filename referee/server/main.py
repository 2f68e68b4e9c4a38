"""``referee server``: the coordinator and the web site in one process, on one asyncio loop.

At first start it makes the competition's state directory, a secret for its CSRF tokens, and the
organiser's account (its password and API token written once to ``organiser.txt`` in the state
directory, readable by its owner only). Uvicorn serves the site; the coordinator runs beside it
(:meth:`referee.server.coordinator.Coordinator.run`). SIGINT or SIGTERM: the site stops, the round
in progress ends, and what was stored stays (a restart resumes); SIGKILL loses no stored result
either (every match is saved as it ends; a check in hand is taken again when its lease runs out).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

import uvicorn

from referee.competition.ladder import CompetitionSpec, Phase
from referee.model import ExecutorSpec
from referee.server import auth
from referee.server.app import create_app
from referee.server.coordinator import PRIVATE, Coordinator
from referee.server.db import ServerDB, Setting
from referee.untrusted import log_to_stderr

ORGANISER = "organiser"
#: the server's store, in the competition's state directory
DB_FILE = "server.sqlite"


def open_db(spec: CompetitionSpec) -> ServerDB:
    private = spec.state / PRIVATE
    private.mkdir(parents=True, exist_ok=True)
    private.chmod(0o700)
    return ServerDB(private / DB_FILE)


def secret_of(db: ServerDB) -> bytes:
    """The key of the CSRF tokens: made once, kept in the server's store."""
    found = db.setting(Setting.SECRET)
    if found is None:
        found = auth.new_secret(32)
        db.set_setting(Setting.SECRET, found)
    return found.encode()


def ensure_organiser(db: ServerDB, state: Path) -> Path | None:
    """The organiser's account, made at first start: its password and token in ``organiser.txt`` (0600)."""
    if db.user(ORGANISER) is not None:
        return None
    password, token = auth.new_secret(18), auth.new_secret()
    path = state / PRIVATE / "organiser.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"name = {ORGANISER}\npassword = {password}\ntoken = {token}\n")
    db.register(ORGANISER, ORGANISER, ORGANISER, auth.hash_password(password), auth.token_hash(token), None,
                organiser=True)
    return path


def serve(spec: CompetitionSpec, host: str, port: int, executor: ExecutorSpec | None, open_now: bool,
          invites: int, echo: Callable[[str], None] = print, secure_cookies: bool = False) -> None:
    log_to_stderr(logging.INFO, "%(asctime)s %(message)s")  # what the coordinator does, on standard error, escaped
    logging.getLogger("referee").setLevel(logging.WARNING)  # but not every game of every match
    logging.getLogger("referee.server").setLevel(logging.INFO)
    db = open_db(spec)
    try:
        made = ensure_organiser(db, spec.state)
        if made is not None:
            echo(f"organiser account made: its password and API token are in {made} (readable by you only)")
        coordinator = Coordinator(spec, db, executor)
        coordinator.load_board()
        if open_now and db.phase() == Phase.DRAFT:
            coordinator.move(Phase.OPEN)
        for _ in range(invites):
            code = auth.new_invite()
            db.add_invite(code, None)
            echo(f"invite code: {code}")
        app = create_app(coordinator, secret_of(db), secure_cookies)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off",
                                timeout_graceful_shutdown=5)
        web = uvicorn.Server(config)
        echo(f"{spec.title}: {db.phase()}; serving http://{host}:{port}/ (state in {spec.state})")
        asyncio.run(_run(web, coordinator))
    finally:
        db.close()


async def _run(web: uvicorn.Server, coordinator: Coordinator) -> None:
    stopping = asyncio.Event()
    work = asyncio.create_task(coordinator.run(stopping))
    try:
        await web.serve()
    finally:
        stopping.set()
        await work
