"""The engine protocol's codec: every line in both directions as a typed message.

This one module is used by the referee and by the engine SDK alike, so the two sides can never
disagree about a line. spec/PROTOCOL.md is the normative text; every protocol word is a constant
here, and nowhere else in the code.

- ``parse_referee_line(line)`` reads a line the referee sends (``gin``, ``position``, ``go``...);
  ``parse_engine_line(line)`` reads a line an engine sends (``id``, ``ginok``, ``move``...).
  A line whose first word is not a message of that direction comes back as ``Unknown``.
- Every message has ``format()`` (also its ``str``), giving the line without its ``\\n``.
  ``parse(format(message)) == message`` for every message, and in particular
  ``parse_position(format_position(view)) == view`` for every ``GameView``.
- Malformed input raises ``ProtocolError`` (a ``ValueError``) saying what was expected, and
  never anything else. ``ProtocolError.keyword`` is the line's first word, so the referee can
  tell a malformed ``move`` reply (a fault) from a malformed ``info`` line (ignored).

The lines made of fields (``position``, ``go``, ``newgame``, ``handover``...) share one shape,
which is what makes the protocol forward compatible: after the message word come fields that
are either a keyword followed by exactly one value token, or a single ``name=value`` rule
parameter token. A reader skips any keyword (with its value) or parameter it does not know.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, TypeVar

from ginproto.cards import Card, CardError
from ginproto.game import Entry, Game, GameEnd, GameView, Roles
from ginproto.hand import HandResult, HandView, Outcome, Phase, Turn
from ginproto.melds import DefenderResult, Layoff, Meld, MeldError
from ginproto.moves import Move, MoveError, MoveKind
from ginproto.rules import Rules
from ginproto.table import Decision, Fault, FaultKind

logger = logging.getLogger(__name__)

PROTOCOL_VERSION: Final = 1
"""The protocol version this codec speaks (``gin protocol 1`` / ``ginok protocol 1``)."""

NUMBER_DIGITS: Final = 12
"""A number in a protocol line has at most this many decimal digits (spec/PROTOCOL.md, 3)."""
MAX_NUMBER: Final = 10**NUMBER_DIGITS - 1
"""The largest number a protocol line can carry: a rule value, a score, a clock in ms."""

# -- message words, referee to engine ------------------------------------------------------
GIN: Final = "gin"
SETOPTION: Final = "setoption"
ISREADY: Final = "isready"
NEWMATCH: Final = "newmatch"
NEWGAME: Final = "newgame"
POSITION: Final = "position"
GO: Final = "go"
HANDOVER: Final = "handover"
GAMEOVER: Final = "gameover"
MATCHSCORE: Final = "matchscore"
MATCHOVER: Final = "matchover"
QUIT: Final = "quit"

# -- message words, engine to referee ------------------------------------------------------
ID: Final = "id"
OPTION: Final = "option"
GINOK: Final = "ginok"
READYOK: Final = "readyok"
MOVE: Final = "move"
INFO: Final = "info"

# -- field words ---------------------------------------------------------------------------
PROTOCOL: Final = "protocol"
NAME: Final = "name"  # also the usual id key
AUTHOR: Final = "author"  # id key
VERSION: Final = "version"  # id key
TYPE: Final = "type"
DEFAULT: Final = "default"
MIN: Final = "min"
MAX: Final = "max"
VAR: Final = "var"
VALUE: Final = "value"
EMPTY: Final = "<empty>"  # an empty string value, as in UCI

GAMES: Final = "games"
GAME: Final = "game"
PLAYER: Final = "player"
SEAT: Final = "seat"
DEALER: Final = "dealer"
HAND: Final = "hand"
PHASE: Final = "phase"
TOMOVE: Final = "tomove"
KNOCKLIMIT: Final = "knocklimit"
STOCK: Final = "stock"
CARDS: Final = "cards"
PILE: Final = "pile"
UPCARD: Final = "upcard"
HISTORY: Final = "history"
SEATS: Final = "seats"
SCORES: Final = "scores"
CLOSED: Final = "closed"
ROLES: Final = "roles"
ADVICE: Final = "advice"

TIME: Final = "time"
INC: Final = "inc"
MOVETIME: Final = "movetime"

OUTCOME: Final = "outcome"
KNOCKER: Final = "knocker"
WINNER: Final = "winner"
POINTS: Final = "points"
MULTIPLIER: Final = "multiplier"
CAPPED: Final = "capped"
SEAT0: Final = "seat0"
SEAT1: Final = "seat1"
KNOCKERMELDS: Final = "knockermelds"
KNOCKERDEADWOOD: Final = "knockerdeadwood"
DEFENDERMELDS: Final = "defendermelds"
LAYOFFS: Final = "layoffs"
DEFENDERDEADWOOD: Final = "defenderdeadwood"

END: Final = "end"
WINNERS: Final = "winners"
HANDS: Final = "hands"
FAULT: Final = "fault"

WINS: Final = "wins"
LOSSES: Final = "losses"
DRAWS: Final = "draws"

# -- value syntax --------------------------------------------------------------------------
NONE: Final = "-"  # an empty list, or a missing element of a list
LIST_SEP: Final = ","  # between the elements of a list
GAME_SEP: Final = "/"  # between the games (score columns) of a score list
PART_SEP: Final = ":"  # between the parts of a turn, move or fault token
PARAM_SEP: Final = "="  # in a rule parameter token, name=value
LAYOFF_SEP: Final = ">"  # in a layoff token, card>meld
TRUE: Final = "true"
FALSE: Final = "false"

_DRAW_KINDS: Final = frozenset({MoveKind.TAKE, MoveKind.STOCK, MoveKind.PILE})


class ProtocolError(ValueError):
    """A malformed protocol line. The message says what was expected.

    ``keyword`` is the first word of the offending line (``"move"``, ``"position"``...), or
    ``None`` for an empty line.
    """

    def __init__(self, message: str, keyword: str | None = None) -> None:
        super().__init__(message)
        self.keyword = keyword


# ==========================================================================================
# Values


def _words(text: str) -> str:
    """Free text as protocol words: white space runs become one space, no line breaks."""
    return " ".join(text.split())


def _int(text: str, what: str, low: int = 0, high: int | None = None) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > NUMBER_DIGITS:
        raise ValueError(
            f"{what} must be a whole number of at most {NUMBER_DIGITS} digits, not {text!r}"
        )
    value = int(text)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{what} must be {bound}, not {value}")
    return value


def _bool(text: str, what: str) -> bool:
    if text == TRUE:
        return True
    if text == FALSE:
        return False
    raise ValueError(f"{what} must be {TRUE} or {FALSE}, not {text!r}")


def _fmt_bool(value: bool) -> str:
    return TRUE if value else FALSE


def _list(text: str) -> list[str]:
    """The elements of a list value; ``-`` is the empty list."""
    if text == NONE:
        return []
    items = text.split(LIST_SEP)
    if any(not item for item in items):
        raise ValueError(f"empty element in the list {text!r} (write {NONE} for an empty list)")
    return items


def _fmt_list(items: Iterable[object]) -> str:
    return LIST_SEP.join(map(str, items)) or NONE


def _cards(text: str, what: str) -> tuple[Card, ...]:
    try:
        return tuple(Card.from_str(item) for item in _list(text))
    except CardError as exc:
        raise ValueError(f"{what}: {exc}") from None


def _melds(text: str, what: str) -> tuple[Meld, ...]:
    try:
        return tuple(Meld.from_str(item) for item in _list(text))
    except MeldError as exc:
        raise ValueError(f"{what}: {exc}") from None


def _ints(text: str, what: str) -> tuple[int, ...]:
    return tuple(_int(item, what) for item in _list(text))


def _opt_ints(text: str, what: str) -> tuple[int | None, ...]:
    """A list of at least one element, each a number or ``-`` for none: ``0,-,1``, ``-``."""
    items = text.split(LIST_SEP)
    return tuple(None if item == NONE else _int(item, what) for item in items)


def _fmt_opt_ints(items: Sequence[int | None]) -> str:
    if not items:
        raise ValueError("a list of numbers-or-none needs at least one element")
    return LIST_SEP.join(NONE if item is None else str(item) for item in items)


def _scores(text: str, what: str) -> tuple[tuple[int, ...], ...]:
    return tuple(_ints(column, what) for column in text.split(GAME_SEP))


def _fmt_scores(totals: Sequence[Sequence[int]]) -> str:
    return GAME_SEP.join(_fmt_list(column) for column in totals)


def _bools(text: str, what: str) -> tuple[bool, ...]:
    return tuple(_bool(item, what) for item in _list(text))


def _seat(text: str, what: str) -> int:
    return _int(text, what, 0, 1)


def _seats(text: str) -> tuple[int, int]:
    seats = _ints(text, SEATS)
    if len(seats) != 2 or seats[0] == seats[1]:
        raise ValueError(f"{SEATS} must name two different players, e.g. 0,1 (got {text!r})")
    return seats[0], seats[1]


def _roles(text: str) -> Roles:
    items = _ints(text, ROLES)
    if len(items) != 3:
        raise ValueError(f"{ROLES} must be box,captain,sitter, e.g. 2,0,1 (got {text!r})")
    return Roles(*items)  # raises ValueError unless 0, 1 and 2 appear once each


def _fmt_roles(roles: Roles) -> str:
    return _fmt_list((roles.box, roles.captain, roles.sitter))


_E = TypeVar("_E", bound=enum.Enum)


def _enum_value(kind: type[_E], text: str, what: str) -> _E:
    for member in kind:
        if member.value == text:
            return member
    choices = "|".join(str(m.value) for m in kind)
    raise ValueError(f"{what} must be one of {choices}, not {text!r}")


def move_token(move: Move) -> str:
    """A move as one token, its words joined by ``:`` (``knock:7h:5s-6s-7s``)."""
    return str(move).replace(" ", PART_SEP)


def parse_move_token(text: str) -> Move:
    """The inverse of ``move_token``; raises ``ValueError`` (``MoveError``) if malformed."""
    parts = text.split(PART_SEP)
    if any(not part for part in parts):
        raise MoveError(f"malformed move token {text!r} (expected e.g. discard{PART_SEP}7h)")
    return Move.from_str(" ".join(parts))


def turn_token(turn: Turn) -> str:
    """One history turn as a token: ``seat:move[:card drawn]`` (``0:stock:Kd``, ``1:stock``)."""
    move = turn.move
    text = _SEAT_WORDS[turn.seat] + _KIND_WORDS[move.kind]
    if move.card is not None:
        text += PART_SEP + str(move.card)
    if move.melds:
        text += PART_SEP + PART_SEP.join(str(m) for m in move.melds)
    if turn.card is not None:
        text += PART_SEP + str(turn.card)
    return text


_SEAT_WORDS: Final = {0: "0" + PART_SEP, 1: "1" + PART_SEP}
_KIND_WORDS: Final = {kind: kind.value for kind in MoveKind}


@functools.lru_cache(maxsize=8192)
def parse_turn_token(text: str) -> Turn:
    """The inverse of ``turn_token``; raises ``ValueError`` if malformed.

    Turns are immutable and a hand's history repeats in every position line, so the parsed
    turns are cached.
    """
    seat_text, sep, rest = text.partition(PART_SEP)
    if not sep:
        raise ValueError(f"malformed turn {text!r} (expected seat{PART_SEP}move, e.g. 0:stock)")
    seat = _seat(seat_text, "a turn's seat")
    parts = rest.split(PART_SEP)
    word = parts[0]
    card: Card | None = None
    if word in (MoveKind.TAKE.value, MoveKind.STOCK.value, MoveKind.PILE.value):
        if len(parts) > 2:
            raise ValueError(f"malformed turn {text!r}: a draw names at most the card drawn")
        move = Move.from_str(word)
        if len(parts) == 2:
            card = Card.from_str(parts[1])
    else:
        move = parse_move_token(rest)
    return Turn(seat, move, card)


def _history(text: str) -> tuple[Turn, ...]:
    return tuple(parse_turn_token(item) for item in _list(text))


@functools.lru_cache(maxsize=64)
def _rule_tokens(rules: Rules) -> tuple[str, ...]:
    return tuple(f"{name}{PARAM_SEP}{value}" for name, value in rules.to_params().items())


def _fmt_rules(rules: Rules) -> list[str]:
    return list(_rule_tokens(rules))


_RULE_NAMES: Final = frozenset(f.name for f in dataclasses.fields(Rules))


def check_rules_fit(rules: Rules) -> None:
    """Raise ``ValueError`` unless every number these rules put into a protocol line fits in
    ``MAX_NUMBER``: each rule value, and the largest score a game under them can reach.

    A hand scores at most (100 deadwood + its largest bonus) times 2 (spade doubling); a game
    column ends below ``target`` plus one hand; game, box and shutout bonuses come on top.
    """
    for name, value in rules.to_params().items():
        if value.isdigit() and int(value) > MAX_NUMBER:
            raise ValueError(
                f"{name}={value} is too large: a number in a protocol line has at most"
                f" {NUMBER_DIGITS} digits (at most {MAX_NUMBER})"
            )
    hand = 2 * (100 + max(rules.gin_bonus, rules.big_gin_bonus, rules.undercut_bonus + 100))
    column = rules.target - 1 + hand
    score = 2 * (column + rules.box_bonus * rules.hand_cap + rules.game_bonus)
    if score > MAX_NUMBER:
        raise ValueError(
            f"these rules let a score reach {score}, more than the {NUMBER_DIGITS} digits a"
            " protocol number may have: lower target, the bonuses or hand_cap"
        )


def _rules(params: Mapping[str, str]) -> Rules:
    for name in params:
        if name not in _RULE_NAMES:
            logger.debug("ignoring unknown rule parameter %r", name)
    return _rules_of(tuple((k, v) for k, v in params.items() if k in _RULE_NAMES))


@functools.lru_cache(maxsize=64)
def _rules_of(params: tuple[tuple[str, str], ...]) -> Rules:
    return Rules.from_params(dict(params))


# ==========================================================================================
# Lines made of fields


class _Fields:
    """The keyword-value fields and ``name=value`` parameters of one line, after its word."""

    def __init__(self, keyword: str, tokens: Sequence[str]) -> None:
        self.keyword = keyword
        self.values: dict[str, str] = {}
        self.params: dict[str, str] = {}
        self._used: set[str] = set()
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if PARAM_SEP in token:
                name, _, value = token.partition(PARAM_SEP)
                if name in self.params:
                    raise ValueError(f"the parameter {name!r} is given twice")
                self.params[name] = value
                i += 1
                continue
            if i + 1 >= len(tokens):
                raise ValueError(f"expected a value after {token!r}")
            if token in self.values:
                raise ValueError(f"the field {token!r} is given twice")
            self.values[token] = tokens[i + 1]
            i += 2

    def get(self, name: str) -> str | None:
        self._used.add(name)
        return self.values.get(name)

    def need(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise ValueError(f"missing the field {name!r}")
        return value

    def done(self) -> None:
        """Log the fields nobody asked for: they are ignored (forward compatibility)."""
        for name in self.values.keys() - self._used:
            logger.debug("%s: ignoring unknown field %r", self.keyword, name)


def _opt_int(fields: _Fields, name: str) -> int | None:
    text = fields.get(name)
    return None if text is None else _int(text, name)


def _opt_seat(fields: _Fields, name: str) -> int | None:
    text = fields.get(name)
    return None if text is None else _seat(text, name)


def _join(*parts: object) -> str:
    return " ".join(str(part) for part in parts)


def _field(name: str, value: object | None) -> list[str]:
    """``[name, value]``, or nothing when the value is absent."""
    return [] if value is None else [name, str(value)]


# ==========================================================================================
# Messages


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


# ==========================================================================================
# The position line


def format_position(view: GameView) -> str:
    """The ``position`` line of ``view``: this player's whole view of the game."""
    hand = view.hand
    parts = [
        POSITION,
        PLAYER, str(view.player),
        SEAT, str(hand.seat),
        DEALER, str(hand.dealer),
        HAND, str(view.hand_number),
        PHASE, hand.phase.value,
        TOMOVE, str(hand.to_move),
        KNOCKLIMIT, str(hand.knock_limit),
        STOCK, str(hand.stock),
        CARDS, _fmt_list(hand.cards),
        PILE, _fmt_list(hand.pile),
        *_field(UPCARD, hand.upcard),
        HISTORY, _fmt_list(turn_token(t) for t in hand.history),
        SEATS, _fmt_list(view.seats),
        SCORES, _fmt_scores(view.totals),
        CLOSED, _fmt_list(_fmt_bool(c) for c in view.closed),
    ]
    if view.roles is not None:
        parts += [ROLES, _fmt_roles(view.roles)]
    if view.advice is not None:
        parts += [ADVICE, move_token(view.advice)]
    parts += _fmt_rules(hand.rules)
    return " ".join(parts)


