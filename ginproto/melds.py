"""Melds, deadwood and knock evaluation: the arithmetic of RULES.md's showdown (its layoffs
are in ``ginproto.layoffs``).

A **meld** is a set (3 or 4 cards of one rank) or a run (3 or more consecutive cards of one
suit, the ace always low). A card belongs to at most one meld, and a hand's **deadwood** is the
value of its unmelded cards under the arrangement that makes it smallest.

The value types (``Meld``, ``Arrangement``, ``Layoff``, ``DefenderResult``) are small frozen
dataclasses; ``Meld`` and ``Arrangement`` have one text form each (``"5s-6s-7s"``). The
functions are pure. Functions taking cards accept any iterable of distinct cards and raise
``ValueError`` on a repeated card.

Speed matters here: ``knock_options`` runs on every decision of every simulated hand. Internally a
group of cards is a 52-bit int (bit ``card.index``), the melds of a hand are found with a few mask
operations and cached per-suit tables (``ginproto.meld_masks``), and the knock evaluation of an
11-card hand enumerates the collections of pairwise-disjoint melds once for all eleven possible
discards: the arrangements of ``hand - c`` are exactly the collections of the hand's melds that
avoid ``c``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter

from ginproto.cards import DECK, Card, CardError
from ginproto.meld_masks import (
    _ENUMERATE_LIMIT,
    _HAND_CARDS,
    _NO_LIMIT,
    _RANK_COLUMNS,
    _RUN_STARTS,
    _SPREAD,
    _SUIT_BITS,
    _SUIT_VALUE,
    _VALUES,
    _hand_melds,
    _mask_cards,
    _mask_indexes,
    _max_melded,
    _meld_signs,
    _melds_at,
    _Search,
)

__all__ = [
    "Arrangement",
    "DefenderResult",
    "Layoff",
    "Meld",
    "MeldError",
    "MeldKind",
    "best_melds",
    "check_declared",
    "deadwood",
    "discard_deadwoods",
    "is_big_gin",
    "is_meld",
    "knock_options",
    "optimal_arrangements",
]


class MeldError(ValueError):
    """Cards that do not form a valid meld, malformed meld text, or a bad declared arrangement."""


class MeldKind(enum.Enum):
    """The two shapes of meld."""

    SET = "set"
    RUN = "run"

    def __str__(self) -> str:
        return self.value


def _canonical(cards: tuple[Card, ...]) -> tuple[Card, ...]:
    """The cards in canonical meld order (sets by suit, runs by rank), or ``MeldError``."""
    text = "-".join(str(c) for c in cards)
    if len(cards) < 3:
        raise MeldError(f"not a meld: {text or 'no cards'} (a meld has at least 3 cards)")
    if len(set(cards)) != len(cards):
        raise MeldError(f"not a meld: {text} (a card appears twice)")
    if all(c.rank == cards[0].rank for c in cards):
        return tuple(sorted(cards, key=lambda c: c.suit))
    if all(c.suit == cards[0].suit for c in cards):
        ordered = tuple(sorted(cards, key=lambda c: c.rank))
        if ordered[-1].rank - ordered[0].rank != len(ordered) - 1:
            raise MeldError(
                f"not a meld: {text} (a run needs consecutive ranks; the ace is low only)"
            )
        return ordered
    raise MeldError(f"not a meld: {text} (neither one rank nor one suit)")


@dataclass(frozen=True, slots=True)
class Meld:
    """A valid set or run. ``cards`` are kept in canonical order: a run by rank, a set by suit.

    Constructing a ``Meld`` validates it, so an invalid one cannot exist; build one with
    ``Meld.of(cards)`` or ``Meld.from_str("5s-6s-7s")``.
    """

    cards: tuple[Card, ...]

    def __post_init__(self) -> None:
        cards = tuple(self.cards)
        canonical = _canonical(cards)
        if canonical != cards or type(self.cards) is not tuple:
            object.__setattr__(self, "cards", canonical)

    @classmethod
    def of(cls, cards: Iterable[Card]) -> Meld:
        """The meld made of ``cards`` (any order). Raises ``MeldError`` if they are no meld."""
        return cls(tuple(cards))

    @classmethod
    def from_str(cls, text: str) -> Meld:
        """Parse the text form, cards joined by ``-``: ``Meld.from_str("5s-6s-7s")``."""
        try:
            cards = tuple(Card.from_str(tok) for tok in text.strip().split("-"))
        except CardError as exc:
            raise MeldError(f"malformed meld {text!r}: {exc}") from None
        return cls(cards)

    @property
    def kind(self) -> MeldKind:
        """``MeldKind.SET`` or ``MeldKind.RUN``."""
        return MeldKind.SET if self.cards[0].rank == self.cards[1].rank else MeldKind.RUN

    @property
    def value(self) -> int:
        """The total point value of the meld's cards."""
        return sum(c.value for c in self.cards)

    def extended(self, card: Card) -> Meld | None:
        """This meld with ``card`` laid off onto it, or ``None`` if the card does not fit.

        A set takes its fourth card; a run takes the next card at either end.
        """
        if card in self.cards:
            return None
        try:
            return Meld((*self.cards, card))
        except MeldError:
            return None

    def __str__(self) -> str:
        return "-".join(str(c) for c in self.cards)

    def __repr__(self) -> str:
        return f"Meld.from_str({str(self)!r})"


