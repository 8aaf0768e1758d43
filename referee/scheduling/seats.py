"""A worker's players (``Seats``): its engine processes, kept warm from game to game and
restarted after a fault (``EngineSeats``); and the debug log of every protocol line."""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from ginproto.record import EngineInfo
from ginproto.table import Fault, FaultKind, GameLog, Player
from ginproto.text import LOG_LIMIT, REASON_LIMIT, printable
from referee.outputs import UnsafeOutput, open_regular
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from referee.seat.process import LineHook, stderr_lines

if TYPE_CHECKING:  # the backends run seats; seats only name their jobs
    from referee.results.played import GameJob

log = logging.getLogger(__name__)


class Seats(Protocol):
    """One worker's players. It may keep engine processes warm from game to game."""

    def players(self, job: GameJob) -> list[Player]:
        """The players for ``job``, by player number, ready for a new game."""
        ...

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        """Called after each game, e.g. to restart an engine that faulted. Returns what the
        record says of each player (by player number)."""
        ...

    def close(self) -> None:
        """Stop every engine. Must not raise."""
        ...


ENGINE_LOG_LIMIT: Final = 1 << 20
"""Characters of one engine's own lines (stdout and stderr) the debug log keeps of one game.
Past it, of each run of the engine's lines between two lines of the referee's only the last
is kept (the one the referee acted on, such as a move), after a marker line that says how
many were left out."""


@dataclass(slots=True)
class _Budget:
    """What the debug log has kept of one engine's lines this game, and what it holds back."""

    kept: int = 0
    cut_lines: int = 0
    cut_chars: int = 0
    last: str = ""  # the latest line past the limit, written with a marker before it
    last_head: str = ""  # its time, engine and direction
    holding: bool = False


