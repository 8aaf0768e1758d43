"""Environment speed: random-legal-action steps per second of ``ginproto.env``.

Four figures from one run, each the best of ``--repeat`` passes over the same seeded hands (the
passes take turns, one of each, so a change of the machine's load falls on all alike):

- ``ginproto.env`` (the raw AEC environment, and the wrapped one ``ginproto.env.env()``): one
  step is one action of the agent to act, picked uniformly from its action mask (with Python's
  ``random``, as for RLCard below, so that the loops' own costs are alike; the actions are in
  the order of the core's legal moves, so the environment plays the very moves of the
  baseline), with the observation (``last()``) built before each one, as a learner would;
- the baseline, a bare ``Hand`` random playout of the same rules: ``legal_moves()`` and
  ``apply()`` only, no observation, so the difference is the environment's own cost;
- RLCard's ``gin-rummy`` environment, if ``rlcard`` is importable: ``env.step`` with a random
  legal action, its state (observation) built on each step as RLCard always does.

Each figure is printed with its ratio to the baseline and to RLCard; the last lines compare
each of the two environment figures (raw and wrapped) to RLCard's, against the goal of 5 times
RLCard's steps per second.

Usage: ``python bench/env_speed.py [--hands N] [--seed S] [--repeat R] [--variant V]``
(needs the env extra: ``pip install -e '.[env]'``).
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ginproto import env as ginenv
from ginproto.hand import Hand
from ginproto.rules import Rules, Variant
from ginproto.table import first_dealer, hand_deck


def env_steps(make: Callable[[], Any], hands: int, seed: int) -> int:
    """Play ``hands`` one-hand episodes with random legal actions; the number of steps."""
    env = make()
    rng = random.Random(seed)
    steps = 0
    for n in range(hands):
        env.reset(seed=seed + n)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(rng.choice(obs["action_mask"].nonzero()[0].tolist()))
            steps += 1
    return steps


def hand_steps(rules: Rules, hands: int, seed: int) -> int:
    """The baseline: the same deals played out on a bare ``Hand`` with random legal moves."""
    rng = random.Random(seed)
    steps = 0
    for n in range(hands):
        hand = Hand(rules, hand_deck(seed + n, 0, 1), first_dealer(seed + n, 0))
        while not hand.is_over:
            moves = hand.legal_moves()
            hand.apply(moves[rng.randrange(len(moves))])
            steps += 1
    return steps


def rlcard_steps(hands: int, seed: int) -> int | None:
    """RLCard's gin-rummy, if installed: random legal actions; ``None`` without RLCard."""
    try:
        rlcard: Any = importlib.import_module("rlcard")
    except ImportError:
        return None
    env = rlcard.make("gin-rummy", config={"seed": seed})
    rng = random.Random(seed)
    steps = 0
    for _ in range(hands):
        state, _ = env.reset()
        while not env.is_over():
            state, _ = env.step(rng.choice(list(state["legal_actions"])))
            steps += 1
    return steps


Rate = tuple[float, int]  # steps per second (the best pass), steps of one pass


def rates(runs: Sequence[Callable[[], int | None]], repeat: int) -> list[Rate | None]:
    """The best steps per second of each run over ``repeat`` passes, and its steps of one
    pass (``None`` for a run that returns ``None``). The passes take turns (one of each run,
    ``repeat`` times over), so a change of the machine's load falls on all of them alike."""
    best: list[Rate | None] = [(0.0, 0)] * len(runs)
    for _ in range(repeat):
        for i, run in enumerate(runs):
            measured = best[i]
            if measured is None:
                continue
            start = time.perf_counter()
            steps = run()
            if steps is None:
                best[i] = None
                continue
            per_second = steps / (time.perf_counter() - start)
            best[i] = (max(measured[0], per_second), steps)
    return best


GOAL = 5.0
"""The environment's goal: this many times RLCard's steps per second."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hands", type=int, default=200, help="one-hand episodes per pass")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--repeat", type=int, default=3, help="passes; the best counts")
    two_player = [v.value for v in Variant if v is not Variant.THREEHANDED]
    parser.add_argument("--variant", default="standard", choices=two_player)
    args = parser.parse_args(argv)
    rules = Rules(variant=Variant(args.variant))
    repeat = max(1, args.repeat)

    hands, seed = args.hands, args.seed
    raw, wrapped = "ginproto.env.raw_env", "ginproto.env.env() (wrapped)"
    runs: list[tuple[str, Callable[[], int | None]]] = [
        ("bare Hand playout (baseline)", lambda: hand_steps(rules, hands, seed)),
        (raw, lambda: env_steps(lambda: ginenv.raw_env(rules=rules), hands, seed)),
        (wrapped, lambda: env_steps(lambda: ginenv.env(rules=rules), hands, seed)),
        ("RLCard gin-rummy", lambda: rlcard_steps(hands, seed)),
    ]
    names = [name for name, _ in runs]
    measured = dict(zip(names, rates([run for _, run in runs], repeat), strict=True))
    base = measured["bare Hand playout (baseline)"]
    rlcard = measured["RLCard gin-rummy"]
    assert base is not None
    print(
        f"random legal actions, {args.hands} hands of {args.variant} per pass,"
        f" best of {repeat} (passes taking turns)"
    )
    for name, rate in measured.items():
        if rate is None:
            print(f"  {name:<32} not measured (rlcard is not importable)")
            continue
        per_second, steps = rate
        versus = f", {per_second / rlcard[0]:.2f}x RLCard" if rlcard is not None else ""
        print(
            f"  {name:<32} {per_second:>10,.0f} steps/s  ({steps} steps,"
            f" {per_second / base[0]:.2f}x the baseline{versus})"
        )
    if rlcard is not None:
        for name in (raw, wrapped):
            rate = measured[name]
            assert rate is not None
            ratio = rate[0] / rlcard[0]
            verdict = "reaches" if ratio >= GOAL else "falls short of"
            print(
                f"goal, {name} against RLCard gin-rummy: {ratio:.2f}x RLCard's steps/s,"
                f" {verdict} the goal of {GOAL:g}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
