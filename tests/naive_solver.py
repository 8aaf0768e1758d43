"""A deliberately plain gin rummy solver, independent of ``ginproto.melds``, for cross-checks.

It is written to be obviously right, not fast: a meld is tested against the definition in
RULES.md card by card, every candidate meld is found by trying every subset of a rank's or a
suit's cards, and the least deadwood is found by trying every way to cover the lowest card.
Layoffs are brute-forced over every order of laying cards onto every meld.
It shares nothing with ``ginproto.melds``; from ``ginproto`` it uses only ``Card``'s
``suit`` and ``rank``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from itertools import combinations

from ginproto.cards import Card

Group = frozenset[Card]


def card_value(card: Card) -> int:
    """Ace 1, two to ten their face value, J Q K 10 (rank 0 is the ace, 12 the king)."""
    return min(card.rank + 1, 10)


def is_meld(cards: Iterable[Card]) -> bool:
    """RULES.md: 3 or 4 cards of one rank, or 3 or more consecutive cards of one suit, ace low."""
    group = list(cards)
    if len(group) < 3 or len(set(group)) != len(group):
        return False
    if len({c.rank for c in group}) == 1:
        return len(group) <= 4
    if len({c.suit for c in group}) != 1:
        return False
    ranks = sorted(c.rank for c in group)
    return all(ranks[k + 1] == ranks[k] + 1 for k in range(len(ranks) - 1))


def all_melds(cards: Iterable[Card]) -> list[Group]:
    """Every meld inside ``cards``: each subset of 3+ cards sharing a rank or a suit that
    passes ``is_meld``. (Every meld shares a rank or a suit, so nothing is missed.)"""
    hand = frozenset(cards)
    groups: list[list[Card]] = []
    for rank in range(13):
        groups.append(sorted(c for c in hand if c.rank == rank))
    for suit in range(4):
        groups.append(sorted(c for c in hand if c.suit == suit))
    found: set[Group] = set()
    for group in groups:
        for size in range(3, len(group) + 1):
            for subset in combinations(group, size):
                if is_meld(subset):
                    found.add(frozenset(subset))
    return sorted(found, key=lambda m: sorted((c.suit, c.rank) for c in m))


def _least_deadwood(cards: Iterable[Card]) -> Callable[[Group], int]:
    """A function giving the least deadwood of any subset of ``cards``: the lowest card is
    either unmelded or in one of the melds that contain it."""
    melds = all_melds(cards)

    @cache
    def least(left: Group) -> int:
        if not left:
            return 0
        card = min(left)
        result = card_value(card) + least(left - {card})
        for meld in melds:
            if card in meld and meld <= left:
                result = min(result, least(left - meld))
        return result

    return least


def deadwood(cards: Iterable[Card]) -> int:
    """The least deadwood of any arrangement of ``cards``."""
    hand = frozenset(cards)
    return _least_deadwood(hand)(hand)


def discard_deadwoods(cards: Iterable[Card]) -> dict[Card, int]:
    """For each card ``c``: ``deadwood(cards - c)`` (one memo serves all the subsets)."""
    hand = frozenset(cards)
    least = _least_deadwood(hand)
    return {c: least(hand - {c}) for c in hand}


def knock_options(cards: Iterable[Card], limit: int) -> dict[Card, int]:
    """The discards after which the deadwood is at most ``limit``, with that deadwood."""
    return {c: d for c, d in discard_deadwoods(cards).items() if d <= limit}


def layoff_deadwood(knocker_melds: Iterable[Iterable[Card]], defender: Iterable[Card]) -> int:
    """The defender's least deadwood after melding and laying off onto ``knocker_melds``.

    Explores every sequence of layoffs (each card laid makes the meld it joins a bigger valid
    meld), collects every set of cards that can be laid off together, and melds the rest of
    the defender's cards optimally.
    """
    start = tuple(frozenset(m) for m in knocker_melds)
    hand = frozenset(defender)
    laid_sets: set[Group] = {frozenset()}
    seen = {(start, frozenset[Card]())}
    todo = [(start, frozenset[Card]())]
    while todo:
        melds, laid = todo.pop()
        for card in hand - laid:
            for k, meld in enumerate(melds):
                if is_meld(meld | {card}):
                    state = ((*melds[:k], meld | {card}, *melds[k + 1 :]), laid | {card})
                    if state not in seen:
                        seen.add(state)
                        todo.append(state)
                        laid_sets.add(state[1])
    least = _least_deadwood(hand)
    return min(least(hand - laid) for laid in laid_sets)


def arrangements(cards: Iterable[Card]) -> list[frozenset[Group]]:
    """Every collection of pairwise-disjoint melds inside ``cards``, the empty one included."""
    melds = all_melds(cards)
    found: list[frozenset[Group]] = []

    def extend(chosen: list[Group], used: Group, start: int) -> None:
        found.append(frozenset(chosen))
        for k in range(start, len(melds)):
            if not melds[k] & used:
                extend([*chosen, melds[k]], used | melds[k], k + 1)

    extend([], frozenset(), 0)
    return found


def optimal_arrangements(cards: Iterable[Card]) -> set[frozenset[Group]]:
    """Every collection of melds that leaves the least deadwood."""
    hand = frozenset(cards)

    def left_over(melds: frozenset[Group]) -> int:
        melded = frozenset().union(*melds)
        return sum(card_value(c) for c in hand - melded)

    options = arrangements(hand)
    least = min(left_over(a) for a in options)
    return {a for a in options if left_over(a) == least}
