"""What a search needs from the rules core: copy a position, guess the cards a seat cannot see,
score a showdown.

- ``Hand.clone()`` and ``Game.clone()`` copy a position to play on.
- ``determinize(view, rng, sampler)`` builds, from one seat's ``HandView`` (or a player's
  ``GameView``), a complete ``Hand`` that this seat could not tell from the real one: its view
  of the result is exactly ``view``. The cards the seat has not seen are dealt by ``rng`` or
  by a caller's ``sampler`` (an inference model weighing the opponent's likely hands).
- ``Determinizer(view)`` deals many such hands of one view, each far cheaper than
  ``determinize`` (a search plays out hundreds of worlds per decision).
- ``score_showdown`` is the one scoring of a knock, the one ``Hand`` itself uses.

The determinized hand is built by replaying the hand's moves from a deck that puts the dealt
cards where the view needs them, so every rule is applied by ``Hand`` itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ginproto.cards import DECK, Card
from ginproto.game import GameView
from ginproto.hand import (
    DEALT_STOCK,
    DRAW_STOCK,
    HAND_SIZE,
    Hand,
    HandView,
    IllegalMoveError,
    Phase,
    drawn_after_discard,
    score_showdown,
)
from ginproto.melds import cards_mask
from ginproto.moves import MoveKind

__all__ = [
    "DEALT_STOCK",
    "DRAW_STOCK",
    "HAND_SIZE",
    "Determinizer",
    "Hidden",
    "Sampler",
    "determinize",
    "drawn_after_discard",
    "hidden_places",
    "score_showdown",
]


@dataclass(frozen=True)
class Hidden:
    """The places a seat cannot see, as a sampler is asked to fill them.

    ``unseen``: the cards the seat has never seen, in card order (the opponent's hidden cards
    and the stock between them). ``opponent``: how many of the opponent's cards are hidden.
    ``stock``: how many cards the stock holds. ``opponent_known``: the opponent's cards the
    seat knows (taken from the pile and not discarded since). ``view``: the seat's view.
    """

    unseen: tuple[Card, ...]
    opponent: int
    stock: int
    opponent_known: tuple[Card, ...]
    view: HandView


Sampler = Callable[[Hidden], tuple[Sequence[Card], Sequence[Card]]]
"""A caller's deal of the hidden cards: given the ``Hidden`` places, returns the opponent's
hidden cards (``Hidden.opponent`` of them) and the stock, top card first (``Hidden.stock`` of
them): together, exactly the ``Hidden.unseen`` cards."""

_DRAWS = (MoveKind.STOCK, MoveKind.PILE, MoveKind.TAKE)
_FROM_PILE = (MoveKind.PILE, MoveKind.TAKE)
_PUTS = (MoveKind.DISCARD, MoveKind.KNOCK)


def hidden_places(view: HandView | GameView) -> Hidden:
    """What ``view``'s seat cannot see: the unseen cards and how many go to each place."""
    hand = view.hand if isinstance(view, GameView) else view
    opponent = 1 - hand.seat
    known: set[Card] = set()
    held = HAND_SIZE
    for turn in hand.history:
        if turn.seat != opponent:
            continue
        kind = turn.move.kind
        if kind in _DRAWS:
            held += 1
            if kind in _FROM_PILE:
                assert turn.card is not None
                known.add(turn.card)
        elif kind in _PUTS:
            held -= 1
            assert turn.move.card is not None
            known.discard(turn.move.card)
    seen = known | set(hand.cards) | set(hand.pile)
    unseen = tuple(c for c in DECK if c not in seen)
    if len(seen) != len(known) + len(hand.cards) + len(hand.pile):
        raise ValueError("the view shows a card in two places")
    if held - len(known) + hand.stock != len(unseen):
        raise ValueError(
            f"the view does not add up: {len(unseen)} unseen cards for {held - len(known)}"
            f" hidden opponent cards and {hand.stock} stock cards"
        )
    return Hidden(
        unseen=unseen,
        opponent=held - len(known),
        stock=hand.stock,
        opponent_known=tuple(sorted(known, key=_index)),
        view=hand,
    )


def determinize(
    view: HandView | GameView,
    rng: random.Random | None = None,
    sampler: Sampler | None = None,
) -> Hand:
    """A complete hand consistent with everything ``view``'s seat saw.

    The seat's own cards, the pile, the opponent's known cards, the stock count and the moves
    so far are the view's; the unseen cards are dealt to the opponent's hidden cards and the
    stock by ``sampler`` if given (see ``Sampler``), else shuffled by ``rng`` (a new
    ``random.Random()`` if none). The result's ``view(seat)`` equals ``view`` (for a
    ``GameView``, its ``hand``; the three-player sitter's view is the captain's seat). The same
    seeded ``rng`` gives the same hand. The hand must be in progress. Raises ``ValueError`` if
    the sampler's deal does not fit the hidden places, or if the view is not one a hand can
    produce.
    """
    hand_view = view.hand if isinstance(view, GameView) else view
    if hand_view.phase is Phase.OVER:
        raise ValueError("the hand is over: there is nothing hidden left to search")
    hidden = hidden_places(hand_view)
    if sampler is not None:
        opponent_hidden, stock = sampler(hidden)
        _check_deal(hidden, opponent_hidden, stock)
    else:
        cards = list(hidden.unseen)
        (rng if rng is not None else random.Random()).shuffle(cards)
        opponent_hidden, stock = cards[: hidden.opponent], cards[hidden.opponent :]
    deck = _deck(hand_view, hidden, opponent_hidden, stock)
    hand = Hand(hand_view.rules, deck, hand_view.dealer)
    try:
        for turn in hand_view.history:
            hand.apply(turn.move)
    except IllegalMoveError as exc:
        raise ValueError(f"the view's moves cannot be replayed: {exc}") from None
    if hand.view(hand_view.seat) != hand_view:
        raise ValueError("the view is not one a hand can produce (its parts do not agree)")
    return hand


