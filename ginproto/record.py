"""Game records: the data model, a strict writer, a lenient streaming reader, atomic append.

The format is specified in ``spec/RECORD.md``. In short, each game is::

    %ginrec 1
    [Event "..."]             headers in the PGN manner, every rule parameter among them
    ...
    hand 1 dealer 0 limit 10  one event a line: the deal, every move, the showdown, the scores
    deal 7c 2d ...
    1 pass
    ...
    end target winner 0 scores 104 37
    <blank line>

The writer is strict: it refuses anything the reader would not read back to the same value,
and ``write_game(read(text)) == text`` for every record it writes. The reader is lenient, in
the manner of python-chess's PGN reader: it never raises on bad input, but collects
``RecordError``s with their line numbers in ``GameRecord.errors`` and reads on. Whether the
moves and scores of a well-formed record are *right* is ``ginproto.replay``'s question.

Players are numbered from 0, as in the protocol and ``ginproto.table``; hands and the three
Hollywood games from 1.

The API: ``record_from_log(log, engines, ...)`` turns a ``table.GameLog`` into a
``GameRecord``; ``write_game``/``dumps`` give its text; ``append_game(path, record)`` adds it to
a file atomically; ``read_games(path_or_stream)`` (``RecordReader``) and ``loads(text)`` read
games back. Errors: ``RecordError(ValueError)``, with ``RecordSyntaxError`` (a malformed line),
``TruncatedRecordError`` (a game cut short) and ``RecordWriteError`` (the writer's refusals);
``ginproto.replay.ReplayError`` is the same family's "well formed, but wrong".
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

from ginproto.cards import Card, CardError, check_deck, format_cards
from ginproto.game import Entry, Game, GameEnd, Roles
from ginproto.hand import Hand, HandResult, Outcome, Turn
from ginproto.melds import Meld, MeldError
from ginproto.moves import Move, MoveError
from ginproto.rules import Rules
from ginproto.table import FaultKind, GameLog

log = logging.getLogger(__name__)

FORMAT_VERSION: Final = 1
FORMAT_LINE: Final = f"%ginrec {FORMAT_VERSION}"
MAX_LINE: Final = 1 << 20  # a longer line is reported as one error and not parsed
MAX_SKIP: Final = 64 << 20  # the reader stops inside a line longer than this (no line feed)
MAX_IDLE: Final = 100_000  # ... after this many lines in a row that belong to no game
MAX_GAME_LINES: Final = 1_000_000  # ... and in a game longer than this many lines

__all__ = [
    "FORMAT_LINE",
    "RECORD_MODE",
    "Advice",
    "Comment",
    "Cut",
    "Deal",
    "End",
    "EngineInfo",
    "FaultLine",
    "GameRecord",
    "HandStart",
    "Header",
    "LayOff",
    "Play",
    "RecordError",
    "RecordSyntaxError",
    "RecordWriteError",
    "Result",
    "Show",
    "Totals",
    "TruncatedRecordError",
    "append_game",
    "dumps",
    "end_event",
    "entry_events",
    "loads",
    "read_games",
    "record_from_log",
    "torn_tail",
    "write_game",
]


# ---------------------------------------------------------------------------------------------
# Errors.


class RecordError(ValueError):
    """Something wrong with a record, at a line (1-based; 0 when not tied to a line).

    ``str()`` gives ``path:line: message``, the form the CLI prints.
    """

    def __init__(self, message: str, line: int = 0, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.path = path

    def __str__(self) -> str:
        where = self.path or "<record>"
        return f"{where}:{self.line}: {self.message}" if self.line else f"{where}: {self.message}"


class RecordSyntaxError(RecordError):
    """A line that is not well-formed record text (the reader's errors)."""


class TruncatedRecordError(RecordSyntaxError):
    """A game that stops before its ``end`` line, or a last line cut off mid-way."""


class RecordWriteError(RecordError):
    """The strict writer refused a record it could not write so that it reads back the same."""


# ---------------------------------------------------------------------------------------------
# Quoted strings (header values and fault details).

_ESCAPES = {'"': '\\"', "\\": "\\\\"}


def quote(text: str) -> str:
    """``text`` as a quoted string: ``\\"`` and ``\\\\`` escaped, control characters as
    ``\\xHH``, lone surrogates as ``\\uHHHH``; everything else as it is (UTF-8)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def unquote(text: str, start: int = 0) -> tuple[str, int]:
    """Parse the quoted string that starts at ``text[start]``; return it and the index after
    its closing quote. Raises ``ValueError`` saying what is wrong."""
    if start >= len(text) or text[start] != '"':
        raise ValueError("expected a quoted string")
    close = text.find('"', start + 1)
    if close > 0 and text.find("\\", start + 1, close) < 0:
        return text[start + 1 : close], close + 1  # the common case: no escapes
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt in ('"', "\\"):
                out.append(nxt)
                i += 2
                continue
            width = {"x": 2, "u": 4}.get(nxt)
            digits = text[i + 2 : i + 2 + width] if width else ""
            if (
                not width
                or len(digits) != width
                or any(c not in "0123456789abcdef" for c in digits)
            ):
                raise ValueError(f"bad escape {text[i : i + 6]!r} in a quoted string")
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        out.append(ch)
        i += 1
    raise ValueError("unterminated quoted string")


# ---------------------------------------------------------------------------------------------
# The lines of a record. Each is a small frozen value with one text form; ``line`` is where the
# reader found it (0 when built in memory) and takes no part in comparisons.


def _players_text(columns: Sequence[Sequence[int]]) -> str:
    return " / ".join(" ".join(str(v) for v in col) for col in columns)


@dataclass(frozen=True, slots=True)
class Header:
    """``[Name "value"]``."""

    name: str
    value: str
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"[{self.name} {quote(self.value)}]"


@dataclass(frozen=True, slots=True)
class Comment:
    """``#text``: kept, in place, so that a record with comments round-trips."""

    body: str
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return "#" + self.body


@dataclass(frozen=True, slots=True)
class Cut:
    """``cut 4h 9c Kd``: the cards the three players drew for their roles, in drawing order."""

    cards: tuple[Card, ...]
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"cut {format_cards(self.cards)}"


@dataclass(frozen=True, slots=True)
class HandStart:
    """``hand 3 dealer 1 limit 10`` (three players: ``... box 1 captain 2 sitter 0``)."""

    number: int
    dealer: int
    limit: int
    roles: Roles | None = None
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        text = f"hand {self.number} dealer {self.dealer} limit {self.limit}"
        if self.roles is not None:
            r = self.roles
            text += f" box {r.box} captain {r.captain} sitter {r.sitter}"
        return text


@dataclass(frozen=True, slots=True)
class Deal:
    """``deal`` and the 52 cards in dealing order (see ``ginproto.hand``)."""

    deck: tuple[Card, ...]
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"deal {format_cards(self.deck)}"


@dataclass(frozen=True, slots=True)
class Play:
    """``1 stock Qs``: a player's move, with the card taken by a draw (take, stock, pile)."""

    player: int
    move: Move
    card: Card | None = None
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"{self.player} {self.move}" + ("" if self.card is None else f" {self.card}")


@dataclass(frozen=True, slots=True)
class Advice:
    """``2 advise discard 7h``: the three-player sitter's advice on the captain's next move."""

    player: int
    move: Move
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"{self.player} advise {self.move}"


@dataclass(frozen=True, slots=True)
class Show:
    """``knocker 0 melds 5s-6s-7s deadwood 2c 3c = 5`` or the same for the ``defender``
    (whose deadwood is what is left after the layoffs)."""

    role: str  # "knocker" or "defender"
    player: int
    melds: tuple[Meld, ...]
    deadwood_cards: tuple[Card, ...]
    deadwood: int
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        parts = [self.role, str(self.player), "melds", *map(str, self.melds), "deadwood"]
        parts += [*map(str, self.deadwood_cards), "=", str(self.deadwood)]
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class LayOff:
    """``layoff 1 8s on 5s-6s-7s``: the defender lays a card off onto one of the knocker's
    melds, named as the knocker laid it out."""

    player: int
    card: Card
    meld: Meld
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"layoff {self.player} {self.card} on {self.meld}"


@dataclass(frozen=True, slots=True)
class Result:
    """``result knock winner 0 points 5`` (``x2`` for a doubled hand; Hollywood adds
    ``games 1 2``, the games the points went into); ``result draw`` or ``result draw cap``."""

    outcome: Outcome
    winner: int | None = None
    points: int = 0
    multiplier: int = 1
    capped: bool = False
    games: tuple[int, ...] = ()
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        if self.outcome is Outcome.DRAW:
            return "result draw cap" if self.capped else "result draw"
        text = f"result {self.outcome} winner {self.winner} points {self.points}"
        if self.multiplier != 1:
            text += f" x{self.multiplier}"
        if self.games:
            text += " games " + " ".join(str(g) for g in self.games)
        return text


@dataclass(frozen=True, slots=True)
class Totals:
    """``totals 18 0`` after each hand: every player's running score; Hollywood shows the
    three games, ``totals 44 18 / 34 0 / 4 0``."""

    columns: tuple[tuple[int, ...], ...]
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"totals {_players_text(self.columns)}"


@dataclass(frozen=True, slots=True)
class FaultLine:
    """``fault 1 illegal "discard 7h: 7h is not in the player's hand"``: a forfeit."""

    player: int
    kind: FaultKind
    detail: str
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        return f"fault {self.player} {self.kind} {quote(self.detail)}"


@dataclass(frozen=True, slots=True)
class End:
    """``end target winner 0 scores 104 37``: how the game ended, who won (``none`` for a
    tie), and the final scores with any game bonuses; Hollywood adds ``games W W W``."""

    termination: GameEnd
    winner: int | None
    scores: tuple[tuple[int, ...], ...]
    game_winners: tuple[int | None, ...] = ()
    line: int = field(default=0, compare=False, kw_only=True)

    def text(self) -> str:
        text = f"end {self.termination} winner {_opt(self.winner)}"
        text += f" scores {_players_text(self.scores)}"
        if self.game_winners:
            text += " games " + " ".join(_opt(w) for w in self.game_winners)
        return text


def _opt(value: int | None) -> str:
    return "none" if value is None else str(value)


Event = Cut | HandStart | Deal | Play | Advice | Show | LayOff | Result | Totals | FaultLine | End
Item = Header | Comment | Event
"""One line of a game, as the reader found it or the writer will write it."""


# ---------------------------------------------------------------------------------------------
# A game.


@dataclass(eq=False)
class GameRecord:
    """One game: its lines in order (headers, events, comments), and the reader's errors.

    ``preamble`` holds the comments before the game's ``%ginrec`` line. ``line`` is the line of
    that ``%ginrec`` line in the file (0 for a record built in memory).
    """

    items: list[Item] = field(default_factory=list)
    preamble: list[Comment] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)
    line: int = 0
    path: str | None = None
    last_line: int = 0  # the file's last line that belongs to this game

    @property
    def headers(self) -> list[Header]:
        return [item for item in self.items if isinstance(item, Header)]

    @property
    def events(self) -> list[Event]:
        """The events, without headers or comments."""
        return [item for item in self.items if not isinstance(item, Header | Comment)]

    def header(self, name: str) -> str | None:
        """The value of the first header called ``name``, or ``None``."""
        for item in self.items:
            if isinstance(item, Header) and item.name == name:
                return item.value
        return None

    def header_line(self, name: str) -> int:
        """The line of header ``name``; for a missing one, the line where the headers end."""
        for item in self.items:
            if isinstance(item, Header) and item.name == name:
                return item.line
        return self.headers_end

    @property
    def headers_end(self) -> int:
        """The line of the first event (where a missing header is reported)."""
        for item in self.items:
            if not isinstance(item, Header | Comment):
                return item.line
        return self.last_line or self.line

    def rules(self) -> Rules:
        """The rules in the headers. Raises ``RecordError`` at the offending header line."""
        variant = self.header("Variant")
        if variant is None:
            raise RecordError("missing header [Variant]", self.headers_end, self.path)
        params = {"variant": variant}
        for name in Rules.__dataclass_fields__:
            if name == "variant":
                continue
            value = self.header(f"Rule.{name}")
            if value is None:
                raise RecordError(f"missing header [Rule.{name}]", self.headers_end, self.path)
            params[name] = value
        for h in self.headers:
            if h.name.startswith("Rule.") and h.name[5:] not in params:
                raise RecordError(f"unknown rule header [{h.name}]", h.line, self.path)
        try:
            return Rules.from_params(params)
        except ValueError as exc:
            # Rules' messages start with the parameter's name; point at its header.
            bad = next((n for n in params if str(exc).startswith(n)), "variant")
            name = "Variant" if bad == "variant" else f"Rule.{bad}"
            raise RecordError(f"bad rules: {exc}", self.header_line(name), self.path) from None

    @property
    def players(self) -> list[EngineInfo]:
        """The engines as the headers describe them, by player number."""
        out = []
        for p in range(3):
            name = self.header(f"Player{p}")
            if name is None:
                break
            options = []
            for h in self.headers:
                if h.name == f"Player{p}.Option":
                    key, _, value = h.value.partition("=")
                    options.append((key, value))
            out.append(
                EngineInfo(
                    name,
                    self.header(f"Player{p}.Version") or "",
                    self.header(f"Player{p}.Command") or "",
                    tuple(options),
                )
            )
        return out


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """What a record says about one player: name, version, command line, options."""

    name: str
    version: str = ""
    command: str = ""
    options: tuple[tuple[str, str], ...] = ()


