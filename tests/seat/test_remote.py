"""Remote seats (``referee.seat.remote``) over real sockets on 127.0.0.1: the tokens file, the
token check, the wait for the named engines, sessions relayed by real ``gin-connect`` clients,
a dropped connection ruled a crash, and clients that break the wire protocol cut off.

Every client a test starts is killed when the test ends (and dies with the test run: its parent
death signal is SIGKILL), and its engine with it (gin-connect kills its engine's group)."""

from __future__ import annotations

import asyncio
import base64
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from ginproto.rules import Rules
from ginproto.table import Decision, FaultKind, PlayerFault
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec, EngineSpecError
from referee.seat.process import EngineExited
from referee.seat.remote import Listener, RemoteMissing
from referee.seat.remote_transport import ITEM, PENDING
from referee.seat.tokens import TokensError, load_tokens, parse_listen
from tests.helpers import first_view

pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[2]
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
SIMPLE = [sys.executable, "-m", "engines.simple_engine"]
CONTROL = TimeControl.parse("inf", move=10.0)

Client = Callable[..., subprocess.Popen[str]]


def _die_with_the_test() -> None:
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@pytest.fixture
def client() -> Iterator[Client]:
    """Start ``gin-connect URL --token TOKEN [--once] -- COMMAND``; killed at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(
        url: str, token: str, command: list[str] | None = None, *extra: str
    ) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "ginproto.connect", url, "--token", token, *extra, "--",
             *(command or SIMPLE)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_die_with_the_test,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        with suppress(ProcessLookupError):
            process.kill()
        process.communicate(timeout=10)


@pytest.fixture
def listener() -> Iterator[Listener]:
    with Listener(TOKENS, "127.0.0.1", 0, reconnect_wait=10.0) as it:
        yield it


def _tokens_file(tmp_path: Path, text: str, mode: int = 0o600) -> str:
    path = tmp_path / "tokens.toml"
    path.write_text(text)
    path.chmod(mode)
    return str(path)


# -- the tokens file -------------------------------------------------------------------------
def test_a_tokens_file_that_others_may_read_is_refused(tmp_path: Path) -> None:
    path = _tokens_file(tmp_path, 'alice = "alice-token-0123456789"\n', 0o644)
    refused = r"read by others than its owner \(mode 0644\): chmod 600"
    with pytest.raises(TokensError, match=refused):
        load_tokens(path)
    os.chmod(path, 0o600)
    assert load_tokens(path) == {"alice": "alice-token-0123456789"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("alice = [", "not TOML"),
        ('alice = "short"\n', "at least 16"),
        ("alice = 12345678901234567890\n", "at least 16"),
        ('"al ice" = "alice-token-0123456789"\n', "a name is letters"),
        ('a = "same-token-0123456789"\nb = "same-token-0123456789"\n', "same token"),
        ("", "names no engine"),
    ],
)
def test_a_tokens_file_of_the_wrong_shape_is_refused(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(TokensError, match=words) as caught:
        load_tokens(_tokens_file(tmp_path, text))
    assert "0123456789" not in str(caught.value)  # no token is ever shown


def test_listen_addresses_and_remote_names() -> None:
    assert parse_listen("9000") == ("127.0.0.1", 9000)
    assert parse_listen("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_listen("[::1]:9000") == ("::1", 9000)
    with pytest.raises(ValueError):
        parse_listen("host:port")
    spec = EngineSpec.parse("remote:alice")
    assert (spec.remote, spec.argv, spec.label) == ("alice", ("remote:alice",), "remote:alice")
    with pytest.raises(EngineSpecError, match="remote engine's name"):
        EngineSpec.parse("remote:al ice")


def test_a_latency_margin_widens_a_remote_engine_s_margin_only(listener: Listener) -> None:
    listener.latency_margin = 0.25
    spec = EngineSpec.parse("remote:alice")
    assert EnginePlayer(spec, CONTROL).control.margin == pytest.approx(CONTROL.margin + 0.25)
    assert EnginePlayer(EngineSpec.parse("simple"), CONTROL).control.margin == CONTROL.margin
    assert EngineSpec(("remote:alice",)).remote == "alice"  # as a tournament's config makes it
    assert EngineSpec(("remote:alice", "x")).remote is None


# -- connecting ------------------------------------------------------------------------------
def test_a_wrong_token_is_refused_in_one_line_and_never_logged(
    listener: Listener, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "not-a-token-of-anyone-42"
    process = client(listener.url, wrong, None, "--once")
    _, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert err.splitlines() == ["gin-connect: the referee refused the token"]
    assert listener.connected() == []
    assert wrong not in caplog.text and "alice-token" not in caplog.text


def test_the_wait_names_the_engines_missing(listener: Listener, client: Client) -> None:
    client(listener.url, TOKENS["alice"])
    listener.wait_for(["alice"], 30)
    started = time.monotonic()
    with pytest.raises(RemoteMissing) as caught:
        listener.wait_for(["alice", "bob"], 0.5)
    assert time.monotonic() - started >= 0.5
    assert str(caught.value).startswith("not connected after 0.5s: remote:bob (")
    with pytest.raises(RemoteMissing, match="no token for remote:carol"):
        listener.wait_for(["carol"], 0.1)


def test_a_second_client_with_the_same_token_is_refused(listener: Listener, client: Client) -> None:
    first = client(listener.url, TOKENS["alice"])
    listener.wait_for(["alice"], 30)
    second = client(listener.url, TOKENS["alice"], None, "--once")
    _, err = second.communicate(timeout=30)
    assert second.returncode == 1
    assert "connected already" in err
    assert first.poll() is None and listener.connected() == ["alice"]


# -- sessions --------------------------------------------------------------------------------
def test_a_remote_engine_plays_through_sessions_as_a_local_one(
    listener: Listener, client: Client
) -> None:
    client(listener.url, TOKENS["alice"])
    listener.wait_for(["alice"], 30)
    lines: list[str] = []
    player = EnginePlayer(
        EngineSpec.parse("remote:alice"), CONTROL, on_line=lambda d, line: lines.append(d)
    )
    local = EnginePlayer(EngineSpec.parse("simple"), CONTROL)
    try:
        view = first_view(Rules())
        for _ in range(2):  # a second session: a fresh engine on the client's machine
            player.start()
            assert player.id.name == "Simple"
            player.new_game(1, 0, Rules())
            local.new_game(1, 0, Rules())
            assert player.decide(view, Decision.OFFER) == local.decide(view, Decision.OFFER)
            player.close()
        assert "to" in lines and "from" in lines
    finally:
        player.close()
        local.close()


def test_a_dropped_connection_is_a_crash_and_the_engine_may_come_back(
    listener: Listener, client: Client, tmp_path: Path
) -> None:
    cut = [sys.executable, str(ROOT / "tests/programs/cuts_its_relay.py"), str(tmp_path / "cut")]
    first = client(listener.url, TOKENS["alice"], cut)
    listener.wait_for(["alice"], 30)
    player = EnginePlayer(EngineSpec.parse("remote:alice"), CONTROL)
    try:
        player.start()
        player.new_game(1, 0, Rules())
        with pytest.raises(PlayerFault) as caught:
            player.decide(first_view(Rules()), Decision.OFFER)
        assert caught.value.kind is FaultKind.CRASH
        assert "lost its connection" in str(caught.value)
        assert first.wait(10) == -signal.SIGKILL
        assert (listener.drops("alice"), listener.drops("bob")) == (1, 0)
        player.close()
        second = client(listener.url, TOKENS["alice"], cut)  # back, before the next game
        player.new_game(2, 0, Rules())
        assert player.decide(first_view(Rules()), Decision.OFFER) is not None
    finally:
        player.close()
    second.kill()  # between games, no session running: gone, but no drop
    deadline = time.monotonic() + 30
    while listener.connected() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert listener.connected() == [] and listener.drops("alice") == 1


def test_a_remote_engine_that_is_not_connected_cannot_start(listener: Listener) -> None:
    listener.first_wait = 0.2  # bob has never connected
    player = EnginePlayer(EngineSpec.parse("remote:bob"), CONTROL)
    with pytest.raises(PlayerFault, match=r"remote engine 'bob' is not connected after 0\.2s"):
        player.start()


# -- clients that break the wire protocol ----------------------------------------------------
async def _raw(url: str, token: str, send: list[str | bytes]) -> tuple[int | None, bool]:
    """Connect as a client of our own, send ``send``, and return the close code the referee
    gave, and whether it closed the connection within 10 s."""
    import aiohttp

    async with aiohttp.ClientSession() as http:
        ws = await http.ws_connect(
            url, headers={"Authorization": f"Bearer {token}"}, max_msg_size=0
        )
        try:
            for message in send:
                if isinstance(message, str):
                    await ws.send_str(message)
                else:
                    await ws.send_bytes(message)
        except (ConnectionError, OSError, aiohttp.ClientError):
            return ws.close_code, True  # closed by the referee while it was still being written
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            message = await ws.receive(timeout=max(0.01, deadline - time.monotonic()))
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.ERROR):
                return ws.close_code, True
        return ws.close_code, False


@pytest.mark.parametrize(
    ("send", "code"),
    [
        (["move discard 7h"], 1008),  # a line of no game
        (["3 move discard 7h"], 1008),  # a move for a game it is not playing
        ([b"exited 5 code 0"], 1008),  # a session that never was
        ([b"hello there"], 1008),  # garbage
        ([b"pong 99999"], 1008),  # an answer to no ping (a flood of them held the loop)
        (["x" * (2 << 20)], 1009),  # a message over the limit
    ],
    ids=["line-of-no-game", "move-for-another-game", "unknown-session", "garbage",
         "pong-for-no-ping", "too-big"],
)
def test_a_client_that_breaks_the_wire_protocol_is_cut_off(
    listener: Listener, send: list[str | bytes], code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut off, and refused for a pause (a client that breaches and comes back at once would
    take the loop from the games); then it may connect again."""
    import aiohttp

    from referee.seat import remote

    monkeypatch.setattr(remote, "BREACH_PAUSE", 1.0)
    closed_with, closed = asyncio.run(_raw(listener.url, TOKENS["bob"], send))
    # A message too big may be cut off while the client still writes it: no close code then,
    # or an abnormal closure (1006).
    assert closed and closed_with in ((code, 1006, None) if code == 1009 else (code,))
    deadline = time.monotonic() + 5
    while listener.connected() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert listener.connected() == []
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        asyncio.run(_raw(listener.url, TOKENS["bob"], ["ping"]))
    assert refused.value.status == 503
    time.sleep(1.0)  # the pause is over: bob may connect again
    closed_with, closed = asyncio.run(_raw(listener.url, TOKENS["bob"], ["ping"]))
    assert closed and closed_with == 1008


