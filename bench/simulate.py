"""In-process simulation speed: hands per second against OpenSpiel, measured in the same run.

    python bench/simulate.py [--seconds 1] [--rounds 5] [--variant standard] [--seed bench]

**Against OpenSpiel, interleaved.** OpenSpiel's C++ ``gin_rummy`` driven from Python by uniformly
random actions (chance outcomes sampled too) is the yardstick, when ``open_spiel`` is installed
(``pip install -e '.[openspiel]'``). Each round runs every row for ``--seconds`` in turn, so that
the load of a shared machine falls on all of them alike; the table shows each row's median
hands/s over the rounds and the median of its per-round ratio to OpenSpiel, by wall time and
by this process's CPU time (steadier when other programs load the machine). The rows:

- a bare ``Hand`` driven by uniformly random legal moves (no table, no players, no records): the
  floor of any simulation here;
- the SDK runner: ``ginproto.simulate.run_games`` between two ``ginproto.sdk.Engine`` bots that
  choose uniformly from ``view.hand.legal_moves()`` with one seeded generator each, whole games
  with the table, the game's scoring and the players' views;
- the same runner with ``engines/random_engine.py``, which seeds a new generator from the
  position on every decision (its own thinking, which costs as much as the runner).

**SDK per-decision cost.** What the Python SDK itself costs an engine over the pipe: reading a
``position`` line into a view, the ``go`` line, and formatting the ``move`` reply, through
``Engine.handle``, with the bot's answer given in advance (no thinking), in CPU time. The lines
come from random games, so the histories are as long as real ones.

**Deadwood.** µs per ``deadwood`` of a 10-card hand and per ``knock_options`` of an 11-card hand.

**Other rows**, relative to the bare playout: the built-in engines, records written and
verified, and the runner's own ``RandomPlayer``.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ginproto.cards import DECK, shuffled_deck  # noqa: E402
from ginproto.game import GameView  # noqa: E402
from ginproto.hand import Hand  # noqa: E402
from ginproto.melds import deadwood, knock_options  # noqa: E402
from ginproto.moves import Move  # noqa: E402
from ginproto.protocol import Go, format_position  # noqa: E402
from ginproto.replay import verify_file  # noqa: E402
from ginproto.rules import Rules, Variant  # noqa: E402
from ginproto.sdk import Engine  # noqa: E402
from ginproto.simulate import GreedyPlayer, RandomPlayer, run_games  # noqa: E402
from ginproto.table import Decision, Player, play_game  # noqa: E402

OPENSPIEL_VERSION = "2.0.2"


@dataclass
class Row:
    name: str
    hands: int
    seconds: float
    note: str = ""
    games: int = 0
    cpu: float = 0.0  # this process's CPU seconds, when measured

    @property
    def cpu_rate(self) -> float:
        return self.hands / self.cpu if self.cpu else 0.0

    @property
    def rate(self) -> float:
        return self.hands / self.seconds if self.seconds else 0.0


# ---------------------------------------------------------------------------------------------
# The interleaved rows.


def bare_playout(rules: Rules, seed: str, budget: float, start_key: int = 0) -> Row:
    """Random hands on a bare ``Hand``: deal, then uniformly random legal moves to the end."""
    rng = random.Random(f"{seed}/{start_key}")
    hands = 0
    cpu = time.process_time()
    start = time.perf_counter()
    while time.perf_counter() - start < budget:
        key = start_key + hands
        hand = Hand(rules, shuffled_deck(seed, "bare", key), key % 2)
        while not hand.is_over:
            hand.apply(rng.choice(hand.legal_moves()))
        hands += 1
    return Row(
        "bare Hand, random moves",
        hands,
        time.perf_counter() - start,
        cpu=time.process_time() - cpu,
    )


def openspiel_playout(game: Any, seed: str, budget: float, start_key: int = 0) -> Row:
    """Random hands of OpenSpiel's ``gin_rummy``: chance outcomes sampled, actions uniform."""
    rng = random.Random(f"{seed}/{start_key}")
    hands = 0
    cpu = time.process_time()
    start = time.perf_counter()
    while time.perf_counter() - start < budget:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        hands += 1
    return Row(
        "OpenSpiel gin_rummy, random",
        hands,
        time.perf_counter() - start,
        cpu=time.process_time() - cpu,
    )


class SdkRandom(Engine):
    """An SDK engine that plays uniformly at random from one seeded generator."""

    name = "sdk-random"
    author = "bench"

    def __init__(self, seed: str) -> None:
        super().__init__()
        self._rng = random.Random(seed)

    def offer(self, view: GameView) -> Move:
        return self._rng.choice(view.hand.legal_moves())

    def draw(self, view: GameView) -> Move:
        return self._rng.choice(view.hand.legal_moves())

    def discard(self, view: GameView) -> Move:
        return self._rng.choice(view.hand.legal_moves())