# ---------------------------------------------------------------------------------------------
# The writer.


_HEADER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")


def _header_name_ok(name: str) -> bool:
    return _HEADER_NAME.fullmatch(name) is not None


_REPEATABLE = re.compile(r"Player[0-9]+\.Option")


def _conflict(earlier: Iterable[Header], header: Header) -> str | None:
    """Why ``header`` contradicts an earlier header of the same name, or ``None``. Only
    ``PlayerN.Option`` may appear more than once with different values."""
    if _REPEATABLE.fullmatch(header.name):
        return None
    for h in earlier:
        if h.name == header.name and h.value != header.value:
            where = f" at line {h.line}" if h.line else ""
            return (
                f"header [{header.name}] says {_excerpt(header.value)}, but the header{where}"
                f" says {_excerpt(h.value)}"
            )
    return None


def write_game(record: GameRecord) -> str:
    """The canonical text of one game, ending with the blank line after its ``end`` line.

    Strict: raises ``RecordWriteError`` for a record that would not read back as written (a bad
    header name, a comment with a line break, a game without exactly one ``end`` line at the
    end of its events, a deal that is not a 52-card deck, ...).
    """
    lines = [c.text() for c in record.preamble]
    lines.append(FORMAT_LINE)
    ends = 0
    seen_event = False
    headers: list[Header] = []
    for item in record.items:
        if isinstance(item, Header):
            if not _header_name_ok(item.name):
                raise RecordWriteError(f"bad header name {item.name!r}")
            if seen_event:
                raise RecordWriteError(f"header [{item.name}] after the first event")
            clash = _conflict(headers, item)
            if clash is not None:
                raise RecordWriteError(clash)
            headers.append(item)
        elif isinstance(item, Comment):
            if "\n" in item.body or "\r" in item.body:
                raise RecordWriteError("a comment must not contain a line break")
        else:
            seen_event = True
            if ends:
                raise RecordWriteError(f"an event after the end line: {item.text()}")
            _check_event(item)
        text = item.text()
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise RecordWriteError(f"not valid text: {text!r}") from None
        lines.append(text)
        if isinstance(item, End):
            ends += 1
            lines.append("")
    if not ends:
        raise RecordWriteError("a game record must end with an end line")
    return "\n".join(lines) + "\n"