def test_round_trips_are_measured(listener: Listener, client: Client) -> None:
    client(listener.url, TOKENS["alice"])
    listener.wait_for(["alice"], 30)
    deadline = time.monotonic() + 10
    while listener.latency("alice") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    latency = listener.latency("alice")
    assert latency is not None and 0 < latency.median <= latency.worst < 5
    assert str(latency).startswith("round trip ")


def test_a_flooding_client_fills_a_bounded_buffer_and_is_slowed_down(
    listener: Listener,
) -> None:
    """A client that sends lines as fast as it can while its seat reads none: the referee
    stops reading its socket at ``PENDING`` bytes, and TCP slows the client down."""
    import threading

    sent = [0]
    stop = threading.Event()

    async def flood() -> None:
        import aiohttp

        async with aiohttp.ClientSession() as http:
            ws = await http.ws_connect(
                listener.url, headers={"Authorization": f"Bearer {TOKENS['alice']}"}
            )
            while (await ws.receive()).data != b"start 1":
                pass
            while not stop.is_set():  # a send waits once the referee stops reading
                await ws.send_str("1 info " + "x" * 1000)
                sent[0] += 1
            await ws.close()

    thread = threading.Thread(target=lambda: asyncio.run(flood()), daemon=True)
    thread.start()
    transport = None
    try:
        listener.wait_for(["alice"], 30)
        transport = listener.open_session("alice", None)
        connection = transport.connection
        time.sleep(2.0)
        before = sent[0]
        time.sleep(1.0)
        assert sent[0] - before < 50  # blocked: nothing read, nothing more sent
        assert PENDING <= connection.pending <= PENDING + listener.line_limit
        assert transport.read_line(1).startswith("info x")
    finally:
        stop.set()
        if transport is not None:
            transport.close(grace=0.1)  # the rest is dropped: the client can end
        thread.join(10)
        assert not thread.is_alive()


