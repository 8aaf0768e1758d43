"""Cards, the deck, and a seeded shuffle that never depends on a library's generator.

A card has one text form: a rank from ``A23456789TJQK`` followed by a suit from ``cdhs``
(``"Th"``, ``"As"``, ``"7c"``). Cards are interned: ``Card.from_str("Th") is Card.from_str("Th")``.
Each card also has an ``index`` in ``range(52)`` (``suit * 13 + rank``) used by the fast paths.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import ClassVar

RANKS = "A23456789TJQK"
SUITS = "cdhs"
SUIT_SYMBOLS = "♣♦♥♠"


class CardError(ValueError):
    """A card's text form is malformed."""


@dataclass(frozen=True, slots=True, eq=False)
class Card:
    """One playing card. ``rank`` is 0 (ace) to 12 (king); ``suit`` is 0-3 for ``cdhs``.

    Cards compare, hash and order by their ``index`` (``suit * 13 + rank``): by suit, then
    rank. Sorting with ``key=card_index`` is the fast way to sort many of them.
    """

    suit: int
    rank: int
    index: int = field(init=False, repr=False)
    _text: str = field(init=False, repr=False, compare=False)

    _BY_INDEX: ClassVar[tuple[Card, ...]]
    _BY_TEXT: ClassVar[dict[str, Card]]

    def __post_init__(self) -> None:
        if not (0 <= self.suit < 4 and 0 <= self.rank < 13):
            raise CardError(f"no such card: suit {self.suit}, rank {self.rank}")
        object.__setattr__(self, "index", self.suit * 13 + self.rank)
        object.__setattr__(self, "_text", RANKS[self.rank] + SUITS[self.suit])

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Card) and self.index == other.index)

    def __hash__(self) -> int:
        return self.index

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __le__(self, other: Card) -> bool:
        return self.index <= other.index

    def __gt__(self, other: Card) -> bool:
        return self.index > other.index

    def __ge__(self, other: Card) -> bool:
        return self.index >= other.index

    @property
    def value(self) -> int:
        """Deadwood value: ace 1, number cards their face value, J Q K 10."""
        return self.rank + 1 if self.rank < 10 else 10

    @property
    def rank_char(self) -> str:
        return RANKS[self.rank]

    @property
    def suit_char(self) -> str:
        return SUITS[self.suit]

    @classmethod
    def from_str(cls, text: str) -> Card:
        """Parse the two-character form, e.g. ``"Th"``. Raises ``CardError`` if malformed."""
        card = cls._BY_TEXT.get(text)
        if card is None:
            raise CardError(
                f"not a card: {text!r} (expected a rank from {RANKS} and a suit from {SUITS})"
            )
        return card

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card with the given index in ``range(52)``."""
        if not 0 <= index < 52:
            raise CardError(f"card index out of range: {index}")
        return cls._BY_INDEX[index]

    def symbol(self) -> str:
        """The card with a suit symbol, for people: ``T♥``."""
        return RANKS[self.rank] + SUIT_SYMBOLS[self.suit]

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.from_str({str(self)!r})"


Card._BY_INDEX = tuple(Card(s, r) for s in range(4) for r in range(13))
Card._BY_TEXT = {str(c): c for c in Card._BY_INDEX}
for _card in Card._BY_INDEX:
    # Accept the common lower-case-rank spellings of face cards and ten too ("th", "10h").
    Card._BY_TEXT.setdefault(str(_card)[0].lower() + str(_card)[1], _card)
    if _card.rank == 9:
        Card._BY_TEXT["10" + SUITS[_card.suit]] = _card

DECK: tuple[Card, ...] = Card._BY_INDEX
_CARD_OF_TEXT = Card._BY_TEXT.__getitem__
"""The 52 cards in index order (clubs A-K, diamonds, hearts, spades)."""


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse cards separated by white space or commas: ``parse_cards("As 2s 3s")``.

    Raises ``CardError`` on a malformed card. Duplicates are kept as given.
    """
    return tuple(Card.from_str(tok) for tok in text.replace(",", " ").split())


