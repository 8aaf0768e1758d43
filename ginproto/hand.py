"""One hand of two-seat gin rummy as a state machine with an explicit phase.

The deal is an explicit input: the 52-card order. Cards 0-19 are dealt alternately, the
non-dealer first; card 20 is the first upcard; cards 21-51 are the stock, card 21 on top.
Every other rule of RULES.md's "One hand" section lives here or in ``ginproto.melds``; the
referee, the replayer, the SDK and the tests all drive this one class.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import reduce
from operator import or_
from typing import TypeVar

from ginproto.cards import DECK, Card, card_index, check_deck
from ginproto.layoffs import best_layoffs, knocker_arrangement
from ginproto.melds import (
    Arrangement,
    DefenderResult,
    Meld,
    MeldError,
    best_melds,
    check_declared,
    deadwood,
    mask_deadwood,
    mask_knock_options,
)
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules

_T = TypeVar("_T")


def build_frozen(cls: type[_T], fields: dict[str, object]) -> _T:
    """An instance of the frozen, ``__dict__``-based dataclass ``cls`` with exactly these
    field values, made without its field-by-field ``__init__`` (five times dearer). For the
    values made on every decision (views); the caller passes every field, valid."""
    instance = _new_object(cls)
    _set_attribute(instance, "__dict__", fields)
    return instance


class IllegalMoveError(ValueError):
    """A well-formed move that the rules do not allow now. The message says why."""


class Phase(enum.Enum):
    """What the player to move must decide."""

    OFFER = "offer"  # take or pass the first upcard
    DRAW = "draw"  # draw from the stock or the discard pile
    DISCARD = "discard"  # discard, knock, or (option) big gin
    OVER = "over"

    def __str__(self) -> str:
        return self.value


class Outcome(enum.Enum):
    """How a hand ended."""

    KNOCK = "knock"  # the knocker won with K < D
    GIN = "gin"
    BIG_GIN = "biggin"
    UNDERCUT = "undercut"  # the defender won with D <= K
    DRAW = "draw"  # two stock cards left after a discard, or the turn cap

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Turn:
    """One move in a hand's history. ``card`` is the card drawn by a draw (take, stock,
    pile); in a seat's view it is ``None`` for the opponent's stock draws."""

    seat: int
    move: Move
    card: Card | None = None


@dataclass(frozen=True, slots=True)
class HandResult:
    """The showdown of a finished hand, or its draw. ``points`` include any multiplier."""

    outcome: Outcome
    winner: int | None
    points: int
    knocker: int | None
    hands: tuple[tuple[Card, ...], tuple[Card, ...]]
    knocker_melds: tuple[Meld, ...] = ()
    knocker_deadwood: tuple[Card, ...] = ()
    defender: DefenderResult | None = None
    multiplier: int = 1
    capped: bool = False

    @property
    def knocker_deadwood_value(self) -> int:
        return sum(c.value for c in self.knocker_deadwood)

    @property
    def defender_deadwood_value(self) -> int:
        return self.defender.deadwood if self.defender is not None else 0


def legal_moves(
    rules: Rules,
    phase: Phase,
    cards: Iterable[Card],
    knock_limit: int,
    taken: Card | None = None,
    stock_only: bool = False,
) -> list[Move]:
    """The legal moves of the player to move, from what that player can see.

    ``taken`` is the card taken from the discard pile this turn, ``stock_only`` is true on
    the turn after both players passed the first upcard. Knocks are listed without declared
    melds; ``Hand.apply`` also accepts a knock declaring any legal arrangement. Order: the
    discards by card, then the knocks by card, then big gin.
    """
    if phase is _DISCARD:
        if not isinstance(cards, tuple | list):
            cards = tuple(cards)
        mask = reduce(or_, map(_BITS.__getitem__, map(card_index, cards)), 0)
        if mask.bit_count() != len(cards):
            raise ValueError("a card appears twice in the hand")
        return _discard_moves(rules, mask, knock_limit, taken)
    if phase is _DRAW:
        return [_STOCK] if stock_only else [_STOCK, _PILE]
    if phase is _OFFER:
        return [_TAKE, _PASS]
    return []


def _discard_moves(
    rules: Rules,
    mask: int,
    knock_limit: int,
    taken: Card | None,
    knocks: dict[int, int] | None = None,
) -> list[Move]:
    """The legal moves of a discard decision with the cards of ``mask`` (``knocks``: its
    ``mask_knock_options``, when already known)."""
    allowed = mask
    if taken is not None and not rules.discard_taken:
        allowed &= ~(1 << taken.index)
    moves = list(
        _SUIT_DISCARDS[0][allowed & 0x1FFF]
        + _SUIT_DISCARDS[1][(allowed >> 13) & 0x1FFF]
        + _SUIT_DISCARDS[2][(allowed >> 26) & 0x1FFF]
        + _SUIT_DISCARDS[3][allowed >> 39]
    )
    if knocks is None:
        knocks = mask_knock_options(mask, knock_limit)
    if knocks:
        knock_moves = _KNOCK_MOVES
        moves += [knock_moves[i] for i in knocks if allowed >> i & 1]
        if rules.big_gin and 0 in knocks.values() and _is_big_gin_mask(mask):
            moves.append(_BIG_GIN)
    return moves


def _is_big_gin_mask(mask: int) -> bool:
    return mask.bit_count() == 11 and deadwood(_mask_cards(mask)) == 0


def _big_gin_arrangement(cards: Sequence[Card]) -> Arrangement | None:
    if len(cards) != 11:
        return None
    arrangement = best_melds(cards)
    return arrangement if arrangement.deadwood == 0 and not arrangement.deadwood_cards else None


class _SuitTable(dict[int, tuple[_T, ...]]):
    """Per 13-bit mask of one suit's cards, a tuple of one item per card (filled on demand)."""

    def __init__(self, items: Sequence[_T]) -> None:
        super().__init__()
        self.source = items

    def __missing__(self, key: int) -> tuple[_T, ...]:
        value = tuple(self.source[r] for r in range(13) if key >> r & 1)
        self[key] = value
        return value


