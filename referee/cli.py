"""The ``ginref`` command line: a thin click layer over the referee and the library."""

from __future__ import annotations

import logging

import click

from ginproto import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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

from referee.replay import replay  # noqa: E402 - commands register after the group

cli.add_command(replay)
