"""Matches: the schedule of games, a pool of workers that play them, and the results in order.

Every game is a pure job: ``GameJob`` (its rules, seed, deck key and line-up) played by
``play_game`` gives one ``GameLog``. The local runner here is one backend; anything that can
run ``GameJob``s (a cluster, say) can stand in for it, since a job needs nothing else.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import datetime
import logging
import multiprocessing
import multiprocessing.queues
import os
import pickle
import queue
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass
from typing import Any, Final, Protocol, overload

from ginproto.record import EngineInfo, append_game, record_from_log
from ginproto.rules import Rules
from ginproto.table import GameLog, Player, play_game
from ginproto.text import ID_LIMIT, printable
from referee.results.report import Standings, finite_json, summarize
from referee.results.stats import SPRT
from referee.scheduling.jobs import GameJob as GameJob  # part of this module's API
from referee.scheduling.seats import DebugLog, EngineSeats
from referee.seat.affinity import CpuPlan
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec
from referee.seat.preflight import preflight

log = logging.getLogger(__name__)


class Schedule(Sequence[GameJob]):
    """The games of a match, computed on demand like a ``range``: any number of games costs
    the same memory, and job ``i`` is the same whether it is read by index or by iterating.

    Without ``duplicate`` every game has its own deck sequence. With it, each deck sequence
    is played once per rotation of the seats (twice for two engines, three times for three),
    as in duplicate bridge, so the luck of the deal cancels out of the comparison.
    """

    __slots__ = ("duplicate", "engines", "games", "key_base", "rules", "seed", "start")

    def __init__(
        self,
        rules: Rules,
        engines: Sequence[int],
        games: int,
        seed: int | str,
        duplicate: bool = False,
        start: int = 0,
        key_base: int = 0,
    ) -> None:
        n = len(engines)
        if n != rules.players:
            raise ValueError(f"{rules.variant} is played by {rules.players} engines, not {n}")
        self.rules = rules
        self.engines = tuple(engines)
        self.games = max(games, 0)
        self.seed = seed
        self.duplicate = duplicate
        self.start = start
        self.key_base = key_base

    def __len__(self) -> int:
        return self.games

    @overload
    def __getitem__(self, i: int) -> GameJob: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[GameJob]: ...
    def __getitem__(self, i: int | slice) -> GameJob | Sequence[GameJob]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.games))]
        if i < 0:
            i += self.games
        if not 0 <= i < self.games:
            raise IndexError("schedule index out of range")
        n = len(self.engines)
        shift = i % n
        lineup = tuple(self.engines[(p + shift) % n] for p in range(n))
        key = self.key_base + (i // n if self.duplicate else i)
        return GameJob(self.start + i, self.rules, self.seed, key, lineup)

    def __iter__(self) -> Iterator[GameJob]:
        return (self[i] for i in range(self.games))


def schedule(
    rules: Rules,
    engines: Sequence[int],
    games: int,
    seed: int | str,
    duplicate: bool = False,
    start: int = 0,
    key_base: int = 0,
) -> Schedule:
    """``games`` jobs between ``engines`` (indexes), the seats rotating from game to game,
    made one at a time as they are read (see ``Schedule``)."""
    return Schedule(rules, engines, games, seed, duplicate, start, key_base)


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


@dataclass(frozen=True, slots=True)
class Played:
    """A finished job."""

    job: GameJob
    log: GameLog
    engines: tuple[EngineInfo, ...]


def run_jobs(
    jobs: Iterable[GameJob],
    seats_factory: Callable[[], Seats],
    concurrency: int = 1,
    stop: Callable[[], bool] = lambda: False,
    processes: bool | None = None,
) -> Iterator[Played]:
    """Play ``jobs`` on ``concurrency`` workers and yield them **in job order** as they finish.

    Each worker has its own ``Seats``. When ``stop()`` turns true, no new job starts; the
    jobs under way finish and are yielded. Every worker's seats are closed before the
    iterator ends, whatever happens (an exception or the consumer leaving early included).

    With more than one worker, the workers are processes (``processes=None`` chooses them
    wherever ``fork`` exists), so that the referee's own work runs on every core instead of
    taking turns under one interpreter lock. A worker process ignores Ctrl-C (the caller
    decides when to stop) and ends, closing its engines, if the referee itself dies.
    """
    workers = max(1, min(concurrency, len(jobs)) if isinstance(jobs, Sized) else concurrency)
    if processes is None:
        processes = workers > 1 and "fork" in multiprocessing.get_all_start_methods()
    feed = _Feed(jobs)
    if processes:
        return _in_order(feed, _ProcessWorkers(feed, seats_factory, workers), stop)
    return _in_order(feed, _ThreadWorkers(feed, seats_factory, workers), stop)


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
            game = play_game(job.rules, seats.players(job), job.seed, job.key)
            put(Played(job, game, seats.finished(job, game)))
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
                args=(seats_factory, self.todo, self.done, self.quit, i),
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
) -> None:
    """A worker process: Ctrl-C is the referee's to handle; SIGTERM, or the referee's death,
    ends the worker through its ``finally``, which closes every engine it started."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def terminate(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    _die_with_parent()

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


