"""``--serve [HOST:]PORT`` of ``ginref tournament`` and ``ginref match``: the live page.

The option's type, and ``Live``: the page the run serves (``referee.views.live_page.LivePage``,
opened by ``referee.api`` before any engine starts, so that a port in use is an error before any
game) and, after the last game, kept up with the final standings until Ctrl-C. The state and the
server are ``referee.views.live`` and ``referee.views.live_server`` (the ``ginproto[web]`` extra).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import click

# The live state and the server are imported when --serve is given: ``ginref --help`` and a
# run without it need neither.
if TYPE_CHECKING:
    from referee.views.live import Address

SERVE_HELP = (
    "Serve a live page of the run on [HOST:]PORT (host 127.0.0.1 unless given, 0.0.0.0 for"
    " every interface: public; port 0: any free one), up until Ctrl-C after the last game."
    " Needs: pip install 'ginproto[web]'."
)


class ServeAddress(click.ParamType["Address"]):
    """``[HOST:]PORT``, as ``referee.views.live.Address``."""

    name = "[HOST:]PORT"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Address:
        from referee.views.live import Address, parse_address

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
    from referee.views.live import web_missing

    missing = web_missing()
    if missing is not None:
        raise click.UsageError(missing)


class Live:
    """The live page of one command's run: a ``referee.views.live_page.LivePage`` that says its
    address on stderr when the run opens it (``referee.api`` does, before any engine starts), closes
    with the command, and can stay up after the run until Ctrl-C."""

    def __init__(self, address: Address) -> None:
        from referee.views.live_page import LivePage

        self.page = LivePage(address, on_open=self._opened)
        click.get_current_context().call_on_close(self.page.close)

    def _opened(self, bound: Address) -> None:
        click.echo(f"Live page: {bound.url()}", err=True)
        server = self.page.server
        if server is not None and server.public:
            click.echo(
                f"warning: the live page is public: anyone who can reach {bound.url()} sees"
                f" the run (--serve 127.0.0.1:{bound.port} keeps it to this machine)",
                err=True,
            )

    def stay(self) -> NoReturn:
        """Keep the page up with the final state until Ctrl-C (exit 130) or SIGTERM (143)."""
        server = self.page.server
        assert server is not None, "the run opened the page"
        click.echo(
            f"The live page stays up at {server.address.url()} with the final"
            " standings; Ctrl-C to stop.",
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
