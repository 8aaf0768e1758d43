"""A deliberately plain gin rummy solver, independent of ``ginproto.melds``, for cross-checks.

It is written to be obviously right, not fast: a meld is tested against the definition in
RULES.md card by card, every candidate meld is found by trying every subset of a rank's or a
suit's cards, and the least deadwood is found by trying every way to cover the lowest card.
Layoffs are brute-forced over every order of laying cards onto every meld.
It shares nothing with ``ginproto.melds``; from ``ginproto`` it uses only ``Card``'s
``suit`` and ``rank``. Inside, a card is its ``(suit, rank)`` pair, so the solver does not rest
on ``Card``'s own comparison and hashing either (and plain tuples keep it quick enough to check
many hands); the public functions take and give ``Card``\\ s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import combinations

from ginproto.cards import Card

Group = frozenset[Card]
Pair = tuple[int, int]  # a card as (suit, rank)
Pairs = frozenset[Pair]


def card_value(card: Card) -> int:
    """Ace 1, two to ten their face value, J Q K 10 (rank 0 is the ace, 12 the king)."""
    return _value((card.suit, card.rank))


def _value(card: Pair) -> int:
    return min(card[1] + 1, 10)


def _pairs(cards: Iterable[Card]) -> Pairs:
    return frozenset((c.suit, c.rank) for c in cards)


def is_meld(cards: Iterable[Card]) -> bool:
    """RULES.md: 3 or 4 cards of one rank, or 3 or more consecutive cards of one suit, ace low."""
    return _is_meld([(c.suit, c.rank) for c in cards])


def _is_meld(group: list[Pair]) -> bool:
    if len(group) < 3 or len(set(group)) != len(group):
        return False
    ranks = sorted(rank for _, rank in group)
    if ranks[0] == ranks[-1]:  # one rank: a set
        return len(group) <= 4
    one_suit = len({suit for suit, _ in group}) == 1
    return one_suit and ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def _every_meld() -> list[Pairs]:
    """Every meld of the deck: each subset of 3+ cards of one rank or of one suit that passes
    the definition, in order of the sorted cards. (Every meld shares a rank or a suit, so
    nothing is missed.)"""
    deck = [(suit, rank) for suit in range(4) for rank in range(13)]
    groups = [[c for c in deck if c[1] == rank] for rank in range(13)]
    groups += [[c for c in deck if c[0] == suit] for suit in range(4)]
    found: set[Pairs] = set()
    for group in groups:
        for size in range(3, len(group) + 1):
            for subset in combinations(group, size):
                if _is_meld(list(subset)):
                    found.add(frozenset(subset))
    return sorted(found, key=sorted)


EVERY_MELD = _every_meld()
# Each meld of the deck under its lowest card.
MELDS_FROM: dict[Pair, list[Pairs]] = {}
for _meld in EVERY_MELD:
    MELDS_FROM.setdefault(min(_meld), []).append(_meld)


def _all_melds(hand: Pairs) -> list[Pairs]:
    return [meld for meld in EVERY_MELD if meld <= hand]


def all_melds(cards: Iterable[Card]) -> list[Group]:
    """Every meld inside ``cards``: the melds of the deck made of ``cards`` only."""
    card_of = {(c.suit, c.rank): c for c in cards}
    return [frozenset(card_of[p] for p in meld) for meld in _all_melds(frozenset(card_of))]


def _least_deadwood() -> Callable[[Pairs], int]:
    """A function giving the least deadwood of a group of cards (remembering the groups it has
    seen): the lowest card is either unmelded or in a meld inside the group, and the lowest
    card of the group is the lowest card of any such meld."""

    memo: dict[Pairs, int] = {frozenset(): 0}

    def least(left: Pairs) -> int:
        known = memo.get(left)
        if known is not None:
            return known
        card = min(left)
        result = _value(card) + least(left - {card})
        for meld in MELDS_FROM.get(card, ()):
            if meld <= left:
                result = min(result, least(left - meld))
        memo[left] = result
        return result

    return least


def deadwood(cards: Iterable[Card]) -> int:
    """The least deadwood of any arrangement of ``cards``."""
    hand = _pairs(cards)
    return _least_deadwood()(hand)


def discard_deadwoods(cards: Iterable[Card]) -> dict[Card, int]:
    """For each card ``c``: ``deadwood(cards - c)`` (one memo serves all the subsets)."""
    hand = frozenset(cards)
    pairs = _pairs(hand)
    least = _least_deadwood()
    return {c: least(pairs - {(c.suit, c.rank)}) for c in hand}


def knock_options(cards: Iterable[Card], limit: int) -> dict[Card, int]:
    """The discards after which the deadwood is at most ``limit``, with that deadwood."""
    return {c: d for c, d in discard_deadwoods(cards).items() if d <= limit}


def layoff_deadwood(knocker_melds: Iterable[Iterable[Card]], defender: Iterable[Card]) -> int:
    """The defender's least deadwood after melding and laying off onto ``knocker_melds``.

    Explores every sequence of layoffs (each card laid makes the meld it joins a bigger valid
    meld), collects every set of cards that can be laid off together, and melds the rest of
    the defender's cards optimally.
    """
    start = tuple(_pairs(m) for m in knocker_melds)
    hand = _pairs(defender)
    laid_sets: set[Pairs] = {frozenset()}
    seen = {(start, frozenset[Pair]())}
    todo = [(start, frozenset[Pair]())]
    while todo:
        melds, laid = todo.pop()
        for card in hand - laid:
            for k, meld in enumerate(melds):
                if _is_meld(list(meld | {card})):
                    state = ((*melds[:k], meld | {card}, *melds[k + 1 :]), laid | {card})
                    if state not in seen:
                        seen.add(state)
                        todo.append(state)
                        laid_sets.add(state[1])
    least = _least_deadwood()
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
