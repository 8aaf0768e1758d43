"""The expert engine: its inference of the opponent's hand, its time budget, its determinism,
and whole games in every variant, in process and through the referee."""

from __future__ import annotations

import dataclasses
import json
import random
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import make_deck

from engines.expert.knowledge import Knowledge
from engines.expert.rollout import play_out, worlds
from engines.expert.strategy import Evaluator, Params
from engines.expert_engine import DEFAULT_MOVETIME, ExpertEngine, budget_ms, effort
from engines.random_engine import RandomEngine
from engines.simple_engine import SimpleEngine
from ginproto.cards import DECK, Card, parse_cards
from ginproto.game import GameView
from ginproto.hand import Hand
from ginproto.melds import cards_mask, deadwood, discard_deadwoods
from ginproto.moves import Move, MoveKind
from ginproto.protocol import Go, NewMatch
from ginproto.rules import Rules, RulesError, Variant
from ginproto.table import Decision, play_game
from referee.cli import cli

NON_DEALER = "Ac 2c 3c 7d 8d 9h Jh Qs Ks 5c"
DEALER = "4h 5h 6h 9c 9d Tc Td 2s 3s 8s"


def _hand(*played: str) -> Hand:
    """A hand dealt by seat 0 (seat 1 moves first, upcard 9s) with ``played`` moves applied."""
    deck = make_deck(NON_DEALER, DEALER, "9s", "Kh Kd Kc 4c 6d")
    hand = Hand(Rules(), deck, dealer=0)
    for move in played:
        hand.apply(Move.from_str(move))
    return hand


def test_a_card_the_opponent_took_is_known_and_never_in_the_stock() -> None:
    # Seat 1 takes the upcard 9s and throws Ks; seat 0 (the dealer) now sees its view.
    hand = _hand("take", "discard Ks")
    knowledge = Knowledge.of(hand.view(0))
    nine = Card.from_str("9s")
    assert knowledge.opponent_known == {nine}
    assert knowledge.taken == (nine,)
    assert knowledge.discarded == (Card.from_str("Ks"),)
    assert nine not in knowledge.unseen
    assert knowledge.stock_probability(nine) == 0.0
    assert knowledge.probability(nine) == 1.0
    rng = random.Random(3)
    for _ in range(50):
        sample = knowledge.sample(rng)
        assert nine in sample
        assert len(sample) == 10 == len(set(sample))
        assert not set(sample) & set(hand.view(0).cards)
        assert not set(sample) & set(hand.pile)


def test_unseen_probabilities_add_up_to_the_hidden_cards() -> None:
    hand = _hand("take", "discard Ks", "stock", "discard 2s")
    knowledge = Knowledge.of(hand.view(0))
    assert knowledge.hidden_count == 9  # 10 cards, one of them (9s) known
    assert sum(knowledge.weights.values()) == pytest.approx(9)
    assert all(0 <= p < 1 for p in knowledge.weights.values())
    # The stock chances cover the stock exactly once.
    assert sum(knowledge.stock_probability(c) for c in knowledge.unseen) == pytest.approx(1)
    # Cards in this seat's hand or in the pile are never given to the opponent.
    for card in (*hand.view(0).cards, *hand.pile):
        assert knowledge.probability(card) == 0.0


def test_a_card_passed_on_makes_its_partners_less_likely() -> None:
    # Seat 1 passes the upcard 9s, seat 0 passes too; seat 1 draws from the stock. Seen from
    # seat 0, the opponent likely holds no 9 (other than those seat 0 can see) and no 8s/Ts.
    hand = _hand("pass", "pass", "stock", "discard 5c")
    knowledge = Knowledge.of(hand.view(0))
    assert Card.from_str("9s") in knowledge.passed
    assert Card.from_str("5c") in knowledge.discarded
    nine_h, ten_s = Card.from_str("9h"), Card.from_str("Ts")
    plain = Card.from_str("4d")  # no signal about it
    assert knowledge.probability(nine_h) < knowledge.probability(plain)
    assert knowledge.probability(ten_s) < knowledge.probability(plain)


def test_a_discard_that_fits_a_taken_card_is_dangerous() -> None:
    # Seat 1 took 9s: an 8s or a Ts feeds it more than an unrelated card does.
    hand = _hand("take", "discard Ks")
    evaluator = Evaluator(Knowledge.of(hand.view(0)), Params(), random.Random(0))
    plain = evaluator.danger(Card.from_str("4d"))
    assert evaluator.danger(Card.from_str("8s")) > plain
    assert evaluator.danger(Card.from_str("Ts")) > plain


