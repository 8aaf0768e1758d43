"""Past one machine: the games of a match or a tournament played on a Dask cluster.

Every game is a pure job (``referee.results.played.GameJob``), so a cluster only has to play
jobs and hand back finished games (``Played``): ``DaskBackend`` is a ``Backend``
(``referee.scheduling.backends``), the same for a match and a tournament. It connects to a
Dask scheduler (``dask scheduler`` and ``dask worker``, or any Dask deployment), or starts a
``LocalCluster`` for ``local:N``. Before game 1 it checks, on every worker (``Client.run``),
that each engine starts and completes its handshake, and refuses to begin otherwise, naming the
worker and the engine. Then each game is a task that a worker plays with its own engine
processes, kept warm from game to game by a worker plugin (``referee.cluster.worker``) and
closed when the run ends or the worker leaves.

The ``ginref`` process stays the only writer: it submits a bounded window of jobs (a few per
worker thread, refilled from ``as_completed`` as games finish, never the whole schedule) and
yields the finished games in job order, so the store and the records file get the same
contents, in the same order, as a local run. Dask plays a game again elsewhere when its worker
dies; a game lost with the scheduler's connection is submitted again; a job's result is
yielded once whatever happens. The same seed gives the same games on any backend, since a game
depends only on its job and the engines.

Dask is an optional extra (``pip install 'ginproto[dask]'``): this module imports it only when
a cluster is asked for, and says how to install it when it is missing.
"""

from __future__ import annotations

import collections
import logging
import math
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import CancelledError
from typing import TYPE_CHECKING, Any, Final

from referee.errors import DaskError as DaskError  # part of this module's API
from referee.results.played import GameJob, Played
from referee.scheduling.address import LOCAL, parse_address
from referee.scheduling.seats import Seats
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

    from referee.cluster.worker import EnginesPlugin

log = logging.getLogger(__name__)
_STOP_WORKERS_TIMEOUT = 10.0  # seconds a local cluster's workers get to stop before it closes

INSTALL: Final = "pip install 'ginproto[dask]'"
_ATTEMPTS: Final = 5  # submissions of one game lost with the scheduler before giving up
_WINDOW_REFRESH: Final = 2.0  # seconds between two looks at the cluster's size
_POLL: Final = 1.0  # seconds between two looks at the workers while no game finishes


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise DaskError(
            f"running on a Dask cluster needs the Dask distributed package: {INSTALL}"
        ) from None
    return distributed


