"""The expert against ``simple``, a changed expert against the expert as it is: paired single hands.

    python bench/expert_hands.py --set danger_points=9 [--deals 500] [--seed hands] [--jobs 2]
    python bench/expert_hands.py --movetime 50
    python bench/expert_hands.py --opponent camper
    python bench/expert_hands.py --opponent camper --rule undercut_bonus=25
    python bench/expert_hands.py --opponent expert --movetime 100 --set search=true

Whole games are a blunt measure of a change to the expert: 2 000 of them give an Elo interval
about 35 points wide. This bench plays single hands (``Rules(target=1)``) in process against
``simple`` and pairs them: every deal is played from both seats by the expert as it is (the
baseline, measured in the same run) and by the expert with the changes asked for, so the luck of
the deal cancels out of the difference. It prints the points per hand of both and the paired
difference, in points per hand, with its 95 % interval. A change that alters few decisions
alters few hands, so its interval is narrow.

``--set NAME=VALUE`` changes a field of ``engines.expert.strategy.Params`` (repeatable);
``--movetime`` gives the changed expert another ``Movetime``. ``--base NAME=VALUE`` changes a
field for both experts: ``--base waiting=0.95`` plays single hands as if each expert had
already learnt, in the hands of a match, that its opponent waits for gin (a single hand is a
match of its own, in which the chance starts at ``Params.waiting``). The two experts play the same
deals, with the same ``Seed`` option. ``--opponent camper`` plays them against ``camper``
(a player that waits for gin) instead of ``simple``, and ``--opponent expert`` against the
expert as it is (at the default Movetime): a changed expert in self-play. ``--cache FILE``
keeps the baseline's hands in a file, so that the next run against the same deals plays only
the changed expert; they are kept under a digest of the sources, or under ``--cache-key NAME``
for changes that leave the baseline as it was.

Beside the points it prints, for each expert, how often its knocks without gin were undercut,
in all and by the cards drawn in the hand before the knock (both seats' draws, from the stock
or the pile).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engines.camper_engine import CamperEngine  # noqa: E402
from engines.expert.strategy import Params  # noqa: E402
from engines.expert_engine import DEFAULT_MOVETIME, ExpertEngine  # noqa: E402
from engines.simple_engine import SimpleEngine  # noqa: E402
from ginproto.hand import Outcome  # noqa: E402
from ginproto.moves import MoveKind  # noqa: E402
from ginproto.rules import Rules, RulesError  # noqa: E402
from ginproto.sdk import Engine  # noqa: E402
from ginproto.table import play_game  # noqa: E402
from referee.cli.options import rule_items  # noqa: E402

Change = dict[str, Any]
OPPONENTS: dict[str, Callable[[], Engine]] = {
    "simple": SimpleEngine,
    "camper": CamperEngine,
    "expert": ExpertEngine,
}
"""The opponents the bench can play against, by name."""
DRAW_BANDS = ((0, 5), (6, 11), (12, 17), (18, 23), (24, 29), (30, 99))
"""The bands of cards drawn in a hand before a knock, by which undercuts are counted."""
_DRAWS = (MoveKind.TAKE, MoveKind.STOCK, MoveKind.PILE)


@dataclass(frozen=True)
class HandResult:
    """One single hand from the expert's seat: its net points, and, if it knocked without
    gin, the cards drawn in the hand before the knock and whether it was undercut."""

    points: int
    knock_draws: int | None = None
    undercut: bool = False


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


def parse_rules(items: Sequence[str]) -> Rules:
    """Single hands' rules (``Rules(target=1)``) with ``NAME=VALUE`` changes, read as
    ``ginref --rule`` reads them (``referee.cli.options.rule_items``)."""
    try:
        params = rule_items(items)
    except click.BadParameter as error:
        raise ValueError(f"--rule: {error.message}") from None
    if "target" in params:
        raise ValueError("--rule: a single hand is played to target 1")
    return Rules.from_params({**params, "target": "1"})


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


def hand_result(
    rules: Rules,
    expert: ExpertEngine,
    seat: int,
    seed: str,
    key: int,
    opponent: Callable[[], Engine] = SimpleEngine,
) -> HandResult:
    """The single hand ``key`` played by the expert at ``seat`` against ``opponent``."""
    players = [expert, opponent()] if seat == 0 else [opponent(), expert]
    log = play_game(rules, players, seed, key)
    if log.fault is not None:
        who = type(expert).__name__
        raise Fault(f"{who} at seat {seat}, deal {key} of seed {seed!r}: {log.fault}")
    entry = log.game.entries[-1]
    if entry.winner is None:
        return HandResult(0)
    result = entry.result
    points = result.points if entry.winner == seat else -result.points
    knocked = result.knocker is not None and entry.seats[result.knocker] == seat
    if not knocked or result.outcome not in (Outcome.KNOCK, Outcome.UNDERCUT):
        return HandResult(points)
    steps = log.hands[-1].steps
    draws = sum(1 for step in steps if step.turn.move.kind in _DRAWS)
    return HandResult(points, draws, result.outcome is Outcome.UNDERCUT)


def hand_points(rules: Rules, expert: ExpertEngine, seat: int, seed: str, key: int) -> int:
    """The expert's net points in the single hand ``key`` against ``simple``, at ``seat``."""
    return hand_result(rules, expert, seat, seed, key).points


