"""The ``ginref`` command line: a thin click layer over the referee and the library.

The group (``cli``) and the console entry point (``main``) live here; each command is a module
of this package (``referee.cli.match``, ``referee.cli.tournament``, ...) and the options they
share are ``referee.cli.options``. The machinery the commands drive (``referee.match``,
``referee.tournament``, ``referee.check``, ``referee.replay``, ``referee.play``) lives outside,
usable without click.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from typing import Any

import click

from ginproto import __version__

# Each command is imported when it runs (or shows its help), so that a command imports only
# what it uses: ``ginref match`` neither the tournament store nor the conformance battery.
COMMANDS = {
    "check": "referee.cli.check",
    "match": "referee.cli.match",
    "play": "referee.cli.play",
    "replay": "referee.cli.replay",
    "stats": "referee.cli.stats",
    "tournament": "referee.cli.tournament",
}


class LazyGroup(click.Group):
    """A group whose commands are the module-level command of the same name in each module
    of ``lazy``, imported on first use (click's "lazily loading subcommands")."""

    def __init__(self, *args: Any, lazy: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            command = getattr(importlib.import_module(self.lazy[cmd_name]), cmd_name)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy[cmd_name]}.{cmd_name} is not a click command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="ginref")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for every line).")
def cli(verbose: int) -> None:
    """ginref: a referee for Gin Rummy engines.

    Plays engines against each other over a UCI-like line protocol (spec/PROTOCOL.md),
    enforces the rules, rules on faults, and records every game for replay.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def main() -> None:
    cli(prog_name="ginref")
