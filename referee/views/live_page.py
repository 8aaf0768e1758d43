"""The live page of one run: its state, its server and the watcher of its games in progress,
made by whoever wants the page (``ginref --serve``, a notebook) and fed by the run
(``referee.api``). The state and the watcher are ``referee.views.live``'s, the server
``referee.views.live_server``'s (the ``ginproto[web]`` extra: importing this module needs it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from referee.errors import CannotServe
from referee.views.live import Address, LiveState, Watcher
from referee.views.live_server import LiveServer

if TYPE_CHECKING:
    from ginproto.table import Player
    from referee.results.played import GameJob

__all__ = ["LivePage"]


class LivePage:
    """The live page of one run: its state, its server and the watcher of its games in
    progress. Made before the run, ``open``\\ ed by it (before any engine starts, so that a
    port in use refuses the run at once), fed by it, and closed by whoever made it: a page
    may outlive its run, as ``ginref``'s stays up with the final standings until Ctrl-C.
    ``on_open`` is told the address the server bound (port 0 asks for any free one)."""

    def __init__(
        self, address: Address, on_open: Callable[[Address], None] | None = None
    ) -> None:
        self.address = address
        self.on_open = on_open
        self.state = LiveState("", "")
        self.server: LiveServer | None = None
        self.watcher: Watcher | None = None

    def open(self, title: str, kind: str) -> Address:
        """Start serving (the page says "starting" until the run begins); `CannotServe`
        where the address cannot be bound."""
        self.state.title, self.state.kind = title, kind
        server = LiveServer(self.state, self.address)
        try:
            bound = server.start()
        except OSError as exc:
            raise CannotServe(
                f"cannot serve the live page on {self.address.host}:{self.address.port}:"
                f" {exc.strerror or exc}"
            ) from None
        self.server = server
        if self.on_open is not None:
            self.on_open(bound)
        return bound

    def watch(self, names: Sequence[str]) -> Callable[[GameJob, list[Player]], list[Player]]:
        """What wraps each game's players so that its games in progress show on the page
        (a local backend's ``watch``)."""
        self.watcher = Watcher(self.state, names)
        return self.watcher.players

    def over(self, status: str, resumable: bool = False) -> None:
        """The run is over: see `LiveState.run_over`."""
        self.state.run_over(status, resumable)

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
        if self.server is not None:
            self.server.stop()