def _check_event(event: Event) -> None:
    """The writer's checks on one event: what its text form cannot carry back."""
    try:
        if isinstance(event, Deal):
            check_deck(event.deck)
        elif isinstance(event, Play):
            if (event.card is not None) != event.move.is_draw:
                raise RecordWriteError(f"{event.move.kind}: only a draw records its card")
        elif isinstance(event, Show) and event.role not in ("knocker", "defender"):
            raise RecordWriteError(f"a show line is for a knocker or defender: {event.role!r}")
        elif isinstance(event, Totals | End):
            columns = event.scores if isinstance(event, End) else event.columns
            if not columns or len({len(c) for c in columns}) != 1 or len(columns[0]) not in (2, 3):
                raise RecordWriteError(f"scores need 2 or 3 players in every game: {columns}")
    except CardError as exc:
        raise RecordWriteError(str(exc)) from None


def dumps(records: Iterable[GameRecord]) -> str:
    """Many games as one file's text."""
    return "".join(write_game(r) for r in records)


# ---------------------------------------------------------------------------------------------
# From a played game to its record. The replayer builds its expected lines with the same
# functions, so the record and the check of it cannot disagree on a format.


def entry_events(entry: Entry, rules: Rules) -> list[Event]:
    """The lines after a hand's last move: the showdown, the result, the totals."""
    result = entry.result
    seats = entry.seats
    events: list[Event] = []
    if result.knocker is not None and result.defender is not None:
        knocker, defender = seats[result.knocker], seats[1 - result.knocker]
        events.append(
            Show(
                "knocker",
                knocker,
                result.knocker_melds,
                result.knocker_deadwood,
                result.knocker_deadwood_value,
            )
        )
        d = result.defender
        events.extend(
            LayOff(defender, lay.card, result.knocker_melds[lay.meld]) for lay in d.layoffs
        )
        events.append(Show("defender", defender, d.melds, d.deadwood_cards, d.deadwood))
    events.append(_result_event(entry, result, rules))
    events.append(Totals(entry.totals))
    return events


