"""Remote seats: engines that stay on their authors' machines and connect to the referee.

An engine written ``remote:NAME`` is played by whichever client (``gin-connect``,
``ginproto.connect``) connects with NAME's token. The `Listener` is an aiohttp server on an
event loop of its own, in one thread, since the games are synchronous and threaded: it checks
each client's token (``hmac.compare_digest``, against every name, so the time taken says
nothing of which one is closest; a token is never logged), keeps at most one connection per
name (a second is refused with 409: the first one plays until it drops, which the pings find
out within ``DEAD_AFTER`` seconds), and lends a connection to one seat at a time.

A seat's `RemoteTransport` satisfies ``referee.seat.transport.Transport``: ``start N`` begins
session N on the client (a fresh engine process there), text messages carry the lines, and
``close`` sends ``quit``, waits a grace period for the client's ``exited N``, then sends
``stop N`` and lends the connection back. Lines of a session that was stopped are dropped
until its ``exited`` arrives; a line outside any session, an unknown or malformed control
message, or a message longer than the line limit allows ends the connection (the seat's game,
if any, is then a crash ruling, as for an engine whose process died).

Bounds: a message is at most ``line_limit`` + ``_SLACK`` bytes (aiohttp closes the connection
on a longer one, before reading it whole); a connection holds at most ``_PENDING`` bytes of
lines not yet read by its seat, beyond which it stops reading the socket (TCP then slows the
client down, as a full pipe slows a local engine); ``OPEN_CAP`` connections are open at once
(one more is closed at once), each with ``HEADER_TIMEOUT`` seconds to complete its opening
request, and ``MAX_CLIENTS`` of them authenticated (past it, only an engine that a seat has
waited for gets in: a crowd of idle clients with valid tokens keeps no seat's engine out). A
connection gives the loop up after each message, so that a flood of messages the referee
accepts cannot hold the other connections back.

Clocks stay the referee's: a move's time runs from the moment its ``go`` is handed to the
loop to the moment its answer is taken from the connection. Every ``PING_EVERY`` seconds the
loop sends ``ping`` and times the ``pong`` (the client answers from its own loop, not from the
engine): the round trips are kept per name (`Listener.latency`). ``EngineSpec.latency_margin``
(``--latency-margin``) adds to each remote move's margin.

The tokens file (`load_tokens`) is a TOML table of names to tokens, refused when anyone but its
owner may read it (as ssh refuses a private key).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import os
import re
import stat
import statistics
import threading
import time
import tomllib
from collections import deque
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from referee.errors import RefereeError
from referee.seat.process import (
    EngineBrokenPipe,
    EngineClosed,
    EngineExited,
    EngineLineTooLong,
    EngineStartError,
    EngineTimeout,
    LineHook,
)

if TYPE_CHECKING:
    import ssl

    from aiohttp import web

log = logging.getLogger(__name__)

__all__ = [
    "DEAD_AFTER",
    "Latency",
    "Listener",
    "RemoteMissing",
    "RemoteTransport",
    "TokensError",
    "active",
    "connect_remote",
    "load_tokens",
    "parse_listen",
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
HEADER_TIMEOUT: Final = 10.0
"""Seconds a new connection has to complete its opening request (TLS included)."""
TOKEN_MIN: Final = 16
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_SLACK: Final = 1024
_PENDING: Final = 4 << 20
_ITEM: Final = 64
"""Bytes a queued item is counted for beyond its characters (its object and its slot): a
flood of empty lines fills ``_PENDING`` too."""
_CONTROL_LIMIT: Final = 512
_SAMPLES: Final = 256
_WEB_EXTRA: Final = "remote engines need aiohttp: pip install 'ginproto[web]'"


class TokensError(RefereeError):
    """The tokens file cannot be used: unsafe permissions, not TOML, a bad name or token."""


class RemoteMissing(RefereeError):
    """Remote engines did not connect in time (the message names them)."""


def load_tokens(path: str) -> dict[str, str]:
    """NAME -> token from the TOML file ``path``, checked: a regular file that only its owner
    may read or write, every name a plain word, every token a string of at least
    ``TOKEN_MIN`` characters and no two names with the same token."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise TokensError(f"cannot read the tokens file: {exc.strerror or exc}: {path}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TokensError(f"the tokens file is not a regular file: {path}")
        if info.st_mode & 0o077:
            raise TokensError(
                f"the tokens file may be read by others than its owner (mode"
                f" {stat.S_IMODE(info.st_mode):04o}): chmod 600 {path}"
            )
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(1 << 20)
    finally:
        os.close(fd)
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TokensError(f"the tokens file is not TOML: {exc}: {path}") from None
    tokens: dict[str, str] = {}
    for name, token in table.items():
        if not NAME_PATTERN.fullmatch(name):
            raise TokensError(
                f"the tokens file names {name[:70]!r}: a name is letters, digits, '_', '.' and"
                f" '-', at most 64: {path}"
            )
        if not isinstance(token, str) or len(token) < TOKEN_MIN or not token.isprintable():
            raise TokensError(
                f"the token of {name!r} must be a string of at least {TOKEN_MIN} printable"
                " characters (make one with: python3 -c 'import secrets;"
                f" print(secrets.token_urlsafe())'): {path}"
            )
        if any(hmac.compare_digest(token, other) for other in tokens.values()):
            raise TokensError(f"two names have the same token (one is {name!r}): {path}")
        tokens[name] = token
    if not tokens:
        raise TokensError(f"the tokens file names no engine: {path}")
    return tokens


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``PORT`` (on 127.0.0.1) as (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected [HOST:]PORT, not {text!r}")
    return host, int(port)


def is_public(host: str) -> bool:
    """Whether ``host`` is reachable from other machines (not a loopback address)."""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


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


def latency_header(name: str) -> str:
    """The round trips to the remote engine ``name`` as a record keeps them, or ``""``
    (none measured, or no listener)."""
    listener = _ACTIVE
    latency = None if listener is None else listener.latency(name)
    return "" if latency is None else latency.header


class _End:
    """Queue marker: the session ended (``status`` says how; None: the connection dropped)."""

    __slots__ = ("returncode", "status")

    def __init__(self, status: str, returncode: int | None = None) -> None:
        self.status = status
        self.returncode = returncode


class _TooLong:
    __slots__ = ()


_Item = str | _End | _TooLong


class _Connection:
    """One authenticated client: its socket (driven by the loop thread), the lines of its
    current session for the seat's thread, and its round trips."""

    def __init__(
        self, name: str, ws: web.WebSocketResponse, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.name = name
        self.ws = ws
        self.loop = loop
        self.lock = asyncio.Lock()  # one message at a time on the socket
        self.cond = threading.Condition()
        self.items: deque[_Item] = deque()
        self.pending = 0  # bytes in ``items``, each counted ``_ITEM`` more
        self.room = asyncio.Event()
        self.room.set()
        self.session = 0  # the last session started
        self.live = False  # whether ``session`` runs (started, no exited, not stopped)
        self.ended: _End | None = None  # how ``session`` ended, as soon as it is known
        self.draining: dict[int, float] = {}  # stopped, their ``exited`` still to come: when
        self.open = True
        self.leased = False
        self.pings: dict[int, float] = {}
        self.next_ping = 0

    # -- the loop thread ------------------------------------------------------------------
    def push(self, item: _Item, size: int = 0) -> None:
        with self.cond:
            self.items.append(item)
            self.pending += size + _ITEM
            if self.pending > _PENDING:
                self.room.clear()
            self.cond.notify_all()

    def end_session(self, status: str, returncode: int | None = None) -> None:
        if self.live:
            self.live = False
            self.ended = _End(status, returncode)
            self.push(self.ended)

    async def send(self, *, text: Sequence[str] = (), control: str | None = None) -> None:
        async with self.lock:
            for line in text:
                await self.ws.send_str(line)
            if control is not None:
                await self.ws.send_bytes(control.encode("ascii"))

    async def cut_off(self, why: str) -> None:
        """End the connection for a breach of the wire protocol."""
        log.warning("remote engine %r: cut off: %s", self.name, why)
        self.end_session(f"was cut off: {why}")
        with contextlib.suppress(Exception):
            await self.ws.close(code=1008, message=why[:100].encode("ascii", "replace"))

    # -- the seat's thread ----------------------------------------------------------------
    def call(self, coroutine: Coroutine[Any, Any, None], timeout: float) -> None:
        """Run ``coroutine`` on the loop and wait for it (`EngineTimeout` after
        ``timeout``; `EngineBrokenPipe` when the connection is gone)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            future.result(timeout)
        except TimeoutError:
            # A message cut short would garble the stream: the connection goes with it.
            future.cancel()
            self.loop.call_soon_threadsafe(self._cut_off_soon, "it took no line in time")
            raise EngineTimeout(
                f"remote engine {self.name!r}: its connection took no line within {timeout:.3f}s",
                name=self.name,
            ) from None
        except Exception as exc:
            raise EngineBrokenPipe(
                f"remote engine {self.name!r}: its connection is closed ({type(exc).__name__})",
                name=self.name,
            ) from None

    def _cut_off_soon(self, why: str) -> None:
        self.loop.create_task(self.cut_off(why))

    def take(self, timeout: float) -> _Item | None:
        with self.cond:
            if not self.items and timeout > 0:
                self.cond.wait_for(lambda: bool(self.items), timeout)
            if not self.items:
                return None
            item = self.items.popleft()
            self.pending -= (len(item) if isinstance(item, str) else 0) + _ITEM
            if self.pending <= _PENDING and not self.room.is_set():
                self.loop.call_soon_threadsafe(self.room.set)
            return item


class RemoteTransport:
    """One session of a remote engine, as a seat sees it (``Transport``)."""

    def __init__(
        self,
        listener: Listener,
        connection: _Connection,
        session: int,
        on_line: LineHook | None,
    ) -> None:
        self.listener = listener
        self.connection = connection
        self.session = session
        self.name = connection.name
        self.on_line = on_line
        self._returncode: int | None = None
        self._ended: _End | None = None
        self._closed = False

    @property
    def alive(self) -> bool:
        return self._end() is None and not self._closed and self.connection.open

    @property
    def returncode(self) -> int | None:
        end = self._end()
        return None if end is None else end.returncode

    def _end(self) -> _End | None:
        """How this session ended, as soon as the client has said so (before its lines are
        read), or None."""
        if self._ended is None and self.connection.session == self.session:
            return self.connection.ended
        return self._ended

    @property
    def stderr_tail(self) -> str:
        return ""  # the engine's stderr stays on its author's machine

    @property
    def stderr_error(self) -> OSError | None:
        return None

    def send(self, line: str, timeout: float = 5.0) -> None:
        self.send_lines([line], timeout)

    def send_lines(self, lines: Sequence[str], timeout: float = 5.0) -> None:
        if self._closed:
            raise EngineClosed(f"{self.name}: write after close", name=self.name)
        if self._ended is not None or not self.connection.open:
            raise EngineBrokenPipe(
                f"remote engine {self.name!r} {self._status()}", name=self.name
            )
        if self.on_line is not None or log.isEnabledFor(logging.DEBUG):
            for line in lines:
                self._log("to", line)
        self.connection.call(self.connection.send(text=list(lines)), timeout)

    def read_line(self, timeout: float) -> str:
        if self._closed:
            raise EngineClosed(f"{self.name}: read after close", name=self.name)
        if self._ended is not None:
            raise self._exited()
        item = self.connection.take(max(timeout, 0.0))
        if item is None:
            raise EngineTimeout(
                f"remote engine {self.name!r}: no line within {timeout:.3f}s", name=self.name
            )
        if isinstance(item, str):
            if self.on_line is not None or log.isEnabledFor(logging.DEBUG):
                self._log("from", item)
            return item
        if isinstance(item, _TooLong):
            raise EngineLineTooLong(
                f"remote engine {self.name!r} wrote a line longer than the limit",
                name=self.name,
            )
        self._ended = item
        self._returncode = item.returncode
        raise self._exited()

    def ready(self) -> bool:
        if self._ended is not None:
            return True
        with self.connection.cond:
            return bool(self.connection.items)

    def close(self, grace: float = 1.0, quit_line: str | None = None) -> None:
        if self._closed:
            return
        try:
            if quit_line is not None and self.alive:
                with contextlib.suppress(EngineTimeout, EngineBrokenPipe, EngineClosed):
                    self.send(quit_line, timeout=min(grace, 0.5))
            deadline = time.monotonic() + grace
            while self._ended is None and self.connection.open:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                with contextlib.suppress(EngineTimeout, EngineLineTooLong, EngineExited):
                    self.read_line(left)
        finally:
            self._closed = True
            self.listener._stop(self.connection, self.session)

    def exit_error(self) -> EngineExited:
        """What a read would raise now that the session has ended."""
        return self._exited()

    def sandbox_note(self) -> str:
        return ""  # no sandbox here: the engine runs on its author's machine

    def _status(self) -> str:
        end = self._end()
        if end is not None:
            return end.status
        return "lost its connection"

    def _exited(self) -> EngineExited:
        status = self._status()
        return EngineExited(
            f"remote engine {self.name!r} {status}",
            name=self.name,
            returncode=self.returncode,
            status=status,
        )

    def _log(self, direction: str, line: str) -> None:
        log.debug("%s %s: %s", self.name, direction, line)
        if self.on_line is not None:
            self.on_line(direction, line)


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
        self._connections: dict[str, _Connection] = {}
        self._rtts: dict[str, deque[float]] = {name: deque(maxlen=_SAMPLES) for name in tokens}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self._gate: _Gate | None = None
        self._clients = 0
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
        gate = _Gate(runner.server, OPEN_CAP, HEADER_TIMEOUT)
        try:
            server = await asyncio.get_running_loop().create_server(
                gate, self.host, self.port, ssl=self.ssl_context, backlog=128
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
        """Borrow NAME's connection (waiting up to ``reconnect_wait`` seconds for it to be
        connected and free) and start a session of its engine."""
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
                if connection is not None and not connection.leased:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    busy = connection is not None
                    raise EngineStartError(
                        f"remote engine {name!r} is "
                        + ("playing another game" if busy else "not connected")
                        + f" after {wait:g}s",
                        name=name,
                    )
                self._cond.wait(left)
            connection.leased = True
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(self._start(connection), self._loop)
        try:
            session = future.result(10)
        except Exception:
            self._release(connection)
            raise EngineStartError(
                f"remote engine {name!r}: its connection dropped", name=name
            ) from None
        return RemoteTransport(self, connection, session, on_line)

    async def _start(self, connection: _Connection) -> int:
        with connection.cond:
            connection.items.clear()
            connection.pending = 0
        connection.room.set()
        connection.session += 1
        connection.ended = None
        connection.live = True
        await connection.send(control=f"start {connection.session}")
        return connection.session

    def _stop(self, connection: _Connection, session: int) -> None:
        """End ``session`` (from the seat's thread) and lend the connection back."""
        loop = self._loop
        if loop is not None and connection.open:
            future = asyncio.run_coroutine_threadsafe(self._stop_session(connection, session), loop)
            with contextlib.suppress(Exception):
                future.result(5)
        self._release(connection)

    async def _stop_session(self, connection: _Connection, session: int) -> None:
        with connection.cond:  # what its seat left unread is nobody's now
            connection.items.clear()
            connection.pending = 0
        connection.room.set()
        if connection.session == session and connection.live:
            connection.live = False
            connection.draining[session] = time.monotonic()
            await connection.send(control=f"stop {session}")

    def _release(self, connection: _Connection) -> None:
        with self._cond:
            connection.leased = False
            self._cond.notify_all()

    def latency(self, name: str) -> Latency | None:
        """The round trips measured to ``name`` over the run, or None before the first."""
        with self._cond:
            samples = list(self._rtts.get(name, ()))
        if not samples:
            return None
        return Latency(len(samples), statistics.median(samples), max(samples))

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
        with self._cond:
            if name in self._connections:
                log.info("remote engine %r: refused a second connection from %s", name, peer)
                return web.Response(status=409, text=f"{name} is connected already\n")
            if self._clients >= MAX_CLIENTS and name not in self._wanted:
                return web.Response(status=503, text="too many clients\n")
            self._clients += 1
        ws = web.WebSocketResponse(
            max_msg_size=self.line_limit + _SLACK, compress=False, autoping=True
        )
        try:
            await ws.prepare(request)
            assert self._loop is not None
            connection = _Connection(name, ws, self._loop)
            with self._cond:
                if name in self._connections:  # another came first, meanwhile
                    await ws.close(code=1008, message=b"connected already")
                    return ws
                self._connections[name] = connection
                self._seen.add(name)
                self._cond.notify_all()
            log.info("remote engine %r connected from %s", name, peer)
            pinger = asyncio.create_task(self._ping(connection))
            try:
                async for message in ws:
                    if message.type is WSMsgType.TEXT:
                        if not await self._text(connection, message.data):
                            break
                    elif message.type is WSMsgType.BINARY:
                        if not await self._control(connection, message.data):
                            break
                    else:
                        break
                    if not connection.room.is_set():
                        await connection.room.wait()
                    else:  # the others' turn: a flood waits, as every client does, for the loop
                        await asyncio.sleep(0)
            finally:
                pinger.cancel()
                connection.open = False
                connection.end_session("lost its connection")
                with self._cond:
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

    async def _text(self, connection: _Connection, data: str) -> bool:
        if connection.draining:  # a line of a session stopped, written before it heard so
            if time.monotonic() - min(connection.draining.values()) <= STOP_LIMIT:
                return True
            await connection.cut_off(f"lines of a stopped game after {STOP_LIMIT:g}s")
            return False
        if connection.live:
            if len(data.encode("utf-8", "surrogatepass")) > self.line_limit:
                connection.push(_TooLong())
            else:
                connection.push(data.removesuffix("\r"), len(data))
            return True
        await connection.cut_off("a line outside any game")
        return False

    async def _control(self, connection: _Connection, data: bytes) -> bool:
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
            if number == connection.session and connection.live:
                if word == "toolong":
                    connection.push(_TooLong())
                elif word == "exited":
                    connection.end_session(*_exit_status(words[2:]))
                else:
                    text = " ".join(words[2:])[:200] or "unknown"
                    connection.end_session(f"cannot start on its machine: {text}")
                return True
            if number in connection.draining:
                if word != "toolong":
                    del connection.draining[number]
                return True
        await connection.cut_off(f"an unexpected control message {data[:40]!r}")
        return False

    async def _ping(self, connection: _Connection) -> None:
        while connection.open:
            now = time.monotonic()
            if any(now - sent > DEAD_AFTER for sent in connection.pings.values()):
                await connection.cut_off(f"no pong for {DEAD_AFTER:g}s")
                return
            if len(connection.pings) < 16:
                connection.next_ping += 1
                connection.pings[connection.next_ping] = time.monotonic()
                with contextlib.suppress(Exception):
                    await connection.send(control=f"ping {connection.next_ping}")
            await asyncio.sleep(PING_EVERY)


class _Gated(asyncio.Protocol):
    """One connection: aiohttp's protocol (``inner``), counted by the gate, and dropped when
    it has not completed its opening request in time."""

    def __init__(self, gate: _Gate, inner: asyncio.Protocol) -> None:
        self.gate = gate
        self.inner = inner
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.gate.waiting[transport] = asyncio.get_running_loop().call_later(
            self.gate.header_timeout, transport.abort  # type: ignore[attr-defined]
        )
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.gate.count -= 1
        if self.transport is not None:
            self.gate.started(self.transport)
        self.inner.connection_lost(exc)


class _Closed(asyncio.Protocol):
    """A connection over the cap: closed at once."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


class _Gate:
    """The server's protocol factory: aiohttp's, behind a cap on the connections open at
    once and a deadline for each one's opening request (``started`` lifts it)."""

    def __init__(self, server: web.Server, cap: int, header_timeout: float) -> None:
        self.server = server
        self.cap = cap
        self.header_timeout = header_timeout
        self.count = 0
        self.waiting: dict[asyncio.BaseTransport, asyncio.TimerHandle] = {}

    def __call__(self) -> asyncio.BaseProtocol:
        if self.count >= self.cap:
            return _Closed()
        self.count += 1
        return _Gated(self, self.server())

    def started(self, transport: asyncio.BaseTransport | None) -> None:
        if transport is not None:
            waiting = self.waiting.pop(transport, None)
            if waiting is not None:
                waiting.cancel()


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


def _exit_status(words: Sequence[str]) -> tuple[str, int | None]:
    """``exited N code 1`` / ``signal 9`` as (status words, returncode)."""
    if len(words) == 2 and words[1].isdigit():
        number = int(words[1])
        if words[0] == "code":
            return f"exited with code {number} on its machine", number
        if words[0] == "signal":
            return f"was killed by signal {number} on its machine", -number
    return "exited on its machine", None