_SUIT_CARDS = tuple(_SuitTable(DECK[13 * s : 13 * s + 13]) for s in range(4))
_SUIT_DISCARDS = tuple(
    _SuitTable([Move.discard(c) for c in DECK[13 * s : 13 * s + 13]]) for s in range(4)
)
_KNOCK_MOVES = tuple(Move.knock(c) for c in DECK)
_BITS = tuple(1 << i for i in range(52))
_TAKE, _PASS, _STOCK, _PILE = Move.take(), Move.pass_(), Move.stock(), Move.pile()
_BIG_GIN = Move.big_gin()


def _mask_cards(mask: int) -> tuple[Card, ...]:
    """The cards of a 52-bit mask, in index order."""
    return (
        _SUIT_CARDS[0][mask & 0x1FFF]
        + _SUIT_CARDS[1][(mask >> 13) & 0x1FFF]
        + _SUIT_CARDS[2][(mask >> 26) & 0x1FFF]
        + _SUIT_CARDS[3][mask >> 39]
    )


@dataclass(frozen=True)
class HandView:
    """Everything one seat may know about a hand: the basis of the protocol's position line.

    ``Hand.view`` makes one on every decision, so it builds them without the frozen
    dataclass's field-by-field ``__init__`` and leaves, beside the fields, what it already
    knows for ``legal_moves`` (the seat's cards as a mask, the card just taken). They are
    the same values as views built field by field: equality, hashing, ``repr`` and
    ``dataclasses.replace`` see only the fields.
    """

    rules: Rules
    seat: int
    dealer: int
    knock_limit: int
    phase: Phase
    to_move: int
    cards: tuple[Card, ...]
    pile: tuple[Card, ...]
    stock: int
    history: tuple[Turn, ...]

    @property
    def upcard(self) -> Card | None:
        """The first upcard, which every seat saw."""
        # It can be taken only while it is offered: at the start of the hand, where every
        # turn before the take is a pass. The first other turn ends the offer.
        for turn in self.history:
            kind = turn.move.kind
            if kind is _KIND_TAKE:
                return turn.card
            if kind is not _KIND_PASS:
                break
        return self.pile[0] if self.pile else None

    @property
    def taken(self) -> Card | None:
        return _taken(self.phase, self.history)

    @property
    def turns(self) -> int:
        """The turns taken in the hand so far (a turn is one draw, or taking the first upcard),
        as ``Hand.turns`` counts them for ``Rules.turn_cap``."""
        return sum(1 for turn in self.history if turn.move.kind in _TURN_KINDS)

    @property
    def stock_only(self) -> bool:
        return _stock_only(self.phase, self.history)

    def legal_moves(self) -> list[Move]:
        """The legal moves, if this seat is the one to move; otherwise none."""
        if self.seat != self.to_move:
            return []
        phase = self.phase
        if phase is _DISCARD:
            known: tuple[int, Card | None] | None = self.__dict__.get("_known")
            if known is not None:
                return _discard_moves(self.rules, known[0], self.knock_limit, known[1])
            return legal_moves(self.rules, phase, self.cards, self.knock_limit, self.taken)
        if phase is _DRAW:
            return [_STOCK] if _stock_only(phase, self.history) else [_STOCK, _PILE]
        return legal_moves(self.rules, phase, self.cards, self.knock_limit)


