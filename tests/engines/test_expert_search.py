"""The expert's search over every decision (``Params.search``): candidates played out in the
same worlds of the rules core, the evaluation's choice kept unless another is clearly better."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest
from helpers import RULE_SETS

import engines.expert_engine as expert_engine
from bench.expert_hands import TunedExpert
from engines.expert.knowledge import Knowledge
from engines.expert.rollout import play_outs, worlds
from engines.expert.search import Table, choose, play_candidates
from engines.expert_engine import DEFAULT_MOVETIME, SEARCH_FROM_MS, ExpertEngine, effort
from engines.simple_engine import SimpleEngine
from ginproto.game import GameView
from ginproto.hand import Hand, Phase
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, play_game


def test_choose_keeps_the_evaluations_choice_unless_another_is_clearly_better() -> None:
    noise = [3, -3, 2, -2, 1, -1, 0, 0]
    flat = Table([[[0] * 8], [[v + 1 for v in noise]]])
    assert choose(flat, 0, 2.0) == 0  # better on average, but within the noise
    assert choose(flat, 0, 0.0) == 1  # with no margin asked for, the better mean wins
    clear = Table([[[0] * 8], [[5 + v // 3 for v in noise]], [[9] * 8]])
    assert choose(clear, 0, 2.0) == 2  # both clearly better: the best mean
    assert choose(clear, 2, 2.0) == 2  # nothing beats the best
    worse = Table([[[0] * 8], [[-4] * 8]])
    assert choose(worse, 1, 2.0) == 0
    assert choose(Table([[[0]], [[50]]]), 0, 2.0) == 0  # one world decides nothing


def test_a_candidate_is_worth_its_better_way_to_play_on() -> None:
    table = Table([[[1, 1, 1], [4, -4, -2]]])
    assert table.best_limit(0) == 0 and table.mean(0) == 1
    table = Table([[[1, 1, 1], [4, 4, 4]]])
    assert table.best_limit(0) == 1 and table.row(0) == [4, 4, 4]


def _positions(rules: Rules, count: int) -> list[Hand]:
    """Hands of ``simple`` against itself at the mover's discard, from several games."""
    out: list[Hand] = []
    for key in range(count):
        players = [SimpleEngine() for _ in range(rules.players)]
        log = play_game(rules, players, "search", key)
        played = log.hands[0]
        hand = Hand(rules, played.deck, played.seats.index(played.dealer))
        for step in played.steps:
            if hand.phase is Phase.DISCARD and len(hand.history) > 4:
                out.append(hand.clone())
                break
            hand.apply(step.turn.move)
    return out


@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
def test_candidates_are_played_out_on_copies_as_the_play_outs_one_by_one(rules: Rules) -> None:
    limits: Sequence[int | None] = (None, 0)
    for hand in _positions(rules, 3):
        seat = hand.to_move
        view = hand.view(seat)
        rng = random.Random(4)
        knowledge = Knowledge.of(view)
        dealt = worlds(view, [knowledge.sample(rng) for _ in range(4)], rng)
        before = [(w.view(0), w.view(1)) for w in dealt]
        roots = [Move.discard(c) for c in view.cards[:3]]
        table = play_candidates(dealt, seat, roots, limits)
        assert [(w.view(0), w.view(1)) for w in dealt] == before  # the worlds are untouched
        for w, world in enumerate(dealt):
            for c, root in enumerate(roots):
                trial = world.clone()
                trial.apply(root)
                expected = play_outs(trial, seat, limits)
                assert [table.values[c][i][w] for i in range(len(limits))] == expected


def test_the_search_effort_grows_with_the_budget() -> None:
    counts = [effort(b).search_worlds for b in (0, 10, DEFAULT_MOVETIME, 100, 10_000)]
    assert counts == sorted(counts) and counts[0] == 0 < counts[1]
    assert effort(100).search_worlds > effort(DEFAULT_MOVETIME).search_worlds
    # Off at the default, where it would cost more than the budget; on with five times it.
    assert not effort(DEFAULT_MOVETIME).search
    assert not effort(SEARCH_FROM_MS - 1).search and effort(SEARCH_FROM_MS).search
    assert effort(500).search_worlds > effort(SEARCH_FROM_MS).search_worlds