def parse_position(line: str) -> GameView:
    """The ``GameView`` of a ``position`` line; ``ProtocolError`` if malformed."""
    message = parse_referee_line(line)
    if not isinstance(message, Position):
        raise ProtocolError(f"expected a {POSITION} line, got {line[:40]!r}", _first_word(line))
    return message.view


def _parse_position(tokens: Sequence[str]) -> Position:
    fields = _Fields(POSITION, tokens)
    rules = _rules(fields.params)
    players, games = rules.players, rules.games
    player = _int(fields.need(PLAYER), PLAYER, 0, players - 1)
    seats = _seats(fields.need(SEATS))
    if not all(p < players for p in seats):
        raise ValueError(f"{SEATS} must name players below {players}")
    cards = _cards(fields.need(CARDS), CARDS)
    pile = _cards(fields.need(PILE), PILE)
    if len(set(cards) | set(pile)) != len(cards) + len(pile):
        raise ValueError(f"a card appears twice in {CARDS} and {PILE}")
    totals = _scores(fields.need(SCORES), SCORES)
    closed = _bools(fields.need(CLOSED), CLOSED)
    if len(totals) != games or any(len(col) != players for col in totals) or len(closed) != games:
        raise ValueError(
            f"{SCORES} and {CLOSED} must have {games} game(s) of {players} players each"
        )
    roles_text = fields.get(ROLES)
    roles = None if roles_text is None else _roles(roles_text)
    if (roles is not None) != (players == 3):
        raise ValueError(f"{ROLES} are given exactly when three players play")
    advice_text = fields.get(ADVICE)
    view = GameView(
        player=player,
        hand=HandView(
            rules=rules,
            seat=_seat(fields.need(SEAT), SEAT),
            dealer=_seat(fields.need(DEALER), DEALER),
            knock_limit=_int(fields.need(KNOCKLIMIT), KNOCKLIMIT, 0, 100),
            phase=_enum_value(Phase, fields.need(PHASE), PHASE),
            to_move=_seat(fields.need(TOMOVE), TOMOVE),
            cards=cards,
            pile=pile,
            stock=_int(fields.need(STOCK), STOCK, 0, 52),
            history=_history(fields.need(HISTORY)),
        ),
        seats=seats,
        totals=totals,
        closed=closed,
        hand_number=_int(fields.need(HAND), HAND, 1),
        roles=roles,
        advice=None if advice_text is None else parse_move_token(advice_text),
    )
    upcard = fields.get(UPCARD)
    if upcard is not None and _cards(upcard, UPCARD) != (view.hand.upcard,):
        raise ValueError(
            f"{UPCARD} {upcard} is not the first upcard of this pile and history"
            f" ({view.hand.upcard})"
        )
    fields.done()
    return Position(view)


