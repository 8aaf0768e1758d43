"""The camper engine: a patient sparring partner that waits for gin.

- In its first three turns of a hand it knocks as soon as it can, as ``simple`` does.
- After that it knocks only with gin (big gin too, when the rules allow it and the hand has it).
  Until then it discards the card that leaves the least deadwood (ties: the higher card), so
  that its hand stays low against a knock, and it plays on for gin.
- It takes the upcard or the top of the pile only into a meld: the card must be melded in the
  best arrangement of the ten cards it keeps after its best discard. Otherwise it draws from
  the stock.
- As the three-player sitter it advises what it would play itself.

A turn is one of its own discards in the hand: the first three are those of the hand's first
three rounds that it plays. It keeps no memory between decisions, so it plays the same in
process and as a program.
"""

from __future__ import annotations

import logging

from engines.simple_engine import SimpleEngine
from ginproto.cards import Card
from ginproto.hand import HandView
from ginproto.melds import best_melds, discard_deadwoods
from ginproto.sdk import MoveKind

KNOCKING_TURNS = 3
"""The turns of a hand, counted from its first, in which the camper knocks when it can."""


def melds_it(cards: tuple[Card, ...], card: Card) -> bool:
    """Whether ``card``, drawn into the 10 ``cards``, is melded in the best arrangement of the
    ten cards kept after the best discard other than ``card`` itself."""
    after = discard_deadwoods((*cards, card))
    choices = [c for c in after if c != card]
    if not choices:
        return False
    discard = min(choices, key=lambda c: (after[c], -c.value, -c.index))
    kept = [c for c in cards if c != discard] + [card]
    return card not in best_melds(kept).deadwood_cards


def turn(hand: HandView) -> int:
    """Which of the seat's turns in this hand the current decision belongs to (1 for its
    first): its discards so far, plus one."""
    done = sum(
        1
        for t in hand.history
        if t.seat == hand.seat and t.move.kind in (MoveKind.DISCARD, MoveKind.KNOCK)
    )
    return done + 1


class CamperEngine(SimpleEngine):
    """Knock early or with gin only; keep the hand low; take the pile only into a meld."""

    name = "Camper"
    author = "ginproto"

    def wants(self, cards: tuple[Card, ...], card: Card) -> bool:
        return melds_it(cards, card)

    def knock_limit(self, hand: HandView) -> int:
        return hand.knock_limit if turn(hand) <= KNOCKING_TURNS else 0


def main() -> None:
    """Run the camper engine on stdin/stdout."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    CamperEngine().run()


if __name__ == "__main__":
    main()