def _discard_view() -> GameView:
    """Seat 1's view at a discard, in a seeded hand where it cannot knock."""
    for key in range(20):
        log = play_game(Rules(), [SimpleEngine(), SimpleEngine()], "choose", key)
        played = log.hands[0]
        hand = Hand(Rules(), played.deck, played.dealer)
        for step in played.steps:
            if (
                hand.phase is Phase.DISCARD
                and hand.to_move == 1
                and len(hand.history) > 6
                and not any(m.kind is MoveKind.KNOCK for m in hand.legal_moves())
            ):
                return GameView(1, hand.view(1), (0, 1), ((0, 0),), (False,), 1, None)
            hand.apply(step.turn.move)
    raise AssertionError("no such position")


def test_the_engine_plays_the_candidate_the_play_outs_choose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view = _discard_view()
    plain = ExpertEngine().decide(view, Decision.DISCARD)
    searched = TunedExpert({"search": True, "search_worlds": 6})
    seen: list[list[Move]] = []

    def table(values: list[int]) -> object:
        def fake(
            worlds: Sequence[Hand], seat: int, roots: Sequence[Move], limits: Sequence[int | None]
        ) -> Table:
            seen.append(list(roots))
            return Table([[[v] * len(worlds) for _ in limits] for v in values])

        return fake

    # Level play-outs: the evaluation's choice, the plain expert's move.
    monkeypatch.setattr(expert_engine, "play_candidates", table([0, 0, 0]))
    assert searched.decide(view, Decision.DISCARD) == plain
    assert seen[-1][0] == plain and len(seen[-1]) == 3
    # Play-outs that clearly favour the third candidate: that one.
    monkeypatch.setattr(expert_engine, "play_candidates", table([0, 1, 5]))
    assert searched.decide(view, Decision.DISCARD) == seen[-1][2] != plain


@pytest.mark.parametrize(
    "variant", [Variant.STANDARD, Variant.OKLAHOMA, Variant.HOLLYWOOD, Variant.THREEHANDED]
)
def test_the_searched_expert_plays_every_variant_the_same_twice(variant: Variant) -> None:
    def game() -> list[str]:
        experts = [TunedExpert({"search": True, "search_worlds": 4}) for _ in range(2)]
        for expert in experts:
            expert.set_option("Movetime", "2")
            expert.set_option("Seed", "3")
        players = [experts[0], SimpleEngine()]
        if variant is Variant.THREEHANDED:
            players.append(experts[1])
        log = play_game(Rules(variant=variant, target=30), players, "searched", 0)
        assert log.fault is None
        assert log.game.is_over
        return [f"{s.turn.move} {s.turn.card}" for h in log.hands for s in h.steps]

    assert game() == game()


def test_the_expert_searches_every_decision_from_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With ``SEARCH_FROM_MS`` of budget the plain expert, not a tuned one, searches its
    # discards; at the default it does not. Few worlds keep the test quick.
    searched: list[float] = []
    plain = expert_engine.effort

    def cheap(budget: float) -> expert_engine.Params:
        return dataclasses.replace(plain(budget), search_worlds=2, worlds=4)

    def spy(self: ExpertEngine, view: GameView, *rest: object) -> Move:
        searched.append(self.option("Movetime"))
        return original(self, view, *rest)  # type: ignore[arg-type]

    original = ExpertEngine._search_every
    monkeypatch.setattr(expert_engine, "effort", cheap)
    monkeypatch.setattr(ExpertEngine, "_search_every", spy)
    for movetime in (DEFAULT_MOVETIME, SEARCH_FROM_MS):
        expert = ExpertEngine()
        expert.set_option("Movetime", str(movetime))
        log = play_game(Rules(target=1), [expert, SimpleEngine()], "budget", 0)
        assert log.fault is None
    assert searched and set(searched) == {SEARCH_FROM_MS}
