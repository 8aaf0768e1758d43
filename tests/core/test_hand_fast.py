"""The hand's fast paths against a plain reference, on whole playouts under several rules.

``Hand`` keeps each seat's cards as a bit mask, caches the legal moves and the knock evaluation
of the current state, and checks the common moves in ``apply`` without calling ``check``. The
reference below is the plain statement of the legal moves (every card a discard, a knock where
the naive solver's deadwood allows it, big gin when all 11 cards meld), and every state of many
playouts is compared with it: the list and its order, the seat's view, and, for every move that
could be typed, whether ``check`` and ``apply`` accept it.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import naive_solver as naive
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ginproto.cards import DECK, Card, CardError, cards_from_strs, shuffled_deck
from ginproto.game import Game, GameView
from ginproto.hand import Hand, HandView, IllegalMoveError, Phase
from ginproto.melds import discard_deadwoods
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant

RULES = [
    Rules(),
    Rules(variant=Variant.OKLAHOMA),
    Rules(variant=Variant.OKLAHOMA, oklahoma_ace_limit=0),
    Rules(big_gin=True, discard_taken=True),
    Rules(knock_limit=0),
    Rules(turn_cap=6),
]


def reference_legal_moves(hand: Hand) -> list[Move]:
    """The legal moves of the player to move, stated plainly (the order is part of the API:
    discards by card, knocks by card, then big gin)."""
    if hand.phase is Phase.OVER:
        return []
    if hand.phase is Phase.OFFER:
        return [Move.take(), Move.pass_()]
    history = hand.history
    if hand.phase is Phase.DRAW:
        stock_only = len(history) == 2 and history[1].move.kind is MoveKind.PASS
        return [Move.stock()] if stock_only else [Move.stock(), Move.pile()]
    cards = sorted(hand.cards(hand.to_move))
    last = history[-1]
    taken = last.card if last.move.kind in (MoveKind.TAKE, MoveKind.PILE) else None
    forbidden = None if hand.rules.discard_taken else taken
    moves = [Move.discard(c) for c in cards if c != forbidden]
    left = naive.discard_deadwoods(cards)  # the deadwood of the cards without each one
    for c in cards:
        if c != forbidden and left[c] <= hand.knock_limit:
            moves.append(Move.knock(c))
    if hand.rules.big_gin and len(cards) == 11 and naive.deadwood(cards) == 0:
        moves.append(Move.big_gin())
    return moves


def candidate_moves() -> list[Move]:
    """Every move without declared melds that a player could type."""
    moves = [Move.take(), Move.pass_(), Move.stock(), Move.pile(), Move.big_gin()]
    moves += [Move.discard(c) for c in DECK] + [Move.knock(c) for c in DECK]
    return moves


CANDIDATES = candidate_moves()


def refused(action: Callable[[Move], object], move: Move) -> bool:
    """Whether ``action(move)`` raises ``IllegalMoveError`` (any other error propagates)."""
    try:
        action(move)
    except IllegalMoveError:
        return True
    return False


def choose(hand: Hand, legal: list[Move], rng: random.Random) -> Move:
    """Mostly the discard that leaves the least deadwood (so knocks come up), else random."""
    knocks = [m for m in legal if m.kind in (MoveKind.KNOCK, MoveKind.BIG_GIN)]
    if knocks and rng.random() < 0.5:
        return rng.choice(knocks)
    if hand.phase is Phase.DISCARD and rng.random() < 0.7:
        left = discard_deadwoods(hand.cards(hand.to_move))
        discards = [m for m in legal if m.kind is MoveKind.DISCARD and m.card is not None]
        return min(discards, key=lambda m: left[m.card] if m.card is not None else 0)
    return rng.choice(legal)


def play_and_compare(rules: Rules, seed: int) -> int:
    """Play one hand, comparing every state with the reference; returns the knocks seen."""
    rng = random.Random(seed)
    hand = Hand(rules, shuffled_deck("fast", seed), seed % 2)
    knocks = 0
    while True:
        expected = reference_legal_moves(hand)
        assert hand.legal_moves() == expected
        assert hand.legal_moves() == expected  # the cached answer is the same
        view = hand.view(hand.to_move)
        assert view.legal_moves() == expected
        assert view.cards == tuple(sorted(view.cards)) == hand.cards(hand.to_move)
        if hand.is_over:
            return knocks
        knocks += any(m.kind is MoveKind.KNOCK for m in expected)
        legal = set(expected)
        for move in CANDIDATES:
            if move in legal:
                hand.check(move)
            else:
                assert refused(hand.check, move), move
        for move in rng.sample([m for m in CANDIDATES if m not in legal], 3):
            assert refused(hand.apply, move), move
            assert hand.legal_moves() == expected  # a refused move changes nothing
        hand.apply(choose(hand, expected, rng))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(RULES), st.integers(0, 10**6))
def test_legal_moves_and_checks_equal_the_reference(rules: Rules, seed: int) -> None:
    play_and_compare(rules, seed)


def test_the_playouts_reach_knocks_and_big_gin() -> None:
    """The comparison above is only worth something if knock states occur: they do."""
    knocks = sum(play_and_compare(Rules(big_gin=True), seed) for seed in range(6))
    assert knocks > 0


def test_a_card_not_interned_is_still_judged_by_value() -> None:
    hand = Hand(Rules(), shuffled_deck("fast", 1), 0)
    hand.apply(Move.take())
    taken = hand.history[-1].card
    assert taken is not None
    twin = Card(taken.suit, taken.rank)
    assert twin is not taken
    with pytest.raises(IllegalMoveError, match="just taken"):
        hand.apply(Move(MoveKind.DISCARD, twin))
    other = next(c for c in hand.cards(hand.to_move) if c != taken)
    hand.apply(Move(MoveKind.DISCARD, Card(other.suit, other.rank)))
    assert other in hand.pile


def test_views_built_fast_are_the_same_frozen_values() -> None:
    """``Hand.view`` and ``Game.view`` skip the dataclass ``__init__``: the values must still
    equal, hash and print as views built field by field, and stay frozen."""
    game = Game(Rules())
    game.deal(shuffled_deck("views", 0))
    view = game.view(0)
    fields = dataclasses.fields(HandView)
    slow_hand = HandView(**{f.name: getattr(view.hand, f.name) for f in fields})
    slow = GameView(**{f.name: getattr(view, f.name) for f in dataclasses.fields(GameView)})
    assert view.hand == slow_hand and hash(view.hand) == hash(slow_hand)
    assert view == slow and hash(view) == hash(slow) and repr(view) == repr(slow)
    assert view.hand.legal_moves() == slow_hand.legal_moves()
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.hand.stock = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.player = 1  # type: ignore[misc]
    assert dataclasses.replace(view, player=1).player == 1


def test_cards_from_strs_is_card_from_str_of_each() -> None:
    texts = ["As", "th", "10d", "Kc"]
    assert cards_from_strs(texts) == tuple(Card.from_str(t) for t in texts)
    assert cards_from_strs(iter(texts)) == cards_from_strs(texts)
    with pytest.raises(CardError, match="'Xs'"):
        cards_from_strs(["As", "Xs"])
