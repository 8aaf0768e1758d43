"""Referee throughput: the cost of a decision against a bare pipe round trip, and hands/s.

Measured in one run, on this machine:

1. the bare round trip: one line as long as a typical ``position`` line to a child process
   that echoes it back at once, over pipes, with raw ``os.write`` / ``os.read`` (the physical
   limit). The echo is ``bench/echo.c``, compiled on the fly when a C compiler is present,
   else a Python echo. It runs in a session of its own; the round trip to an echo in the
   referee's own session, where engines run (``referee.seat.process``), is shown beside it (on a
   busy Linux machine, where the scheduler shares the CPU out between sessions, it can be
   many times shorter);
2. the same round trip through the referee's own plumbing (``EngineProcess``: line cutting,
   line limits, logging hooks), the echo started as engines are (sandboxed where it runs);
3. a match between two engines that answer at once (``bench/instant_engine.c``, compiled
   the same way; without a compiler, the built-in ``random`` engine): wall time and referee
   CPU per decision, the wall time as a ratio of the bare round trip;
4. hands per second at concurrency 1 and 2 between built-in engines.

The machine may be shared and its load changes from second to second, so 1 and 3 are
measured in alternating rounds and the ratio is taken within each round; the report gives
every round and the median.

Each round also measures 1 to 3 **on one CPU**: the referee and the processes it starts pinned
to a single CPU (``os.sched_setaffinity``, which children inherit). A round trip that crosses
CPUs pays for waking the other CPU, which on a virtual machine can cost tens of microseconds
and varies with where the scheduler puts each process; on one CPU that cost is gone and what
remains is the work of the referee and the engines. The difference between the two is the
scheduler's placement, not the referee's work.

Referee CPU is this process's user + system time (every thread of the referee; the engines are
other processes) divided by the decisions.

Usage: ``python bench/throughput.py [--rounds 5] [--games 10] [--engines simple simple]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ginproto.rules import Rules
from referee.scheduling.backends import LocalBackend
from referee.scheduling.match import schedule
from referee.scheduling.seats import EngineSeats
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec
from referee.seat.process import EngineProcess
from referee.seat.sandbox import Policy

HERE = Path(__file__).resolve().parent
PY_ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
LINE = "position " + "x" * 600


def compile_c(source: Path, out_dir: str) -> str | None:
    """Compile ``source`` with the system's C compiler; the program's path, or ``None``."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    out = os.path.join(out_dir, source.stem)
    done = subprocess.run([cc, "-O2", "-o", out, str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"(cannot compile {source.name}: {done.stderr.strip()[:200]})")
        return None
    return out


def bare_round_trip(argv: list[str], n: int, session: bool = True) -> float:
    """Seconds per round trip over raw pipes: os.write a line, os.read until it is back.

    With ``session`` the echo runs in a session of its own; without, in the referee's
    session, as the referee runs every engine (in a process group of its own). Where the
    kernel groups tasks by session for scheduling (Linux's autogroup), a busy machine makes
    the first round trip far slower than the second; both are measured."""
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, start_new_session=session
    )
    assert child.stdin is not None and child.stdout is not None
    out, into = child.stdin.fileno(), child.stdout.fileno()
    payload = (LINE + "\n").encode()
    size = len(payload)

    def trips(count: int) -> None:
        for _ in range(count):
            os.write(out, payload)
            got = len(os.read(into, 65536))
            while got < size:
                got += len(os.read(into, 65536))

    trips(200)  # warm up
    start = time.perf_counter()
    trips(n)
    elapsed = time.perf_counter() - start
    child.stdin.close()
    child.wait()
    return elapsed / n


def plumbing_round_trip(argv: list[str], n: int) -> float:
    """Seconds per round trip through ``EngineProcess`` (the referee's process layer), with
    the echo started as a match starts an engine: in its sandbox where the sandbox runs (and
    so in the referee's session), else bare (in a session of its own)."""
    with EngineProcess.start(argv, name="echo", sandbox=Policy()) as proc:
        for _ in range(200):
            proc.send(LINE)
            proc.read_line(5.0)
        start = time.perf_counter()
        for _ in range(n):
            proc.send(LINE)
            proc.read_line(5.0)
        return (time.perf_counter() - start) / n


@contextlib.contextmanager
def one_cpu() -> Iterator[bool]:
    """Pin this thread, and so the threads and processes it starts, to one CPU for the block;
    yields whether it could (not on a one-CPU machine, nor where affinity is not supported)."""
    getter = getattr(os, "sched_getaffinity", None)
    setter = getattr(os, "sched_setaffinity", None)
    if getter is None or setter is None:
        yield False
        return
    before = getter(0)
    if len(before) < 2:
        yield False
        return
    setter(0, {min(before)})
    try:
        yield True
    finally:
        setter(0, before)


