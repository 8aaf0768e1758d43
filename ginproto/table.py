"""The table: plays one whole game between players, turning every fault into a ruling.

This is the one game loop of the project. The referee drives it with engine processes, the
in-process runner with SDK engine objects, ``ginref play`` with a person; all of them produce
the same ``GameLog`` for the same seed and the same (deterministic) players. It is pure: the
players do any I/O, and chance comes from the seed through ``shuffled_deck``.

Chance for game ``key`` of a run with seed ``seed``:
- the first dealer of a two-player game: ``DeckStream(seed, key, "dealer").below(2)``;
- the three-player role draw: the cards of ``shuffled_deck(seed, key, "roles")`` in order;
- hand ``n`` (1-based, drawn hands included): ``shuffled_deck(seed, key, n)``.
A duplicate pair plays the same ``key`` twice with the players swapped.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ginproto.cards import Card, DeckStream, shuffled_deck
from ginproto.game import Entry, Game, GameView, Roles, draw_roles
from ginproto.hand import IllegalMoveError, Phase, Turn
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.text import DETAIL_LIMIT, REASON_LIMIT, printable


class Decision(enum.Enum):
    """What a player is asked for. ``ADVICE`` is the three-player sitter's advice."""

    OFFER = "offer"
    DRAW = "draw"
    DISCARD = "discard"
    ADVICE = "advice"

    def __str__(self) -> str:
        return self.value


class FaultKind(enum.Enum):
    """The kinds of fault that forfeit a game."""

    CRASH = "crash"  # the engine died, exited early, or (in process) raised
    STARTUP = "startup"  # no handshake in time
    TIMEOUT = "timeout"  # no reply to a decision within the move limit
    FLAG = "flag"  # the game clock ran out
    MALFORMED = "malformed"  # a reply that is not a move line
    ILLEGAL = "illegal"  # a well-formed move the rules do not allow
    RESIGN = "resign"  # a person gave the game up (quit, end of input, Ctrl-C)

    def __str__(self) -> str:
        return self.value


class PlayerFault(Exception):
    """Raised by a player when it cannot give a valid answer; the table rules on it."""

    def __init__(self, kind: FaultKind, detail: str, reason: str = "") -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.reason = reason or detail
        """Why, in a few words, for a progress line (the detail is the whole story)."""


@dataclass(frozen=True, slots=True)
class Fault:
    """A ruling: ``player`` forfeited the game for ``kind``, with what happened."""

    player: int
    kind: FaultKind
    detail: str
    hand: int  # the hand number in which it happened (0: before the first deal)
    reason: str = field(default="", compare=False)
    """Why, in a few words, for a progress line or a result block (printable, bounded);
    empty: the detail says it."""
    stderr: tuple[str, ...] = field(default=(), compare=False)
    """The last lines the engine wrote to its standard error, each printable and bounded
    (filled in by the referee that ran it; empty for a player that is no process)."""

    @property
    def why(self) -> str:
        """The reason, or the detail when there is no shorter one."""
        return self.reason or self.detail


class Player(Protocol):
    """A seat at the table: an engine process, an SDK object, or a person."""

    def decide(self, view: GameView, decision: Decision) -> Move:
        """Answer one decision; raise ``PlayerFault`` if no valid answer can be had."""
        ...

    def hand_over(self, player: int, entry: Entry) -> None:
        """The hand ended (both hands are shown). Must not raise."""
        ...

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        """The game ended. Must not raise."""
        ...


@dataclass(slots=True)
class Step:
    """One move as played: who played it, the turn as recorded, and the advice given."""

    player: int
    turn: Turn
    advice: Move | None = None


@dataclass(slots=True)
class HandLog:
    number: int
    deck: tuple[Card, ...]
    dealer: int  # player number
    seats: tuple[int, int]  # player numbers of hand seats 0 and 1
    roles: Roles | None
    steps: list[Step] = field(default_factory=list)
    entry: Entry | None = None
    advice: Move | None = None  # advice for a decision the game ended on (a captain's fault)


@dataclass(slots=True)
class GameLog:
    """Everything needed to write a game's record and to replay it without the seed."""

    rules: Rules
    seed: int | str
    key: int
    first_dealer: int
    roles: Roles | None
    role_cards: tuple[Card, ...]
    game: Game
    hands: list[HandLog] = field(default_factory=list)
    fault: Fault | None = None

    @property
    def winner(self) -> int | None:
        return self.game.winner


def first_dealer(seed: int | str, key: int) -> int:
    return DeckStream(seed, key, "dealer").below(2)


def role_draw(seed: int | str, key: int) -> tuple[Roles, tuple[Card, ...]]:
    cards = shuffled_deck(seed, key, "roles")
    roles, used = draw_roles(cards)
    return roles, cards[:used]