def _taken(phase: Phase, history: Sequence[Turn]) -> Card | None:
    if phase is Phase.DISCARD and history:
        last = history[-1]
        if last.move.kind in (MoveKind.TAKE, MoveKind.PILE):
            return last.card
    return None


def _stock_only(phase: Phase, history: Sequence[Turn]) -> bool:
    return phase is Phase.DRAW and len(history) == 2 and history[1].move.kind is MoveKind.PASS


_ALLOWED: dict[Phase, tuple[tuple[MoveKind, ...], str]] = {
    Phase.OFFER: ((MoveKind.TAKE, MoveKind.PASS), "take or pass the first upcard"),
    Phase.DRAW: ((MoveKind.STOCK, MoveKind.PILE), "draw from the stock or the pile"),
    Phase.DISCARD: ((MoveKind.DISCARD, MoveKind.KNOCK, MoveKind.BIG_GIN), "discard or knock"),
}


DRAW_STOCK = 2
"""A hand is drawn when a discard (not a knock) leaves this many stock cards or fewer."""

HAND_SIZE = 10
"""The cards dealt to each seat (RULES.md, "Deal")."""

DEALT_STOCK = len(DECK) - 2 * HAND_SIZE - 1
"""The stock after the deal: the deck less both hands and the first upcard (31)."""


def drawn_after_discard(rules: Rules, stock: int, turns: int) -> bool:
    """Whether a hand ends drawn after a plain discard that leaves ``stock`` cards in the stock,
    ``turns`` turns into the hand (RULES.md, "Drawn hand": two stock cards left, or the turn
    cap of ``rules``)."""
    return stock <= DRAW_STOCK or turns >= rules.turn_cap


def hand_points(
    rules: Rules, outcome: Outcome, knocker_deadwood: int, defender_deadwood: int
) -> tuple[int, int]:
    """A won hand's points before the multiplier, as the difference of the deadwoods and the
    bonus (RULES.md, "Score of the hand"): a knock D - K and no bonus; an undercut K - D and
    the undercut bonus; gin D and the gin bonus; big gin D and the big gin bonus. K and D are
    the knocker's and the defender's deadwood after the lay-offs. A drawn hand: (0, 0)."""
    k, d = knocker_deadwood, defender_deadwood
    if outcome is Outcome.KNOCK:
        return d - k, 0
    if outcome is Outcome.UNDERCUT:
        return k - d, rules.undercut_bonus
    if outcome is Outcome.GIN:
        return d, rules.gin_bonus
    if outcome is Outcome.BIG_GIN:
        return d, rules.big_gin_bonus
    return 0, 0


