"""``--serve [HOST:]PORT`` of ``ginref tournament`` and ``ginref match``: the live page.

The option's type, and ``Live``: the server started before any engine (a port in use is an
error before any game), the watcher of the games in progress, and, after the last game, the
page kept up with the final standings until Ctrl-C. The state and the server are
``referee.live`` and ``referee.live_server`` (the ``ginproto[web]`` extra).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import click

# The live state and the server are imported when --serve is given: ``ginref --help`` and a
# run without it need neither.
if TYPE_CHECKING:
    from referee.live import Address, LiveState, Watcher
    from referee.live_server import LiveServer
    from referee.match import JobRunner, Seats

SERVE_HELP = (
    "Serve a live page of the run on [HOST:]PORT (host 127.0.0.1 unless given; port 0: any"
    " free one), up until Ctrl-C after the last game. Needs: pip install 'ginproto[web]'."
)


class ServeAddress(click.ParamType["Address"]):
    """``[HOST:]PORT``, as ``referee.live.Address``."""

    name = "[HOST:]PORT"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Address:
        from referee.live import Address, parse_address

        if isinstance(value, Address):
            return value
        try:
            return parse_address(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def serve_option() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--serve", type=ServeAddress(), metavar="[HOST:]PORT", help=SERVE_HELP)


def check_web() -> None:
    """Refuse ``--serve`` (exit 2) where the web extra is not installed."""
    from referee.live import web_missing

    missing = web_missing()
    if missing is not None:
        raise click.UsageError(missing)


class Live:
    """The live page of one run."""

    def __init__(self, state: LiveState, server: LiveServer) -> None:
        self.state = state
        self.server = server
        self.watcher: Watcher | None = None

    @classmethod
    def open(cls, address: Address, title: str, kind: str) -> Live:
        """Start serving (the page says "starting" until the run begins); a port in use, or
        an address that cannot be bound, is an error (exit 1) before any engine starts."""
        check_web()
        from referee.live import LiveState
        from referee.live_server import LiveServer

        state = LiveState(title, kind)
        server = LiveServer(state, address)
        try:
            bound = server.start()
        except OSError as exc:
            raise click.ClickException(
                f"cannot serve the live page on {address.host}:{address.port}:"
                f" {exc.strerror or exc}"
            ) from None
        live = cls(state, server)
        click.get_current_context().call_on_close(live.close)
        click.echo(f"Live page: {bound.url()}", err=True)
        return live

    def watch(self, names: Sequence[str]) -> Callable[[Callable[[], Seats]], Callable[[], Seats]]:
        """What wraps a seats factory so that its games in progress show on the page."""
        from referee.live import Watcher

        self.watcher = Watcher(self.state, names)
        return self.watcher.seats

    def watching(self, runner: JobRunner, names: Sequence[str]) -> JobRunner:
        """``runner`` (a match's local one), its games in progress shown on the page."""
        wrap = self.watch(names)

        def run(jobs: Any, seats: Any, concurrency: int, stop: Any) -> Any:
            return runner(jobs, wrap(seats), concurrency, stop)

        return run

    def over(self, status: str) -> None:
        self.state.run_over(status)

    def stay(self) -> NoReturn:
        """Keep the page up with the final state until Ctrl-C (exit 130) or SIGTERM (143)."""
        click.echo(
            f"The live page stays up at {self.server.address.url()} with the final standings;"
            " Ctrl-C to stop.",
            err=True,
        )
        received: list[int] = []
        done = threading.Event()

        def handler(signum: int, frame: FrameType | None) -> None:
            received.append(signum)
            done.set()

        previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while not done.wait(0.5):
                pass
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
        sys.stderr.flush()
        raise click.exceptions.Exit(128 + received[0])

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
        self.server.stop()
