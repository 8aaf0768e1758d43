"""The expert's play-outs hold no rule of their own: every world is a ``Hand`` of the rules core,
played to the end the core decides and scored by the core's one scoring, in every rule set; and
no module of engines/ defines a rule constant or reads a scoring rule a second time."""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import RULE_SETS, make_deck

from engines.expert.knowledge import Knowledge, meld_partners
from engines.expert.rollout import Showdown, play_out, play_outs, points, worlds
from engines.simple_engine import SimpleEngine
from ginproto.cards import DECK, parse_cards
from ginproto.hand import Hand, Outcome
from ginproto.melds import deadwood, is_meld
from ginproto.moves import Move
from ginproto.rules import Rules, Variant
from ginproto.search import DRAW_STOCK
from ginproto.table import play_game

ENGINES = Path(__file__).resolve().parents[2] / "engines"
CAPPED = [Rules(turn_cap=cap) for cap in (2, 5, 9, 14)]


def opening(rules: Rules, seed: int) -> Hand:
    """A seeded random hand in which both seats passed the upcard (seat 1 draws next)."""
    deck = list(DECK)
    random.Random(seed).shuffle(deck)
    hand = Hand(rules, deck, dealer=0)
    hand.apply(Move.pass_())
    hand.apply(Move.pass_())
    return hand


@pytest.mark.parametrize("rules", [*RULE_SETS, *CAPPED], ids=str)
def test_a_play_out_ends_where_the_core_ends_the_hand_and_scores_as_it_does(rules: Rules) -> None:
    # Each play-out leaves its world finished by the core, and its value is the core's result:
    # the turn cap, the two-stock-card draw, the spade double, big gin, all as the rules say.
    outcomes: set[Outcome] = set()
    for seed in range(40):
        world = opening(rules, seed)
        value = play_out(world, 1)
        result = world.result
        assert world.is_over and result is not None
        assert value == points(world, 1)
        if result.winner is None:
            assert value == 0
        else:
            assert abs(value) == result.points
            assert (value > 0) == (result.winner == 1)
        assert world.turns <= rules.turn_cap
        if result.outcome is Outcome.DRAW:
            assert result.capped == (world.stock_count > DRAW_STOCK)
        outcomes.add(result.outcome)
    if rules.turn_cap <= 5:
        assert Outcome.DRAW in outcomes


@pytest.mark.parametrize("rules", [Rules(), Rules(variant=Variant.OKLAHOMA, big_gin=True)], ids=str)
def test_play_outs_for_several_limits_are_the_play_outs_one_by_one(rules: Rules) -> None:
    limits: list[int | None] = [None, 0, 5, 3]
    for seed in range(40):
        world = opening(rules, seed)
        alone = [play_out(world.clone(), 1, limit) for limit in limits]
        assert play_outs(world.clone(), 1, limits) == alone


def test_a_play_out_ends_drawn_at_two_stock_cards_whatever_the_turn_cap() -> None:
    for cap in (100, 60):
        hand = Hand(Rules(turn_cap=cap), make_deck(*HANDS, "9s"), dealer=0)
        hand.apply(Move.pass_())
        hand.apply(Move.pass_())
        while hand.stock_count > DRAW_STOCK + 1:
            hand.apply(Move.stock())
            drawn = hand.history[-1].card
            assert drawn is not None
            hand.apply(Move.discard(drawn))
        world = hand.clone()
        assert play_out(world, 0) == 0
        assert world.result is not None and world.result.outcome is Outcome.DRAW
        assert not world.result.capped and world.stock_count == DRAW_STOCK


# Seat 1 (the non-dealer) holds no meld; seat 0 one meld and 58 deadwood: no draw lets either
# knock.
HANDS = ("Ac 3c 5c 7d 9d Jh Kh 2s 4s 6s", "2h 3h 4h 5d 6d 8d 9c Tc Qc Kd")


@pytest.mark.parametrize(
    "rules, multiplier",
    [
        (Rules(big_gin=True), 1),
        (Rules(variant=Variant.OKLAHOMA, big_gin=True, spade_double=True), 2),
    ],
)
def test_a_play_out_goes_big_gin_and_scores_it_as_the_core(rules: Rules, multiplier: int) -> None:
    # Seat 0 holds three melds and a run of four after its draw: all 11 cards meld.
    deck = make_deck("Ac 2c 3c 4d 5d 6d 7h 8h 9h Th", "2h 3h 4h 5s 6s 7s 9c Tc Jc Qd", "Ks", "Jh")
    hand = Hand(rules, deck, dealer=1)
    for move in ("pass", "pass", "stock"):
        hand.apply(Move.from_str(move))
    world = hand.clone()
    value = play_out(world, 0)
    assert world.result is not None and world.result.outcome is Outcome.BIG_GIN
    defender = deadwood(parse_cards("2h 3h 4h 5s 6s 7s 9c Tc Jc Qd"))
    assert value == multiplier * (rules.big_gin_bonus + defender)
    core = hand.clone()
    core.apply(Move.big_gin())
    assert value == points(core, 0)