def hand_deck(seed: int | str, key: int, number: int) -> tuple[Card, ...]:
    return shuffled_deck(seed, key, number)


class _Forfeit(Exception):
    def __init__(self, player: int, kind: FaultKind, detail: str, reason: str = "") -> None:
        super().__init__(detail)
        self.player, self.kind, self.detail = player, kind, detail
        self.reason = reason


def play_game(
    rules: Rules,
    players: Sequence[Player],
    seed: int | str,
    key: int = 0,
    on_step: Callable[[HandLog, Step], None] | None = None,
) -> GameLog:
    """Play one game of ``rules`` between ``players`` (indexed by player number).

    A ``PlayerFault`` or an illegal move forfeits the game to the opponent and is recorded
    as ``GameLog.fault``. Any other exception is a bug and propagates.
    """
    if len(players) != rules.players:
        raise ValueError(f"{rules.variant} needs {rules.players} players, not {len(players)}")
    roles: Roles | None = None
    role_cards: tuple[Card, ...] = ()
    dealer = 0
    if rules.players == 3:
        roles, role_cards = role_draw(seed, key)
    else:
        dealer = first_dealer(seed, key)
    game = Game(rules, dealer, roles)
    log = GameLog(rules, seed, key, dealer, roles, role_cards, game)

    def ask(player: int, view: GameView, decision: Decision) -> Move:
        try:
            return players[player].decide(view, decision)
        except PlayerFault as fault:
            raise _Forfeit(player, fault.kind, fault.detail, fault.reason) from None

    try:
        while not game.is_over:
            number = len(game.entries) + 1
            deck = hand_deck(seed, key, number)
            hand = game.deal(deck)
            hand_log = HandLog(
                number, deck, game.seats[hand.dealer], game.seats, game.roles
            )
            log.hands.append(hand_log)
            seats = game.seats  # fixed for the hand
            while hand.phase is not _OVER:
                mover = seats[hand.to_move]
                view = game.view(mover)
                advice = None
                if game.roles is not None and mover == game.roles.captain:
                    advice = _advice(game, ask)
                    view = dataclasses.replace(view, advice=advice)
                hand_log.advice = advice
                try:  # ``ask``, inline: this runs on every decision
                    move = players[mover].decide(view, _DECISION_OF[hand.phase._value_])
                except PlayerFault as fault:
                    raise _Forfeit(mover, fault.kind, fault.detail, fault.reason) from None
                try:
                    turn = game.apply(move)
                except IllegalMoveError as exc:
                    raise _Forfeit(mover, FaultKind.ILLEGAL, f"{move}: {exc}") from None
                step = Step(mover, turn, advice)
                hand_log.steps.append(step)
                hand_log.advice = None
                if on_step is not None:
                    on_step(hand_log, step)
            entry = game.entries[-1]
            hand_log.entry = entry
            for p, player in enumerate(players):
                player.hand_over(p, entry)
    except _Forfeit as forfeit:
        number = len(log.hands) if log.hands and log.hands[-1].entry is None else 0
        # A reason may quote what an engine wrote: bounded and printable before any record.
        detail = printable(forfeit.detail, DETAIL_LIMIT)
        reason = printable(forfeit.reason, REASON_LIMIT) if forfeit.reason != forfeit.detail else ""
        log.fault = Fault(forfeit.player, forfeit.kind, detail, number, reason)
        game.forfeit(forfeit.player)
    for p, player in enumerate(players):
        player.game_over(p, game, log.fault)
    return log


# By the phase's value: an enum member hashes in Python, its value string in C.
_DECISION_OF: dict[str, Decision] = {
    p.value: Decision(p.value) for p in Phase if p is not Phase.OVER
}


def decision_of(phase: Phase) -> Decision:
    """What the player to move is asked in ``phase`` (the sitter is asked ``ADVICE`` before
    the captain's every decision, apart). ``KeyError`` for ``Phase.OVER``."""
    return _DECISION_OF[phase._value_]
_OVER = Phase.OVER


def _advice(game: Game, ask: Callable[[int, GameView, Decision], Move]) -> Move:
    """Ask the sitter for advice on the captain's decision. Advice the captain could not play
    as given (declared melds included) is an illegal move of the sitter's."""
    assert game.roles is not None and game.hand is not None
    sitter = game.roles.sitter
    advice = ask(sitter, game.view(sitter), Decision.ADVICE)
    try:
        game.hand.check(advice)
    except IllegalMoveError as exc:
        raise _Forfeit(sitter, FaultKind.ILLEGAL, f"advice {advice}: {exc}") from None
    return advice
