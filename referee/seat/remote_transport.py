"""A remote engine's connection as the seats see it: the sessions it plays and their lines.

A `Connection` is one authenticated client. Its socket is driven by the listener's event loop
(``referee.seat.remote``); its sessions (`Session`, one engine process on the client's machine
each, at most ``games`` at once) queue the lines the client sent for the seats' threads to
read. A seat's `RemoteTransport` is one session, behind the ``Transport`` interface of a local
engine's process: ``send_lines`` hands lines to the loop (``N LINE`` on the wire),
``read_line`` takes the next one of its session, and ``close`` sends ``quit``, waits a grace
period for the session's end, and hands the session back to whoever lent it (``release``).

Bounds: a connection holds at most ``PENDING`` bytes of lines not yet read by its seats, beyond
which the loop stops reading its socket (TCP then slows the client down, as a full pipe slows
a local engine).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Final

from referee.seat.process import (
    EngineBrokenPipe,
    EngineClosed,
    EngineExited,
    EngineLineTooLong,
    EngineTimeout,
    LineHook,
)

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("referee.seat.remote")

__all__ = ["PENDING", "Connection", "End", "RemoteTransport", "Session", "TooLong"]

PENDING: Final = 4 << 20
"""Bytes of lines a connection holds for its seats before it stops reading its socket."""
ITEM: Final = 64
"""Bytes a queued item is counted for beyond its characters (its object and its slot): a
flood of empty lines fills ``PENDING`` too."""


class End:
    """Queue marker: the session ended (``status`` says how; None: the connection dropped)."""

    __slots__ = ("returncode", "status")

    def __init__(self, status: str, returncode: int | None = None) -> None:
        self.status = status
        self.returncode = returncode


class TooLong:
    __slots__ = ()


Item = str | End | TooLong


class Session:
    """One session of a connection's engine: the lines its seat has not read yet (ending in
    an ``End`` once the session has ended) and whether it still runs."""

    __slots__ = ("ended", "items", "live", "number")

    def __init__(self, number: int) -> None:
        self.number = number
        self.items: deque[Item] = deque()
        self.live = True  # started, no exited, not stopped
        self.ended: End | None = None  # how it ended, as soon as it is known


class Connection:
    """One authenticated client: its socket (driven by the loop thread), the sessions it
    plays (at most ``games`` at once), their lines for the seats' threads, and its round
    trips."""

    def __init__(
        self, name: str, ws: web.WebSocketResponse, loop: asyncio.AbstractEventLoop, games: int
    ) -> None:
        self.name = name
        self.ws = ws
        self.loop = loop
        self.games = games
        self.lock = asyncio.Lock()  # one message at a time on the socket
        self.cond = threading.Condition()
        self.sessions: dict[int, Session] = {}  # lent to seats
        self.pending = 0  # bytes of lines not yet read, all sessions together, each item ITEM more
        self.room = asyncio.Event()
        self.room.set()
        self.last = 0  # the last session number given
        self.draining: dict[int, float] = {}  # stopped, their ``exited`` still to come: when
        self.open = True
        self.breached = False  # cut off for a breach of the wire protocol
        self.lost_in_game = False  # found dead by its pings while a game of it was played
        self.pings: dict[int, float] = {}
        self.next_ping = 0

    @property
    def live(self) -> bool:
        """Whether one of its sessions runs."""
        return any(session.live for session in self.sessions.values())

    # -- the loop thread ------------------------------------------------------------------
    def push(self, session: Session, item: Item, size: int = 0) -> None:
        with self.cond:
            session.items.append(item)
            self.pending += size + ITEM
            if self.pending > PENDING:
                self.room.clear()
            self.cond.notify_all()

    def end_session(self, session: Session, status: str, returncode: int | None = None) -> None:
        if session.live:
            session.live = False
            session.ended = End(status, returncode)
            self.push(session, session.ended)

    def end_all(self, status: str) -> None:
        for session in list(self.sessions.values()):
            self.end_session(session, status)

    async def send(
        self, session: int | None = None, *, text: Sequence[str] = (), control: str | None = None
    ) -> None:
        async with self.lock:
            for line in text:
                await self.ws.send_str(f"{session} {line}")
            if control is not None:
                await self.ws.send_bytes(control.encode("ascii"))

    async def cut_off(self, why: str, breach: bool = True) -> None:
        """End the connection: for a breach of the wire protocol (``breach``), or for a link
        that no longer carries its messages."""
        log.warning("remote engine %r: cut off: %s", self.name, why)
        self.breached = self.breached or breach
        self.end_all(f"was cut off: {why}")
        with contextlib.suppress(Exception):
            await self.ws.close(code=1008, message=why[:100].encode("ascii", "replace"))

    # -- the seats' threads ---------------------------------------------------------------
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
        self.loop.create_task(self.cut_off(why, breach=False))

    def take(self, session: Session, timeout: float) -> Item | None:
        with self.cond:
            if not session.items and timeout > 0:
                self.cond.wait_for(lambda: bool(session.items), timeout)
            if not session.items:
                return None
            item = session.items.popleft()
            self.pending -= (len(item) if isinstance(item, str) else 0) + ITEM
            if self.pending <= PENDING and not self.room.is_set():
                self.loop.call_soon_threadsafe(self.room.set)
            return item

    def forget(self, session: Session) -> None:
        """Drop what ``session``'s seat left unread: it is nobody's now."""
        with self.cond:
            while session.items:
                item = session.items.popleft()
                self.pending -= (len(item) if isinstance(item, str) else 0) + ITEM
            if self.pending <= PENDING:
                self.loop.call_soon_threadsafe(self.room.set)


class RemoteTransport:
    """One session of a remote engine, as a seat sees it (``Transport``)."""

    def __init__(
        self,
        release: Callable[[Connection, Session], None],
        connection: Connection,
        session: Session,
        on_line: LineHook | None,
    ) -> None:
        self.release = release  # ends the session on the client, and gives it back
        self.connection = connection
        self.session = session
        self.name = connection.name
        self.on_line = on_line
        self._ended: End | None = None  # read by its seat
        self._closed = False

    @property
    def alive(self) -> bool:
        return self.session.ended is None and not self._closed and self.connection.open

    @property
    def returncode(self) -> int | None:
        """How the session ended, as soon as the client has said so (before its last lines
        are read), or None."""
        end = self.session.ended
        return None if end is None else end.returncode

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
        connection = self.connection
        connection.call(connection.send(self.session.number, text=list(lines)), timeout)

    def read_line(self, timeout: float) -> str:
        if self._closed:
            raise EngineClosed(f"{self.name}: read after close", name=self.name)
        if self._ended is not None:
            raise self._exited()
        item = self.connection.take(self.session, max(timeout, 0.0))
        if item is None:
            raise EngineTimeout(
                f"remote engine {self.name!r}: no line within {timeout:.3f}s", name=self.name
            )
        if isinstance(item, str):
            if self.on_line is not None or log.isEnabledFor(logging.DEBUG):
                self._log("from", item)
            return item
        if isinstance(item, TooLong):
            raise EngineLineTooLong(
                f"remote engine {self.name!r} wrote a line longer than the limit",
                name=self.name,
            )
        self._ended = item
        raise self._exited()

    def ready(self) -> bool:
        if self._ended is not None:
            return True
        with self.connection.cond:
            return bool(self.session.items)

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
            self.release(self.connection, self.session)

    def exit_error(self) -> EngineExited:
        """What a read would raise now that the session has ended."""
        return self._exited()

    def sandbox_note(self) -> str:
        return ""  # no sandbox here: the engine runs on its author's machine

    def _status(self) -> str:
        end = self.session.ended
        return "lost its connection" if end is None else end.status

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
