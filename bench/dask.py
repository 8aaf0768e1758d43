"""The Dask backend against the local pool, and the coordinator's commit-rate limit.

Measured in one run, on this machine, through the whole tournament path (engine processes,
the SQLite store with one transaction per game, the records file):

1. games/s of the same round-robin (Simple, Simple-B, Random; ``--games`` per pairing, one
   seed) on the local pool at 2 workers (the baseline) and on a ``LocalCluster`` of 2 worker
   processes (started and checked once, before the clock starts), in turn for ``--rounds``
   rounds, the best of each; and their ratio;
2. the per-game overhead in ms of each path: the time of a worker per game that is not spent
   playing it (wall time times workers, less the games' own time, per game), and what the
   Dask path adds to the local one;
3. the coordinator's commit rate limit: games/s when ``run_tournament`` commits games that are
   already played (a backend that hands back stored results at once), i.e. what the single
   writer can take in however many workers play. Throughput grows with workers up to there.

Usage: ``python bench/dask.py [--games N] [--workers W] [--rounds R] [--commits C]``
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

# Run as a script, this file's folder comes first on the path, where its name would hide the
# dask package: put the project there instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from referee.cluster.backend import DaskBackend  # noqa: E402
from referee.results.played import GameJob, Played  # noqa: E402
from referee.scheduling.backends import Backend, JobContext, LocalBackend  # noqa: E402
from referee.scheduling.config import TournamentConfig  # noqa: E402
from referee.scheduling.loader import build_config  # noqa: E402
from referee.scheduling.seats import Seats  # noqa: E402
from referee.scheduling.tournament import open_tournament, run_tournament  # noqa: E402

ENGINES = [
    {"name": "Simple", "command": "simple"},
    {"name": "Simple-B", "command": "simple"},
    {"name": "Random", "command": "random", "options": {"Seed": 1}},
]


def config(games: int, workers: int, seed: int) -> TournamentConfig:
    return build_config(
        {
            "event": "bench",
            "seed": seed,
            "games": games,
            "concurrency": workers,
            "tc": "inf",
            "engines": ENGINES,
        }
    )


def timed(cfg: TournamentConfig, backend: Backend) -> tuple[int, float, float, list[str]]:
    """(games, seconds, seconds spent playing the games, records) of one whole tournament in
    a fresh directory."""
    with tempfile.TemporaryDirectory(prefix="ginref-bench-") as folder:
        store = open_tournament(cfg, folder, resume=False)
        try:
            start = time.perf_counter()
            played = run_tournament(store, cfg, backend)
            seconds = time.perf_counter() - start
            records = [text for _, text in store.records()]
            playing = sum(r.seconds for r in store.results())
        finally:
            store.close()
    return played, seconds, playing, records


class Replay:
    """A backend whose games are already played: it hands them back at once."""

    def __init__(self, games: Sequence[Played]) -> None:
        self.games = {g.job.index: g for g in games}

    def run(
        self,
        jobs: Iterable[GameJob],
        seats: Callable[[], Seats],
        stop: Callable[[], bool] = lambda: False,
    ) -> Iterator[Played]:
        for job in jobs:
            yield self.games[job.index]


class Recording:
    """A backend that keeps every game another plays."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.games: list[Played] = []

    def run(
        self,
        jobs: Iterable[GameJob],
        seats: Callable[[], Seats],
        stop: Callable[[], bool] = lambda: False,
    ) -> Iterator[Played]:
        for done in self.inner.run(jobs, seats, stop):
            self.games.append(done)
            yield done


def commit_rate(cfg: TournamentConfig, games: Sequence[Played], copies: int) -> float:
    """games/s of ``run_tournament`` committing ``copies`` rounds of already-played games
    (their records written, and stored with them in the store and the records file)."""
    big = config(cfg.games * copies, 1, int(cfg.seed or 0))
    rows = {g.job.index: g for g in games}
    per_round = len(games)
    # Game g of the big schedule is game (g mod one round) of the small one, renumbered.
    replayed = [
        dataclasses.replace(
            rows[g % per_round], job=dataclasses.replace(rows[g % per_round].job, index=g)
        )
        for g in range(per_round * copies)
    ]
    with tempfile.TemporaryDirectory(prefix="ginref-bench-") as folder:
        store = open_tournament(big, folder, resume=False)
        try:
            start = time.perf_counter()
            played = run_tournament(store, big, Replay(replayed))
            seconds = time.perf_counter() - start
        finally:
            store.close()
    return played / seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=20, help="games per pairing")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--commits", type=int, default=10, help="rounds replayed in (3)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each backend")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    cfg = config(args.games, args.workers, args.seed)
    context = JobContext.of(cfg)

    print(
        f"Round-robin of {len(ENGINES)} engines, {args.games} games per pairing,"
        f" {args.workers} workers (cores: {os.cpu_count()}); the best of {args.rounds} rounds,"
        " local and Dask in turn"
    )
    started = time.perf_counter()
    local_s = dask_s = math.inf
    local_idle = dask_idle = 0.0
    same = True
    with DaskBackend(f"local:{args.workers}") as cluster:
        cluster.check_engines(context.engines, context.control, context.startup_timeout)
        ready = time.perf_counter() - started
        for _ in range(args.rounds):
            games, seconds, playing, local_records = timed(cfg, LocalBackend(args.workers))
            if seconds < local_s:
                local_s, local_idle = seconds, (seconds * args.workers - playing) / games
            games, seconds, playing, dask_records = timed(cfg, cluster)
            if seconds < dask_s:
                dask_s, dask_idle = seconds, (seconds * args.workers - playing) / games
            same = same and dask_records == local_records
    local_rate, dask_rate = games / local_s, games / dask_s
    print(f"{'local pool':>22}: {games} games in {local_s:6.2f} s, {local_rate:7.2f} games/s")
    print(
        f"{'Dask LocalCluster':>22}: {games} games in {dask_s:6.2f} s, {dask_rate:7.2f} games/s"
        f"  (cluster start and engine check, once: {ready:.2f} s)"
    )
    print(
        f"{'ratio Dask / local':>22}: {dask_rate / local_rate:.2f}"
        f"  ({'the same records' if same else 'DIFFERENT records'})"
    )
    print(
        f"{'per-game overhead':>22}: Dask {1000 * dask_idle:.1f} ms, local {1000 * local_idle:.1f}"
        f" ms (a worker's time per game not spent playing it); the Dask path adds"
        f" {1000 * (dask_idle - local_idle):+.1f} ms"
    )

    with tempfile.TemporaryDirectory(prefix="ginref-bench-") as folder:
        store = open_tournament(cfg, folder, resume=False)
        try:
            recording = Recording(LocalBackend(args.workers))
            run_tournament(store, cfg, recording)
        finally:
            store.close()
    rate = commit_rate(cfg, recording.games, args.commits)
    print(
        f"{'commit rate limit':>22}: {rate:7.1f} games/s (the coordinator committing"
        f" {len(recording.games) * args.commits} played games to the store and the records file)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
