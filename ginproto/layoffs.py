"""Layoffs: the defender's melds and layoffs against the knocker's melds (RULES.md, Showdown),
and the referee's choice of arrangement for a knocker who declared none.

A card is laid off onto a run through a chain from one of its ends, onto a three-card set as its
fourth card. ``best_layoffs`` tries every collection of the defender's own melds and lays off
what is left as far as chains reach; ``layable_count`` counts the cards that could be laid off,
and ``knocker_arrangement`` picks the least-deadwood arrangement that leaves the fewest unseen
cards to lay off. Cards are 52-bit masks inside (``ginproto.meld_masks``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ginproto.cards import DECK, Card
from ginproto.meld_masks import _RANK_COLUMNS, _VALUES, _hand_melds, _mask_cards
from ginproto.melds import (
    Arrangement,
    DefenderResult,
    Layoff,
    Meld,
    _arrangement,
    _arrangement_order,
    _meld_mask,
    _second,
    _to_mask,
    mask_value,
    optimal_arrangements,
)

__all__ = ["best_layoffs", "knocker_arrangement", "layable_count"]


class _Target:
    """A knocker's meld, as layoffs see it."""

    __slots__ = ("hi", "index", "is_run", "lo", "missing")

    def __init__(self, index: int, meld: Meld) -> None:
        self.index = index
        first, last = meld.cards[0], meld.cards[-1]
        self.is_run = first.rank != last.rank
        self.lo = first.suit * 13 + first.rank  # lowest card index of a run
        self.hi = last.suit * 13 + last.rank  # highest card index of a run
        # The one card that completes a 3-card set (none for a 4-card set).
        self.missing = 0
        if not self.is_run and len(meld.cards) == 3:
            self.missing = _RANK_COLUMNS[first.rank] & ~_meld_mask(meld)


def _lay_off(targets: Sequence[_Target], candidates: int) -> list[tuple[int, int]]:
    """Lay off as many of ``candidates`` as possible: ``[(card index, target index)]``.

    A card fits a run only through a chain from one of its ends, and every card that some chain
    reaches can be laid off (two runs of one suit meeting from both sides share the cards between
    them). A set takes only its fourth card, and a card that fits both a run end and a set is
    better on the run, where it may carry a chain; so runs go first, then sets. The list comes
    in laying order: by target, each chain outward.
    """
    laid: list[tuple[int, int]] = []
    left = candidates
    for t in targets:
        if t.is_run:
            i = t.lo - 1
            while i >= 0 and i % 13 != 12 and (left >> i) & 1:
                laid.append((i, t.index))
                left ^= 1 << i
                i -= 1
            i = t.hi + 1
            while i % 13 and (left >> i) & 1:
                laid.append((i, t.index))
                left ^= 1 << i
                i += 1
    for t in targets:
        if t.missing & left:
            laid.append((t.missing.bit_length() - 1, t.index))
            left ^= t.missing
    laid.sort(key=_second)  # stable: keeps each chain's laying order
    return laid


def layable_count(melds: Sequence[Meld], candidates: Iterable[Card]) -> int:
    """How many of ``candidates`` could be laid off onto ``melds``, chains included.

    On ``5s-6s-7s`` the candidates ``8s 9s`` both count; ``9s`` alone does not.
    """
    mask = 0
    for c in candidates:
        mask |= 1 << (c.suit * 13 + c.rank)
    for m in melds:
        mask &= ~_meld_mask(m)  # a meld's own cards are never candidates
    return len(_lay_off([_Target(i, m) for i, m in enumerate(melds)], mask))


def knocker_arrangement(cards: Iterable[Card], unseen: Iterable[Card]) -> Arrangement:
    """The referee's choice of arrangement for a knocker who declared none (RULES.md, Showdown).

    Among the least-deadwood arrangements of ``cards``, the one on which the fewest of the
    ``unseen`` cards (those the knocker cannot see) could be laid off; further ties go to the
    earliest in ``optimal_arrangements`` order. It never looks at the defender's hand.
    """
    hand = list(cards)
    options = optimal_arrangements(hand)
    if len(options) == 1:
        return options[0]
    held = set(hand)
    hidden = [c for c in unseen if c not in held]
    return min(options, key=lambda a: layable_count(a.melds, hidden))


def best_layoffs(knocker_melds: Sequence[Meld], defender_cards: Iterable[Card]) -> DefenderResult:
    """The defender's melds and layoffs that leave the least deadwood (RULES.md, Showdown).

    Every collection of the defender's own melds is tried (breaking up a meld to lay off its
    cards is one of them), and the cards left over are laid off as far as chains reach.

    Ties among equal deadwood are broken, in this order, by: more cards laid off (a defender
    holding ``8s-9s-Ts`` against the knocker's ``5s-6s-7s`` lays all three off rather than
    melding them), then fewer own melds, then the order of ``optimal_arrangements`` (the own
    melds' card indexes). Pass ``knocker_melds=()`` when no layoffs are allowed (the
    knocker went gin): the result is then the defender's ``best_melds`` arrangement.
    """
    hand, _ = _to_mask(defender_cards)
    targets = [_Target(i, m) for i, m in enumerate(knocker_melds)]
    melds = _hand_melds(hand)
    best_key: tuple[int, int, int] | None = None
    ties: list[tuple[list[int], list[tuple[int, int]]]] = []
    for coll in _meld_lists(melds):
        melded = 0
        for m in coll:
            melded |= m
        rest = hand & ~melded
        laid = _lay_off(targets, rest) if targets else []
        dw = mask_value(rest) - sum(_VALUES[i] for i, _ in laid)
        key = (dw, -len(laid), len(coll))
        if best_key is None or key < best_key:
            best_key, ties = key, [(coll, laid)]
        elif key == best_key:
            ties.append((coll, laid))
    arrangement, laid = min(
        ((_arrangement(hand, coll), laid) for coll, laid in ties),
        key=lambda pair: _arrangement_order(pair[0]),
    )
    left = hand
    for own in arrangement.melds:
        left &= ~_meld_mask(own)
    for i, _ in laid:
        left &= ~(1 << i)
    return DefenderResult(
        melds=arrangement.melds,
        layoffs=tuple(Layoff(DECK[i], t) for i, t in laid),
        deadwood_cards=_mask_cards(left),
    )


def _meld_lists(melds: list[tuple[int, int]]) -> list[list[int]]:
    """Every collection of pairwise-disjoint melds, as lists of meld masks (empty first)."""
    colls: list[tuple[int, list[int]]] = [(0, [])]
    for m, _ in melds:
        colls += [(u | m, [*lst, m]) for u, lst in colls if not u & m]
    return [lst for _, lst in colls]
