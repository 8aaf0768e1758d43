"""One hand of the base game: every numbered point of RULES.md "One hand", one test or more.

Seat 0 deals in these tests, so seat 1 is the non-dealer and is offered the upcard first.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from helpers import make_deck, moves

from ginproto.cards import Card, parse_cards, shuffled_deck
from ginproto.hand import Hand, IllegalMoveError, Outcome, Phase, replay_hand
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant

STANDARD = Rules()

# Non-dealer: runs As-4s and 5h-7h, deadwood 9c 2d 3d.
# Dealer: 8c-8d-8h and 4c-6c, deadwood 5s Ks Qs Jd.
KNOCK_DECK = make_deck(
    "As 2s 3s 4s 5h 6h 7h 9c 2d 3d", "8h 5s 8c 8d Ks Qs 4c 5c 6c Jd", "Kc", stock="Ah 7c"
)
# Non-dealer: As-3s, 5h-7h, 9c-9d-9s, deadwood 5c. Dealer: Q-Q-Q, J-J-J, T-T-T, and 5d.
UNDERCUT_DECK = make_deck(
    "As 2s 3s 5h 6h 7h 9c 9d 9s 5c", "Qc Qd Qh Js Jd Jh Tc Th Ts 5d", "2c", stock="Kd"
)
# Non-dealer: As-4s, 5h-7h, 9c 9d Kc; the upcard 9h makes the set, so take + knock Kc is gin.
GIN_DECK = make_deck(
    "As 2s 3s 4s 5h 6h 7h 9c 9d Kc", "Kh Qh Jd Td 8c 7c 6d 5d 2h 3c", "9h", stock="Qs"
)


def hand(deck: tuple[Card, ...] = KNOCK_DECK, rules: Rules = STANDARD) -> Hand:
    return Hand(rules, deck, dealer=0)


# -- 1. Dealer (the rotation lives in test_game.py) ----------------------------------------
def test_rule_1_non_dealer_moves_first() -> None:
    assert hand().to_move == 1
    assert Hand(STANDARD, KNOCK_DECK, dealer=1).to_move == 0


# -- 2. Deal -------------------------------------------------------------------------------
def test_rule_2_deal_ten_each_upcard_and_31_in_stock() -> None:
    h = hand()
    assert h.cards(1) == tuple(sorted(parse_cards("As 2s 3s 4s 5h 6h 7h 9c 2d 3d")))
    assert len(h.cards(0)) == 10
    assert h.pile == (Card.from_str("Kc"),)
    assert h.stock_count == 31
    assert h.phase is Phase.OFFER


def test_rule_2_deck_must_be_a_full_deck() -> None:
    with pytest.raises(ValueError):
        Hand(STANDARD, KNOCK_DECK[:51], dealer=0)


# -- 3. First turn -------------------------------------------------------------------------
def test_rule_3_non_dealer_passes_then_dealer_is_offered() -> None:
    h = hand()
    h.apply(Move.pass_())
    assert h.to_move == 0 and h.phase is Phase.OFFER
    assert h.legal_moves() == [Move.take(), Move.pass_()]


def test_rule_3_dealer_takes_after_pass_then_non_dealer_has_a_normal_turn() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, take, discard Ks"))
    assert h.to_move == 1 and h.phase is Phase.DRAW
    assert set(h.legal_moves()) == {Move.stock(), Move.pile()}
    assert Card.from_str("Kc") in h.cards(0)


def test_rule_3_non_dealer_takes_then_dealer_has_a_normal_turn() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("take, discard 9c"))
    assert h.to_move == 0 and h.phase is Phase.DRAW
    assert set(h.legal_moves()) == {Move.stock(), Move.pile()}


def test_rule_3_both_pass_non_dealer_must_draw_from_stock() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass"))
    assert h.to_move == 1 and h.phase is Phase.DRAW
    assert h.legal_moves() == [Move.stock()]
    with pytest.raises(IllegalMoveError, match="first draw is from the stock"):
        h.apply(Move.pile())
    h.apply(Move.stock())
    assert Card.from_str("Ah") in h.cards(1)


def test_rule_3_offer_accepts_only_take_or_pass() -> None:
    with pytest.raises(IllegalMoveError, match="take or pass"):
        hand().apply(Move.stock())


# -- 4. Normal turn ------------------------------------------------------------------------
def test_rule_4_draw_then_discard() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock"))
    assert h.phase is Phase.DISCARD and len(h.cards(1)) == 11
    with pytest.raises(IllegalMoveError, match="discard or knock"):
        h.apply(Move.stock())
    h.apply(Move.discard(Card.from_str("9c")))
    assert h.pile[-1] == Card.from_str("9c") and h.to_move == 0 and h.phase is Phase.DRAW


def test_rule_4_card_taken_from_pile_cannot_be_discarded_same_turn() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("take"))
    assert Move.discard(Card.from_str("Kc")) not in h.legal_moves()
    with pytest.raises(IllegalMoveError, match="just taken"):
        h.apply(Move.discard(Card.from_str("Kc")))
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock, discard 9c, pile"))
    with pytest.raises(IllegalMoveError, match="just taken"):
        h.apply(Move.discard(Card.from_str("9c")))


def test_rule_4_option_allows_discarding_the_taken_card() -> None:
    rules = Rules(discard_taken=True)
    h = replay_hand(rules, KNOCK_DECK, 0, moves("take, discard Kc"))
    assert h.pile == (Card.from_str("Kc"),)


# -- 5. Knocking ---------------------------------------------------------------------------
def test_rule_5_knock_allowed_under_the_limit() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock"))
    assert Move.knock(Card.from_str("9c")) in h.legal_moves()
    # Discarding 3d leaves 9 + 2 + 1 = 12: above the limit.
    assert Move.knock(Card.from_str("3d")) not in h.legal_moves()
    with pytest.raises(IllegalMoveError, match="above the knock limit 10"):
        h.apply(Move.knock(Card.from_str("3d")))


def test_rule_5_knocking_is_never_compulsory() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock, discard 9c"))
    assert h.phase is Phase.DRAW and h.result is None


def test_rule_5_knock_on_the_first_turn_and_gin() -> None:
    h = replay_hand(STANDARD, GIN_DECK, 0, moves("take, knock Kc"))
    assert h.result is not None and h.result.outcome is Outcome.GIN
    assert h.result.knocker == 1 and h.result.knocker_deadwood == ()


def test_rule_5_declared_melds_are_checked() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock"))
    with pytest.raises(IllegalMoveError, match="bad declared melds"):
        h.apply(Move.from_str("knock 9c As-2s-3s-4s 5h-6h-7h-8h"))
    # A legal but worse declaration: As-2s-3s only, so 4s joins the deadwood: 6 + 4 = 10.
    h.apply(Move.from_str("knock 9c As-2s-3s 5h-6h-7h"))
    assert h.result is not None
    assert h.result.knocker_deadwood_value == 10


def test_rule_5_big_gin_is_off_by_default_and_an_option() -> None:
    deck = make_deck(
        "As 2s 3s 4s 5h 6h 7h 9c 9d 9s", "Kh Qh Jd Td 8c 7c 6d 5d 2h 3c", "Kc", stock="8h"
    )
    h = replay_hand(STANDARD, deck, 0, moves("pass, pass, stock"))
    assert all(m.kind is not MoveKind.BIG_GIN for m in h.legal_moves())
    with pytest.raises(IllegalMoveError, match="not allowed"):
        h.apply(Move.big_gin())
    rules = Rules(big_gin=True)
    h = replay_hand(rules, deck, 0, moves("pass, pass, stock"))
    assert Move.big_gin() in h.legal_moves()
    h.apply(Move.big_gin())
    assert h.result is not None and h.result.outcome is Outcome.BIG_GIN
    # Dealer melds nothing: 10+10+10+10+8+7+6+5+2+3 = 71, plus the big gin bonus 31.
    assert h.result.points == 71 + 31


# -- 6. Showdown ---------------------------------------------------------------------------
def test_rule_6_defender_lays_off_and_keeps_own_melds() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock, knock 9c"))
    r = h.result
    assert r is not None and r.outcome is Outcome.KNOCK and r.winner == 1
    assert {str(m) for m in r.knocker_melds} == {"As-2s-3s-4s", "5h-6h-7h"}
    assert r.knocker_deadwood_value == 6  # 2d 3d Ah
    assert r.defender is not None
    laid = {str(lo.card) for lo in r.defender.layoffs}
    assert "5s" in laid  # 5s goes onto As-2s-3s-4s
    # Defender keeps 8c-8d-8h and 4c-5c-6c; Ks Qs Jd stay: 30.
    assert r.defender.deadwood == 30
    assert r.points == 30 - 6


def test_rule_6_no_layoffs_against_gin() -> None:
    deck = make_deck(
        "As 2s 3s 4s 5h 6h 7h 9c 9d Kc", "5s 8h Jd Td 8c 7c 6d Qd 2h 3c", "9h", stock="Qs"
    )
    h = replay_hand(STANDARD, deck, 0, moves("take, knock Kc"))
    r = h.result
    assert r is not None and r.outcome is Outcome.GIN and r.defender is not None
    assert r.defender.layoffs == ()
    # 5s and 8h would fit the knocker's runs, but nothing is laid off against gin.
    assert r.points == r.defender.deadwood + 25


def test_rule_6_knocker_never_lays_off() -> None:
    r = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock, knock 9c")).result
    assert r is not None
    assert r.defender is not None and r.defender.layoffs
    # Only the defender's cards are laid off; the knocker's deadwood stays as it was.
    assert all(lo.card in r.hands[0] for lo in r.defender.layoffs)
    assert {str(c) for c in r.knocker_deadwood} == {"2d", "3d", "Ah"}


# -- 7. Score of the hand ------------------------------------------------------------------
def test_rule_7_gin_scores_defender_deadwood_plus_25() -> None:
    r = replay_hand(STANDARD, GIN_DECK, 0, moves("take, knock Kc")).result
    assert r is not None and r.winner == 1
    assert r.points == 71 + 25  # the dealer melds nothing: 10*4 + 8+7+6+5+2+3


def test_rule_7_gin_bonus_is_an_option() -> None:
    r = replay_hand(Rules(gin_bonus=20), GIN_DECK, 0, moves("take, knock Kc")).result
    assert r is not None and r.points == 71 + 20


def test_rule_7_knocker_with_less_scores_the_difference() -> None:
    r = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock, knock 9c")).result
    assert r is not None and (r.winner, r.points) == (1, 24)


def test_rule_7_equal_count_is_an_undercut_worth_10_plus_0() -> None:
    r = replay_hand(STANDARD, UNDERCUT_DECK, 0, moves("pass, pass, stock, knock Kd")).result
    assert r is not None and r.outcome is Outcome.UNDERCUT
    assert r.knocker_deadwood_value == 5 and r.defender_deadwood_value == 5
    assert (r.winner, r.points) == (0, 10)


def test_rule_7_undercut_scores_difference_plus_bonus() -> None:
    deck = make_deck(
        "As 2s 3s 5h 6h 7h 9c 9d 9s 5c", "Qc Qd Qh Js Jd Jh Tc Th Ts 3d", "2c", stock="Kd"
    )
    r = replay_hand(STANDARD, deck, 0, moves("pass, pass, stock, knock Kd")).result
    assert r is not None and (r.outcome, r.winner, r.points) == (Outcome.UNDERCUT, 0, 5 - 3 + 10)
    r = replay_hand(Rules(undercut_bonus=14), deck, 0, moves("pass, pass, stock, knock Kd")).result
    assert r is not None and r.points == 5 - 3 + 14


def test_rule_7_gin_against_zero_deadwood_still_scores_only_the_bonus() -> None:
    deck = make_deck("As 2s 3s 4s 5h 6h 7h 9c 9d Kc", "Qc Qd Qh Js Jd Jh Tc Th Ts 2c", "9h")
    r = replay_hand(STANDARD, deck, 0, moves("take, knock Kc")).result
    assert r is not None and r.outcome is Outcome.GIN
    assert r.defender_deadwood_value == 2 and r.points == 27
    deck = make_deck(
        "As 2s 3s 4s 5h 6h 7h 9c 9d Kc", "Qc Qd Qh Js Jd Jh Tc Th Ts Td", "9h"
    )
    r = replay_hand(STANDARD, deck, 0, moves("take, knock Kc")).result
    assert r is not None and r.defender_deadwood_value == 0
    assert (r.winner, r.points) == (1, 25)


# -- 8. Drawn hand -------------------------------------------------------------------------
def _play_out_the_stock(h: Hand, stop_at: int = 2) -> None:
    """Both players draw from the stock and throw back what they drew."""
    h.apply(Move.pass_())
    h.apply(Move.pass_())
    while h.stock_count > stop_at and not h.is_over:
        drawn = h.apply(Move.stock()).card
        assert drawn is not None
        if h.stock_count == stop_at:
            return
        h.apply(Move.discard(drawn))


def test_rule_8_hand_is_drawn_when_a_discard_leaves_two_in_stock() -> None:
    h = hand()
    _play_out_the_stock(h)
    assert h.stock_count == 2 and h.phase is Phase.DISCARD
    h.apply(Move.discard(h.history[-1].card))  # type: ignore[arg-type]
    assert h.result is not None and h.result.outcome is Outcome.DRAW
    assert h.result.winner is None and h.result.points == 0 and not h.result.capped


def test_rule_8_a_knock_is_still_allowed_on_the_last_turn() -> None:
    # Arrange the 29th stock card (the last one a player may draw) to complete a knock.
    base = make_deck("As 2s 3s 4s 5h 6h 7h 9c 2d 3d", "8h 5s 8c 8d Ks Qs 4c 5c 6c Jd", "Kc")
    stock = [c for c in base[21:] if c != Card.from_str("Ah")]
    stock.insert(28, Card.from_str("Ah"))
    deck = base[:21] + tuple(stock)
    h = Hand(STANDARD, deck, dealer=0)
    _play_out_the_stock(h)
    assert h.to_move == 1 and h.history[-1].card == Card.from_str("Ah")
    h.apply(Move.knock(Card.from_str("9c")))
    assert h.result is not None and h.result.outcome is Outcome.KNOCK


def test_rule_8_turn_cap_draws_a_hand_that_only_trades_the_pile() -> None:
    rules = Rules(turn_cap=6)
    h = Hand(rules, KNOCK_DECK, dealer=0)
    h.apply(Move.take())
    h.apply(Move.discard(Card.from_str("9c")))
    for _ in range(5):
        taken = h.pile[-1]
        assert h.apply(Move.pile()).card == taken
        if h.is_over:
            break
        mine = [c for c in h.cards(h.to_move) if c != taken]
        h.apply(Move.discard(mine[0]))
    assert h.result is not None and h.result.outcome is Outcome.DRAW and h.result.capped
    assert h.stock_count == 31 and h.turns == 6


# -- Things the referee must never allow -----------------------------------------------------
def test_out_of_turn_is_illegal() -> None:
    with pytest.raises(IllegalMoveError, match="out of turn"):
        hand().apply(Move.pass_(), seat=0)


def test_card_not_held_is_illegal_and_state_unchanged() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock"))
    before = (h.cards(0), h.cards(1), h.pile, h.phase, h.to_move)
    with pytest.raises(IllegalMoveError, match="not in the player's hand"):
        h.apply(Move.discard(Card.from_str("Kh")))
    assert (h.cards(0), h.cards(1), h.pile, h.phase, h.to_move) == before


def test_no_move_after_the_hand_is_over() -> None:
    h = replay_hand(STANDARD, GIN_DECK, 0, moves("take, knock Kc"))
    assert h.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="over"):
        h.apply(Move.stock())


# -- Views -----------------------------------------------------------------------------------
def test_view_hides_opponent_cards_and_stock_draws() -> None:
    h = replay_hand(STANDARD, KNOCK_DECK, 0, moves("pass, pass, stock, discard 9c, stock"))
    v1 = h.view(1)
    assert set(v1.cards).isdisjoint(h.cards(0))
    assert v1.history[2].card == Card.from_str("Ah")  # its own stock draw, with the card
    assert v1.history[4].card is None  # the dealer's stock draw, without it
    v0 = h.view(0)
    assert v0.history[2].card is None and v0.history[4].card is not None
    assert v0.legal_moves() == h.legal_moves() and v1.legal_moves() == []


def test_view_legal_moves_match_the_hand_in_every_phase() -> None:
    h = hand()
    for m in moves("pass, pass, stock, discard 9c, stock"):
        assert h.view(h.to_move).legal_moves() == h.legal_moves()
        h.apply(m)
    assert h.view(h.to_move).legal_moves() == h.legal_moves()



def test_is_legal_answers_as_legal_moves_for_every_move_on_random_play() -> None:
    """One move asked at a time (``is_legal``, which play-outs use) gives the answers of the
    whole list, knocks included, and checking a knock before listing changes nothing."""
    every = [
        Move.take(), Move.pass_(), Move.stock(), Move.pile(), Move.big_gin(),
        *(Move.discard(c) for c in shuffled_deck(0, 0, 0)),
        *(Move.knock(c) for c in shuffled_deck(0, 0, 0)),
    ]
    rng = random.Random(7)
    for n, rules in enumerate((STANDARD, Rules(variant=Variant.OKLAHOMA), Rules(big_gin=True))):
        for game in range(12):
            h = Hand(rules, shuffled_deck(n, game, 1), game % 2)
            while not h.is_over:
                asked = {m for m in every if h.is_legal(m)}
                legal = h.legal_moves()
                assert asked == set(legal)
                h.apply(rng.choice(legal))

# -- Oklahoma --------------------------------------------------------------------------------
OKLAHOMA = Rules(variant=Variant.OKLAHOMA)


@pytest.mark.parametrize(
    ("upcard", "limit"), [("Kc", 10), ("Tc", 10), ("6d", 6), ("2h", 2), ("Ac", 1)]
)
def test_oklahoma_knock_limit_is_the_upcard_value(upcard: str, limit: int) -> None:
    deck = make_deck("As 2s 3s 4s 5h 6h 7h 9c 2d 3d", "8h 5s 8c 8d Ks Qs 4c 5c 6c Jd", upcard)
    assert Hand(OKLAHOMA, deck, 0).knock_limit == limit
    assert Hand(STANDARD, deck, 0).knock_limit == 10


def test_oklahoma_ace_upcard_option_means_gin_only() -> None:
    deck = make_deck("As 2s 3s 4s 5h 6h 7h 9c 2d 3d", "8h 5s 8c 8d Ks Qs 4c 5c 6c Jd", "Ac")
    assert Hand(dataclasses.replace(OKLAHOMA, oklahoma_ace_limit=0), deck, 0).knock_limit == 0


def test_oklahoma_knock_above_upcard_limit_is_illegal() -> None:
    deck = make_deck(
        "As 2s 3s 4s 5h 6h 7h 9c 2d 3d", "8h 5s 8c 8d Ks Qs 4c 5c 6c Jd", "5d", stock="Ah"
    )
    h = replay_hand(OKLAHOMA, deck, 0, moves("pass, pass, stock"))
    assert h.knock_limit == 5
    with pytest.raises(IllegalMoveError, match="above the knock limit 5"):
        h.apply(Move.knock(Card.from_str("9c")))  # deadwood 6


def test_oklahoma_regression_take_seven_and_knock_with_nine_discarded() -> None:
    # A well-known library misses this knock: 7s-8s-9s, 7d-8d-9d, Ac-2c-3c, deadwood 7h = 7.
    deck = make_deck("7s 8s 9s 7d 8d 9d 9h Ac 2c 3c", "Kh Qh Jd Td 6c 5c 6d 5d 2h 4h", "7h")
    h = replay_hand(OKLAHOMA, deck, 0, moves("take"))
    assert h.knock_limit == 7
    assert Move.knock(Card.from_str("9h")) in h.legal_moves()
    h.apply(Move.knock(Card.from_str("9h")))
    assert h.result is not None and h.result.knocker_deadwood_value == 7


def test_oklahoma_spade_upcard_doubles_when_the_option_is_on() -> None:
    deck = make_deck(
        "As 2s 3s 4s 5h 6h 7h 9c 9d Kc", "Kh Qh Jd Td 8c 7c 6d 5d 2h 3c", "9s", stock="Qs"
    )
    plain = replay_hand(OKLAHOMA, deck, 0, moves("take, knock Kc")).result
    doubled = replay_hand(
        dataclasses.replace(OKLAHOMA, spade_double=True), deck, 0, moves("take, knock Kc")
    ).result
    assert plain is not None and doubled is not None
    assert plain.points == 71 + 25 and doubled.points == 2 * (71 + 25)
    assert doubled.multiplier == 2


@pytest.mark.parametrize("variant", list(Variant))
def test_every_view_names_the_first_upcard_taken_or_not(variant: Variant) -> None:
    """``HandView.upcard`` is the card turned up after the deal, whether it was taken, passed
    and buried under later discards, or is still on the pile, for every seat at every turn."""
    rules = Rules(variant=variant)
    rng = random.Random(5)
    taken = passed = 0
    for key in range(60):
        h = Hand(rules, shuffled_deck("upcard", key, 1), dealer=key % 2)
        while not h.is_over:
            for seat in (0, 1):
                assert h.view(seat).upcard == h.upcard
            legal = h.legal_moves()
            plain = [m for m in legal if m.kind not in (MoveKind.KNOCK, MoveKind.BIG_GIN)]
            h.apply(rng.choice(plain or legal))
        first = h.history[0].move.kind
        taken += first is MoveKind.TAKE
        passed += first is MoveKind.PASS
    assert taken and passed