def _meld_key(meld: Meld) -> int:
    return meld.cards[0].suit * 13 + meld.cards[0].rank


def _value_of(cards: Iterable[Card]) -> int:
    return sum(c.value for c in cards)


@dataclass(frozen=True, slots=True)
class Arrangement:
    """One way of laying out a group of cards: disjoint melds, and the rest as deadwood.

    Canonical form: ``melds`` sorted by the index of their first card, ``deadwood_cards`` sorted.
    Text form: the melds, then ``|`` and the deadwood cards, e.g. ``"5s-6s-7s | 2c 9d"``.
    """

    melds: tuple[Meld, ...]
    deadwood_cards: tuple[Card, ...]

    @property
    def deadwood(self) -> int:
        """The total value of the deadwood cards."""
        return _value_of(self.deadwood_cards)

    def __str__(self) -> str:
        melds = " ".join(str(m) for m in self.melds)
        dead = " ".join(str(c) for c in self.deadwood_cards)
        return f"{melds} | {dead}".strip()


@dataclass(frozen=True, slots=True)
class Layoff:
    """One defender card laid off onto the knocker's meld number ``meld``."""

    card: Card
    meld: int


@dataclass(frozen=True, slots=True)
class DefenderResult:
    """The defender's showdown: own melds, layoffs onto the knocker's melds, and what is left.

    ``layoffs`` are listed in an order in which they can be laid: by knocker meld, and along a
    chain outward from the meld (on ``5s-6s-7s``: ``4s`` before ``3s``, ``8s`` before ``9s``).
    """

    melds: tuple[Meld, ...]
    layoffs: tuple[Layoff, ...]
    deadwood_cards: tuple[Card, ...]

    @property
    def deadwood(self) -> int:
        """The total value of the cards neither melded nor laid off."""
        return _value_of(self.deadwood_cards)


def _to_mask(cards: Iterable[Card]) -> tuple[int, list[int]]:
    """The mask of ``cards`` and their indexes; ``ValueError`` on a repeated card."""
    indexes = [c.suit * 13 + c.rank for c in cards]
    mask = 0
    for i in indexes:
        mask |= 1 << i
    if mask.bit_count() != len(indexes):
        raise ValueError("a card appears twice in the hand")
    return mask, indexes


_MELD_CACHE: dict[int, Meld] = {}


def _meld_of_mask(mask: int) -> Meld:
    """The ``Meld`` of a mask known to be a meld (interned; skips re-validation)."""
    meld = _MELD_CACHE.get(mask)
    if meld is None:
        cards = _mask_cards(mask)
        if cards[0].rank != cards[-1].rank:
            cards = tuple(sorted(cards, key=lambda c: c.rank))
        meld = object.__new__(Meld)
        object.__setattr__(meld, "cards", cards)
        _MELD_CACHE[mask] = meld
    return meld


def _meld_mask(meld: Meld) -> int:
    mask = 0
    for c in meld.cards:
        mask |= 1 << (c.suit * 13 + c.rank)
    return mask


def _arrangement(hand: int, meld_masks: Iterable[int]) -> Arrangement:
    melds = sorted((_meld_of_mask(m) for m in meld_masks), key=_meld_key)
    melded = 0
    for m in melds:
        melded |= _meld_mask(m)
    return Arrangement(tuple(melds), _mask_cards(hand & ~melded))