class DaskBackend:
    """A connection to a Dask cluster (or a ``LocalCluster`` it started) that plays jobs: the
    ``Backend`` of a match or a tournament on Dask (``run``).

    ``connect_timeout`` defaults to Dask's own (``distributed.comm.timeouts.connect``, which
    ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT`` sets); it also bounds the wait for a first
    worker. At most two games per worker thread are submitted and unfinished at a time, and at
    most ``ahead`` submitted and not yet handed to the caller. A run waits ``worker_timeout``
    seconds (default: twice the connect timeout, at least a minute) for workers to come back
    when the cluster has none, then stops. Close it when done (it is a context manager).
    """

    def __init__(
        self,
        address: str,
        connect_timeout: float | None = None,
        ahead: int = 256,
        worker_timeout: float | None = None,
    ) -> None:
        distributed = _distributed()
        import dask.config
        import dask.utils

        # Dask's own INFO lines only with ginref -v.
        logging.getLogger("distributed").setLevel(logging.getLogger().getEffectiveLevel())

        self.address = parse_address(address)
        if connect_timeout is None:
            connect_timeout = float(
                dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"))
            )
        self.connect_timeout = connect_timeout
        self.ahead = ahead
        self.worker_timeout = worker_timeout or max(60.0, 2 * connect_timeout)
        self._local: LocalCluster | None = None
        self._check: tuple[tuple[EngineSpec, ...], TimeControl, float] | None = None
        self._checked: frozenset[str] = frozenset()
        self._plugins: set[str] = set()  # the runs' plugins registered and not yet removed
        if self.address.startswith(LOCAL):
            from referee.cluster.worker import LocalWorkerPlugin

            n = int(self.address[len(LOCAL) :])
            try:
                self._local = distributed.LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    scheduler_port=0,
                    dashboard_address=":0",
                    worker_dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                self.client: Client = distributed.Client(
                    self._local, set_as_default=False, timeout=connect_timeout
                )
                self.client.register_plugin(LocalWorkerPlugin(), name=LocalWorkerPlugin.name)
            except Exception as exc:
                self.close()
                raise DaskError(
                    f"cannot start a local Dask cluster of {n} workers: {exc}"
                ) from None
        else:
            try:
                self.client = distributed.Client(
                    self.address, set_as_default=False, timeout=connect_timeout
                )
            except (OSError, TimeoutError) as exc:
                raise DaskError(
                    f"cannot reach the Dask scheduler at {self.address} within"
                    f" {connect_timeout:g}s ({exc}); start one with `dask scheduler` and"
                    f" workers with `dask worker {self.address}`"
                ) from None
        try:
            self.client.wait_for_workers(1, timeout=connect_timeout)
        except (OSError, TimeoutError):
            self.close()
            raise DaskError(
                f"no Dask worker joined the scheduler at {self.address} within"
                f" {connect_timeout:g}s; start some with `dask worker {self.address}`"
            ) from None

    # -- the cluster -----------------------------------------------------------------------
    def workers(self) -> dict[str, int]:
        """Each worker's address and its threads (games it plays at once)."""
        threads = self.client.nthreads()  # type: ignore[no-untyped-call]
        return {str(k): int(v) for k, v in threads.items()}

    def describe(self) -> str:
        workers = self.workers()
        if self._local is not None:
            where = f"a local Dask cluster ({self._local.scheduler_address})"
        else:
            where = f"the Dask scheduler {self.address}"
        return f"{where}: {len(workers)} workers, {sum(workers.values())} threads"

    def close(self) -> None:
        """Close the engines of any run left unfinished, the client, and a local cluster."""
        client = getattr(self, "client", None)
        if client is not None:
            for name in list(self._plugins):
                self._unregister(name)
            if self._local is not None:
                self._stop_local_workers(client)
            try:
                client.close()
            except Exception as exc:  # closing must go on
                log.info("closing the Dask client: %s", exc)
        if self._local is not None:
            try:
                self._local.close()
            except Exception as exc:
                log.info("closing the local Dask cluster: %s", exc)
            self._local = None

    def _stop_local_workers(self, client: Client) -> None:
        """Stop a local cluster's workers while its scheduler still runs. Closed together, a
        worker's heartbeat can meet a scheduler already gone, and the worker process then
        prints the failure with a traceback on the referee's stderr."""
        assert self._local is not None
        try:
            self._local.scale(0)  # type: ignore[no-untyped-call]
            deadline = time.monotonic() + _STOP_WORKERS_TIMEOUT
            while client.scheduler_info()["workers"] and time.monotonic() < deadline:
                time.sleep(0.05)
        except Exception as exc:  # closing must go on
            log.info("stopping the local Dask workers: %s", exc)

    def __enter__(self) -> DaskBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- before game 1 ---------------------------------------------------------------------
    def check_engines(
        self, specs: Sequence[EngineSpec], control: TimeControl, startup_timeout: float
    ) -> list[str | None]:
        """Start every engine on every worker and complete its handshake; ``DaskError`` names
        the worker and the engine that fails. Returns each engine's ``id name``."""
        from referee.cluster.worker import check_engines_async, refusal

        check = (tuple(specs), control, startup_timeout)
        try:
            answers = self.client.run(check_engines_async, check)
        except (OSError, TimeoutError) as exc:
            raise DaskError(f"cannot check the engines on the Dask workers: {exc}") from None
        except ImportError as exc:
            raise DaskError(_unfit(exc)) from None
        names: list[str | None] = [None] * len(specs)
        seen: dict[int, tuple[str, str | None, str | None]] = {}
        for worker in sorted(answers):
            for i, (name, version, error) in enumerate(answers[worker]):
                if error is not None:
                    raise DaskError(refusal(worker, specs[i], error))
                if i in seen and seen[i][1:] != (name, version):
                    log.warning(
                        "engine %s says it is %s %s on %s but %s %s on %s",
                        specs[i].label,
                        name,
                        version or "",
                        worker,
                        seen[i][1],
                        seen[i][2] or "",
                        seen[i][0],
                    )
                seen.setdefault(i, (worker, name, version))
                names[i] = names[i] or name
        self._check = check
        self._checked = frozenset(answers)
        return names

    # -- playing ---------------------------------------------------------------------------
    def run(
        self,
        jobs: Iterable[GameJob],
        seats: Callable[[], Seats],
        stop: Callable[[], bool] = lambda: False,
    ) -> Iterator[Played]:
        """Play ``jobs`` on the workers, each with the players of ``seats()`` (made and kept
        warm there), and yield them **in job order** (a ``Backend``: the cluster's threads
        decide how many games run at once). When ``stop()`` turns true no new job is
        submitted; the ones submitted finish and are yielded."""
        from referee.cluster.worker import EnginesPlugin

        name = f"ginref-{uuid.uuid4().hex[:12]}"
        plugin = EnginesPlugin(seats, self._check, self._checked)
        self.client.register_plugin(plugin, name=name)
        self._plugins.add(name)
        try:
            yield from _Window(self, name, plugin, jobs, stop).results()
        finally:
            self._unregister(name)

    def _unregister(self, name: str) -> None:
        """Remove a run's plugin from the workers, which closes its engines there."""
        self._plugins.discard(name)
        try:
            self.client.unregister_worker_plugin(name)  # type: ignore[no-untyped-call]
        except Exception as exc:
            log.info("could not close the engines on the workers: %s", exc)