def test_silent_connections_keep_no_one_out(listener: Listener, client: Client) -> None:
    """Two hundred connections that never send a byte, then a real client: it connects and
    plays."""
    import socket

    silent = [socket.create_connection(("127.0.0.1", listener.port)) for _ in range(200)]
    try:
        client(listener.url, TOKENS["alice"])
        listener.wait_for(["alice"], 30)
        player = EnginePlayer(EngineSpec.parse("remote:alice"), CONTROL)
        try:
            player.start()
            assert player.id.name == "Simple"
        finally:
            player.close()
    finally:
        for sock in silent:
            sock.close()


class SlowLink:
    """A WebSocket relay between a client and the listener that holds every message
    ``delay`` seconds each way, as a slow network would (in a thread of its own)."""

    def __init__(self, upstream: str, delay: float) -> None:
        import threading

        self.upstream = upstream
        self.delay = delay
        self.port = 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: object) -> None:
        from aiohttp import web

        async def relay(request: web.Request) -> web.WebSocketResponse:
            import aiohttp

            inner = web.WebSocketResponse()
            await inner.prepare(request)
            async with aiohttp.ClientSession() as http:
                headers = {"Authorization": request.headers["Authorization"]}
                outer = await http.ws_connect(self.upstream, headers=headers)

                async def pipe(src: object, dst: object) -> None:
                    async for message in src:  # type: ignore[attr-defined]
                        await asyncio.sleep(self.delay)
                        if message.type is aiohttp.WSMsgType.TEXT:
                            await dst.send_str(message.data)  # type: ignore[attr-defined]
                        elif message.type is aiohttp.WSMsgType.BINARY:
                            await dst.send_bytes(message.data)  # type: ignore[attr-defined]
                    await dst.close()  # type: ignore[attr-defined]

                await asyncio.gather(pipe(inner, outer), pipe(outer, inner))
            return inner

        async def serve() -> None:
            app = web.Application()
            app.router.add_get("/", relay)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = runner.addresses[0][1]
            ready.set()  # type: ignore[attr-defined]

        self.loop.run_until_complete(serve())
        self.loop.run_forever()
        from referee.seat.remote import _close_loop

        _close_loop(self.loop)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def close(self) -> None:
        """Stop at once: what is relayed is cancelled (the thread ends the loop's tasks)."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.mark.parametrize("margin", [0.0, 5.0])
def test_a_slow_link_holds_a_move_limit_only_with_a_latency_margin(
    listener: Listener, client: Client, margin: float
) -> None:
    """60 ms each way on a 0.1 s move limit without any other margin: a timeout, unless
    ``--latency-margin`` gives the network its time (ample, for a busy machine); the round
    trips measured show the link."""
    link = SlowLink(listener.url, 0.06)
    try:
        client(link.url, TOKENS["alice"])
        listener.wait_for(["alice"], 30)
        control = TimeControl.parse("inf", move=0.1, margin=0.0)
        listener.latency_margin = margin
        spec = EngineSpec.parse("remote:alice")
        player = EnginePlayer(spec, control)
        try:
            player.start()
            player.new_game(1, 0, Rules())
            view = first_view(Rules())
            if margin:
                assert player.decide(view, Decision.OFFER) is not None
            else:
                with pytest.raises(PlayerFault) as caught:
                    player.decide(view, Decision.OFFER)
                assert caught.value.kind is FaultKind.TIMEOUT
        finally:
            player.close()
        latency = listener.latency("alice")
        assert latency is not None and latency.median >= 0.12
    finally:
        link.close()


def test_a_client_that_never_answers_a_ping_is_cut_off(
    listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection whose pings go unanswered is taken for dead, which frees its name."""
    from referee.seat import remote

    monkeypatch.setattr(remote, "PING_EVERY", 0.1)
    monkeypatch.setattr(remote, "DEAD_AFTER", 0.5)
    started = time.monotonic()
    closed_with, closed = asyncio.run(_raw(listener.url, TOKENS["bob"], []))  # reads, never pongs
    assert closed and closed_with == 1008
    assert time.monotonic() - started < 5


