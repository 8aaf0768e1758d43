"""The expert's CPU time per decision at its default effort, against simple's in the same games.

Games are played in process between ``expert`` and ``simple`` (the seats alternate), and every
decision of each is timed in this process's CPU time, which other work on a busy machine does
not inflate much. The expert's effort is counted in work, not seconds, so this is where its
cost is measured: the mean against its default ``Movetime`` (20 ms, a ceiling on the mean
kept far from it), the largest against five times that, and both as a ratio to simple's
decision, the cheapest sensible engine, measured in the same run.

Usage: ``python bench/expert_time.py [--games N] [--movetime MS] [--set NAME=VALUE]``; exit 1
if the mean is over the Movetime or a decision over five times it. ``--movetime`` times the
expert at another ``Movetime``, ``--set`` with a field of ``engines.expert.strategy.Params``
changed (as ``bench/expert_hands.py --set``; ``search=true``: the search over every decision).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.expert_hands import TunedExpert, parse_changes
from engines.expert_engine import DEFAULT_MOVETIME, ExpertEngine
from engines.simple_engine import SimpleEngine
from ginproto.game import GameView
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import Decision, play_game


def timed(
    decide: Callable[[GameView, Decision], Move], times: list[float]
) -> Callable[[GameView, Decision], Move]:
    """``decide``, appending the CPU seconds of each call to ``times``."""

    def run(view: GameView, decision: Decision) -> Move:
        start = time.process_time()
        try:
            return decide(view, decision)
        finally:
            times.append(time.process_time() - start)

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games to play (default 200)")
    parser.add_argument(
        "--movetime", type=int, default=DEFAULT_MOVETIME, help="the expert's Movetime, in ms"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Params field of the expert (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.games < 1 or args.movetime < 1:
        parser.error("--games and --movetime must be at least 1")
    try:
        changes = parse_changes(args.set)
    except ValueError as error:
        parser.error(str(error))
    expert: ExpertEngine = TunedExpert(changes) if changes else ExpertEngine()
    expert.set_option("Movetime", str(args.movetime))
    simple = SimpleEngine()
    expert_times: list[float] = []
    simple_times: list[float] = []
    expert.decide = timed(expert.decide, expert_times)  # type: ignore[method-assign,assignment]
    simple.decide = timed(simple.decide, simple_times)  # type: ignore[method-assign,assignment]
    for key in range(args.games):
        seats = [expert, simple] if key % 2 == 0 else [simple, expert]
        log = play_game(Rules(), seats, "clock", key // 2)
        if log.fault is not None:
            print(f"game {key}: a fault: {log.fault}", file=sys.stderr)
            return 1
        print(f"\r{key + 1}/{args.games} games", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    movetime = args.movetime
    target = movetime / 1000
    mean, worst = statistics.mean(expert_times), max(expert_times)
    base = statistics.mean(simple_times)
    print(f"decisions: expert {len(expert_times)}, simple {len(simple_times)}")
    print(f"simple, mean:  {base * 1e3:8.3f} ms (the baseline)")
    print(f"expert, mean:  {mean * 1e3:8.3f} ms = {mean / base:7.1f} x simple"
          f" = {mean / target:.2f} of its Movetime ({movetime} ms)")
    print(f"expert, most:  {worst * 1e3:8.3f} ms = {worst / base:7.1f} x simple"
          f" = {worst / target:.2f} of its Movetime")
    ok = mean <= target and worst <= 5 * target
    print("within the budget" if ok else "OVER the budget (mean over Movetime, or one over 5x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
