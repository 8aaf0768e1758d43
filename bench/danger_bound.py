"""How much sharper could the expert's danger be, read from the public play alone?

    python bench/danger_bound.py [--deals 1000] [--seed danger] [--jobs 2] [--folds 4]

The expert's discards are scored with a **danger**: its estimate of the chance that the
opponent holds two cards that meld with the discard. Told the exact answer, the expert gains
about +5 points per hand against ``simple`` (docs/EXPERT.md), so the question is whether a
better reading of the public play could come near it.

This bench plays single hands of the expert against ``simple`` in process, both seats of every
deal. At each of the expert's discards it records, for every card in its hand, public features
of that card (the expert's own danger, the danger from ``refine``'s weighted hands, its meld
partners' chances, how many are dead, known in the opponent's hand, discarded or passed by it,
the values of its last discards, the stock left, ...) and whether the opponent really could
meld it. A gradient-boosted classifier is then fitted to the features, the hands split into folds
so that no hand is both trained and tested on, and the Brier scores of the base
rate, the expert's danger, ``refine``'s and the classifier's are printed, with the classifier's
against the expert's. The classifier needs scikit-learn (``pip install scikit-learn``); it is
a measuring instrument here, not part of the engine.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.expert_hands import Fault, add_deal_options, deal_ranges, play_in_pool  # noqa: E402
from engines.expert.knowledge import meld_partners  # noqa: E402
from engines.expert_engine import ExpertEngine  # noqa: E402
from engines.simple_engine import SimpleEngine  # noqa: E402
from ginproto.cards import DECK, Card  # noqa: E402
from ginproto.melds import cards_mask, is_meld  # noqa: E402
from ginproto.rules import Rules  # noqa: E402
from ginproto.sdk import GameView, Move  # noqa: E402
from ginproto.table import play_game  # noqa: E402

FEATURES = (
    "expert danger",
    "refine danger",
    "best pair chance",
    "partners' chances",
    "live pairs",
    "partners known held",
    "partners dead",
    "partners it discarded",
    "partners it passed",
    "value",
    "its last discard's value",
    "value over its last discard",
    "least value of its last 3 discards",
    "stock",
    "its hidden cards",
    "turns",
)

# For each card index, the pairs of cards that meld with it, as masks (from the rules core).
PAIR_MASKS: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        cards_mask(pair)
        for pair in itertools.combinations(meld_partners(card), 2)
        if is_meld((card, *pair))
    )
    for card in DECK
)


def can_meld(card: Card, hand: int) -> bool:
    """Whether the cards of the mask ``hand`` hold two that meld with ``card``."""
    return any(hand & pair == pair for pair in PAIR_MASKS[card.index])


# The hand, the position in it, the card's features, whether the opponent could meld it.
Row = tuple[int, int, list[float], bool]


class Opponent(SimpleEngine):
    """``simple``, keeping its hand as it stands between its turns for the bench to read."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: frozenset[Card] | None = None

    def offer(self, view: GameView) -> Move:
        self.cards = frozenset(view.hand.cards)
        return super().offer(view)

    def discard(self, view: GameView) -> Move:
        move = super().discard(view)
        self.cards = frozenset(c for c in view.hand.cards if c != move.card)
        return move


class Recorder(ExpertEngine):
    """The expert, recording the features of every card in its hand at each discard."""

    def __init__(self, opponent: Opponent, rows: list[Row], hand: int) -> None:
        super().__init__()
        self.opponent = opponent
        self.rows = rows
        self.hand = hand
        self.positions = 0

    def discard(self, view: GameView) -> Move:
        if self.opponent.cards is not None:
            self.record(view, cards_mask(self.opponent.cards))
        return super().discard(view)

    def record(self, view: GameView, truth: int) -> None:
        evaluator = self._evaluator(view)
        k = evaluator.knowledge
        hand = view.hand
        dead = cards_mask(hand.cards) | cards_mask(hand.pile)
        weights = k.population_weights
        total = sum(weights)
        population = [cards_mask(h) for h in k.population]
        last = k.discarded[-1].value if k.discarded else -1
        recent = min((c.value for c in k.discarded[-3:]), default=-1)
        self.positions += 1
        for card in hand.cards:
            pairs = PAIR_MASKS[card.index]
            danger = evaluator.danger(card)
            held = sum(w for h, w in zip(population, weights, strict=True) if can_meld(card, h))
            partners = meld_partners(card)
            features = [
                danger,
                held / total if total > 0 else danger,
                max((_pair_chance(k.probability, p) for p in pairs), default=0.0),
                sum(k.probability(p) for p in partners),
                sum(1 for p in pairs if not p & dead),
                sum(p in k.opponent_known for p in partners),
                (cards_mask(partners) & dead).bit_count(),
                sum(p in k.discarded for p in partners),
                sum(p in k.passed for p in partners),
                card.value,
                last,
                card.value - last,
                recent,
                hand.stock,
                k.hidden_count,
                len(hand.history),
            ]
            meldable = can_meld(card, truth)
            self.rows.append((self.hand, self.positions, [float(f) for f in features], meldable))