def score_showdown(
    rules: Rules,
    upcard: Card,
    knocker: int,
    hands: tuple[tuple[Card, ...], tuple[Card, ...]],
    arrangement: Arrangement,
    big_gin: bool = False,
) -> HandResult:
    """The result of a hand that ends in a knock, under ``rules`` (RULES.md, "Showdown" and
    "Score of the hand"). ``Hand`` scores its own showdowns with this function.

    ``hands`` are both seats' final cards: the knocker's after its discard (all 11 for
    ``big_gin``), the defender's 10. ``arrangement`` is how the knocker lays them out (declared,
    or ``ginproto.layoffs.knocker_arrangement``'s choice); its deadwood is K. The defender lays
    off by ``best_layoffs`` unless K is 0; ``upcard`` is the hand's first upcard (the spade
    double). Gin: D + gin bonus; K < D: D - K; else the undercut, K - D + undercut bonus to
    the defender. ``points`` include the multiplier.
    """
    k = arrangement.deadwood
    defender_cards = hands[1 - knocker]
    if big_gin or k == 0:
        result = best_layoffs((), defender_cards)
        outcome = Outcome.BIG_GIN if big_gin else Outcome.GIN
        winner = knocker
    else:
        result = best_layoffs(arrangement.melds, defender_cards)
        if k < result.deadwood:
            outcome, winner = Outcome.KNOCK, knocker
        else:
            outcome, winner = Outcome.UNDERCUT, 1 - knocker
    difference, bonus = hand_points(rules, outcome, k, result.deadwood)
    points = difference + bonus
    multiplier = rules.multiplier_for(upcard)
    return HandResult(
        outcome=outcome,
        winner=winner,
        points=points * multiplier,
        knocker=knocker,
        hands=hands,
        knocker_melds=arrangement.melds,
        knocker_deadwood=arrangement.deadwood_cards,
        defender=result,
        multiplier=multiplier,
    )


