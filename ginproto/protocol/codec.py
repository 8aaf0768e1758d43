"""The protocol's codec: a line read into its typed message.

``parse_referee_line(line)`` reads a line the referee sends (``parse_engine_line(line)``, in
``engine_lines``, a line an engine sends); a line whose first word is not a message of that
direction comes back as ``Unknown``. ``parse_position`` and ``parse_reply`` are shortcuts for
the lines read most. Malformed input raises ``ProtocolError`` saying what was expected, and
never anything else. ``parse(format(message)) == message`` for every message.

A ``position`` line, read on every decision, is read by one reader (``_read_game`` and
``_read_position``, which make every check), whichever way the line was cut into its fields: a
line in the formatter's own layout is cut straight at the places its fields hold
(``_fast_position``), any other by the general field pass (``_Fields``). Both ways accept the
same lines, give the same messages and raise the same errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple, TypeVar

from ginproto.cards import Card, card_index, card_text
from ginproto.game import Entry, GameEnd, GameView, Roles
from ginproto.hand import HandResult, HandView, Outcome, Phase, build_frozen
from ginproto.melds import DefenderResult, Layoff
from ginproto.moves import Move
from ginproto.protocol.engine_lines import parse_engine_line
from ginproto.protocol.grammar import (
    ADVICE,
    CAPPED,
    CARDS,
    CLOSED,
    DEALER,
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
    GO,
    HAND,
    HANDOVER,
    HANDS,
    HISTORY,
    INC,
    ISREADY,
    KNOCKER,
    KNOCKERDEADWOOD,
    KNOCKERMELDS,
    KNOCKLIMIT,
    LAYOFF_SEP,
    LAYOFFS,
    LOSSES,
    MATCHOVER,
    MATCHSCORE,
    MOVE,
    MOVETIME,
    MULTIPLIER,
    NAME,
    NEWGAME,
    NEWMATCH,
    OUTCOME,
    PARAM_SEP,
    PART_SEP,
    PHASE,
    PILE,
    PLAYER,
    POINTS,
    POSITION,
    PROTOCOL,
    PROTOCOL_VERSION,
    QUIT,
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
    UPCARD,
    VALUE,
    WINNER,
    WINNERS,
    WINS,
    ProtocolError,
    _bool,
    _cards,
    _enum_value,
    _Fields,
    _history,
    _int,
    _ints,
    _list,
    _melds,
    _opt_int,
    _opt_ints,
    _opt_seat,
    _parse_closed,
    _parse_scores,
    _roles,
    _rules,
    _scores,
    _seat,
    _seats,
    parse_move_token,
)
from ginproto.protocol.messages import (
    GameOver,
    Gin,
    Go,
    HandOver,
    IsReady,
    MatchOver,
    MatchScore,
    MoveReply,
    NewGame,
    NewMatch,
    Position,
    Quit,
    RefereeMessage,
    SetOption,
    Unknown,
)
from ginproto.rules import Rules
from ginproto.table import Decision, FaultKind
from ginproto.text import plural

logger = logging.getLogger(__name__)


# ==========================================================================================
# The position line


def parse_position(line: str) -> GameView:
    """The ``GameView`` of a ``position`` line; ``ProtocolError`` if malformed."""
    message = parse_referee_line(line)
    if not isinstance(message, Position):
        raise ProtocolError(f"expected a {POSITION} line, got {line[:40]!r}", _first_word(line))
    return message.view


def _same(name: str, text: str, parse: Callable[[str], _V]) -> _V:
    """``parse(text)``, or the value of the last line that had the same text in field
    ``name``: a match's position lines repeat most fields (the values are immutable)."""
    last = _SAME.get(name)
    if last is not None and last[0] == text:
        return last[1]  # type: ignore[no-any-return]
    value = parse(text)
    _SAME[name] = (text, value)
    return value


_SAME: dict[str, tuple[str, Any]] = {}
_V = TypeVar("_V")


class _Game(NamedTuple):
    """The fields of a position line that change only from hand to hand, read and checked."""

    rules: Rules
    seats: tuple[int, int]
    totals: tuple[tuple[int, ...], ...]
    closed: tuple[bool, ...]
    roles: Roles | None


