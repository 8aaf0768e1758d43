"""The live page's web server (aiohttp, the ``ginproto[web]`` extra), in a thread of its own.

It serves, by GET only (any other method is a 405, an unknown path a 404):

- ``/``: the live page (``referee/views/html/assets/live.html``), which loads nothing from anywhere
  else and listens to ``/events``;
- ``/events``: the run's state as server-sent events, one ``state`` event each time it changes
  (a few a second at most); a client that reads slowly skips to the newest state instead of
  queueing the ones it missed, so the server keeps no backlog for anyone;
- ``/state``: the same state as one JSON document, every finished game included;
- ``/game/N``: finished game N in the replay viewer (``referee.views.html``), from its stored
record.

The state is ``referee.views.live.LiveState``: what the run stored and what a spectator may see of
the games in progress. The server only reads it.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import threading
from typing import Any, Final

from aiohttp import web

from referee.views.live import Address, LiveState

log = logging.getLogger(__name__)

__all__ = ["LiveServer"]

TICK: Final = 0.2  # seconds between two looks at the state
HEARTBEAT: Final = 15.0  # seconds of silence after which a comment line keeps the stream open
WRITE_TIMEOUT: Final = 60.0  # a client that takes no byte for this long is dropped
CLOSE_TIMEOUT: Final = 5.0


def _page(state: LiveState) -> str:
    from referee.views.html.page import asset, fill

    parts = {
        "title": html.escape(state.title),
        "style": asset("viewer.css") + "\n" + asset("live.css"),
        "script": asset("live.js"),
    }
    return fill(asset("live.html"), parts)


def _viewer(state: LiveState, number: int) -> str | None:
    """Finished game ``number`` in the replay viewer, or None if there is no such game."""
    from ginproto.record import loads
    from referee.views.html.model import game_data
    from referee.views.html.page import render_page

    text = state.record(number)
    if text is None:
        return None
    records = loads(text)
    if not records:
        return None
    title = f"{state.title}: game {number}"
    return render_page(title, [game_data(records[0], number)])


class LiveServer:
    """Serves ``state`` on ``address`` from a thread with its own event loop."""

    def __init__(self, state: LiveState, address: Address) -> None:
        self.state = state
        self.address = address
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.runner: web.AppRunner | None = None
        self.closing = False
        self.changed: asyncio.Event | None = None
        self.clients = 0
        self._encoded: dict[tuple[int, int], bytes] = {}
        self._page: str | None = None

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
        app.router.add_get(r"/game/{number:\d+}", self._game, allow_head=False)
        self.changed = asyncio.Event()
        runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=1.0
        )
        await runner.setup()
        site = web.TCPSite(runner, self.address.host, self.address.port, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self.runner = runner
        port = runner.addresses[0][1] if runner.addresses else self.address.port
        return Address(self.address.host, int(port))

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
        if self.runner is not None:
            await self.runner.cleanup()

    # -- requests -------------------------------------------------------------------------
    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
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
            log.error("live page: %s failed: %s: %s", request.path, type(exc).__name__, exc)
            log.debug("live page: %s", request.path, exc_info=True)
            return web.Response(status=500, text="500: the live page failed\n")

    async def _index(self, request: web.Request) -> web.Response:
        if self._page is None:
            self._page = _page(self.state)
        return web.Response(text=self._page, content_type="text/html", charset="utf-8")

    async def _state(self, request: web.Request) -> web.Response:
        cursor = 0
        finished: list[dict[str, Any]] = []
        while True:
            _, data, cursor = self.state.event(cursor)
            finished += data["finished"]
            if not data["more"]:
                break
        data = {**data, "finished": finished, "first": 0, "more": False}
        return web.json_response(data)

    async def _game(self, request: web.Request) -> web.Response:
        number = int(request.match_info["number"])
        loop = asyncio.get_running_loop()
        page = await loop.run_in_executor(None, _viewer, self.state, number)
        if page is None:
            raise web.HTTPNotFound(text=f"404: no finished game {number}\n")
        return web.Response(text=page, content_type="text/html", charset="utf-8")

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
