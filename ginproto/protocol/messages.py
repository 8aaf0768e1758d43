"""The protocol's messages: one frozen dataclass per line, in both directions.

Every message has ``format()`` (also its ``str``), giving the line without its ``\\n``; the
``position`` line is ``format_position(view)``. Reading lines back is ``ginproto.protocol.codec``.
``RefereeMessage`` and ``EngineMessage`` are the unions of what each side sends.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ginproto.cards import Card, card_text
from ginproto.game import Entry, Game, GameEnd, GameView
from ginproto.hand import Turn
from ginproto.moves import Move

# ==========================================================================================
# Messages
from ginproto.protocol.grammar import (
    ADVICE,
    CAPPED,
    CARDS,
    CLOSED,
    DEALER,
    DEFAULT,
    DEFENDERDEADWOOD,
    DEFENDERMELDS,
    DRAWS,
    EMPTY,
    END,
    FAULT,
    GAME,
    GAMEOVER,
    GAMES,
    GIN,
    GINOK,
    GO,
    HAND,
    HANDOVER,
    HANDS,
    HISTORY,
    ID,
    INC,
    INFO,
    ISREADY,
    KNOCKER,
    KNOCKERDEADWOOD,
    KNOCKERMELDS,
    KNOCKLIMIT,
    LAYOFF_SEP,
    LAYOFFS,
    LIST_SEP,
    LOSSES,
    MATCHOVER,
    MATCHSCORE,
    MAX,
    MIN,
    MOVE,
    MOVETIME,
    MULTIPLIER,
    NAME,
    NEWGAME,
    NEWMATCH,
    NONE,
    OPTION,
    OUTCOME,
    PART_SEP,
    PHASE,
    PILE,
    PLAYER,
    POINTS,
    POSITION,
    PROTOCOL,
    PROTOCOL_VERSION,
    QUIT,
    READYOK,
    ROLES,
    SCORES,
    SEAT,
    SEAT0,
    SEAT1,
    SEATS,
    SETOPTION,
    STOCK,
    TIME,
    TOMOVE,
    TYPE,
    UPCARD,
    VALUE,
    VAR,
    WINNER,
    WINNERS,
    WINS,
    ProtocolError,
    _bool,
    _field,
    _fmt_bool,
    _fmt_list,
    _fmt_opt_ints,
    _fmt_roles,
    _fmt_rules,
    _fmt_scores,
    _join,
    _signed,
    _words,
    move_token,
    turn_token,
)
from ginproto.rules import Rules
from ginproto.table import Decision, Fault, FaultKind


@dataclass(frozen=True, slots=True)
class Gin:
    """Referee: start the handshake. The engine answers ``id``, ``option`` lines and ``ginok``."""

    protocol: int = PROTOCOL_VERSION

    def format(self) -> str:
        return _join(GIN, PROTOCOL, self.protocol)

    __str__ = format


@dataclass(frozen=True, slots=True)
class GinOk:
    """Engine: the handshake is complete. A bare ``ginok`` means protocol version 1."""

    protocol: int = PROTOCOL_VERSION

    def format(self) -> str:
        return _join(GINOK, PROTOCOL, self.protocol)

    __str__ = format


@dataclass(frozen=True, slots=True)
class Id:
    """Engine: ``id <key> <text>``; the keys ``name``, ``author`` and ``version`` are defined."""

    key: str
    value: str

    def format(self) -> str:
        return _join(ID, self.key, _words(self.value))

    __str__ = format


class OptionType(enum.Enum):
    """The kinds of engine option, as in UCI."""

    CHECK = "check"
    SPIN = "spin"
    COMBO = "combo"
    STRING = "string"

    def __str__(self) -> str:
        return self.value


OptionValue = bool | int | str


@dataclass(frozen=True, slots=True)
class OptionDecl:
    """Engine: declares an option, e.g. ``option name Seed type spin default 0 min 0 max 99``.

    ``default`` is kept as text; ``value_of`` turns a text value into its typed value.
    """

    name: str
    type: OptionType
    default: str = ""
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()

    @classmethod
    def check(cls, name: str, default: bool) -> OptionDecl:
        return cls(name, OptionType.CHECK, _fmt_bool(default))

    @classmethod
    def spin(
        cls, name: str, default: int, min: int | None = None, max: int | None = None
    ) -> OptionDecl:
        return cls(name, OptionType.SPIN, str(default), min, max)

    @classmethod
    def combo(cls, name: str, default: str, choices: Sequence[str]) -> OptionDecl:
        return cls(name, OptionType.COMBO, default, vars=tuple(choices))

    @classmethod
    def string(cls, name: str, default: str = "") -> OptionDecl:
        return cls(name, OptionType.STRING, default)

    def value_of(self, text: str) -> OptionValue:
        """The typed value of ``text`` for this option; ``ProtocolError`` if it is not valid."""
        try:
            return self._value_of(text)
        except ValueError as exc:
            raise ProtocolError(str(exc), SETOPTION) from None

    def _value_of(self, text: str) -> OptionValue:
        if self.type is OptionType.CHECK:
            return _bool(text, self.name)
        if self.type is OptionType.SPIN:
            value = _signed(text, self.name)
            if (self.min is not None and value < self.min) or (
                self.max is not None and value > self.max
            ):
                raise ValueError(
                    f"{self.name} must be between {self.min} and {self.max}, not {value}"
                )
            return value
        if self.type is OptionType.COMBO:
            for var in self.vars:
                if var.lower() == text.lower():
                    return var
            raise ValueError(f"{self.name} must be one of {'|'.join(self.vars)}, not {text!r}")
        return "" if text == EMPTY else text

    @property
    def default_value(self) -> OptionValue:
        """The typed default; ``ProtocolError`` if the declared default is not a valid value."""
        return self.value_of(self.default)

    def format(self) -> str:
        parts = [OPTION, NAME, _words(self.name), TYPE, self.type.value]
        parts += [DEFAULT, _words(self.default) or EMPTY]
        parts += _field(MIN, self.min) + _field(MAX, self.max)
        for var in self.vars:
            parts += [VAR, _words(var)]
        return " ".join(parts)

    __str__ = format


@dataclass(frozen=True, slots=True)
class SetOption:
    """Referee: ``setoption name <name> [value <value>]``. An empty value is ``<empty>``."""

    name: str
    value: str | None = None

    def format(self) -> str:
        parts = [SETOPTION, NAME, _words(self.name)]
        if self.value is not None:
            parts += [VALUE, _words(self.value) or EMPTY]
        return " ".join(parts)

    __str__ = format


@dataclass(frozen=True, slots=True)
class IsReady:
    """Referee: ``isready``, answered with ``readyok`` at any time."""

    def format(self) -> str:
        return ISREADY

    __str__ = format


@dataclass(frozen=True, slots=True)
class ReadyOk:
    """Engine: the answer to ``isready``."""

    def format(self) -> str:
        return READYOK

    __str__ = format


@dataclass(frozen=True, slots=True)
class Quit:
    """Referee: the engine should exit now."""

    def format(self) -> str:
        return QUIT

    __str__ = format


@dataclass(frozen=True, slots=True)
class NewMatch:
    """Referee: a match starts; ``games`` is how many games are planned, if known."""

    games: int | None = None

    def format(self) -> str:
        return " ".join([NEWMATCH, *_field(GAMES, self.games)])

    __str__ = format


@dataclass(frozen=True, slots=True)
class NewGame:
    """Referee: game number ``game`` (from 1) of the match starts; the engine is ``player``."""

    game: int
    player: int
    rules: Rules

    def format(self) -> str:
        head = [NEWGAME, GAME, str(self.game), PLAYER, str(self.player)]
        return " ".join([*head, *_fmt_rules(self.rules)])

    __str__ = format


@dataclass(frozen=True, slots=True)
class Position:
    """Referee: everything this player may know, sent before every ``go``."""

    view: GameView

    def format(self) -> str:
        return format_position(self.view)

    __str__ = format


@dataclass(frozen=True, slots=True)
class Go:
    """Referee: decide now. Times are in milliseconds; ``None`` means no limit of that kind.

    ``time`` is this player's remaining game clock, ``inc`` what is added to it after each
    move, ``movetime`` the limit for this one reply.
    """

    decision: Decision
    time: int | None = None
    inc: int | None = None
    movetime: int | None = None

    def format(self) -> str:
        clock = [*_field(TIME, self.time), *_field(INC, self.inc)]
        return " ".join([GO, self.decision.value, *clock, *_field(MOVETIME, self.movetime)])

    __str__ = format


@dataclass(frozen=True, slots=True)
class MoveReply:
    """Engine: the answer to ``go``: ``move <move>``."""

    move: Move

    def format(self) -> str:
        return _join(MOVE, self.move)

    __str__ = format


@dataclass(frozen=True, slots=True)
class Info:
    """Engine: free text for the log, at any time; the referee never acts on it."""

    text: str = ""

    def format(self) -> str:
        return " ".join([INFO, _words(self.text)]).rstrip()

    __str__ = format


@dataclass(frozen=True, slots=True)
class HandOver:
    """Referee: a hand ended; both hands are shown. ``player`` is the receiving player."""

    player: int
    entry: Entry

    def format(self) -> str:
        entry, result = self.entry, self.entry.result
        seats = entry.seats
        parts = [HANDOVER, PLAYER, str(self.player), HAND, str(entry.number)]
        parts += [DEALER, str(seats.index(entry.dealer)), SEATS, _fmt_list(seats)]
        parts += _field(ROLES, None if entry.roles is None else _fmt_roles(entry.roles))
        parts += [OUTCOME, result.outcome.value]
        parts += _field(KNOCKER, result.knocker) + _field(WINNER, result.winner)
        parts += [POINTS, str(result.points), MULTIPLIER, str(result.multiplier)]
        parts += [CAPPED, _fmt_bool(result.capped)]
        parts += [SEAT0, _fmt_list(result.hands[0]), SEAT1, _fmt_list(result.hands[1])]
        parts += [KNOCKERMELDS, _fmt_list(result.knocker_melds)]
        parts += [KNOCKERDEADWOOD, _fmt_list(result.knocker_deadwood)]
        defender = result.defender
        if defender is not None:
            parts += [DEFENDERMELDS, _fmt_list(defender.melds)]
            layoffs = (f"{lo.card}{LAYOFF_SEP}{lo.meld}" for lo in defender.layoffs)
            parts += [LAYOFFS, _fmt_list(layoffs)]
            parts += [DEFENDERDEADWOOD, _fmt_list(defender.deadwood_cards)]
        parts += [GAMES, _fmt_list(entry.games), SCORES, _fmt_scores(entry.totals)]
        return " ".join(parts)

    __str__ = format


@dataclass(frozen=True, slots=True)
class GameOver:
    """Referee: the game ended. ``scores[game][player]`` are the final scores (with any game
    bonuses), ``winners[game]`` the winner of each game (Hollywood has three), ``winner``
    the overall winner (``None``: drawn), ``fault`` who forfeited and why."""

    player: int
    end: GameEnd
    winner: int | None
    hands: int
    scores: tuple[tuple[int, ...], ...]
    winners: tuple[int | None, ...]
    fault: tuple[int, FaultKind] | None = None

    @classmethod
    def of(cls, player: int, game: Game, fault: Fault | None = None) -> GameOver:
        """The message for ``player`` at the end of ``game`` (which must be over)."""
        if game.end is None:
            raise ValueError("the game is not over")
        return cls(
            player=player,
            end=game.end,
            winner=game.winner,
            hands=len(game.entries),
            scores=tuple(game.final_scores(g) for g in range(len(game.totals))),
            winners=tuple(game.game_winners),
            fault=None if fault is None else (fault.player, fault.kind),
        )

    def format(self) -> str:
        parts = [GAMEOVER, PLAYER, str(self.player), END, self.end.value]
        parts += _field(WINNER, self.winner)
        parts += [HANDS, str(self.hands), SCORES, _fmt_scores(self.scores)]
        parts += [WINNERS, _fmt_opt_ints(self.winners)]
        if self.fault is not None:
            parts += [FAULT, f"{self.fault[0]}{PART_SEP}{self.fault[1].value}"]
        return " ".join(parts)

    __str__ = format


@dataclass(frozen=True, slots=True)
class MatchScore:
    """Referee: the match so far, as this engine's games won, lost and drawn."""

    games: int
    wins: int
    losses: int
    draws: int

    _WORD: ClassVar[str] = MATCHSCORE

    def format(self) -> str:
        return _join(
            self._WORD, GAMES, self.games, WINS, self.wins, LOSSES, self.losses, DRAWS, self.draws
        )

    __str__ = format