# ==========================================================================================
# The other referee lines


def _parse_gin(tokens: Sequence[str]) -> Gin:
    fields = _Fields(GIN, tokens)
    version = _opt_int(fields, PROTOCOL)
    fields.done()
    return Gin(PROTOCOL_VERSION if version is None else version)


def _parse_setoption(tokens: Sequence[str]) -> SetOption:
    if not tokens or tokens[0] != NAME:
        raise ValueError(f"expected '{SETOPTION} {NAME} <name> [{VALUE} <value>]'")
    rest = list(tokens[1:])
    value: str | None = None
    if VALUE in rest:
        at = rest.index(VALUE)
        value = " ".join(rest[at + 1 :])
        rest = rest[:at]
        value = "" if value == EMPTY else value
    if not rest:
        raise ValueError(f"{SETOPTION}: the option name is missing")
    return SetOption(" ".join(rest), value)


def _parse_newmatch(tokens: Sequence[str]) -> NewMatch:
    fields = _Fields(NEWMATCH, tokens)
    games = _opt_int(fields, GAMES)
    fields.done()
    return NewMatch(games)


def _parse_newgame(tokens: Sequence[str]) -> NewGame:
    fields = _Fields(NEWGAME, tokens)
    rules = _rules(fields.params)
    message = NewGame(
        game=_int(fields.need(GAME), GAME, 1),
        player=_int(fields.need(PLAYER), PLAYER, 0, rules.players - 1),
        rules=rules,
    )
    fields.done()
    return message


