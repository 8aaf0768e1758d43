"""The record reader: lenient and streaming.

In the manner of python-chess's PGN reader it never raises on bad input, but collects
``RecordError``s with their line numbers in ``GameRecord.errors`` and reads on. ``RecordReader``
reads games from a stream one at a time, with bounded memory (``MAX_LINE``, ``MAX_SKIP``...);
``read_games(path_or_stream)`` and ``loads(text)`` are its shortcuts, ``parse_line`` reads one line.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO

from ginproto.cards import Card, CardError
from ginproto.game import GameEnd, Roles
from ginproto.hand import Outcome
from ginproto.melds import Meld, MeldError
from ginproto.moves import Move, MoveError
from ginproto.record.model import (
    FORMAT_LINE,
    FORMAT_VERSION,
    MAX_GAME_LINES,
    MAX_IDLE,
    MAX_LINE,
    MAX_SKIP,
    Advice,
    Comment,
    Cut,
    Deal,
    End,
    FaultLine,
    GameRecord,
    HandStart,
    Header,
    Item,
    LayOff,
    Play,
    RecordError,
    RecordSyntaxError,
    Result,
    Show,
    Totals,
    TruncatedRecordError,
    _excerpt,
    unquote,
)
from ginproto.record.writer import (
    _conflict,
    _header_name_ok,
)
from ginproto.table import FaultKind

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# The reader.


class _Bad(Exception):
    """A line's syntax error, raised while parsing it."""


def _int(token: str, what: str, low: int = 0) -> int:
    if not token.isascii() or not token.isdigit():
        raise _Bad(f"expected {what} (a whole number), not {token!r}")
    value = int(token)
    if value < low:
        raise _Bad(f"{what} must be at least {low}, not {value}")
    return value


def _player(token: str) -> int:
    if token not in ("0", "1", "2"):
        raise _Bad(f"expected a player number 0, 1 or 2, not {token!r}")
    return int(token)


def _opt_player(token: str) -> int | None:
    return None if token == "none" else _player(token)


def _card(token: str) -> Card:
    try:
        return Card.from_str(token)
    except CardError as exc:
        raise _Bad(str(exc)) from None


def _cards(tokens: Sequence[str]) -> tuple[Card, ...]:
    return tuple(_card(t) for t in tokens)


def _meld(token: str) -> Meld:
    try:
        return Meld.from_str(token)
    except MeldError as exc:
        raise _Bad(str(exc)) from None


def _move(tokens: Sequence[str]) -> Move:
    try:
        return Move.from_str(" ".join(tokens))
    except (MoveError, CardError, MeldError) as exc:
        raise _Bad(str(exc)) from None


def _keyword(tokens: Sequence[str], i: int, word: str) -> None:
    if i >= len(tokens) or tokens[i] != word:
        got = repr(tokens[i]) if i < len(tokens) else "the end of the line"
        raise _Bad(f"expected {word!r}, not {got}")


def _columns(tokens: Sequence[str], what: str) -> tuple[tuple[int, ...], ...]:
    columns: list[list[int]] = [[]]
    for token in tokens:
        if token == "/":
            columns.append([])
        else:
            columns[-1].append(_int(token, what))
    widths = {len(c) for c in columns}
    if len(widths) != 1 or widths.pop() not in (2, 3):
        raise _Bad(f"expected the {what} of 2 or 3 players in each game, games split by '/'")
    if len(columns) not in (1, 3):
        raise _Bad(f"expected the {what} of 1 game, or of 3 (Hollywood)")
    return tuple(tuple(c) for c in columns)


_DRAWS = frozenset({"take", "stock", "pile"})


def _parse_play(tokens: list[str]) -> Play | Advice:
    player = _player(tokens[0])
    if len(tokens) < 2:
        raise _Bad("expected a move after the player number")
    if tokens[1] == "advise":
        return Advice(player, _move(tokens[2:]))
    if tokens[1] in _DRAWS:
        if len(tokens) != 3:
            raise _Bad(f"expected '{tokens[0]} {tokens[1]} CARD', with the card drawn")
        return Play(player, _move(tokens[1:2]), _card(tokens[2]))
    return Play(player, _move(tokens[1:]))


