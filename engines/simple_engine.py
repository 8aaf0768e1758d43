"""The simple engine: a plain strategy that a new bot should learn to beat.

- It takes the upcard or the top of the pile only if that card goes into a meld and lowers its
  best deadwood (it makes or extends a meld); otherwise it draws from the stock.
- It knocks as soon as it can, with the discard that leaves the least deadwood (gin if it can;
  big gin when the rules allow it and the hand has it).
- Otherwise it discards the card that leaves the least deadwood, which is its highest-value
  deadwood card (ties: the higher card).
- As the three-player sitter it advises what it would play itself.

It keeps no memory between decisions, so it plays the same in process and as a program.
"""

from __future__ import annotations

import logging

from ginproto.cards import Card
from ginproto.hand import HandView
from ginproto.melds import best_melds, deadwood, discard_deadwoods, knock_options
from ginproto.sdk import Engine, GameView, Move, MoveKind


def improves(cards: tuple[Card, ...], card: Card) -> bool:
    """Whether drawing ``card`` into the 10 ``cards`` melds it and lowers the best deadwood
    after the best discard (which may not be ``card`` itself)."""
    before = deadwood(cards)
    after = discard_deadwoods((*cards, card))
    choices = [(dw, c) for c, dw in after.items() if c != card]
    if not choices:
        return False
    best, discard = min(choices, key=lambda item: (item[0], -item[1].value, -item[1].index))
    if best >= before:
        return False
    kept = [c for c in cards if c != discard] + [card]
    return card not in best_melds(kept).deadwood_cards


class SimpleEngine(Engine):
    """Draw to melds, knock at once, shed the highest deadwood."""

    name = "Simple"
    author = "ginproto"

    def wants(self, cards: tuple[Card, ...], card: Card) -> bool:
        """Whether to take ``card`` from the pile into the 10 ``cards``: when it ``improves``
        them."""
        return improves(cards, card)

    def knock_limit(self, hand: HandView) -> int:
        """The most deadwood it knocks with at this decision: all the rules allow."""
        return hand.knock_limit

    def offer(self, view: GameView) -> Move:
        hand = view.hand
        if hand.pile and self.wants(hand.cards, hand.pile[-1]):
            return Move.take()
        return Move.pass_()

    def draw(self, view: GameView) -> Move:
        hand = view.hand
        if not hand.stock_only and hand.pile and self.wants(hand.cards, hand.pile[-1]):
            return Move.pile()
        return Move.stock()

    def discard(self, view: GameView) -> Move:
        hand = view.hand
        legal = hand.legal_moves()
        if any(m.kind is MoveKind.BIG_GIN for m in legal):
            return Move.big_gin()
        allowed = {m.card for m in legal if m.kind is MoveKind.DISCARD}
        knocks = {
            c: dw
            for c, dw in knock_options(hand.cards, self.knock_limit(hand)).items()
            if c in allowed
        }
        if knocks:
            card = min(knocks, key=lambda c: (knocks[c], -c.value, -c.index))
            return Move.knock(card)
        after = discard_deadwoods(hand.cards)
        card = min(
            (c for c in after if c in allowed), key=lambda c: (after[c], -c.value, -c.index)
        )
        return Move.discard(card)


def main() -> None:
    """Run the simple engine on stdin/stdout."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    SimpleEngine().run()


if __name__ == "__main__":
    main()
