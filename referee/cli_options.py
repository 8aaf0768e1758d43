"""Command-line options that several ``ginref`` commands share, declared once."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

SEED_BITS: Final = 128
"""The entropy of a random seed: enough that no one can guess it or try every one."""


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
    # Python refuses to convert more than 4300 digits; such a seed seeds as text instead.
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 4000 else text


def random_seed() -> int:
    """A seed for a run given none: ``SEED_BITS`` random bits from the system's secure source.

    The seed decides every deck, so a guessable one would let an engine know every card; the
    seed becomes a deck through SHA-256 of its full decimal text (``ginproto.cards``), so all
    its bits count.
    """
    return secrets.randbits(SEED_BITS)
