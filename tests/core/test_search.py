"""What a search relies on (ginproto.search): a clone plays on without touching the original, a
determinized hand looks to its seat exactly as the real one did, and one scoring of a showdown
serves the hand and any caller, in every variant."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest
from helpers import RULE_SETS, RandomPlayer, thorough
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ginproto.cards import Card, shuffled_deck
from ginproto.game import Entry, Game, GameView, draw_roles
from ginproto.hand import Hand, HandView, Outcome, replay_hand
from ginproto.melds import Arrangement, cards_mask
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.search import (
    DRAW_STOCK,
    Determinizer,
    Hidden,
    determinize,
    drawn_after_discard,
    hidden_places,
    score_showdown,
)
from ginproto.table import Decision, Fault, play_game

VARIANTS = [*RULE_SETS, Rules(variant=Variant.STANDARD, turn_cap=12)]

EXAMPLES = thorough(60, 20)
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def pick(rng: random.Random, legal: Sequence[Move], knock_bias: float = 0.5) -> Move:
    """A random legal move; a knock, when there is one, with probability ``knock_bias``."""
    knocks = [m for m in legal if m.kind in (MoveKind.KNOCK, MoveKind.BIG_GIN)]
    if knocks and rng.random() < knock_bias:
        return rng.choice(knocks)
    return rng.choice(legal)


def new_game(rules: Rules, seed: int) -> Game:
    roles = draw_roles(shuffled_deck(seed, "roles"))[0] if rules.players == 3 else None
    game = Game(rules, seed % 2, roles)
    game.deal(shuffled_deck(seed, 1))
    return game


def position(rules: Rules, seed: int, moves: int) -> Game:
    """A game whose first hand has had up to ``moves`` random moves and is still in progress."""
    rng = random.Random(seed)
    game = new_game(rules, seed)
    hand = game.hand
    assert hand is not None
    for _ in range(moves):
        move = pick(rng, hand.legal_moves(), knock_bias=0.1)
        probe = hand.clone()
        probe.apply(move)
        if probe.is_over:
            break
        game.apply(move)
    return game


def snapshot(game: Game) -> object:
    """Everything observable about a game and its hand, as plain values."""
    hand = game.hand
    hand_state = None
    if hand is not None:
        hand_state = (
            hand.cards(0),
            hand.cards(1),
            hand.pile,
            tuple(hand._stock),
            hand.history,
            hand.phase,
            hand.to_move,
            hand.turns,
            hand.result,
            hand.legal_moves(),
            hand.view(0),
            hand.view(1),
        )
    return (
        hand_state,
        [list(c) for c in game.totals],
        list(game.closed),
        list(game.entries),
        game.phase,
        game.roles,
        game.dealer,
        [set(e) for e in game._entered],
    )


def play_on(game: Game, rng: random.Random, decks: int) -> list[Move]:
    """Random moves (knocking often) until the game is over or ``decks`` more hands are dealt;
    returns the moves."""
    moves: list[Move] = []
    dealt = 0
    while not game.is_over:
        if game.hand is None:
            if dealt == decks:
                break
            dealt += 1
            game.deal(shuffled_deck(rng.randrange(2**32), 0))
            continue
        move = pick(rng, game.hand.legal_moves(), knock_bias=0.7)
        moves.append(move)
        game.apply(move)
    return moves


# -- clone ---------------------------------------------------------------------------------


@SETTINGS
@given(
    rules=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32),
    moves=st.integers(0, 60),
)
def test_a_clone_plays_on_without_touching_the_original(
    rules: Rules, seed: int, moves: int
) -> None:
    game = position(rules, seed, moves)
    before = snapshot(game)
    copy = game.clone()
    assert snapshot(copy) == before
    played = play_on(copy, random.Random(seed + 1), decks=2)
    assert snapshot(game) == before, "playing on the clone changed the original"
    # The clone was faithful: the same moves from the original give the same game.
    assert play_on(game, random.Random(seed + 1), decks=2) == played
    assert snapshot(game) == snapshot(copy)


@SETTINGS
@given(rules=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32), moves=st.integers(0, 60))
def test_a_hand_clone_diverges_from_its_original(rules: Rules, seed: int, moves: int) -> None:
    hand = position(rules, seed, moves).hand
    assert hand is not None
    views = (hand.view(0), hand.view(1), hand.pile, hand.stock_count, hand.history)
    copy = hand.clone()
    rng = random.Random(seed)
    while not copy.is_over:
        copy.apply(pick(rng, copy.legal_moves()))
    assert (hand.view(0), hand.view(1), hand.pile, hand.stock_count, hand.history) == views
    assert not hand.is_over and hand.result is None
    # The original still plays, to a result of its own.
    while not hand.is_over:
        hand.apply(pick(rng, hand.legal_moves()))
    assert hand.result is not None


# -- determinize ---------------------------------------------------------------------------


def check_determinized(real: Hand, view: HandView, made: Hand) -> None:
    """``made`` looks to ``view``'s seat as ``real`` does, and deals the same hidden cards."""
    seat = view.seat
    assert made.view(seat) == view
    assert made.dealer == real.dealer and made.upcard == real.upcard
    hidden = hidden_places(view)
    opponent = set(made.cards(1 - seat)) - set(hidden.opponent_known)
    assert len(opponent) == hidden.opponent
    dealt = sorted([*opponent, *made._stock], key=lambda c: c.index)
    assert dealt == list(hidden.unseen)
    truth = [*(set(real.cards(1 - seat)) - set(hidden.opponent_known)), *real._stock]
    assert sorted(truth, key=lambda c: c.index) == dealt


