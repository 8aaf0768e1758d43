"""Test engine for tournaments: always draws from the stock, knocks as soon as it can, and
otherwise sheds the card that leaves the least deadwood. Deterministic.

Option ``IllegalAt`` (default 0, off): in that hand of every game, it answers its first
discard with a card it does not hold, so the referee rules an illegal-move forfeit.
"""

from ginproto.cards import DECK
from ginproto.melds import discard_deadwoods, knock_options
from ginproto.sdk import Engine, GameView, Move, MoveKind, Option


class Greedy(Engine):
    name = "Greedy"
    author = "ginproto tests"
    version = "1"
    options = (Option.spin("IllegalAt", default=0, min=0, max=1000),)

    def offer(self, view: GameView) -> Move:
        return Move.pass_()

    def draw(self, view: GameView) -> Move:
        return Move.stock()

    def discard(self, view: GameView) -> Move:
        hand = view.hand
        if view.hand_number == self.option("IllegalAt"):
            return Move.discard(next(c for c in DECK if c not in hand.cards))
        legal = hand.legal_moves()
        allowed = {m.card for m in legal if m.kind is MoveKind.DISCARD}
        options = knock_options(hand.cards, hand.knock_limit)
        knocks = {c: d for c, d in options.items() if c in allowed}
        if knocks:
            return Move.knock(min(knocks, key=lambda c: (knocks[c], c.index)))
        after = discard_deadwoods(hand.cards)
        best = min((c for c in after if c in allowed), key=lambda c: (after[c], c.index))
        return Move.discard(best)


if __name__ == "__main__":
    Greedy().run()
