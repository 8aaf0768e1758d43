"""The gate before the web servers (``referee.gate``), on its own: a server of lines behind it
on 127.0.0.1, plain and over TLS. Beyond the cap a connection is sent the refusal and closed,
and a place comes back when a connection ends; a connection that has not sent its opening
request by the deadline is dropped, one that has stays; with a write timeout, a client that
reads nothing is dropped; over TLS, a connection whose handshake fails or never comes holds
no place beyond the deadline (the loop never tells the gate of it)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import subprocess
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from referee.gate import Gate

REFUSAL = b"busy\n"
FLOOD = 16 << 20  # bytes sent for ``flood``: more than every buffer on the way holds


class _Lines(asyncio.Protocol):
    """The server behind the gate: a request is a line, said to the gate (``started``) and
    answered ``ok`` (``flood``: ``FLOOD`` bytes)."""

    def __init__(self, started: Callable[[asyncio.BaseTransport], None]) -> None:
        self.started = started
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        if b"\n" in data:
            self.started(self.transport)
            self.transport.write(b"x" * FLOOD if data.startswith(b"flood") else b"ok\n")


async def _serve(
    gate_for: Callable[[Callable[[], asyncio.Protocol]], Gate],
    ssl_context: ssl.SSLContext | None = None,
    handshake_timeout: float | None = None,
) -> tuple[Gate, asyncio.Server, int]:
    """A server of lines behind ``gate_for(its protocol factory)``, on a free port."""
    gate: Gate | None = None

    def started(transport: asyncio.BaseTransport) -> None:
        assert gate is not None
        gate.started(transport)

    gate = gate_for(lambda: _Lines(started))
    server = await asyncio.get_running_loop().create_server(
        gate, "127.0.0.1", 0, ssl=ssl_context, ssl_handshake_timeout=handshake_timeout
    )
    return gate, server, int(server.sockets[0].getsockname()[1])


async def _until(check: Callable[[], bool], within: float = 5.0) -> bool:
    """Whether ``check`` comes true within ``within`` seconds (looked at every 20 ms)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def _closed(reader: asyncio.StreamReader, within: float = 5.0) -> bool:
    """Whether the server ends the connection within ``within`` seconds (an end of stream,
    or a reset), whatever it sent before."""
    try:
        async with asyncio.timeout(within):
            while await reader.read(1 << 16):
                pass
    except TimeoutError:
        return False
    except ConnectionError:
        pass
    return True


def _run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


@pytest.mark.parametrize("refusal", [REFUSAL, b""])
def test_beyond_the_cap_a_connection_is_refused_and_a_place_comes_back(refusal: bytes) -> None:
    """A connection beyond the cap is sent the refusal, if any, and closed at once."""

    async def test() -> None:
        gate, server, port = await _serve(lambda inner: Gate(inner, 2, 5.0, refusal=refusal))
        async with server:
            held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
            assert await _until(lambda: gate.count == 2)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            assert await reader.read() == refusal  # then the end
            writer.close()
            held[0][1].close()
            assert await _until(lambda: gate.count == 1)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"hello\n")
            assert await reader.readline() == b"ok\n"
            for _, held_writer in [*held, (reader, writer)]:
                held_writer.close()
            assert await _until(lambda: gate.count == 0)

    _run(test)


def test_a_connection_late_with_its_request_is_dropped_and_one_in_time_stays() -> None:
    async def test() -> None:
        gate, server, port = await _serve(lambda inner: Gate(inner, 8, 0.3))
        async with server:
            silent, silent_writer = await asyncio.open_connection("127.0.0.1", port)
            talking, talking_writer = await asyncio.open_connection("127.0.0.1", port)
            talking_writer.write(b"hello\n")
            assert await talking.readline() == b"ok\n"
            started = time.monotonic()
            assert await _closed(silent, 3.0)
            assert time.monotonic() - started < 2.0
            await asyncio.sleep(0.5)  # past the deadline: the one that asked in time stays
            talking_writer.write(b"again\n")
            assert await talking.readline() == b"ok\n"
            assert gate.count == 1
            for writer in (silent_writer, talking_writer):
                writer.close()

    _run(test)


@pytest.mark.parametrize("write_timeout", [0.3, None])
def test_a_client_that_reads_nothing_is_dropped_with_a_write_timeout(
    write_timeout: float | None,
) -> None:
    async def test() -> None:
        gate, server, port = await _serve(
            lambda inner: Gate(inner, 8, 5.0, write_timeout=write_timeout)
        )
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"flood\n")
            dropped = await _until(lambda: gate.count == 0, 2.0)
            assert dropped is (write_timeout is not None)
            if not dropped:  # it stays while it reads nothing, and is served when it reads
                received = 0
                while received < FLOOD:
                    received += len(await reader.read(1 << 20))
            writer.close()

    _run(test)


# -- over TLS ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server's TLS context with a self-signed certificate, and a client's that trusts it."""
    folder: Path = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
         "-out", str(cert)],
        capture_output=True, timeout=60, check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate: {made.stderr[-200:]!r}")
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    return server, ssl.create_default_context(cafile=str(cert))


def test_failed_tls_handshakes_hold_no_place_beyond_the_deadline(
    tls: tuple[ssl.SSLContext, ssl.SSLContext],
) -> None:
    """Plain text on a TLS port: each handshake fails, and the loop never tells the gate.
    Once the deadline has passed, a TLS client is served all the same."""
    server_context, client_context = tls

    async def test() -> None:
        gate, server, port = await _serve(
            lambda inner: Gate(inner, 2, 0.3), server_context, handshake_timeout=0.3
        )
        async with server:
            for _ in range(4):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(b"GET / HTTP/1.1\r\n\r\n")
                assert await _closed(reader)
                writer.close()
            assert await _until(lambda: gate.count == 0, 2.0)
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, ssl=client_context
            )
            writer.write(b"hello\n")
            assert await reader.readline() == b"ok\n"
            writer.close()
            with contextlib.suppress(ConnectionError, ssl.SSLError):
                await writer.wait_closed()

    _run(test)


def test_a_connection_silent_before_its_tls_handshake_is_dropped_at_the_deadline(
    tls: tuple[ssl.SSLContext, ssl.SSLContext],
) -> None:
    server_context, _ = tls

    async def test() -> None:
        gate, server, port = await _serve(
            lambda inner: Gate(inner, 2, 0.3), server_context, handshake_timeout=0.3
        )
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            assert await _until(lambda: gate.count == 1)
            assert await _closed(reader, 3.0)
            assert await _until(lambda: gate.count == 0, 1.0)
            writer.close()

    _run(test)