# ---------------------------------------------------------------------------------------------
# Deadwood and knocking.


def is_meld(cards: Iterable[Card]) -> bool:
    """Whether ``cards`` form one valid set or run."""
    try:
        _canonical(tuple(cards))
    except MeldError:
        return False
    return True


def deadwood(cards: Iterable[Card]) -> int:
    """The least deadwood of any arrangement of ``cards`` (any number of cards)."""
    values = _VALUES
    hand = total = count = 0
    for c in cards:
        i = c.suit * 13 + c.rank
        hand |= 1 << i
        total += values[i]
        count += 1
    if hand.bit_count() != count:
        raise ValueError("a card appears twice in the hand")
    return _deadwood_of(hand, total)


def mask_deadwood(hand: int) -> int:
    """``deadwood`` of the cards of a 52-bit mask."""
    return _deadwood_of(hand, mask_value(hand))


def _deadwood_of(hand: int, total: int) -> int:
    melds = _hand_melds(hand)
    if not melds:
        return total
    if len(melds) == 1:
        return total - melds[0][1]
    return total - _max_melded(hand, melds)


def _optimal_collections(hand: int) -> list[list[int]]:
    """Every collection of disjoint melds of ``hand`` with the largest melded value (as lists
    of meld masks): for a hand's worth of cards by listing every collection, as
    ``_max_melded`` does, else by the memoised search."""
    melds = _hand_melds(hand)
    if len(melds) <= 1:
        return [[m for m, _ in melds]]
    if len(melds) <= _ENUMERATE_LIMIT and hand.bit_count() <= _HAND_CARDS:
        colls: list[tuple[int, int, list[int]]] = [(0, 0, [])]
        for m, v in melds:
            colls += [(u | m, w + v, [*lst, m]) for u, w, lst in colls if not u & m]
        best = max(w for _, w, _ in colls)
        return [lst for _, w, lst in colls if w == best]
    search = _Search(melds)
    return list(search.all_best(hand, search.best(hand)))


def _arrangement_order(a: Arrangement) -> tuple[int, tuple[tuple[int, ...], ...]]:
    return (len(a.melds), tuple(tuple(c.suit * 13 + c.rank for c in m.cards) for m in a.melds))


def optimal_arrangements(cards: Iterable[Card]) -> list[Arrangement]:
    """Every distinct arrangement of ``cards`` with the least deadwood.

    Two arrangements are distinct when their melds differ, so a six-card run also appears split
    into two runs of three. Order: fewest melds first, then by the melds' card indexes.
    """
    hand, _ = _to_mask(cards)
    arrangements = [_arrangement(hand, coll) for coll in _optimal_collections(hand)]
    arrangements.sort(key=_arrangement_order)
    return arrangements


def best_melds(cards: Iterable[Card]) -> Arrangement:
    """An arrangement of ``cards`` with the least deadwood: the first of
    ``optimal_arrangements`` (fewest melds, so long runs and four-card sets stay whole)."""
    return optimal_arrangements(cards)[0]


def knock_options(cards: Iterable[Card], limit: int) -> dict[Card, int]:
    """The discards that allow a knock: each card ``c`` of the (11-card) hand with
    ``deadwood(hand - c) <= limit``, mapped to that deadwood."""
    hand = count = 0
    for c in cards:
        hand |= 1 << (c.suit * 13 + c.rank)
        count += 1
    if hand.bit_count() != count:
        raise ValueError("a card appears twice in the hand")
    return {DECK[i]: dw for i, dw in mask_knock_options(hand, limit).items()}


def cards_mask(cards: Iterable[Card]) -> int:
    """The 52-bit mask of ``cards`` (bit ``card.index`` per card), the form the mask functions
    take."""
    mask = 0
    for c in cards:
        mask |= 1 << c.index
    return mask


def mask_value(mask: int) -> int:
    """The total point value of the cards of a 52-bit mask (four table lookups)."""
    return (
        _SUIT_VALUE[mask & _SUIT_BITS]
        + _SUIT_VALUE[(mask >> 13) & _SUIT_BITS]
        + _SUIT_VALUE[(mask >> 26) & _SUIT_BITS]
        + _SUIT_VALUE[mask >> 39]
    )