def _pair_chance(probability: Callable[[Card], float], pair: int) -> float:
    """The product of the chances that the opponent holds each card of the mask ``pair``."""
    out = 1.0
    for i in range(52):
        if pair >> i & 1:
            out *= probability(DECK[i])
    return out


def play_deals(job: tuple[range, str]) -> list[Row]:
    """The rows of every expert discard in the deals of the range, both seats of each."""
    keys, seed = job
    rules = Rules(target=1)
    rows: list[Row] = []
    for key in keys:
        for seat in (0, 1):
            opponent = Opponent()
            expert = Recorder(opponent, rows, 2 * key + seat)
            players = [expert, opponent] if seat == 0 else [opponent, expert]
            log = play_game(rules, players, seed, key)
            if log.fault is not None:
                raise Fault(f"seat {seat}, deal {key} of seed {seed!r}: {log.fault}")
    return rows


def brier(predictions: Sequence[float], truths: Sequence[bool]) -> float:
    """The mean squared difference between the predictions and the truths (0 or 1)."""
    return sum((p - t) ** 2 for p, t in zip(predictions, truths, strict=True)) / len(truths)


def classify(rows: Sequence[Row], folds: int) -> list[float]:
    """The classifier's prediction for every row, each made by a model fitted on the other
    folds. Rows are assigned to folds by hand: the positions of one hand share the opponent's
    cards, so a model tested on a hand never saw it."""
    ensemble: Any = importlib.import_module("sklearn.ensemble")
    predictions = [0.0] * len(rows)
    for fold in range(folds):
        train = [r for r in rows if r[0] % folds != fold]
        test = [i for i, r in enumerate(rows) if r[0] % folds == fold]
        if not test:
            continue
        labels = {r[3] for r in train}
        if len(labels) < 2:  # too few hands to learn from: the training rows' one answer
            answer = float(labels.pop()) if labels else 0.0
            for i in test:
                predictions[i] = answer
            continue
        model = ensemble.HistGradientBoostingClassifier(
            max_iter=400, learning_rate=0.05, max_leaf_nodes=31, min_samples_leaf=100
        )
        model.fit([r[2] for r in train], [int(r[3]) for r in train])
        chances = model.predict_proba([rows[i][2] for i in test])
        for i, row in zip(test, chances, strict=True):
            predictions[i] = float(row[1])
    return predictions


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_deal_options(parser, deals=1000, seed="danger")
    parser.add_argument("--folds", type=int, default=4, help="folds of the cross-validation")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.jobs < 1 or args.folds < 2:
        parser.error("--deals and --jobs must be at least 1, --folds at least 2")
    if 2 * args.deals < args.folds:
        parser.error("--folds cannot exceed the hands played (two per deal)")
    try:
        importlib.import_module("sklearn")
    except ImportError:
        parser.error("the classifier needs scikit-learn: pip install scikit-learn")
    jobs = [(deals, args.seed) for deals in deal_ranges(args.deals)]
    try:
        rows = play_in_pool(
            play_deals,
            jobs,
            [len(job[0]) for job in jobs],
            args.jobs,
            lambda done: f"{len(done)} cards",
        )
    except Fault as fault:
        print(f"\ndanger_bound: a hand ended in a fault, {fault}", file=sys.stderr)
        return 1
    if not rows:
        print("danger_bound: no discard was recorded", file=sys.stderr)
        return 1
    truths = [r[3] for r in rows]
    rate = sum(truths) / len(truths)
    expert = brier([r[2][0] for r in rows], truths)
    refined = brier([r[2][1] for r in rows], truths)
    print(f"fitting a classifier: {len(FEATURES)} features, {args.folds} folds", file=sys.stderr)
    learned = brier(classify(rows, args.folds), truths)
    positions = len({(r[0], r[1]) for r in rows})
    print(
        f"{positions} expert discards against simple ({args.deals} deals from both seats, "
        f"seed {args.seed!r}): {len(rows)} cards, {rate:.1%} of them meldable by the opponent"
    )
    print("  Brier score (lower is better; 0 is the exact danger)")
    print(f"    the base rate alone          {brier([rate] * len(rows), truths):.4f}")
    print(f"    the expert's danger          {expert:.4f}")
    print(f"    refine's weighted hands      {refined:.4f}")
    print(f"    the classifier               {learned:.4f}")
    print(f"  classifier / expert            {learned / expert:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