class Determinizer:
    """Many determinized hands of one view: ``deal(opponent, stock)`` is the hand
    ``determinize(view, sampler=...)`` gives for that deal of the hidden cards, at a few
    microseconds where ``determinize`` replays the hand's moves (about 0.7 ms in mid-hand).

    The view's moves are replayed once, for a template deal; each ``deal`` renames the
    template's unseen cards to the ones asked for. No rule looks at the names of cards that
    no move showed, so the renamed hand is the one the moves give from the renamed deck: the
    same seat's view, the same cards in the same places, the same rules ahead. Raises
    ``ValueError`` as ``determinize`` does, on a finished hand or a view no hand can produce.
    """

    def __init__(self, view: HandView | GameView) -> None:
        hand_view = view.hand if isinstance(view, GameView) else view
        self.hidden = hidden_places(hand_view)
        """What the seat cannot see (the ``Hidden`` a sampler is given)."""
        # The template: the unseen cards in card order, the opponent's first, then the stock.
        self._template = determinize(
            hand_view,
            sampler=lambda h: (h.unseen[: h.opponent], h.unseen[h.opponent :]),
        )

    def deal(self, opponent: Sequence[Card], stock: Sequence[Card]) -> Hand:
        """The hand with ``opponent`` as the opponent's hidden cards and ``stock`` as the
        stock, top card first (a ``Sampler``'s answer); a new ``Hand`` each call. Raises
        ``ValueError`` if the deal does not fit the hidden places (as ``determinize``)."""
        hidden = self.hidden
        _check_deal(hidden, opponent, stock)
        names = dict(zip(hidden.unseen, (*opponent, *stock), strict=True))
        return self._template._renamed(names)


def _index(card: Card) -> int:
    return card.index


def _check_deal(hidden: Hidden, opponent: Sequence[Card], stock: Sequence[Card]) -> None:
    if len(opponent) != hidden.opponent:
        raise ValueError(
            f"the sampler gave the opponent {len(opponent)} hidden cards, not {hidden.opponent}"
        )
    if len(stock) != hidden.stock:
        raise ValueError(f"the sampler gave the stock {len(stock)} cards, not {hidden.stock}")
    given = [*opponent, *stock]
    unseen_mask = cards_mask(hidden.unseen)
    given_mask = cards_mask(given)
    if given_mask == unseen_mask and len(given) == len(hidden.unseen):
        return  # the common case, checked on masks (no card hashed)
    unseen = set(hidden.unseen)
    seen = [str(c) for c in given if c not in unseen]
    if seen:
        raise ValueError(f"the sampler dealt cards the seat has seen: {' '.join(seen)}")
    if len(set(given)) != len(given):
        twice = sorted({c for c in given if given.count(c) > 1}, key=_index)
        raise ValueError(f"the sampler dealt a card twice: {' '.join(map(str, twice))}")


def _deck(
    view: HandView, hidden: Hidden, opponent_hidden: Sequence[Card], stock: Sequence[Card]
) -> list[Card]:
    """The 52-card deck from which the view's moves, replayed, give this deal.

    Each seat's cards are followed back from now to the deal: a discard puts its card back in
    the hand, a draw takes its card out. The opponent's stock draws, which the seat did not see,
    are given cards of the opponent's hand that the seat had not seen at the time (not taken
    from the pile and still held); there is always one, as there was in the real hand.
    """
    seat = view.seat
    opponent = 1 - seat
    history = view.history
    # The cards the opponent holds from the pile just before each of its turns.
    from_pile: list[set[Card]] = []
    held: set[Card] = set()
    for turn in history:
        from_pile.append(held)  # never changed in place: each change makes a new set
        if turn.seat == opponent:
            kind = turn.move.kind
            if kind in _FROM_PILE:
                assert turn.card is not None
                held = held | {turn.card}
            elif kind in _PUTS:
                assert turn.move.card is not None
                held = held - {turn.move.card}
    hands = {seat: set(view.cards), opponent: {*hidden.opponent_known, *opponent_hidden}}
    stock_draws: list[Card] = []
    for i in range(len(history) - 1, -1, -1):
        turn = history[i]
        cards = hands[turn.seat]
        kind = turn.move.kind
        if kind in _PUTS:
            assert turn.move.card is not None
            cards.add(turn.move.card)
        elif kind in _DRAWS:
            card = turn.card
            if card is None:  # the opponent's stock draw, unseen
                free = cards - from_pile[i]
                if not free:
                    raise ValueError("the view's moves cannot be replayed")
                card = min(free, key=_index)
            if card not in cards:
                raise ValueError("the view's moves cannot be replayed")
            cards.remove(card)
            if kind is MoveKind.STOCK:
                stock_draws.append(card)
    stock_draws.reverse()
    dealer = view.dealer
    first = 1 - dealer
    dealt = [sorted(hands[first], key=_index), sorted(hands[dealer], key=_index)]
    if len(dealt[0]) != HAND_SIZE or len(dealt[1]) != HAND_SIZE:
        raise ValueError("the view's moves cannot be replayed")
    upcard = view.upcard
    if upcard is None:
        raise ValueError("the view has no upcard")
    deck = [card for pair in zip(dealt[0], dealt[1], strict=True) for card in pair]
    deck.append(upcard)
    deck += stock_draws
    deck += stock
    if len(deck) != 52 or len(set(deck)) != 52:
        raise ValueError("the view's moves cannot be replayed")
    return deck