def _knock_chance_by_brute_force(evaluator: Evaluator, cards: list[Card], limit: int) -> float:
    """The chance that ``cards`` can knock after one stock draw, each unseen card drawn with
    the evaluator's probability, by trying every discard."""
    total = mass = 0.0
    for card in evaluator.knowledge.unseen:
        p = evaluator.knowledge.stock_probability(card)
        if p <= 0 or card in cards:
            continue
        mass += p
        if min(discard_deadwoods([*cards, card]).values()) <= limit:
            total += p
    return total / mass


@pytest.mark.parametrize("limit", [10, 5, 0])
def test_the_chance_to_knock_next_turn_matches_trying_every_draw(limit: int) -> None:
    rng = random.Random(7)
    checked = 0
    for game_key in range(40):
        hand = Hand(Rules(), make_deck(*_random_deal(rng)), dealer=game_key % 2)
        moves = rng.randrange(0, 12)
        while moves and not hand.is_over:
            legal = [m for m in hand.legal_moves() if m.kind in _PLAIN]
            hand.apply(rng.choice(legal))
            moves -= 1
        if hand.is_over or len(hand.cards(hand.to_move)) != 10:
            continue
        view = hand.view(hand.to_move)
        evaluator = Evaluator(Knowledge.of(view), Params(), random.Random(0), limit)
        cards = list(view.cards)
        key = cards_mask(cards)
        assert evaluator.knock_chance(key) == pytest.approx(
            _knock_chance_by_brute_force(evaluator, cards, limit)
        )
        checked += 1
    assert checked >= 20


_PLAIN = {MoveKind.PASS, MoveKind.TAKE, MoveKind.STOCK, MoveKind.PILE, MoveKind.DISCARD}


def _random_deal(rng: random.Random) -> tuple[str, str, str, str]:
    deck = [str(c) for c in DECK]
    rng.shuffle(deck)
    return " ".join(deck[:10]), " ".join(deck[10:20]), deck[20], " ".join(deck[21:])


def _view(hand: Hand, seat: int) -> GameView:
    return GameView(seat, hand.view(seat), (0, 1), ((0, 0),), (False,), 1, None)


def test_the_engine_goes_gin() -> None:
    deck = make_deck(
        "Ac 2c 3c 4d 5d 6d 7h 8h 9h Ks", "2h 3h 4h 5s 6s 7s 9c Tc Jc Qd", "Kd", "Th"
    )
    hand = Hand(Rules(), deck, dealer=1)
    for move in ("pass", "pass", "stock"):
        hand.apply(Move.from_str(move))
    move = ExpertEngine().decide(_view(hand, 0), Decision.DISCARD)
    assert move == Move.knock(Card.from_str("Ks"))


def test_the_engine_knocks_rather_than_let_the_hand_be_drawn() -> None:
    # Seat 0 holds three melds and 9 deadwood (9s), with two cards left in the stock after
    # its draw: discarding would draw the hand, so it knocks.
    deck = make_deck(
        "Ac 2c 3c 4d 5d 6d 7h 8h 9h 9s", "2h 3h 4h 5s 6s 7s 9c Tc Jc Qd", "Kd", "Qh"
    )
    hand = Hand(Rules(), deck, dealer=1)
    for move in ("pass", "pass", "stock", "discard Qh"):
        hand.apply(Move.from_str(move))
    while hand.stock_count > 3:
        hand.apply(Move.stock())
        drawn = hand.history[-1].card
        assert drawn is not None
        hand.apply(Move.discard(drawn))
    assert hand.to_move == 0
    hand.apply(Move.stock())
    assert hand.stock_count == 2
    drawn = hand.history[-1].card
    move = ExpertEngine().decide(_view(hand, 0), Decision.DISCARD)
    assert move.kind is MoveKind.KNOCK, (move, drawn, hand.cards(0))