def _unfit(exc: ImportError) -> str:
    return (
        f"a Dask worker cannot import what a game needs ({exc}): install ginproto[dask], the"
        " same version as here, on every worker"
    )


class _Window:
    """The jobs submitted and not yet yielded, in job order: at most ``size()`` of them
    unfinished (running or queued on the cluster), and at most ``cluster.ahead`` in all (the
    finished ones wait for the slowest game before them)."""

    def __init__(
        self,
        cluster: DaskBackend,
        plugin_name: str,
        plugin: EnginesPlugin,
        jobs: Iterable[GameJob],
        stop: Callable[[], bool],
    ) -> None:
        distributed = _distributed()
        self.cluster = cluster
        self.client = cluster.client
        self.plugin_name = plugin_name
        self.plugin = plugin
        self.jobs = iter(jobs)
        self.stop = stop
        self.exhausted = False
        self.order: collections.deque[GameJob] = collections.deque()
        self.futures: dict[int, Future[Any]] = {}  # job index -> its current future
        self.keys: dict[object, int] = {}  # a current future's key -> its job index
        self.attempts: dict[int, int] = {}
        self.done: dict[int, Played] = {}
        self.completed = distributed.as_completed(loop=self.client.loop)
        self._size = 0
        self._sized = -math.inf
        self._threads = 0
        self._idle_since: float | None = None
        self._registered = time.monotonic()

    def size(self) -> int:
        """Two jobs per worker thread: one playing, one waiting, so no thread idles while
        the coordinator takes in a result. Looked up again every few seconds, since workers
        come and go."""
        now = time.monotonic()
        if now - self._sized > _WINDOW_REFRESH:
            try:
                self._threads = sum(self.cluster.workers().values())
            except (OSError, TimeoutError):
                self._threads = 0
            self._size = max(2, 2 * self._threads)
            self._sized = now
        return self._size

    def submit(self, job: GameJob) -> None:
        from referee.cluster.worker import play_game_task

        attempt = self.attempts.get(job.index, 0) + 1
        self.attempts[job.index] = attempt
        future = self.client.submit(
            play_game_task,
            self.plugin_name,
            job,
            key=f"{self.plugin_name}-game-{job.index + 1}-{attempt}",
            pure=False,
        )
        self.futures[job.index] = future
        self.keys[future.key] = job.index
        self.completed.add(future)

    def fill(self) -> None:
        while (
            not self.exhausted
            and len(self.futures) < self.size()
            and len(self.order) < max(self.cluster.ahead, self.size())
        ):
            if self.stop():
                self.exhausted = True
                return
            job = next(self.jobs, None)
            if job is None:
                self.exhausted = True
                return
            self.order.append(job)
            self.submit(job)

    def results(self) -> Iterator[Played]:
        from referee.cluster.worker import PluginMissing

        try:
            self.fill()
            while self.order:
                future = self._next()
                index = self.keys.pop(future.key)
                del self.futures[index]
                try:
                    self.done[index] = future.result()
                except (CancelledError, PluginMissing):
                    self._again(index)
                    continue
                except OSError as exc:
                    if future.status == "error":  # raised by the game's task itself
                        raise
                    log.info("game %d: its result was lost in transit: %s", index + 1, exc)
                    self._again(index)  # the connection to the scheduler broke
                    continue
                except Exception as exc:
                    raise self._error(index, exc) from None
                finally:
                    future.release()  # type: ignore[no-untyped-call]
                while self.order and self.order[0].index in self.done:
                    yield self.done.pop(self.order.popleft().index)
                self.fill()
        finally:
            if self.futures:
                try:
                    self.client.cancel(list(self.futures.values()))  # type: ignore[no-untyped-call]
                except Exception as exc:
                    log.info("could not cancel the games submitted: %s", exc)

    def _next(self) -> Future[Any]:
        """The next finished game (from ``as_completed``). Meanwhile, a cluster left without
        workers for ``cluster.worker_timeout`` seconds is an error, not a hang."""
        watch = time.monotonic() + _POLL
        while not self.completed.has_ready():
            with self.completed.thread_condition:  # as as_completed's own __next__ waits
                self.completed.thread_condition.wait(timeout=0.1)
            if time.monotonic() > watch:
                self._watch_workers()
                watch = time.monotonic() + _POLL
        future: Future[Any] = next(self.completed)
        return future

    def _watch_workers(self) -> None:
        self.size()
        if self._threads:
            self._idle_since = None
            return
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
            log.warning("the Dask scheduler at %s has no workers", self.cluster.address)
        elif now - self._idle_since > self.cluster.worker_timeout:
            raise DaskError(
                f"the Dask scheduler at {self.cluster.address} has had no worker for"
                f" {self.cluster.worker_timeout:g}s; the games finished so far are kept"
            )

    def _again(self, index: int) -> None:
        """A game lost with the scheduler's connection (or cancelled by someone else): play
        it again, on the reconnected cluster, a bounded number of times."""
        if self.client.status in ("closing", "closed"):
            raise DaskError(
                f"lost the Dask scheduler at {self.cluster.address}; the games finished so far"
                " are kept"
            )
        if self.attempts[index] >= _ATTEMPTS:
            raise DaskError(f"game {index + 1} was lost {_ATTEMPTS} times by the Dask cluster")
        log.warning("game %d was lost by the Dask cluster; submitting it again", index + 1)
        self._register()
        self.submit(next(job for job in self.order if job.index == index))

    def _register(self) -> None:
        """Register the run's plugin again, once for a burst of lost games: a restarted
        scheduler has forgotten it (workers that still hold it set it up afresh)."""
        if time.monotonic() - self._registered < _POLL:
            return
        try:
            self.client.register_plugin(self.plugin, name=self.plugin_name)
        except Exception as exc:
            log.info("could not register the engines again: %s", exc)
        self._registered = time.monotonic()

    def _error(self, index: int, exc: Exception) -> Exception:
        from referee.cluster.worker import EngineUnavailable

        if isinstance(exc, EngineUnavailable):
            return DaskError(str(exc))
        if isinstance(exc, ImportError):
            return DaskError(f"game {index + 1}: {_unfit(exc)}")
        killed = _distributed().KilledWorker
        if isinstance(exc, killed):
            return DaskError(
                f"game {index + 1} was running on every worker that died while playing it"
                f" ({exc}); the games finished so far are kept"
            )
        return exc
