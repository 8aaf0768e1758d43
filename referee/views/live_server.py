"""The live page's web server (aiohttp, the ``ginproto[web]`` extra), in a thread of its own.

It serves, by GET only (any other method is a 405, an unknown path a 404):

- ``/``: the live page (``referee/views/html/assets/live.html``), which loads nothing from anywhere
  else and listens to ``/events``;
- ``/events``: the run's state as server-sent events, one ``state`` event each time it changes
  (a few a second at most); a client that reads slowly skips to the newest state instead of
  queueing the ones it missed, so the server keeps no backlog for anyone;
- ``/state``: the same state as one JSON document, every finished game included;
- ``/game/N``: finished game N in the replay viewer (``referee.views.html``), from its stored
  record, rendered once and kept (the newest ``GAME_PAGES``); while games sharing its deck
  key are still to be played, a short page saying its deal is withheld until then.

The state is ``referee.views.live.LiveState``: what the run stored and what a spectator may see of
the games in progress. The server only reads it.

No client can stop the run or take what it needs. Behind its gate (``referee.gate``), the
server answers ``max_clients()`` connections at once (a quarter of the process's open-file
limit, at most 1024): one more is answered 503 and closed at once. A client that has not sent
its request's headers within ``HEADER_TIMEOUT`` seconds, stays idle between requests as long,
or takes no byte of a response for ``WRITE_TIMEOUT`` seconds, is dropped. A request whose
``Host`` header names another server than this one is a 421 (DNS rebinding), unless the page
is served on every interface (0.0.0.0 or ::), where it is public anyway. What clients do is
never logged above debug level.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import ipaddress
import json
import logging
import threading
from collections import OrderedDict
from typing import Any, Final

from aiohttp import web

from referee.gate import Gate
from referee.views.live import Address, LiveState

log = logging.getLogger(__name__)

__all__ = ["LiveServer", "max_clients"]

TICK: Final = 0.2  # seconds between two looks at the state
HEARTBEAT: Final = 15.0  # seconds of silence after which a comment line keeps the stream open
HEADER_TIMEOUT: Final = 10.0  # seconds a new connection has to send its request's headers
KEEPALIVE: Final = 10.0  # seconds a connection may stay idle between two requests
WRITE_TIMEOUT: Final = 30.0  # a client that takes no byte for this long is dropped
CLOSE_TIMEOUT: Final = 5.0
BACKLOG: Final = 128  # connections the system queues before the server accepts them
GAME_PAGES: Final = 64  # finished games' viewer pages kept rendered
GAME_DIGITS: Final = 9  # a game number has at most this many digits
BUSY_TEXT: Final = b"503: too many clients; try again later\n"
BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: %d\r\nRetry-After: 5\r\nConnection: close\r\n\r\n%s"
    % (len(BUSY_TEXT), BUSY_TEXT)
)


def max_clients() -> int:
    """The connections the server answers at once: a quarter of the process's open-file limit
    (between 16 and 1024), so that clients never take the files and pipes the run needs."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 256
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return 1024
    return max(16, min(1024, soft // 4))


def _shown_path(path: str) -> str:
    """A request's path as a log line may show it: short, and printable."""
    if len(path) > 80:
        return f"{ascii(path[:60])[1:-1]}... ({len(path)} characters)"
    return ascii(path)[1:-1]


def _game_number(text: str) -> int | None:
    """The game number of ``/game/TEXT``: ASCII digits only, not too many; None otherwise."""
    if not (text.isascii() and text.isdigit()) or len(text) > GAME_DIGITS:
        return None
    number = int(text)
    return number if number >= 1 else None


def _page(state: LiveState) -> str:
    from referee.views.html.page import asset, fill

    parts = {
        "title": html.escape(state.title),
        "style": asset("viewer.css") + "\n" + asset("live.css"),
        "script": asset("live.js"),
    }
    return fill(asset("live.html"), parts)


SECRET_HEADERS: Final = ("Seed", "Key")


def _viewer(state: LiveState, number: int, revealed: bool) -> str | None:
    """Finished game ``number`` in the replay viewer, or None if there is no such game. The
    seed and the deck key are left out unless ``revealed`` (nothing left to play)."""
    from ginproto.record import loads
    from referee.views.html.model import game_data
    from referee.views.html.page import render_page

    text = state.record(number)
    if text is None:
        return None
    records = loads(text)
    if not records:
        return None
    data = game_data(records[0], number)
    if not revealed:
        for name in SECRET_HEADERS:
            data["info"].pop(name, None)
    title = f"{state.title}: game {number}"
    return render_page(title, [data])


def _withheld(state: LiveState, number: int) -> str:
    """The page of a finished game whose deal is not shown yet. It reloads itself now and
    then, and becomes the game's viewer once the games sharing its deal are over."""
    title = html.escape(f"{state.title}: game {number}")
    return (
        "<!doctype html>\n<html lang=\"en\" data-withheld>\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta http-equiv="refresh" content="15">\n'
        f"<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n"
        f"<p>Game {number} is finished, but other games of the run that are still in progress"
        " or still to be played are dealt the same cards. Its replay opens here when they are"
        " over (this page reloads itself).</p>\n"
        '<p><a href="/">Back to the live page</a></p>\n</body>\n</html>\n'
    )


def _host_names(address: Address) -> frozenset[str] | None:
    """The ``Host`` header values a request to ``address`` may carry (lower case), or None
    for any: served on every interface, the page answers whatever name reaches it."""
    host = address.host.lower()
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).is_unspecified:
            return None
    bound = f"[{host}]" if ":" in host else host
    names = {bound, "localhost", "127.0.0.1", "[::1]"}
    out = {f"{n}:{address.port}" for n in names}
    if address.port == 80:
        out |= names
    return frozenset(out)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        return False


class LiveServer:
    """Serves ``state`` on ``address`` from a thread with its own event loop, to
    ``clients_cap`` connections at once (default: `max_clients`)."""

    def __init__(
        self, state: LiveState, address: Address, clients_cap: int | None = None
    ) -> None:
        self.state = state
        self.address = address
        self.clients_cap = max_clients() if clients_cap is None else clients_cap
        # Read when the server starts: seconds a new connection has to send its headers, and
        # a client may take no byte of a response.
        self.header_timeout = HEADER_TIMEOUT
        self.write_timeout = WRITE_TIMEOUT
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.runner: web.AppRunner | None = None
        self.listener: asyncio.Server | None = None
        self.gate: Gate | None = None
        self.hosts: frozenset[str] | None = None
        self.public = False  # bound to an address other machines may reach
        self.closing = False
        self.changed: asyncio.Event | None = None
        self.clients = 0
        self._encoded: dict[tuple[int, int], bytes] = {}
        self._page: str | None = None
        self._state_body: tuple[int, bytes] | None = None
        self._games: OrderedDict[tuple[int, bool], bytes] = OrderedDict()
        self._rendering: dict[tuple[int, bool], asyncio.Future[bytes | None]] = {}

    # -- starting and stopping --------------------------------------------------------------
    def start(self) -> Address:
        """Bind and serve; return the address bound (the port chosen, for port 0). Raises
        ``OSError`` if the address cannot be bound (a port in use, say)."""
        if log.getEffectiveLevel() > logging.DEBUG:  # a client's error is no error of the run
            logging.getLogger("aiohttp").setLevel(logging.CRITICAL)
        ready = threading.Event()
        outcome: list[Address | BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(_loop_error)
            self.loop = loop
            try:
                try:
                    outcome.append(loop.run_until_complete(self._start()))
                except BaseException as exc:  # handed to the thread that started the server
                    outcome.append(exc)
                    return
                finally:
                    ready.set()
                loop.run_until_complete(self._tick())
                loop.run_until_complete(self._cleanup())
            finally:
                loop.close()

        self.thread = threading.Thread(target=main, name="live-server", daemon=True)
        self.thread.start()
        ready.wait()
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        self.address = result
        return result

    def stop(self) -> None:
        """Close every stream and stop serving (waits a few seconds at most)."""
        if self.loop is None or self.thread is None or not self.thread.is_alive():
            return
        self.closing = True
        self.thread.join(timeout=CLOSE_TIMEOUT)

    async def _start(self) -> Address:
        app = web.Application(middlewares=[self._guard])
        app.router.add_get("/", self._index, allow_head=False)
        app.router.add_get("/events", self._events, allow_head=False)
        app.router.add_get("/state", self._state, allow_head=False)
        app.router.add_get("/game/{number}", self._game, allow_head=False)
        self.changed = asyncio.Event()
        runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=1.0,
            keepalive_timeout=KEEPALIVE,
        )
        await runner.setup()
        assert runner.server is not None
        gate = Gate(
            runner.server, self.clients_cap, self.header_timeout, refusal=BUSY,
            write_timeout=self.write_timeout,
        )
        loop = asyncio.get_running_loop()
        try:
            # The loop accepts up to ``backlog`` connections at a time before the gate sees
            # them: a few more files open for a moment, kept below the cap.
            listener = await loop.create_server(
                gate, self.address.host, self.address.port,
                backlog=min(BACKLOG, max(8, self.clients_cap // 2)), reuse_address=True,
            )
        except BaseException:
            await runner.cleanup()
            raise
        self.runner, self.listener, self.gate = runner, listener, gate
        sockets = listener.sockets
        port = sockets[0].getsockname()[1] if sockets else self.address.port
        self.public = any(not _loopback(str(sock.getsockname()[0])) for sock in sockets)
        bound = Address(self.address.host, int(port))
        self.hosts = _host_names(bound)
        return bound

    async def _tick(self) -> None:
        seen = -1
        while not self.closing:
            await asyncio.sleep(TICK)
            try:
                self.state.refresh()
            except Exception as exc:  # a snapshot that cannot be made is not shown
                log.warning("live page: cannot read the games in progress: %s", exc)
            if self.state.version != seen:
                seen = self.state.version
                self._wake()
        self._wake()

    def _wake(self) -> None:
        changed = self.changed
        self.changed = asyncio.Event()
        if changed is not None:
            changed.set()

    async def _cleanup(self) -> None:
        if self.listener is not None:
            self.listener.close()
        if self.runner is not None:
            await self.runner.cleanup()
        if self.listener is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.listener.wait_closed(), 1.0)

    # -- requests -------------------------------------------------------------------------
    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self.gate is not None:
            self.gate.started(request.transport)
        if self.hosts is not None and request.headers.get("Host", "").lower() not in self.hosts:
            return web.Response(
                status=421, text="421: this server does not answer for that Host\n"
            )
        if request.method != "GET":
            return web.Response(
                status=405, text="405: only GET is served here\n", headers={"Allow": "GET"}
            )
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except web.HTTPException:
            raise
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as exc:  # a bug here must not show a traceback to anyone
            path = _shown_path(request.path)
            log.error("live page: %s failed: %s: %s", path, type(exc).__name__, exc)
            log.debug("live page: %s", path, exc_info=True)
            return web.Response(status=500, text="500: the live page failed\n")

    async def _index(self, request: web.Request) -> web.Response:
        if self._page is None:
            self._page = _page(self.state)
        return web.Response(text=self._page, content_type="text/html", charset="utf-8")

    async def _state(self, request: web.Request) -> web.Response:
        """The whole state, encoded once per version of it however many clients ask."""
        version = self.state.version  # the body is at least this new
        if self._state_body is None or self._state_body[0] != version:
            cursor = 0
            finished: list[dict[str, Any]] = []
            while True:
                _, data, cursor = self.state.event(cursor)
                finished += data["finished"]
                if not data["more"]:
                    break
            data = {**data, "finished": finished, "first": 0, "more": False}
            self._state_body = (version, json.dumps(data, allow_nan=False).encode("utf-8"))
        return web.Response(body=self._state_body[1], content_type="application/json")

    async def _game(self, request: web.Request) -> web.Response:
        number = _game_number(request.match_info["number"])
        if number is None or not self.state.has_finished(number):
            raise web.HTTPNotFound(text="404: no such finished game\n")
        revealed = self.state.revealed
        if not self.state.deal_shown(number):
            return web.Response(
                text=_withheld(self.state, number), content_type="text/html", charset="utf-8",
                headers={"Cache-Control": "no-store"},
            )
        page = await self._game_page(number, revealed)
        if page is None:
            raise web.HTTPNotFound(text="404: no such finished game\n")
        return web.Response(body=page, content_type="text/html", charset="utf-8")

    async def _game_page(self, number: int, revealed: bool) -> bytes | None:
        """Game ``number``'s viewer page, rendered once (in a worker thread) and kept: the
        newest ``GAME_PAGES`` of them. Requests for a page being rendered wait for it."""
        key = (number, revealed)
        found = self._games.get(key)
        if found is not None:
            self._games.move_to_end(key)
            return found
        pending = self._rendering.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bytes | None] = loop.create_future()
        self._rendering[key] = future
        try:
            text = await loop.run_in_executor(None, _viewer, self.state, number, revealed)
            page = None if text is None else text.encode("utf-8")
            if page is not None:
                if revealed:  # the pages without the seed are not asked for any more
                    for old in [k for k in self._games if not k[1]]:
                        del self._games[old]
                self._games[key] = page
                while len(self._games) > GAME_PAGES:
                    self._games.popitem(last=False)
            future.set_result(page)
            return page
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a failure is the requests' to report
            raise
        finally:
            del self._rendering[key]

    def _encode(self, version: int, cursor: int, data: dict[str, Any]) -> bytes:
        key = (version, cursor)
        found = self._encoded.get(key)
        if found is None:
            if len(self._encoded) > 16:
                self._encoded.clear()
            text = json.dumps(data, separators=(",", ":"), allow_nan=False)
            found = self._encoded[key] = f"event: state\ndata: {text}\n\n".encode()
        return found

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        self.clients += 1
        try:
            await response.write(b"retry: 1000\n\n")
            cursor, seen = 0, -1
            while not self.closing:
                version, data, end = self.state.event(cursor)
                if version != seen or data["finished"]:
                    payload = self._encode(version, cursor, data)
                    await asyncio.wait_for(response.write(payload), WRITE_TIMEOUT)
                    seen, cursor = version, end
                    if data["more"]:
                        continue
                changed = self.changed
                assert changed is not None
                try:
                    await asyncio.wait_for(changed.wait(), HEARTBEAT)
                except TimeoutError:
                    await asyncio.wait_for(response.write(b": alive\n\n"), WRITE_TIMEOUT)
        except (ConnectionError, TimeoutError):
            pass  # the client left, or stopped reading: nothing is kept for it
        finally:
            self.clients -= 1
        return response


def _loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """What the server's event loop cannot handle (a client's connection reset, the system
    out of sockets for a moment): the loop goes on, and it is logged at debug level only."""
    exc = context.get("exception")
    log.debug("live page: %s%s", context.get("message", ""), f": {exc!r}" if exc else "")
