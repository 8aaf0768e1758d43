"""Tournament scaling: games/s and hands/s at concurrency 1 and 2, and flat memory on a long run.

Measured in one run, on this machine, through the whole tournament path (engine processes,
the SQLite store with one transaction per game, the records file):

1. throughput: the same round-robin (Simple, Simple-B, Random; ``--games`` per pairing, one
   seed) in a fresh store at concurrency 1, then at 2 (and up to ``--max-concurrency``); games/s,
   hands/s and each one's ratio to concurrency 1, the baseline;
2. memory: a round-robin of the same engines that stops after ``--hands`` hands (default 2000;
   ``--hands 10000`` for the full check), with the resident set size of the referee (this
   process and its game-worker processes; the engines are other programs) printed at
   intervals, and its growth from the first sample after warm-up to the end.

Usage: ``python bench/tournament.py [--games N] [--hands H] [--max-concurrency C]
[--skip-memory]``
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.results.store import GameResult, Scheduled
from referee.scheduling.config import TournamentConfig
from referee.scheduling.loader import build_config
from referee.scheduling.tournament import open_tournament, run_tournament

ENGINES: list[dict[str, Any]] = [
    {"name": "Simple", "command": "simple"},
    {"name": "Simple-B", "command": "simple"},
    {"name": "Random", "command": "random", "options": {"Seed": 1}},
]


def _vm_rss(pid: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def rss_kib() -> int:
    """The referee's resident set size now (``VmRSS``): this process plus its game-worker
    processes (forked children running this same program; the engines are other programs).
    Where /proc is missing, this process's peak."""
    try:
        me = str(os.getpid())
        total = _vm_rss(me)
        with open(f"/proc/{me}/cmdline", "rb") as f:
            own = f.read()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid == me:
                continue
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                    ppid = f.read().rsplit(")", 1)[1].split()[1]
                if ppid != me:
                    continue
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f.read() == own:
                        total += _vm_rss(pid)
            except OSError:
                continue
        return total
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def config(games: int, concurrency: int, seed: int) -> TournamentConfig:
    return build_config(
        {
            "event": "bench",
            "seed": seed,
            "games": games,
            "concurrency": concurrency,
            "tc": "inf",
            "engines": ENGINES,
        }
    )


def cpu_seconds() -> tuple[float, float]:
    """CPU time (user + system) of this process, and of its ended children (the engines)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def throughput(games: int, concurrency: int, seed: int) -> tuple[int, int, float, float, float]:
    """(games, hands, seconds, referee CPU s, engines' CPU s) of one whole tournament in a
    fresh directory."""
    cfg = config(games, concurrency, seed)
    hands = 0

    def on_game(game: Scheduled, result: GameResult) -> None:
        nonlocal hands
        hands += result.hands

    with tempfile.TemporaryDirectory(prefix="ginref-bench-") as folder:
        store = open_tournament(cfg, folder, resume=False)
        try:
            cpu_before = cpu_seconds()
            start = time.perf_counter()
            played = run_tournament(store, cfg, on_game=on_game)
            seconds = time.perf_counter() - start
            cpu_after = cpu_seconds()  # the engines have been reaped when the run returns
        finally:
            store.close()
    referee, engines = (b - a for a, b in zip(cpu_before, cpu_after, strict=True))
    return played, hands, seconds, referee, engines


def memory(target: int, hands_per_game: float, concurrency: int, seed: int, samples: int) -> None:
    pairings = len(ENGINES) * (len(ENGINES) - 1) // 2
    per_pairing = math.ceil(1.5 * target / hands_per_game / pairings) + 2
    cfg = config(per_pairing, concurrency, seed + 1)
    hands = games = 0
    every = max(1, target // samples)
    next_sample = every
    rows: list[tuple[int, int, int, float]] = []
    started = time.perf_counter()

    def on_game(game: Scheduled, result: GameResult) -> None:
        nonlocal hands, games, next_sample
        hands += result.hands
        games += 1
        if hands >= next_sample:
            rows.append((hands, games, rss_kib(), time.perf_counter() - started))
            print(f"{hands:>8} {games:>7} {rows[-1][2] / 1024:>10.1f} {rows[-1][3]:>8.1f}")
            sys.stdout.flush()
            next_sample += every

    print(f"\nMemory: a round-robin that stops after {target} hands, concurrency {concurrency}")
    print(f"{'hands':>8} {'games':>7} {'RSS (MiB)':>10} {'seconds':>8}")
    with tempfile.TemporaryDirectory(prefix="ginref-bench-") as folder:
        store = open_tournament(cfg, folder, resume=False)
        try:
            before = rss_kib()
            run_tournament(store, cfg, on_game=on_game, stop=lambda: hands >= target)
            size = sum(
                os.path.getsize(os.path.join(folder, name))
                for name in os.listdir(folder)
                if name.startswith("tournament.sqlite")
            )
        finally:
            store.close()
    if len(rows) < 2:
        print("too few samples; raise --hands")
        return
    warm = rows[0][2]
    last = rows[-1][2]
    peak = max(r[2] for r in rows)
    half = rows[len(rows) // 2]
    print(
        f"RSS at start {before / 1024:.1f} MiB; after {rows[0][0]} hands (warm) {warm / 1024:.1f}"
        f" MiB; at the end ({rows[-1][0]} hands) {last / 1024:.1f} MiB; peak {peak / 1024:.1f} MiB"
    )
    print(
        f"growth after warm-up: {(last - warm) / 1024:+.1f} MiB"
        f" ({(last - warm) / max(1, rows[-1][0] - rows[0][0]) * 1024:+.1f} bytes/hand);"
        f" the store (with its WAL) is {size / 2**20:.1f} MiB on disk"
    )
    print(
        f"growth over the second half ({half[0]} to {rows[-1][0]} hands):"
        f" {(last - half[2]) / 1024:+.1f} MiB (early growth is bounded caches filling: SQLite's"
        " page cache, the rules core's meld tables)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=20, help="games per pairing (throughput)")
    parser.add_argument("--hands", type=int, default=2000, help="hands of the memory run")
    parser.add_argument("--max-concurrency", type=int, default=2, help="highest level timed")
    parser.add_argument("--samples", type=int, default=10, help="RSS samples in the memory run")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--skip-memory", action="store_true", help="only the throughput")
    args = parser.parse_args(argv)

    print(f"Throughput: round-robin of {len(ENGINES)} engines, {args.games} games per pairing")
    print(
        f"{'concurrency':>11} {'games':>6} {'hands':>6} {'seconds':>8} {'games/s':>8}"
        f" {'hands/s':>8} {'ratio':>6} {'referee CPU/game':>17} {'engines CPU/game':>17}"
        f" {'cores busy':>10}"
    )
    base = 0.0
    hands_per_game = 3.0
    for level in range(1, max(1, args.max_concurrency) + 1):
        games, hands, seconds, referee, engines = throughput(args.games, level, args.seed)
        rate = games / seconds
        base = base or rate
        hands_per_game = hands / games
        print(
            f"{level:>11} {games:>6} {hands:>6} {seconds:>8.2f} {rate:>8.2f}"
            f" {hands / seconds:>8.1f} {rate / base:>6.2f} {1000 * referee / games:>14.1f} ms"
            f" {1000 * engines / games:>14.1f} ms {(referee + engines) / seconds:>10.2f}"
        )
    print(
        f"(cores: {os.cpu_count()}; the ratio is games/s against concurrency 1; cores busy is"
        " the CPU time of the referee and the engines over the wall time)"
    )
    if not args.skip_memory:
        memory(args.hands, hands_per_game, min(2, args.max_concurrency), args.seed, args.samples)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