def _parse_go(tokens: Sequence[str]) -> Go:
    if not tokens:
        choices = "|".join(d.value for d in Decision)
        raise ValueError(f"expected '{GO} <{choices}> [{TIME} ms] [{INC} ms] [{MOVETIME} ms]'")
    decision = _enum_value(Decision, tokens[0], "the decision")
    fields = _Fields(GO, tokens[1:])
    message = Go(
        decision,
        time=_opt_int(fields, TIME),
        inc=_opt_int(fields, INC),
        movetime=_opt_int(fields, MOVETIME),
    )
    fields.done()
    return message


def _layoffs(text: str) -> tuple[Layoff, ...]:
    out = []
    for item in _list(text):
        card, sep, meld = item.partition(LAYOFF_SEP)
        if not sep:
            raise ValueError(f"malformed layoff {item!r} (expected card{LAYOFF_SEP}meld: 8s>0)")
        out.append(Layoff(Card.from_str(card), _int(meld, "a layoff's meld number")))
    return tuple(out)


def _parse_handover(tokens: Sequence[str]) -> HandOver:
    fields = _Fields(HANDOVER, tokens)
    seats = _seats(fields.need(SEATS))
    roles_text = fields.get(ROLES)
    winner = _opt_seat(fields, WINNER)
    defender: DefenderResult | None = None
    defender_melds = fields.get(DEFENDERMELDS)
    if defender_melds is not None:
        defender = DefenderResult(
            melds=_melds(defender_melds, DEFENDERMELDS),
            layoffs=_layoffs(fields.need(LAYOFFS)),
            deadwood_cards=_cards(fields.need(DEFENDERDEADWOOD), DEFENDERDEADWOOD),
        )
    result = HandResult(
        outcome=_enum_value(Outcome, fields.need(OUTCOME), OUTCOME),
        winner=winner,
        points=_int(fields.need(POINTS), POINTS),
        knocker=_opt_seat(fields, KNOCKER),
        hands=(_cards(fields.need(SEAT0), SEAT0), _cards(fields.need(SEAT1), SEAT1)),
        knocker_melds=_melds(fields.need(KNOCKERMELDS), KNOCKERMELDS),
        knocker_deadwood=_cards(fields.need(KNOCKERDEADWOOD), KNOCKERDEADWOOD),
        defender=defender,
        multiplier=_int(fields.need(MULTIPLIER), MULTIPLIER),
        capped=_bool(fields.need(CAPPED), CAPPED),
    )
    entry = Entry(
        number=_int(fields.need(HAND), HAND, 1),
        dealer=seats[_seat(fields.need(DEALER), DEALER)],
        seats=seats,
        result=result,
        winner=None if winner is None else seats[winner],
        games=_ints(fields.need(GAMES), GAMES),
        totals=_scores(fields.need(SCORES), SCORES),
        roles=None if roles_text is None else _roles(roles_text),
    )
    message = HandOver(_int(fields.need(PLAYER), PLAYER), entry)
    fields.done()
    return message


