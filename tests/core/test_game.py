"""Scoring above the hand: the game to the target, Hollywood's three games, three players."""

from __future__ import annotations

import pytest
from helpers import moves

from ginproto.cards import Card, parse_cards
from ginproto.game import Game, GameEnd, GamePhase, Role, Roles, draw_roles
from ginproto.hand import IllegalMoveError, Outcome
from ginproto.moves import Move
from ginproto.rules import Rules, Variant
from tests.core.test_hand import GIN_DECK, UNDERCUT_DECK

# On GIN_DECK the non-dealer wins 96 (gin against 71); on UNDERCUT_DECK the dealer wins 10.
NON_DEALER_GIN = "take, knock Kc"
DEALER_UNDERCUT = "pass, pass, stock, knock Kd"


def play(game: Game, deck: tuple[Card, ...], script: str) -> None:
    game.deal(deck)
    for move in moves(script):
        game.apply(move)


def play_drawn_hand(game: Game) -> None:
    hand = game.deal(GIN_DECK)
    game.apply(Move.pass_())
    game.apply(Move.pass_())
    while game.phase is GamePhase.PLAY:
        drawn = game.apply(Move.stock()).card
        assert drawn is not None and hand.phase.value == "discard"
        game.apply(Move.discard(drawn))


# -- 1. Dealer ---------------------------------------------------------------------------
def test_rule_1_winner_of_a_hand_deals_the_next() -> None:
    game = Game(Rules(), first_dealer=0)
    play(game, GIN_DECK, NON_DEALER_GIN)
    assert game.entries[-1].winner == 1 and game.dealer == 1
    play(game, UNDERCUT_DECK, DEALER_UNDERCUT)  # player 1 deals and wins
    assert game.entries[-1].winner == 1 and game.dealer == 1


def test_rule_1_same_dealer_after_a_drawn_hand() -> None:
    game = Game(Rules(), first_dealer=1)
    play_drawn_hand(game)
    assert game.entries[-1].result.outcome is Outcome.DRAW
    assert game.entries[-1].winner is None and game.dealer == 1
    assert game.totals == [[0, 0]]


# -- 9. Game -------------------------------------------------------------------------------
def test_rule_9_game_ends_when_a_player_reaches_the_target() -> None:
    game = Game(Rules(), first_dealer=0)
    play(game, GIN_DECK, NON_DEALER_GIN)
    assert game.totals == [[0, 96]] and not game.is_over
    play(game, UNDERCUT_DECK, DEALER_UNDERCUT)
    assert game.totals == [[0, 106]]
    assert game.is_over and game.winner == 1 and game.end is GameEnd.TARGET
    with pytest.raises(ValueError):
        game.deal(GIN_DECK)


def test_rule_9_target_is_an_option() -> None:
    game = Game(Rules(target=50), first_dealer=0)
    play(game, GIN_DECK, NON_DEALER_GIN)
    assert game.is_over and game.winner == 1


def test_rule_9_game_box_and_shutout_bonuses_are_options_off_by_default() -> None:
    for rules, expected in (
        (Rules(), (0, 106)),
        (Rules(game_bonus=100, box_bonus=25, shutout_double=True), (0, (106 + 50 + 100) * 2)),
    ):
        game = Game(rules, first_dealer=0)
        play(game, GIN_DECK, NON_DEALER_GIN)
        play(game, UNDERCUT_DECK, DEALER_UNDERCUT)
        assert game.final_scores() == expected


def test_hollywood_box_bonus_counts_only_the_hands_entered_in_each_game() -> None:
    # Player 1 wins hand 1 (96, game 1 only) and hand 2 (10, games 1 and 2): game 1 closes
    # at 106 with two hands in it, game 2 holds one hand and game 3 none.
    game = Game(Rules(variant=Variant.HOLLYWOOD, box_bonus=25), first_dealer=0)
    play(game, GIN_DECK, NON_DEALER_GIN)
    play(game, UNDERCUT_DECK, DEALER_UNDERCUT)
    assert [e.games for e in game.entries] == [(0,), (0, 1)]
    assert [col[1] for col in game.totals] == [106, 10, 0]
    assert game.final_scores(0) == (0, 106 + 2 * 25)
    assert game.final_scores(1) == (0, 10 + 25)
    assert game.final_scores(2) == (0, 0)
    assert game.hands_won(1) == 2 and game.hands_won(1, 2) == 0


def test_hand_cap_ends_a_game_of_drawn_hands() -> None:
    game = Game(Rules(hand_cap=3), first_dealer=0)
    for _ in range(3):
        play_drawn_hand(game)
    assert game.is_over and game.end is GameEnd.HAND_CAP and game.winner is None


def test_forfeit_awards_the_game_to_the_opponent() -> None:
    game = Game(Rules(), first_dealer=0)
    game.deal(GIN_DECK)
    assert game.forfeit(1) == 0
    assert game.is_over and game.end is GameEnd.FORFEIT and game.winner == 0


# -- Hollywood -----------------------------------------------------------------------------
ALEXANDRA, BOB = 0, 1


def hollywood() -> Game:
    return Game(Rules(variant=Variant.HOLLYWOOD), first_dealer=0)


def test_hollywood_seeds_example_comes_out_exactly() -> None:
    game = hollywood()
    for winner, points in ((BOB, 10), (ALEXANDRA, 18), (BOB, 30), (BOB, 4)):
        game.enter(winner, points)
    assert [col[ALEXANDRA] for col in game.totals] == [18, 0, 0]
    assert [col[BOB] for col in game.totals] == [44, 34, 4]


