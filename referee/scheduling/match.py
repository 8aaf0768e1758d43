"""Matches: the schedule of games, played on a backend, and the results in order.

Every game is a pure job: ``GameJob`` (its rules, seed, deck key and line-up) played by
``play_game`` gives one ``GameLog``. Any ``Backend`` (``referee.scheduling.backends``: local
workers, or a Dask cluster) plays the jobs, since a job needs nothing else; the match writes
each game's record and counts it, in job order.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import secrets
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, overload

from ginproto.record import append_game, record_from_log
from ginproto.rules import Rules
from ginproto.text import ID_LIMIT, printable
from referee.results.match import (
    GameOutcome,
    MatchInterrupted,
    MatchResult,
    match_result,
    outcome_of,
)
from referee.results.played import GameJob, Played
from referee.results.report import Standings, summarize
from referee.results.stats import SPRT
from referee.scheduling.backends import Backend, JobContext, LocalBackend, cpu_plan
from referee.scheduling.seats import DebugLog
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


def match_jobs(config: MatchConfig) -> Schedule:
    """The games of the match ``config`` describes, in playing order (made as they are read)."""
    return schedule(
        config.rules, range(len(config.engines)), config.games, config.seed, config.duplicate
    )


def match_context(config: MatchConfig, names: Sequence[str]) -> JobContext:
    """What every game of the match shares: its engines, named, pinned with ``affinity``, their
    stderr files and the debug log (opened here: ``OSError`` naming the file)."""
    try:
        debug = DebugLog(config.debug_log) if config.debug_log else None
    except OSError as exc:
        raise _named(exc, config.debug_log) from None
    if config.stderr_dir:
        try:
            os.makedirs(config.stderr_dir, exist_ok=True)
        except OSError as exc:
            raise _named(exc, config.stderr_dir) from None
    plan = cpu_plan(config.affinity, config.concurrency, len(config.engines), config.games)
    return JobContext(
        config.engines,
        tuple(names),
        config.control,
        config.startup_timeout,
        config.stderr_dir,
        debug,
        plan,
    )


def run_match(
    config: MatchConfig,
    names: Sequence[str],
    on_game: Callable[[Played, Standings], None] | None = None,
    backend: Backend | None = None,
    stop: Callable[[], bool] | None = None,
) -> MatchResult:
    """Play the match on ``backend`` (default: ``config.concurrency`` local workers), write
    each game's record as soon as it (and every game before it) is done, and return the
    match's result. Engine faults are rulings inside the games; only referee bugs and failures of
    the referee's own files raise: ``OSError`` (naming the file) for the record, the debug log
    and the stderr files, which stops the match with every game finished before it kept in
    the record. Once ``stop()`` says True, no new game starts. Ctrl-C raises
    ``MatchInterrupted``, with the result of the games recorded before it."""
    jobs = match_jobs(config)
    rules = config.rules
    context = match_context(config, names)
    if backend is None:
        backend = LocalBackend(config.concurrency)
    standings = Standings(names, config.duplicate)
    outcomes: list[GameOutcome] = []
    sprt = SPRT(*config.sprt) if config.sprt else None
    decided = threading.Event()
    today = datetime.date.today().strftime("%Y.%m.%d")
    try:
        halt = decided.is_set if stop is None else lambda: decided.is_set() or stop()
        for done in backend.run(jobs, context.seats, halt):
            # A Ctrl-C waits for the game to be recorded, counted and reported.
            with deferred_interrupts():
                if config.record:
                    _append(config, done, today)
                summary = summarize(done.job.lineup, done.job.key, done.log)
                standings.add(summary)
                outcomes.append(outcome_of(done))
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
        result = match_result(names, rules.variant, config.seed, outcomes, standings, sprt, True)
        raise MatchInterrupted(result) from None
    stopped = len(outcomes) < len(jobs)
    return match_result(names, rules.variant, config.seed, outcomes, standings, sprt, stopped)


def _append(config: MatchConfig, done: Played, today: str) -> None:
    """Append ``done``'s record to the match's records file."""
    assert config.record is not None
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