Deal = tuple[tuple[HandResult, HandResult], tuple[HandResult, HandResult]]
"""One deal: the baseline's two hands (seats 0 and 1), then the changed expert's."""


Pair = tuple[HandResult, HandResult]
DealJob = tuple[range, str, Change, int, str, dict[int, Pair], Change, Rules]
"""A job of ``play_deals``: the deals, the seed, the changes, the changed expert's Movetime,
the opponent's name, the baseline's hands of the deals already known, the changes both
experts share (``--base``) and the rules of the hands."""


def experts(shared: Change, changes: Change, movetime: int) -> tuple[ExpertEngine, ExpertEngine]:
    """The baseline and the changed expert: both with the ``shared`` changes, the changed one
    also with ``changes`` (which win where both set a field) and the ``movetime``."""
    base = TunedExpert(shared) if shared else ExpertEngine()
    tuned = TunedExpert({**shared, **changes})
    tuned.set_option("Movetime", str(movetime))
    return base, tuned


def play_deals(job: DealJob) -> list[Deal]:
    """For each deal of the range, the baseline's and the changed expert's hands from both
    seats. The baseline's are played only for the deals whose hands are not given."""
    keys, seed, changes, movetime, opponent, known, shared, rules = job
    base, tuned = experts(shared, changes, movetime)
    make = OPPONENTS[opponent]

    def both(expert: ExpertEngine, key: int) -> Pair:
        return (
            hand_result(rules, expert, 0, seed, key, make),
            hand_result(rules, expert, 1, seed, key, make),
        )

    same = not changes and movetime == DEFAULT_MOVETIME
    out: list[Deal] = []
    for key in keys:
        pair = known[key] if key in known else both(base, key)
        out.append((pair, pair if same else both(tuned, key)))
    return out


def fingerprint(opponent: str) -> str:
    """A digest of the sources the baseline's hands depend on: the expert's, the opponent's
    and the rules core's. A change to any of them makes the cached hands stale."""
    digest = hashlib.sha256(opponent.encode())
    sources = [
        ROOT / "engines" / "expert_engine.py",
        *sorted((ROOT / "engines" / "expert").glob("*.py")),
        Path(sys.modules[OPPONENTS[opponent].__module__].__file__ or ""),
        *sorted((ROOT / "ginproto").glob("*.py")),
    ]
    for source in sources:
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def load_cache(path: Path | None, prefix: str) -> dict[int, Pair]:
    """The baseline's hands of the deals cached in ``path`` under ``prefix``."""
    if path is None or not path.exists():
        return {}
    table = json.loads(path.read_text())
    out: dict[int, Pair] = {}
    for name, hands in table.items():
        stem, _, key = name.rpartition(":")
        if stem == prefix:
            first, second = (HandResult(*hand) for hand in hands)
            out[int(key)] = (first, second)
    return out


def save_cache(path: Path, prefix: str, deals: dict[int, Pair]) -> None:
    """Add the baseline's hands of ``deals`` to the cache ``path`` under ``prefix``."""
    table = json.loads(path.read_text()) if path.exists() else {}
    for key, pair in deals.items():
        table[f"{prefix}:{key}"] = [dataclasses.astuple(hand) for hand in pair]
    path.write_text(json.dumps(table))


def undercut_line(hands: Sequence[HandResult]) -> str:
    """The share of the knocks without gin among ``hands`` that were undercut, in all and by
    the cards drawn before the knock."""
    knocks = [h for h in hands if h.knock_draws is not None]
    if not knocks:
        return "no knock without gin"
    parts = []
    for lo, hi in DRAW_BANDS:
        band = [h for h in knocks if lo <= (h.knock_draws or 0) <= hi]
        if band:
            rate = 100 * sum(h.undercut for h in band) / len(band)
            parts.append(f"{lo}-{hi}: {rate:.0f} % of {len(band)}")
    cut = sum(h.undercut for h in knocks)
    whole = f"{cut} of {len(knocks)} knocks undercut ({100 * cut / len(knocks):.1f} %)"
    return f"{whole}; by cards drawn {', '.join(parts)}"