@dataclass(frozen=True, slots=True)
class MatchOver(MatchScore):
    """Referee: the match is over, with its final score; ``quit`` may follow."""

    _WORD: ClassVar[str] = MATCHOVER


@dataclass(frozen=True, slots=True)
class Unknown:
    """A line whose first word is no message of its direction; the reader ignores it."""

    line: str

    def format(self) -> str:
        return self.line

    __str__ = format


RefereeMessage = (
    Gin | SetOption | IsReady | NewMatch | NewGame | Position | Go | HandOver | GameOver
    | MatchScore | Quit | Unknown
)
EngineMessage = Id | OptionDecl | GinOk | ReadyOk | MoveReply | Info | Unknown


def format_position(view: GameView) -> str:
    """The ``position`` line of ``view``: this player's whole view of the game."""
    hand = view.hand
    history = _fmt_list(turn_token(t) for t in hand.history)
    return _position_line(view, history, " ".join(_fmt_rules(hand.rules)))


def _position_line(
    view: GameView, history: str, rules: str, pile: str | None = None, tail: str | None = None
) -> str:
    """The ``position`` line of ``view``, its history and its rule parameters given already
    formatted (by ``format_position``, or kept from line to line by ``PositionWriter``, which
    may also give the pile's text and the ``_position_tail``)."""
    hand = view.hand
    if pile is None:
        pile = _fmt_cards(hand.pile)
    line = (
        f"{POSITION} {PLAYER} {view.player} {SEAT} {hand.seat} {DEALER} {hand.dealer}"
        f" {HAND} {view.hand_number} {PHASE} {hand.phase.value} {TOMOVE} {hand.to_move}"
        f" {KNOCKLIMIT} {hand.knock_limit} {STOCK} {hand.stock}"
        f" {CARDS} {_fmt_cards(hand.cards)} {PILE} {pile}"
    )
    upcard = hand.upcard
    if upcard is not None:
        line += f" {UPCARD} {upcard}"
    line += f" {HISTORY} {history} {_position_tail(view) if tail is None else tail}"
    if view.advice is not None:
        line += f" {ADVICE} {move_token(view.advice)}"
    return f"{line} {rules}" if rules else line


