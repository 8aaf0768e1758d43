"""Command-line options that several ``ginref`` commands share, declared once."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from referee.clock import DEFAULT_MARGIN

if TYPE_CHECKING:
    from referee.dask_backend import DaskCluster

F = TypeVar("F", bound=Callable[..., Any])

SEED_BITS: Final = 128
"""The entropy of a random seed: enough that no one can guess it or try every one."""


def _margin(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and 0 <= value <= 3600):
        raise click.BadParameter("must be a number of seconds from 0 to 3600")
    return value


def margin_option(default: float | None = DEFAULT_MARGIN) -> Callable[[F], F]:
    """``--time-margin`` (alias ``--timemargin``, as in cutechess and fastchess): seconds of
    grace on every decision's limit and on the game clock (spec/PROTOCOL.md, "Time")."""
    return click.option(
        "--time-margin",
        "--timemargin",
        "time_margin",
        type=float,
        default=default,
        show_default=default is not None,
        callback=_margin,
        help="Seconds of grace on each time limit, for pipe and scheduling delays.",
    )


def timeout_options(move_default: float = 10.0) -> Callable[[F], F]:
    """``--move-timeout`` (seconds per decision), ``--startup-timeout`` (seconds for the
    handshake and each ``isready``) and ``--time-margin``."""

    def decorate(command: F) -> F:
        command = margin_option()(command)
        command = click.option(
            "--startup-timeout",
            type=click.FloatRange(min=0.001),
            default=10.0,
            show_default=True,
            help="Seconds for the engine's handshake and for each isready.",
        )(command)
        return click.option(
            "--move-timeout",
            type=click.FloatRange(min=0.001),
            default=move_default,
            show_default=True,
            help="Seconds for each decision of an engine.",
        )(command)

    return decorate


def env_option(numbered: bool) -> Callable[[F], F]:
    """``--env NAME=VALUE`` (with ``numbered``, ``[N:]NAME=VALUE`` for engine N or all): a
    variable added to the minimal environment an engine gets (spec/PROTOCOL.md)."""
    return click.option(
        "--env",
        "env",
        multiple=True,
        metavar="[N:]NAME=VALUE" if numbered else "NAME=VALUE",
        help="An environment variable for the engine"
        + (" N or all" if numbered else "")
        + " (repeatable); engines get only PATH, HOME and LANG otherwise.",
    )


def env_item(text: str, item: str) -> tuple[str, str]:
    """``NAME=VALUE`` of an ``--env`` option (``item`` is the whole option, for messages)."""
    name, sep, value = text.partition("=")
    if not sep or not name or "\0" in text:
        raise click.BadParameter(f"expected [N:]NAME=VALUE, not {item!r}", param_hint="--env")
    return name, value


def rule_items(items: Sequence[str]) -> dict[str, str]:
    """``--rule NAME=VALUE`` options as a mapping; ``-`` in a name reads as ``_``."""
    rules: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, not {item!r}", param_hint="--rule")
        rules[name.strip().replace("-", "_")] = value
    return rules


def seed_value(text: str) -> int | str:
    """A ``--seed``: a whole number, or any other text, which seeds just as well."""
    # Python refuses to convert more than 4300 digits; such a seed seeds as text instead.
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 4000 else text


def random_seed() -> int:
    """A seed for a run given none: ``SEED_BITS`` random bits from the system's secure source.

    The seed decides every deck, so a guessable one would let an engine know every card; the
    seed becomes a deck through SHA-256 of its full decimal text (``ginproto.cards``), so all
    its bits count.
    """
    return secrets.randbits(SEED_BITS)


def dask_option(help_text: str) -> Callable[[F], F]:
    """``--dask ADDRESS``: a Dask scheduler's address, or ``local:N``."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        from referee.dask_backend import parse_address

        try:
            return parse_address(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return click.option("--dask", metavar="ADDRESS", callback=check, help=help_text)


def open_cluster(address: str) -> DaskCluster:
    """Connect to the Dask cluster (or start ``local:N``); its errors become clear messages."""
    from referee.dask_backend import DaskCluster, DaskError

    try:
        return DaskCluster(address)
    except DaskError as exc:
        raise click.ClickException(str(exc)) from None
