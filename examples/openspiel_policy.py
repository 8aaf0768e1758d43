"""A policy written against OpenSpiel's gin_rummy, played as a ginproto engine.

    ginref check "python -m engines.openspiel_engine examples/openspiel_policy.py:eager"
    ginref match "python -m engines.openspiel_engine examples/openspiel_policy.py:eager" simple

The engine calls ``eager(game, player, seed)`` before each decision and then the policy it
returns with the OpenSpiel state (``docs/OPENSPIEL.md``). A factory may return a
``pyspiel.Bot`` instead, e.g. ``pyspiel.make_simple_gin_rummy_bot(game.get_parameters(),
player)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

KNOCK = 55
DRAW_STOCK = 53
PASS = 54


def eager(game: Any, player: int, seed: int) -> Callable[[Any], int]:
    """Knock whenever OpenSpiel allows it, never take the upcard, discard at random."""
    rng = random.Random(seed)

    def policy(state: Any) -> int:
        legal: list[int] = state.legal_actions()
        if KNOCK in legal:
            return KNOCK
        if DRAW_STOCK in legal:
            return DRAW_STOCK
        if PASS in legal and max(legal) < 56:  # the upcard offer: pass; after a knock: done
            return PASS
        melds = [a for a in legal if a >= 56]
        if melds:  # laying the knocker's melds: OpenSpiel offers those that keep the knock
            return melds[0]
        return rng.choice([a for a in legal if a < 52])

    return policy
