"""Command-line options that several ``ginref`` commands share, declared once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from referee.clock import TimeControlError, duration

F = TypeVar("F", bound=Callable[..., Any])


class Duration(click.ParamType[float]):
    """Seconds: a finite positive number whose milliseconds fit in a protocol line
    (``referee.clock.duration``, the one check that config files use too)."""

    name = "seconds"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            text: object = value
        else:
            text = str(value).strip()
        try:
            return duration(text, "it")
        except TimeControlError as exc:
            self.fail(str(exc), param, ctx)


SECONDS = Duration()


def timeout_options(move_default: float = 10.0) -> Callable[[F], F]:
    """``--move-timeout`` (seconds per decision) and ``--startup-timeout`` (seconds for the
    handshake and each ``isready``)."""

    def decorate(command: F) -> F:
        command = click.option(
            "--startup-timeout",
            type=SECONDS,
            default=10.0,
            show_default=True,
            help="Seconds for the engine's handshake and for each isready.",
        )(command)
        return click.option(
            "--move-timeout",
            type=SECONDS,
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
