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

from ginproto.cards import DECK, Card, card_index, check_deck
from ginproto.melds import (
    Arrangement,
    DefenderResult,
    Meld,
    MeldError,
    best_layoffs,
    best_melds,
    check_declared,
    knock_options,
    knocker_arrangement,
)
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules


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
    melds; ``Hand.apply`` also accepts a knock declaring any legal arrangement.
    """
    if phase is Phase.OFFER:
        return [Move.take(), Move.pass_()]
    if phase is Phase.DRAW:
        return [Move.stock()] if stock_only else [Move.stock(), Move.pile()]
    if phase is Phase.OVER:
        return []
    hand = sorted(cards, key=card_index)
    forbidden = None if rules.discard_taken else taken
    moves = [Move.discard(c) for c in hand if c != forbidden]
    knocks = knock_options(hand, knock_limit)
    moves.extend(Move.knock(c) for c in hand if c in knocks and c != forbidden)
    if rules.big_gin and _big_gin_arrangement(hand) is not None:
        moves.append(Move.big_gin())
    return moves


def _big_gin_arrangement(cards: Sequence[Card]) -> Arrangement | None:
    if len(cards) != 11:
        return None
    arrangement = best_melds(cards)
    return arrangement if arrangement.deadwood == 0 and not arrangement.deadwood_cards else None


@dataclass(frozen=True, slots=True)
class HandView:
    """Everything one seat may know about a hand: the basis of the protocol's position line."""

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
        for turn in self.history:
            if turn.move.kind is MoveKind.TAKE:
                return turn.card
        return self.pile[0] if self.pile else None

    @property
    def taken(self) -> Card | None:
        return _taken(self.phase, self.history)

    @property
    def stock_only(self) -> bool:
        return _stock_only(self.phase, self.history)

    def legal_moves(self) -> list[Move]:
        """The legal moves, if this seat is the one to move; otherwise none."""
        if self.seat != self.to_move:
            return []
        return legal_moves(
            self.rules, self.phase, self.cards, self.knock_limit, self.taken, self.stock_only
        )


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


