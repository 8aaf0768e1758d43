"""Where a tournament's games are played: ``play_job``, the pure job ``(JobContext,
GameJob) -> GameResult`` (start the engines, play, stop them, return the record text and the
result), and ``LocalBackend``, which runs the same jobs on local worker threads with the engines
kept warm. Another backend (a cluster, ``referee.cluster``) only needs to turn ``GameJob``s
into ``GameResult``s.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ginproto.record import EngineInfo, record_from_log
from ginproto.table import GameLog, play_game
from referee.results.report import summarize, summary_json
from referee.results.store import FaultRow, GameResult
from referee.scheduling.config import DEFAULT_EVENT, TournamentConfig
from referee.scheduling.jobs import GameJob
from referee.scheduling.match import (
    Played,
    Seats,
    run_jobs,
    worker_number,
)
from referee.seat.affinity import CpuPlan
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec

log = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class JobContext:
    """What every game of a tournament shares: the engines, and how to run and record them.
    With a ``GameJob`` it is all a game needs (and both can be pickled)."""

    engines: tuple[EngineSpec, ...]
    names: tuple[str, ...]
    control: TimeControl
    startup_timeout: float = 10.0
    event: str = DEFAULT_EVENT
    stderr_dir: str | None = None
    affinity: CpuPlan | None = None  # the local workers' CPUs, with --affinity

    @classmethod
    def of(
        cls, config: TournamentConfig, stderr_dir: str | None = None, hidden: Sequence[str] = ()
    ) -> JobContext:
        """``hidden``: the referee's paths no sandboxed engine may see (the store's folder,
        the config file, the stderr folder)."""
        return cls(
            config.specs(hidden),
            config.names,
            config.control,
            config.startup_timeout,
            config.event,
            stderr_dir,
            cpu_plan(config),
        )

    def seats(self) -> Seats:
        """The engines of one worker: a local one's pinned to its CPUs, with ``affinity``."""
        from referee.scheduling.seats import EngineSeats

        engines = self.engines
        if self.affinity is not None:
            engines = self.affinity.pinned(engines, worker_number())
        return EngineSeats(
            engines, self.control, self.startup_timeout, None, self.stderr_dir, self.names
        )


def cpu_plan(config: TournamentConfig) -> CpuPlan | None:
    """With ``affinity`` (local games only), which CPUs each worker's engines run on."""
    if not config.affinity or config.dask is not None:
        return None
    return CpuPlan.here(config.concurrency, len(config.engines))


def result_of(
    context: JobContext,
    job: GameJob,
    game: GameLog,
    engines: Sequence[EngineInfo],
    seconds: float = 0.0,
) -> GameResult:
    """A played game as the store keeps it: result, faults, summary and record text."""
    from ginproto.record import write_game

    record = record_from_log(
        game,
        engines,
        event=context.event,
        date=datetime.date.today().strftime("%Y.%m.%d"),
        extra=[("Game", str(job.index + 1))],
    )
    summary = summarize(job.lineup, job.key, game)
    faults: tuple[FaultRow, ...] = ()
    if game.fault is not None:
        f = game.fault
        engine = job.lineup[f.player]
        faults = (FaultRow(engine, f.player, f.kind.value, f.detail, f.hand, f.why, f.stderr),)
    return GameResult(
        game=job.index,
        winner=summary.winner,
        termination=str(game.game.end),
        hands=len(game.hands),
        summary=summary_json(summary),
        record=write_game(record),
        faults=faults,
        seconds=seconds,
    )


def play_job(context: JobContext, job: GameJob) -> GameResult:
    """The pure job: play one game with fresh engine processes and return its result.

    The same engines, rules, seed, key and seats give the same result (for deterministic
    engines), wherever it runs; this is what a cluster worker runs.
    """
    seats = context.seats()
    try:
        started = time.monotonic()
        game = play_game(job.rules, seats.players(job), job.seed, job.key)
        info = seats.finished(job, game)
        seconds = time.monotonic() - started
    finally:
        seats.close()
    return result_of(context, job, game, info, seconds)


class Backend(Protocol):
    """Something that plays ``GameJob``s. ``stop()`` turning true means: start no new game
    (the games under way finish and are yielded). Results should come in job order (any
    order is correct, but out-of-order results make the records file be rewritten)."""

    def run(self, jobs: Sequence[GameJob], stop: Callable[[], bool]) -> Iterator[GameResult]: ...


class _TimedSeats:
    """Seats that note when each game starts and ends."""

    def __init__(self, inner: Seats, times: dict[int, float]) -> None:
        self.inner = inner
        self.times = times

    def players(self, job: GameJob) -> list[Any]:
        self.times[job.index] = time.monotonic()
        return self.inner.players(job)

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        self.times[job.index] = time.monotonic() - self.times[job.index]
        return self.inner.finished(job, game)

    def close(self) -> None:
        self.inner.close()


class LocalBackend:
    """Plays jobs on ``concurrency`` local worker threads, each keeping its engine processes
    warm from game to game (restarted after a fault), and yields results in job order.
    ``watch`` wraps each worker's seats, to watch the games it plays (``referee.views.live``)."""

    def __init__(
        self,
        context: JobContext,
        concurrency: int = 1,
        watch: Callable[[Callable[[], Seats]], Callable[[], Seats]] | None = None,
    ) -> None:
        self.context = context
        self.concurrency = concurrency
        self.watch = watch  # wraps the seats factory (the live page's view of the games)

    def run(
        self, jobs: Sequence[GameJob], stop: Callable[[], bool] = lambda: False
    ) -> Iterator[GameResult]:
        times: dict[int, float] = {}

        def seats() -> Seats:
            return _TimedSeats(self.context.seats(), times)

        factory = seats if self.watch is None else self.watch(seats)
        done: Played
        for done in run_jobs(jobs, factory, self.concurrency, stop):
            seconds = times.pop(done.job.index, 0.0)
            yield result_of(self.context, done.job, done.log, done.engines, seconds)