def _result_event(entry: Entry, result: HandResult, rules: Rules) -> Result:
    if result.outcome is Outcome.DRAW:
        return Result(Outcome.DRAW, capped=result.capped)
    games = tuple(g + 1 for g in entry.games) if rules.games > 1 else ()
    return Result(result.outcome, entry.winner, result.points, result.multiplier, games=games)


def end_event(game: Game) -> End:
    """The ``end`` line of a finished game."""
    assert game.end is not None, "the game is not over"
    scores = tuple(game.final_scores(g) for g in range(game.rules.games))
    winners = tuple(game.game_winners) if game.rules.games > 1 else ()
    return End(game.end, game.winner, scores, winners)


def turn_event(player: int, turn: Turn) -> Play:
    return Play(player, turn.move, turn.card)


def record_from_log(
    log: GameLog,
    engines: Sequence[EngineInfo],
    *,
    event: str = "",
    site: str = "",
    date: str = "",
    referee: str = "",
    extra: Sequence[tuple[str, str]] = (),
) -> GameRecord:
    """The record of a game played by ``ginproto.table.play_game``.

    ``engines`` describe the players by number; ``date`` is ``YYYY.MM.DD`` as in PGN;
    ``referee`` defaults to this ginproto's version; ``extra`` headers go before the result.
    """
    from ginproto.version import __version__

    rules = log.rules
    if len(engines) != rules.players:
        raise RecordWriteError(f"{rules.variant} needs {rules.players} engines, not {len(engines)}")
    items: list[Item] = [
        Header("Event", event),
        Header("Site", site),
        Header("Date", date),
        Header("Referee", referee or f"ginproto {__version__}"),
        Header("Variant", str(rules.variant)),
    ]
    params = rules.to_params()
    items += [Header(f"Rule.{k}", v) for k, v in params.items() if k != "variant"]
    items += [Header("Seed", str(log.seed)), Header("Key", str(log.key))]
    for p, info in enumerate(engines):
        items += [
            Header(f"Player{p}", info.name),
            Header(f"Player{p}.Version", info.version),
            Header(f"Player{p}.Command", info.command),
        ]
        for key, value in info.options:
            if "=" in key:
                raise RecordWriteError(f"an option name must not contain '=': {key!r}")
            items.append(Header(f"Player{p}.Option", f"{key}={value}"))
    items += [Header(k, v) for k, v in extra]
    game = log.game
    items += [
        Header("Winner", _opt(game.winner)),
        Header("Termination", str(game.end)),
    ]
    if log.role_cards:
        items.append(Cut(log.role_cards))
    for hand in log.hands:
        # The knock limit follows from the deal (its upcard); the record states it for people.
        limit = Hand(rules, hand.deck, 0).knock_limit
        items.append(HandStart(hand.number, hand.dealer, limit, hand.roles))
        items.append(Deal(hand.deck))
        for step in hand.steps:
            if step.advice is not None and hand.roles is not None:
                items.append(Advice(hand.roles.sitter, step.advice))
            items.append(turn_event(step.player, step.turn))
        if hand.advice is not None and hand.roles is not None:
            items.append(Advice(hand.roles.sitter, hand.advice))  # before the captain's fault
        if hand.entry is not None:
            items += entry_events(hand.entry, rules)
    if log.fault is not None:
        items.append(FaultLine(log.fault.player, log.fault.kind, log.fault.detail))
    items.append(end_event(game))
    return GameRecord(items)


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


