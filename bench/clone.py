"""Search primitives: µs per ``Hand.clone()`` and per ``determinize``, against baselines
measured in the same run.

The positions are hands in progress reached by random legal play from seeded deals (a few to a
few dozen moves in). For each position:

- ``Hand.clone()``, against ``copy.deepcopy`` of the same hand and against a new
  ``Hand(rules, deck, dealer)`` from the deal (which is not even the same position: it is the
  cost of the deal alone, before any move is replayed);
- ``Game.clone()`` of the game holding it;
- ``ginproto.search.determinize`` from the view of the player to move, against replaying the
  hand's moves from its deck (``replay_hand``: what the determinization does once it has
  chosen a deck).

Each figure is the best of ``--repeat`` timings of the whole set, so that other work on a
busy machine inflates it less. Ratios are baseline / ours.

Usage: ``python bench/clone.py [--positions N] [--seed S] [--repeat R]``
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ginproto.cards import shuffled_deck
from ginproto.game import Game
from ginproto.hand import Hand, replay_hand
from ginproto.rules import Rules
from ginproto.search import determinize


def positions(count: int, seed: int) -> list[Game]:
    """``count`` games with a hand in progress, after random legal moves."""
    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        game = Game(Rules(), rng.randrange(2))
        hand = game.deal(shuffled_deck(seed, len(out)))
        for _ in range(rng.randrange(2, 50)):
            move = rng.choice(hand.legal_moves())
            probe = hand.clone()
            probe.apply(move)
            if probe.is_over:
                break
            game.apply(move)
        out.append(game)
    return out


def best_us(work: Callable[[], object], calls: int, repeat: int) -> float:
    """Microseconds per call: the best of ``repeat`` timings of ``work`` (``calls`` calls)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    games = positions(args.positions, args.seed)
    hands: list[Hand] = [g.hand for g in games if g.hand is not None]
    n = len(hands)
    views = [g.view(g.seats[h.to_move]) for g, h in zip(games, hands, strict=True)]
    rngs = [random.Random(i) for i in range(n)]
    moves = [[t.move for t in h.history] for h in hands]
    mean_moves = sum(map(len, moves)) / n

    def clones() -> None:
        for h in hands:
            h.clone()

    def deepcopies() -> None:
        for h in hands:
            copy.deepcopy(h)

    def deals() -> None:
        for h in hands:
            Hand(h.rules, h.deck, h.dealer)

    def game_clones() -> None:
        for g in games:
            g.clone()

    def determinizations() -> None:
        for view, rng in zip(views, rngs, strict=True):
            determinize(view, rng)

    def replays() -> None:
        for h, ms in zip(hands, moves, strict=True):
            replay_hand(h.rules, h.deck, h.dealer, ms)

    r = args.repeat
    clone_us = best_us(clones, n, r)
    deep_us = best_us(deepcopies, n, r)
    deal_us = best_us(deals, n, r)
    game_us = best_us(game_clones, n, r)
    det_us = best_us(determinizations, n, r)
    replay_us = best_us(replays, n, r)
    print(f"{n} positions, {mean_moves:.1f} moves into the hand on average, best of {r}")
    print(f"Hand.clone()           {clone_us:8.2f} µs")
    print(f"  copy.deepcopy(hand)  {deep_us:8.2f} µs   ratio {deep_us / clone_us:6.1f}x")
    print(f"  Hand(rules, deck)    {deal_us:8.2f} µs   ratio {deal_us / clone_us:6.1f}x")
    print(f"Game.clone()           {game_us:8.2f} µs")
    print(f"determinize(view, rng) {det_us:8.2f} µs")
    print(f"  replay_hand(moves)   {replay_us:8.2f} µs   ratio {replay_us / det_us:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
