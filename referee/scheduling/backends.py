"""Where games are played: the ``Backend`` that turns ``GameJob``s into ``Played`` games, the
same for a match and a tournament, and ``LocalBackend``, the local one.

A backend is told where (its own settings: local workers, a cluster) when it is made, and what
(the jobs, and a factory of ``Seats``: one worker's players) when it runs. ``LocalBackend`` plays
on local worker threads or processes, each keeping its engine processes warm from game to game
(restarted after a fault), and yields the games in job order; ``referee.cluster`` plays the same
jobs with the same seats on a Dask cluster. A ``JobContext`` says what every game of a run
shares (the engines and how to start them), and makes the seats; ``play_job`` is the pure job,
``(JobContext, GameJob) -> Played``, with fresh engines.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import logging
import multiprocessing
import multiprocessing.queues
import os
import pickle
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ginproto.record import EngineInfo
from ginproto.table import GameLog, Player, play_game
from referee.results.played import GameJob, Played
from referee.scheduling.seats import DebugLog, EngineSeats, Seats
from referee.seat.affinity import CpuPlan
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec

if TYPE_CHECKING:  # a match plays on the local workers too, and needs no tournament
    from referee.scheduling.config import TournamentConfig

log = logging.getLogger(__name__)

Watch = Callable[[GameJob, list[Player]], list[Player]]
"""Wraps the players of a job, to watch its game as it is played (``referee.views.live``)."""


class Backend(Protocol):
    """Something that plays ``GameJob``s with the players ``seats()`` makes (one ``Seats`` per
    worker, kept from game to game) and yields them finished. ``stop()`` turning true means:
    start no new game (the games under way finish and are yielded). Games should come in job
    order (any order is correct, but out-of-order results make a tournament's records file be
    rewritten, and a match's records are written in the order they come)."""

    def run(
        self,
        jobs: Iterable[GameJob],
        seats: Callable[[], Seats],
        stop: Callable[[], bool] = ...,
    ) -> Iterator[Played]: ...


@dataclass(frozen=True, slots=True)
class JobContext:
    """What every game of a run shares: the engines, and how to start and watch them. With a
    ``GameJob`` it is all a game needs (and both can be pickled, without a ``debug`` log).
    ``affinity``: the local workers' CPUs, with ``--affinity``."""

    engines: tuple[EngineSpec, ...]
    names: tuple[str, ...]
    control: TimeControl
    startup_timeout: float = 10.0
    stderr_dir: str | None = None
    debug: DebugLog | None = None
    affinity: CpuPlan | None = None

    @classmethod
    def of(
        cls, config: TournamentConfig, stderr_dir: str | None = None, hidden: Sequence[str] = ()
    ) -> JobContext:
        """A tournament's. ``hidden``: the referee's paths no sandboxed engine may see (the
        store's folder, the config file, the stderr folder)."""
        return cls(
            config.specs(hidden),
            config.names,
            config.control,
            config.startup_timeout,
            stderr_dir,
            affinity=cpu_plan(
                config.affinity,
                config.concurrency,
                len(config.engines),
                dask=config.dask is not None,
            ),
        )

    def seats(self) -> Seats:
        """The engines of one worker: a local one's pinned to its CPUs, with ``affinity``."""
        engines = self.engines
        if self.affinity is not None:
            engines = self.affinity.pinned(engines, worker_number())
        return EngineSeats(
            engines, self.control, self.startup_timeout, self.debug, self.stderr_dir, self.names
        )


def cpu_plan(
    affinity: bool,
    concurrency: int,
    engines: int,
    games: int | None = None,
    dask: bool = False,
) -> CpuPlan | None:
    """With ``affinity``, which CPUs each local worker's engines run on
    (``referee.seat.affinity``): one set per game played at once (``concurrency``, or
    fewer when only ``games`` are to be played), of ``engines`` CPUs each. None without, and
    on a Dask cluster (``dask``), whose engines run on its workers."""
    if not affinity or dask:
        return None
    workers = concurrency if games is None else min(concurrency, games)
    return CpuPlan.here(workers, engines)


def play(seats: Seats, job: GameJob) -> Played:
    """Play ``job`` with ``seats``' players: the one way every backend plays a game."""
    started = time.monotonic()
    game = play_game(job.rules, seats.players(job), job.seed, job.key)
    seconds = time.monotonic() - started
    return Played(job, game, seats.finished(job, game), seconds)


def play_job(context: JobContext, job: GameJob) -> Played:
    """The pure job: play one game with fresh engine processes.

    The same engines, rules, seed, key and seats give the same game (for deterministic
    engines), wherever it runs.
    """
    seats = context.seats()
    try:
        return play(seats, job)
    finally:
        seats.close()


class _Watched:
    """One worker's seats, each game's players wrapped by ``watch``."""

    def __init__(self, inner: Seats, watch: Watch) -> None:
        self.inner = inner
        self.watch = watch

    def players(self, job: GameJob) -> list[Player]:
        return self.watch(job, self.inner.players(job))

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        return self.inner.finished(job, game)

    def close(self) -> None:
        self.inner.close()


class LocalBackend:
    """Plays jobs on ``concurrency`` local workers and yields them **in job order** as they
    finish. ``watch`` wraps each game's players (the live page's view of the games).

    Each worker has its own ``Seats``. When ``stop()`` turns true, no new job starts; the
    jobs under way finish and are yielded. Every worker's seats are closed before the
    iterator ends, whatever happens (an exception or the consumer leaving early included).

    With more than one worker, the workers are processes (``processes=None`` chooses them
    wherever ``fork`` exists), so that the referee's own work runs on every core instead of
    taking turns under one interpreter lock. A worker process ignores Ctrl-C (the caller
    decides when to stop) and ends, closing its engines, if the referee itself dies.
    """

    def __init__(
        self, concurrency: int = 1, watch: Watch | None = None, processes: bool | None = None
    ) -> None:
        self.concurrency = concurrency
        self.watch = watch
        self.processes = processes

    def run(
        self,
        jobs: Iterable[GameJob],
        seats: Callable[[], Seats],
        stop: Callable[[], bool] = lambda: False,
    ) -> Iterator[Played]:
        concurrency = self.concurrency
        workers = max(1, min(concurrency, len(jobs)) if isinstance(jobs, Sized) else concurrency)
        processes = self.processes
        if processes is None:
            processes = workers > 1 and "fork" in multiprocessing.get_all_start_methods()
        factory = seats
        if self.watch is not None:
            watch = self.watch

            def factory() -> Seats:
                return _Watched(seats(), watch)

        feed = _Feed(jobs)
        if processes:
            return _in_order(feed, _ProcessWorkers(feed, factory, workers), stop)
        return _in_order(feed, _ThreadWorkers(feed, factory, workers), stop)


class _Feed:
    """The jobs, handed out one at a time to whichever worker asks (from any thread), and the
    order in which they were handed out, for ``_in_order``. Nothing is read ahead, so a
    schedule of any length costs nothing until its games are played."""

    def __init__(self, jobs: Iterable[GameJob]) -> None:
        self._jobs = iter(jobs)
        self._lock = threading.Lock()
        self.order: collections.deque[int] = collections.deque()  # handed out, not yielded

    def take(self) -> GameJob | None:
        with self._lock:
            job = next(self._jobs, None)
            if job is not None:
                self.order.append(job.index)
            return job


_GRACE = 3.0  # seconds the games in progress get to end after an error or Ctrl-C


class _AllEnded:
    """Every worker has ended."""


ALL_ENDED = _AllEnded()


class _Workers(Protocol):
    def start(self) -> None: ...
    def next(self, stop: Callable[[], bool]) -> Played | BaseException | _AllEnded | None: ...
    def shutdown(self) -> None: ...


def _in_order(feed: _Feed, workers: _Workers, stop: Callable[[], bool]) -> Iterator[Played]:
    """Yield the workers' results in the order their jobs were handed out. ``next`` gives a
    result, an exception to raise, ``None`` when a worker ended, or ``ALL_ENDED``."""
    pending: dict[int, Played] = {}
    order = feed.order
    workers.start()
    try:
        while True:
            item = workers.next(stop)
            if isinstance(item, _AllEnded):
                break
            if item is None:
                continue
            if isinstance(item, BaseException):
                raise item
            pending[item.job.index] = item
            while order and order[0] in pending:
                yield pending.pop(order.popleft())
        # After a stop, games that finished out of order are still reported, in order.
        for index in list(order):
            if index in pending:
                yield pending.pop(index)
    finally:
        workers.shutdown()


_worker = threading.local()


def worker_number() -> int:
    """The number (from 0) of the local worker whose thread this is: its seats factory
    may ask which it is (``--affinity`` pins each worker's engines to CPUs of its own).
    0 outside the local workers."""
    number: int = getattr(_worker, "number", 0)
    return number


def _work(
    seats_factory: Callable[[], Seats],
    take: Callable[[], GameJob | None],
    put: Callable[[Played | BaseException | None], None],
    stopping: Callable[[], bool],
    number: int = 0,
) -> None:
    """One worker's loop, the same in a thread and in a process."""
    _worker.number = number
    seats: Seats | None = None
    try:
        seats = seats_factory()
        while not stopping():
            job = take()
            if job is None:
                break
            put(play(seats, job))
    except BaseException as exc:  # a bug, or the worker told to end: hand it on
        put(exc)
    finally:
        if seats is not None:
            seats.close()
        put(None)


class _ThreadWorkers:
    def __init__(self, feed: _Feed, seats_factory: Callable[[], Seats], workers: int) -> None:
        self.feed = feed
        self.done: queue.Queue[Played | BaseException | None] = queue.Queue()
        self.quit = threading.Event()
        self.alive = workers
        self.seats: list[Seats] = []

        def make_seats() -> Seats:
            seats = seats_factory()
            self.seats.append(seats)
            return seats

        self.threads = [
            threading.Thread(
                target=_work,
                args=(make_seats, self._take, self.done.put, self._stopping, i),
                name=f"game-worker-{i}",
                daemon=True,
            )
            for i in range(workers)
        ]

    def _take(self) -> GameJob | None:
        return self.feed.take()

    def _stopping(self) -> bool:
        return self.quit.is_set()

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def next(self, stop: Callable[[], bool]) -> Played | BaseException | _AllEnded | None:
        if not self.alive:
            return ALL_ENDED
        while True:
            if stop():
                self.quit.set()
            try:
                item = self.done.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                self.alive -= 1
            return item

    def shutdown(self) -> None:
        """After a normal end the workers are done already. After an error or Ctrl-C, the
        games in progress get a moment, then their engines are closed under them."""
        self.quit.set()
        deadline = time.monotonic() + _GRACE
        for t in self.threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        if any(t.is_alive() for t in self.threads):
            for seats in self.seats:
                with contextlib.suppress(Exception):
                    seats.close()
            for t in self.threads:
                t.join(timeout=10)


class _ProcessWorkers:
    """Worker processes fed a few jobs at a time, so that the job pipe never fills: a stop
    leaves no process waiting to write jobs that nobody will read."""

    def __init__(self, feed: _Feed, seats_factory: Callable[[], Seats], workers: int) -> None:
        ctx = multiprocessing.get_context("fork")
        self.feed = feed
        self.workers = workers
        self.queued = 0  # jobs handed over and not yet finished
        self.closed_feed = False
        self.todo: multiprocessing.queues.Queue[GameJob | None] = ctx.Queue()
        self.done: multiprocessing.queues.Queue[Played | BaseException | None] = ctx.Queue()
        self.quit = ctx.Event()
        self.alive = workers
        self.procs = [
            ctx.Process(
                target=_process_main,
                args=(seats_factory, self.todo, self.done, self.quit, i, os.getpid()),
                name=f"game-worker-{i}",
                daemon=True,
            )
            for i in range(workers)
        ]

    def _feed(self) -> None:
        while not self.closed_feed and self.queued < 2 * self.workers:
            job = None if self.quit.is_set() else self.feed.take()
            if job is None:
                for _ in range(self.workers):
                    self.todo.put(None)  # one end-of-work mark per worker
                self.closed_feed = True
                return
            self.todo.put(job)
            self.queued += 1

    def start(self) -> None:
        self._feed()
        for p in self.procs:
            p.start()

    def next(self, stop: Callable[[], bool]) -> Played | BaseException | _AllEnded | None:
        while self.alive:
            if stop() and not self.quit.is_set():
                self.quit.set()
                self._feed()
            try:
                item = self.done.get(timeout=0.2)
            except queue.Empty:
                if not any(p.is_alive() for p in self.procs) and self.done.empty():
                    return RuntimeError("a game worker process died unexpectedly")
                continue
            if item is None:
                self.alive -= 1
            elif isinstance(item, Played):
                self.queued -= 1
                self._feed()
            return item
        return ALL_ENDED

    def shutdown(self) -> None:
        self.quit.set()
        self._feed()
        self.todo.cancel_join_thread()  # jobs no worker took need not be flushed
        deadline = time.monotonic() + _GRACE
        for p in self.procs:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        for p in self.procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: the worker closes its engines on the way out
                p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
        self.done.close()
        self.todo.close()


def _process_main(
    seats_factory: Callable[[], Seats],
    todo: multiprocessing.queues.Queue[GameJob | None],
    done: multiprocessing.queues.Queue[Played | BaseException | None],
    quit_event: threading.Event,
    number: int,
    parent: int,
) -> None:
    """A worker process: Ctrl-C is the referee's to handle; SIGTERM, or the death of the
    referee (``parent``), ends the worker through its ``finally``, which closes every engine
    it started."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def terminate(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    _die_with_parent(parent)

    def put(item: Played | BaseException | None) -> None:
        if isinstance(item, BaseException):
            item = _picklable(item)
        done.put(item)

    _work(seats_factory, todo.get, put, quit_event.is_set, number)
    done.close()
    done.join_thread()


def _picklable(exc: BaseException) -> BaseException:
    try:
        pickle.dumps(exc)
    except Exception:  # whatever stops pickling it, a plain copy will do
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _die_with_parent(parent: int) -> None:
    """Ask Linux to send SIGTERM to this process when its parent dies (no orphans). A parent
    that died before the request is seen by the process's parent no longer being ``parent``:
    an orphan is adopted by PID 1, or by a subreaper (a service manager, a test run's reaper)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the request
        os.kill(os.getpid(), signal.SIGTERM)