def test_budget_follows_the_option_and_the_referees_clock() -> None:
    assert budget_ms(DEFAULT_MOVETIME, Go(Decision.DRAW)) == DEFAULT_MOVETIME
    assert DEFAULT_MOVETIME <= 50
    # A tenth of the per-move limit, at most.
    assert budget_ms(500, Go(Decision.DRAW, movetime=1000)) == 100
    # A fiftieth of the clock left, plus half the increment.
    assert budget_ms(500, Go(Decision.DRAW, time=2000, inc=100)) == 90
    # No time left: the least effort, never a negative budget.
    assert budget_ms(500, Go(Decision.DRAW, time=0)) == 0
    # Effort grows with the budget and is bounded.
    efforts = [effort(b) for b in (0, 10, 50, 200, 10_000)]
    samples = [p.knock_samples for p in efforts]
    assert samples == sorted(samples) and samples[0] >= 1 and samples[-1] <= 400
    deep = [p.deep_discards for p in efforts]
    assert deep == sorted(deep) and deep[-1] <= 6
    # Worlds played out for the knock: none without a budget, more with more time, bounded.
    played = [p.worlds for p in efforts]
    assert played == sorted(played) and played[0] == 0 < played[1] and played[-1] <= 1000
    assert effort(200).worlds > effort(DEFAULT_MOVETIME).worlds > effort(10).worlds


def _moves(seed: int, movetime: int = DEFAULT_MOVETIME) -> list[str]:
    expert = ExpertEngine()
    expert.set_option("Seed", str(seed))
    expert.set_option("Movetime", str(movetime))
    # A short game (several hands): its length is not what a seed's reproduction is about.
    log = play_game(Rules(target=25), [expert, SimpleEngine()], "det", 1)
    assert log.fault is None and len(log.hands) > 1
    return [f"{step.turn.move} {step.turn.card}" for h in log.hands for step in h.steps]


def test_a_seed_reproduces_a_game_move_for_move() -> None:
    assert _moves(5) == _moves(5)


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant", [Variant.STANDARD, Variant.OKLAHOMA, Variant.HOLLYWOOD, Variant.THREEHANDED]
)
def test_games_in_every_variant_have_no_fault(variant: Variant) -> None:
    rules = Rules(variant=variant, target=15)  # whole games of a few hands each
    players = [ExpertEngine(), SimpleEngine()]
    if variant is Variant.THREEHANDED:
        players.append(ExpertEngine())
    log = play_game(rules, players, "variants", 0)
    assert log.fault is None
    assert log.game.is_over


@pytest.mark.parametrize(
    "variant", [Variant.STANDARD, Variant.OKLAHOMA, Variant.HOLLYWOOD, Variant.THREEHANDED]
)
def test_the_model_of_a_waiting_opponent_plays_every_variant_the_same_twice(
    variant: Variant,
) -> None:
    from bench.expert_hands import TunedExpert
    from engines.camper_engine import CamperEngine

    changes = {"waiting": 0.5, "hold_low": 4}

    def game() -> list[tuple[int | None, int]]:
        experts = [TunedExpert(changes) for _ in range(2)]
        for expert in experts:
            expert.set_option("Movetime", "2")
        players = [experts[0], CamperEngine()]
        if variant is Variant.THREEHANDED:
            players.append(experts[1])
        log = play_game(Rules(variant=variant, target=40), players, "waiting", 0)
        assert log.fault is None
        assert log.game.is_over
        return [(e.winner, e.result.points) for e in log.game.entries]

    assert game() == game()


@pytest.mark.slow
def test_it_beats_random_play() -> None:
    wins = 0
    for key in range(6):
        log = play_game(Rules(target=50), [ExpertEngine(), RandomEngine()], "beat", key)
        wins += log.game.winner == 0
    assert wins >= 5