def _read_game(values: dict[str, str], params: Mapping[str, str]) -> _Game:
    """The rules, seats, scores, closed games and roles of a position line's fields."""
    rules = _rules(params)
    return _game_after_seats(values, rules, _checked_seats(values[SEATS], rules.players))


def _checked_seats(text: str, players: int) -> tuple[int, int]:
    seats = _same(SEATS, text, _seats)
    if not all(p < players for p in seats):
        raise ValueError(f"{SEATS} must name players below {players}")
    return seats


def _game_after_seats(values: dict[str, str], rules: Rules, seats: tuple[int, int]) -> _Game:
    """The game part of a position line's fields, its ``rules`` and ``seats`` read already."""
    players, games = rules.players, rules.games
    totals = _same(SCORES, values[SCORES], _parse_scores)
    closed = _same(CLOSED, values[CLOSED], _parse_closed)
    if len(totals) != games or any(len(col) != players for col in totals) or len(closed) != games:
        raise ValueError(
            f"{SCORES} and {CLOSED} must have {plural(games, 'game')} of {players} players each"
        )
    roles_text = values.get(ROLES)
    roles = None if roles_text is None else _same(ROLES, roles_text, _roles)
    if (roles is not None) != (players == 3):
        raise ValueError(f"{ROLES} are given exactly when three players play")
    return _Game(rules, seats, totals, closed, roles)


def _read_position(
    values: dict[str, str], params: Mapping[str, str], game: _Game | None = None
) -> Position:
    """The ``Position`` of a position line's field ``values`` (``_Values``, where a field
    missing raises, unless the line's layout has them all) and rule ``params``. ``game`` is
    the game part of the same line read already by ``_read_game`` (the fast reader remembers
    it); without it, it is read here, its checks in their place among the others. Every check
    of a position line is made here or in the functions it calls, whichever way the line was
    cut into its fields."""
    rules = _rules(params) if game is None else game.rules
    player = _int(values[PLAYER], PLAYER, 0, rules.players - 1)
    seats = _checked_seats(values[SEATS], rules.players) if game is None else game.seats
    cards = _cards(values[CARDS], CARDS)
    pile = _cards(values[PILE], PILE)
    if len(set(map(card_index, (*cards, *pile)))) != len(cards) + len(pile):
        raise ValueError(f"a card appears twice in {CARDS} and {PILE}")
    if game is None:
        game = _game_after_seats(values, rules, seats)
    _, _, totals, closed, roles = game
    advice_text = values.get(ADVICE)
    # Every field is given, in the order of the frozen dataclasses' own ``__init__``, which
    # ``build_frozen`` skips: a position line is read on every decision.
    hand = build_frozen(
        HandView,
        {
            "rules": rules,
            "seat": _int(values[SEAT], SEAT, 0, 1),
            "dealer": _int(values[DEALER], DEALER, 0, 1),
            "knock_limit": _int(values[KNOCKLIMIT], KNOCKLIMIT, 0, 100),
            "phase": _enum_value(Phase, values[PHASE], PHASE),
            "to_move": _int(values[TOMOVE], TOMOVE, 0, 1),
            "cards": cards,
            "pile": pile,
            "stock": _int(values[STOCK], STOCK, 0, 52),
            "history": _history(values[HISTORY]),
        },
    )
    view = build_frozen(
        GameView,
        {
            "player": player,
            "hand": hand,
            "seats": seats,
            "totals": totals,
            "closed": closed,
            "hand_number": _int(values[HAND], HAND, 1),
            "roles": roles,
            "advice": None if advice_text is None else parse_move_token(advice_text),
        },
    )
    upcard, first = values.get(UPCARD), hand.upcard
    # The upcard's own text needs no reading; any other must read as the same card.
    if (
        upcard is not None
        and (first is None or upcard != card_text(first))
        and _cards(upcard, UPCARD) != (first,)
    ):
        raise ValueError(
            f"{UPCARD} {upcard} is not the first upcard of this pile and history ({first})"
        )
    return Position(view)


# The position line in the formatter's own layout (``format_position``) is cut without the
# general field pass: the head's fields sit at known places and are taken from a short split,
# the history is cut out of the line and never split with it, and the tail (seats, scores,
# closed, roles, advice, rules) is remembered by its text, with the ``_Game`` read from it, for
# it changes only from hand to hand. A line in any other layout (another order, other spacing,
# a field more or less) gives ``None`` and the general reader reads it; either way the fields
# are read by ``_read_game`` and ``_read_position``, so what is accepted, what is returned and
# every error message are the same.