def _parse_gameover(tokens: Sequence[str]) -> GameOver:
    fields = _Fields(GAMEOVER, tokens)
    fault: tuple[int, FaultKind] | None = None
    fault_text = fields.get(FAULT)
    if fault_text is not None:
        who, sep, kind = fault_text.partition(PART_SEP)
        if not sep:
            raise ValueError(f"malformed {FAULT} {fault_text!r} (expected player:kind: 1:timeout)")
        fault = (_int(who, FAULT), _enum_value(FaultKind, kind, FAULT))
    message = GameOver(
        player=_int(fields.need(PLAYER), PLAYER),
        end=_enum_value(GameEnd, fields.need(END), END),
        winner=_opt_int(fields, WINNER),
        hands=_int(fields.need(HANDS), HANDS),
        scores=_scores(fields.need(SCORES), SCORES),
        winners=_opt_ints(fields.need(WINNERS), WINNERS),
        fault=fault,
    )
    fields.done()
    return message


def _parse_matchscore(tokens: Sequence[str], over: bool) -> MatchScore:
    fields = _Fields(MATCHOVER if over else MATCHSCORE, tokens)
    kind = MatchOver if over else MatchScore
    message = kind(
        games=_int(fields.need(GAMES), GAMES),
        wins=_int(fields.need(WINS), WINS),
        losses=_int(fields.need(LOSSES), LOSSES),
        draws=_int(fields.need(DRAWS), DRAWS),
    )
    fields.done()
    return message