class DebugLog:
    """Every protocol line with the time, the engine and the direction.

    Lines are held in memory per game and written when that game has ended, so that no engine
    can read its opponent's lines from the log while the game is in progress. What is held is
    bounded whatever an engine writes: each line is cut to ``LOG_LIMIT`` characters, and an
    engine's own lines to ``engine_limit`` characters a game (`ENGINE_LOG_LIMIT`: past it,
    only the last line of each run between two of the referee's lines, with a marker line
    saying how many were left out). The referee's lines are all kept: the game bounds them.
    """

    def __init__(
        self, path: str | os.PathLike[str], engine_limit: int = ENGINE_LOG_LIMIT
    ) -> None:
        self.path = Path(path)
        self.engine_limit = engine_limit
        _private_file(self.path, truncate=True)
        self._lock = threading.Lock()
        self._buffers: dict[str, list[str]] = {}
        self._budgets: dict[str, list[_Budget]] = {}
        self._started = time.monotonic()

    def hook(self, worker: str, engine: str) -> LineHook:
        buffer = self._buffers.setdefault(worker, [])
        budget = _Budget()
        budgets = self._budgets.setdefault(worker, [])
        budgets.append(budget)
        limit = self.engine_limit

        def on_line(direction: str, line: str) -> None:
            arrow = {"to": ">", "from": "<"}.get(direction, "!")
            stamp = time.monotonic() - self._started
            head = f"{stamp:10.4f} {engine} {arrow}"
            if direction == "to":  # what every engine wrote before it goes first
                for held in budgets:
                    self._release(held, buffer)
            elif budget.kept + min(len(line), LOG_LIMIT) >= limit:
                budget.kept = limit  # the rest of the game is past the limit too
                if budget.holding:
                    budget.cut_lines += 1
                    budget.cut_chars += len(budget.last)
                budget.last, budget.last_head, budget.holding = line, head, True
                return
            text = f"{head} {printable(line, LOG_LIMIT)}\n"
            if direction != "to":
                budget.kept += len(text)
            buffer.append(text)

        return on_line

    def _release(self, budget: _Budget, buffer: list[str]) -> None:
        """Write the held line, after a marker for the lines left out before it."""
        if not budget.holding:
            return
        if budget.cut_lines:
            buffer.append(
                f"{budget.last_head} [referee: {budget.cut_lines} lines"
                f" ({budget.cut_chars} characters) left out here; the log keeps"
                f" {self.engine_limit} characters of an engine's lines a game]\n"
            )
        buffer.append(f"{budget.last_head} {printable(budget.last, LOG_LIMIT)}\n")
        budget.cut_lines = budget.cut_chars = 0
        budget.last, budget.holding = "", False

    def flush(self, worker: str, title: str) -> None:
        """Append the worker's lines under ``title`` with one write on an ``O_APPEND``
        descriptor, so workers in other threads and processes never interleave."""
        buffer = self._buffers.get(worker)
        if buffer is None:
            return
        for budget in self._budgets.get(worker, ()):
            self._release(budget, buffer)
            budget.kept = 0  # each game has its own limit
        data = (f"# {title}\n" + "".join(buffer)).encode("utf-8")
        buffer.clear()
        with self._lock:
            try:
                fd = open_regular(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                try:
                    while data:
                        data = data[os.write(fd, data) :]
                finally:
                    os.close(fd)
            except OSError as exc:  # name the file: os.write does not
                if isinstance(exc, UnsafeOutput):
                    raise
                raise OSError(exc.errno, exc.strerror, str(self.path)) from None


class EngineSeats:
    """The engine processes of one worker, one per engine of the match."""

    _workers = 0
    _count_lock = threading.Lock()

    def __init__(
        self,
        specs: Sequence[EngineSpec],
        control: TimeControl,
        startup_timeout: float,
        debug_log: DebugLog | None = None,
        stderr_dir: str | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        with EngineSeats._count_lock:
            EngineSeats._workers += 1
            # Unique across the worker processes too (each counts from the same start).
            self.worker = f"{os.getpid()}.{EngineSeats._workers}"
        self.debug_log = debug_log
        self.names = list(names) if names is not None else [s.label for s in specs]
        self.engines: list[EnginePlayer] = []
        for i, spec in enumerate(specs):
            hook = debug_log.hook(self.worker, self.names[i]) if debug_log else None
            stderr = None
            if stderr_dir is not None:
                stderr = os.path.join(stderr_dir, f"{_safe(self.names[i])}.w{self.worker}.stderr")
                _private_file(Path(stderr))  # appended to by every start of the engine
            self.engines.append(
                EnginePlayer(spec, control, startup_timeout, stderr_path=stderr, on_line=hook)
            )

    def players(self, job: GameJob) -> list[Player]:
        players: list[Player] = []
        for p, e in enumerate(job.lineup):
            engine = self.engines[e]
            engine.launch()  # the game's engines load together; each shakes hands when asked
            engine.new_game(job.index + 1, p, job.rules)
            players.append(engine)
        return players

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        """Restart an engine that faulted, write the debug log, and raise ``OSError`` if one
        of the referee's own files failed during the game (it is not the engines' fault, and
        the run must stop, not go on with incomplete logs)."""
        if game.fault is not None:
            # Restart the engine that faulted for its next game; the ruling gets the end of
            # its stderr, all of which has arrived once it is closed.
            engine = self.engines[job.lineup[game.fault.player]]
            engine.close()
            game.fault = with_stderr(game.fault, engine.stderr_tail)
        for engine in self.engines:
            error = engine.stderr_error
            if error is not None:
                raise OSError(
                    error.errno, f"cannot keep the engine's stderr: {error.strerror or error}",
                    engine.stderr_path,
                )
        if self.debug_log is not None:
            self.debug_log.flush(self.worker, f"game {job.index + 1}")
        return tuple(self.info(e) for e in job.lineup)

    def info(self, e: int) -> EngineInfo:
        engine = self.engines[e]
        return EngineInfo(
            name=self.names[e],
            version=engine.id.version or "",
            command=shlex.join(engine.spec.argv),
            options=engine.spec.options,
            latency=engine.latency,  # a remote engine's round trips
        )

    def close(self) -> None:
        for engine in self.engines:
            with contextlib.suppress(Exception):  # closing must go on for the others
                engine.finish_match()
        if self.debug_log is not None:
            try:
                self.debug_log.flush(self.worker, f"end of the match (worker {self.worker})")
            except OSError as exc:  # every game's lines were written, or their error raised
                log.warning("the end of the debug log is lost: %s", exc)


def with_stderr(fault: Fault, tail: str) -> Fault:
    """``fault`` with the last lines of the engine's stderr ``tail``; a crash's reason ends
    with its last line (a traceback's exception, a ``fatal: ...``), unless it says it already."""
    lines = stderr_lines(tail)
    reason = fault.reason
    if fault.kind is FaultKind.CRASH and lines and lines[-1] not in fault.why:
        reason = f"{fault.why}: {lines[-1]}"
    return replace(fault, reason=printable(reason, REASON_LIMIT), stderr=lines)


def _private_file(path: Path, truncate: bool = False) -> None:
    """Create ``path`` readable by its owner only (mode 0600), or make it so if it exists:
    protocol lines and an engine's stderr say things about the deal. Only a regular file is
    opened, truncated or chmodded (``referee.outputs.open_regular``): never a device, a
    link's target or a folder."""
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT)
    try:
        if truncate:
            os.ftruncate(fd, 0)
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "engine"