def games_for(
    rules: Rules,
    make: Callable[[int, int], Player],
    seed: str,
    budget: float,
    record: Path | None = None,
    count: int | None = None,
    first_key: int = 0,
) -> Row:
    """Whole games through the in-process runner until the time budget is spent (or exactly
    ``count`` games, keys ``first_key`` on, to repeat another row's games)."""
    hands = games = 0
    spent = 0.0
    cpu = time.process_time()
    while (spent < budget) if count is None else (games < count):
        started = time.perf_counter()
        result = run_games(
            rules,
            lambda key: [make(key, p) for p in range(rules.players)],
            1,
            seed,
            first_key=first_key + games,
            record=record,
            site="bench",
            date="2000.01.01",
        )
        hands += result.hands
        games += 1
        spent += time.perf_counter() - started
    return Row("", hands, spent, f"{games} games", games, cpu=time.process_time() - cpu)


def load_openspiel() -> tuple[Any, str]:
    """OpenSpiel's gin_rummy game, or ``None`` and why not."""
    try:
        import pyspiel  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None, (
            f"open_spiel is not installed, so there are no OpenSpiel rows; install it with"
            f" pip install -e '.[openspiel]' (or open_spiel=={OPENSPIEL_VERSION})"
        )
    return pyspiel.load_game("gin_rummy"), ""


@dataclass
class Series:
    name: str
    rates: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    cpu_ratios: list[float] = field(default_factory=list)


def interleaved(
    rules: Rules, seed: str, budget: float, rounds: int, spiel: Any
) -> list[Series]:
    """Every row for ``budget`` seconds in turn, ``rounds`` times."""
    random_engine = sdk_players("engines.random_engine", "RandomEngine", None)[0]
    runs: list[tuple[str, Callable[[int], Row]]] = [
        ("bare Hand, random moves", lambda k: bare_playout(rules, seed, budget, k * 100_000)),
        (
            "SDK runner, random vs random",
            lambda k: games_for(
                rules, lambda key, p: SdkRandom(f"{key}/{p}"), seed, budget, first_key=k * 1000
            ),
        ),
    ]
    if random_engine is not None:
        runs.append((
            "SDK runner, engines/random_engine",
            lambda k: games_for(rules, random_engine, seed, budget, first_key=k * 1000),
        ))
    if spiel is not None:
        runs.append((
            f"OpenSpiel {OPENSPIEL_VERSION}, random",
            lambda k: openspiel_playout(spiel, seed, budget, k * 100_000),
        ))
    series = [Series(name) for name, _ in runs]
    for k in range(rounds):
        rows = [run(k) for _, run in runs]
        for s, row in zip(series, rows, strict=True):
            s.rates.append(row.rate)
            if spiel is not None and rows[-1].rate and rows[-1].cpu_rate:
                s.ratios.append(row.rate / rows[-1].rate)
                s.cpu_ratios.append(row.cpu_rate / rows[-1].cpu_rate)
    return series


# ---------------------------------------------------------------------------------------------
# The SDK's own cost per decision.


class _Canned(Engine):
    """Answers each decision with the move it was given beforehand: no thinking at all."""

    name = "canned"
    answer: Move = Move.stock()

    def offer(self, view: GameView) -> Move:
        return self.answer

    draw = discard = offer


class _NullOut(io.StringIO):
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class _Taper(RandomPlayer):
    """A random player that keeps the protocol lines of every decision it is asked."""

    def __init__(self, seed: int, lines: list[tuple[str, str, Move]]) -> None:
        super().__init__(seed)
        self.lines = lines

    def decide(self, view: GameView, decision: Decision) -> Move:
        move = super().decide(view, decision)
        self.lines.append((format_position(view) + "\n", Go(decision).format() + "\n", move))
        return move


def sdk_decision_cost(rules: Rules, seed: str, repeat: int) -> tuple[float, int, float]:
    """Median µs per decision of ``Engine.handle`` on a position and a go line (the reply
    formatted and written to a null stream), the decisions timed, and the mean line length."""
    lines: list[tuple[str, str, Move]] = []
    play_game(rules, [_Taper(p, lines) for p in range(rules.players)], seed)
    del lines[3000:]  # a random game is long: its first 3000 decisions (about 25 hands)
    engine = _Canned()
    out = _NullOut()
    times = []
    for _ in range(repeat):
        start = time.process_time()  # CPU time: what the engine's process pays
        for position, go, move in lines:
            engine.answer = move
            engine.handle(position, out)
            engine.handle(go, out)
        times.append((time.process_time() - start) / len(lines) * 1e6)
    mean_length = sum(len(p) for p, _, _ in lines) / len(lines)
    return statistics.median(times), len(lines), mean_length