def _first_word(line: str) -> str | None:
    tokens = line.split(maxsplit=1)
    return tokens[0] if tokens else None


def parse_referee_line(line: str) -> RefereeMessage:
    """Read one line the referee sends (with or without its line break).

    Returns the message, or ``Unknown`` for a line whose first word is not a referee message
    (an engine ignores those). Raises ``ProtocolError`` if a known line is malformed.
    """
    tokens = line.split()
    if not tokens:
        return Unknown(line.strip())
    word, rest = tokens[0], tokens[1:]
    try:
        if word == POSITION:
            return _parse_position(rest)
        if word == GO:
            return _parse_go(rest)
        if word == ISREADY:
            return IsReady()
        if word == GIN:
            return _parse_gin(rest)
        if word == SETOPTION:
            return _parse_setoption(rest)
        if word == NEWMATCH:
            return _parse_newmatch(rest)
        if word == NEWGAME:
            return _parse_newgame(rest)
        if word == HANDOVER:
            return _parse_handover(rest)
        if word == GAMEOVER:
            return _parse_gameover(rest)
        if word == MATCHSCORE:
            return _parse_matchscore(rest, over=False)
        if word == MATCHOVER:
            return _parse_matchscore(rest, over=True)
        if word == QUIT:
            return Quit()
    except ProtocolError:
        raise
    except (ValueError, IndexError) as exc:  # CardError, MeldError, MoveError, RulesError...
        raise ProtocolError(f"malformed {word} line: {exc}", word) from None
    return Unknown(" ".join(tokens))