@SETTINGS
@given(rules=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32), moves=st.integers(0, 80))
def test_a_determinized_hand_gives_the_seat_the_same_view(
    rules: Rules, seed: int, moves: int
) -> None:
    game = position(rules, seed, moves)
    hand = game.hand
    assert hand is not None
    for player in range(rules.players):
        view = game.view(player)
        made = determinize(view, random.Random(seed))
        check_determinized(hand, view.hand, made)
        # The determinized hand plays on by the same rules.
        rng = random.Random(seed)
        while not made.is_over:
            made.apply(pick(rng, made.legal_moves()))


class Checker(RandomPlayer):
    """A random player that determinizes every view the table gives it (the three-player
    sitter's advice views and the captain's views with advice included)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.checked: dict[Decision, int] = {}

    def decide(self, view: GameView, decision: Decision) -> Move:
        made = determinize(view, random.Random(self.rng.random()))
        assert made.view(view.hand.seat) == view.hand
        self.checked[decision] = self.checked.get(decision, 0) + 1
        knocks = [m for m in view.hand.legal_moves() if m.kind is MoveKind.KNOCK]
        if knocks:
            return self.rng.choice(knocks)
        return self.rng.choice(view.hand.legal_moves())

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        pass


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: str(r.variant))
def test_every_view_the_table_gives_determinizes_to_itself(rules: Rules) -> None:
    rules = dataclasses.replace(rules, target=30)
    players = [Checker(seed) for seed in range(rules.players)]
    log = play_game(rules, players, seed=7, key=0)
    assert log.fault is None and log.game.is_over
    asked = [d for p in players for d, n in p.checked.items() if n]
    assert Decision.DISCARD in asked
    if rules.players == 3:
        assert Decision.ADVICE in asked
        advised = [s for h in log.hands for s in h.steps if s.advice is not None]
        assert advised, "the captain decided with advice in view"


@SETTINGS
@given(
    rules=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**32),
    moves=st.integers(0, 80),
    deal_seed=st.integers(0, 2**32),
)
def test_a_determinizer_deals_the_hand_determinize_gives(
    rules: Rules, seed: int, moves: int, deal_seed: int
) -> None:
    game = position(rules, seed, moves)
    hand = game.hand
    assert hand is not None
    for player in range(rules.players):
        view = game.view(player).hand
        dealer = Determinizer(view)
        hidden = dealer.hidden
        assert hidden == hidden_places(view)
        cards = list(hidden.unseen)
        random.Random(deal_seed).shuffle(cards)
        opponent, stock = cards[: hidden.opponent], cards[hidden.opponent :]
        made = dealer.deal(opponent, stock)
        reference = determinize(view, sampler=lambda _: (opponent, stock))  # noqa: B023
        seat, other = view.seat, 1 - view.seat
        assert made.view(seat) == view == reference.view(seat)
        assert made.cards(other) == reference.cards(other)
        assert made._stock == reference._stock
        assert (made.turns, made.upcard, made.knock_limit) == (
            reference.turns,
            reference.upcard,
            reference.knock_limit,
        )
        assert view.turns == made.turns
        assert made.mask(other) == cards_mask(made.cards(other))
        # The renamed hand is the one its deck gives with the same moves ...
        replayed = replay_hand(rules, made.deck, made.dealer, [t.move for t in made.history])
        assert replayed.history == made.history and replayed.view(other) == made.view(other)
        assert replayed._stock == made._stock
        # ... and it plays on as the determinized one does.
        rng_a, rng_b = random.Random(seed), random.Random(seed)
        while not made.is_over:
            move = pick(rng_a, made.legal_moves())
            assert move == pick(rng_b, reference.legal_moves())
            made.apply(move)
            reference.apply(move)
        assert made.result == reference.result


def test_a_determinizer_refuses_a_deal_that_does_not_fit() -> None:
    dealer = Determinizer(position(Rules(), 9, 20).view(1))
    hidden = dealer.hidden
    with pytest.raises(ValueError, match="twice"):
        dealer.deal(
            hidden.unseen[1:2] + hidden.unseen[1 : hidden.opponent],
            hidden.unseen[hidden.opponent :],
        )
    with pytest.raises(ValueError, match="the stock"):
        dealer.deal(hidden.unseen[: hidden.opponent], hidden.unseen[hidden.opponent : -1])


def test_the_same_seed_gives_the_same_hand() -> None:
    view = position(Rules(), 3, 30).view(0)
    a, b = determinize(view, random.Random(11)), determinize(view, random.Random(11))
    assert a.deck == b.deck and a.cards(1) == b.cards(1) and a._stock == b._stock
    others = {determinize(view, random.Random(seed)).deck for seed in range(12, 20)}
    assert len(others) > 1


def test_a_sampler_deals_the_hidden_cards() -> None:
    game = position(Rules(), 5, 25)
    view = game.view(0).hand
    asked: list[Hidden] = []

    def sampler(hidden: Hidden) -> tuple[Sequence[Card], Sequence[Card]]:
        asked.append(hidden)
        cards = list(hidden.unseen)  # in card order: the opponent gets the lowest
        return cards[: hidden.opponent], cards[hidden.opponent :]

    made = determinize(view, sampler=sampler)
    hidden = asked[0]
    assert hidden.view == view and hidden.stock == view.stock
    assert set(made.cards(1)) == {*hidden.unseen[: hidden.opponent], *hidden.opponent_known}
    stock_top_first = list(reversed(made._stock))
    assert stock_top_first == list(hidden.unseen[hidden.opponent :])
    assert made.view(0) == view


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda h: (h.unseen[: h.opponent - 1], h.unseen[h.opponent - 1 :]), "hidden cards"),
        (lambda h: (h.unseen[: h.opponent], h.unseen[h.opponent : -1]), "the stock"),
        (lambda h: (h.view.cards[:1] + h.unseen[1 : h.opponent], h.unseen[h.opponent :]), "seen"),
        (lambda h: (h.unseen[1:2] + h.unseen[1 : h.opponent], h.unseen[h.opponent :]), "twice"),
    ],
    ids=["opponent count", "stock count", "a seen card", "a card twice"],
)
def test_a_bad_sampler_is_refused(bad: object, message: str) -> None:
    view = position(Rules(), 9, 20).view(1)
    with pytest.raises(ValueError, match=message):
        determinize(view, sampler=bad)  # type: ignore[arg-type]


def test_a_finished_hand_is_not_determinized() -> None:
    hand = Hand(Rules(), shuffled_deck(1, 2), 0)
    rng = random.Random(1)
    while not hand.is_over:
        hand.apply(pick(rng, hand.legal_moves()))
    with pytest.raises(ValueError, match="over"):
        determinize(hand.view(0))


def test_a_view_that_no_hand_gives_is_refused() -> None:
    view = position(Rules(), 4, 10).view(0).hand
    wrong = dataclasses.replace(view, stock=view.stock - 1)
    with pytest.raises(ValueError, match="does not add up"):
        determinize(wrong, random.Random(1))
    twice = dataclasses.replace(view, pile=(*view.pile, view.cards[0]))
    with pytest.raises(ValueError, match="two places"):
        determinize(twice, random.Random(1))


# -- score ---------------------------------------------------------------------------------


@SETTINGS
@given(rules=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32))
def test_score_showdown_is_the_hands_own_scoring(rules: Rules, seed: int) -> None:
    rng = random.Random(seed)
    hand = Hand(rules, shuffled_deck(seed, "score"), seed % 2)
    while not hand.is_over:
        hand.apply(pick(rng, hand.legal_moves(), knock_bias=0.9))
    result = hand.result
    assert result is not None
    if result.outcome is Outcome.DRAW:
        # The drawn end is ``drawn_after_discard``'s: two stock cards left, or the turn cap.
        assert drawn_after_discard(rules, hand.stock_count, hand.turns)
        assert result.capped == (hand.stock_count > DRAW_STOCK)
        assert hand.history[-1].move.kind is MoveKind.DISCARD
        return
    assert result.knocker is not None
    arrangement = Arrangement(result.knocker_melds, result.knocker_deadwood)
    scored = score_showdown(
        rules,
        hand.upcard,
        result.knocker,
        result.hands,
        arrangement,
        big_gin=result.outcome is Outcome.BIG_GIN,
    )
    assert scored == result
    # Under other rules the same showdown scores by those rules' bonuses and multiplier.
    other = dataclasses.replace(rules, gin_bonus=20, undercut_bonus=14, spade_double=True)
    big = result.outcome is Outcome.BIG_GIN
    rescored = score_showdown(
        other, hand.upcard, result.knocker, result.hands, arrangement, big_gin=big
    )
    assert rescored.outcome is result.outcome and rescored.winner == result.winner
    assert rescored.multiplier == (2 if hand.upcard.suit == 3 else 1)
