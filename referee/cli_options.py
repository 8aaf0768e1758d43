"""Command-line options that several ``ginref`` commands share, declared once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from referee.dask_backend import DaskCluster

F = TypeVar("F", bound=Callable[..., Any])


def timeout_options(move_default: float = 10.0) -> Callable[[F], F]:
    """``--move-timeout`` (seconds per decision) and ``--startup-timeout`` (seconds for the
    handshake and each ``isready``)."""

    def decorate(command: F) -> F:
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
    return int(text) if text.isdigit() else text


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
