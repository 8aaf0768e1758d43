"""The camper engine (engines/camper_engine.py): it knocks only in its first three turns unless
it has gin, keeps its hand low, takes the pile only into a meld, and plays every variant."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import first_view, make_deck, moves

from engines.camper_engine import CamperEngine, turn
from engines.simple_engine import SimpleEngine
from ginproto.game import GameView
from ginproto.hand import Hand
from ginproto.moves import Move
from ginproto.rules import Rules, Variant
from ginproto.table import play_game

# The non-dealer (seat 1, the dealer is seat 0) holds three melds and the king of diamonds.
MELDED = "As 2s 3s 4h 5h 6h 7c 8c 9c Kd"
DEALER = "Ah 2h 3h 7d 8d 9d Jc Qc Kc Jh"
JUNK = "Qs Js Ts Tc Th 5d 9s 8s 9h 6d"  # drawn and thrown by both seats, a card a turn


def position(stock: str, rounds: int, hand: str = MELDED, upcard: str = "Qh") -> GameView:
    """The non-dealer's view at its discard in its turn ``rounds + 1``: both seats passed the
    upcard, and in each earlier round each drew the stock's top card and threw it."""
    junk = JUNK.split()[: 2 * rounds]
    deck = make_deck(hand, DEALER, upcard, " ".join([*junk, *stock.split()]))
    table = Hand(Rules(), deck, 0)
    played = ["pass", "pass"]
    for card in junk:
        played += ["stock", f"discard {card}"]
    for move in [*moves(", ".join(played)), Move.stock()]:
        table.apply(move)
    view = table.view(table.to_move)
    assert view.seat == 1 and turn(view) == rounds + 1
    return dataclasses.replace(first_view(), player=1, hand=view)


@pytest.mark.parametrize("rounds", [0, 1, 2])
def test_in_its_first_three_turns_it_knocks_as_soon_as_it_can(rounds: int) -> None:
    view = position("2d", rounds)  # keeping 2d and the melds: deadwood 2
    assert CamperEngine().discard(view) == Move.from_str("knock Kd")


@pytest.mark.parametrize("rounds", [3, 4, 5])
def test_later_it_plays_on_for_gin_with_a_low_hand(rounds: int) -> None:
    view = position("2d", rounds)
    camper = CamperEngine().discard(view)
    assert camper == Move.from_str("discard Kd")  # the least deadwood left, and no knock
    assert SimpleEngine().discard(view) == Move.from_str("knock Kd")  # simple would knock


def test_later_it_still_knocks_with_gin() -> None:
    view = position("4s", 3)  # 4s extends the spade run: gin after throwing the king
    assert CamperEngine().discard(view) == Move.from_str("knock Kd")


def test_it_takes_the_upcard_only_into_a_meld() -> None:
    deck = make_deck(MELDED, DEALER, "Tc")  # Tc extends 7c-8c-9c
    table = Hand(Rules(), deck, 0)
    melding = dataclasses.replace(first_view(), player=1, hand=table.view(1))
    assert CamperEngine().offer(melding) == Move.take()
    deck = make_deck(MELDED, DEALER, "Ad")  # a low card, but it melds with nothing
    table = Hand(Rules(), deck, 0)
    lone = dataclasses.replace(first_view(), player=1, hand=table.view(1))
    assert CamperEngine().offer(lone) == Move.pass_()


def dealer_at_its_draw(thrown: str) -> GameView:
    """The dealer's view at its first draw, after the non-dealer drew ``thrown`` from the
    stock and threw it."""
    deck = make_deck(MELDED, DEALER, "Qh", f"{thrown} 2c")
    table = Hand(Rules(), deck, 0)
    for move in moves(f"pass, pass, stock, discard {thrown}"):
        table.apply(move)
    return dataclasses.replace(first_view(), player=0, hand=table.view(0))


def test_it_draws_the_pile_only_into_a_meld() -> None:
    assert CamperEngine().draw(dealer_at_its_draw("Tc")) == Move.pile()  # Tc-Jc-Qc-Kc
    assert CamperEngine().draw(dealer_at_its_draw("Th")) == Move.stock()  # Th-Jh: no meld
    assert CamperEngine().draw(dealer_at_its_draw("Ad")) == Move.stock()  # low, unmelded


@pytest.mark.parametrize(
    "rules",
    [
        Rules(target=60),
        Rules(variant=Variant.OKLAHOMA, target=60),
        Rules(variant=Variant.HOLLYWOOD, target=40),
        Rules(variant=Variant.THREEHANDED, target=40),
    ],
    ids=str,
)
def test_it_plays_every_variant_without_a_fault(rules: Rules) -> None:
    for key in range(3):
        seats = range(rules.players)  # the camper in each seat in turn (every role of three)
        players = [CamperEngine() if p == key % rules.players else SimpleEngine() for p in seats]
        log = play_game(rules, players, "camper", key)
        assert log.fault is None and log.game.is_over
