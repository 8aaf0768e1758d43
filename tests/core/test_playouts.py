"""Property tests over random legal playouts of whole games in every variant.

Every step is checked: the 52 cards are all accounted for, no seat's view holds a card that
seat could not know, every hand ends, and the scores follow the rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest
from helpers import RULE_SETS, KnockerPlayer, RandomPlayer, thorough
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ginproto.cards import DECK, Card
from ginproto.game import Entry, Game, GameView
from ginproto.hand import Hand, HandResult, Outcome
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, GameLog, HandLog, Step, play_game

VARIANTS = RULE_SETS


class Watcher:
    """Wraps a player and checks every view it is given against the true state."""

    def __init__(self, inner: RandomPlayer, game_ref: list[Game]) -> None:
        self.inner = inner
        self.game_ref = game_ref
        self.known = Public()

    def decide(self, view: GameView, decision: Decision) -> Move:
        game = self.game_ref[0]
        hand = game.hand
        assert hand is not None
        seat = game.seat_of(view.player)
        if seat is None:  # the three-player sitter sees the captain's seat
            assert decision is Decision.ADVICE
            seat = 1
        assert view.hand.seat == seat
        assert view.hand.cards == hand.cards(seat)
        self.known = check_view_knows_only_what_it_may(hand, seat, view, self.known)
        return self.inner.decide(view, decision)

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: object) -> None:
        pass


def mask(cards: Iterable[Card]) -> int:
    """A group of cards as a 52-bit int (bit ``card.index``): the checks below run on every
    step, and set operations on ints are far cheaper than on sets of cards."""
    bits = 0
    for card in cards:
        bits |= 1 << card.index
    return bits


_FROM_PILE = (MoveKind.TAKE, MoveKind.PILE)
ALL_CARDS = mask(DECK)


class Public:
    """What a hand's true history has made public (every card taken from or put on the pile)
    and each seat's own draws, read turn by turn as the history grows (a hand only appends to
    it), so that a check at every step does not read the whole history again."""

    def __init__(self, hand: Hand | None = None) -> None:
        self.hand = hand
        self.read = 0
        self.public = 0
        self.draws = [0, 0]

    def of(self, hand: Hand) -> Public:
        """This record brought up to date with ``hand`` (a fresh one for a new hand)."""
        known = self if hand is self.hand else Public(hand)
        history = hand.history
        for turn in history[known.read :]:
            card = turn.card
            if card is not None:
                if turn.move.kind in _FROM_PILE:
                    known.public |= 1 << card.index
                known.draws[turn.seat] |= 1 << card.index
            if turn.move.card is not None:
                known.public |= 1 << turn.move.card.index
        known.read = len(history)
        return known


def check_view_knows_only_what_it_may(
    hand: Hand, seat: int, view: GameView, known: Public | None = None
) -> Public:
    """The view may show: the seat's own cards, the pile, cards that went through the pile
    (public), and the seat's own stock draws. Never the opponent's hidden cards or the stock."""
    truth = (known or Public()).of(hand)
    public = mask(view.hand.pile) | truth.public
    allowed = mask(hand.cards(seat)) | public | truth.draws[seat]
    shown = mask(view.hand.cards) | mask(view.hand.pile)
    shown |= mask(t.card for t in view.hand.history if t.card is not None)
    extra = shown & ~allowed
    assert not extra, f"view shows {[str(c) for c in DECK if extra >> c.index & 1]}"
    hidden = mask(hand.cards(1 - seat)) & ~public
    assert not shown & hidden
    assert not shown & mask(hand._stock)
    return truth


def check_cards_accounted(hand: Hand) -> None:
    places = (hand.cards(0), hand.cards(1), hand.pile, hand._stock)
    assert sum(len(cards) for cards in places) == 52
    assert mask(card for cards in places for card in cards) == ALL_CARDS
    assert hand.stock_count >= 2


def check_points(rules: Rules, result: HandResult) -> None:
    k, d, m = result.knocker_deadwood_value, result.defender_deadwood_value, result.multiplier
    if result.outcome is Outcome.DRAW:
        assert result.points == 0 and result.winner is None
    elif result.outcome is Outcome.GIN:
        assert k == 0 and result.points == (d + rules.gin_bonus) * m
        assert result.defender is not None and result.defender.layoffs == ()
    elif result.outcome is Outcome.BIG_GIN:
        assert result.points == (d + rules.big_gin_bonus) * m
    elif result.outcome is Outcome.KNOCK:
        assert 0 < k < d and result.points == (d - k) * m and result.winner == result.knocker
    else:
        assert k >= d and result.points == (k - d + rules.undercut_bonus) * m
        assert result.winner != result.knocker


def run_checked(rules: Rules, seed: int, knocker: bool) -> GameLog:
    game_ref: list[Game] = []
    kind = KnockerPlayer if knocker else RandomPlayer
    players = [Watcher(kind(seed * 7 + p), game_ref) for p in range(rules.players)]

    def on_step(hand_log: HandLog, step: Step) -> None:
        game = game_ref[0]
        if game.hand is not None:
            check_cards_accounted(game.hand)

    # The game object is made inside play_game; catch it at its first deal.
    original = Game.deal

    def spy(self: Game, deck: tuple[object, ...]) -> Hand:  # type: ignore[misc]
        if not game_ref:
            game_ref.append(self)
        return original(self, deck)  # type: ignore[arg-type]

    Game.deal = spy  # type: ignore[method-assign,assignment]
    try:
        log = play_game(rules, players, seed=seed, key=0, on_step=on_step)
    finally:
        Game.deal = original  # type: ignore[method-assign]
    game = log.game
    assert log.fault is None
    assert game.is_over
    totals = [[0] * rules.players for _ in range(rules.games)]
    for hand_log in log.hands:
        entry = hand_log.entry
        assert entry is not None, "every hand ends"
        check_points(rules, entry.result)
        if entry.winner is not None:
            for g in entry.games:
                totals[g][entry.winner] += entry.result.points
        if entry.roles is not None:
            sitter = entry.roles.sitter
            assert sitter not in entry.seats and entry.winner != sitter
        assert [list(c) for c in entry.totals] == totals
    for g, col in enumerate(game.totals):
        winners = [p for p, t in enumerate(col) if t >= rules.target]
        assert len(winners) <= 1
        assert game.game_winners[g] == (winners[0] if winners else None)
    return log


@pytest.mark.slow
@settings(
    max_examples=thorough(25, 10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    rules=st.sampled_from(VARIANTS),
    seed=st.integers(min_value=0, max_value=2**32),
    knocker=st.booleans(),
)
def test_random_playouts_keep_every_invariant(rules: Rules, seed: int, knocker: bool) -> None:
    if not knocker:
        # Uniformly random players rarely knock, and a game to 100 takes ~150 hands: a lower
        # target keeps the example count up without changing what is checked.
        rules = dataclasses.replace(rules, target=min(rules.target, 40))
    run_checked(rules, seed, knocker)


def test_every_variant_plays_to_the_end_with_a_winner() -> None:
    for i, rules in enumerate(VARIANTS):
        log = run_checked(rules, 1000 + i, knocker=True)
        assert log.game.winner is not None
        if rules.variant is Variant.HOLLYWOOD:
            assert all(log.game.closed)
            wins = sum(1 for w in log.game.game_winners if w == log.game.winner)
            assert wins >= 2


def test_same_seed_same_game() -> None:
    a = run_checked(VARIANTS[0], 5, knocker=True)
    b = run_checked(VARIANTS[0], 5, knocker=True)
    assert [h.deck for h in a.hands] == [h.deck for h in b.hands]
    turns_a = [[s.turn for s in h.steps] for h in a.hands]
    assert turns_a == [[s.turn for s in h.steps] for h in b.hands]