_HEAD_NAMES: Final = [PLAYER, SEAT, DEALER, HAND, PHASE, TOMOVE, KNOCKLIMIT, STOCK, CARDS, PILE]
_HEAD_SIZE: Final = 1 + 2 * len(_HEAD_NAMES)
_HISTORY_AT: Final = f" {HISTORY} "
_TAIL_NAMES: Final = frozenset((SEATS, SCORES, CLOSED, ROLES, ADVICE))
_OTHER_SPACES: Final = tuple(c for c in map(chr, range(128)) if c.isspace() and c != " ")
# The fields _read_position reads.
_POSITION_FIELDS: Final = frozenset((*_HEAD_NAMES, UPCARD, HISTORY, *_TAIL_NAMES))

_last_tail: tuple[str, tuple[_Game, str | None]] | None = None


def _tail_of(text: str) -> tuple[_Game, str | None]:
    """The game read from the fields after the history, and the advice's text if any; raises
    on a field the fast reader does not know there."""
    global _last_tail
    last = _last_tail
    if last is not None and last[0] == text:
        return last[1]
    tokens = text.split(" ")
    if "" in tokens:
        raise ValueError("not single spaces")
    fields = _Fields(POSITION, tokens)
    if not fields.values.keys() <= _TAIL_NAMES:
        raise ValueError("a field the fast reader does not know")
    tail = (_read_game(fields.values, fields.params), fields.values.get(ADVICE))
    _last_tail = (text, tail)
    return tail


def _head_of(body: str) -> tuple[dict[str, str], int] | None:
    """The head's fields and the history's, in the formatter's layout, and where the history's
    value ends; ``None`` for any other layout."""
    # No whitespace but spaces (then splitting at " " is splitting at whitespace, once no
    # token is empty): isascii is free, and each test a fast scan.
    if not body.isascii() or any(map(body.__contains__, _OTHER_SPACES)):
        return None
    at = body.find(_HISTORY_AT)
    start = at + len(_HISTORY_AT)
    end = body.find(" ", start)
    if at < 0 or end <= start or body.find(PARAM_SEP, 0, end) >= 0:
        return None  # no history, or a parameter where the general reader would see one
    head = body[:at].split(" ")
    size = len(head)
    if not (size == _HEAD_SIZE or (size == _HEAD_SIZE + 2 and head[_HEAD_SIZE] == UPCARD)):
        return None
    if head[1:_HEAD_SIZE:2] != _HEAD_NAMES or head[0] != POSITION or "" in head:
        return None
    values = dict(zip(head[1::2], head[2::2], strict=True))
    values[HISTORY] = body[start:end]
    return values, end


def _fast_position(line: str) -> Position | None:
    """The ``Position`` of a line in the formatter's layout, equal to what the general reader
    makes of it; ``None`` for any other line, and for one that the checks refuse (the general
    reader reads it again and says what is wrong)."""
    try:
        body = line[:-1] if line[-1:] == "\n" else line
        head = _head_of(body)
        if head is None:
            return None
        values, end = head
        game, advice = _tail_of(body[end + 1 :])
        if advice is not None:
            values[ADVICE] = advice
        return _read_position(values, {}, game)
    except Exception:
        return None


def _parse_position(tokens: Sequence[str]) -> Position:
    """The general reader: the fields in any order, cut by ``_Fields``."""
    fields = _Fields(POSITION, tokens)
    position = _read_position(fields.values, fields.params)
    fields.done(_POSITION_FIELDS)
    return position


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


_POSITION_WORD: Final = POSITION + " "
# The go lines without a clock, read by a lookup (a Go is immutable).
_PLAIN_GO: Final = {
    f"{GO} {decision.value}{end}": Go(decision) for decision in Decision for end in ("", "\n")
}


def parse_referee_line(line: str) -> RefereeMessage:
    """Read one line the referee sends (with or without its line break).

    Returns the message, or ``Unknown`` for a line whose first word is not a referee message
    (an engine ignores those). Raises ``ProtocolError`` if a known line is malformed.
    """
    if line.startswith(_POSITION_WORD):
        position = _fast_position(line)
        if position is not None:
            return position
    else:
        go = _PLAIN_GO.get(line)
        if go is not None:
            return go
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