def _parse_show(tokens: list[str]) -> Show:
    player = _player(tokens[1]) if len(tokens) > 1 else _player("")
    _keyword(tokens, 2, "melds")
    try:
        dw = tokens.index("deadwood", 3)
        eq = tokens.index("=", dw)
    except ValueError:
        raise _Bad(f"expected '{tokens[0]} P melds MELD... deadwood CARD... = N'") from None
    if eq != len(tokens) - 2:
        raise _Bad("expected one number after '='")
    melds = tuple(_meld(t) for t in tokens[3:dw])
    return Show(tokens[0], player, melds, _cards(tokens[dw + 1 : eq]), _int(tokens[-1], "deadwood"))


def _parse_result(tokens: list[str]) -> Result:
    if tokens[1:] == ["draw"]:
        return Result(Outcome.DRAW)
    if tokens[1:] == ["draw", "cap"]:
        return Result(Outcome.DRAW, capped=True)
    try:
        outcome = Outcome(tokens[1]) if len(tokens) > 1 else None
    except ValueError:
        outcome = None
    if outcome is None or outcome is Outcome.DRAW:
        words = "|".join(o.value for o in Outcome if o is not Outcome.DRAW)
        raise _Bad(f"expected 'result {words} winner P points N' or 'result draw [cap]'")
    _keyword(tokens, 2, "winner")
    winner = _player(tokens[3]) if len(tokens) > 3 else _player("")
    _keyword(tokens, 4, "points")
    points = _int(tokens[5] if len(tokens) > 5 else "", "points")
    rest = tokens[6:]
    multiplier = 1
    if rest and rest[0].startswith("x"):
        multiplier = _int(rest[0][1:], "a multiplier", 2)
        rest = rest[1:]
    games: tuple[int, ...] = ()
    if rest:
        _keyword(rest, 0, "games")
        games = tuple(_int(t, "a game number", 1) for t in rest[1:])
        if not games:
            raise _Bad("expected game numbers after 'games'")
    return Result(outcome, winner, points, multiplier, games=games)


def _parse_end(tokens: list[str]) -> End:
    try:
        termination = GameEnd(tokens[1]) if len(tokens) > 1 else None
    except ValueError:
        termination = None
    if termination is None:
        raise _Bad("expected 'end " + "|".join(e.value for e in GameEnd) + " winner P scores ...'")
    _keyword(tokens, 2, "winner")
    winner = _opt_player(tokens[3] if len(tokens) > 3 else "")
    _keyword(tokens, 4, "scores")
    stop = tokens.index("games") if "games" in tokens else len(tokens)
    scores = _columns(tokens[5:stop], "scores")
    winners = tuple(_opt_player(t) for t in tokens[stop + 1 :])
    if stop < len(tokens) and len(winners) != len(scores):
        raise _Bad("expected one winner (or 'none') for each game after 'games'")
    return End(termination, winner, scores, winners)


def _parse_hand(tokens: list[str]) -> HandStart:
    if len(tokens) not in (6, 12):
        raise _Bad(
            "expected 'hand N dealer P limit K' (three players: '... box P captain P sitter P')"
        )
    number = _int(tokens[1], "a hand number", 1)
    _keyword(tokens, 2, "dealer")
    dealer = _player(tokens[3])
    _keyword(tokens, 4, "limit")
    limit = _int(tokens[5], "a knock limit")
    roles = None
    if len(tokens) == 12:
        for i, word in ((6, "box"), (8, "captain"), (10, "sitter")):
            _keyword(tokens, i, word)
        try:
            roles = Roles(_player(tokens[7]), _player(tokens[9]), _player(tokens[11]))
        except ValueError as exc:
            raise _Bad(str(exc)) from None
    return HandStart(number, dealer, limit, roles)


