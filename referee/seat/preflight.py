"""Before game 1: every engine started, its handshake completed and its options checked.

An engine that cannot start (a misspelt built-in name, a missing program, a bad ``#!`` line, a
program that exits at once) would otherwise lose every game by a ``crash`` ruling, and the run
would print standings as if a match had been played. A misspelt ``-o`` option would be sent and
silently ignored. Both are the user's mistakes, not the engine's play, so ``match``, ``play``
and ``tournament`` call `ready` or `preflight` first: each engine is started, must complete the
handshake and answer ``isready``, and every option it is given must be one it declares with a
value its declaration allows. Otherwise the command stops with one `EngineNotReady` error that
names the engine and shows the tail of its standard error. ``ginref check`` reports the same
problems as failed checks, through the same `option_problem`.
"""

from __future__ import annotations

import difflib
import logging
import os
import shlex
import shutil
from collections.abc import Sequence

from engines import BUILTIN
from ginproto import protocol as proto
from ginproto.table import FaultKind, PlayerFault
from referee.errors import RefereeError
from referee.seat.clock import TimeControl
from referee.seat.diagnose import command_problem, start_hint
from referee.seat.player import EngineId, EnginePlayer, EngineSpec
from referee.seat.sandbox import SandboxMode, support

log = logging.getLogger(__name__)

__all__ = [
    "EngineNotReady",
    "builtin_hint",
    "launch_isolated",
    "option_problem",
    "preflight",
    "ready",
]

_TAIL_LINES = 3
_TAIL_CHARS = 300


class EngineNotReady(RefereeError):
    """An engine failed its check before game 1; the message says which and why."""


def option_problem(
    name: str, value: str, declared: Sequence[proto.OptionDecl]
) -> str | None:
    """What is wrong with setting option ``name`` to ``value`` for an engine that declared
    ``declared`` (names compare without case, as in UCI), or ``None`` if nothing is."""
    found = {o.name.lower(): o for o in declared}.get(name.lower())
    if found is None:
        known = ", ".join(o.name for o in declared) or "none"
        names = {o.name.lower(): o.name for o in declared}
        close = difflib.get_close_matches(name.lower(), list(names), n=1)
        hint = f"; did you mean {names[close[0]]!r}?" if close else ""
        return f"-o {name}: the engine declares no such option (declared: {known}){hint}"
    try:
        found.value_of(value)
    except proto.ProtocolError as exc:
        return f"-o {name}={value}: {exc}"
    return None


def ready(player: EnginePlayer) -> None:
    """Start ``player`` (handshake and ``isready``) and check its options; leave it running.
    Raises `EngineNotReady` (the engine stopped) if it fails."""
    label = _what(player.spec)
    spec = player.spec
    env = dict(spec.env)
    problem = None if spec.remote is not None else command_problem(spec.argv, spec.cwd, env)
    if problem is not None:  # the whole story, in place of the system's error
        player.close()
        raise EngineNotReady(f"engine {label!r} cannot be used: {problem}")
    try:
        player.start()
    except PlayerFault as fault:
        player.close()
        if spec.remote is not None:  # its program runs elsewhere: nothing here to hint at
            raise EngineNotReady(f"engine {label!r} cannot be used: {fault.detail}") from None
        hint = start_hint(
            spec.argv,
            player.stderr_tail,
            player.heard,
            timed_out=fault.kind is FaultKind.STARTUP,
            cwd=spec.cwd,
            env=env,
        )
        raise EngineNotReady(
            f"engine {label!r} cannot be used: {fault.detail}{_stderr(player, fault.detail)}"
            f"{builtin_hint(player.spec)}{hint}"
        ) from None
    for name, value in player.spec.options:
        problem = option_problem(name, value, player.id.options)
        if problem is not None:
            player.close()
            raise EngineNotReady(f"engine {_what(player.spec)!r}: {problem}")


def preflight(
    specs: Sequence[EngineSpec], control: TimeControl, startup_timeout: float
) -> list[EngineId]:
    """`ready` for each engine in turn, each stopped again after; what each said of itself.
    The sandboxed ones are launched together first (`launch_isolated`)."""
    players = [EnginePlayer(spec, control, startup_timeout) for spec in specs]
    ids = []
    try:
        launch_isolated(players)
        for player in players:
            ready(player)
            ids.append(player.id)
            player.close()
    finally:
        for player in players:
            player.close()
    return ids


def launch_isolated(players: Sequence[EnginePlayer]) -> None:
    """`EnginePlayer.launch` those of ``players`` that run in the sandbox, so that they load
    at the same time, where none can see or harm another. An engine that runs bare starts
    only when its own check does, with no other engine running beside it."""
    for player in players:
        if player.spec.policy.mode is not SandboxMode.OFF and support().available:
            player.launch()


def _what(spec: EngineSpec) -> str:
    """The engine as the user named it: its name, built-in name or command line."""
    if spec.name:
        return spec.name
    if any(list(spec.argv) == argv for argv in BUILTIN.values()):
        return spec.label
    return shlex.join(spec.argv)


def builtin_hint(spec: EngineSpec) -> str:
    """For a one-word command that is not a program: the built-in engines, the closest first."""
    program = spec.argv[0]
    if len(spec.argv) > 1 or os.sep in program or shutil.which(program) is not None:
        return ""
    close = difflib.get_close_matches(program, list(BUILTIN), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f" (it is no built-in engine: {', '.join(BUILTIN)}){hint}"


def _stderr(player: EnginePlayer, detail: str) -> str:
    """The end of the engine's standard error, unless the detail shows it already."""
    tail = player.stderr_tail.strip()
    if not tail:
        return ""
    if "stderr ends:" in detail:
        return ""
    text = " | ".join(tail.splitlines()[-_TAIL_LINES:])[-_TAIL_CHARS:]
    return f"; its stderr ends: {text!r}"
