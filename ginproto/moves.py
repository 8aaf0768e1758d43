"""Moves: small immutable values with one text form, shared by the protocol and the records.

=============================  ==========================================================
text                           meaning
=============================  ==========================================================
``take`` / ``pass``            take or pass the first upcard
``stock`` / ``pile``           draw the top of the stock / of the discard pile
``discard 7h``                 discard a card
``knock 7h [MELD ...]``        discard 7h and knock, optionally declaring melds (``5s-6s-7s``)
``biggin [MELD ...]``          big gin: all 11 cards melded, no discard (option)
=============================  ==========================================================
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ginproto.cards import DECK, Card, CardError
from ginproto.melds import Meld, MeldError


class MoveError(ValueError):
    """A move's text form is malformed."""


class MoveKind(enum.Enum):
    TAKE = "take"
    PASS = "pass"
    STOCK = "stock"
    PILE = "pile"
    DISCARD = "discard"
    KNOCK = "knock"
    BIG_GIN = "biggin"

    def __str__(self) -> str:
        return self.value


_WITH_CARD = frozenset({MoveKind.DISCARD, MoveKind.KNOCK})
_WITH_MELDS = frozenset({MoveKind.KNOCK, MoveKind.BIG_GIN})


@dataclass(frozen=True, slots=True)
class Move:
    """One player's action. ``melds`` is ``None`` when the knocker declared nothing."""

    kind: MoveKind
    card: Card | None = None
    melds: tuple[Meld, ...] | None = None

    def __post_init__(self) -> None:
        if self.melds == ():
            object.__setattr__(self, "melds", None)
        if (self.card is not None) != (self.kind in _WITH_CARD):
            need = "needs a" if self.card is None else "takes no"
            raise MoveError(f"a {self.kind} move {need} card")
        if self.melds is not None and self.kind not in _WITH_MELDS:
            raise MoveError(f"a {self.kind} move takes no melds")

    # The constructors below hand out shared instances: moves are immutable, and legal-move
    # lists are built on every decision.
    @classmethod
    def take(cls) -> Move:
        return _SIMPLE[MoveKind.TAKE]

    @classmethod
    def pass_(cls) -> Move:
        return _SIMPLE[MoveKind.PASS]

    @classmethod
    def stock(cls) -> Move:
        return _SIMPLE[MoveKind.STOCK]

    @classmethod
    def pile(cls) -> Move:
        return _SIMPLE[MoveKind.PILE]

    @classmethod
    def discard(cls, card: Card) -> Move:
        return _DISCARDS[card.index]

    @classmethod
    def knock(cls, card: Card, melds: tuple[Meld, ...] | None = None) -> Move:
        return _KNOCKS[card.index] if not melds else cls(MoveKind.KNOCK, card, melds)

    @classmethod
    def big_gin(cls, melds: tuple[Meld, ...] | None = None) -> Move:
        return cls(MoveKind.BIG_GIN, None, melds)

    @property
    def is_draw(self) -> bool:
        """True for the moves that put a card into the mover's hand."""
        return self.kind in (MoveKind.TAKE, MoveKind.STOCK, MoveKind.PILE)

    @classmethod
    def from_str(cls, text: str) -> Move:
        """Parse the text form. Raises ``MoveError`` saying what was expected."""
        tokens = text.split()
        if not tokens:
            raise MoveError("empty move")
        try:
            kind = MoveKind(tokens[0])
        except ValueError:
            words = ", ".join(k.value for k in MoveKind)
            raise MoveError(f"unknown move {tokens[0]!r} (expected one of {words})") from None
        rest = tokens[1:]
        card: Card | None = None
        if kind in _WITH_CARD:
            if not rest:
                raise MoveError(f"{kind} needs a card, e.g. '{kind} 7h'")
            try:
                card = Card.from_str(rest[0])
            except CardError as exc:
                raise MoveError(str(exc)) from None
            rest = rest[1:]
        melds: tuple[Meld, ...] | None = None
        if kind in _WITH_MELDS and rest:
            try:
                melds = tuple(Meld.from_str(tok) for tok in rest)
            except MeldError as exc:
                raise MoveError(str(exc)) from None
            rest = []
        if rest:
            raise MoveError(f"unexpected {' '.join(rest)!r} after {kind}")
        return cls(kind, card, melds)

    def __str__(self) -> str:
        parts = [self.kind.value]
        if self.card is not None:
            parts.append(str(self.card))
        if self.melds:
            parts.extend(str(m) for m in self.melds)
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Move.from_str({str(self)!r})"


_SIMPLE: dict[MoveKind, Move] = {
    kind: Move(kind) for kind in (MoveKind.TAKE, MoveKind.PASS, MoveKind.STOCK, MoveKind.PILE)
}
_DISCARDS: tuple[Move, ...] = tuple(Move(MoveKind.DISCARD, card) for card in DECK)
_KNOCKS: tuple[Move, ...] = tuple(Move(MoveKind.KNOCK, card) for card in DECK)
