"""A relay to a remote referee: a local Unix socket whose connections are forwarded to HOST:PORT.

A sandboxed bot has no network, only the Unix socket bound into its sandbox. When the
matches are played by a ``referee serve`` elsewhere, the runner opens a :class:`Relay`
to that server and hands the bots ``relay.address`` (``unix:PATH``)::

    async with Relay("referee.example.org:50051") as relay:
        ...                                   # bots connect to relay.address

Each connection is forwarded byte for byte (gRPC's HTTP/2 passes through untouched)
to a new TCP connection to the target and back; when either side closes, both are closed.
Leaving the ``async with`` closes every connection and removes the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger("referee.relay")


class Relay:
    """Listens on the Unix socket ``path`` (default: ``relay.sock`` in a fresh temporary
    directory) and forwards each connection to ``target``, ``HOST:PORT``; at most
    ``max_connections`` at once (0: no cap), those past it closed as they come."""

    def __init__(self, target: str, path: Path | str | None = None, max_connections: int = 0):
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"a relay's target is HOST:PORT, not {target!r}")
        self.target, self.host, self.port = target, host.strip("[]"), int(port)
        self.path = Path(path) if path is not None else None
        self.max_connections = max_connections
        self._made_dir: Path | None = None
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        """What a bot is given as ``--address``: ``unix:PATH``."""
        return f"unix:{self.path}"

    async def __aenter__(self) -> Relay:
        if self.path is None:
            self._made_dir = Path(tempfile.mkdtemp(prefix="referee-relay-"))
            self._made_dir.chmod(0o755)  # a sandboxed bot may run under another uid
            self.path = self._made_dir / "relay.sock"
        self._server = await asyncio.start_unix_server(self._forward, self.path)
        self.path.chmod(0o666)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None and self.path is not None  # set on entering
        self._server.close()
        for task in self._connections:
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()
        self.path.unlink(missing_ok=True)
        if self._made_dir is not None:
            shutil.rmtree(self._made_dir, ignore_errors=True)

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.max_connections and len(self._connections) >= self.max_connections:
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None  # the server runs each connection's handler in a task of its own
        self._connections.add(task)
        try:
            try:
                remote_reader, remote_writer = await asyncio.open_connection(self.host, self.port)
            except OSError as err:
                log.warning("relay: cannot reach %s: %s", self.target, err)
                return
            pipes = [asyncio.create_task(_pipe(reader, remote_writer)),
                     asyncio.create_task(_pipe(remote_reader, writer))]
            try:
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            finally:
                remote_writer.close()
                for pipe in pipes:
                    pipe.cancel()
                await asyncio.gather(*pipes, return_exceptions=True)
        except asyncio.CancelledError:
            pass  # closed by __aexit__: ended quietly (asyncio 3.11's server callback reports a cancelled one)
        finally:
            writer.close()
            self._connections.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until ``reader`` ends (or either side breaks)."""
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
