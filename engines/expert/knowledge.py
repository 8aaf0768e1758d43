"""What one seat can infer about the opponent's hand from the hand's public history.

Every card is in exactly one place: this seat's hand, the discard pile, the opponent's hand, or
the stock. This seat sees its own cards and the pile. Replaying the history (the first upcard,
then every take, pass, draw and discard) tells which cards the opponent **took** from the pile
and still holds (known for certain to be in its hand), which it **discarded**, and which it
**passed on** (left on the pile when it drew from the stock, or passed as the first upcard).
Every other card is **unseen**: in the opponent's hand or in the stock.

The unseen cards are not equally likely to be in the opponent's hand. A player who passes on a
card, or throws one away, rarely holds two cards that meld with it; a player who takes a card
from the pile usually does. ``Knowledge.weights`` turns these signals into a probability for
each unseen card, scaled so that the probabilities add up to the number of cards of the
opponent's hand that are not known; ``sample`` draws whole opponent hands from them.

Those probabilities are per card, and a hand drawn from them card by card is a random one: it
holds far more deadwood than a player's hand does, since a player keeps its melds and throws
its high unmatched cards away (against ``simple``, 14 points more on average). ``samples``
corrects this by resampling: it draws several times as many hands and keeps them with weight
``exp(-beta * deadwood)``.

Whole hands also explain the opponent's play in ways single cards cannot. ``refine`` draws a few
hundred hands and weighs each by how well it explains what the opponent just did: a hand that
could have knocked (or gone gin) after its last discard probably is not its hand, since it did
not; a hand in which its last discard kept points of deadwood that another discard would have
shed is less likely the more points it kept. The weighted share of each card in those hands
becomes its probability (against ``simple``, the log-loss of the probabilities on the real
hands fell from 0.560 to 0.552), and the weighted hands are what ``samples`` then draws.

An opponent that **waits for gin** keeps a far lower hand than those weighted hands: against the
expert, ``camper`` held 26 points of deadwood at its 3rd to 5th discard, 13 at its 6th to 8th and
7 from its 9th, where the weighted hands held 34, 29 and 23. Weighing random hands cannot reach
such hands (too few are that low), so ``patient_hands`` builds them the way such a player does:
a hand drawn from the inference, then one stock card drawn and the worst card thrown for every
stock draw the opponent made. Those hands held 25, 15 and 7 points at the same points, and the
chance that they undercut the expert's knock (0.12, 0.35, 0.54) was near the real one (0.03,
0.36, 0.48), where the weighted hands gave 0.03, 0.06 and 0.10.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

from ginproto.cards import DECK, Card
from ginproto.hand import HandView
from ginproto.melds import (
    cards_mask,
    mask_best_discard,
    mask_deadwood,
    mask_knock_options,
    mask_least_discard,
)
from ginproto.moves import MoveKind
from ginproto.search import HAND_SIZE

__all__ = ["PARTNER_MASKS", "Knowledge", "meld_partners"]


# How much a signal about card x changes the odds that the opponent holds a card that melds
# with x. Tuned by self-play against the built-in engines.
PASSED_FACTOR = 0.55
DISCARDED_FACTOR = 0.7
TAKEN_FACTOR = 1.8
MAX_PROBABILITY = 0.97
WAITER_KNOCKING_TURNS = 3
"""The turns of a hand in which an opponent that waits for gin is modelled to knock when it can
(as ``camper`` does); after them it knocks only with gin."""


def meld_partners(card: Card) -> tuple[Card, ...]:
    """The cards that can share a meld with ``card`` next to it: the other three of its rank,
    and its suit neighbours one and two ranks away."""
    return _PARTNERS[card.index]


def _partners(card: Card) -> tuple[Card, ...]:
    out = [c for c in DECK if c.rank == card.rank and c != card]
    for step in (-2, -1, 1, 2):
        rank = card.rank + step
        if 0 <= rank < 13:
            out.append(DECK[card.suit * 13 + rank])
    return tuple(out)


_index = attrgetter("index")
_PARTNERS: tuple[tuple[Card, ...], ...] = tuple(_partners(c) for c in DECK)
PARTNER_MASKS: tuple[int, ...] = tuple(sum(1 << p.index for p in ps) for ps in _PARTNERS)
"""``meld_partners`` of each card index, as a mask with bit ``card.index`` per partner."""


@dataclass
class Knowledge:
    """The inference of one seat about its opponent, from a ``HandView``."""

    mine: frozenset[Card]
    pile: tuple[Card, ...]
    opponent_known: frozenset[Card]
    opponent_size: int
    passed: tuple[Card, ...]
    discarded: tuple[Card, ...]
    taken: tuple[Card, ...]
    unseen: tuple[Card, ...]
    stock: int
    weights: dict[Card, float] = field(default_factory=dict)
    stock_mass: float = 0.0
    last_discard: Card | None = None  # the opponent's discard on its last turn ...
    last_taken: Card | None = None  # ... and the pile card it took on that turn, if any
    population: list[tuple[Card, ...]] = field(default_factory=list)
    population_weights: list[float] = field(default_factory=list)
    stock_draws: int = 0  # the opponent's draws from the stock in this hand

    @classmethod
    def of(cls, hand: HandView) -> Knowledge:
        """Replay ``hand.history`` from the first upcard and collect what the opponent did."""
        me = hand.seat
        upcard = hand.upcard
        pile: list[Card] = [upcard] if upcard is not None else []
        known: set[Card] = set()
        size = HAND_SIZE
        passed: list[Card] = []
        discarded: list[Card] = []
        taken: list[Card] = []
        draws = 0
        last_discard: Card | None = None
        last_taken: Card | None = None
        took: Card | None = None
        for turn in hand.history:
            kind = turn.move.kind
            theirs = turn.seat != me
            if kind is MoveKind.PASS or kind is MoveKind.STOCK:
                if theirs and pile:
                    passed.append(pile[-1])
                if theirs and kind is MoveKind.STOCK:
                    size += 1
                    draws += 1
            elif kind is MoveKind.TAKE or kind is MoveKind.PILE:
                card = pile.pop() if pile else turn.card
                if theirs and card is not None:
                    known.add(card)
                    taken.append(card)
                    size += 1
                    took = card
            elif kind is MoveKind.DISCARD or kind is MoveKind.KNOCK:
                card = turn.move.card
                if card is not None:
                    pile.append(card)
                    if theirs:
                        known.discard(card)
                        discarded.append(card)
                        size -= 1
                        last_discard, last_taken, took = card, took, None
        mine = frozenset(hand.cards)
        seen = mine | set(hand.pile) | known
        unseen = tuple(c for c in DECK if c not in seen)
        knowledge = cls(
            mine=mine,
            pile=hand.pile,
            opponent_known=frozenset(known),
            opponent_size=size,
            passed=tuple(passed),
            discarded=tuple(discarded),
            taken=tuple(taken),
            unseen=unseen,
            stock=hand.stock,
            last_discard=last_discard,
            last_taken=last_taken,
            stock_draws=draws,
        )
        knowledge.weights = knowledge._weigh()
        knowledge.stock_mass = sum(1.0 - p for p in knowledge.weights.values())
        return knowledge

    @property
    def hidden_count(self) -> int:
        """How many cards of the opponent's hand this seat cannot name."""
        return max(0, self.opponent_size - len(self.opponent_known))

    def _weigh(self) -> dict[Card, float]:
        odds = dict.fromkeys(self.unseen, 1.0)
        for cards, factor in (
            (self.passed, PASSED_FACTOR),
            (self.discarded, DISCARDED_FACTOR),
            (self.taken, TAKEN_FACTOR),
        ):
            for card in cards:
                if card in self.mine:
                    continue
                for partner in _PARTNERS[card.index]:
                    if partner in odds:
                        odds[partner] *= factor
        return _normalise(odds, self.hidden_count)

    def probability(self, card: Card) -> float:
        """The probability that the opponent holds ``card`` now."""
        if card in self.opponent_known:
            return 1.0
        return self.weights.get(card, 0.0)

    def stock_probability(self, card: Card) -> float:
        """The probability that ``card`` is the next card of the stock."""
        p = self.weights.get(card)
        if p is None or self.stock_mass <= 0:
            return 0.0
        return (1.0 - p) / self.stock_mass

    def sample(self, rng: random.Random) -> tuple[Card, ...]:
        """One opponent hand drawn from the inference: the known cards plus hidden cards drawn
        without replacement with the unseen cards' weights."""
        return self._draw(self._pool(), rng.random)

    def samples(
        self, rng: random.Random, count: int, beta: float = 0.0, ratio: int = 1
    ) -> list[tuple[Card, ...]]:
        """``count`` opponent hands. With ``beta`` and a ``ratio`` above 1, ``ratio`` times as
        many are drawn and ``count`` of them resampled with weight ``exp(-beta * deadwood)``.
        Otherwise each is one ``sample``. Once ``refine`` has run, they are drawn from its
        weighted hands instead."""
        if self.population:
            return rng.choices(self.population, weights=self.population_weights, k=count)
        return self._fresh_samples(rng, count, beta, ratio)

    def _fresh_samples(
        self, rng: random.Random, count: int, beta: float, ratio: int
    ) -> list[tuple[Card, ...]]:
        pool = self._pool()
        uniform = rng.random
        if beta <= 0 or ratio <= 1:
            return [self._draw(pool, uniform) for _ in range(count)]
        candidates = [self._draw(pool, uniform) for _ in range(count * ratio)]
        weights = [math.exp(-beta * mask_deadwood(cards_mask(hand))) for hand in candidates]
        return rng.choices(candidates, weights=weights, k=count)

    def refine(
        self,
        rng: random.Random,
        size: int,
        *,
        beta: float,
        limit: int,
        declined: float,
        regret: float,
        keep: float,
    ) -> None:
        """Sharpen the per-card probabilities with what whole hands explain: draw ``size``
        hands from them and weigh each by how well it explains the opponent's play (low
        deadwood, ``beta``; a hand that could have knocked and did not, ``declined``; its last
        discard, ``exp(-regret * points)`` for the points of deadwood it kept that another
        discard would have shed). The new probability of a card is its weighted share of the
        hands, mixed with ``keep`` of the old one; the weighted hands are kept for
        ``samples``."""
        need = self.hidden_count
        if need <= 0 or size <= 0 or not self.unseen:
            return
        pool = self._pool()
        uniform = rng.random
        hands = [self._draw(pool, uniform) for _ in range(size)]
        weights: list[float] = []
        last = self.last_discard
        banned = -1 if self.last_taken is None else self.last_taken.index
        for hand in hands:
            mask = cards_mask(hand)
            dw = mask_deadwood(mask)
            w = math.exp(-beta * dw)
            shown = 1.0  # the evidence of the last discard
            if last is not None and regret > 0:
                # The deadwood its last discard kept (the hand drawn never holds that card,
                # which is in the pile or this seat's hand), against its best other discard.
                bit = 1 << last.index
                kept = dw if not mask & bit else mask_deadwood(mask ^ bit)
                best = mask_least_discard(mask | bit, banned)
                shown = math.exp(-regret * (kept - best))
            factor = 1.0
            if self.discarded and dw <= limit:
                factor = declined * declined if dw == 0 else declined
            weights.append(w * factor * shown)
        total = sum(weights)
        if total <= 0:
            return
        share = [0.0] * 52  # by card index; only the unseen cards' entries are read
        for hand, w in zip(hands, weights, strict=True):
            for card in hand:
                share[card.index] += w
        old = self.weights
        new = {c: keep * old[c] + (1 - keep) * share[c.index] / total for c in self.unseen}
        self.weights = _normalise(new, need)
        self.stock_mass = sum(1.0 - p for p in self.weights.values())
        self.population = hands
        self.population_weights = weights

    def patient_hands(self, rng: random.Random, count: int, turns: int) -> list[tuple[Card, ...]]:
        """``count`` hands of an opponent that keeps its hand low, each built as such a player
        builds one: a hand drawn from the inference, then ``turns`` times an unseen card not in
        it is drawn (uniformly) and the card that leaves the least deadwood is thrown (never a
        card the opponent is known to hold; ties to the higher card). A card thrown is not
        drawn again. The hands hold the known cards and unseen ones only."""
        pool = self._pool()
        uniform = rng.random
        known = cards_mask(self.opponent_known)
        unseen = [c.index for c in self.unseen]
        out: list[tuple[Card, ...]] = []
        for _ in range(count):
            hand = cards_mask(self._draw(pool, uniform))
            free = [i for i in unseen if not hand >> i & 1]
            for _ in range(turns):
                if not free:
                    break
                drawn = free.pop(rng.randrange(len(free)))
                hand |= 1 << drawn
                card, _ = mask_best_discard(hand)
                if known >> card & 1:
                    options = mask_knock_options(hand, 1 << 20)
                    card = min(
                        (i for i in options if not known >> i & 1),
                        key=lambda i: (options[i], -DECK[i].value, i),
                    )
                hand &= ~(1 << card)
            out.append(tuple(DECK[i] for i in range(52) if hand >> i & 1))
        return out

    def _pool(self) -> _Pool:
        """What ``_draw`` draws from: the known cards in order, and the unseen cards, each
        with the inverse of its weight (``_draw``'s exponent)."""
        return _Pool(
            tuple(sorted(self.opponent_known, key=_index)),
            [1.0 / max(1e-6, self.weights[c]) for c in self.unseen],
            list(self.unseen),
            min(self.hidden_count, len(self.unseen)),
        )

    @staticmethod
    def _draw(pool: _Pool, uniform: Callable[[], float]) -> tuple[Card, ...]:
        """The known cards plus the hidden ones drawn from ``pool`` without replacement, each
        in proportion to its weight, all at once (Efraimidis and Spirakis): the cards with the
        largest ``u ** (1 / weight)``, ``u`` uniform, one ``u`` per card in pool order (on a
        tie the earlier card wins)."""
        need = pool.need
        if need <= 0:
            return pool.known
        exponents = pool.exponents
        keys = list(map(pow, [uniform() for _ in exponents], exponents))
        chosen = sorted(range(len(keys)), key=keys.__getitem__, reverse=True)[:need]
        return (*pool.known, *map(pool.cards.__getitem__, chosen))


class _Pool(NamedTuple):
    """``Knowledge._draw``'s input: the known cards (by index), the unseen cards with their
    exponents, and how many of those a hand needs."""

    known: tuple[Card, ...]
    exponents: list[float]
    cards: list[Card]
    need: int


def _normalise(odds: dict[Card, float], total: int) -> dict[Card, float]:
    """Scale ``odds`` into probabilities summing to ``total``, none above ``MAX_PROBABILITY``."""
    if not odds:
        return {}
    if total <= 0:
        return dict.fromkeys(odds, 0.0)
    probs = dict(odds)
    fixed: dict[Card, float] = {}
    for _ in range(8):
        free = {c: w for c, w in probs.items() if c not in fixed}
        mass = sum(free.values())
        left = total - sum(fixed.values())
        if mass <= 0 or left <= 0:
            break
        scale = left / mass
        over = [c for c, w in free.items() if w * scale > MAX_PROBABILITY]
        if not over:
            return {**fixed, **{c: w * scale for c, w in free.items()}}
        for c in over:
            fixed[c] = MAX_PROBABILITY
    return {c: fixed.get(c, min(MAX_PROBABILITY, probs[c])) for c in probs}
