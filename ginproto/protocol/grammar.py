"""The protocol's grammar: its words, its limits and how values are written in a line.

Every protocol word (message, field and value keywords) is a constant here, and nowhere else in
the code; so are the limits (``MAX_NUMBER``) and the separators of tokens. The helpers read and
write the values a field holds (numbers, booleans, lists, cards, melds, turns, rule parameters)
and ``_Fields`` reads the shape that the lines made of fields share: keyword-value pairs and
``name=value`` rule parameters, skipping what it does not know. ``ProtocolError`` is what
malformed input raises.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, TypeVar

from ginproto.cards import _CARD_OF_TEXT, Card, CardError, cards_from_strs
from ginproto.game import Roles
from ginproto.hand import Turn
from ginproto.melds import Meld, MeldError
from ginproto.moves import Move, MoveError, MoveKind
from ginproto.rules import Rules

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
    value = _SMALL_NUMBERS.get(text)  # most numbers are small: a lookup instead of the checks
    if value is not None and value >= low and (high is None or value <= high):
        return value
    if not (text.isascii() and text.isdigit()) or len(text) > NUMBER_DIGITS:
        raise ValueError(
            f"{what} must be a whole number of at most {NUMBER_DIGITS} digits, not {text!r}"
        )
    value = int(text)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{what} must be {bound}, not {value}")
    return value


def _signed(text: str, what: str) -> int:
    negative = text.startswith("-")
    value = _int(text[1:] if negative else text, what)
    return -value if negative else value


_SMALL_NUMBERS: Final = {str(n): n for n in range(1000)}


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
    if "" in items:
        raise ValueError(f"empty element in the list {text!r} (write {NONE} for an empty list)")
    return items


def _fmt_list(items: Iterable[object]) -> str:
    return LIST_SEP.join(map(str, items)) or NONE


def _cards(text: str, what: str) -> tuple[Card, ...]:
    try:  # the common case at C speed: a list of cards (not "-", no empty element)
        return tuple(map(_CARD_OF_TEXT, text.split(LIST_SEP)))
    except KeyError:
        pass
    try:
        return cards_from_strs(_list(text))
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


def _parse_scores(text: str) -> tuple[tuple[int, ...], ...]:
    return _scores(text, SCORES)


def _parse_closed(text: str) -> tuple[bool, ...]:
    return _bools(text, CLOSED)


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
_ENUM_VALUES: dict[type[enum.Enum], dict[object, enum.Enum]] = {}


def _enum_value(kind: type[_E], text: str, what: str) -> _E:
    by_value = _ENUM_VALUES.get(kind)
    if by_value is None:
        by_value = _ENUM_VALUES[kind] = {member.value: member for member in kind}
    member = by_value.get(text)
    if member is not None:
        return member  # type: ignore[return-value]
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
    """The turns of a history list. An engine reads the same hand's history again in every
    position line, each time a few turns longer, so the last two read are kept (two seats'
    views, when one process reads both): a history that extends one by whole turns costs only
    its new turns."""
    for last in (_last_history, _previous_history):
        if last is None:
            continue
        last_text, last_turns = last
        if text == last_text:
            return last_turns
        size = len(last_text)
        if text.startswith(last_text) and text[size : size + 1] == LIST_SEP:
            new = text[size + 1 :].split(LIST_SEP)
            if "" in new:
                break
            try:
                turns = last_turns + tuple(map(parse_turn_token, new))
            except ValueError:
                break  # the whole list again below, for the error message
            _remember_history(text, turns)
            return turns
    turns = tuple(map(parse_turn_token, _list(text)))
    if turns:
        _remember_history(text, turns)
    return turns


_last_history: tuple[str, tuple[Turn, ...]] | None = None
_previous_history: tuple[str, tuple[Turn, ...]] | None = None


def _remember_history(text: str, turns: tuple[Turn, ...]) -> None:
    global _last_history, _previous_history
    last = _last_history
    if last is not None and not text.startswith(last[0]):
        _previous_history = last  # another view: keep the last one too
    _last_history = (text, turns)


@functools.lru_cache(maxsize=64)
def _rule_tokens(rules: Rules) -> tuple[str, ...]:
    return tuple(f"{name}{PARAM_SEP}{value}" for name, value in rules.to_params().items())


def _fmt_rules(rules: Rules) -> list[str]:
    return list(_rule_tokens(rules))


_RULE_NAMES: Final = frozenset(f.name for f in dataclasses.fields(Rules))


def check_rules_fit(rules: Rules) -> None:
    """Raise ``ValueError`` unless every number these rules put into a protocol line fits in
    ``MAX_NUMBER``: each rule value, and the largest score a game under them can reach.

    The largest score is the rules' own bound, ``Rules.max_score``.
    """
    for name, value in rules.to_params().items():
        if value.isdigit() and int(value) > MAX_NUMBER:
            raise ValueError(
                f"{name}={value} is too large: a number in a protocol line has at most"
                f" {NUMBER_DIGITS} digits (at most {MAX_NUMBER})"
            )
    score = rules.max_score
    if score > MAX_NUMBER:
        raise ValueError(
            f"these rules let a score reach {score}, more than the {NUMBER_DIGITS} digits a"
            " protocol number may have: lower target, the bonuses or hand_cap"
        )


def _rules(params: Mapping[str, str]) -> Rules:
    return _rules_of_items(tuple(params.items()))


@functools.lru_cache(maxsize=64)
def _rules_of_items(items: tuple[tuple[str, str], ...]) -> Rules:
    """The rules of a line's parameters (every line of a match repeats the same ones)."""
    for name, _ in items:
        if name not in _RULE_NAMES:
            logger.debug("ignoring unknown rule parameter %r", name)
    return _rules_of(tuple((k, v) for k, v in items if k in _RULE_NAMES))


@functools.lru_cache(maxsize=64)
def _rules_of(params: tuple[tuple[str, str], ...]) -> Rules:
    return Rules.from_params(dict(params))


# ==========================================================================================
# Lines made of fields


class _Values(dict[str, str]):
    """A line's field values by name; a field missing raises ``ValueError`` naming it."""

    def __missing__(self, name: str) -> str:
        raise ValueError(f"missing the field {name!r}")


class _Fields:
    """The keyword-value fields and ``name=value`` parameters of one line, after its word."""

    def __init__(self, keyword: str, tokens: Sequence[str]) -> None:
        self.keyword = keyword
        self.values = _Values()
        self.params: dict[str, str] = {}
        self._used: set[str] = set()
        values, params = self.values, self.params
        count = len(tokens)
        i = 0
        while i < count:
            token = tokens[i]
            if PARAM_SEP in token:
                name, _, value = token.partition(PARAM_SEP)
                if name in params:
                    raise ValueError(f"the parameter {name!r} is given twice")
                params[name] = value
                i += 1
                continue
            if i + 1 >= count:
                raise ValueError(f"expected a value after {token!r}")
            if token in values:
                raise ValueError(f"the field {token!r} is given twice")
            values[token] = tokens[i + 1]
            i += 2

    def get(self, name: str) -> str | None:
        self._used.add(name)
        return self.values.get(name)

    def need(self, name: str) -> str:
        self._used.add(name)
        return self.values[name]

    def done(self, read: AbstractSet[str] = frozenset()) -> None:
        """Log the fields nobody asked for (nor ``read`` straight from ``values``): they are
        ignored (forward compatibility)."""
        self._used.update(read)
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
