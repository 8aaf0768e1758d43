"""The record model: the lines of a record as small frozen values, a game, and the errors.

Each line of the format (``spec/RECORD.md``) is one frozen dataclass with one text form
(``Header``, ``HandStart``, ``Deal``, ``Play``... ``End``); ``GameRecord`` is a game's headers and
events with the errors its reading found; ``EngineInfo`` names a player. ``RecordError`` (a
``ValueError``) and its kinds are what the writer refuses and the reader reports; ``quote`` and
``unquote`` write and read the quoted strings of header values and fault details.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ginproto.cards import Card, format_cards
from ginproto.game import GameEnd, Roles
from ginproto.hand import Outcome
from ginproto.melds import Meld
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import FaultKind

log = logging.getLogger(__name__)

FORMAT_VERSION: Final = 1
FORMAT_LINE: Final = f"%ginrec {FORMAT_VERSION}"
MAX_LINE: Final = 1 << 20  # a longer line is reported as one error and not parsed
MAX_SKIP: Final = 64 << 20  # the reader stops inside a line longer than this (no line feed)
MAX_IDLE: Final = 100_000  # ... after this many lines in a row that belong to no game
MAX_GAME_LINES: Final = 1_000_000  # ... and in a game longer than this many lines


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
    """A game that stops before its ``end`` line, or a last line cut off mid-way.

    ``at_end`` marks what the end of the file cut short: the last game's missing ``end``
    line, or (with ``partial``) the file's last line, which has no line break. A game without
    its ``end`` line that another game follows is only truncated, never ``at_end``.
    """

    def __init__(
        self,
        message: str,
        line: int = 0,
        path: str | None = None,
        *,
        at_end: bool = False,
        partial: bool = False,
    ) -> None:
        super().__init__(message, line, path)
        self.at_end = at_end
        self.partial = partial


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


def _excerpt(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


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
                    self.header(f"Player{p}.Latency") or "",
                )
            )
        return out


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """What a record says about one player: name, version, command line, options; for a
    remote engine, the round trips measured to it (``MEDIAN WORST PINGS``, in ms)."""

    name: str
    version: str = ""
    command: str = ""
    options: tuple[tuple[str, str], ...] = ()
    latency: str = ""