def _parse_fault(text: str, tokens: list[str]) -> FaultLine:
    if len(tokens) < 4:
        raise _Bad("expected 'fault P KIND \"detail\"'")
    player = _player(tokens[1])
    try:
        kind = FaultKind(tokens[2])
    except ValueError:
        kinds = "|".join(k.value for k in FaultKind)
        raise _Bad(f"unknown fault kind {tokens[2]!r} (expected one of {kinds})") from None
    start = len(f"fault {tokens[1]} {tokens[2]} ")
    try:
        detail, end = unquote(text, start)
    except ValueError as exc:
        raise _Bad(str(exc)) from None
    if end != len(text):
        raise _Bad("unexpected text after the quoted detail")
    return FaultLine(player, kind, detail)


def _parse_header(text: str) -> Header:
    space = text.find(" ")
    name = text[1:space] if space > 0 else ""
    if not _header_name_ok(name):
        raise _Bad("expected a header '[Name \"value\"]'")
    try:
        value, end = unquote(text, space + 1)
    except ValueError as exc:
        raise _Bad(f"header [{name}]: {exc}") from None
    if text[end:] != "]":
        raise _Bad(f"header [{name}]: expected ']' after the value")
    return Header(name, value)


# The play lines already read, each as what makes a new item of it: a game has a few hundred
# of them, drawn from a few thousand distinct texts. Bounded, for a file of odd lines.
_PLAYS: dict[str, tuple[int, Move, Card | None]] = {}
_ADVICE: dict[str, tuple[int, Move]] = {}
_KNOWN_MAX = 20_000


def parse_line(text: str) -> Item:
    """Parse one line of a game (not the ``%ginrec`` line). Raises ``RecordSyntaxError``
    (without a line number) if the line is not in the format's one canonical form."""
    play = _PLAYS.get(text)
    if play is not None:
        return Play(*play)
    advice = _ADVICE.get(text)
    if advice is not None:
        return Advice(*advice)
    try:
        item = _parse(text)
    except _Bad as exc:
        raise RecordSyntaxError(str(exc)) from None
    canonical = item.text()
    if canonical != text:
        raise RecordSyntaxError(f"not in the canonical form; expected {_excerpt(canonical, 200)}")
    if isinstance(item, Play | Advice):
        if len(_PLAYS) + len(_ADVICE) >= _KNOWN_MAX:
            _PLAYS.clear()
            _ADVICE.clear()
        if isinstance(item, Play):
            _PLAYS[text] = (item.player, item.move, item.card)
        else:
            _ADVICE[text] = (item.player, item.move)
    return item


def _parse(text: str) -> Item:
    if text.startswith("#"):
        return Comment(text[1:])
    if text.startswith("["):
        return _parse_header(text)
    tokens = text.split()
    if not tokens:
        raise _Bad("empty line")
    head = tokens[0]
    if head in ("0", "1", "2"):
        return _parse_play(tokens)
    if head == "hand":
        return _parse_hand(tokens)
    if head == "deal":
        cards = _cards(tokens[1:])
        if len(cards) != 52:
            raise _Bad(f"a deal must list 52 cards, not {len(cards)}")
        return Deal(cards)
    if head == "cut":
        if len(tokens) < 4:
            raise _Bad("expected 'cut' and at least three cards")
        return Cut(_cards(tokens[1:]))
    if head in ("knocker", "defender"):
        return _parse_show(tokens)
    if head == "layoff":
        if len(tokens) != 5:
            raise _Bad("expected 'layoff P CARD on MELD'")
        _keyword(tokens, 3, "on")
        return LayOff(_player(tokens[1]), _card(tokens[2]), _meld(tokens[4]))
    if head == "result":
        return _parse_result(tokens)
    if head == "totals":
        return Totals(_columns(tokens[1:], "totals"))
    if head == "fault":
        return _parse_fault(text, tokens)
    if head == "end":
        return _parse_end(tokens)
    words = "hand, deal, cut, a player number, knocker, layoff, defender, result, totals, fault,"
    words += " end"
    raise _Bad(f"unknown line {_excerpt(text)} (expected a header, a comment, or one of: {words})")


def _cut_line(number: int, path: str | None) -> RecordError:
    """The error of a last line without its line break."""
    return TruncatedRecordError(
        "the last line is cut off (the file does not end with a line break)",
        number,
        path,
        at_end=True,
        partial=True,
    )


