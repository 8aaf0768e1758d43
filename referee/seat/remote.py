"""Remote seats: engines that stay on their authors' machines and connect to the referee.

An engine written ``remote:NAME`` is played by whichever client (``gin-connect``,
``ginproto.connect``) connects with NAME's token. The `Listener` is an aiohttp server on an
event loop of its own, in one thread, since the games are synchronous and threaded: it checks
each client's token (``hmac.compare_digest``, against every name, so the time taken says
nothing of which one is closest; a token is never logged), keeps at most one connection per
name (a second is refused with 409: the first one plays until it drops, which the pings find
out within ``DEAD_AFTER`` seconds), and lends each of its games (its client says how many it
plays at once, ``Gin-Games``) to one seat at a time.

A seat's `RemoteTransport` (``referee.seat.remote_transport``) is one session of a
connection: ``start N`` begins session N on the client (a fresh engine process there), text
messages (``N LINE``) carry its lines, and its ``close`` sends ``quit``, waits a grace period for
the client's ``exited N``, then sends ``stop N`` and gives the game back. Lines of a session that
was stopped are dropped until its ``exited`` arrives; a line of a session that does not run, an
unknown or malformed control message, or a message longer than the line limit allows ends the
connection (the seat's game, if any, is then a crash ruling, as for an engine whose process
died).

Bounds: a message is at most ``line_limit`` + ``_SLACK`` bytes (aiohttp closes the connection
on a longer one, before reading it whole); a connection holds at most ``PENDING`` bytes of lines
not yet read by its seats (``referee.seat.remote_transport``); ``OPEN_CAP`` connections are
open at once (``referee.gate``: one more is closed at once), each with ``HEADER_TIMEOUT``
seconds to complete its opening request, TLS included, and ``MAX_CLIENTS`` of them
authenticated (past it, only an engine that a seat has waited for gets in: a crowd of idle
clients with valid tokens keeps no seat's engine out). A connection gives the loop up after
each message, so that a flood of messages the referee accepts cannot hold the other
connections back.

Clocks stay the referee's: a move's time runs from the moment its ``go`` is handed to the
loop to the moment its answer is taken from the connection. Every ``PING_EVERY`` seconds the
loop sends ``ping`` and times the ``pong`` (the client answers from its own loop, not from the
engine): the round trips are kept per name (`Listener.latency`). ``EngineSpec.latency_margin``
(``--latency-margin``) adds to each remote move's margin.

The tokens file and the address listened on are read by ``referee.seat.tokens``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import statistics
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ginproto.connect import GAMES_HEADER, MAX_GAMES
from ginproto.text import plural
from referee.errors import RefereeError
from referee.gate import Gate
from referee.seat.process import EngineStartError, LineHook
from referee.seat.remote_transport import Connection, RemoteTransport, Session, TooLong

if TYPE_CHECKING:
    import ssl

    from aiohttp import web

log = logging.getLogger(__name__)

__all__ = [
    "DEAD_AFTER",
    "Latency",
    "Listener",
    "RemoteMissing",
    "active",
    "connect_remote",
    "games_at_once",
    "latency_header",
    "latency_margin",
]

PING_EVERY: Final = 1.0
DEAD_AFTER: Final = 15.0
"""Seconds without a ``pong`` after which a connection is taken for dead and closed."""
STOP_LIMIT: Final = 10.0
"""Seconds a client has to end a stopped session's engine (``exited``) while it still sends
that engine's lines."""
RECONNECT_WAIT: Final = 10.0
"""Seconds a seat waits for its engine to connect (again) during a match."""
MAX_CLIENTS: Final = 64
"""Authenticated connections at once."""
OPEN_CAP: Final = 256
"""Connections open at once, authenticated or not: one more is closed at once, so that no
crowd of clients can take the files and pipes the games need."""
BREACH_PAUSE: Final = 5.0
"""Seconds a name cut off for a breach of the wire protocol is refused (503) before it may
connect again: well within ``RECONNECT_WAIT``, long enough that a client that breaches and
comes back at once cannot take the loop from the games."""
HEADER_TIMEOUT: Final = 10.0
"""Seconds a new connection has to complete its opening request (TLS included)."""
_SLACK: Final = 1024
_CONTROL_LIMIT: Final = 512
_SAMPLES: Final = 256
_WEB_EXTRA: Final = "remote engines need aiohttp: pip install 'ginproto[web]'"


