"""The expert's evaluation: expected deadwood after the next draw, the danger of a discard, and
the value of knocking now, all measured with the rules core (``ginproto.melds``).

**Expected deadwood.** A 10-card hand is worth the deadwood it is expected to have after one more
draw from the stock and the best discard: ``E1(H) = sum over unseen u of P(u is next) *
min_d deadwood(H + u - d)``. It rewards hands with many live outs (a card that completes a meld
and is not already dead in the pile or known in the opponent's hand) as well as low deadwood.
A discard is scored ``E1 + raw * deadwood - knock_weight * P1``:

- the plain deadwood counts once more, because an opponent who knocks early catches a hand with
  its deadwood as it is; ``raw`` grows from ``raw_weight`` to ``raw_weight + raw_late`` as the
  stock is drawn, because the later in the hand, the likelier the opponent is to knock first;
- ``P1`` is the chance that the hand can knock after the next stock draw. The hand is a race to
  knock: a discard that keeps a way to knock next turn is worth far more than its expected
  deadwood says (against ``simple``, weighing this at 80 points took the score from 64 % to
  70 % over 600 paired games).

With more time (``deep_discards``) the best few discards are looked at two draws deep.

**Danger.** A discard the opponent can meld is a gift: the chance that it holds two cards that
meld with it (from ``Knowledge``'s probabilities) costs ``DANGER_POINTS`` points.

**Drawing.** The pile's top card is taken when the hand after taking it and discarding is
expected to be better, one draw later, than the hand after a draw from the stock; both sides look
exactly one stock draw ahead.

**Knocking.** ``knock_value`` samples opponent hands from the inference (weighed toward the
low deadwood a real player holds) and scores each showdown with the rules core's own scoring
(``ginproto.search.score_showdown``, under the hand's rules): the mean score is the value of
knocking now. The engine compares it with
playing on, and with playing on for gin, in ``engines.expert.rollout``; with no
budget for that, it knocks when the value beats a threshold that shrinks as the stock runs out
(near the two-card draw, any positive expectation beats a drawn hand). It always goes gin.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engines.expert.knowledge import PARTNER_MASKS, Knowledge, meld_partners
from engines.expert.rollout import Showdown
from ginproto.cards import DECK, Card
from ginproto.melds import (
    cards_mask,
    deadwood,
    mask_deadwood,
    mask_knock_options,
    mask_least_discard,
)
from ginproto.search import DEALT_STOCK, DRAW_STOCK

__all__ = ["Evaluator", "Params"]

_NO_LIMIT = 1 << 20
_VALUES = tuple(c.value for c in DECK)

# Deadwood figures depend on the cards alone, so they are kept across decisions (a hand changes
# by one card a turn, and most of the hands one decision looks at, the next looks at again).
_CACHE_LIMIT = 400_000


def _memo(figure: Callable[[int], int]) -> Callable[[int], int]:
    """``figure`` of a mask, kept in a plain dict that is emptied when full. The dict holds
    ints only, so Python's garbage collector never scans it (a cache of linked entries, such
    as ``functools.lru_cache``, made every full collection take about 100 ms)."""
    table: dict[int, int] = {}

    def memo(hand: int) -> int:
        found = table.get(hand)
        if found is None:
            if len(table) >= _CACHE_LIMIT:
                table.clear()
            found = table[hand] = figure(hand)
        return found

    return memo


_least = _memo(mask_least_discard)
_deadwood = _memo(mask_deadwood)


@dataclass(frozen=True)
class Params:
    """The tuned weights of the evaluation (points unless said otherwise)."""

    danger_points: float = 6.0
    knock_threshold: float = 4.0  # mean knock score needed with a full stock
    knock_late_threshold: float = 0.0  # ... and with four or fewer cards left
    take_margin: float = 0.0  # how much better taking must look than the stock
    knock_samples: int = 24
    deep_discards: int = 0  # discards also looked at two draws deep
    raw_weight: float = 0.2  # how much plain deadwood counts beside the expected deadwood...
    worlds: int = 0  # sampled worlds in which candidate moves are played out (0: none)
    candidates: int = 1  # discards (best by the evaluation) that are played out
    raw_late: float = 0.8  # ... plus this, in proportion to the stock drawn
    knock_weight: float = 80.0  # points per unit of chance to be able to knock next turn
    sample_beta: float = 0.05  # sampled opponent hands kept with weight exp(-beta * deadwood)...
    sample_ratio: int = 4  # ... out of this many times as many drawn
    hold_for_gin: bool = True  # a knock is weighed against playing on for gin too
    posterior: int = 0  # hands drawn to sharpen the inference (``Knowledge.refine``; 0: off)...
    regret: float = 1.0  # ... each weighed exp(-regret * points its last discard kept) ...
    declined: float = 0.3  # ... times this if it could have knocked and did not ...
    keep: float = 0.2  # ... and this much of the per-card probabilities kept
    waiting: float = 0.2  # prior chance that the opponent waits for gin (0: never modelled)...
    wait_odds: float = 10.0  # ... its odds times this for each hand of the match that showed it
    wait_from: int = 8  # ... its knocks scored against its hands from its discard number this
    hold_low: int = 0  # a knock also weighed against playing on to knock with this deadwood
    search: bool = False  # the draw and every discard searched too, not only the knock ...
    search_worlds: int = 0  # ... in this many sampled worlds per decision (0: none) ...
    search_candidates: int = 3  # ... among this many discards, best by the evaluation ...
    search_z: float = 2.0  # ... the evaluation's choice overridden only this many errors apart


class Evaluator:
    """The evaluation of one decision: ``Knowledge`` plus caches keyed by hand."""

    def __init__(
        self, knowledge: Knowledge, params: Params, rng: random.Random, knock_limit: int = 10
    ) -> None:
        self.knowledge = knowledge
        self.knock_limit = knock_limit
        self.params = params
        self.rng = rng
        # The cards that may come from the stock, as (bit, chance it is the next card, meld
        # partners' mask, value).
        self.outs: list[tuple[int, float, int, int]] = [
            (1 << c.index, p, PARTNER_MASKS[c.index], c.value)
            for c in knowledge.unseen
            if (p := knowledge.stock_probability(c)) > 0
        ]
        self._e1: dict[int, float] = {}
        self._p1: dict[int, float] = {}
        self._after: dict[int, dict[int, int]] = {}

    # -- deadwood, on 52-bit masks ---------------------------------------------------------
    def _after_mask(self, hand: int) -> dict[int, int]:
        """For each card index of the mask ``hand``, the least deadwood without it (cached)."""
        found = self._after.get(hand)
        if found is None:
            found = self._after[hand] = mask_knock_options(hand, _NO_LIMIT)
        return found

    def after_discards(self, cards: Sequence[Card]) -> dict[Card, int]:
        """For each card of ``cards``, the least deadwood without it (cached)."""
        return {DECK[i]: dw for i, dw in self._after_mask(cards_mask(cards)).items()}

    def expected(self, hand: Sequence[Card]) -> float:
        """``E1``: the expected least deadwood of the 10-card ``hand`` after one stock draw and
        the best discard."""
        return self._expected(cards_mask(hand))

    def _expected(self, key: int) -> float:
        found = self._e1.get(key)
        if found is not None:
            return found
        base = _deadwood(key)
        if not self.outs:
            self._e1[key] = float(base)
            return float(base)
        # The deadwood after dropping the best card, for a drawn card that melds with nothing.
        drop = _least(key)
        total = 0.0
        for bit, p, partners, value in self.outs:
            if key & bit:
                continue
            if (key & partners).bit_count() >= 2:
                total += p * _least(key | bit)
            else:
                total += p * min(base, drop + value)
        self._e1[key] = total
        return total

    def knock_chance(self, key: int) -> float:
        """The chance that the 10-card hand ``key`` (a mask) can knock after one stock draw
        and the best discard."""
        found = self._p1.get(key)
        if found is not None:
            return found
        base = _deadwood(key)
        drop = _least(key)
        limit = self.knock_limit
        total = mass = 0.0
        for bit, p, partners, value in self.outs:
            if key & bit:
                continue
            mass += p
            if (key & partners).bit_count() >= 2:
                after = _least(key | bit)
            else:
                after = min(base, drop + value)
            if after <= limit:
                total += p
        chance = total / mass if mass > 0 else float(base <= limit)
        self._p1[key] = chance
        return chance

    def opponent_hands(self, count: int) -> list[tuple[Card, ...]]:
        """``count`` opponent hands sampled from the inference, weighed toward low deadwood
        (``Knowledge.samples``)."""
        params = self.params
        return self.knowledge.samples(self.rng, count, params.sample_beta, params.sample_ratio)

    def patient_hands(self, count: int) -> list[tuple[Card, ...]]:
        """``count`` hands of an opponent that waits for gin (``Knowledge.patient_hands``):
        each improved by one stock draw for every stock draw the opponent has made."""
        return self.knowledge.patient_hands(self.rng, count, self.knowledge.stock_draws)

    # -- danger ----------------------------------------------------------------------------
    def danger(self, card: Card) -> float:
        """The probability that the opponent can meld ``card`` with two cards it holds."""
        prob = self.knowledge.probability
        same = meld_partners(card)[:3]
        pairs: list[tuple[Card, Card]] = [
            (same[0], same[1]),
            (same[0], same[2]),
            (same[1], same[2]),
        ]
        rank, base = card.rank, card.index - card.rank
        for lo, hi in ((-2, -1), (-1, 1), (1, 2)):
            if rank + lo >= 0 and rank + hi < 13:
                pairs.append((DECK[base + rank + lo], DECK[base + rank + hi]))
        miss = 1.0
        for a, b in pairs:
            pa = prob(a)
            if pa <= 0:
                continue
            pb = prob(b)
            if pb <= 0:
                continue
            miss *= 1.0 - pa * pb
        return 1.0 - miss

    # -- choices ---------------------------------------------------------------------------
    def expected_two_draws(self, hand: Sequence[Card]) -> float:
        """The expected ``E1`` after one more stock draw and the best discard: the 10-card
        ``hand`` looked at two draws deep. A drawn card that melds with nothing in the hand
        shifts ``E1`` by the change in plain deadwood; the others try their two best
        discards."""
        key = cards_mask(hand)
        here = self._expected(key)
        base = _deadwood(key)
        drop = _least(key)
        values = _VALUES
        total = 0.0
        mass = 0.0
        for bit, p, partners, value in self.outs:
            if key & bit:
                continue
            mass += p
            if (key & partners).bit_count() >= 2:
                drawn = key | bit
                dws = self._after_mask(drawn)
                best = sorted(dws, key=lambda i: (dws[i], -values[i]))[:2]
                total += p * min(self._expected(drawn ^ (1 << i)) for i in best)
            else:
                total += p * (here + min(0, drop + value - base))
        if mass <= 0:
            return here
        return total / mass

    def discard_scores(self, cards: Sequence[Card], allowed: Sequence[Card]) -> dict[Card, float]:
        """The score (lower is better) of discarding each of ``allowed`` from ``cards``: the
        expected deadwood one draw later, plus the plain deadwood and the danger, less the
        chance to knock next turn. With ``deep_discards``, the best few are scored two draws
        deep instead, and only those compete."""
        drawn = DEALT_STOCK - self.knowledge.stock
        progress = max(0.0, min(1.0, drawn / (DEALT_STOCK - DRAW_STOCK)))
        raw = self.params.raw_weight + self.params.raw_late * progress

        def score(card: Card, expected: Callable[[Sequence[Card]], float]) -> float:
            rest = [c for c in cards if c != card]
            value = expected(rest) + self.params.danger_points * self.danger(card)
            value += raw * deadwood(rest)
            if self.params.knock_weight:
                value -= self.params.knock_weight * self.knock_chance(cards_mask(rest))
            return value

        scores = {card: score(card, self.expected) for card in allowed}
        deep = self.params.deep_discards
        if deep > 1 and len(scores) > 1 and self.outs:
            top = sorted(scores, key=lambda c: (scores[c], -c.value, -c.index))[:deep]
            scores = {card: score(card, self.expected_two_draws) for card in top}
        return scores

    def take_gain(self, cards: Sequence[Card], top: Card) -> float:
        """How much better (in expected deadwood) taking ``top`` is than drawing from the
        stock; positive means take. Both sides look one stock draw past this one."""
        with_top = [*cards, top]
        after = self.after_discards(with_top)
        # Only the best few discards by plain deadwood are worth the full evaluation.
        options = sorted((c for c in after if c != top), key=lambda c: (after[c], -c.value))[:3]
        take = min(self.expected([c for c in with_top if c != d]) for d in options)
        if not self.outs:
            return 0.0
        return self.expected_two_draws(cards) - take

    def knock_value(self, showdown: Showdown) -> float:
        """The mean score of the knock ``showdown`` over sampled opponent hands, each scored
        by the rules core."""
        samples = max(1, self.params.knock_samples)
        total = sum(showdown.points(opponent) for opponent in self.opponent_hands(samples))
        return total / samples
