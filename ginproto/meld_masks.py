"""The bit-mask machinery of ``ginproto.melds``: a group of cards is a 52-bit int with bit
``card.index`` set for each card, its melds are found with a few mask operations and cached
per-suit tables, and the largest melded value of a group is found by enumerating the
collections of pairwise-disjoint melds, by a memoised search (many overlapping melds) or by a
sweep over the ranks (many cards).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product

from ginproto.cards import DECK, Card

_SUIT_BITS = 0x1FFF
_SUIT_MASKS = tuple(_SUIT_BITS << (13 * s) for s in range(4))
# Bits where a run of three may start: ranks A..J of each suit (so a run never wraps suits).
_RUN_STARTS = sum(0x7FF << (13 * s) for s in range(4))
_VALUES = tuple(c.value for c in DECK)
_RANK_COLUMNS = tuple(sum(1 << (13 * s + r) for s in range(4)) for r in range(13))
_NO_LIMIT = 1 << 30  # a knock limit that every discard meets
# Multiplying a 13-bit rank mask by this copies it into all four suits' rows.
_SPREAD = 1 | 1 << 13 | 1 << 26 | 1 << 39
# The point value of every 13-bit mask of one suit's cards.
_SUIT_VALUE = [0] * (1 << 13)
for _m in range(1, 1 << 13):
    _SUIT_VALUE[_m] = _SUIT_VALUE[_m & (_m - 1)] + _VALUES[(_m & -_m).bit_length() - 1]


def _mask_indexes(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _mask_cards(mask: int) -> tuple[Card, ...]:
    cards = []
    while mask:
        low = mask & -mask
        cards.append(DECK[low.bit_length() - 1])
        mask ^= low
    return tuple(cards)


def _runs_in_suit(suit_mask: int) -> tuple[tuple[int, int], ...]:
    """Every run (as ``(mask, value)``) inside one suit's cards, sub-runs included."""
    runs = []
    for start in range(52):
        if (suit_mask >> start) & 7 != 7 or start % 13 > 10:
            continue
        mask = value = 0
        stop = start
        while stop < 52 and (suit_mask >> stop) & 1 and (stop == start or stop % 13):
            mask |= 1 << stop
            value += _VALUES[stop]
            if stop - start >= 2:
                runs.append((mask, value))
            stop += 1
    return tuple(runs)


def _sets_in_column(column: int) -> tuple[tuple[int, int], ...]:
    """Every set inside one rank's cards: a 4-set gives itself and its four 3-subsets."""
    bits = [1 << i for i in _mask_indexes(column)]
    if len(bits) < 3:
        return ()
    value = _VALUES[bits[0].bit_length() - 1]
    sets = [(column, value * len(bits))]
    if len(bits) == 4:
        sets.extend((column ^ b, value * 3) for b in bits)
    return tuple(sets)


_RUN_CACHE: dict[int, tuple[tuple[int, int], ...]] = {}
_SET_TABLE: dict[int, tuple[tuple[int, int], ...]] = {}
for _r in range(13):
    for _sub in range(16):
        _col = sum(1 << (13 * s + _r) for s in range(4) if _sub >> s & 1)
        if _sets := _sets_in_column(_col):
            _SET_TABLE[_col] = _sets


def _meld_signs(hand: int) -> tuple[int, int]:
    """Where melds can be: the lowest card of every 3-card run (``starts``) and the ranks
    held three or four times (``three``, one bit in the clubs row per rank)."""
    starts = hand & (hand >> 1) & (hand >> 2) & _RUN_STARTS
    c = hand & _SUIT_BITS
    d = (hand >> 13) & _SUIT_BITS
    h = (hand >> 26) & _SUIT_BITS
    s = hand >> 39
    return starts, (c & d & (h | s)) | (h & s & (c | d))


def _melds_at(hand: int, starts: int, three: int) -> list[tuple[int, int]]:
    """Every meld (``(mask, value)``) of ``hand``, from its ``_meld_signs``."""
    melds: list[tuple[int, int]] = []
    if starts:
        for suit_mask in _SUIT_MASKS:
            if starts & suit_mask:
                key = hand & suit_mask
                runs = _RUN_CACHE.get(key)
                if runs is None:
                    runs = _RUN_CACHE[key] = _runs_in_suit(key)
                melds += runs
    while three:
        low = three & -three
        melds += _SET_TABLE[hand & _RANK_COLUMNS[low.bit_length() - 1]]
        three ^= low
    return melds