def test_ctrl_c_leaves_after_the_game_in_progress(listener: Listener, client: Client) -> None:
    """The author's Ctrl-C: the client plays the game in progress to its ``gameover``, then
    leaves (exit 0); a second Ctrl-C, or one between games, leaves at once."""
    process = client(listener.url, TOKENS["alice"])
    listener.wait_for(["alice"], 30)
    player = EnginePlayer(EngineSpec.parse("remote:alice"), CONTROL)
    try:
        player.start()
        player.new_game(1, 0, Rules())
        view = first_view(Rules())
        player.decide(view, Decision.OFFER)  # its newgame went out: a game is in progress
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert process.poll() is None
        assert player.decide(view, Decision.OFFER) is not None  # it still plays
        assert player.process is not None
        player.process.send("gameover game 1 winner 0 reason target")
        assert process.wait(10) == 0
    finally:
        player.close()
    _, err = process.communicate()
    assert "leaving after the game in progress" in err and err.splitlines()[-1].endswith("left")

    between = client(listener.url, TOKENS["alice"])
    assert between.stderr is not None
    assert between.stderr.readline().startswith("gin-connect: connected to ")
    between.send_signal(signal.SIGINT)
    assert between.wait(10) == 0


def test_without_aiohttp_both_ends_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ginproto import connect
    from referee.errors import RefereeError

    monkeypatch.setitem(sys.modules, "aiohttp", None)  # import aiohttp now fails
    assert connect.main(["ws://127.0.0.1:9", "--token", "t", "--", "true"]) == 1
    assert capsys.readouterr().err == (
        "gin-connect: it needs aiohttp: pip install 'ginproto[web]'\n"
    )
    with pytest.raises(RefereeError, match=r"pip install 'ginproto\[web\]'"):
        Listener(TOKENS).start()


