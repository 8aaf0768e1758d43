"""``ginref check ENGINE``: run the conformance battery (``referee.seat.check``) and print it."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from referee.cli.options import (
    announce_sandbox,
    engine_limits,
    env_item,
    env_option,
    sandbox_mode,
    sandbox_options,
    sandboxed,
    timeout_options,
)
from referee.cli.remote import NO_REMOTE, RemoteOptions, remote_options

if TYPE_CHECKING:
    from referee.seat.check import CheckResult
    from referee.seat.player import EngineSpec


@click.command()
@click.argument("engine", nargs=-1, required=True, metavar="ENGINE")
@timeout_options(move_default=5.0)
@click.option(
    "-o",
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="An engine option to set (repeatable); it must be one the engine declares.",
)
@env_option(numbered=False)
@click.option("--verbose", is_flag=True, help="Show the protocol lines of the failing checks.")
@sandbox_options()
@remote_options()
def check(
    engine: tuple[str, ...],
    move_timeout: float,
    startup_timeout: float,
    time_margin: float,
    options: tuple[str, ...],
    env: tuple[str, ...],
    verbose: bool,
    sandbox: str,
    no_sandbox: bool,
    limits: tuple[str, ...],
    network: bool,
    readable: tuple[str, ...],
    remote: RemoteOptions = NO_REMOTE,
) -> None:
    """Check that ENGINE speaks the protocol (spec/PROTOCOL.md), as fastchess --compliance.

    ENGINE is a built-in name (random, simple, expert, camper, js-simple, and openspiel:simple
    with the openspiel extra) or a command line in quotes. One line per check: PASS <name>, or
    FAIL <name>: <what was wrong>. An engine that does not start stops the battery at its
    first check, with what to do about it. The exit code is 0 when every check passes, 1
    otherwise.

        ginref check "python3 mybot.py" --move-timeout 2

    remote:NAME checks the engine of whoever connects with NAME's token (gin-connect):

        ginref check remote:alice --listen 127.0.0.1:9000 --tokens tokens.toml
    """
    from referee.seat.check import CHECKS, run_checks  # imported only when it runs

    spec = _engine_spec(engine, options, env)
    mode = sandbox_mode(sandbox, no_sandbox)
    announce_sandbox(mode)
    (spec,) = sandboxed((spec,), mode, engine_limits(limits, 1), network, readable=readable)
    results: list[CheckResult] = []

    def show(result: CheckResult) -> None:
        results.append(result)
        _show(result, verbose)

    try:
        with remote.seats((spec,)) as (spec,):  # a remote engine: listened for, waited for
            run_checks(
                spec,
                move_timeout=move_timeout,
                startup_timeout=startup_timeout,
                time_margin=time_margin,
                on_result=show,
            )
    except KeyboardInterrupt:  # the checks done so far are shown; the engine is stopped
        failed = sum(1 for r in results if not r.ok)
        tally = f": {len(results) - failed} passed, {failed} failed" if results else ""
        click.echo(f"interrupted after {len(results)} of {len(CHECKS)} checks{tally}")
        raise click.exceptions.Exit(130) from None
    failed = sum(1 for r in results if not r.ok)
    click.echo(_summary(len(results), failed, len(CHECKS)))
    if failed:
        raise SystemExit(1)


def _engine_spec(
    engine: tuple[str, ...], options: tuple[str, ...], env: tuple[str, ...]
) -> EngineSpec:
    """The one engine to check, with its ``-o`` options and ``--env`` variables."""
    from referee.seat.diagnose import quote_hint
    from referee.seat.player import EngineSpec, EngineSpecError

    if len(engine) > 1:
        hint = quote_hint(engine, "check") or (
            f"check takes one engine, not {len(engine)} ({shlex.join(engine)}): a built-in"
            ' name, or a command line in quotes, as in ginref check "python3 mybot.py"'
        )
        raise click.UsageError(hint)
    pairs = []
    for item in options:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, not {item!r}", param_hint="-o")
        pairs.append((name.strip(), value.strip()))
    variables = dict(env_item(item, item) for item in env)
    try:
        return EngineSpec.parse(engine[0], options=tuple(pairs), env=tuple(variables.items()))
    except EngineSpecError as exc:
        raise click.BadParameter(str(exc), param_hint="ENGINE") from None


def _show(result: CheckResult, verbose: bool) -> None:
    """One check's line: PASS, or FAIL and what was wrong (and, ``verbose``, its lines)."""
    if result.ok:
        note = f" ({result.detail})" if result.detail else ""
        click.echo(f"PASS {result.name}{note}")
        return
    click.echo(f"FAIL {result.name}: {result.detail}")
    if verbose:
        for line in result.lines:
            click.echo(f"    {line}")


def _summary(done: int, failed: int, checks: int) -> str:
    """The last line: how many of the ``checks`` passed, ``done`` of them run."""
    skipped = checks - done
    if skipped:
        return (
            f"{done - failed} of {checks} checks passed; the other {skipped} cannot"
            " run before the engine starts and completes its handshake"
        )
    if failed:
        return f"{done - failed} of {done} checks passed"
    return f"all {done} checks passed"
