"""The gate before the referee's web servers: the live page's (``referee.views.live_server``)
and the remote engines' listener (``referee.seat.remote``).

A `Gate` is the protocol factory given to ``loop.create_server``: it makes the server's own
protocol (aiohttp's ``web.Server``) for each connection it lets through, so that no crowd of
clients can take the files and pipes the games need, nor hold a connection by saying nothing:

- at most ``cap`` connections are open at once: one more is sent the gate's ``refusal`` (the
  live page's 503; nothing for the listener) and closed at once;
- each connection has ``header_timeout`` seconds from its acceptance (a TLS handshake
  included) to send its opening request whole, which the server says by calling
  `Gate.started` as the request comes in; one that has not is dropped;
- with a ``write_timeout``, a client that takes no byte of what it is sent for that long (the
  connection's send buffer full all the while) is dropped.

It imports nothing of aiohttp: any protocol factory can stand behind it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["Gate"]


class Gate:
    """The protocol factory of a server: ``server``'s protocol for each connection, behind a
    cap on the connections open at once, a deadline for each one's opening request, and
    optionally a drop of a client that stops reading (see the module)."""

    def __init__(
        self,
        server: Callable[[], asyncio.Protocol],
        cap: int,
        header_timeout: float,
        *,
        refusal: bytes = b"",
        write_timeout: float | None = None,
    ) -> None:
        self.server = server
        """The protocol factory behind the gate (aiohttp's ``web.Server``)."""
        self.cap = cap
        """Connections open at once: one more is refused."""
        self.header_timeout = header_timeout
        """Seconds a connection has, from its acceptance, to send its opening request."""
        self.refusal = refusal
        """What a connection over the cap is sent before it is closed (nothing: closed)."""
        self.write_timeout = write_timeout
        """Seconds a client may take no byte of what it is sent; None: no limit."""
        self.count = 0
        """Connections let through and not yet lost."""
        self.awaited: dict[asyncio.BaseTransport, _Admitted] = {}
        """The connections whose opening request has not come in yet, by transport."""

    def __call__(self) -> asyncio.Protocol:
        if self.count >= self.cap:
            return _Refused(self.refusal)
        self.count += 1
        return _Admitted(self, self.server())

    def started(self, transport: asyncio.BaseTransport | None) -> None:
        """A request of the connection on ``transport`` has come in whole: its deadline is
        lifted (a later request of the same connection changes nothing)."""
        if transport is not None:
            admitted = self.awaited.pop(transport, None)
            if admitted is not None:
                admitted.arrived()


class _Refused(asyncio.Protocol):
    """A connection over the gate's cap: sent ``refusal``, if any, and closed at once."""

    def __init__(self, refusal: bytes) -> None:
        self.refusal = refusal

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.refusal and isinstance(transport, asyncio.WriteTransport):
            transport.write(self.refusal)
        transport.close()


class _Admitted(asyncio.Protocol):
    """A connection the gate let through: the server's protocol (``inner``) sees every event
    of it, while the gate counts it until it is lost and drops it when it is late with its
    opening request or (with the gate's ``write_timeout``) stalls a response.

    Over TLS the loop tells this protocol nothing until the handshake is over, nor ever if
    it fails: a connection still in its handshake at the deadline is no longer counted (the
    server's own handshake timeout closes it), and is dropped if it comes through later."""

    def __init__(self, gate: Gate, inner: asyncio.Protocol) -> None:
        self.gate = gate
        self.inner = inner
        self.transport: asyncio.Transport | None = None
        self.counted = True
        """Whether the gate's count holds this connection."""
        self.made = False
        """Whether ``inner`` was given the connection."""
        self.deadline: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(
            gate.header_timeout, self._late
        )
        """The opening request's deadline, until the request comes in."""
        self.stall: asyncio.TimerHandle | None = None
        """The drop of a client that takes no byte, while the connection cannot write."""

    def arrived(self) -> None:
        """The opening request has come in: no deadline any more."""
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _late(self) -> None:
        self.deadline = None
        if self.transport is not None:
            self.transport.abort()  # connection_lost follows
        else:  # still in its TLS handshake
            self._uncount()

    def _uncount(self) -> None:
        if self.counted:
            self.counted = False
            self.gate.count -= 1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if not self.counted:  # it came through its TLS handshake after its deadline
            transport.abort()
            return
        self.gate.awaited[transport] = self
        self.made = True
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        timeout = self.gate.write_timeout
        if timeout is not None and self.stall is None and self.transport is not None:
            self.stall = asyncio.get_running_loop().call_later(timeout, self.transport.abort)
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.stall is not None:
            self.stall.cancel()
            self.stall = None
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.arrived()
        if self.stall is not None:
            self.stall.cancel()
            self.stall = None
        if self.transport is not None:
            self.gate.awaited.pop(self.transport, None)
        self._uncount()
        if self.made:
            self.inner.connection_lost(exc)
