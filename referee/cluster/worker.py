"""The worker side of the Dask backend: a plugin that keeps a worker's engines warm, and the
task that plays one game with them.

A run registers one ``EnginesPlugin`` on the cluster. Dask gives every worker its own copy
(new workers and restarted ones included) and calls ``setup`` there. Each game is the task
``play_game_task(plugin name, job)``: it borrows a set of engine seats from the plugin's pool
(one per game running at once on that worker, started on first use, with the same
``Seats`` code as the local pool: ``referee.scheduling.seats.EngineSeats``, which starts engines
through ``referee.seat.process``), plays the game with the one game loop
(``ginproto.table.play_game``, through ``referee.scheduling.backends.play``), hands the seats
back warm, and returns the finished game (``Played``). ``teardown`` (the run unregistering the
plugin, or the worker leaving) closes every engine: at once when idle, at the end of its game
otherwise.

A worker that joins after the check made before game 1 checks its engines itself before its
first game, and refuses the game (``EngineUnavailable``, which ends the run with a clear
message) when one does not start: a game is never forfeited because a worker lacks a bot.

This module imports ``distributed``; only the Dask backend imports it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from distributed import WorkerPlugin, get_worker
from distributed.worker import Worker

from ginproto.table import PlayerFault
from ginproto.text import plural
from referee.errors import RefereeError
from referee.results.played import GameJob, Played
from referee.scheduling.backends import play
from referee.scheduling.seats import Seats
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from referee.seat.preflight import launch_isolated

log = logging.getLogger(__name__)


class EngineUnavailable(RefereeError, RuntimeError):
    """An engine does not start (or does not complete its handshake) on a worker."""


class PluginMissing(RefereeError, RuntimeError):
    """The worker does not hold the run's plugin (it joined a restarted scheduler, say)."""


EngineCheck = tuple[tuple[EngineSpec, ...], TimeControl, float]
"""What the check before game 1 starts: the engines, the time control, the startup timeout."""


def check_engines(check: EngineCheck) -> list[tuple[str | None, str | None, str | None]]:
    """Start each engine and complete its handshake, here. Per engine: ``(id name, version,
    None)`` when it works, ``(None, None, what went wrong)`` when it does not."""
    specs, control, startup_timeout = check
    out: list[tuple[str | None, str | None, str | None]] = []
    players = [EnginePlayer(spec, control, startup_timeout) for spec in specs]
    try:
        launch_isolated(players)  # the sandboxed ones load together
        for player in players:
            try:
                player.start()
                out.append((player.id.name, player.id.version, None))
            except PlayerFault as fault:
                out.append((None, None, fault.detail))
            finally:
                player.close()
    finally:
        for player in players:
            player.close()
    return out


async def check_engines_async(
    check: EngineCheck,
) -> list[tuple[str | None, str | None, str | None]]:
    """``check_engines`` off the worker's event loop (for ``Client.run``)."""
    return await asyncio.to_thread(check_engines, check)


def refusal(worker: str, spec: EngineSpec, detail: str) -> str:
    return (
        f"engine {spec.label!r} ({' '.join(spec.argv)}) does not start on Dask worker"
        f" {worker}: {detail}. Every worker must be able to run every engine: see"
        " 'Running on a cluster' in the README (a shared file system, a container image, or"
        " Client.upload_file)."
    )


HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat."
"""What a worker logs, with a traceback, when its heartbeat meets a closed connection."""


class QuietHeartbeat(logging.Filter):
    """Drops a worker's heartbeat failure. In a local cluster the scheduler lives in the
    referee's own process, so that failure only ever means the referee is closing the cluster
    (a worker being retired can send one last heartbeat after the scheduler dropped it), and
    its traceback would land on the referee's stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != HEARTBEAT_FAILED


class LocalWorkerPlugin(WorkerPlugin):
    """Installed on the workers of a ``local:N`` cluster: ``QuietHeartbeat`` on their log."""

    name = "ginproto-local-worker"

    def setup(self, worker: Worker) -> None:
        logger = logging.getLogger("distributed.worker")
        if not any(isinstance(f, QuietHeartbeat) for f in logger.filters):
            logger.addFilter(QuietHeartbeat())


class EnginesPlugin(WorkerPlugin):
    """One run's engines on one worker: a pool of warm ``Seats`` and the game task's code."""

    def __init__(
        self,
        seats_factory: Callable[[], Seats],
        check: EngineCheck | None,
        checked: frozenset[str],
    ) -> None:
        self.seats_factory = seats_factory
        self.check = check
        self.checked = checked  # workers that passed the check before game 1
        self._fresh()

    def _fresh(self) -> None:
        """The worker-side state, never shipped: each worker's copy starts empty."""
        self.address = ""
        self._lock = threading.Lock()
        self._idle: list[Seats] = []  # seats with warm engines, waiting for a game
        self._fit = False
        self._closed = False

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("seats_factory", "check", "checked")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fresh()

    def setup(self, worker: Worker) -> None:
        self.address = worker.address
        self._fit = self.check is None or self.address in self.checked

    async def teardown(self, worker: Worker) -> None:
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        """Stop the engines of this run on this worker: the idle ones now, those of a game in
        progress when it ends (a plugin replaced or removed mid-game never kills a game)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for seats in idle:
            seats.close()  # never raises
        if idle:
            log.info("closed the engines of %s on %s", plural(len(idle), "seat"), self.address)

    def _ensure_fit(self) -> None:
        with self._lock:
            if self._fit or self.check is None:
                return
            for spec, (_, _, error) in zip(self.check[0], check_engines(self.check), strict=True):
                if error is not None:
                    raise EngineUnavailable(refusal(self.address, spec, error))
            self._fit = True

    def _borrow(self) -> Seats:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the run's engines on {self.address} are closed")
            if self._idle:
                return self._idle.pop()
        return self.seats_factory()

    def _give_back(self, seats: Seats) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(seats)
                return
        seats.close()

    def play(self, job: GameJob) -> Played:
        """Play ``job`` with warm engines."""
        self._ensure_fit()
        seats = self._borrow()
        try:
            done = play(seats, job)
        except BaseException:
            seats.close()  # engines in an unknown state: never reused
            raise
        self._give_back(seats)
        return done


def play_game_task(plugin: str, job: GameJob) -> Played:
    """The Dask task of one game: play ``job`` with this worker's copy of the run's plugin."""
    worker = get_worker()
    engines = worker.plugins.get(plugin)
    if not isinstance(engines, EnginesPlugin):
        raise PluginMissing(f"worker {worker.address} does not hold the run's engines ({plugin})")
    return engines.play(job)