def knocks(rules: Rules, count: int) -> Iterator[tuple[Hand, Hand]]:
    """Hands of ``simple`` against itself that end in a knock: the position of the knock
    (the knocker to move) and the finished hand."""
    for key in range(count):
        players = [SimpleEngine() for _ in range(rules.players)]
        log = play_game(rules, players, "rollout", key)
        for played, entry in zip(log.hands, log.game.entries, strict=True):
            if entry.result.outcome not in (Outcome.KNOCK, Outcome.GIN, Outcome.UNDERCUT):
                continue
            hand = Hand(rules, played.deck, played.dealer)
            for step in played.steps[:-1]:
                hand.apply(step.turn.move)
            end = hand.clone()
            end.apply(played.steps[-1].turn.move)
            yield hand, end


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(variant=Variant.OKLAHOMA, spade_double=True),
        Rules(gin_bonus=20, undercut_bonus=25),
    ],
    ids=str,
)
def test_a_knock_scored_by_the_expert_is_the_cores_result(rules: Rules) -> None:
    # The old play-out scored these with its own copy of the rules, without the spade double.
    checked = doubled = 0
    for before, end in knocks(rules, 8):
        seat = before.to_move
        result = end.result
        assert result is not None and result.knocker == seat
        view = before.view(seat)
        knowledge = Knowledge.of(view)
        showdown = Showdown.of(
            view, end.cards(seat), [*knowledge.unseen, *knowledge.opponent_known]
        )
        assert showdown.points(end.cards(1 - seat)) == points(end, seat)
        checked += 1
        doubled += result.multiplier == 2
    assert checked >= 8
    if rules.spade_double:
        assert doubled > 0


def test_worlds_are_dealt_from_the_view_in_every_rule_set() -> None:
    # (The three-player game's hands are two-seat hands too; its records name players, so it
    # is left out here; test_search deals its views.)
    for rules in [r for r in [*RULE_SETS, *CAPPED] if r.players == 2]:
        for before, _ in itertools.islice(knocks(rules, 3), 2):
            view = before.view(before.to_move)
            knowledge = Knowledge.of(view)
            rng = random.Random(3)
            for world in worlds(view, [knowledge.sample(rng) for _ in range(5)], rng):
                assert world.view(view.seat) == view
                assert world.rules == rules and world.turns == view.turns


def test_meld_partners_are_the_cards_that_share_a_three_card_meld() -> None:
    # The inference's neighbourhood of a card, checked against the core's own meld rule.
    rng = random.Random(5)
    for card in rng.sample(list(DECK), 8):
        others = [c for c in DECK if c != card]
        sharing = {c for c in others if any(is_meld((card, c, x)) for x in others if x != c)}
        assert set(meld_partners(card)) == sharing


# A rule constant written a second time, by its name (the core's are in ginproto.search), and
# the scoring rules an engine could read to score on its own.
RULE_CONSTANTS = {"DRAW_STOCK", "HAND_SIZE", "DEALT_STOCK", "FULL_STOCK", "MAX_TURNS", "STOCK"}
SCORING_FIELDS = {
    "gin_bonus",
    "undercut_bonus",
    "big_gin_bonus",
    "spade_double",
    "turn_cap",
    "multiplier_for",
}


def rule_copies(name: str, source: str) -> list[str]:
    """Where ``source`` defines a rule constant or reads a scoring rule."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [
                f"{name}:{node.lineno} defines {target.id}"
                for target in targets
                if isinstance(target, ast.Name) and target.id in RULE_CONSTANTS
            ]
        if isinstance(node, ast.Attribute) and node.attr in SCORING_FIELDS:
            found.append(f"{name}:{node.lineno} reads .{node.attr}")
    return found


def test_engines_define_no_rule_constant_and_score_nothing_themselves() -> None:
    found: list[str] = []
    for path in sorted(ENGINES.rglob("*.py")):
        if path.name == "openspiel_engine.py":
            continue  # it hands the rules to OpenSpiel, which needs them by name
        found += rule_copies(path.name, path.read_text())
    assert not found, found


def test_the_check_finds_a_copy_of_a_rule() -> None:
    source = "DRAW_STOCK = 2\ndef score(rules, k, d):\n    return d - k + rules.undercut_bonus\n"
    assert rule_copies("x.py", source) == [
        "x.py:1 defines DRAW_STOCK",
        "x.py:3 reads .undercut_bonus",
    ]