def test_a_match_through_the_referee_verifies(tmp_path: Path) -> None:
    record = tmp_path / "games.gin"
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["match", "expert", "simple", "--games", "2", "--seed", "7", "--rule", "target=20",
         "--record", str(record), "--json", "-q"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert all(not e["faults"] for e in data["engines"])
    verify = runner.invoke(cli, ["replay", str(record), "--verify"])
    assert verify.exit_code == 0, verify.output


def test_every_world_is_a_hand_the_seat_cannot_tell_from_the_real_one() -> None:
    hand = _hand("take", "discard Ks", "stock", "discard 2s")
    view = hand.view(0)
    knowledge = Knowledge.of(view)
    rng = random.Random(1)
    nine = Card.from_str("9s")
    played = worlds(view, [knowledge.sample(rng) for _ in range(30)], rng)
    assert len({world.cards(1) for world in played}) > 1
    for world in played:
        assert world.view(0) == view
        assert nine in world.cards(1)
        assert world.stock_count == view.stock


def test_hands_weighed_by_deadwood_hold_less_of_it_and_only_cards_the_opponent_may_hold() -> None:
    hand = _hand("take", "discard Ks", "stock", "discard 2s")
    view = hand.view(0)
    knowledge = Knowledge.of(view)
    nine = Card.from_str("9s")
    seen = {*view.cards, *view.pile}
    plain = knowledge.samples(random.Random(5), 300)
    weighed = knowledge.samples(random.Random(5), 300, beta=0.1, ratio=4)
    for sample in (*plain, *weighed):
        assert nine in sample
        assert len(sample) == 10 == len(set(sample))
        assert not seen & set(sample)
    mean_plain = statistics.mean(deadwood(s) for s in plain)
    mean_weighed = statistics.mean(deadwood(s) for s in weighed)
    assert mean_weighed < mean_plain - 5


def opening_deals(rules: Rules, seed: int, count: int) -> Iterator[Hand]:
    """``count`` seeded random hands in which both seats passed the upcard: the non-dealer
    (seat 1) is to draw from the stock."""
    rng = random.Random(seed)
    for _ in range(count):
        deck = list(DECK)
        rng.shuffle(deck)
        hand = Hand(rules, deck, dealer=0)
        hand.apply(Move.pass_())
        hand.apply(Move.pass_())
        yield hand


def test_a_seat_that_plays_on_for_gin_knocks_only_with_gin() -> None:
    # Bonuses far above any deadwood tell the kinds of result apart: this seat's own knock
    # without gin wins less than 100; a gin or an undercut of the opponent wins 500 or more.
    rules = Rules(gin_bonus=1000, undercut_bonus=500)
    plain_knocks = 0
    for hand in opening_deals(rules, 8, 150):
        for_gin = play_out(hand.clone(), 1, my_limit=0)
        assert not 0 < for_gin < 500
        plain_knocks += 0 < play_out(hand.clone(), 1) < 500
    assert plain_knocks > 10


def _regret(hand: tuple[Card, ...], discard: Card, banned: Card) -> int:
    """The points of deadwood ``hand`` kept by discarding ``discard`` from ``hand + discard``
    rather than its best discard (never ``banned``, the card taken from the pile that turn)."""
    after = discard_deadwoods([*hand, discard])
    return after[discard] - min(dw for card, dw in after.items() if card != banned)


@pytest.mark.parametrize("seed", range(3))
def test_refined_hands_explain_the_opponents_last_discard(seed: int) -> None:
    # Seat 1 takes the upcard 9s and throws Ks. Drawn card by card, its hands would often
    # have shed more deadwood with another discard; the refined hands rarely would.
    hand = _hand("take", "discard Ks")
    view = hand.view(0)
    knowledge = Knowledge.of(view)
    nine, king = Card.from_str("9s"), Card.from_str("Ks")
    assert (knowledge.last_discard, knowledge.last_taken) == (king, nine)
    plain = knowledge.samples(random.Random(seed), 300)
    knowledge.refine(
        random.Random(seed), 400, beta=0.05, limit=10, declined=0.3, regret=1.0, keep=0.2
    )
    refined = knowledge.samples(random.Random(seed), 300)
    seen = {*view.cards, *view.pile}
    for sample in refined:
        assert nine in sample
        assert len(sample) == 10 == len(set(sample))
        assert not seen & set(sample)
    assert sum(knowledge.weights.values()) == pytest.approx(9)
    assert all(knowledge.probability(card) == 0.0 for card in seen)
    mean_plain = statistics.mean(_regret(s, king, nine) for s in plain)
    mean_refined = statistics.mean(_regret(s, king, nine) for s in refined)
    assert mean_plain > 1.5
    assert mean_refined < mean_plain / 3


def _melded_opponent(discarded: tuple[Card, ...]) -> Knowledge:
    """An opponent known to hold two melds (taken from the pile) and four hidden cards."""
    known = frozenset(parse_cards("Ac Ad Ah 2s 3s 4s"))
    mine = frozenset(parse_cards("Kc Kd Kh Qc Qd Qh Jc Jd Jh Tc"))
    seen = known | mine | set(discarded)
    knowledge = Knowledge(
        mine=mine,
        pile=discarded,
        opponent_known=known,
        opponent_size=10,
        passed=(),
        discarded=discarded,
        taken=tuple(sorted(known)),
        unseen=tuple(c for c in DECK if c not in seen),
        stock=20,
    )
    knowledge.weights = knowledge._weigh()
    knowledge.stock_mass = sum(1.0 - p for p in knowledge.weights.values())
    return knowledge


def test_a_hand_that_could_have_knocked_is_not_kept_once_the_opponent_declined_to() -> None:
    # With two melds known, many hands drawn for the opponent could knock. After it discarded
    # without knocking, the refined hands cannot; before it ever discarded, nothing is known.
    fresh, declined = _melded_opponent(()), _melded_opponent((Card.from_str("9s"),))
    for knowledge in (fresh, declined):
        knowledge.refine(
            random.Random(4), 300, beta=0.0, limit=10, declined=0.0, regret=0.0, keep=0.0
        )
    knockable = [
        statistics.mean(deadwood(s) <= 10 for s in k.samples(random.Random(4), 200))
        for k in (fresh, declined)
    ]
    assert knockable[0] > 0.2
    assert knockable[1] == 0.0


def test_the_hands_of_a_patient_opponent_are_its_own_and_lower_the_longer_it_drew() -> None:
    # A player that keeps its hand low holds less deadwood the more stock cards it has drawn
    # and thrown: the hands built for it hold its known cards, only unseen cards besides, and
    # fall in deadwood with every draw it made.
    knowledge = _melded_opponent(tuple(parse_cards("9s 8h 7c")))
    unseen = set(knowledge.unseen)
    means = []
    for turns in (0, 4, 12):
        hands = knowledge.patient_hands(random.Random(6), 150, turns)
        for hand in hands:
            assert len(hand) == 10 and len(set(hand)) == 10
            assert knowledge.opponent_known <= set(hand)
            assert set(hand) - knowledge.opponent_known <= unseen
        means.append(statistics.mean(deadwood(h) for h in hands))
    assert means[0] > means[1] + 3 > means[2] + 6
    assert knowledge.patient_hands(random.Random(6), 20, 4) == knowledge.patient_hands(
        random.Random(6), 20, 4
    )


def _hand_over(expert: ExpertEngine, seed: int, *, waits: bool) -> None:
    """One hand against ``camper`` (waits) or ``simple`` (knocks when it can); the table
    tells ``expert`` how it ended, as the referee does."""
    from engines.camper_engine import CamperEngine

    opponent = CamperEngine() if waits else SimpleEngine()
    log = play_game(Rules(target=1), [expert, opponent], "memory", seed)
    assert log.fault is None


def test_the_hands_of_a_match_tell_a_patient_opponent_from_one_that_knocks() -> None:
    # A hand that the opponent could have knocked with, past its first turns, and did not,
    # raises the chance that it waits for gin; a knock without gin past them lowers it. With
    # the model off, the chance stays 0.
    params = Params(waiting=0.5, wait_odds=10.0)
    against: dict[bool, list[float]] = {}
    for waits in (True, False):
        expert = ExpertEngine()
        expert.set_option("Movetime", "2")
        chances = [expert.waiting_prior(params)]
        for seed in range(12):
            _hand_over(expert, seed, waits=waits)
            chances.append(expert.waiting_prior(params))
        against[waits] = chances
        assert expert.waiting_prior(Params(waiting=0.0)) == 0.0
    assert against[True][0] == against[False][0] == pytest.approx(0.5)
    assert against[True][-1] > 0.9
    assert against[False][-1] < 0.1
    expert.on_new_match(NewMatch())
    assert expert.waiting_prior(params) == pytest.approx(0.5)


def test_the_strength_bench_changes_only_the_parameters_asked_for() -> None:
    from bench.expert_hands import TunedExpert, parse_changes

    changes = parse_changes(["danger_points=9", "worlds=0", "hold_for_gin=false"])
    assert changes == {"danger_points": 9.0, "worlds": 0, "hold_for_gin": False}
    tuned = TunedExpert(changes).params_for(20)
    plain = ExpertEngine().params_for(20)
    assert plain.worlds > 0
    assert (tuned.danger_points, tuned.worlds, tuned.hold_for_gin) == (9.0, 0, False)
    assert (
        dataclasses.replace(
            tuned,
            danger_points=plain.danger_points,
            worlds=plain.worlds,
            hold_for_gin=plain.hold_for_gin,
        )
        == plain
    )
    # The changed parameters are the ones its decisions are made with.
    view = _view(_hand("take", "discard Ks"), 0)
    used = TunedExpert(changes)._evaluator(view).params
    assert (used.danger_points, used.worlds, used.hold_for_gin) == (9.0, 0, False)
    assert ExpertEngine()._evaluator(view).params.worlds > 0
    for bad in ("nope=1", "worlds=x", "worlds"):
        with pytest.raises(ValueError, match="--set"):
            parse_changes([bad])


def test_the_strength_bench_gives_both_experts_the_shared_changes() -> None:
    from bench.expert_hands import experts

    base, tuned = experts({"waiting": 0.95, "wait_from": 6}, {"wait_from": 9}, 200)
    plain = ExpertEngine().params_for(20)
    assert dataclasses.replace(base.params_for(20), waiting=plain.waiting, wait_from=8) == plain
    assert (base.params_for(20).waiting, base.params_for(20).wait_from) == (0.95, 6)
    assert (tuned.params_for(20).waiting, tuned.params_for(20).wait_from) == (0.95, 9)
    assert (base.option("Movetime"), tuned.option("Movetime")) == (20, 200)
    # Without shared changes the baseline is the expert as it is.
    assert type(experts({}, {}, 20)[0]) is ExpertEngine


def test_the_strength_bench_plays_single_hands_under_the_rules_asked_for() -> None:
    from bench.expert_hands import parse_rules

    rules = parse_rules(["undercut_bonus=25", "knock-limit=5"])
    assert (rules.target, rules.undercut_bonus, rules.knock_limit) == (1, 25, 5)
    assert parse_rules([]) == Rules(target=1)
    for bad, said in [
        (["undercut_bonsu=25"], "did you mean 'undercut_bonus'"),
        (["undercut_bonus"], "expected NAME=VALUE"),
        (["target=100"], "single hand"),
    ]:
        with pytest.raises((ValueError, RulesError), match=said):
            parse_rules(bad)


def test_the_danger_bench_labels_each_card_by_the_opponents_hand_at_that_moment() -> None:
    from bench.danger_bound import FEATURES, PAIR_MASKS, Opponent, Recorder, Row, can_meld

    # The pairs that meld with a card: three of its rank, and the runs through it.
    counts = {str(c): len(PAIR_MASKS[c.index]) for c in parse_cards("As 2s 7s Ks")}
    assert counts == {"As": 4, "2s": 5, "7s": 6, "Ks": 4}
    seven = parse_cards("7s")[0]
    assert can_meld(seven, cards_mask(parse_cards("7h 7d 2c")))
    assert can_meld(seven, cards_mask(parse_cards("8s 9s")))
    assert not can_meld(seven, cards_mask(parse_cards("7h 8s 5s Kd")))

    class Checked(Recorder):
        def record(self, view: GameView, truth: int) -> None:
            # The opponent's hand as recorded is ten cards the expert cannot see.
            seen = cards_mask(view.hand.cards) | cards_mask(view.hand.pile)
            assert truth.bit_count() == 10 and not truth & seen
            super().record(view, truth)

    rows: list[Row] = []
    for key in range(3):
        opponent = Opponent()
        log = play_game(Rules(target=1), [Checked(opponent, rows, key), opponent], "bench", key)
        assert log.fault is None
    assert rows and all(len(features) == len(FEATURES) for _, _, features, _ in rows)
    assert {truth for *_, truth in rows} == {False, True}


def test_the_game_model_deals_each_hand_to_the_winner_of_the_last() -> None:
    from bench.game_model import game_score, lost_hands_won

    # Playing first wins 60, dealing loses 40. With the winner dealing the next hand, the
    # expert reaches 100 first whoever deals first: it wins first (60), loses dealing (40),
    # then plays first again (120). Were the loser to deal, every game that starts with the
    # expert dealing would be lost; were the dealer ignored, some would.
    hands = [(60, False), (-40, True)]
    assert game_score(hands, 400, seed=3) == 1.0
    assert 0.4 < game_score([(60, False), (-60, True)], 400, seed=3) < 0.6
    with pytest.raises(ValueError, match="drawn"):
        game_score([(0, False), (10, True)], 10, seed=3)

    # Turning lost hands into won ones keeps each seat's hands and draws from its own wins.
    hands = [(10, False), (-5, False), (-7, False), (30, True), (-20, True), (0, True)]
    assert sorted(lost_hands_won(hands, 0.0, seed=1)) == sorted(hands)
    turned = lost_hands_won(hands, 1.0, seed=1)
    assert sorted(turned) == sorted([(10, False)] * 3 + [(30, True), (30, True), (0, True)])
