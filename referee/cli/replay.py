"""``ginref replay``: show, verify or export the games of a record file.

The rendering, the JSON export and the checks are ``referee.views.replay``'s and
``ginproto.replay``'s; this module reads the options, picks the games and turns errors into exit
codes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

import click

from ginproto.text import plural
from referee.cli.options import OUTPUT_FILE, OUTPUTS_HELP

# The records, the rules and the renderer are imported by the functions that use them.
if TYPE_CHECKING:
    from ginproto.record import GameRecord, RecordError


def _records(file: str) -> Iterator[GameRecord]:
    from ginproto.record import RecordReader, read_games

    if file == "-":
        yield from RecordReader(sys.stdin.buffer, "<stdin>")
    else:
        yield from read_games(file)


def _fail_on(errors: Sequence[RecordError], summary: str, note: str = "") -> None:
    """Print each error once, in the order found (the first wrong line first), and ``note``,
    then exit 1 with ``summary``."""
    from referee.views.replay import MAX_SHOWN_ERRORS

    for error in errors[:MAX_SHOWN_ERRORS]:
        click.echo(str(error), err=True)
    if len(errors) > MAX_SHOWN_ERRORS:
        click.echo(f"... and {len(errors) - MAX_SHOWN_ERRORS} more", err=True)
    if note:
        click.echo(note, err=True)
    raise click.ClickException(summary)


def _wrong(file: str, number: int) -> str:
    return f"{file}: game {number} does not verify"


@click.command("replay", epilog=OUTPUTS_HELP)
@click.argument(
    "file", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=str)
)
@click.option(
    "--verify", is_flag=True, help="Re-run every move, check every line; exit 1 at a wrong one."
)
@click.option("--json", "as_json", is_flag=True, help="Write JSON lines, one object per hand.")
@click.option(
    "--openspiel",
    is_flag=True,
    help="Write each hand as an OpenSpiel gin_rummy action sequence, one JSON line per hand"
    " (docs/OPENSPIEL.md).",
)
@click.option("-g", "--game", "game_no", type=click.IntRange(min=1), help="Only game N (from 1).")
@click.option(
    "-n", "--hand", "hand_no", type=click.IntRange(min=1), help="Only hand N of each game."
)
@click.option("--step", is_flag=True, help="Walk the hands move by move: Enter next, q quit.")
@click.option(
    "--html",
    "html_out",
    type=OUTPUT_FILE,
    metavar="OUT.html",
    help="Write a self-contained page to step through the games in a browser.",
)
@click.option(
    "--color/--no-color",
    "colour",
    default=None,
    help="Colour the cards (default: on a terminal, unless NO_COLOR is set).",
)
def replay(
    file: str,
    verify: bool,
    as_json: bool,
    openspiel: bool,
    game_no: int | None,
    hand_no: int | None,
    step: bool,
    colour: bool | None,
    html_out: str | None = None,
) -> None:
    """Show, verify or export the games of the record FILE ('-' reads standard input).

    The record format is spec/RECORD.md. With --verify, exit 0 when every game verifies,
    otherwise exit 1 naming the first wrong line as FILE:LINE and why.

    A record cut short (its run stopped mid-game) is shown without its cut last game, which is
    named on standard error (exit 0); --verify exits 1 for it: see "A record cut short" in
    docs/USAGE.md.
    """
    from ginproto.record import RecordError

    if sum((verify, as_json, openspiel, step, html_out is not None)) > 1:
        raise click.UsageError("choose one of --verify, --json, --openspiel, --step and --html")
    if html_out is not None and hand_no is not None:
        raise click.UsageError("--html shows every hand; link one as OUT.html#g1h3 instead")
    if step and file == "-":
        raise click.UsageError("--step reads the keyboard on standard input; give a FILE")
    try:
        if verify:
            _verify(file, game_no)
        elif as_json:
            _json(file, game_no, hand_no)
        elif openspiel:
            from ginproto.openspiel import export_hands

            _json(file, game_no, hand_no, export_hands)
        elif html_out is not None:
            _html(file, game_no, html_out)
        else:
            _show(file, game_no, hand_no, step, colour)
    except RecordError as exc:
        raise click.ClickException(str(exc)) from None
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as other tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(1) from None


def _selected(
    file: str, game_no: int | None, keep_cut: bool = False
) -> Iterator[tuple[int, GameRecord]]:
    """The games asked for, but a game the end of the file cut short (a run stopped
    mid-game): that one is named on standard error and left out, as ``ginref stats`` does
    (``keep_cut``: it is the caller's to name)."""
    from ginproto.replay import cut_short, describe_cut

    found = shown = 0
    for number, record in enumerate(_records(file), start=1):
        found = number
        if game_no is None or number == game_no:
            cut = None if keep_cut else cut_short(record)
            if cut is not None:
                if game_no is not None:
                    raise click.ClickException(
                        f"{file}: game {number} is truncated at line {cut.line}, before its end"
                        " line (the run that wrote it stopped mid-game): only finished games"
                        " can be shown or verified"
                    )
                click.echo(f"{file}: {describe_cut(number, cut)}", err=True)
                continue
            shown += 1
            yield number, record
        if game_no is not None and number >= game_no:
            return
    if game_no is not None:
        raise click.UsageError(f"there is no game {game_no}: {file} holds {found}")
    if not found:
        raise click.ClickException(f"{file}: no games in this record")
    if not shown:
        raise click.ClickException(f"{file}: no finished game in this record")


def _hands(record: GameRecord) -> list[int]:
    """The hand numbers a record's game holds."""
    from ginproto.record import HandStart

    return [i.number for i in record.items if isinstance(i, HandStart)]


def _with_hand(
    file: str, game_no: int | None, hand_no: int | None
) -> Iterator[tuple[int, GameRecord]]:
    """The selected games that hold hand ``hand_no`` (all of them, without one), each checked
    before anything of it is shown: a hand asked for that is not there is an error, with
    nothing printed first when a single game was asked for."""
    found = False
    for number, record in _selected(file, game_no):
        if hand_no is not None and record.items and hand_no not in _hands(record):
            if game_no is not None:
                count = len(_hands(record))
                raise click.UsageError(
                    f"there is no hand {hand_no} in game {game_no} of {file}: it has"
                    f" {plural(count, 'hand')}"
                )
            continue
        found = True
        yield number, record
    if hand_no is not None and not found:
        raise click.UsageError(f"there is no hand {hand_no} in any game of {file}")


def _verify(file: str, game_no: int | None) -> None:
    from ginproto.record import HandStart, Play
    from ginproto.replay import FileReport, cut_short, describe_cut, verify_game

    report = FileReport()
    cut_off = ""
    for number, record in _selected(file, game_no, keep_cut=game_no is None):
        errors = verify_game(record)
        cut = cut_short(record, errors)
        if cut is not None:  # the last game: named, not counted, and the file is not whole
            cut_off = f"{file}: {describe_cut(number, cut)}"
            continue
        # A "game" without items only carries errors of lines that belong to no game.
        if record.items:
            report.games += 1
            if errors:
                report.bad_games += 1
        report.hands += sum(isinstance(i, HandStart) for i in record.items)
        report.moves += sum(isinstance(i, Play) for i in record.items)
        report.errors.extend(errors)
    if report.errors:
        if not report.games:
            summary = f"{file}: no game can be read from this file"
        else:
            bad = report.bad_games
            summary = (
                f"{file}: {bad} of {plural(report.games, 'game')}"
                f" {'does' if bad == 1 else 'do'} not verify"
            )
        _fail_on(report.errors, summary, cut_off)
    counts = (
        f"{plural(report.games, 'game')}, {plural(report.hands, 'hand')},"
        f" {plural(report.moves, 'move')}"
    )
    if cut_off:
        click.echo(cut_off, err=True)
        raise click.ClickException(
            f"{file}: not a whole record: it ends in a truncated game; what comes before it"
            f" verifies: {counts}"
            if report.games
            else f"{file}: not a whole record: its only game is truncated"
        )
    click.echo(f"{file}: {counts}: all verified")


def _json(
    file: str,
    game_no: int | None,
    hand_no: int | None,
    hands: Callable[[GameRecord, int], Iterable[dict[str, Any]]] | None = None,
) -> None:
    """JSON lines of the hands, by ``hands`` (default: ``referee.views.replay.json_hands``)."""
    from ginproto.replay import verify_game
    from referee.views.replay import json_hands

    hands = hands or json_hands
    out = sys.stdout
    for number, record in _with_hand(file, game_no, hand_no):
        errors = verify_game(record)
        if errors:
            _fail_on(errors, _wrong(file, number))
        for obj in hands(record, number):
            if hand_no is None or obj["hand"] == hand_no:
                out.write(json.dumps(obj, separators=(",", ":")) + "\n")


def _html(file: str, game_no: int | None, out: str) -> None:
    from referee.views.html.viewer import write_replay  # the page's assets load only when asked

    selected = list(_selected(file, game_no))
    try:
        count = write_replay(
            [r for _, r in selected], out, f"{os.path.basename(file)}", [n for n, _ in selected]
        )
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
    click.echo(f"{out}: {plural(count, 'game')}", err=True)


def _keyboard() -> IO[str] | None:
    """Where ``--step`` reads its keys: the terminal, when standard input is not one."""
    if sys.stdin.isatty():
        return None
    try:
        return open("/dev/tty")  # closed by the caller
    except OSError:
        return None  # no terminal at all: read standard input


def _show(
    file: str, game_no: int | None, hand_no: int | None, step: bool, colour: bool | None
) -> None:
    from ginproto.record import RecordError
    from ginproto.replay import replay_game, verify_game
    from referee.views.narration import choose_style
    from referee.views.replay import Quit, Renderer

    out = sys.stdout
    style = choose_style(out, colour)
    keys = _keyboard() if step else None
    try:
        for number, record in _with_hand(file, game_no, hand_no):
            if record.errors and not record.items:
                _fail_on(record.errors, f"{file}: no game can be read from this file")
            renderer = Renderer(record, number, style, out, hand_no, step, keys)
            renderer.header()
            try:
                replay_game(record, renderer)
            except Quit:
                return
            except RecordError as exc:
                renderer.echo(style.bad(f"  !! {exc}"))
                _fail_on(verify_game(record) or [exc], _wrong(file, number))
            if record.errors:
                _fail_on(record.errors, _wrong(file, number))
            out.write("\n")
    finally:
        if keys is not None:
            keys.close()
