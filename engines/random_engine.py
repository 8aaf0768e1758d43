"""The random engine: every decision uniform over the legal moves.

It is deterministic: each choice comes from a generator seeded with the option ``Seed`` and the
position itself, so the same seed and the same position give the same move, whether the engine
plays in process or as a program, and even after the referee restarts it.
"""

from __future__ import annotations

import logging
import random
from typing import ClassVar

from ginproto.sdk import Decision, Engine, GameView, Move, Option, Phase

_PHASES = list(Phase)
_DECISIONS = list(Decision)


class RandomEngine(Engine):
    """Uniform over ``view.hand.legal_moves()`` (knocks are offered without declared melds)."""

    name = "Random"
    author = "ginproto"
    options: ClassVar[tuple[Option, ...]] = (Option.spin("Seed", default=0, min=0, max=2**31 - 1),)

    def _choose(self, view: GameView) -> Move:
        hand = view.hand
        # A tuple of ints hashes the same in every process (str hashes are salted).
        key = (
            int(self.option("Seed")),
            view.player,
            view.hand_number,
            len(hand.history),
            _PHASES.index(hand.phase),
            _DECISIONS.index(self.go.decision),
            *(c.index for c in hand.cards),
        )
        return random.Random(hash(key)).choice(hand.legal_moves())

    def offer(self, view: GameView) -> Move:
        return self._choose(view)

    def draw(self, view: GameView) -> Move:
        return self._choose(view)

    def discard(self, view: GameView) -> Move:
        return self._choose(view)


def main() -> None:
    """Run the random engine on stdin/stdout."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    RandomEngine().run()


if __name__ == "__main__":
    main()
