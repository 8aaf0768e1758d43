"""The expert against ``simple``, a changed expert against the expert as it is: paired single hands.

    python bench/expert_hands.py --set danger_points=9 [--deals 500] [--seed hands] [--jobs 2]
    python bench/expert_hands.py --movetime 50

Whole games are a blunt measure of a change to the expert: 2 000 of them give an Elo interval
about 35 points wide. This bench plays single hands (``Rules(target=1)``) in process against
``simple`` and pairs them: every deal is played from both seats by the expert as it is (the
baseline, measured in the same run) and by the expert with the changes asked for, so the luck of
the deal cancels out of the difference. It prints the points per hand of both and the paired
difference, in points per hand, with its 95 % interval. A change that alters few decisions
alters few hands, so its interval is narrow.

``--set NAME=VALUE`` changes a field of ``engines.expert.strategy.Params`` (repeatable);
``--movetime`` gives the changed expert another ``Movetime``. The two experts play the same
deals, with the same ``Seed`` option.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engines.expert.strategy import Params  # noqa: E402
from engines.expert_engine import DEFAULT_MOVETIME, ExpertEngine  # noqa: E402
from engines.simple_engine import SimpleEngine  # noqa: E402
from ginproto.rules import Rules  # noqa: E402
from ginproto.table import play_game  # noqa: E402

Change = dict[str, Any]


class TunedExpert(ExpertEngine):
    """The expert with some of its parameters changed."""

    def __init__(self, changes: Change) -> None:
        super().__init__()
        self.changes = changes

    def params_for(self, budget: float) -> Params:
        return dataclasses.replace(super().params_for(budget), **self.changes)


def parse_changes(items: Sequence[str]) -> Change:
    """``NAME=VALUE`` items as ``Params`` changes, each value of its field's type."""
    fields = {f.name: f for f in dataclasses.fields(Params)}
    defaults = Params()
    changes: Change = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or name not in fields:
            known = ", ".join(sorted(fields))
            raise ValueError(f"--set {item!r}: expected NAME=VALUE with NAME one of: {known}")
        kind = type(getattr(defaults, name))
        try:
            if kind is bool:
                if text.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(text)
                changes[name] = text.lower() in ("true", "1")
            elif kind is int:
                changes[name] = int(text)
            else:
                changes[name] = float(text)
        except ValueError:
            what = {bool: "true or false", int: "an integer"}.get(kind, "a number")
            raise ValueError(f"--set {item!r}: {name} takes {what}") from None
    return changes


class Fault(Exception):
    """A hand ended by a fault: a bug in an engine, not a result."""


Job = TypeVar("Job")
Result = TypeVar("Result")


def play_in_pool(
    play: Callable[[Job], list[Result]],
    jobs: Sequence[Job],
    sizes: Sequence[int],
    processes: int,
    detail: Callable[[list[Result]], str] | None = None,
) -> list[Result]:
    """The results of ``play`` on every job, in order, played in ``processes`` processes. The
    deals done so far (``sizes[i]`` in job ``i``), ``detail`` of the results and the time are
    shown on stderr as they come. A ``Fault`` in a job stops the run and propagates."""
    started = time.monotonic()
    total = sum(sizes)
    done = 0
    results: list[Result] = []
    with multiprocessing.Pool(processes) as pool:
        for size, part in zip(sizes, pool.imap(play, jobs), strict=True):
            results.extend(part)
            done += size
            more = f", {detail(results)}" if detail is not None else ""
            print(
                f"\r{done}/{total} deals{more}, {time.monotonic() - started:.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
    print(file=sys.stderr)
    return results


def add_deal_options(parser: argparse.ArgumentParser, deals: int, seed: str) -> None:
    """The options of every bench of single hands: ``--deals``, ``--seed`` and ``--jobs``."""
    parser.add_argument(
        "--deals", type=int, default=deals, help="deals, each played from both seats"
    )
    parser.add_argument("--seed", default=seed, help="the seed the deals are drawn from")
    parser.add_argument("--jobs", type=int, default=2, help="processes to play in")


def deal_ranges(deals: int, first: int = 0, chunk: int = 25) -> list[range]:
    """The deals ``first`` to ``first + deals - 1`` in ranges of ``chunk``, a job each."""
    end = first + deals
    return [range(start, min(start + chunk, end)) for start in range(first, end, chunk)]


def hand_points(rules: Rules, expert: ExpertEngine, seat: int, seed: str, key: int) -> int:
    """The expert's net points in the single hand ``key``, sitting at ``seat``."""
    players = [expert, SimpleEngine()] if seat == 0 else [SimpleEngine(), expert]
    log = play_game(rules, players, seed, key)
    if log.fault is not None:
        who = type(expert).__name__
        raise Fault(f"{who} at seat {seat}, deal {key} of seed {seed!r}: {log.fault}")
    entry = log.game.entries[-1]
    if entry.winner is None:
        return 0
    return entry.result.points if entry.winner == seat else -entry.result.points


def play_deals(job: tuple[range, str, Change, int]) -> list[tuple[int, int]]:
    """For each deal of the range, the baseline's and the changed expert's points, summed over
    both seats."""
    keys, seed, changes, movetime = job
    rules = Rules(target=1)
    base = ExpertEngine()
    tuned = TunedExpert(changes)
    tuned.set_option("Movetime", str(movetime))
    out = []
    for key in keys:
        pair = [
            sum(hand_points(rules, e, seat, seed, key) for seat in (0, 1)) for e in (base, tuned)
        ]
        out.append((pair[0], pair[1]))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_deal_options(parser, deals=500, seed="hands")
    parser.add_argument("--first", type=int, default=0, help="the first deal's number")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Params field of the changed expert (repeatable)",
    )
    parser.add_argument(
        "--movetime",
        type=int,
        default=DEFAULT_MOVETIME,
        help="the changed expert's Movetime option, in ms",
    )
    args = parser.parse_args(argv)
    try:
        changes = parse_changes(args.set)
    except ValueError as error:
        parser.error(str(error))
    if args.deals < 1 or args.jobs < 1 or args.movetime < 0:
        parser.error("--deals and --jobs must be at least 1, --movetime at least 0")
    jobs = [
        (deals, args.seed, changes, args.movetime) for deals in deal_ranges(args.deals, args.first)
    ]
    try:
        results = play_in_pool(play_deals, jobs, [len(job[0]) for job in jobs], args.jobs)
    except Fault as fault:
        print(f"\nexpert_hands: {fault}", file=sys.stderr)
        return 1
    hands = 2 * len(results)
    base = sum(b for b, _ in results) / hands
    tuned = sum(t for _, t in results) / hands
    diffs = [(t - b) / 2 for b, t in results]
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else math.inf
    label = (
        ", ".join(
            args.set + ([f"Movetime={args.movetime}"] if args.movetime != DEFAULT_MOVETIME else [])
        )
        or "unchanged"
    )
    print(
        f"{hands} hands against simple ({len(results)} deals from both seats, seed {args.seed!r})"
    )
    print(f"  expert as it is        {base:+.3f} points per hand")
    print(f"  expert with {label}: {tuned:+.3f} points per hand")
    print(f"  paired difference      {tuned - base:+.3f} ± {half:.3f} points per hand (95 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
