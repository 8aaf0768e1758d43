"""One engine process, driven from your own code: ``RunningEngine.popen(command)``.

The referee's players (``referee.seat.player.EnginePlayer``) answer the table's questions
over the protocol; `RunningEngine` puts one of them in your hands, as python-chess's
``SimpleEngine`` does for a UCI engine. ``RunningEngine.popen`` starts the engine (in the
sandbox where it can run, as a match does), completes the handshake and checks the options it is
given, and closes it on leaving the ``with`` block, whatever happens in it: ``quit``, a grace
period, then its whole process group is killed. In between, ``decide(view, decision)`` sends the
seat's view (a ``GameView``, from ``Game.view``) and returns the engine's move, in the time the
clock allows.

Nothing here checks that the move is legal: the rules engine does (``Game.apply``, or the
view's ``hand.legal_moves()``), as at the table. What the table would rule a forfeit (a crash,
no move in time, a malformed line) raises ``PlayerFault``, with the ruling's ``kind`` and
``detail``; the next ``decide`` restarts the engine.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace

from ginproto.game import GameView
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import Decision
from referee.seat.clock import DEFAULT_MARGIN, TimeControl
from referee.seat.player import EngineId, EnginePlayer, EngineSpec, sandboxed
from referee.seat.preflight import EngineNotReady, option_problem, ready
from referee.seat.process import EngineProcess
from referee.seat.sandbox import SandboxMode, start_warnings

log = logging.getLogger(__name__)

__all__ = ["Engine", "RunningEngine"]

OptionValue = str | int | float | bool
"""An engine option's value; numbers and booleans are sent as the protocol writes them."""


class RunningEngine:
    """A running engine program, driven from the caller's code. Make one with
    `RunningEngine.popen`, which also closes it. (Not ``ginproto.sdk.Engine``, the base class
    of an engine written in Python: this drives one from the outside.)"""

    def __init__(self, player: EnginePlayer) -> None:
        self._player = player
        self._game = 0

    @classmethod
    @contextmanager
    def popen(
        cls,
        command: str | Sequence[str] | EngineSpec,
        *,
        options: Mapping[str, OptionValue] | None = None,
        tc: str | TimeControl = "inf",
        move_timeout: float = 10.0,
        startup_timeout: float = 10.0,
        time_margin: float = DEFAULT_MARGIN,
        sandbox: str | SandboxMode = SandboxMode.AUTO,
        stderr: str | os.PathLike[str] | None = None,
    ) -> Iterator[RunningEngine]:
        """Start an engine and yield it; it is closed when the block ends (an exception
        included).

        ``command``: a built-in name (``"simple"``), a command line (``"python3 bot.py"``,
        never run through a shell), an argv list, or an `EngineSpec`. ``options`` are set
        during the handshake and must be ones the engine declares. ``tc`` is the game clock
        (``"BASE+INC"`` seconds, default ``"inf"``: none) and ``move_timeout`` the seconds for
        each decision. ``stderr``: a file to append the engine's stderr to (else dropped).

        Raises `EngineNotReady` if it cannot start, fails its handshake or refuses an
        option; ``ValueError`` for a command, option or clock that cannot be used.
        """
        if isinstance(command, EngineSpec):
            spec = command
        elif isinstance(command, str):
            spec = EngineSpec.parse(command)
        else:
            if not command:
                raise ValueError("an engine needs a command line")
            spec = EngineSpec(tuple(command))
        if options:
            spec = replace(spec, options=spec.options + option_pairs(options))
        control = (
            tc if isinstance(tc, TimeControl) else TimeControl.parse(tc, move_timeout, time_margin)
        )
        mode = SandboxMode(sandbox)
        for line in start_warnings(mode):
            log.warning("%s", line)
        path = None if stderr is None else os.fspath(stderr)
        (spec,) = sandboxed([spec], mode, files=[path])
        player = EnginePlayer(spec, control, startup_timeout, stderr_path=path)
        try:
            ready(player)  # EngineNotReady, with the engine stopped
            yield cls(player)
        finally:
            player.close()

    # -- what it said of itself -------------------------------------------------------------
    @property
    def id(self) -> EngineId:
        """What the engine said in its handshake: ``name``, ``author``, ``version`` and the
        ``options`` it declares (``OptionDecl``: name, kind, default, bounds)."""
        return self._player.id

    @property
    def name(self) -> str:
        """Its name: the one given in an `EngineSpec`, else its own ``id name``."""
        return self._player.name

    @property
    def options(self) -> dict[str, str]:
        """The options set on it, by name."""
        return dict(self._player.spec.options)

    @property
    def pid(self) -> int | None:
        """Its process id (the sandbox's, when it runs in one), or None when not running."""
        process = self._player.process
        return process.pid if isinstance(process, EngineProcess) else None

    @property
    def alive(self) -> bool:
        """Whether its process is running (it is restarted by the next ``decide`` if not)."""
        return self._player.alive

    # -- driving it -------------------------------------------------------------------------
    def configure(self, options: Mapping[str, OptionValue]) -> None:
        """Set options, each one the engine declares with a value it allows (else
        ``ValueError``, and nothing changes). The engine is restarted with them, since the
        protocol sets options in the handshake."""
        pairs = option_pairs(options)
        for name, value in pairs:
            problem = option_problem(name, value, self.id.options)
            if problem is not None:
                raise ValueError(problem)
        changed = {k.lower() for k, _ in pairs}
        kept = tuple((k, v) for k, v in self._player.spec.options if k.lower() not in changed)
        self._player.spec = replace(self._player.spec, options=kept + pairs)
        try:
            ready(self._player)
        except EngineNotReady:
            self._player.close()
            raise

    def new_game(self, player: int = 0, rules: Rules | None = None) -> None:
        """Tell the engine a new game starts, in which it is ``player``, and restart its game
        clock. Optional: an engine may not depend on it (spec/PROTOCOL.md), and ``decide``
        works without it."""
        self._game += 1
        self._player.new_game(self._game, player, rules or Rules())

    def decide(self, view: GameView, decision: Decision) -> Move:
        """The engine's answer to ``decision`` (the phase of ``view.hand``, or the sitter's
        ``Decision.ADVICE``) in the position ``view``. Raises ``PlayerFault`` for what the
        table rules a forfeit: ``kind`` (crash, timeout, flag, malformed...) and ``detail``."""
        return self._player.decide(view, decision)

    def close(self) -> None:
        """``quit``, a grace period, then the process group is killed. ``popen`` does it."""
        self._player.close()

    def __repr__(self) -> str:
        state = "running" if self.alive else "stopped"
        return f"<RunningEngine {self.name!r} ({state})>"


def option_text(value: OptionValue) -> str:
    """An option's value as a ``setoption`` line carries it (booleans as ``true``/``false``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def option_pairs(options: Mapping[str, OptionValue]) -> tuple[tuple[str, str], ...]:
    """Options as ``(name, value text)`` pairs, in the order given."""
    return tuple((k, option_text(v)) for k, v in options.items())


Engine = RunningEngine
"""The name ``RunningEngine`` had before; kept for code that uses it."""
