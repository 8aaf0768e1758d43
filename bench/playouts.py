"""How fast the expert plays out worlds, against a random play-out through the same rules core.

Positions are taken from seeded games of ``simple`` against itself (every discard decision of
the first hand); in each, ``--worlds`` worlds are dealt from the mover's view
(``engines.expert.rollout.worlds``, the core's ``Determinizer``) and the mover's best discard
is played out to the end of the hand by the expert's greedy policy
(``engines.expert.rollout.play_out``); a knock decision's world plays out knocking as the
rules allow and waiting for gin at once (``play_outs``). The baseline, measured in the same
run on the same worlds, is a play-out by uniformly random legal moves (no knock) through
``Hand.apply``: the cost of the rules core itself. CPU time.

Usage: ``python bench/playouts.py [--games N] [--worlds N]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.expert.knowledge import Knowledge
from engines.expert.rollout import play_out, play_outs, worlds
from engines.simple_engine import SimpleEngine
from ginproto.cards import DECK
from ginproto.hand import Hand, HandView, Phase
from ginproto.melds import mask_best_discard
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules
from ginproto.table import play_game


def positions(games: int) -> list[HandView]:
    """The mover's view at every discard decision of the first hand of ``games`` games."""
    out: list[HandView] = []
    for key in range(games):
        log = play_game(Rules(), [SimpleEngine(), SimpleEngine()], "playouts", key)
        played = log.hands[0]
        hand = Hand(Rules(), played.deck, played.dealer)
        for step in played.steps:
            if hand.phase is Phase.DISCARD:
                out.append(hand.view(hand.to_move))
            hand.apply(step.turn.move)
    return out


_ENDS = (MoveKind.KNOCK, MoveKind.BIG_GIN)


def random_play_out(world: Hand, rng: random.Random) -> None:
    """Random legal moves, never a knock, to the end of the hand (the baseline)."""
    while not world.is_over:
        legal = world.legal_moves()
        world.apply(rng.choice([m for m in legal if m.kind not in _ENDS]))


def measure(views: Sequence[HandView], count: int) -> tuple[int, float, float, float]:
    """Play-outs made, and the CPU seconds of the expert's, of its knock decision's (the
    play-outs of knocking as the rules allow and of waiting for gin, at once) and of the
    baseline's."""
    rng = random.Random(1)
    expert = knock = baseline = 0.0
    made = 0
    for view in views:
        knowledge = Knowledge.of(view)
        start = time.process_time()
        dealt = worlds(view, [knowledge.sample(rng) for _ in range(count)], rng)
        taken = view.taken
        card = DECK[mask_best_discard(dealt[0].mask(view.seat), taken.index if taken else -1)[0]]
        for world in dealt:
            trial = world.clone()
            trial.apply(Move.discard(card))
            play_out(trial, view.seat)
        expert += time.process_time() - start
        start = time.process_time()
        for world in dealt:
            trial = world.clone()
            trial.apply(Move.discard(card))
            play_outs(trial, view.seat, [None, 0])
        knock += time.process_time() - start
        start = time.process_time()
        for world in dealt:
            random_play_out(world.clone(), rng)
        baseline += time.process_time() - start
        made += len(dealt)
    return made, expert, knock, baseline


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="games to take positions from")
    parser.add_argument("--worlds", type=int, default=50, help="worlds per position")
    args = parser.parse_args(argv)
    views = positions(args.games)
    made, expert, knock, baseline = measure(views, args.worlds)
    rows = [
        ("random play-outs (baseline)", baseline, ""),
        ("expert play-outs", expert, f" = {baseline / expert:.2f} x the baseline (worlds dealt"
         " included)"),
        ("knock worlds (knock + gin)", knock, f" = {baseline / knock:.2f} x the baseline"),
    ]
    print(f"positions: {len(views)}, play-outs: {made}")
    for label, seconds, note in rows:
        print(f"{label + ':':29} {made / seconds:9.0f} /s{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