class RemoteMissing(RefereeError):
    """Remote engines did not connect in time (the message names them)."""


@dataclass(frozen=True, slots=True)
class Latency:
    """The round trips measured to one remote engine, in seconds."""

    samples: int
    median: float
    worst: float

    def __str__(self) -> str:
        return (
            f"round trip {self.median * 1000:.1f} ms median, {self.worst * 1000:.1f} ms worst"
            f" ({self.samples} pings)"
        )

    @property
    def header(self) -> str:
        """As a record keeps it (``PlayerN.Latency``): ``MEDIAN WORST PINGS``, in ms."""
        return f"{self.median * 1000:.1f} {self.worst * 1000:.1f} {self.samples}"


def latency_margin() -> float:
    """Seconds the active listener adds to each remote move's margin (``--latency-margin``),
    or 0."""
    listener = _ACTIVE
    return 0.0 if listener is None else listener.latency_margin


def games_at_once(names: Sequence[str], concurrency: int) -> int:
    """How many of ``concurrency`` games a run of the remote engines ``names`` plays at once:
    no more than each of their clients plays (`Listener.games_at_once`)."""
    listener = _ACTIVE
    if listener is None or not names:
        return concurrency
    return listener.games_at_once(names, concurrency)


def latency_header(name: str) -> str:
    """The round trips to the remote engine ``name`` as a record keeps them, or ``""``
    (none measured, or no listener)."""
    listener = _ACTIVE
    latency = None if listener is None else listener.latency(name)
    return "" if latency is None else latency.header


_ACTIVE: Listener | None = None
_ACTIVE_LOCK = threading.Lock()


def active() -> Listener | None:
    """The listener remote seats connect through (the one entered last), if any."""
    return _ACTIVE


def connect_remote(
    name: str, *, line_limit: int = 1 << 20, on_line: LineHook | None = None
) -> RemoteTransport:
    """A session of the remote engine ``name`` (``remote:NAME``), through the active
    listener: `EngineStartError` when none listens or the engine is not connected."""
    listener = _ACTIVE
    if listener is None:
        raise EngineStartError(
            f"remote engine {name!r}: the referee is not listening for remote engines"
            " (--tokens FILE, --listen [HOST:]PORT)",
            name=name,
        )
    return listener.open_session(name, on_line)


