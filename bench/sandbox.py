"""The cost of the sandbox: engine start time and decisions per second, sandboxed against bare.

Measured in one run, on this machine, alternating the two so that a change of load hits both:

1. start time: from ``EngineProcess.start`` to the first line back, for ``cat`` (the cost of
   the sandbox alone), the built-in Python engine ``random`` and ``js-simple`` under node
   (the handshake, ``gin`` to ``ginok``): the fastest and the median of ``--starts`` starts;
2. a match between built-in engines at concurrency 1: decisions per second, the best of
   ``--rounds`` matches each.

On a busy machine the medians wander with the load; the fastest start and the best rate are
the steadier figures.

Usage: ``python bench/sandbox.py [--starts N] [--games N] [--engines simple simple]``
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ginproto.rules import Rules
from referee.scheduling.backends import LocalBackend
from referee.scheduling.match import schedule
from referee.scheduling.seats import EngineSeats
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec
from referee.seat.process import EngineProcess
from referee.seat.sandbox import Policy, SandboxMode, support

BARE = Policy(SandboxMode.OFF)
SANDBOXED = Policy(SandboxMode.REQUIRE)


def start_once(spec: EngineSpec, policy: Policy, first: str, until: str) -> float:
    """Seconds from starting the engine to reading a line that starts with ``until``."""
    policy = dataclasses.replace(spec.policy, mode=policy.mode)
    started = time.perf_counter()
    process = EngineProcess.start(list(spec.argv), sandbox=policy)
    try:
        process.send(first)
        while not process.read_line(30).startswith(until):
            pass
        return time.perf_counter() - started
    finally:
        process.close(grace=0.2, quit_line="quit")


def start_times(
    spec: EngineSpec, first: str, until: str, n: int
) -> tuple[list[float], list[float]]:
    """Seconds of ``n`` starts each, bare and sandboxed, alternating."""
    bare: list[float] = []
    boxed: list[float] = []
    start_once(spec, SANDBOXED, first, until)  # warm the caches once
    for _ in range(n):
        bare.append(start_once(spec, BARE, first, until))
        boxed.append(start_once(spec, SANDBOXED, first, until))
    return bare, boxed


def decisions_per_second(engines: list[str], games: int, policy: Policy) -> tuple[float, int]:
    specs = tuple(
        dataclasses.replace(spec, sandbox=policy)
        for spec in (EngineSpec.parse(e) for e in engines)
    )
    jobs = schedule(Rules(), range(len(specs)), games, seed=2024)
    control = TimeControl(base=None, move=10.0)

    def seats() -> EngineSeats:
        return EngineSeats(specs, control, 10.0)

    started = time.perf_counter()
    decisions = 0
    for done in LocalBackend(1).run(jobs, seats):
        for hand in done.log.hands:
            decisions += sum(1 + (step.advice is not None) for step in hand.steps)
    return decisions / (time.perf_counter() - started), decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=15, help="starts per engine (default 15)")
    parser.add_argument("--games", type=int, default=10, help="games per match (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="matches of each (default 3)")
    parser.add_argument("--engines", nargs=2, default=["simple", "simple"], metavar="ENGINE")
    args = parser.parse_args()
    found = support()
    if not found.available:
        sys.exit(f"the sandbox cannot run here: {found.reason}")
    print(f"limits by {'cgroups' if found.cgroups else 'rlimits'}; bwrap {found.bwrap}")

    print("start time, fastest (median)       bare             sandboxed        cost    ratio")
    engines = [("cat", EngineSpec(("cat",)), "hello", "hello")]
    engines.append(("random (Python)", EngineSpec.parse("random"), "gin", "ginok"))
    if shutil.which("node"):
        engines.append(("js-simple (node)", EngineSpec.parse("js-simple"), "gin", "ginok"))
    for label, spec, first, until in engines:
        bare, boxed = start_times(spec, first, until, args.starts)
        fast, slow = min(bare), min(boxed)
        print(
            f"  {label:<22} {fast * 1e3:7.1f} ({statistics.median(bare) * 1e3:6.1f}) ms"
            f" {slow * 1e3:7.1f} ({statistics.median(boxed) * 1e3:6.1f}) ms"
            f" {(slow - fast) * 1e3:+7.1f} ms  {slow / fast:5.2f}"
        )

    rates: dict[str, list[float]] = {"bare": [], "sandboxed": []}
    count = 0
    for _ in range(args.rounds):
        for name, policy in (("bare", BARE), ("sandboxed", SANDBOXED)):
            rate, count = decisions_per_second(args.engines, args.games, policy)
            rates[name].append(rate)
    bare_rate, boxed_rate = max(rates["bare"]), max(rates["sandboxed"])
    print(
        f"match {' vs '.join(args.engines)}, {args.games} games ({count} decisions),"
        f" best of {args.rounds} matches each:"
    )
    print(f"  decisions per second: bare {bare_rate:8.1f}   sandboxed {boxed_rate:8.1f}"
          f"   ratio {boxed_rate / bare_rate:.3f}")


if __name__ == "__main__":
    main()