def mask_knock_options(hand: int, limit: int) -> dict[int, int]:
    """``knock_options`` on a 52-bit mask of distinct cards: card index to deadwood, in index
    order. This is the hot path of every discard decision, so it first bounds the answer from
    below: every meld lies inside the cards that could be in a meld at all (``cover``), so
    discarding ``c`` leaves at least the value of the other cards outside it. A hand far from a
    knock, the common case, is answered from that bound alone; the common shapes (no meld, one
    meld) skip the general enumeration."""
    values = _VALUES
    if hand.bit_count() > _HAND_CARDS:
        # More cards than a hand holds: enumerating collections could explode; ask per card.
        return {
            i: dw
            for i in _mask_indexes(hand)
            if (dw := deadwood(_mask_cards(hand ^ (1 << i)))) <= limit
        }
    # _meld_signs and mask_value, inline.
    c = hand & _SUIT_BITS
    d = (hand >> 13) & _SUIT_BITS
    h = (hand >> 26) & _SUIT_BITS
    s = hand >> 39
    starts = hand & (hand >> 1) & (hand >> 2) & _RUN_STARTS
    three = (c & d & (h | s)) | (h & s & (c | d))
    suit_value = _SUIT_VALUE
    total = suit_value[c] + suit_value[d] + suit_value[h] + suit_value[s]
    if starts or three:
        free = hand & ~((starts | starts << 1 | starts << 2 | three * _SPREAD) & hand)
        unmeldable = (
            suit_value[free & _SUIT_BITS]
            + suit_value[(free >> 13) & _SUIT_BITS]
            + suit_value[(free >> 26) & _SUIT_BITS]
            + suit_value[free >> 39]
        )
        if unmeldable - 10 > limit:  # no card is worth more than 10
            return {}
    else:
        # Nothing melds: discarding c leaves everything else as deadwood.
        floor = total - limit
        if floor > 10:
            return {}
        return {i: total - values[i] for i in _mask_indexes(hand) if values[i] >= floor}
    melds = _melds_at(hand, starts, three)
    if len(melds) == 1:
        m, v = melds[0]
        rest = total - v
        if rest - limit > 10:
            return {}
        return {
            i: dw
            for i in _mask_indexes(hand)
            if (dw := (total if m >> i & 1 else rest) - values[i]) <= limit
        }
    # For each card, the best melded value among the collections that avoid it. Walk the
    # collections from the most valuable down; a card's answer is the first one missing it.
    colls = [(0, 0)]
    for m, v in melds:
        colls += [(u | m, w + v) for u, w in colls if not u & m]
    colls.sort(key=_second, reverse=True)
    found: dict[int, int] = {}
    if total - colls[0][1] - limit > 10:
        return found
    pending = hand
    for u, w in colls:
        free = pending & ~u
        if free:
            pending &= u
            rest = total - w
            while free:
                low = free & -free
                i = low.bit_length() - 1
                dw = rest - values[i]
                if dw <= limit:
                    found[i] = dw
                free ^= low
            if not pending:
                break
    return dict(sorted(found.items()))


_second = itemgetter(1)

# The value of the highest card of every 13-bit mask of one suit's cards.
_SUIT_TOP = [0] * (1 << 13)
for _m in range(1, 1 << 13):
    _SUIT_TOP[_m] = _VALUES[_m.bit_length() - 1]


def _top_value(mask: int) -> int:
    top = _SUIT_TOP
    return max(
        top[mask & _SUIT_BITS],
        top[(mask >> 13) & _SUIT_BITS],
        top[(mask >> 26) & _SUIT_BITS],
        top[mask >> 39],
    )


def mask_least_discard(hand: int, banned: int = -1) -> int:
    """The least deadwood left by discarding one card of the mask ``hand`` (normally 11
    cards): ``min(mask_knock_options(hand, any limit).values())``, without listing every
    discard. Each collection of disjoint melds leaves its free cards as deadwood, and the best
    card to discard from them is the highest. ``banned`` is the index of a card that may not
    be discarded (the one just taken from the pile), or -1."""
    allowed = hand if banned < 0 else hand & ~(1 << banned)
    if not allowed:
        raise ValueError("no card to discard")
    if hand.bit_count() > _HAND_CARDS:
        return min(dw for i, dw in mask_knock_options(hand, _NO_LIMIT).items() if i != banned)
    starts, three = _meld_signs(hand)
    total = mask_value(hand)
    if not (starts or three):
        return total - _top_value(allowed)
    colls = [(0, 0)]
    for m, v in _melds_at(hand, starts, three):
        colls += [(u | m, w + v) for u, w in colls if not u & m]
    best = total
    for u, w in colls:
        free = allowed & ~u
        if free:
            left = total - w - _top_value(free)
            if left < best:
                best = left
    return best