def paired(results: Sequence[Deal]) -> tuple[float, float]:
    """The paired difference of ``results`` in points per hand, with its 95 % half-width."""
    diffs = [(sum(h.points for h in t) - sum(h.points for h in b)) / 2 for b, t in results]
    mean = sum(diffs) / len(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else math.inf
    return mean, half


def running(results: list[Deal]) -> str:
    """The figures so far, for the progress line: the paired difference and both experts'
    undercut knocks."""
    mean, half = paired(results)
    cuts = []
    for side in (0, 1):
        knocks = [h for deal in results for h in deal[side] if h.knock_draws is not None]
        cuts.append(f"{sum(h.undercut for h in knocks)}/{len(knocks)}")
    return f"{mean:+.3f} ± {half:.3f}, undercut {cuts[0]} and {cuts[1]}"


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
        "--base",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Params field of both experts, the baseline too (repeatable): for example"
        " waiting=0.95, the chance an expert has learnt in a match against camper",
    )
    parser.add_argument(
        "--opponent",
        choices=sorted(OPPONENTS),
        default="simple",
        help="the engine both experts play against",
    )
    parser.add_argument(
        "--movetime",
        type=int,
        default=DEFAULT_MOVETIME,
        help="the changed expert's Movetime option, in ms",
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a rule of the hands, as ginref's --rule (repeatable): for example undercut_bonus=25",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help="a JSON file that keeps the baseline's hands between runs (kept apart by seed,"
        " opponent and a digest of the engines' and rules core's sources)",
    )
    parser.add_argument(
        "--cache-key",
        help="the name the baseline's hands are cached under, instead of the sources' digest"
        " (for changes that leave the baseline as it was)",
    )
    args = parser.parse_args(argv)
    try:
        changes = parse_changes(args.set)
        shared = parse_changes(args.base)
        rules = parse_rules(args.rule)
    except (ValueError, RulesError) as error:
        parser.error(str(error))
    if args.deals < 1 or args.jobs < 1 or args.movetime < 0:
        parser.error("--deals and --jobs must be at least 1, --movetime at least 0")
    digest = args.cache_key or fingerprint(args.opponent)
    prefix = f"{digest}:{args.opponent}:{args.seed}"
    if shared:
        prefix += ":" + ",".join(sorted(args.base))
    if args.rule:
        prefix += ":rules " + ",".join(f"{k}={v}" for k, v in sorted(rules.changes().items()))
    known = load_cache(args.cache, prefix)
    ranges = deal_ranges(args.deals, args.first)
    jobs: list[DealJob] = [
        (
            deals,
            args.seed,
            changes,
            args.movetime,
            args.opponent,
            {k: known[k] for k in deals if k in known},
            shared,
            rules,
        )
        for deals in ranges
    ]
    try:
        results = play_in_pool(
            play_deals, jobs, [len(job[0]) for job in jobs], args.jobs, detail=running
        )
    except Fault as fault:
        print(f"\nexpert_hands: {fault}", file=sys.stderr)
        return 1
    if args.cache is not None:
        keys = [key for deals in ranges for key in deals]
        save_cache(args.cache, prefix, {k: r[0] for k, r in zip(keys, results, strict=True)})
    hands = 2 * len(results)
    pairs = [(sum(h.points for h in b), sum(h.points for h in t)) for b, t in results]
    base = sum(b for b, _ in pairs) / hands
    tuned = sum(t for _, t in pairs) / hands
    _, half = paired(results)
    label = (
        ", ".join(
            args.set + ([f"Movetime={args.movetime}"] if args.movetime != DEFAULT_MOVETIME else [])
        )
        or "unchanged"
    )
    print(
        f"{hands} hands against {args.opponent} ({len(results)} deals from both seats,"
        f" seed {args.seed!r})" + (f", both with {', '.join(args.base)}" if shared else "")
        + (f", rules {', '.join(args.rule)}" if args.rule else "")
    )
    print(f"  expert as it is        {base:+.3f} points per hand")
    print(f"  expert with {label}: {tuned:+.3f} points per hand")
    print(f"  paired difference      {tuned - base:+.3f} ± {half:.3f} points per hand (95 %)")
    print(f"  undercuts, as it is:   {undercut_line([h for b, _ in results for h in b])}")
    print(f"  undercuts, with {label}: {undercut_line([h for _, t in results for h in t])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
