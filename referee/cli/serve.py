"""``--serve [HOST:]PORT`` of ``ginref tournament`` and ``ginref match``: the live page.

The option's type, and ``Live``: the page the run serves (``referee.views.live_page.LivePage``,
opened by ``referee.api`` before any engine starts, so that a port in use is an error before any
game) and, after the last game, kept up with the final standings until Ctrl-C (or for
``--serve-for`` seconds). The state and the server are ``referee.views.live`` and
``referee.views.live_server`` (the ``ginproto[web]`` extra).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

# The live state and the server are imported when --serve is given: ``ginref --help`` and a
# run without it need neither.
if TYPE_CHECKING:
    from referee.cli.interrupts import Interrupts
    from referee.views.live import Address

SERVE_HELP = (
    "Serve a live page of the run on [HOST:]PORT (host 127.0.0.1 unless given; port 0: any"
    " free one), up until Ctrl-C after the last game (see --serve-for)."
    " Needs: pip install 'ginproto[web]'."
)
SERVE_FOR_HELP = (
    "With --serve: keep the page up SECONDS after the last game, then exit"
    " (0: exit with the run). Default: until Ctrl-C."
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
    """``--serve [HOST:]PORT`` and ``--serve-for SECONDS``."""
    serve = click.option(
        "--serve", type=ServeAddress(), metavar="[HOST:]PORT", help=SERVE_HELP
    )
    serve_for = click.option(
        "--serve-for",
        type=StayTime(),
        metavar="SECONDS",
        help=SERVE_FOR_HELP,
    )

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        return serve(serve_for(f))

    return decorate


MAX_SERVE_FOR = 366 * 24 * 3600.0
"""A year: a longer stay is no different from one until Ctrl-C."""


class StayTime(click.ParamType[float]):
    """``--serve-for``: seconds, 0 up to a year."""

    name = "seconds"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not 0 <= seconds <= MAX_SERVE_FOR:  # NaN too
            self.fail(
                f"{value!r}: give seconds from 0 (end with the run) to {MAX_SERVE_FOR:.0f}"
                " (leave --serve-for out to stay up until Ctrl-C)",
                param,
                ctx,
            )
        return seconds


def check_serve(serve: Address | None, serve_for: float | None) -> None:
    """Refuse (exit 2) ``--serve`` where the web extra is not installed, and ``--serve-for``
    without ``--serve``."""
    from referee.views.live import web_missing

    if serve_for is not None and serve is None:
        raise click.UsageError("--serve-for says how long the live page of --serve stays up:"
                               " give --serve too")
    if serve is None:
        return
    missing = web_missing()
    if missing is not None:
        raise click.UsageError(missing)


class Live:
    """The live page of one command's run: a ``referee.views.live_page.LivePage`` that says its
    address on stderr when the run opens it (``referee.api`` does, before any engine starts), closes
    with the command, and can stay up after the run until Ctrl-C or for a number of seconds."""

    def __init__(self, address: Address) -> None:
        from referee.views.live_page import LivePage

        self.page = LivePage(address, on_open=self._opened)
        click.get_current_context().call_on_close(self.page.close)

    @staticmethod
    def _opened(bound: Address) -> None:
        click.echo(f"Live page: {bound.url()}", err=True)

    def stay(self, signals: Interrupts, seconds: float | None) -> None:
        """Keep the page up with the final state until Ctrl-C (exit 130) or SIGTERM (143), or
        for ``seconds`` (None: no end), then return. The signals are the command's own handler's
        (``referee.cli.interrupts``), installed for its whole run: one received before the wait
        began ends it at once."""
        server = self.page.server
        assert server is not None, "the run opened the page"
        if seconds == 0:
            return
        click.echo(
            f"The live page stays up at {server.address.url()} with the final standings"
            + ("; Ctrl-C to stop." if seconds is None else f" for {seconds:g} s (Ctrl-C to stop)."),
            err=True,
        )
        signum = signals.wait(seconds)
        sys.stderr.flush()
        if signum is not None:
            raise click.exceptions.Exit(128 + signum)
