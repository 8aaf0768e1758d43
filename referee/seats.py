"""A worker's engine processes, kept warm from game to game and restarted after a fault; and
the debug log of every protocol line."""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ginproto.record import EngineInfo
from ginproto.table import GameLog, Player
from ginproto.text import LOG_LIMIT, printable
from referee.clock import TimeControl
from referee.engine import EnginePlayer, EngineSpec
from referee.process import LineHook

if TYPE_CHECKING:  # the match module runs seats; seats only name its jobs
    from referee.jobs import GameJob

log = logging.getLogger(__name__)


class DebugLog:
    """Every protocol line with the time, the engine and the direction.

    Lines are held in memory per game and written when that game has ended, so that no engine
    can read its opponent's lines from the log while the game is in progress.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        _private_file(self.path, truncate=True)
        self._lock = threading.Lock()
        self._buffers: dict[str, list[str]] = {}
        self._started = time.monotonic()

    def hook(self, worker: str, engine: str) -> LineHook:
        buffer = self._buffers.setdefault(worker, [])

        def on_line(direction: str, line: str) -> None:
            arrow = {"to": ">", "from": "<"}.get(direction, "!")
            stamp = time.monotonic() - self._started
            buffer.append(f"{stamp:10.4f} {engine} {arrow} {printable(line, LOG_LIMIT)}\n")

        return on_line

    def flush(self, worker: str, title: str) -> None:
        """Append the worker's lines under ``title`` with one write on an ``O_APPEND``
        descriptor, so workers in other threads and processes never interleave."""
        buffer = self._buffers.get(worker)
        if buffer is None:
            return
        data = (f"# {title}\n" + "".join(buffer)).encode("utf-8")
        buffer.clear()
        with self._lock:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    while data:
                        data = data[os.write(fd, data) :]
                finally:
                    os.close(fd)
            except OSError as exc:  # name the file: os.write does not
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
            engine.new_game(job.index + 1, p, job.rules)
            players.append(engine)
        return players

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        """Restart an engine that faulted, write the debug log, and raise ``OSError`` if one
        of the referee's own files failed during the game (it is not the engines' fault, and
        the run must stop, not go on with incomplete logs)."""
        if game.fault is not None:
            # Restart the engine that faulted for its next game.
            self.engines[job.lineup[game.fault.player]].close()
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


def _private_file(path: Path, truncate: bool = False) -> None:
    """Create ``path`` readable by its owner only (mode 0600), or make it so if it exists:
    protocol lines and an engine's stderr say things about the deal."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate else 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "engine"