def _hand_melds(hand: int) -> list[tuple[int, int]]:
    """Every meld (``(mask, value)``) inside the cards of ``hand``, overlapping ones included."""
    return _melds_at(hand, *_meld_signs(hand))


def _collections(melds: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Every collection of pairwise-disjoint melds, as ``(union mask, melded value)``.

    The empty collection ``(0, 0)`` comes first.
    """
    colls = [(0, 0)]
    for m, v in melds:
        colls += [(u | m, w + v) for u, w in colls if not u & m]
    return colls


_ENUMERATE_LIMIT = 24  # above this many melds, search with memoisation instead of enumerating
_SWEEP_CARDS = 20  # above this many cards, sweep the ranks instead
_HAND_CARDS = 13  # knock_options enumerates collections for up to this many cards


def _max_melded(hand: int, melds: list[tuple[int, int]]) -> int:
    """The largest total value of pairwise-disjoint melds inside ``hand``."""
    if not melds:
        return 0
    if hand.bit_count() > _SWEEP_CARDS:
        return _sweep_max_melded(hand)
    if len(melds) <= _ENUMERATE_LIMIT:
        return max(w for _, w in _collections(melds))
    return _Search(melds).best(hand)


def _sweep_max_melded(hand: int) -> int:
    """The largest melded value inside ``hand``, by a sweep over the ranks from ace to king.

    The state is, per suit, the length of the run still open at the previous rank (0, 1, 2, or
    3 for "3 or more"). At each rank every card present is deadwood, in that rank's set (which
    must get 3 or 4 cards), or extends its suit's run; a run of 1 or 2 must be extended. The
    cost does not depend on how many melds overlap, so it suits large groups of cards, where
    enumerating collections explodes (``deadwood(DECK)``).
    """
    states: dict[tuple[int, ...], int] = {(0, 0, 0, 0): 0}
    for rank in range(13):
        present = [hand >> (13 * suit + rank) & 1 for suit in range(4)]
        value = _VALUES[rank]
        nxt: dict[tuple[int, ...], int] = {}
        for state, melded in states.items():
            # Per suit, the choices (new open-run length, role): 0 deadwood or absent, 1 set, 2 run.
            options: list[list[tuple[int, int]]] = []
            for suit in range(4):
                length = state[suit]
                if present[suit]:
                    choice = [(min(length + 1, 3), 2)]
                    if length in (0, 3):
                        choice += [(0, 0), (0, 1)]
                elif length in (1, 2):
                    break  # a run of one or two cards can no longer be completed
                else:
                    choice = [(0, 0)]
                options.append(choice)
            else:
                for combo in product(*options):
                    in_set = sum(1 for _, role in combo if role == 1)
                    if in_set in (1, 2):
                        continue
                    key = tuple(length for length, _ in combo)
                    total = melded + value * sum(1 for _, role in combo if role)
                    if nxt.get(key, -1) < total:
                        nxt[key] = total
        states = nxt
    return max(v for state, v in states.items() if all(length in (0, 3) for length in state))


class _Search:
    """Memoised search over the melds of a group of cards, for the least deadwood of a group
    with many overlapping melds and for listing every optimal arrangement.

    ``best(mask)`` decides the lowest card that some meld inside ``mask`` could cover: either
    it stays unmelded, or it goes into one of its melds. Each collection is reached once.
    """

    def __init__(self, melds: list[tuple[int, int]]) -> None:
        self.melds = melds
        self.memo: dict[int, int] = {}

    def _live(self, mask: int) -> list[tuple[int, int]]:
        return [(m, v) for m, v in self.melds if m & mask == m]

    def best(self, mask: int) -> int:
        memo = self.memo.get(mask)
        if memo is not None:
            return memo
        live = self._live(mask)
        result = 0
        if live:
            cover = 0
            for m, _ in live:
                cover |= m
            low = cover & -cover
            result = self.best(mask ^ low)
            for m, v in live:
                if m & low:
                    result = max(result, v + self.best(mask & ~m))
        self.memo[mask] = result
        return result

    def all_best(self, mask: int, target: int) -> Iterator[list[int]]:
        """Every collection (list of meld masks) inside ``mask`` melding exactly ``target``."""
        if target == 0:
            yield []
            return
        live = self._live(mask)
        cover = 0
        for m, _ in live:
            cover |= m
        low = cover & -cover
        if self.best(mask ^ low) == target:
            yield from self.all_best(mask ^ low, target)
        for m, v in live:
            if m & low and v + self.best(mask & ~m) == target:
                for rest in self.all_best(mask & ~m, target - v):
                    yield [m, *rest]