def match(engines: list[str], games: int, concurrency: int, seed: int = 2024) -> dict[str, float]:
    """Play a match as ``ginref match`` would (default time control, engines in their
    sandbox where it runs) and measure it."""
    specs = tuple(EngineSpec.parse(e) for e in engines)
    rules = Rules()
    jobs = schedule(rules, range(len(specs)), games, seed=seed)
    control = TimeControl()

    def seats() -> EngineSeats:
        return EngineSeats(specs, control, 10.0)

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    hands = decisions = faults = 0
    for done in LocalBackend(concurrency).run(jobs, seats):
        hands += len(done.log.hands)
        faults += done.log.fault is not None
        for hand in done.log.hands:
            decisions += sum(1 + (step.advice is not None) for step in hand.steps)
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    if faults:
        print(f"({faults} game(s) of {' vs '.join(engines)} ended by a fault)")
    return {
        "games": games,
        "hands": hands,
        "decisions": decisions,
        "wall": wall,
        "cpu": cpu,
        "hands_per_s": hands / wall,
        "wall_per_decision": wall / max(decisions, 1),
        "cpu_per_decision": cpu / max(decisions, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument(
        "--games", type=int, default=10, help="games per match and round (default 10)"
    )
    parser.add_argument("--trips", type=int, default=3000, help="round trips (default 3000)")
    parser.add_argument(
        "--engines",
        nargs=2,
        default=["simple", "simple"],
        metavar="ENGINE",
        help="the engines of the hands/s matches (default: simple simple)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ginbench-") as tmp:
        c_echo = compile_c(HERE / "echo.c", tmp)
        echo = [c_echo] if c_echo else [sys.executable, "-c", PY_ECHO]
        c_engine = compile_c(HERE / "instant_engine.c", tmp)
        instant = c_engine or "random"
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average {load}, {os.cpu_count()} CPUs")
        print(
            f"echo: {'C (bench/echo.c)' if c_echo else 'Python'}; instant engine:"
            f" {'C (bench/instant_engine.c)' if c_engine else 'random'}"
        )

        match([instant, instant], 2, 1)  # warm up: page cache, sandbox set-up
        rows = []
        on_one: list[tuple[float, float, float, float]] = []
        for r in range(args.rounds):
            same = bare_round_trip(echo, args.trips, session=False)
            bare = bare_round_trip(echo, args.trips)
            plumbing = plumbing_round_trip(echo, args.trips)
            one = match([instant, instant], args.games, 1, seed=2024 + r)
            wall, cpu = one["wall_per_decision"], one["cpu_per_decision"]
            rows.append((bare, plumbing, wall, cpu, same))
            print(
                f"round {r + 1}: bare RT {bare * 1e6:6.1f} us (same session {same * 1e6:.1f}),"
                f" EngineProcess RT {plumbing * 1e6:6.1f} us, {one['decisions']:.0f} decisions:"
                f" wall {wall * 1e6:6.1f} us ({wall / bare:5.2f} x RT), referee CPU"
                f" {cpu * 1e6:6.1f} us"
            )
            with one_cpu() as pinned:
                if pinned:
                    p_bare = bare_round_trip(echo, args.trips, session=False)
                    p_plumbing = plumbing_round_trip(echo, args.trips)
                    p_one = match([instant, instant], args.games, 1, seed=2024 + r)
                    p_wall, p_cpu = p_one["wall_per_decision"], p_one["cpu_per_decision"]
                    on_one.append((p_bare, p_plumbing, p_wall, p_cpu))
                    print(
                        f"  on one CPU: bare RT {p_bare * 1e6:6.1f} us, EngineProcess RT"
                        f" {p_plumbing * 1e6:6.1f} us, wall {p_wall * 1e6:6.1f} us"
                        f" ({p_wall / p_bare:5.2f} x RT), referee CPU {p_cpu * 1e6:6.1f} us"
                    )

    def med(values: list[float]) -> float:
        return statistics.median(values)

    bare = med([row[0] for row in rows])
    print("medians over the rounds (ratios taken within each round):")
    print(f"  bare pipe round trip:           {bare * 1e6:8.1f} us   (echo in its own session)")
    same = med([row[4] for row in rows])
    print(f"  the same, in the referee's session: {same * 1e6:4.1f} us")
    print(
        f"  EngineProcess round trip:       {med([row[1] for row in rows]) * 1e6:8.1f} us"
        f"   ratio {med([row[1] / row[0] for row in rows]):.2f}"
    )
    print(
        f"  wall per decision (instant):    {med([row[2] for row in rows]) * 1e6:8.1f} us"
        f"   ratio to bare round trip {med([row[2] / row[0] for row in rows]):.2f}"
        f" (to the same-session one {med([row[2] / row[4] for row in rows]):.2f})"
    )
    print(f"  referee CPU per decision:       {med([row[3] for row in rows]) * 1e6:8.1f} us")
    if on_one:
        print("on one CPU (the referee and its engines pinned to one CPU; medians):")
        print(f"  bare pipe round trip:           {med([row[0] for row in on_one]) * 1e6:8.1f} us")
        print(
            f"  EngineProcess round trip:       {med([row[1] for row in on_one]) * 1e6:8.1f} us"
            f"   ratio {med([row[1] / row[0] for row in on_one]):.2f}"
        )
        print(
            f"  wall per decision (instant):    {med([row[2] for row in on_one]) * 1e6:8.1f} us"
            f"   ratio to bare round trip {med([row[2] / row[0] for row in on_one]):.2f}"
        )
        print(
            f"  referee CPU per decision:       {med([row[3] for row in on_one]) * 1e6:8.1f} us"
        )

    one = match(args.engines, args.games, 1)
    print(
        f"match {' vs '.join(args.engines)}, concurrency 1: {one['games']:.0f} games,"
        f" {one['hands']:.0f} hands, {one['hands_per_s']:.1f} hands/s,"
        f" referee CPU per decision {one['cpu_per_decision'] * 1e6:.1f} us"
    )
    two = match(args.engines, args.games, 2)
    print(
        f"match {' vs '.join(args.engines)}, concurrency 2: {two['hands_per_s']:.1f} hands/s"
        f"   ratio to concurrency 1 {two['hands_per_s'] / one['hands_per_s']:.2f}"
    )


if __name__ == "__main__":
    main()