def _format_error(text: str, number: int, path: str | None) -> RecordSyntaxError:
    """The error of a game's first line ``text`` that is not this reader's format line."""
    version = text[len("%ginrec ") :] if text.startswith("%ginrec ") else ""
    message = (
        f"unsupported record format version {version!r} (this reader knows {FORMAT_VERSION})"
        if version
        else f"expected the format line {FORMAT_LINE!r}"
    )
    return RecordSyntaxError(message, number, path)


def _check_header(game: GameRecord, header: Header, number: int, path: str | None) -> None:
    """Note in ``game.errors`` a header on line ``number`` after the first event, or one
    that clashes with an earlier header."""
    if any(not isinstance(i, Header | Comment) for i in game.items):
        game.errors.append(
            RecordSyntaxError(f"header [{header.name}] after the first event", number, path)
        )
        return
    clash = _conflict(game.headers, header)
    if clash is not None:
        game.errors.append(RecordSyntaxError(clash, number, path))


@dataclass
class _ReaderState:
    game: GameRecord | None = None
    ended: bool = False  # the game's end line has been read
    skipping: bool = False  # inside a stretch of lines outside any game, already reported
    unknown: bool = False  # a game of a format version this reader does not know


class RecordReader:
    """Reads games one at a time from a binary stream, never raising on bad input.

    Each game's ``errors`` hold what was wrong, with line numbers. A game cut short (no ``end``
    line before the next game or the end of the file) gets a ``TruncatedRecordError``. Lines
    outside any game are reported once per stretch, on the game they follow (or precede).
    """

    def __init__(self, stream: IO[bytes], path: str | None = None) -> None:
        self._stream = stream
        self.path = path
        self.lines = 0
        self._endless = False  # a line went on past MAX_SKIP bytes

    def __iter__(self) -> Iterator[GameRecord]:
        path = self.path
        state = _ReaderState()
        preamble: list[Comment] = []
        orphan_errors: list[RecordError] = []
        number = 0
        busy = 0  # the last line that started a game or belonged to one
        for number, raw in enumerate(self._lines(), start=1):
            self.lines = number
            stop = self._bound_passed(state, number, busy)  # why reading stops here, if it does
            if stop:
                stopped = RecordSyntaxError(
                    f"{stop}: this is not a game record; reading stopped here", number, path
                )
                (state.game.errors if state.game is not None else orphan_errors).append(stopped)
                break
            cut = not raw.endswith(b"\n")
            data = raw.rstrip(b"\n")
            if data.endswith(b"\r"):
                data = data[:-1]
            if cut:
                error = _cut_line(number, path)
                (state.game.errors if state.game is not None else orphan_errors).append(error)
            if len(data) > MAX_LINE:
                self._stray(state, orphan_errors, f"a line of {len(data)} bytes", number)
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._stray(state, orphan_errors, f"not UTF-8 text ({exc.reason})", number)
                continue
            if not text.strip():
                continue
            if text.startswith("%"):
                busy = number
                if state.game is not None:
                    yield self._finish(state.game, state.ended or state.unknown)
                started = GameRecord(preamble=preamble, line=number, path=path, last_line=number)
                if cut and state.game is not None:  # the cut line is the new game's
                    started.errors.append(state.game.errors.pop())
                started.errors.extend(orphan_errors)
                state = _ReaderState(started)
                orphan_errors, preamble = [], []
                if text != FORMAT_LINE:
                    started.errors.append(_format_error(text, number, path))
                    state.skipping = state.unknown = True
                continue
            if state.skipping and not text.startswith("#"):
                continue
            if state.game is None:
                if text.startswith("#"):
                    preamble.append(Comment(text[1:], line=number))
                    continue
                self._stray(state, orphan_errors, "no game has started", number, text)
                continue
            game = state.game
            if state.ended and not text.startswith("#"):
                self._stray(state, orphan_errors, "the game has ended", number, text)
                continue
            game.last_line = busy = number
            try:
                item = parse_line(text)
            except RecordSyntaxError as exc:
                exc.line, exc.path = number, path
                game.errors.append(exc)
                continue
            if isinstance(item, Header):
                _check_header(game, item, number, path)
            item = _with_line(item, number)
            game.items.append(item)
            if isinstance(item, End):
                state.ended = True
        self.lines = number
        if state.game is not None:
            state.game.errors.extend(orphan_errors)
            yield self._finish(state.game, state.ended or state.unknown, last=True)
        elif orphan_errors:
            # No game at all, only stray lines: one empty game carries their errors.
            yield GameRecord(preamble=preamble, errors=orphan_errors, line=0, path=path)

    def _bound_passed(self, state: _ReaderState, number: int, busy: int) -> str:
        """Which bound line ``number`` passes, if any (else ""): an endless stream
        (/dev/zero, ``yes``) ends with an error. ``busy`` is the last line that started a
        game or belonged to one."""
        if self._endless:
            return f"a line longer than {MAX_SKIP} bytes"
        if number - busy > MAX_IDLE:
            return f"{MAX_IDLE} lines in a row that belong to no game"
        if state.game is not None and number - state.game.line > MAX_GAME_LINES:
            return f"a game longer than {MAX_GAME_LINES} lines"
        return ""

    def _lines(self) -> Iterator[bytes]:
        stream = self._stream
        while True:
            raw = stream.readline(MAX_LINE + 2)
            if not raw:
                return
            if not raw.endswith(b"\n") and len(raw) > MAX_LINE:
                # Skip the rest of an overlong line, up to a bound: a stream without line
                # feeds (/dev/zero) would never end.
                skipped = len(raw)
                while raw and not raw.endswith(b"\n"):
                    if skipped > MAX_SKIP:
                        self._endless = True
                        break
                    raw = stream.readline(MAX_LINE)
                    skipped += len(raw)
                yield b"x" * (MAX_LINE + 1) + b"\n"
                continue
            yield raw

    def _stray(
        self,
        state: _ReaderState,
        orphans: list[RecordError],
        why: str,
        number: int,
        text: str | None = None,
    ) -> None:
        if state.skipping:
            return
        inside = state.game is not None and not state.ended
        if inside and text is None:
            message = f"unreadable line: {why}"
        elif inside:
            message = f"unreadable line {_excerpt(text or '')}: {why}"
        else:
            where = "before the first game" if state.game is None else "after the game's end line"
            shown = f" {_excerpt(text)}" if text is not None else ""
            message = (
                f"unexpected line{shown} {where} ({why}; a game starts with {FORMAT_LINE!r});"
                " lines up to the next game are skipped"
            )
            state.skipping = True
        error = RecordSyntaxError(message, number, self.path)
        (state.game.errors if state.game is not None else orphans).append(error)

    def _finish(self, game: GameRecord, ended: bool, last: bool = False) -> GameRecord:
        if not ended:
            why = (
                " (if an append was cut short by a kill or a crash, the next one cuts it off)"
                if last
                else ""
            )
            game.errors.append(
                TruncatedRecordError(
                    f"the game that starts at line {game.line} has no end line: the record is"
                    f" truncated{why}",
                    game.last_line,
                    self.path,
                    at_end=last,
                )
            )
        game.errors.sort(key=lambda e: e.line)
        return game


def _with_line(item: Item, line: int) -> Item:
    object.__setattr__(item, "line", line)
    return item


def read_games(
    source: str | os.PathLike[str] | IO[bytes], path: str | None = None
) -> Iterator[GameRecord]:
    """Read games one at a time from a file name or a binary stream.

    Raises ``RecordError`` (line 0) only if a named file cannot be opened; bad content is
    reported in each game's ``errors``.
    """
    if isinstance(source, str | os.PathLike):
        name = os.fspath(source)
        try:
            handle = open(name, "rb")  # noqa: SIM115 - closed in the finally below
        except OSError as exc:
            raise RecordError(f"cannot read the record: {exc.strerror or exc}", 0, name) from None
        try:
            yield from RecordReader(handle, path or name)
        except OSError as exc:
            raise RecordError(f"cannot read the record: {exc.strerror or exc}", 0, name) from None
        finally:
            handle.close()
    else:
        yield from RecordReader(source, path)


def loads(text: str, path: str | None = None) -> list[GameRecord]:
    """Every game in ``text``."""
    data = text.encode("utf-8", "surrogateescape")
    return list(RecordReader(io.BytesIO(data), path))