# ==========================================================================================
# Engine lines

_OPTION_KEYS: Final = (NAME, TYPE, DEFAULT, MIN, MAX, VAR)


def _parse_option(tokens: Sequence[str]) -> OptionDecl:
    if not tokens or tokens[0] != NAME:
        raise ValueError(f"expected '{OPTION} {NAME} <name> {TYPE} <type> {DEFAULT} <value> ...'")
    groups: list[tuple[str, list[str]]] = []
    for token in tokens:
        if token in _OPTION_KEYS:
            groups.append((token, []))
        else:
            groups[-1][1].append(token)
    values: dict[str, str] = {}
    vars_: list[str] = []
    for key, words in groups:
        text = " ".join(words)
        if key == VAR:
            if not text:
                raise ValueError(f"{VAR} needs a value")
            vars_.append(text)
        elif key in values:
            raise ValueError(f"{key!r} is given twice")
        else:
            values[key] = text
    name = values.get(NAME, "")
    if not name:
        raise ValueError("the option name is missing")
    if TYPE not in values:
        raise ValueError(f"the option {name!r} has no {TYPE}")
    kind = _enum_value(OptionType, values[TYPE], TYPE)
    if DEFAULT not in values:
        raise ValueError(f"the option {name!r} has no {DEFAULT} (write {EMPTY} for none)")
    default = values[DEFAULT]
    default = "" if default == EMPTY else default
    bounds = [
        None if values.get(key) is None else _signed(values[key], key) for key in (MIN, MAX)
    ]
    option = OptionDecl(name, kind, default, bounds[0], bounds[1], tuple(vars_))
    if kind is not OptionType.STRING:
        option._value_of(default)  # a spin, check or combo must have a valid default
    return option


