"""Referee throughput: the cost of a decision against a bare pipe round trip, and hands/s.

Measured in one run, on this machine:

1. the bare round trip: one line to a child process that echoes it back at once, over pipes,
   with a line as long as a typical ``position`` line (the physical limit);
2. the same round trip through the referee's own plumbing (``EngineProcess``: reader threads,
   line limits, logging hooks);
3. a match between built-in engines: wall time and referee CPU per decision, the wall time as
   a ratio of the bare round trip, and hands per second at concurrency 1 and 2.

Usage: ``python bench/throughput.py [--games N] [--engines simple simple]``
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ginproto.rules import Rules
from referee.clock import TimeControl
from referee.engine import EngineSpec
from referee.match import run_jobs, schedule
from referee.process import EngineProcess
from referee.seats import EngineSeats

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
LINE = "position " + "x" * 600


def bare_round_trip(n: int) -> float:
    """Seconds per round trip over raw pipes, no threads."""
    child = subprocess.Popen(
        [sys.executable, "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    payload = LINE + "\n"
    for _ in range(200):  # warm up
        child.stdin.write(payload)
        child.stdin.flush()
        child.stdout.readline()
    start = time.perf_counter()
    for _ in range(n):
        child.stdin.write(payload)
        child.stdin.flush()
        child.stdout.readline()
    elapsed = time.perf_counter() - start
    child.stdin.close()
    child.wait()
    return elapsed / n


def plumbing_round_trip(n: int) -> float:
    """Seconds per round trip through ``EngineProcess`` (the referee's process layer)."""
    with EngineProcess.start([sys.executable, "-c", ECHO], name="echo") as proc:
        for _ in range(200):
            proc.send(LINE)
            proc.read_line(5.0)
        start = time.perf_counter()
        for _ in range(n):
            proc.send(LINE)
            proc.read_line(5.0)
        return (time.perf_counter() - start) / n


def match(engines: list[str], games: int, concurrency: int) -> dict[str, float]:
    specs = tuple(EngineSpec.parse(e) for e in engines)
    rules = Rules()
    jobs = schedule(rules, range(len(specs)), games, seed=2024)
    control = TimeControl(base=None, move=10.0)

    def seats() -> EngineSeats:
        return EngineSeats(specs, control, 10.0)

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    hands = decisions = 0
    for done in run_jobs(jobs, seats, concurrency):
        hands += len(done.log.hands)
        for hand in done.log.hands:
            decisions += sum(1 + (step.advice is not None) for step in hand.steps)
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return {
        "games": games,
        "hands": hands,
        "decisions": decisions,
        "wall": wall,
        "cpu": cpu,
        "hands_per_s": hands / wall,
        "wall_per_decision": wall / decisions,
        "cpu_per_decision": cpu / decisions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per match (default 40)")
    parser.add_argument("--trips", type=int, default=5000, help="round trips (default 5000)")
    parser.add_argument("--engines", nargs=2, default=["simple", "simple"], metavar="ENGINE")
    args = parser.parse_args()

    bare = bare_round_trip(args.trips)
    plumbing = plumbing_round_trip(args.trips)
    print(f"bare pipe round trip:             {bare * 1e6:8.1f} us")
    print(
        f"EngineProcess round trip:         {plumbing * 1e6:8.1f} us   ratio {plumbing / bare:.2f}"
    )
    one = match(args.engines, args.games, 1)
    print(
        f"match {' vs '.join(args.engines)}, concurrency 1: {one['games']:.0f} games,"
        f" {one['hands']:.0f} hands, {one['decisions']:.0f} decisions in {one['wall']:.2f}s"
    )
    print(
        f"  wall per decision:              {one['wall_per_decision'] * 1e6:8.1f} us"
        f"   ratio to bare round trip {one['wall_per_decision'] / bare:.2f}"
    )
    print(
        f"  referee CPU per decision:       {one['cpu_per_decision'] * 1e6:8.1f} us"
        f"   (bare round trip + referee CPU) / bare = "
        f"{(bare + one['cpu_per_decision']) / bare:.2f}"
    )
    print(f"  hands per second:               {one['hands_per_s']:8.1f}")
    two = match(args.engines, args.games, 2)
    print(
        f"match, concurrency 2:             {two['hands_per_s']:8.1f} hands/s"
        f"   ratio to concurrency 1 {two['hands_per_s'] / one['hands_per_s']:.2f}"
    )


if __name__ == "__main__":
    main()