def parse_line(text: str) -> Item:
    """Parse one line of a game (not the ``%ginrec`` line). Raises ``RecordSyntaxError``
    (without a line number) if the line is not in the format's one canonical form."""
    try:
        item = _parse(text)
    except _Bad as exc:
        raise RecordSyntaxError(str(exc)) from None
    canonical = item.text()
    if canonical != text:
        raise RecordSyntaxError(f"not in the canonical form; expected {_excerpt(canonical, 200)}")
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


def _excerpt(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


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
        stop = ""  # why the reader stopped before the end of the stream
        for number, raw in enumerate(self._lines(), start=1):
            self.lines = number
            # Bounds, so that an endless stream (/dev/zero, ``yes``) ends with an error.
            if self._endless:
                stop = f"a line longer than {MAX_SKIP} bytes"
            elif number - busy > MAX_IDLE:
                stop = f"{MAX_IDLE} lines in a row that belong to no game"
            elif state.game is not None and number - state.game.line > MAX_GAME_LINES:
                stop = f"a game longer than {MAX_GAME_LINES} lines"
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
                error: RecordError = TruncatedRecordError(
                    "the last line is cut off (the file does not end with a line break)",
                    number,
                    path,
                )
                target = state.game
                (target.errors if target is not None else orphan_errors).append(error)
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
                    version = text[len("%ginrec ") :] if text.startswith("%ginrec ") else ""
                    message = (
                        f"unsupported record format version {version!r} (this reader knows"
                        f" {FORMAT_VERSION})"
                        if version
                        else f"expected the format line {FORMAT_LINE!r}"
                    )
                    started.errors.append(RecordSyntaxError(message, number, path))
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
            if isinstance(item, Header) and any(
                not isinstance(i, Header | Comment) for i in game.items
            ):
                game.errors.append(
                    RecordSyntaxError(f"header [{item.name}] after the first event", number, path)
                )
            elif isinstance(item, Header):
                clash = _conflict(game.headers, item)
                if clash is not None:
                    game.errors.append(RecordSyntaxError(clash, number, path))
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


# ---------------------------------------------------------------------------------------------
# Atomic append.


RECORD_MODE: Final = 0o600
"""The mode of a record file this module creates: its owner's alone, since a record names the
seed, and the seed reveals every deck."""


def append_game(path: str | os.PathLike[str], record: GameRecord | str) -> None:
    """Add one finished game to the record file at ``path``, creating it (mode 0600) if needed.

    The guarantee (spec/RECORD.md, "Appending"): a game is in the file whole, or not at all.
    The game's whole text is built and checked first, then written on a descriptor opened
    ``O_APPEND``, under an exclusive ``flock`` on the file (so appenders in other threads and
    processes never interleave), then ``fsync``ed before this returns. An error (a full disk:
    "No space left on device") truncates the file back to where it was. A ``kill -9`` (or a
    crash of the machine) in the middle of the write can still leave the start of the game at
    the end of the file: the reader reports that torn game as truncated, and the next append
    first cuts it off (``torn_tail``), so the file holds whole games again.
    """
    import fcntl  # POSIX only; imported here so that reading records works everywhere

    text = record if isinstance(record, str) else write_game(record)
    data = text.encode("utf-8")
    name = os.fspath(path)
    created = not os.path.exists(name)
    fd = os.open(name, os.O_RDWR | os.O_APPEND | os.O_CREAT, RECORD_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        torn = torn_tail(fd, size)
        if torn < size:
            log.warning(
                "%s: cut off the torn game at its end (%d bytes from byte %d), left by an"
                " append that was interrupted",
                name,
                size - torn,
                torn,
            )
            os.ftruncate(fd, torn)
            size = torn
        elif size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a last line of someone else's: keep ours on lines of its own
        try:
            rest = memoryview(data)
            while rest:  # one write, unless the disk fills: then its error (ENOSPC) is raised
                rest = rest[os.write(fd, rest) :]
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise
    finally:
        os.close(fd)  # closing releases the lock
    if created:
        fsync_dir(Path(name).resolve().parent)


_CHUNK: Final = 1 << 16


def torn_tail(fd: int, size: int) -> int:
    """Where the record file open on ``fd`` (``size`` bytes) should end: ``size`` when its last
    game is whole, else the offset where that torn game starts.

    An append writes a game's ``%ginrec`` line first and its ``end`` line last, so what a
    write cut short leaves is a game of this format with no whole ``end`` line (one with its
    line break). Only the last game is read, backwards to the last line that starts with ``%``
    (which no line inside a game does), so this costs one game's reading however large the
    file; and usually only its last line.
    """
    tail = os.pread(fd, min(size, 4096), max(0, size - 4096))
    body = tail.rstrip(b"\n")
    cut = body.rfind(b"\n")
    whole_line = cut >= 0 or size <= len(tail)
    if len(body) < len(tail) and whole_line and body[cut + 1 :].startswith(b"end "):
        return size  # the common case: the file ends with an end line and its line break
    start = _last_game_start(fd, size)
    if start is None:
        return size
    game = os.pread(fd, size - start, start)
    first = (FORMAT_LINE + "\n").encode()
    if not (game.startswith(first) or first.startswith(game)):
        return size  # not a game of this format: none of ours
    lines = game.split(b"\n")[:-1]  # the lines with their line break
    return size if any(line.startswith(b"end ") for line in lines) else start


def _last_game_start(fd: int, size: int) -> int | None:
    """The offset of the last line that starts with ``%`` (a game's format line), or None."""
    end = size
    while end > 0:
        begin = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - begin + 1, begin)  # one byte more: a line break at ``end``
        at = len(chunk)
        while True:
            at = chunk.rfind(b"%", 0, at)
            if at < 0:
                break
            if begin + at == 0 or (at > 0 and chunk[at - 1 : at] == b"\n"):
                return begin + at
            if at == 0:  # the byte before is in the previous chunk
                if os.pread(fd, 1, begin - 1) == b"\n":
                    return begin
                break
        end = begin
    return None


def fsync_dir(directory: Path) -> None:
    """Make a file's creation or rename in ``directory`` durable (best effort)."""
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