def _signed(text: str, what: str) -> int:
    negative = text.startswith("-")
    value = _int(text[1:] if negative else text, what)
    return -value if negative else value


def parse_engine_line(line: str) -> EngineMessage:
    """Read one line an engine sends (with or without its line break).

    Returns the message, or ``Unknown`` for a line whose first word is not an engine message
    (the referee logs and ignores those). Raises ``ProtocolError`` if a known line is
    malformed; ``exc.keyword == "move"`` marks a malformed reply to ``go``.
    """
    tokens = line.split()
    if not tokens:
        return Unknown(line.strip())
    word, rest = tokens[0], tokens[1:]
    try:
        if word == MOVE:
            if not rest:
                raise ValueError("expected a move after 'move', e.g. 'move discard 7h'")
            return MoveReply(Move.from_str(" ".join(rest)))
        if word == INFO:
            return Info(" ".join(rest))
        if word == READYOK:
            return ReadyOk()
        if word == ID:
            if len(rest) < 2:
                raise ValueError(f"expected '{ID} <{NAME}|{AUTHOR}|{VERSION}> <text>'")
            return Id(rest[0], " ".join(rest[1:]))
        if word == OPTION:
            return _parse_option(rest)
        if word == GINOK:
            fields = _Fields(GINOK, rest)
            version = _opt_int(fields, PROTOCOL)
            fields.done()
            return GinOk(PROTOCOL_VERSION if version is None else version)
    except ProtocolError:
        raise
    except (ValueError, IndexError) as exc:
        raise ProtocolError(f"malformed {word} line: {exc}", word) from None
    return Unknown(" ".join(tokens))


def parse_reply(line: str) -> Move | None:
    """What the referee makes of an engine line while it waits for the reply to ``go``.

    Returns the move of a ``move`` line, ``None`` for any other line (to be logged and
    ignored, even if malformed), and raises ``ProtocolError`` for a malformed ``move`` line,
    which is a fault.
    """
    try:
        message = parse_engine_line(line)
    except ProtocolError as exc:
        if exc.keyword == MOVE:
            raise
        logger.debug("ignoring a malformed line while waiting for a move: %s", exc)
        return None
    return message.move if isinstance(message, MoveReply) else None


__all__ = [
    "PROTOCOL_VERSION",
    "EngineMessage",
    "GameOver",
    "Gin",
    "GinOk",
    "Go",
    "HandOver",
    "Id",
    "Info",
    "IsReady",
    "MatchOver",
    "MatchScore",
    "MoveReply",
    "NewGame",
    "NewMatch",
    "OptionDecl",
    "OptionType",
    "OptionValue",
    "Position",
    "ProtocolError",
    "Quit",
    "ReadyOk",
    "RefereeMessage",
    "SetOption",
    "Unknown",
    "format_position",
    "move_token",
    "parse_engine_line",
    "parse_move_token",
    "parse_position",
    "parse_referee_line",
    "parse_reply",
    "parse_turn_token",
    "turn_token",
]
