"""Matches: the schedule of games, a pool of workers that play them, and the results in order.

Every game is a pure job: ``GameJob`` (its rules, seed, deck key and line-up) played by
``play_game`` gives one ``GameLog``. The local runner here is one backend; anything that can
run ``GameJob``s (a cluster, say) can stand in for it, since a job needs nothing else.
"""

from __future__ import annotations

import datetime
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ginproto.record import EngineInfo
from ginproto.rules import Rules
from ginproto.table import GameLog, Player, PlayerFault, play_game
from referee.clock import TimeControl
from referee.engine import EnginePlayer, EngineSpec
from referee.report import Standings, summarize
from referee.stats import SPRT

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: ``lineup[p]`` is the engine (by its index in the match) that plays
    as player ``p``; ``key`` picks the deck sequence, shared by the games of a duplicate set."""

    index: int
    rules: Rules
    seed: int | str
    key: int
    lineup: tuple[int, ...]


def schedule(
    rules: Rules,
    engines: Sequence[int],
    games: int,
    seed: int | str,
    duplicate: bool = False,
    start: int = 0,
    key_base: int = 0,
) -> list[GameJob]:
    """``games`` jobs between ``engines`` (indexes), the seats rotating from game to game.

    Without ``duplicate`` every game has its own deck sequence. With it, each deck sequence
    is played once per rotation of the seats (twice for two engines, three times for three),
    as in duplicate bridge, so the luck of the deal cancels out of the comparison.
    """
    n = len(engines)
    if n != rules.players:
        raise ValueError(f"{rules.variant} is played by {rules.players} engines, not {n}")
    jobs = []
    for i in range(games):
        shift = i % n
        lineup = tuple(engines[(p + shift) % n] for p in range(n))
        key = key_base + (i // n if duplicate else i)
        jobs.append(GameJob(start + i, rules, seed, key, lineup))
    return jobs


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
    jobs: Sequence[GameJob],
    seats_factory: Callable[[], Seats],
    concurrency: int = 1,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[Played]:
    """Play ``jobs`` on ``concurrency`` workers and yield them **in job order** as they finish.

    Each worker has its own ``Seats``. When ``stop()`` turns true, no new job starts; the
    jobs under way finish and are yielded. Every worker's seats are closed before the
    iterator ends, whatever happens (an exception or the consumer leaving early included).
    """
    todo: queue.Queue[GameJob | None] = queue.Queue()
    for job in jobs:
        todo.put(job)
    done: queue.Queue[Played | BaseException | None] = queue.Queue()  # None: a worker ended
    quit_now = threading.Event()
    workers = max(1, min(concurrency, len(jobs)))

    def work() -> None:
        seats: Seats | None = None
        try:
            seats = seats_factory()
            while not quit_now.is_set() and not stop():
                try:
                    job = todo.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    break
                game = play_game(job.rules, seats.players(job), job.seed, job.key)
                done.put(Played(job, game, seats.finished(job, game)))
        except BaseException as exc:  # a bug: hand it to the consumer
            done.put(exc)
        finally:
            if seats is not None:
                seats.close()
            done.put(None)

    threads = [
        threading.Thread(target=work, name=f"game-worker-{i}", daemon=True) for i in range(workers)
    ]
    for t in threads:
        t.start()
    pending: dict[int, Played] = {}
    order = [job.index for job in jobs]
    next_pos = 0
    alive = workers
    try:
        while alive:
            item = done.get()
            if item is None:
                alive -= 1
                continue
            if isinstance(item, BaseException):
                raise item
            pending[item.job.index] = item
            while next_pos < len(order) and order[next_pos] in pending:
                yield pending.pop(order[next_pos])
                next_pos += 1
        # After a stop, games that finished out of order are still reported, in order.
        for index in sorted(pending, key=order.index):
            yield pending.pop(index)
    finally:
        quit_now.set()
        for t in threads:
            t.join(timeout=30)


# ------------------------------------------------------------------------------------------
# A match between engine processes


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


@dataclass(slots=True)
class MatchResult:
    standings: Standings
    played: int
    sprt: SPRT | None
    stopped_early: bool


def engine_names(config: MatchConfig) -> list[str]:
    """Each engine's display name: the override, else its ``id name`` (asked once, before the
    match), else its built-in name or program; repeated names get ``#2``, ``#3``."""
    names = []
    for spec in config.engines:
        name = spec.name
        if name is None:
            probe = EnginePlayer(spec, config.control, config.startup_timeout)
            try:
                probe.start()
                name = probe.id.name
            except PlayerFault as fault:
                log.warning("%s did not start cleanly: %s", spec.label, fault.detail)
            finally:
                probe.close()
        names.append(name or spec.label)
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def run_match(
    config: MatchConfig,
    names: Sequence[str],
    on_game: Callable[[Played, Standings], None] | None = None,
) -> MatchResult:
    """Play the match, write each game's record as soon as it (and every game before it) is
    done, and return the standings. Engine faults are rulings inside the games; only referee
    bugs and I/O errors on the record file raise."""
    from ginproto.record import append_game, record_from_log
    from referee.seats import DebugLog, EngineSeats

    jobs = schedule(
        config.rules, range(len(config.engines)), config.games, config.seed, config.duplicate
    )
    debug = DebugLog(config.debug_log) if config.debug_log else None
    if config.stderr_dir:
        os.makedirs(config.stderr_dir, exist_ok=True)
    standings = Standings(names)
    sprt = SPRT(*config.sprt) if config.sprt else None
    decided = threading.Event()
    today = datetime.date.today().strftime("%Y.%m.%d")

    def seats() -> Seats:
        return EngineSeats(
            config.engines, config.control, config.startup_timeout, debug, config.stderr_dir, names
        )

    played = 0
    for done in run_jobs(jobs, seats, config.concurrency, stop=decided.is_set):
        played += 1
        if config.record:
            record = record_from_log(
                done.log,
                done.engines,
                event=config.event,
                date=today,
                extra=[("Game", str(done.job.index + 1))],
            )
            append_game(config.record, record)
        summary = summarize(done.job.lineup, done.job.key, done.log)
        standings.add(summary)
        if sprt is not None and len(names) == 2:
            score = 0.5 if summary.winner is None else (1.0 if summary.winner == 0 else 0.0)
            sprt.update(
                wins=int(score == 1.0), losses=int(score == 0.0), draws=int(score == 0.5)
            )
            if sprt.state != "continue":
                decided.set()
        if on_game is not None:
            on_game(done, standings)
    return MatchResult(standings, played, sprt, played < len(jobs))