def _die_with_parent() -> None:
    """Ask Linux to send SIGTERM to this process when its parent dies (no orphans)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before the request
            os.kill(os.getpid(), signal.SIGTERM)


# ------------------------------------------------------------------------------------------
# A match between engine processes


SEED_BITS: Final = 128
"""The entropy of a random seed: enough that no one can guess it or try every one."""


def random_seed() -> int:
    """A seed for a run given none: ``SEED_BITS`` random bits from the system's secure source.

    The seed decides every deck, so a guessable one would let an engine know every card; the
    seed becomes a deck through SHA-256 of its full decimal text (``ginproto.cards``), so all
    its bits count.
    """
    return secrets.randbits(SEED_BITS)


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """Everything ``ginref match`` was asked for."""

    engines: tuple[EngineSpec, ...]
    rules: Rules
    games: int
    seed: int | str
    control: TimeControl
    duplicate: bool = False
    concurrency: int = 1
    startup_timeout: float = 10.0
    record: str | None = None
    debug_log: str | None = None
    stderr_dir: str | None = None
    sprt: tuple[float, float, float, float] | None = None
    event: str = "ginref match"
    affinity: bool = False  # pin each local worker's engines to CPUs of their own


def cpu_plan(config: MatchConfig) -> CpuPlan | None:
    """With ``affinity``, which CPUs each local worker's engines run on
    (``referee.seat.affinity``); None without."""
    if not config.affinity:
        return None
    return CpuPlan.here(min(config.concurrency, config.games), len(config.engines))


@dataclass(slots=True)
class MatchResult:
    standings: Standings
    played: int
    sprt: SPRT | None
    stopped_early: bool


class MatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during ``run_match``: ``result`` holds the games finished before it (each one
    recorded whole); the games in progress are dropped, and none of them is recorded."""

    def __init__(self, result: MatchResult) -> None:
        super().__init__()
        self.result = result


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the length of the block, then deliver them to the
    handlers they would have met: a game is recorded and counted together, or not at all.
    Only the main thread receives signals; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: object) -> None:
        held.append(signum)

    previous: dict[signal.Signals, Any] = {}
    for which in (signal.SIGINT, signal.SIGTERM):
        if callable(signal.getsignal(which)):  # Python handlers; default actions stay as they are
            previous[which] = signal.signal(which, hold)
    try:
        yield
    finally:
        for which, handler in previous.items():
            signal.signal(which, handler)
        for signum in held:  # each one: a second Ctrl-C may mean more than the first
            signal.raise_signal(signum)


def sprt_json(sprt: SPRT | None) -> dict[str, Any] | None:
    """The SPRT's state as ``--json`` gives it: its log-likelihood ratio, bounds and verdict."""
    if sprt is None:
        return None
    return {"llr": sprt.llr, "lower": sprt.lower, "upper": sprt.upper, "state": sprt.state}


def match_json(config: MatchConfig, result: MatchResult) -> dict[str, Any]:
    """The figures of ``ginref match --json``, built once for the command line and the Python
    API alike: the standings' JSON, the seed, the variant, the SPRT and whether the match
    stopped early. It has no infinities (``referee.results.report.finite_json``)."""
    out = result.standings.to_json()
    out["seed"] = config.seed
    out["variant"] = str(config.rules.variant)
    out["sprt"] = sprt_json(result.sprt)
    out["stopped_early"] = result.stopped_early
    json: dict[str, Any] = finite_json(out)
    return json


def _named(exc: OSError, path: str | None) -> OSError:
    """``exc`` with the file it is about, for a message that says which file failed."""
    if exc.errno is None or exc.filename is not None:
        return exc
    return OSError(exc.errno, exc.strerror, path)