class Hand:
    """A hand in progress. Drive it with ``legal_moves()`` and ``apply()``; read ``result``."""

    def __init__(self, rules: Rules, deck: Sequence[Card], dealer: int) -> None:
        if dealer not in (0, 1):
            raise ValueError("dealer must be seat 0 or 1")
        check_deck(deck)
        self.rules = rules
        self.deck: tuple[Card, ...] = tuple(deck)
        self.dealer = dealer
        first = 1 - dealer
        self._cards: tuple[set[Card], set[Card]] = (set(), set())
        for i in range(20):
            self._cards[first if i % 2 == 0 else dealer].add(self.deck[i])
        self.upcard = self.deck[20]
        self._pile: list[Card] = [self.upcard]
        self._stock: list[Card] = list(reversed(self.deck[21:]))
        self.knock_limit = rules.knock_limit_for(self.upcard)
        self.phase = Phase.OFFER
        self.to_move = first
        self.turns = 0
        self._history: list[Turn] = []
        # Each seat's view of the history, kept as moves are made (views are asked often).
        self._seen: tuple[list[Turn], list[Turn]] = ([], [])
        self.result: HandResult | None = None

    # -- what may be read ---------------------------------------------------------------
    def cards(self, seat: int) -> tuple[Card, ...]:
        """The seat's cards, sorted."""
        return tuple(sorted(self._cards[seat], key=card_index))

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
        return self.phase is Phase.OVER

    @property
    def taken(self) -> Card | None:
        """The card the player to move took from the discard pile this turn, if any."""
        return _taken(self.phase, self._history)

    def view(self, seat: int) -> HandView:
        """What ``seat`` may know: its cards, the pile, the stock count, and the history with
        the opponent's stock draws hidden."""
        return HandView(
            rules=self.rules,
            seat=seat,
            dealer=self.dealer,
            knock_limit=self.knock_limit,
            phase=self.phase,
            to_move=self.to_move,
            cards=self.cards(seat),
            pile=self.pile,
            stock=len(self._stock),
            history=tuple(self._seen[seat]),
        )

    def legal_moves(self) -> list[Move]:
        """The legal moves of the player to move (knocks without declared melds)."""
        return legal_moves(
            self.rules,
            self.phase,
            self._cards[self.to_move] if self.phase is not Phase.OVER else (),
            self.knock_limit,
            self.taken,
            _stock_only(self.phase, self._history),
        )

    # -- playing --------------------------------------------------------------------------
    def apply(self, move: Move, seat: int | None = None) -> Turn:
        """Play ``move`` for the player to move (``seat``, if given, must be that player).

        Raises ``IllegalMoveError`` saying why the move is not allowed; the state is then
        unchanged. Returns the turn as recorded, with the card drawn if any.
        """
        if seat is not None and seat != self.to_move:
            raise IllegalMoveError(f"out of turn: seat {self.to_move} is to move, not seat {seat}")
        self.check(move)
        mover = self.to_move
        hand = self._cards[mover]
        kind = move.kind
        drawn: Card | None = None
        if kind is MoveKind.TAKE or kind is MoveKind.PILE:
            drawn = self._pile.pop()
        elif kind is MoveKind.STOCK:
            drawn = self._stock.pop()
        turn = Turn(mover, move, drawn)
        self._record(turn)
        if drawn is not None:
            hand.add(drawn)
            self.turns += 1
            self.phase = Phase.DISCARD
            return turn
        if kind is MoveKind.PASS:
            if len(self._history) == 1:
                self.to_move = self.dealer
            else:
                self.to_move = 1 - self.dealer
                self.phase = Phase.DRAW
        elif kind is MoveKind.DISCARD:
            assert move.card is not None
            hand.remove(move.card)
            self._pile.append(move.card)
            self.to_move = 1 - mover
            self.phase = Phase.DRAW
            if len(self._stock) <= 2 or self.turns >= self.rules.turn_cap:
                self._finish_draw(capped=len(self._stock) > 2)
        else:
            self._showdown(move)
        return turn

    def _record(self, turn: Turn) -> None:
        self._history.append(turn)
        if turn.move.kind is MoveKind.STOCK:
            hidden = Turn(turn.seat, turn.move, None)
            self._seen[turn.seat].append(turn)
            self._seen[1 - turn.seat].append(hidden)
        else:
            self._seen[0].append(turn)
            self._seen[1].append(turn)

    def check(self, move: Move) -> None:
        """Raise ``IllegalMoveError`` with the reason if ``move`` is not legal now for the
        player to move; the state is never changed. ``apply`` calls it first."""
        if self.phase is Phase.OVER:
            raise IllegalMoveError("the hand is over")
        kind = move.kind
        phase = self.phase
        hand = self._cards[self.to_move]
        allowed, wanted = _ALLOWED[phase]
        if kind not in allowed:
            raise IllegalMoveError(f"{kind} is not allowed now: the player must {wanted}")
        if kind is MoveKind.PILE and _stock_only(phase, self._history):
            raise IllegalMoveError(
                "after both players pass the upcard, the first draw is from the stock"
            )
        if kind is MoveKind.STOCK and not self._stock:
            raise IllegalMoveError("the stock is empty")
        if move.card is not None:
            if move.card not in hand:
                raise IllegalMoveError(f"{move.card} is not in the player's hand")
            if move.card == self.taken and not self.rules.discard_taken:
                raise IllegalMoveError(
                    f"{move.card} was just taken from the discard pile and cannot be discarded"
                    " this turn"
                )
        if kind is MoveKind.KNOCK:
            assert move.card is not None
            rest = hand - {move.card}
            if move.melds is not None:
                try:
                    arrangement = check_declared(rest, move.melds)
                except MeldError as exc:
                    raise IllegalMoveError(f"bad declared melds: {exc}") from None
                dw = arrangement.deadwood
            else:
                dw = knock_options(list(hand), 100).get(move.card, 999)
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
                    arrangement = check_declared(hand, move.melds)
                except MeldError as exc:
                    raise IllegalMoveError(f"bad declared melds: {exc}") from None
                if arrangement.deadwood_cards:
                    raise IllegalMoveError("big gin needs all 11 cards in the declared melds")
            elif _big_gin_arrangement(list(hand)) is None:
                raise IllegalMoveError("big gin needs all 11 cards melded")

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
        defender = 1 - knocker
        hand = self._cards[knocker]
        rules = self.rules
        if move.kind is MoveKind.KNOCK:
            assert move.card is not None
            hand.remove(move.card)
            self._pile.append(move.card)
            if move.melds is not None:
                arrangement = check_declared(hand, move.melds)
            else:
                unseen = set(DECK) - hand - set(self._pile)
                arrangement = knocker_arrangement(sorted(hand), sorted(unseen))
        else:
            arrangement = (
                check_declared(hand, move.melds)
                if move.melds is not None
                else best_melds(sorted(hand))
            )
        k = arrangement.deadwood
        defender_cards = sorted(self._cards[defender])
        if move.kind is MoveKind.BIG_GIN or k == 0:
            result = best_layoffs((), defender_cards)
            big = move.kind is MoveKind.BIG_GIN
            outcome = Outcome.BIG_GIN if big else Outcome.GIN
            winner = knocker
            points = result.deadwood + (rules.big_gin_bonus if big else rules.gin_bonus)
        else:
            result = best_layoffs(arrangement.melds, defender_cards)
            d = result.deadwood
            if k < d:
                outcome, winner, points = Outcome.KNOCK, knocker, d - k
            else:
                outcome, winner, points = Outcome.UNDERCUT, defender, k - d + rules.undercut_bonus
        multiplier = rules.multiplier_for(self.upcard)
        self.phase = Phase.OVER
        self.result = HandResult(
            outcome=outcome,
            winner=winner,
            points=points * multiplier,
            knocker=knocker,
            hands=self._final_hands(),
            knocker_melds=arrangement.melds,
            knocker_deadwood=arrangement.deadwood_cards,
            defender=result,
            multiplier=multiplier,
        )


def replay_hand(rules: Rules, deck: Sequence[Card], dealer: int, moves: Iterable[Move]) -> Hand:
    """Play ``moves`` from the deal; raises ``IllegalMoveError`` at the first illegal one."""
    hand = Hand(rules, deck, dealer)
    for move in moves:
        hand.apply(move)
    return hand
