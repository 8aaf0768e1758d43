"""``ginref stats``: the result block of ``ginref match``, computed from record files.

The standings of an interrupted run, of several runs merged, or of games played elsewhere: each
game in the files is replayed and checked by the rules engine, and the games that verify are
added up by the same ``referee.results.report.Standings`` that a match uses, so the figures are the
match's own. The work is ``referee.results.report.summarize_records``; this module only prints.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from referee.results.report import RecordStandings

log = logging.getLogger(__name__)

MAX_SHOWN_SKIPPED = 20


@click.command("stats")
@click.argument(
    "files",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=str),
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the figures as JSON (those of match --json)."
)
def stats(files: tuple[str, ...], as_json: bool) -> None:
    """The standings of the games in record FILES ('-' reads standard input).

    Prints what `ginref match` prints at its end: the score, the Elo difference with its
    interval and the LOS, the net points per hand, the duplicate pairs when the games were
    played as duplicate sets, and the standings with each engine's faults. Every game is
    replayed and checked first; a game that does not verify is left out and named on standard
    error, as is the last game of a record cut short (its run stopped mid-game: see "A record
    cut short" in docs/USAGE.md).

        ginref stats games.gin

        ginref stats run1.gin run2.gin --json
    """
    from ginproto.record import RecordError
    from referee.results.report import finite_json, summarize_records

    if files.count("-") > 1:
        raise click.UsageError("standard input ('-') can be read only once")
    try:
        result = summarize_records(files)
    except RecordError as exc:
        raise click.ClickException(str(exc)) from None
    _report_skipped(result)
    if not result.standings.games:
        raise click.ClickException("no game in these records verifies: nothing to count")
    if as_json:
        click.echo(json.dumps(finite_json(result.to_json()), indent=2, allow_nan=False))
        return
    for line in result.standings.lines():
        click.echo(line)


def _report_skipped(result: RecordStandings) -> None:
    from ginproto.replay import describe_cut

    for s in result.skipped[:MAX_SHOWN_SKIPPED]:
        if s.cut:  # the line ``ginref replay`` prints for the same game
            click.echo(f"{s.path}: {describe_cut(s.game, s.error)}", err=True)
        else:
            click.echo(f"{s.path}: game {s.game} left out: {s.error}", err=True)
    if len(result.skipped) > MAX_SHOWN_SKIPPED:
        click.echo(f"... and {len(result.skipped) - MAX_SHOWN_SKIPPED} more left out", err=True)