def cards_from_strs(texts: Iterable[str]) -> tuple[Card, ...]:
    """``Card.from_str`` of each text, at C speed when all are cards (protocol lines carry
    many); raises ``CardError`` naming the first that is not."""
    texts = texts if isinstance(texts, list | tuple) else list(texts)
    try:
        return tuple(map(_CARD_OF_TEXT, texts))
    except KeyError:
        return tuple(map(Card.from_str, texts))


def format_cards(cards: Iterable[Card]) -> str:
    """The cards' text forms joined by single spaces (the inverse of ``parse_cards``)."""
    return " ".join(str(c) for c in cards)


card_index = attrgetter("index")
"""``sorted(cards, key=card_index)`` sorts cards by suit, then rank, at C speed."""

card_text: Callable[[Card], str] = attrgetter("_text")
"""``str(card)`` at C speed: ``",".join(map(card_text, cards))``."""


def sort_cards(cards: Iterable[Card]) -> list[Card]:
    """Cards sorted for display: by suit, then rank."""
    return sorted(cards, key=card_index)


def hand_value(cards: Iterable[Card]) -> int:
    """The total point value of the cards, ignoring melds."""
    return sum(c.value for c in cards)


def parse_deck(text: str) -> tuple[Card, ...]:
    """Parse a full 52-card deck order and check that it holds every card exactly once."""
    deck = parse_cards(text)
    check_deck(deck)
    return deck


def check_deck(deck: Iterable[Card]) -> None:
    """Raise ``CardError`` unless ``deck`` is a permutation of the 52 cards."""
    cards = list(deck)
    if len(cards) != 52 or len(set(cards)) != 52:
        missing = sorted(set(DECK) - set(cards))
        extra = len(cards) - len(set(cards))
        raise CardError(
            f"a deck must hold each of the 52 cards once (got {len(cards)} cards,"
            f" {extra} repeated, missing {format_cards(missing) or 'none'})"
        )


class DeckStream:
    """A deterministic stream of random numbers from a seed, by SHA-256 in counter mode.

    It is defined here, byte for byte, so that a seed gives the same decks on every platform
    and every Python version. Records store deck orders anyway; the seed only makes runs
    repeatable.
    """

    def __init__(self, seed: int | str, *labels: int | str) -> None:
        self._key = "/".join(str(part) for part in (seed, *labels)).encode()
        self._counter = 0
        self._pending: list[int] = []  # the rest of the last digest's four numbers, last first

    def _u64(self) -> int:
        """The next number: the digests' bytes read as big-endian 64-bit integers, in order."""
        if not self._pending:
            digest = hashlib.sha256(self._key + b"#" + str(self._counter).encode()).digest()
            self._counter += 1
            self._pending = list(_FOUR_U64.unpack(digest))
            self._pending.reverse()
        return self._pending.pop()

    def below(self, n: int) -> int:
        """A uniform integer in ``range(n)``, by rejection sampling (no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self._u64()
            if x < limit:
                return x % n


_FOUR_U64 = struct.Struct(">4Q")


def shuffled_deck(seed: int | str, *labels: int | str) -> tuple[Card, ...]:
    """A reproducible shuffle of the 52 cards for ``seed`` and optional labels (game, hand).

    Fisher-Yates driven by ``DeckStream``; the same arguments give the same order everywhere.
    """
    stream = DeckStream(seed, *labels)
    u64 = stream._u64
    cards = list(DECK)
    for i in range(51, 0, -1):
        n = i + 1
        limit = _LIMITS[n]
        x = u64()
        while x >= limit:  # rejection sampling, as ``DeckStream.below``
            x = u64()
        j = x % n
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


_LIMITS = [0] + [(1 << 64) - ((1 << 64) % n) for n in range(1, 53)]