def engine_names(config: MatchConfig, *, check: bool = True) -> list[str]:
    """Check every engine before game 1 (``referee.seat.preflight``: it starts, completes the
    handshake and declares the options it is given; else `EngineNotReady`) and return each
    one's display name: the override, else its ``id name``, else its built-in name or
    program; repeated names get ``#2``, ``#3``. Each is bounded and printable
    (``ginproto.text``), since it reaches terminals and records. ``check=False`` is for
    engines already checked where they will run (the workers of a cluster)."""
    found: list[str | None] = [None] * len(config.engines)
    if check:
        ids = preflight(config.engines, config.control, config.startup_timeout)
        found = [i.name for i in ids]
    names = [
        printable(spec.name or name or spec.label, ID_LIMIT)
        for spec, name in zip(config.engines, found, strict=True)
    ]
    return numbered(names)


def numbered(names: Sequence[str]) -> list[str]:
    """``names`` as shown, a repeated one numbered from its second (``Simple``, ``Simple#2``)."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


JobRunner = Callable[
    [Sequence[GameJob], Callable[[], Seats], int, Callable[[], bool]], Iterator[Played]
]
"""A backend for a match: ``(jobs, seats factory, concurrency, stop)`` to the finished games in
job order. ``run_jobs`` (local workers) is the default; ``DaskCluster.run_jobs`` is another."""


def match_jobs(config: MatchConfig) -> Schedule:
    """The games of the match ``config`` describes, in playing order (made as they are read)."""
    return schedule(
        config.rules, range(len(config.engines)), config.games, config.seed, config.duplicate
    )


def run_match(
    config: MatchConfig,
    names: Sequence[str],
    on_game: Callable[[Played, Standings], None] | None = None,
    runner: JobRunner = run_jobs,
    stop: Callable[[], bool] | None = None,
) -> MatchResult:
    """Play the match, write each game's record as soon as it (and every game before it) is
    done, and return the standings. Engine faults are rulings inside the games; only referee
    bugs and failures of the referee's own files raise: ``OSError`` (naming the file) for the
    record, the debug log and the stderr files, which stops the match with every game
    finished before it kept in the record. Once ``stop()`` says True, no new game starts."""
    jobs = match_jobs(config)
    try:
        debug = DebugLog(config.debug_log) if config.debug_log else None
    except OSError as exc:
        raise _named(exc, config.debug_log) from None
    if config.stderr_dir:
        try:
            os.makedirs(config.stderr_dir, exist_ok=True)
        except OSError as exc:
            raise _named(exc, config.stderr_dir) from None
    standings = Standings(names, config.duplicate)
    sprt = SPRT(*config.sprt) if config.sprt else None
    decided = threading.Event()
    today = datetime.date.today().strftime("%Y.%m.%d")

    plan = cpu_plan(config)

    def seats() -> Seats:
        specs = config.engines if plan is None else plan.pinned(config.engines, worker_number())
        return EngineSeats(
            specs, config.control, config.startup_timeout, debug, config.stderr_dir, names
        )

    played = 0
    try:
        halt = decided.is_set if stop is None else lambda: decided.is_set() or stop()
        for done in runner(jobs, seats, config.concurrency, halt):
            # A Ctrl-C waits for the game to be recorded, counted and reported.
            with deferred_interrupts():
                if config.record:
                    record = record_from_log(
                        done.log,
                        done.engines,
                        event=config.event,
                        date=today,
                        extra=[("Game", str(done.job.index + 1))],
                    )
                    try:
                        append_game(config.record, record)
                    except OSError as exc:
                        raise _named(exc, config.record) from None
                summary = summarize(done.job.lineup, done.job.key, done.log)
                standings.add(summary)
                played += 1
                if sprt is not None and len(names) == 2:
                    score = 0.5 if summary.winner is None else (1.0 if summary.winner == 0 else 0.0)
                    sprt.update(
                        wins=int(score == 1.0), losses=int(score == 0.0), draws=int(score == 0.5)
                    )
                    if sprt.state != "continue":
                        decided.set()
                if on_game is not None:
                    on_game(done, standings)
    except KeyboardInterrupt:
        raise MatchInterrupted(MatchResult(standings, played, sprt, True)) from None
    return MatchResult(standings, played, sprt, played < len(jobs))