class Listener:
    """The referee's end of remote seats: an aiohttp server on ``host``:``port`` (0: any free
    port, `port` says which), in a thread of its own, for the engines named in ``tokens``.
    Use it as a context manager: inside, it is `active` and ``remote:NAME`` seats connect
    through it; on leaving, every client is told ``bye`` and the server stops."""

    def __init__(
        self,
        tokens: Mapping[str, str],
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        line_limit: int = 1 << 20,
        reconnect_wait: float = RECONNECT_WAIT,
        first_wait: float | None = None,
        latency_margin: float = 0.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.tokens = dict(tokens)
        self.first_wait = reconnect_wait if first_wait is None else first_wait
        """Seconds a seat waits for an engine that has not connected yet in this run."""
        self.latency_margin = latency_margin
        """Seconds added to each remote engine's move margin, for the network."""
        self._seen: set[str] = set()
        self.host = host
        self.port = port
        self.line_limit = line_limit
        self.reconnect_wait = reconnect_wait
        self.ssl_context = ssl_context
        self._cond = threading.Condition()
        self._connections: dict[str, Connection] = {}
        self._rtts: dict[str, deque[float]] = {name: deque(maxlen=_SAMPLES) for name in tokens}
        self._drops: dict[str, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self._gate: Gate | None = None
        self._clients = 0
        self._paused: dict[str, float] = {}  # name -> when it may connect again
        self._wanted: set[str] = set()  # names a seat has waited for: in over MAX_CLIENTS
        self._previous: Listener | None = None

    # -- lifetime -------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and serve (`RefereeError` when the address cannot be used)."""
        try:
            from aiohttp import web  # noqa: F401
        except ImportError:
            raise RefereeError(_WEB_EXTRA) from None
        loop = asyncio.new_event_loop()
        self._loop = loop
        started: list[BaseException | None] = []
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve())
                started.append(None)
            except BaseException as exc:  # the caller raises it
                started.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                _close_loop(loop)

        self._thread = threading.Thread(target=serve, name="remote-listener", daemon=True)
        self._thread.start()
        ready.wait()
        error = started[0]
        if error is not None:
            self._thread.join()
            if isinstance(error, OSError):
                raise RefereeError(
                    f"cannot listen on {self.host}:{self.port}: {error.strerror or error}"
                ) from None
            raise error

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=4096)
        app.router.add_get("/", self._handle)
        app.router.add_get("/{path:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        assert runner.server is not None
        gate = Gate(runner.server, OPEN_CAP, HEADER_TIMEOUT)
        try:
            server = await asyncio.get_running_loop().create_server(
                gate, self.host, self.port, ssl=self.ssl_context, backlog=128,
                ssl_handshake_timeout=HEADER_TIMEOUT if self.ssl_context else None,
            )
        except BaseException:
            await runner.cleanup()
            raise
        self._runner, self._server, self._gate = runner, server, gate
        self.port = int(server.sockets[0].getsockname()[1])

    def close(self) -> None:
        """Say ``bye`` to every client, close their connections and stop the server."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        with contextlib.suppress(Exception):
            future.result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    async def _shutdown(self) -> None:
        for connection in list(self._connections.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.send(control="bye"), 2)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    connection.ws.close(code=1001, message=b"the run is over"), 2
                )
        if self._server is not None:
            self._server.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> Listener:
        global _ACTIVE
        if self._loop is None:
            self.start()
        with _ACTIVE_LOCK:
            self._previous, _ACTIVE = _ACTIVE, self
        return self

    def __exit__(self, *exc: object) -> None:
        global _ACTIVE
        with _ACTIVE_LOCK:
            if _ACTIVE is self:
                _ACTIVE = self._previous
        self.close()

    @property
    def url(self) -> str:
        scheme = "ws" if self.ssl_context is None else "wss"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}/"

    # -- the seats' side ------------------------------------------------------------------
    def connected(self) -> list[str]:
        with self._cond:
            return sorted(self._connections)

    def wait_for(self, names: Iterable[str], timeout: float) -> None:
        """Wait until every one of ``names`` is connected; `RemoteMissing` naming those that
        are not, after ``timeout`` seconds."""
        wanted = sorted(set(names))
        unknown = [n for n in wanted if n not in self.tokens]
        if unknown:
            raise RemoteMissing(
                f"no token for {', '.join('remote:' + n for n in unknown)} in the tokens file"
            )
        deadline = time.monotonic() + timeout
        with self._cond:
            self._wanted.update(wanted)
            while True:
                missing = [n for n in wanted if n not in self._connections]
                left = deadline - time.monotonic()
                if not missing or left <= 0:
                    break
                self._cond.wait(left)
        if missing:
            raise RemoteMissing(
                f"not connected after {timeout:g}s: {', '.join('remote:' + n for n in missing)}"
                f" (the referee listens on {self.url})"
            )

    def open_session(self, name: str, on_line: LineHook | None) -> RemoteTransport:
        """Borrow one of NAME's games (waiting up to ``reconnect_wait`` seconds for NAME to be
        connected with a game free) and start a session of its engine."""
        if name not in self.tokens:
            raise EngineStartError(
                f"remote engine {name!r} has no token in the tokens file", name=name
            )
        with self._cond:
            wait = self.reconnect_wait if name in self._seen else self.first_wait
            deadline = time.monotonic() + wait
            self._wanted.add(name)
            while True:
                connection = self._connections.get(name)
                if connection is not None and len(connection.sessions) < connection.games:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise EngineStartError(
                        f"remote engine {name!r} is "
                        + (
                            f"playing {plural(connection.games, 'game')} already"
                            if connection is not None
                            else "not connected"
                        )
                        + f" after {wait:g}s",
                        name=name,
                    )
                self._cond.wait(left)
            connection.last += 1
            session = Session(connection.last)
            connection.sessions[session.number] = session
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(
            connection.send(control=f"start {session.number}"), self._loop
        )
        try:
            future.result(10)
        except Exception:
            self._release(connection, session)
            raise EngineStartError(
                f"remote engine {name!r}: its connection dropped", name=name
            ) from None
        return RemoteTransport(self._stop, connection, session, on_line)

    def _stop(self, connection: Connection, session: Session) -> None:
        """End ``session`` (from its seat's thread) and give its game back."""
        loop = self._loop
        if loop is not None and connection.open:
            future = asyncio.run_coroutine_threadsafe(self._stop_session(connection, session), loop)
            with contextlib.suppress(Exception):
                future.result(5)
        self._release(connection, session)

    async def _stop_session(self, connection: Connection, session: Session) -> None:
        if session.live:
            session.live = False
            connection.draining[session.number] = time.monotonic()
            await connection.send(control=f"stop {session.number}")

    def _release(self, connection: Connection, session: Session) -> None:
        with self._cond:
            connection.sessions.pop(session.number, None)
            self._cond.notify_all()
        connection.forget(session)

    def games(self, name: str) -> int | None:
        """How many games at once NAME's client plays (it says so when it connects), or None
        while it is not connected."""
        with self._cond:
            connection = self._connections.get(name)
            return None if connection is None else connection.games

    def games_at_once(self, names: Iterable[str], concurrency: int) -> int:
        """How many games a run of the remote engines ``names`` can play at once, at most
        ``concurrency``: each of them must be able to play that many. Above one game, they are
        waited for (``first_wait`` seconds, then `RemoteMissing`), since their clients say
        how many they play."""
        wanted = sorted(set(names))
        if concurrency <= 1 or not wanted:
            return concurrency
        self.wait_for(wanted, self.first_wait)
        with self._cond:
            return min(
                [concurrency]
                + [c.games for n in wanted if (c := self._connections.get(n)) is not None]
            )

    def latency(self, name: str) -> Latency | None:
        """The round trips measured to ``name`` over the run, or None before the first."""
        with self._cond:
            samples = list(self._rtts.get(name, ()))
        if not samples:
            return None
        return Latency(len(samples), statistics.median(samples), max(samples))

    def drops(self, name: str) -> int:
        """How many times ``name``'s connection was lost while one of its games was in
        progress (its engine's session running) over the run."""
        with self._cond:
            return self._drops.get(name, 0)

    # -- the loop thread ------------------------------------------------------------------
    def _who(self, header: str) -> str | None:
        """The name whose token ``header`` (``Bearer TOKEN``) carries, or None. Every name's
        token is compared, in constant time."""
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer":
            given = ""
        data = given.strip().encode("utf-8", "replace")
        found = None
        for name, token in self.tokens.items():
            if hmac.compare_digest(token.encode("utf-8"), data):
                found = name
        return found

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import WSMsgType, web

        if self._gate is not None:
            self._gate.started(request.transport)
        name = self._who(request.headers.get("Authorization", ""))
        peer = request.remote or "?"
        if name is None:
            log.info("remote: refused a client from %s (no known token)", peer)
            return web.Response(status=401, text="refused\n")
        games = _games(request.headers.get(GAMES_HEADER, "1"))
        if games is None:
            return web.Response(
                status=400, text=f"{GAMES_HEADER} must be a number from 1 to {MAX_GAMES}\n"
            )
        with self._cond:
            if name in self._connections:
                log.info("remote engine %r: refused a second connection from %s", name, peer)
                return web.Response(status=409, text=f"{name} is connected already\n")
            if time.monotonic() < self._paused.get(name, 0.0):
                return web.Response(status=503, text="cut off: try again later\n")
            if self._clients >= MAX_CLIENTS and name not in self._wanted:
                return web.Response(status=503, text="too many clients\n")
            self._clients += 1
        ws = web.WebSocketResponse(
            max_msg_size=self.line_limit + _SLACK, compress=False, autoping=True
        )
        try:
            await ws.prepare(request)
            assert self._loop is not None
            connection = Connection(name, ws, self._loop, games)
            with self._cond:
                if name in self._connections:  # another came first, meanwhile
                    await ws.close(code=1008, message=b"connected already")
                    return ws
                self._connections[name] = connection
                self._seen.add(name)
                self._cond.notify_all()
            log.info("remote engine %r connected from %s (%s)", name, peer, plural(games, "game"))
            pinger = asyncio.create_task(self._ping(connection))
            try:
                async for message in ws:
                    if message.type is WSMsgType.TEXT:
                        if not await self._text(connection, message.data):
                            break
                    elif message.type is WSMsgType.BINARY:
                        if not await self._control(connection, message.data):
                            break
                    else:  # closed; an error is a message too long or a bad frame: a breach
                        connection.breached |= message.type is WSMsgType.ERROR
                        break
                    if not connection.room.is_set():
                        await connection.room.wait()
                    else:  # the others' turn: a flood waits, as every client does, for the loop
                        await asyncio.sleep(0)
            finally:
                pinger.cancel()
                connection.open = False
                if connection.live or connection.lost_in_game:  # a game in progress: a drop
                    with self._cond:
                        self._drops[name] = self._drops.get(name, 0) + 1
                connection.end_all("lost its connection")
                with self._cond:
                    if connection.breached:  # a flood of breaches costs a pause each
                        self._paused[name] = time.monotonic() + BREACH_PAUSE
                    if self._connections.get(name) is connection:
                        del self._connections[name]
                    self._cond.notify_all()
                with contextlib.suppress(Exception):
                    await ws.close()
                log.info("remote engine %r disconnected", name)
        finally:
            with self._cond:
                self._clients -= 1
        return ws

    async def _text(self, connection: Connection, data: str) -> bool:
        head, _, line = data.partition(" ")
        number = int(head) if head.isascii() and head.isdigit() and len(head) < 10 else None
        session = None if number is None else connection.sessions.get(number)
        if session is not None and session.live:
            if len(line.encode("utf-8", "surrogatepass")) > self.line_limit:
                connection.push(session, TooLong())
            else:
                connection.push(session, line.removesuffix("\r"), len(line))
            return True
        if number is not None and number in connection.draining:
            # a line of a session stopped, written before its client heard so
            if time.monotonic() - connection.draining[number] <= STOP_LIMIT:
                return True
            await connection.cut_off(f"lines of a stopped game after {STOP_LIMIT:g}s")
            return False
        await connection.cut_off(
            "a line outside any game" if number is None else "a line for a game it does not play"
        )
        return False

    async def _control(self, connection: Connection, data: bytes) -> bool:
        if len(data) > _CONTROL_LIMIT:
            await connection.cut_off("a control message too long")
            return False
        words = data.decode("ascii", "replace").split()
        word = words[0] if words else ""
        number = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        if word == "pong" and number is not None:
            sent = connection.pings.pop(number, None)
            if sent is not None:
                with self._cond:
                    self._rtts.setdefault(connection.name, deque(maxlen=_SAMPLES)).append(
                        time.monotonic() - sent
                    )
                return True
        if word in ("exited", "error", "toolong") and number is not None:
            session = connection.sessions.get(number)
            if session is not None and session.live:
                if word == "toolong":
                    connection.push(session, TooLong())
                elif word == "exited":
                    connection.end_session(session, *_exit_status(words[2:]))
                else:
                    text = " ".join(words[2:])[:200] or "unknown"
                    connection.end_session(session, f"cannot start on its machine: {text}")
                return True
            if number in connection.draining:
                if word != "toolong":
                    del connection.draining[number]
                return True
        await connection.cut_off(f"an unexpected control message {data[:40]!r}")
        return False

    async def _ping(self, connection: Connection) -> None:
        while connection.open:
            now = time.monotonic()
            if any(now - sent > DEAD_AFTER for sent in connection.pings.values()):
                connection.lost_in_game = connection.live  # the network, not a breach: a drop
                await connection.cut_off(f"no pong for {DEAD_AFTER:g}s", breach=False)
                return
            if len(connection.pings) < 16:
                connection.next_ping += 1
                connection.pings[connection.next_ping] = time.monotonic()
                with contextlib.suppress(Exception):
                    await connection.send(control=f"ping {connection.next_ping}")
            await asyncio.sleep(PING_EVERY)


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what still runs on ``loop`` (connections the shutdown could not end in time),
    let it unwind, and close the loop."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    with contextlib.suppress(Exception):
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def _games(text: str) -> int | None:
    """The games a client plays at once (its ``Gin-Games`` header), or None when invalid."""
    text = text.strip()
    if text.isascii() and text.isdigit() and len(text) <= 3 and 1 <= int(text) <= MAX_GAMES:
        return int(text)
    return None


def _exit_status(words: Sequence[str]) -> tuple[str, int | None]:
    """``exited N code 1`` / ``signal 9`` as (status words, returncode)."""
    if len(words) == 2 and words[1].isdigit():
        number = int(words[1])
        if words[0] == "code":
            return f"exited with code {number} on its machine", number
        if words[0] == "signal":
            return f"was killed by signal {number} on its machine", -number
    return "exited on its machine", None
