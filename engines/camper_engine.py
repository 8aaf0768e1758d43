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

from ginproto.cards import Card
from ginproto.hand import HandView
from ginproto.melds import best_melds, discard_deadwoods, knock_options
from ginproto.sdk import Engine, GameView, Move, MoveKind

KNOCKING_TURNS = 3
"""The turns of a hand, counted from its first, in which the camper knocks when it can."""


def _least(after: dict[Card, int], allowed: set[Card]) -> Card:
    """The allowed discard that leaves the least deadwood; ties: the higher card."""
    return min((c for c in after if c in allowed), key=lambda c: (after[c], -c.value, -c.index))


def melds_it(cards: tuple[Card, ...], card: Card) -> bool:
    """Whether ``card``, drawn into the 10 ``cards``, is melded in the best arrangement of the
    ten cards kept after the best discard other than ``card`` itself."""
    after = discard_deadwoods((*cards, card))
    allowed = {c for c in after if c != card}
    if not allowed:
        return False
    discard = _least(after, allowed)
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


class CamperEngine(Engine):
    """Knock early or with gin only; keep the hand low; take the pile only into a meld."""

    name = "Camper"
    author = "ginproto"

    def offer(self, view: GameView) -> Move:
        hand = view.hand
        if hand.pile and melds_it(hand.cards, hand.pile[-1]):
            return Move.take()
        return Move.pass_()

    def draw(self, view: GameView) -> Move:
        hand = view.hand
        if not hand.stock_only and hand.pile and melds_it(hand.cards, hand.pile[-1]):
            return Move.pile()
        return Move.stock()

    def discard(self, view: GameView) -> Move:
        hand = view.hand
        legal = hand.legal_moves()
        if any(m.kind is MoveKind.BIG_GIN for m in legal):
            return Move.big_gin()
        cards = {m.card for m in legal if m.kind is MoveKind.DISCARD and m.card is not None}
        limit = hand.knock_limit if turn(hand) <= KNOCKING_TURNS else 0
        knocks = {c: dw for c, dw in knock_options(hand.cards, limit).items() if c in cards}
        if knocks:
            card = min(knocks, key=lambda c: (knocks[c], -c.value, -c.index))
            return Move.knock(card)
        return Move.discard(_least(discard_deadwoods(hand.cards), cards))


def main() -> None:
    """Run the camper engine on stdin/stdout."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    CamperEngine().run()


if __name__ == "__main__":
    main()
