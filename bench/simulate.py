"""In-process simulation speed: hands per second, against a bare playout measured in the same run.

    python bench/simulate.py [--seconds 3] [--variant standard] [--seed bench]

The baseline is the floor of any simulation on this machine: a bare ``Hand`` driven by uniformly
random legal moves, with no table, no players, no scoring above the hand and no records. Every
other row plays whole games through ``ginproto.simulate`` (the table, the game, the players'
views) and is reported as hands per second and as a ratio to that baseline:

- the built-in ``random`` and ``simple`` SDK engines from ``engines/`` (when they are not there,
  the runner's own ``RandomPlayer`` and ``GreedyPlayer`` stand in, and the rows say so);
- the same random games with every record written and appended (``fsync`` included);
- ``ginref replay --verify``'s re-run of those records;
- the runner's own ``RandomPlayer``, which shows what the SDK layer costs.

For scale, published figures for peers on this kind of machine: OpenSpiel about 210 random
hands/s, RLCard about 57. Those numbers are not measured here.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ginproto.cards import shuffled_deck  # noqa: E402
from ginproto.hand import Hand  # noqa: E402
from ginproto.replay import verify_file  # noqa: E402
from ginproto.rules import Rules, Variant  # noqa: E402
from ginproto.simulate import GreedyPlayer, RandomPlayer, run_games  # noqa: E402
from ginproto.table import Player  # noqa: E402

PEERS = {"OpenSpiel": 210.0, "RLCard": 57.0}


@dataclass
class Row:
    name: str
    hands: int
    seconds: float
    note: str = ""
    games: int = 0

    @property
    def rate(self) -> float:
        return self.hands / self.seconds if self.seconds else 0.0


def bare_playout(rules: Rules, seed: str, budget: float) -> Row:
    """Random hands on a bare ``Hand``: the baseline."""
    rng = random.Random(seed)
    hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < budget:
        hand = Hand(rules, shuffled_deck(seed, "bare", hands), hands % 2)
        while not hand.is_over:
            hand.apply(rng.choice(hand.legal_moves()))
        hands += 1
    return Row("bare Hand, random moves (baseline)", hands, time.perf_counter() - start)


PlayersFor = Callable[[int], Sequence[Player]]


def sdk_players(module: str, cls: str, fallback: Callable[[int, int], Player]) -> tuple[
    Callable[[int, int], Player], str
]:
    """A maker of players from an SDK engine module, or the fallback when it is missing."""
    try:
        engine_class = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        return fallback, f"{module} not found ({exc.__class__.__name__}): built-in stand-in"

    def make(key: int, seat: int) -> Player:
        engine: Player = engine_class()
        setter = getattr(engine, "set_option", None)
        if callable(setter) and module.endswith("random_engine"):
            setter("Seed", str(key * 3 + seat))
        return engine

    return make, f"{module}.{cls}"


def games_for(
    rules: Rules,
    make: Callable[[int, int], Player],
    seed: str,
    budget: float,
    record: Path | None = None,
    count: int | None = None,
) -> Row:
    """Whole games through the in-process runner until the time budget is spent (or exactly
    ``count`` games, keys 0 on, to repeat another row's games)."""
    hands = games = 0
    spent = 0.0
    while (spent < budget) if count is None else (games < count):
        started = time.perf_counter()
        result = run_games(
            rules,
            lambda key: [make(key, p) for p in range(rules.players)],
            1,
            seed,
            first_key=games,
            record=record,
            site="bench",
            date="2000.01.01",
        )
        hands += result.hands
        games += 1
        spent += time.perf_counter() - started
    return Row("", hands, spent, f"{games} games", games)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget per row")
    parser.add_argument("--variant", default="standard", choices=[v.value for v in Variant])
    parser.add_argument("--seed", default="bench")
    args = parser.parse_args(argv)
    rules = Rules(variant=Variant(args.variant))
    two = Rules()  # the baseline is a two-seat hand in every variant
    budget: float = args.seconds

    random_make, random_src = sdk_players(
        "engines.random_engine",
        "RandomEngine",
        lambda key, seat: RandomPlayer(f"{key}/{seat}"),
    )
    simple_make, simple_src = sdk_players(
        "engines.simple_engine", "SimpleEngine", lambda key, seat: GreedyPlayer()
    )

    rows = [bare_playout(two, args.seed, budget)]
    row = games_for(rules, random_make, args.seed, budget)
    row.name, row.note = "random vs random, in-process runner", f"{row.note}; {random_src}"
    rows.append(row)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.rec"
        same = rows[-1].games  # the very same games again, now with their records
        row = games_for(rules, random_make, args.seed, budget, record=path, count=same)
        row.name, row.note = "random vs random, records appended", f"{row.note}; fsync per game"
        rows.append(row)
        start = time.perf_counter()
        report = verify_file(str(path))
        seconds = time.perf_counter() - start
        assert report.ok, report.errors[:3]
        rows.append(Row("replay --verify of those records", report.hands, seconds))
    row = games_for(rules, lambda key, seat: RandomPlayer(f"{key}/{seat}"), args.seed, budget)
    row.name, row.note = "random vs random, built-in RandomPlayer", f"{row.note}; no SDK layer"
    rows.append(row)
    row = games_for(rules, simple_make, args.seed, budget)
    row.name, row.note = "simple vs simple, in-process runner", f"{row.note}; {simple_src}"
    rows.append(row)

    base = rows[0].rate
    print(f"in-process simulation, {rules.variant}, on {platform.python_implementation()} "
          f"{platform.python_version()} ({platform.machine()}), {budget:g} s a row")
    print(f"{'':38} {'hands':>7} {'hands/s':>9} {'vs baseline':>12}")
    for r in rows:
        ratio = r.rate / base if base else 0.0
        print(f"{r.name:38} {r.hands:>7} {r.rate:>9.1f} {ratio:>11.2f}x  {r.note}")
    peers = ", ".join(f"{k} ~{v:g}" for k, v in PEERS.items())
    print(f"(peers, random hands/s as published, not measured here: {peers})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