def test_an_address_in_use_is_refused_in_one_line(listener: Listener) -> None:
    from referee.errors import RefereeError

    with pytest.raises(RefereeError, match=rf"^cannot listen on 127\.0\.0\.1:{listener.port}: "):
        Listener(TOKENS, "127.0.0.1", listener.port).start()


def test_silent_connections_are_dropped_and_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A connection that does not complete its opening request in time is dropped; beyond
    the cap, a new one is closed at once; a client that authenticates still gets in."""
    import socket

    from referee.seat import remote

    monkeypatch.setattr(remote, "HEADER_TIMEOUT", 0.5)
    monkeypatch.setattr(remote, "OPEN_CAP", 5)
    with Listener(TOKENS) as listener:
        silent = [socket.create_connection(("127.0.0.1", listener.port)) for _ in range(5)]
        try:
            extra = socket.create_connection(("127.0.0.1", listener.port))
            extra.settimeout(5)
            assert extra.recv(1) == b""  # over the cap: closed at once
            extra.close()
            for sock in silent:
                sock.settimeout(5)
                started = time.monotonic()
                assert sock.recv(1) == b""  # dropped at the deadline
                assert time.monotonic() - started < 2
        finally:
            for sock in silent:
                sock.close()
        closed_with, closed = asyncio.run(_raw(listener.url, TOKENS["bob"], ["ping"]))
        assert closed and closed_with == 1008  # authenticated (then cut off for its line)


def test_failed_tls_handshakes_keep_no_one_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Over TLS, connections that fail their handshake (plain text) or never start it hold
    no place beyond the deadline: a client with a token still gets in."""
    import socket
    import ssl

    from referee.seat import remote

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        capture_output=True, timeout=60, check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate: {made.stderr[-200:]!r}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    monkeypatch.setattr(remote, "HEADER_TIMEOUT", 0.5)
    monkeypatch.setattr(remote, "OPEN_CAP", 3)
    with Listener(TOKENS, ssl_context=context) as listener:
        silent = socket.create_connection(("127.0.0.1", listener.port))
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", listener.port)) as plain:
                plain.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                plain.settimeout(5)
                with suppress(OSError):
                    plain.recv(1024)
        silent.settimeout(5)
        started = time.monotonic()
        assert silent.recv(1) == b""  # dropped at the deadline, its handshake never begun
        assert time.monotonic() - started < 2
        silent.close()
        time.sleep(0.5)
        client = ssl.create_default_context(cafile=str(cert))
        client.check_hostname = False
        with (
            socket.create_connection(("127.0.0.1", listener.port)) as sock,
            client.wrap_socket(sock) as tls,
        ):
            tls.settimeout(5)
            token = TOKENS["alice"]
            tls.sendall(
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}"
                "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n".encode()
            )
            assert tls.recv(64).startswith(b"HTTP/1.1 101 ")  # let in, authenticated