class Hand:
    """A hand in progress. Drive it with ``legal_moves()`` and ``apply()``; read ``result``.

    Inside, each seat's cards are a 52-bit mask (bit ``card.index``); the sorted tuples, the
    legal moves and the knock evaluation of the current state are computed once, when first
    asked, and forgotten at the next move.
    """

    def __init__(self, rules: Rules, deck: Sequence[Card], dealer: int) -> None:
        if dealer not in (0, 1):
            raise ValueError("dealer must be seat 0 or 1")
        check_deck(deck)
        self.rules = rules
        self.deck: tuple[Card, ...] = tuple(deck)
        self.dealer = dealer
        first = 1 - dealer
        masks = [0, 0]
        for i in range(2 * HAND_SIZE):
            masks[first if i % 2 == 0 else dealer] |= 1 << self.deck[i].index
        self._masks = masks
        self._sorted: list[tuple[Card, ...] | None] = [None, None]
        self.upcard = self.deck[2 * HAND_SIZE]
        self._pile: list[Card] = [self.upcard]
        self._stock: list[Card] = list(reversed(self.deck[2 * HAND_SIZE + 1 :]))
        self.knock_limit = rules.knock_limit_for(self.upcard)
        self.phase = Phase.OFFER
        self.to_move = first
        self.turns = 0
        self._history: list[Turn] = []
        # Each seat's view of the history, kept as moves are made (views are asked often).
        self._seen: tuple[list[Turn], list[Turn]] = ([], [])
        self._taken: Card | None = None
        self._stock_only = False
        self._legal: tuple[Move, ...] | None = None
        self._knocks: dict[int, int] | None = None
        self.result: HandResult | None = None

    def clone(self) -> Hand:
        """An independent copy of this hand, to play on without changing this one (search).

        Only the mutable state is copied (the masks, the pile, the stock, the history); the
        rules, the deck, the cached sorted hands and legal moves, and every card and turn are
        immutable and shared."""
        other: Hand = _new_object(Hand)
        state = self.__dict__.copy()
        state["_masks"] = self._masks.copy()
        state["_sorted"] = self._sorted.copy()
        state["_pile"] = self._pile.copy()
        state["_stock"] = self._stock.copy()
        state["_history"] = self._history.copy()
        seen = self._seen
        state["_seen"] = (seen[0].copy(), seen[1].copy())
        _set_attribute(other, "__dict__", state)
        return other

    def _renamed(self, names: dict[Card, Card]) -> Hand:
        """A copy of this hand in which every card ``c`` of ``names`` is ``names[c]``, in the
        deck, the seats' cards, the stock and the history (``ginproto.search.Determinizer``).

        ``names`` must be a permutation of cards that no move so far put on the pile or took
        from it: renamed so, the deck, replayed with the same moves, gives exactly the copy
        (no rule looked at those cards' names), and a seat that never saw them cannot tell
        the copy from this hand."""
        other = self.clone()
        # By card index: the new card, for every card (the ones not renamed keep theirs).
        table = list(DECK)
        renamed = 0
        for old, new in names.items():
            table[old.index] = new
            renamed |= 1 << old.index
        for seat in (0, 1):
            mask = self._masks[seat]
            kept = mask & ~renamed
            moved = mask & renamed
            while moved:
                low = moved & -moved
                kept |= 1 << table[low.bit_length() - 1].index
                moved ^= low
            other._masks[seat] = kept
        other._sorted = [None, None]
        rename = table.__getitem__
        other.deck = tuple(map(rename, map(card_index, self.deck)))
        other._stock = list(map(rename, map(card_index, self._stock)))
        history = other._history
        for i, turn in enumerate(history):
            card = turn.card
            if card is not None and renamed >> card.index & 1:
                history[i] = other._seen[turn.seat][i] = Turn(
                    turn.seat, turn.move, rename(card.index)
                )
        other._legal = None
        other._knocks = None
        return other

    # -- what may be read ---------------------------------------------------------------
    def mask(self, seat: int) -> int:
        """The seat's cards as a 52-bit mask (bit ``card.index`` per card), the form
        ``ginproto.melds``' mask functions take: a search's policy reads it without building
        card tuples."""
        return self._masks[seat]

    def cards(self, seat: int) -> tuple[Card, ...]:
        """The seat's cards, sorted."""
        cards = self._sorted[seat]
        if cards is None:
            cards = self._sorted[seat] = _mask_cards(self._masks[seat])
        return cards

    @property
    def pile(self) -> tuple[Card, ...]:
        """The discard pile, bottom first, top last."""
        return tuple(self._pile)

    @property
    def stock_count(self) -> int:
        return len(self._stock)

    @property
    def history(self) -> tuple[Turn, ...]:
        """Every move with the card each draw took (the full record, not a seat's view)."""
        return tuple(self._history)

    @property
    def is_over(self) -> bool:
        return self.phase is _OVER

    @property
    def taken(self) -> Card | None:
        """The card the player to move took from the discard pile this turn, if any."""
        return self._taken

    def view(self, seat: int) -> HandView:
        """What ``seat`` may know: its cards, the pile, the stock count, and the history with
        the opponent's stock draws hidden."""
        return build_frozen(
            HandView,
            {
                "rules": self.rules,
                "seat": seat,
                "dealer": self.dealer,
                "knock_limit": self.knock_limit,
                "phase": self.phase,
                "to_move": self.to_move,
                "cards": self.cards(seat),
                "pile": tuple(self._pile),
                "stock": len(self._stock),
                "history": tuple(self._seen[seat]),
                "_known": (self._masks[seat], self._taken),
            },
        )

    def seen_turns(self, seat: int, start: int = 0) -> list[Turn]:
        """``view(seat).history[start:]``, without building the view: the turns ``seat`` has
        seen since its ``start``-th (for observers that follow a hand turn by turn)."""
        return self._seen[seat][start:]

    def legal_moves(self) -> list[Move]:
        """The legal moves of the player to move (knocks without declared melds)."""
        legal = self._legal
        if legal is None:
            phase = self.phase
            if phase is _DISCARD:
                legal = tuple(
                    _discard_moves(
                        self.rules,
                        self._masks[self.to_move],
                        self.knock_limit,
                        self._taken,
                        self._knock_options(),
                    )
                )
            elif phase is _DRAW:
                legal = _STOCK_ONLY if self._stock_only else _DRAWS
            elif phase is _OFFER:
                legal = _OFFERS
            else:
                legal = ()
            self._legal = legal
        return list(legal)

    def _knock_options(self) -> dict[int, int]:
        """``mask_knock_options`` of the cards of the player to move, at the knock limit."""
        knocks = self._knocks
        if knocks is None:
            knocks = self._knocks = mask_knock_options(self._masks[self.to_move], self.knock_limit)
        return knocks

    # -- playing --------------------------------------------------------------------------
    def apply(self, move: Move, seat: int | None = None) -> Turn:
        """Play ``move`` for the player to move (``seat``, if given, must be that player).

        Raises ``IllegalMoveError`` saying why the move is not allowed; the state is then
        unchanged. Returns the turn as recorded, with the card drawn if any.
        """
        mover = self.to_move
        if seat is not None and seat != mover:
            raise IllegalMoveError(f"out of turn: seat {mover} is to move, not seat {seat}")
        kind = move.kind
        phase = self.phase
        # The common moves are checked here in a few operations; the rest in ``check``.
        if phase is _DISCARD and kind is _KIND_DISCARD:
            card = move.card
            assert card is not None
            taken = self._taken
            if not (self._masks[mover] >> card.index & 1) or (
                taken is not None and card == taken and not self.rules.discard_taken
            ):
                self.check(move)
        elif phase is _DRAW:
            if not (
                (kind is _KIND_STOCK and self._stock)
                or (kind is _KIND_PILE and not self._stock_only)
            ):
                self.check(move)
        elif not (phase is _OFFER and (kind is _KIND_TAKE or kind is _KIND_PASS)):
            self.check(move)
        self._legal = None
        self._knocks = None
        self._taken = None
        self._stock_only = False
        drawn: Card | None = None
        # Turns are immutable and most are one of a few hundred: those come from tables.
        if kind is _KIND_STOCK:
            drawn = self._stock.pop()
            turn = _STOCK_TURNS[mover][drawn.index]
            self._history.append(turn)
            self._seen[mover].append(turn)
            self._seen[1 - mover].append(_HIDDEN_STOCK[mover])
        else:
            if kind is _KIND_DISCARD:
                turn = _DISCARD_TURNS[mover][move.card.index]  # type: ignore[union-attr]
            elif kind is _KIND_PILE:
                drawn = self._taken = self._pile.pop()
                turn = _PILE_TURNS[mover][drawn.index]
            elif kind is _KIND_PASS:
                turn = _PASS_TURNS[mover]
            elif kind is _KIND_TAKE:
                drawn = self._taken = self._pile.pop()
                turn = Turn(mover, move, drawn)
            else:
                turn = Turn(mover, move, None)
            self._history.append(turn)
            self._seen[0].append(turn)
            self._seen[1].append(turn)
        if drawn is not None:
            self._masks[mover] |= 1 << drawn.index
            self._sorted[mover] = None
            self.turns += 1
            self.phase = _DISCARD
            return turn
        if kind is _KIND_PASS:
            self._pass_on()
        elif kind is _KIND_DISCARD:
            card = move.card
            assert card is not None
            self._masks[mover] ^= 1 << card.index
            self._sorted[mover] = None
            self._pile.append(card)
            self.to_move = 1 - mover
            self.phase = _DRAW
            stock = len(self._stock)
            if drawn_after_discard(self.rules, stock, self.turns):
                self._finish_draw(capped=stock > DRAW_STOCK)
        else:
            self._showdown(move)
        return turn

    def _pass_on(self) -> None:
        """After a pass on the first upcard: the dealer's turn to take it or pass, or after two
        passes the non-dealer's turn to draw, from the stock only."""
        if len(self._history) == 1:
            self.to_move = self.dealer
        else:
            self.to_move = 1 - self.dealer
            self.phase = _DRAW
            self._stock_only = True

    def check(self, move: Move) -> None:
        """Raise ``IllegalMoveError`` with the reason if ``move`` is not legal now for the
        player to move; the state is never changed. ``apply`` calls it first."""
        if self.phase is _OVER:
            raise IllegalMoveError("the hand is over")
        kind = move.kind
        phase = self.phase
        mask = self._masks[self.to_move]
        allowed, wanted = _ALLOWED[phase]
        if kind not in allowed:
            raise IllegalMoveError(f"{kind.value} is not allowed now: the player must {wanted}")
        if kind is MoveKind.PILE and self._stock_only:
            raise IllegalMoveError(
                "after both players pass the upcard, the first draw is from the stock"
            )
        if kind is MoveKind.STOCK and not self._stock:
            raise IllegalMoveError("the stock is empty")
        if move.card is not None:
            if not mask >> move.card.index & 1:
                raise IllegalMoveError(f"{move.card} is not in the player's hand")
            if move.card == self._taken and not self.rules.discard_taken:
                raise IllegalMoveError(
                    f"{move.card} was just taken from the discard pile and cannot be discarded"
                    " this turn"
                )
        if kind is MoveKind.KNOCK:
            assert move.card is not None
            rest = mask ^ (1 << move.card.index)
            if move.melds is not None:
                try:
                    arrangement = check_declared(_mask_cards(rest), move.melds)
                except MeldError as exc:
                    raise IllegalMoveError(f"bad declared melds: {exc}") from None
                dw = arrangement.deadwood
            elif self._knocks is not None:
                dw = self._knocks.get(move.card.index, -1)
                if dw < 0:
                    dw = mask_deadwood(rest)
            else:  # one knock asked for: its deadwood alone, not every discard's
                dw = mask_deadwood(rest)
            if dw > self.knock_limit:
                raise IllegalMoveError(
                    f"cannot knock discarding {move.card}: deadwood {dw} is above the knock"
                    f" limit {self.knock_limit}"
                )
        if kind is MoveKind.BIG_GIN:
            if not self.rules.big_gin:
                raise IllegalMoveError("big gin is not allowed under these rules")
            if move.melds is not None:
                try:
                    arrangement = check_declared(_mask_cards(mask), move.melds)
                except MeldError as exc:
                    raise IllegalMoveError(f"bad declared melds: {exc}") from None
                if arrangement.deadwood_cards:
                    raise IllegalMoveError("big gin needs all 11 cards in the declared melds")
            elif _big_gin_arrangement(_mask_cards(mask)) is None:
                raise IllegalMoveError("big gin needs all 11 cards melded")

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` is legal now for the player to move (``check`` without the
        reason). Asking about one move costs less than listing them all (``legal_moves``
        works out every knock)."""
        try:
            self.check(move)
        except IllegalMoveError:
            return False
        return True

    # -- endings --------------------------------------------------------------------------
    def _final_hands(self) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
        return (self.cards(0), self.cards(1))

    def _finish_draw(self, capped: bool) -> None:
        self.phase = Phase.OVER
        self.result = HandResult(
            outcome=Outcome.DRAW,
            winner=None,
            points=0,
            knocker=None,
            hands=self._final_hands(),
            capped=capped,
        )

    def _showdown(self, move: Move) -> None:
        knocker = self.to_move
        if move.kind is MoveKind.KNOCK:
            assert move.card is not None
            self._masks[knocker] ^= 1 << move.card.index
            self._sorted[knocker] = None
            self._pile.append(move.card)
            hand = self.cards(knocker)
            if move.melds is not None:
                arrangement = check_declared(hand, move.melds)
            else:
                seen = self._masks[knocker]
                for card in self._pile:
                    seen |= 1 << card.index
                unseen = _mask_cards(_ALL_CARDS & ~seen)
                arrangement = knocker_arrangement(hand, unseen)
        else:
            hand = self.cards(knocker)
            arrangement = (
                check_declared(hand, move.melds) if move.melds is not None else best_melds(hand)
            )
        self.phase = Phase.OVER
        self.result = score_showdown(
            self.rules,
            self.upcard,
            knocker,
            self._final_hands(),
            arrangement,
            big_gin=move.kind is MoveKind.BIG_GIN,
        )


_OFFER, _DRAW, _DISCARD, _OVER = Phase.OFFER, Phase.DRAW, Phase.DISCARD, Phase.OVER
_KIND_TAKE, _KIND_PASS = MoveKind.TAKE, MoveKind.PASS
_KIND_STOCK, _KIND_PILE, _KIND_DISCARD = MoveKind.STOCK, MoveKind.PILE, MoveKind.DISCARD
_TURN_KINDS = frozenset((MoveKind.TAKE, MoveKind.STOCK, MoveKind.PILE))
_OFFERS = (_TAKE, _PASS)
_DRAWS = (_STOCK, _PILE)
_STOCK_ONLY = (_STOCK,)
_HIDDEN_STOCK = (Turn(0, _STOCK, None), Turn(1, _STOCK, None))
_STOCK_TURNS = tuple(tuple(Turn(seat, _STOCK, card) for card in DECK) for seat in (0, 1))
_PILE_TURNS = tuple(tuple(Turn(seat, _PILE, card) for card in DECK) for seat in (0, 1))
_DISCARD_TURNS = tuple(
    tuple(Turn(seat, Move.discard(card), None) for card in DECK) for seat in (0, 1)
)
_PASS_TURNS = (Turn(0, _PASS, None), Turn(1, _PASS, None))
_ALL_CARDS = (1 << 52) - 1
_new_object = object.__new__
_set_attribute = object.__setattr__


def replay_hand(rules: Rules, deck: Sequence[Card], dealer: int, moves: Iterable[Move]) -> Hand:
    """Play ``moves`` from the deal; raises ``IllegalMoveError`` at the first illegal one."""
    hand = Hand(rules, deck, dealer)
    for move in moves:
        hand.apply(move)
    return hand