def deadwood_cost(seed: str, count: int, repeat: int) -> tuple[float, float]:
    """Median µs per ``deadwood`` of 10 cards and per ``knock_options`` of 11 cards."""
    rng = random.Random(seed)
    tens = [rng.sample(DECK, 10) for _ in range(count)]
    elevens = [rng.sample(DECK, 11) for _ in range(count)]

    def per(fn: Callable[[], object]) -> float:
        runs = []
        for _ in range(repeat):
            start = time.process_time()
            fn()
            runs.append((time.process_time() - start) / count * 1e6)
        return statistics.median(runs)

    return (
        per(lambda: [deadwood(h) for h in tens]),
        per(lambda: [knock_options(h, 10) for h in elevens]),
    )


# ---------------------------------------------------------------------------------------------
# The other rows.


def sdk_players(
    module: str, cls: str, fallback: Callable[[int, int], Player] | None
) -> tuple[Any, str]:
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


def other_rows(rules: Rules, seed: str, budget: float) -> list[Row]:
    random_make, random_src = sdk_players(
        "engines.random_engine",
        "RandomEngine",
        lambda key, seat: RandomPlayer(f"{key}/{seat}"),
    )
    simple_make, simple_src = sdk_players(
        "engines.simple_engine", "SimpleEngine", lambda key, seat: GreedyPlayer()
    )
    rows = [bare_playout(Rules(), seed, budget)]
    rows[0].name += " (baseline)"
    row = games_for(rules, random_make, seed, budget)
    row.name, row.note = "random vs random, in-process runner", f"{row.note}; {random_src}"
    rows.append(row)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.rec"
        same = rows[-1].games  # the very same games again, now with their records
        row = games_for(rules, random_make, seed, budget, record=path, count=same)
        row.name, row.note = "random vs random, records appended", f"{row.note}; fsync per game"
        rows.append(row)
        start = time.perf_counter()
        report = verify_file(str(path))
        seconds = time.perf_counter() - start
        assert report.ok, report.errors[:3]
        rows.append(Row("replay --verify of those records", report.hands, seconds))
    row = games_for(rules, lambda key, seat: RandomPlayer(f"{key}/{seat}"), seed, budget)
    row.name, row.note = "random vs random, built-in RandomPlayer", f"{row.note}; no SDK layer"
    rows.append(row)
    row = games_for(rules, simple_make, seed, budget)
    row.name, row.note = "simple vs simple, in-process runner", f"{row.note}; {simple_src}"
    rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per row and round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--variant", default="standard", choices=[v.value for v in Variant])
    parser.add_argument("--seed", default="bench")
    args = parser.parse_args(argv)
    rules = Rules(variant=Variant(args.variant))
    budget: float = args.seconds
    spiel, missing = load_openspiel()

    print(
        f"in-process simulation, {rules.variant}, on {platform.python_implementation()}"
        f" {platform.python_version()} ({platform.machine()}, {os.cpu_count()} cores),"
        f" load average {os.getloadavg()[0]:.2f} at the start"
    )
    if missing:
        print(f"note: {missing}")
    print(f"\n{args.rounds} interleaved rounds of {budget:g} s a row (medians over the rounds):")
    print(f"{'':36} {'hands/s':>9} {'vs OpenSpiel':>13} {'(by CPU time)':>14}")
    for s in interleaved(rules, args.seed, budget, args.rounds, spiel):
        ratio = f"{statistics.median(s.ratios):>12.2f}x" if s.ratios else f"{'-':>13}"
        by_cpu = f"{statistics.median(s.cpu_ratios):>13.2f}x" if s.cpu_ratios else f"{'-':>14}"
        spread = f"(rounds: {', '.join(f'{r:.0f}' for r in s.rates)})"
        print(f"{s.name:36} {statistics.median(s.rates):>9.0f} {ratio} {by_cpu}  {spread}")

    cost, decisions, mean_length = sdk_decision_cost(rules, args.seed, max(3, args.rounds))
    print(
        f"\nSDK per decision (parse position, build the view, parse go, format the move):"
        f" {cost:.1f} µs of CPU, median over {max(3, args.rounds)} passes of {decisions} decisions"
        f" (position lines of {mean_length:.0f} characters on average)"
    )
    ten, eleven = deadwood_cost(args.seed, 20_000, 3)
    print(
        f"deadwood of 10 cards: {ten:.2f} µs of CPU; knock_options of 11 cards: {eleven:.2f} µs"
    )

    rows = other_rows(rules, args.seed, budget)
    base = rows[0].rate
    print(f"\nother rows, {budget:g} s each:")
    print(f"{'':38} {'hands':>7} {'hands/s':>9} {'vs baseline':>12}")
    for r in rows:
        vs = r.rate / base if base else 0.0
        print(f"{r.name:38} {r.hands:>7} {r.rate:>9.1f} {vs:>11.2f}x  {r.note}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