def _fmt_cards(cards: Sequence[Card]) -> str:
    """``_fmt_list`` of cards, without a Python call per card."""
    return LIST_SEP.join(map(card_text, cards)) or NONE


def _position_tail(view: GameView) -> str:
    """The game's part of a ``position`` line: seats, scores, closed games and roles."""
    tail = (
        f"{SEATS} {_fmt_list(view.seats)} {SCORES} {_fmt_scores(view.totals)}"
        f" {CLOSED} {_fmt_list(map(_fmt_bool, view.closed))}"
    )
    if view.roles is not None:
        tail += f" {ROLES} {_fmt_roles(view.roles)}"
    return tail


class PositionWriter:
    """``format_position`` for one engine, decision after decision, formatting only what is
    new since its last line.

    A hand's history only grows, and it is most of a ``position`` line: formatted afresh
    each time, a decision late in a long hand would cost several times one early in it.
    The writer keeps the turns it has written and their text, and formats only the turns
    added since; the rule parameters are formatted again only when the rules change. Any
    view may be given: a history that does not continue the last one (another hand, game or
    seat) is formatted afresh, so that ``format(view) == format_position(view)`` always.
    """

    __slots__ = (
        "_game",
        "_history",
        "_pile",
        "_pile_text",
        "_rules",
        "_rules_text",
        "_tail",
        "_turns",
    )

    def __init__(self) -> None:
        self._turns: tuple[Turn, ...] = ()
        self._history = NONE
        self._rules: Rules | None = None
        self._rules_text = ""
        self._pile: tuple[Card, ...] = ()
        self._pile_text = NONE
        self._game: tuple[object, ...] = ()
        self._tail = ""

    def format(self, view: GameView) -> str:
        """The ``position`` line of ``view``, as ``format_position(view)``."""
        hand = view.hand
        turns = hand.history
        known = self._turns
        n = len(known)
        # Turns compare by value, so an equal start is an equal start of text whichever
        # hand it comes from; the same turn objects (the usual case) compare at once.
        if n and len(turns) >= n and turns[:n] == known:
            if len(turns) > n:
                self._history += LIST_SEP + LIST_SEP.join(map(turn_token, turns[n:]))
        else:
            self._history = _fmt_list(map(turn_token, turns))
        self._turns = turns
        rules = hand.rules
        if rules is not self._rules:
            self._rules, self._rules_text = rules, " ".join(_fmt_rules(rules))
        # The pile grows a card a turn and loses its top card when it is taken: its text
        # follows, from the last pile without its top card at most.
        pile = hand.pile
        if pile is not self._pile:
            last, text = self._pile, self._pile_text
            n = len(last)
            if n and pile[:n] != last and pile[: n - 1] == last[:-1]:
                n -= 1
                last, text = last[:-1], text[: text.rfind(LIST_SEP)] if n else NONE
            if n and len(pile) >= n and pile[:n] == last:
                if len(pile) > n:
                    text += LIST_SEP + LIST_SEP.join(map(card_text, pile[n:]))
                self._pile_text = text
            else:
                self._pile_text = _fmt_cards(pile)
            self._pile = pile
        game = (view.seats, view.totals, view.closed, view.roles)
        if game != self._game:
            self._game, self._tail = game, _position_tail(view)
        return _position_line(view, self._history, self._rules_text, self._pile_text, self._tail)