def test_hollywood_player_shut_out_of_game_1_starts_in_game_2() -> None:
    game = hollywood()
    assert game.enter(BOB, 60) == [0]
    assert game.enter(BOB, 45) == [0, 1]  # game 1 reaches 105 and closes
    assert game.closed == [True, False, False] and game.game_winners[0] == BOB
    assert game.enter(ALEXANDRA, 12) == [1]  # never scored in game 1: starts in game 2
    assert game.enter(BOB, 5) == [1, 2]
    assert [col[ALEXANDRA] for col in game.totals] == [0, 12, 0]
    assert [col[BOB] for col in game.totals] == [105, 50, 5]


def test_hollywood_series_ends_with_the_third_game_won_two_of_three() -> None:
    game = hollywood()
    play(game, GIN_DECK, NON_DEALER_GIN)  # player 1: 96 in game 1
    assert [col[1] for col in game.totals] == [96, 0, 0]
    for _ in range(3):
        # Player 1 deals now and wins 10 a hand by undercut: into every game it entered.
        play(game, UNDERCUT_DECK, DEALER_UNDERCUT)
    assert [col[1] for col in game.totals] == [106, 30, 20]  # game 1 closed at 106
    assert game.closed == [True, False, False] and not game.is_over
    for _ in range(8):
        play(game, UNDERCUT_DECK, DEALER_UNDERCUT)
    assert game.is_over and game.winner == 1 and game.closed == [True, True, True]
    assert game.game_winners == [1, 1, 1]


# -- Three players ----------------------------------------------------------------------------
THREE = Rules(variant=Variant.THREEHANDED)


def test_three_players_role_draw_highest_box_middle_captain_lowest_sits() -> None:
    roles, used = draw_roles(parse_cards("5c Kd 9h"))
    assert roles == Roles(box=1, captain=2, sitter=0) and used == 3


def test_three_players_ties_are_drawn_again() -> None:
    roles, used = draw_roles(parse_cards("Kc Kd 2h 3s Qc"))
    assert roles == Roles(box=1, captain=0, sitter=2) and used == 5
    roles, used = draw_roles(parse_cards("7c 7d 7h 2c 9d 5h"))
    assert roles == Roles(box=1, captain=2, sitter=0) and used == 6


def test_three_players_rotation_box_wins() -> None:
    assert Roles(0, 1, 2).after(box_won=True) == Roles(box=0, captain=2, sitter=1)


def test_three_players_rotation_box_loses() -> None:
    assert Roles(0, 1, 2).after(box_won=False) == Roles(box=1, captain=2, sitter=0)


def test_three_players_rotation_drawn_hand() -> None:
    assert Roles(0, 1, 2).after(box_won=None) == Roles(0, 1, 2)


def test_three_players_box_deals_captain_is_offered_first_sitter_sees_captain() -> None:
    game = Game(THREE, roles=Roles(box=2, captain=0, sitter=1))
    hand = game.deal(GIN_DECK)
    assert game.seats == (2, 0) and hand.dealer == 0
    assert game.to_move == 0  # the captain, the non-dealer
    assert game.view(1).hand.cards == hand.cards(1)  # the sitter sees the captain's hand
    assert game.view(1).roles is not None and game.view(1).roles.role_of(1) is Role.SITTER
    with pytest.raises(IllegalMoveError, match="sits out"):
        game.apply(Move.take(), player=1)


def test_three_players_game_rotates_and_the_sitter_never_scores() -> None:
    game = Game(THREE, roles=Roles(box=2, captain=0, sitter=1))
    play(game, UNDERCUT_DECK, DEALER_UNDERCUT)  # the box (2) wins 10
    assert game.entries[-1].winner == 2
    assert game.totals == [[0, 0, 10]]
    assert game.roles == Roles(box=2, captain=1, sitter=0)
    play(game, GIN_DECK, NON_DEALER_GIN)  # the captain (1) wins 96 for the team
    assert game.totals == [[0, 96, 10]]  # only the captain scores; the sitter (0) does not
    assert game.roles == Roles(box=1, captain=0, sitter=2)
    play_drawn_hand(game)
    assert game.roles == Roles(box=1, captain=0, sitter=2)
    play(game, UNDERCUT_DECK, DEALER_UNDERCUT)  # the box (1) wins 10 and reaches 106
    assert game.is_over and game.winner == 1 and game.totals == [[0, 106, 10]]


def test_three_players_forfeit_goes_to_the_leader_of_the_others() -> None:
    game = Game(THREE, roles=Roles(box=2, captain=0, sitter=1))
    play(game, UNDERCUT_DECK, DEALER_UNDERCUT)
    game.deal(GIN_DECK)
    assert game.forfeit(1) == 2


@pytest.mark.parametrize(("faulting", "winner"), [(0, 1), (1, 2), (2, 0)])
def test_three_players_forfeit_on_a_tie_goes_to_the_next_seat_after_the_faulting_player(
    faulting: int, winner: int
) -> None:
    game = Game(THREE, roles=Roles(box=2, captain=0, sitter=1))
    game.deal(GIN_DECK)
    assert game.forfeit(faulting) == winner and game.winner == winner


def test_three_player_deck_still_deals_only_two_hands() -> None:
    game = Game(THREE, roles=Roles(box=0, captain=1, sitter=2))
    hand = game.deal(GIN_DECK)
    assert len(hand.cards(0)) == len(hand.cards(1)) == 10 and hand.stock_count == 31
