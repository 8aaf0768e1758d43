"""The expert in two positions a player meets: a card the opponent took and later threw back
is no longer thought to be in its hand, and a hand that melds all eleven cards goes big gin
when the rules have it (worth more than gin)."""

from __future__ import annotations

import random

from helpers import make_deck

from engines.expert.knowledge import Knowledge
from engines.expert_engine import ExpertEngine
from ginproto.cards import Card
from ginproto.hand import Hand
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules
from ginproto.table import Decision
from tests.engines.test_expert import _hand, _view


def test_a_card_the_opponent_took_and_threw_back_is_on_the_pile_not_in_its_hand() -> None:
    # Seat 1 takes the upcard 9s and throws Ks; seat 0 draws and throws Kh; seat 1 draws Kd
    # and throws the 9s back. Seat 0 sees the 9s on the pile.
    hand = _hand("take", "discard Ks", "stock", "discard Kh", "stock", "discard 9s")
    view = hand.view(0)
    nine = Card.from_str("9s")
    assert view.pile[-1] == nine
    knowledge = Knowledge.of(view)
    assert knowledge.taken == (nine,)
    assert nine not in knowledge.opponent_known
    assert knowledge.probability(nine) == 0.0
    rng = random.Random(5)
    for _ in range(50):
        sample = knowledge.sample(rng)
        assert len(sample) == 10 == len(set(sample))
        assert not set(sample) & set(view.pile), sample  # never a card on the pile
        assert not set(sample) & set(view.cards)


def test_the_expert_goes_big_gin() -> None:
    """Seat 0 draws the Th to 7h 8h 9h Jh: all eleven cards meld. Knocking with gin would
    throw the big gin bonus away."""
    deck = make_deck(
        "Ac 2c 3c 4d 5d 6d 7h 8h 9h Jh", "2h 3h 4h 5s 6s 7s 9c Tc Jc Qd", "Kd", "Th"
    )
    hand = Hand(Rules(big_gin=True), deck, dealer=1)
    for move in ("pass", "pass", "stock"):
        hand.apply(Move.from_str(move))
    assert any(m.kind is MoveKind.BIG_GIN for m in hand.legal_moves())
    move = ExpertEngine().decide(_view(hand, 0), Decision.DISCARD)
    assert move == Move.big_gin()
