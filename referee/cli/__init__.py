"""The ``ginref`` command line: a thin click layer over the referee and the library.

The group (``cli``) and the console entry point (``main``) live here; each command is a module
of this package (``referee.cli.match``, ``referee.cli.tournament``, ...) and the options they
share are ``referee.cli.options``. The machinery the commands drive (``referee.api``,
``referee.seat.check``, ``referee.views.replay``, ``referee.views.play``) lives outside, usable
without click. Every refusal of the referee (a ``referee.errors.RefereeError``) becomes ``Error:
MESSAGE`` and its exit code in one place, the group's ``invoke``.
"""

from __future__ import annotations

import importlib
import io
import logging
import os
import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from ginproto import __version__
from referee.errors import RefereeError

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

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


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

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a `RefereeError` it lets through (the referee refusing what it
        was asked) becomes ``Error: MESSAGE`` and the error's exit code, here and nowhere
        else. A command catches one only to say more (where to resume, say)."""
        try:
            return super().invoke(ctx)
        except RefereeError as exc:  # as click shows its own ClickException
            click.echo(f"Error: {exc}", err=True)
            raise click.exceptions.Exit(exc.exit_code) from None


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


class StandardOutputError(OSError):
    """Standard output could not be written (a full disk, say)."""


class _GuardedStdout(io.RawIOBase):
    """File descriptor 1, whose write errors are `StandardOutputError` (a closed pipe's stays
    ``BrokenPipeError``, which click and the commands already stop on quietly)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer) -> int:
        try:
            return os.write(self._fd, data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StandardOutputError(exc.errno, exc.strerror) from None


def _is_fd_1(stream: object) -> bool:
    try:
        return stream is not None and stream.fileno() == 1  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return False


def main() -> None:
    out = sys.stdout
    if _is_fd_1(out):
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(_GuardedStdout(1)),
            encoding=out.encoding,
            errors=out.errors,
            line_buffering=bool(out.line_buffering),
        )
    try:
        try:
            code = _run()
        finally:
            sys.stdout.flush()
    except StandardOutputError as exc:
        devnull = os.open(os.devnull, os.O_WRONLY)  # nothing is written there again at exit
        os.dup2(devnull, 1)
        os.close(devnull)
        sys.stderr.write(f"Error: cannot write the standard output: {exc.strerror or exc}\n")
        raise SystemExit(1) from None
    except KeyboardInterrupt:  # as the output was flushed
        sys.stderr.write("\nInterrupted.\n")
        code = 130
    sys.stderr.flush()
    # Everything is written: from here on, a Ctrl-C ends the process by its default action
    # (a shell says 130), not by a KeyboardInterrupt that the interpreter's exit would report
    # as an ignored exception, or never look at.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise SystemExit(code)


def _run() -> int:
    """Run ``ginref`` as click's standalone mode would, but for Ctrl-C: wherever it comes (a
    command that has its own answer, such as ``match``'s standings, exits 130 itself), it
    ends the run with exit 130 and one line, never click's ``Aborted!`` and exit 1."""
    try:
        code = cli.main(prog_name="ginref", standalone_mode=False)
    except click.exceptions.Abort as exc:  # Ctrl-C (click wrote a line break), or end of input
        interrupted = isinstance(exc.__cause__, KeyboardInterrupt)
        click.echo("Interrupted." if interrupted else "Aborted!", err=True)
        raise SystemExit(130 if interrupted else 1) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:  # one that came after the command
        click.echo("\nInterrupted.", err=True)
        raise SystemExit(130) from None
    return code if isinstance(code, int) else 0