_TEN_COLUMNS = _RANK_COLUMNS[9] | _RANK_COLUMNS[10] | _RANK_COLUMNS[11] | _RANK_COLUMNS[12]


def _top_card(mask: int) -> int:
    """The index of the highest card of the (non-empty) mask: the highest value, then the
    lowest index."""
    value = _top_value(mask)
    tops = mask & (_TEN_COLUMNS if value == 10 else _RANK_COLUMNS[value - 1])
    return (tops & -tops).bit_length() - 1


def mask_best_discard(hand: int, banned: int = -1) -> tuple[int, int]:
    """The discard of the mask ``hand`` (normally 11 cards) that leaves the least deadwood,
    and that deadwood: ``(card index, deadwood)``. Ties go to the higher card, then to the
    lower index; ``banned`` (a card index, or -1) is never chosen. It is the choice of
    ``mask_knock_options(hand, any limit)`` by ``(deadwood, -value, index)``, found as
    ``mask_least_discard`` finds the least: each collection of disjoint melds offers its
    highest free card."""
    allowed = hand if banned < 0 else hand & ~(1 << banned)
    if not allowed:
        raise ValueError("no card to discard")
    values = _VALUES
    if hand.bit_count() > _HAND_CARDS:
        options = mask_knock_options(hand, _NO_LIMIT)
        best = min(
            (i for i in options if i != banned), key=lambda i: (options[i], -values[i], i)
        )
        return best, options[best]
    starts, three = _meld_signs(hand)
    total = mask_value(hand)
    if not (starts or three):
        best = _top_card(allowed)
        return best, total - values[best]
    colls = [(0, 0)]
    for m, v in _melds_at(hand, starts, three):
        colls += [(u | m, w + v) for u, w in colls if not u & m]
    best = -1
    best_dw = best_value = 0
    for u, w in colls:
        free = allowed & ~u
        if free:
            i = _top_card(free)
            value = values[i]
            dw = total - w - value
            if (
                best < 0
                or dw < best_dw
                or (dw == best_dw and (value > best_value or (value == best_value and i < best)))
            ):
                best, best_dw, best_value = i, dw, value
    return best, best_dw


def discard_deadwoods(cards: Iterable[Card]) -> dict[Card, int]:
    """For each card ``c`` of a hand (normally 11 cards), the least deadwood of the hand
    without ``c``: what is left after discarding ``c``."""
    return knock_options(cards, _NO_LIMIT)


def is_big_gin(cards: Iterable[Card]) -> bool:
    """Whether all 11 cards are melded (big gin, a rules option)."""
    cards = list(cards)
    return len(cards) == 11 and deadwood(cards) == 0


def check_declared(cards: Iterable[Card], melds: Iterable[Meld]) -> Arrangement:
    """The arrangement that declared ``melds`` make of ``cards``; the rest is deadwood.

    The melds must be valid, pairwise disjoint and made of the given cards; otherwise
    ``MeldError`` says which rule the declaration breaks. The arrangement need not be optimal:
    a player may declare a worse one.
    """
    hand = list(cards)
    held = set(hand)
    if len(held) != len(hand):
        raise MeldError("a card appears twice in the hand")
    used: set[Card] = set()
    declared: list[Meld] = []
    for meld in melds:
        if not isinstance(meld, Meld):
            raise MeldError(f"not a meld: {meld!r}")
        meld = Meld(meld.cards)  # re-validate: the caller may have built it by hand
        for card in meld.cards:
            if card not in held:
                raise MeldError(f"declared meld {meld} uses {card}, which is not in the hand")
            if card in used:
                raise MeldError(f"{card} is declared in more than one meld")
            used.add(card)
        declared.append(meld)
    declared.sort(key=_meld_key)
    return Arrangement(tuple(declared), tuple(sorted(held - used)))