@pytest.mark.parametrize("games", ["0", "65", "two", "²"])
def test_a_client_that_says_a_wrong_number_of_games_is_refused(
    listener: Listener, games: str
) -> None:
    import aiohttp

    async def connect() -> int:
        async with aiohttp.ClientSession() as http:
            headers = {"Authorization": f"Bearer {TOKENS['alice']}", "Gin-Games": games}
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(listener.url, headers=headers)
            return refused.value.status

    assert asyncio.run(connect()) == 400
    assert listener.connected() == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["http://h:1", "--token", "t", "--", "true"], "must start with ws:// or wss://"),
        (["ws://h:1", "--token", "t"], "Missing argument '-- COMMAND...'"),
        (["ws://h:1", "--token", "t", "--games", "0", "--", "true"], "0 is not in the range"),
        (["ws://h:1", "--", "true"], "give the token: --token TOKEN"),
    ],
)
def test_gin_connect_refuses_a_wrong_command_line_in_one_message(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ginproto import connect

    monkeypatch.delenv("GIN_TOKEN", raising=False)
    assert connect.main(args) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_a_connection_found_dead_during_a_game_counts_as_a_drop(
    listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The network goes silent while bob plays: its pings find it dead, the game's session
    ends as a lost connection, and the standings count one drop."""
    import threading

    from referee.seat import remote

    monkeypatch.setattr(remote, "PING_EVERY", 0.1)
    monkeypatch.setattr(remote, "DEAD_AFTER", 1.0)
    silent = threading.Thread(
        target=lambda: asyncio.run(_raw(listener.url, TOKENS["bob"], [])), daemon=True
    )
    silent.start()
    listener.wait_for(["bob"], 30)
    transport = listener.open_session("bob", None)
    try:
        silent.join(30)
        assert not silent.is_alive()
        with pytest.raises(EngineExited, match=r"was cut off: no pong for 1s"):
            transport.read_line(5)
    finally:
        transport.close(grace=0.1)
    assert listener.drops("bob") == 1


# -- adversaries, over raw sockets: nothing in them bounded by a client library --------------
def _open_ws(port: int, token: str) -> tuple[int, socket.socket]:
    """A raw TCP connection that sends the WebSocket opening request with ``token``: the HTTP
    status the referee answers (101: open), and the socket."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)  # byte by byte: what follows the head stays in the socket
        if not chunk:
            return 0, sock
        head += chunk
    return int(head.split()[1]), sock


def _header(opcode: int, length: int, final: bool = True) -> bytes:
    """A client frame's header, masked with a zero key (the payload goes as it is)."""
    first = (0x80 if final else 0) | opcode
    if length < 126:
        return bytes([first, 0x80 | length]) + bytes(4)
    if length < 1 << 16:
        return bytes([first, 0x80 | 126]) + length.to_bytes(2, "big") + bytes(4)
    return bytes([first, 0x80 | 127]) + length.to_bytes(8, "big") + bytes(4)


BIG = 20 << 20


@pytest.mark.parametrize("shape", ["text", "binary", "text-in-fragments"])
def test_a_20_mb_message_is_refused_unread_and_the_game_in_progress_plays_on(
    listener: Listener, client: Client, shape: str
) -> None:
    """A client with a valid token sends a 20 MB message (whole, or in 64 KiB fragments):
    the referee ends the connection before the message is whole, holds no more than a little
    over its line limit of it (tracemalloc's peak in this process, where the listener runs),
    and the game in progress goes on."""
    chunk = b"x" * (1 << 16)
    client(listener.url, TOKENS["alice"])
    listener.wait_for(["alice"], 30)
    player = EnginePlayer(EngineSpec.parse("remote:alice"), CONTROL)
    view = first_view(Rules())
    try:
        player.start()
        player.new_game(1, 0, Rules())
        first = player.decide(view, Decision.OFFER)
        status, sock = _open_ws(listener.port, TOKENS["bob"])
        assert status == 101
        tracemalloc.start()
        try:
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            written = 0
            with pytest.raises(OSError), sock:  # cut off before the message is whole
                if shape == "text-in-fragments":
                    opcode = 0x1
                    while written < BIG:
                        sock.sendall(_header(opcode, len(chunk), final=False) + chunk)
                        opcode, written = 0x0, written + len(chunk)
                else:
                    sock.sendall(_header(0x1 if shape == "text" else 0x2, BIG))
                    while written < BIG:
                        sock.sendall(chunk)
                        written += len(chunk)
                sock.sendall(_header(0x0, 0))  # the last fragment, or a frame after the message
                while sock.recv(1 << 16):  # whole: whatever the referee says, up to its close
                    pass
                sock.sendall(b"x")  # the referee has closed: a reset
            deadline = time.monotonic() + 10
            while listener.connected() != ["alice"] and time.monotonic() < deadline:
                time.sleep(0.01)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert written < BIG
        assert peak - before < 2 * (listener.line_limit + 1024)  # far from 20 MB
        assert listener.connected() == ["alice"]
        assert player.decide(view, Decision.OFFER) == first  # the game goes on
    finally:
        player.close()


def test_a_seated_client_flooding_empty_lines_fills_a_bounded_buffer(listener: Listener) -> None:
    """Empty lines, as fast as a client can send them, while its seat reads none: each is
    counted in the bound (it was counted 0, and the queue grew without end)."""

    status, sock = _open_ws(listener.port, TOKENS["alice"])
    assert status == 101
    with sock:
        listener.wait_for(["alice"], 30)
        flood = (_header(0x1, 2) + b"1 ") * 4096  # session 1's empty line
        sent: list[int] = [0]

        def send() -> None:
            with suppress(OSError):
                while True:  # blocks once the referee stops reading
                    sock.sendall(flood)
                    sent[0] += 4096

        transport = listener.open_session("alice", None)
        connection = transport.connection
        import threading

        threading.Thread(target=send, daemon=True).start()
        deadline = time.monotonic() + 30
        while connection.pending <= PENDING and time.monotonic() < deadline:
            time.sleep(0.01)
        assert connection.pending > PENDING
        assert len(transport.session.items) <= PENDING // ITEM + 1
        assert transport.read_line(1) == ""
        transport.close(grace=0.1)


def test_200_idle_clients_with_valid_tokens_keep_no_seat_s_engine_out(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two hundred clients, each with a valid token of its own, complete the handshake before
    the seat's engine and send nothing (no pong, and they are not dropped during the test):
    MAX_CLIENTS get in, the others 503; the engine a seat waits for gets in past the cap and
    plays its match; a client no seat waits for is still refused."""
    from referee import Clock, Sandbox, play_match
    from referee.seat import remote

    monkeypatch.setattr(remote, "DEAD_AFTER", 3600.0)
    crowd = {f"crowd{k:03}": f"crowd-token-{k:03}-0123456789" for k in range(201)}
    with Listener({**TOKENS, **crowd}, "127.0.0.1", 0, first_wait=60.0) as listener:
        answers = [_open_ws(listener.port, token) for token in list(crowd.values())[:200]]
        try:
            statuses = [status for status, _ in answers]
            assert statuses.count(101) == remote.MAX_CLIENTS
            assert statuses.count(503) == 200 - remote.MAX_CLIENTS
            client(listener.url, TOKENS["alice"])  # refused at first, then let in
            listener.wait_for(["alice"], 60)
            result = play_match(
                ["remote:alice", "random"], games=2, seed=5, clock=Clock(tc="inf"),
                sandbox=Sandbox(mode="off"),
            )
            assert len(result.games) == 2 and result.to_json()["forfeits"] == []
            status, late = _open_ws(listener.port, crowd["crowd200"])
            late.close()
            assert status == 503
            assert len(listener.connected()) == remote.MAX_CLIENTS + 1
        finally:
            for _, sock in answers:
                sock.close()
