"""Replay and verification: re-run a record's every move through the rules engine.

A record states its moves (the inputs) and what followed from them (the showdown, the results,
the totals, the end). Replay feeds the inputs to the very ``Game``/``Hand`` the referee plays
with, so no rule is written twice, and rebuilds every derived line with the functions the
writer itself uses (``ginproto.record.entry_events`` and ``end_event``). A record verifies when
each move was legal, each deal is a 52-card deck, and each derived line is the one the rules
give. The first line that is not is reported with the reason, as a ``ReplayError``.

Nothing here prints: ``verify_game`` returns findings, and ``replay_game`` calls back with the
game after each line for whoever wants to show it (``referee.views.replay``).
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ginproto.cards import CardError, check_deck
from ginproto.game import Game, GamePhase, Roles, draw_roles
from ginproto.hand import IllegalMoveError
from ginproto.moves import Move, MoveError
from ginproto.record import (
    Advice,
    Comment,
    Cut,
    Deal,
    End,
    Event,
    FaultLine,
    GameRecord,
    HandStart,
    Header,
    Item,
    LayOff,
    Play,
    RecordError,
    Result,
    Show,
    Totals,
    TruncatedRecordError,
    end_event,
    entry_events,
    read_games,
)
from ginproto.rules import Rules
from ginproto.table import FaultKind

__all__ = [
    "FileReport",
    "ReplayError",
    "cut_short",
    "describe_cut",
    "replay_game",
    "verify_file",
    "verify_game",
]


class ReplayError(RecordError):
    """A well-formed line that the rules contradict: an illegal move, a wrong score, ..."""


_NAMES: dict[type, str] = {
    Cut: "cut",
    HandStart: "hand",
    Deal: "deal",
    Play: "move",
    Advice: "advice",
    Show: "showdown",
    LayOff: "layoff",
    Result: "result",
    Totals: "totals",
    FaultLine: "fault",
    End: "end",
}

OnEvent = Callable[[Item, "Game | None"], None]


class _Replayer:
    def __init__(self, record: GameRecord, on_event: OnEvent | None) -> None:
        self.record = record
        self.on_event = on_event
        self.rules: Rules = record.rules()
        self.game: Game | None = None
        self.cut_roles: Roles | None = None
        self.expected: deque[Event] = deque()
        self.hand_line: HandStart | None = None  # the hand line whose deal is due
        self.advice: Advice | None = None
        self.line = record.line

    def fail(self, message: str, line: int | None = None) -> ReplayError:
        return ReplayError(message, self.line if line is None else line, self.record.path)

    # -- the walk -------------------------------------------------------------------------
    def run(self) -> Game | None:
        self._check_players()
        for item in self.record.items:
            if isinstance(item, Header | Comment):
                if self.on_event is not None:
                    self.on_event(item, self.game)
                continue
            self.line = item.line or self.line
            self.step(item)
            if self.on_event is not None:
                self.on_event(item, self.game)
        if self.expected:
            raise self.fail(
                f"the record stops before its {_NAMES[type(self.expected[0])]} line:"
                f" expected {self.expected[0].text()!r}",
                self.record.last_line or self.line,
            )
        if self.game is None or not self.game.is_over:
            raise self.fail("the record stops before the game is over", self.record.last_line)
        self._check_result_headers(self.game)
        return self.game

    def step(self, event: Event) -> None:
        if self.expected:
            want = self.expected.popleft()
            if event != want:
                kind = _NAMES[type(want)]
                if type(event) is type(want):
                    raise self.fail(
                        f"wrong {kind} line: the record says {event.text()!r}, but the rules give"
                        f" {want.text()!r}"
                    )
                raise self.fail(
                    f"expected the {kind} line {want.text()!r} here, not {event.text()!r}"
                )
            return
        game = self.game
        if game is not None and game.is_over:
            raise self.fail(f"the game is over; unexpected {_NAMES[type(event)]} line")
        if isinstance(event, Cut):
            self.cut(event)
        elif isinstance(event, HandStart):
            self.start_hand(event)
        elif isinstance(event, Deal):
            self.deal(event)
        elif isinstance(event, Advice):
            self.advise(event)
        elif isinstance(event, Play):
            self.play(event)
        elif isinstance(event, FaultLine):
            self.fault(event)
        elif isinstance(event, End):
            assert game is None or not game.is_over
            raise self.fail(f"the game is not over, but the record ends it: {event.text()!r}")
        else:
            raise self.fail(f"unexpected {_NAMES[type(event)]} line: no hand has just ended")

    # -- chance ---------------------------------------------------------------------------
    def cut(self, event: Cut) -> None:
        if self.rules.players != 3:
            raise self.fail("a cut line belongs only to the three-player game")
        if self.game is not None or self.cut_roles is not None:
            raise self.fail("the cut for roles must come once, before the first hand")
        if len(set(event.cards)) != len(event.cards):
            raise self.fail("the cut draws one card more than once")
        try:
            roles, used = draw_roles(event.cards)
        except ValueError:
            raise self.fail("the cut's cards leave players tied: more cards are needed") from None
        if used != len(event.cards):
            raise self.fail(f"the cut lists {len(event.cards)} cards, but the draw uses {used}")
        self.cut_roles = roles

    def start_hand(self, event: HandStart) -> None:
        if self.hand_line is not None:
            raise self.fail(f"hand {self.hand_line.number} has no deal line", self.hand_line.line)
        game = self.game
        if game is None:
            if self.rules.players == 3:
                if self.cut_roles is None:
                    raise self.fail("a three-player game needs a cut line before its first hand")
                game = Game(self.rules, 0, self.cut_roles)
            else:
                if event.dealer not in (0, 1):
                    raise self.fail(f"player {event.dealer} does not play this two-player game")
                game = Game(self.rules, event.dealer)
            self.game = game
        if game.phase is not GamePhase.DEAL:
            raise self.fail(f"hand {len(game.entries) + 1} is still in progress")
        number = len(game.entries) + 1
        if event.number != number:
            raise self.fail(f"this is hand {number}, not hand {event.number}")
        if event.roles != game.roles:
            raise self.fail(f"the roles are {_roles(game.roles)}, not {_roles(event.roles)}")
        if event.dealer != game.dealer:
            raise self.fail(f"player {game.dealer} deals this hand, not player {event.dealer}")
        self.hand_line = event

    def deal(self, event: Deal) -> None:
        if self.hand_line is None or self.game is None:
            raise self.fail("a deal line must follow a hand line")
        try:
            check_deck(event.deck)
        except CardError as exc:
            raise self.fail(f"not a valid deck: {exc}") from None
        hand = self.game.deal(event.deck)
        if hand.knock_limit != self.hand_line.limit:
            raise self.fail(
                f"the knock limit of this hand is {hand.knock_limit} (upcard {hand.upcard}),"
                f" not {self.hand_line.limit}",
                self.hand_line.line,
            )
        self.hand_line = None

    # -- moves ----------------------------------------------------------------------------
    def _playing(self, what: str) -> Game:
        game = self.game
        if self.hand_line is not None:
            raise self.fail(f"a {what} before the hand's deal line")
        if game is None or game.phase is not GamePhase.PLAY or game.hand is None:
            raise self.fail(f"a {what} with no hand in progress")
        return game

    def advise(self, event: Advice) -> None:
        game = self._playing("advice line")
        roles = game.roles
        if roles is None:
            raise self.fail("advice belongs only to the three-player game")
        if game.to_move != roles.captain:
            raise self.fail(f"advice, but the box (player {roles.box}) is to move")
        if event.player != roles.sitter:
            raise self.fail(f"player {roles.sitter} sits out and advises, not {event.player}")
        if self.advice is not None:
            raise self.fail("a second advice line for one decision")
        assert game.hand is not None
        try:
            game.hand.check(event.move)
        except IllegalMoveError as exc:
            raise self.fail(
                f"the advice {event.move} is not a legal move for the captain: {exc}"
            ) from None
        self.advice = event

    def play(self, event: Play) -> None:
        game = self._playing("move")
        mover = game.to_move
        if event.player != mover:
            raise self.fail(f"out of turn: player {mover} is to move, not player {event.player}")
        roles = game.roles
        if roles is not None and mover == roles.captain and self.advice is None:
            raise self.fail(f"the captain moves without the advice of player {roles.sitter}")
        self.advice = None
        entries = len(game.entries)
        try:
            turn = game.apply(event.move, event.player)
        except IllegalMoveError as exc:
            raise self.fail(f"illegal move {event.move}: {exc}") from None
        if turn.card != event.card:
            where = {"take": "the upcard", "pile": "the pile's top", "stock": "the stock's top"}
            raise self.fail(
                f"{where.get(str(event.move.kind), 'the card drawn')} is {turn.card},"
                f" not {event.card}"
            )
        if len(game.entries) > entries:
            self.expected.extend(entry_events(game.entries[-1], self.rules))
            if game.is_over:
                self.expected.append(end_event(game))

    def fault(self, event: FaultLine) -> None:
        if self.hand_line is not None:
            raise self.fail("a fault line between a hand line and its deal")
        game = self.game
        if game is None:
            roles = self.cut_roles
            if self.rules.players == 3 and roles is None:
                raise self.fail("a three-player game needs its cut line before a fault")
            game = self.game = Game(self.rules, 0, roles)
        if event.player >= self.rules.players:
            raise self.fail(f"player {event.player} does not play this game")
        if game.phase is GamePhase.PLAY:
            mover = game.to_move
            assert mover is not None
            roles = game.roles
            askable = {mover}
            if roles is not None and mover == roles.captain and self.advice is None:
                # The sitter is asked before the captain. A captain's fault comes without the
                # advice line: the table logs advice with the move it went with.
                askable.add(roles.sitter)
            if event.player not in askable:
                who = " or ".join(f"player {p}" for p in sorted(askable))
                raise self.fail(f"player {event.player} was not asked to move; {who} was")
            if event.kind is FaultKind.ILLEGAL:
                self._check_illegal(game, event)
        game.forfeit(event.player)
        self.expected.append(end_event(game))

    def _check_illegal(self, game: Game, event: FaultLine) -> None:
        """An illegal-move fault whose detail names the move (``MOVE: why``) must name a move
        that really is illegal. Other details are taken as they are."""
        head, sep, _ = event.detail.partition(": ")
        advice = head.startswith("advice ")
        try:
            move = Move.from_str(head[len("advice ") :] if advice else head)
        except MoveError:
            return
        if not sep:
            return
        if advice and game.roles is not None and game.hand is not None:
            try:
                game.hand.check(move)
            except IllegalMoveError:
                return
            raise self.fail(f"the fault says the advice {move} is illegal, but it is legal")
        trial = copy.deepcopy(game)
        try:
            trial.apply(move)
        except IllegalMoveError:
            return
        raise self.fail(f"the fault says {move} is illegal, but it is a legal move")

    # -- headers --------------------------------------------------------------------------
    def _check_players(self) -> None:
        record = self.record
        for p in range(self.rules.players):
            if record.header(f"Player{p}") is None:
                raise self.fail(f"missing header [Player{p}]", record.headers_end)
        extra = f"Player{self.rules.players}"
        if record.header(extra) is not None:
            raise self.fail(
                f"[{extra}]: {self.rules.variant} is for {self.rules.players} players",
                record.header_line(extra),
            )

    def _check_result_headers(self, game: Game) -> None:
        record = self.record
        for name, value in (
            ("Winner", "none" if game.winner is None else str(game.winner)),
            ("Termination", str(game.end)),
        ):
            got = record.header(name)
            if got is None:
                raise self.fail(f"missing header [{name}]", record.headers_end)
            if got != value:
                raise self.fail(
                    f"header [{name}] says {got!r}, but the game gives {value!r}",
                    record.header_line(name),
                )


def _roles(roles: Roles | None) -> str:
    if roles is None:
        return "none (a two-player game)"
    return f"box {roles.box} captain {roles.captain} sitter {roles.sitter}"


def replay_game(record: GameRecord, on_event: OnEvent | None = None) -> Game:
    """Re-run ``record`` through the rules; return the finished game.

    ``on_event(item, game)`` is called after each line (headers and comments included) with
    the game as it stands (``None`` before the first hand). Raises ``ReplayError`` (or
    ``RecordError`` for bad rules headers) at the first line that the rules contradict; lines
    the reader could not parse are simply absent here, see ``verify_game``.
    """
    game = _Replayer(record, on_event).run()
    assert game is not None
    return game


def verify_game(record: GameRecord) -> list[RecordError]:
    """Everything wrong with one game, in line order: the reader's errors, then the first
    line the rules contradict. An empty list means the game verifies."""
    errors = list(record.errors)
    if not record.items and errors:
        return errors
    try:
        replay_game(record)
    except RecordError as exc:
        exc.path = exc.path or record.path
        if not any(e.line == exc.line for e in errors):
            errors.append(exc)
    errors.sort(key=lambda e: e.line)
    return errors


def cut_short(
    record: GameRecord, errors: Sequence[RecordError] | None = None
) -> TruncatedRecordError | None:
    """Where the end of its file cut ``record`` short, when that is all that is wrong with it;
    ``None`` for a whole game, or for one that is wrong in any other way.

    Such a game is the last of its file and has no whole ``end`` line: the game in progress
    when a run was killed, or an append stopped mid-write by a ``kill -9`` (spec/RECORD.md,
    section 6). Every line before the cut verifies; only the cut line itself, the file's last,
    may be a part of a line. ``errors`` are the game's from ``verify_game``, if already known.
    """
    if not any(isinstance(e, TruncatedRecordError) and e.at_end for e in record.errors):
        return None  # the cheap test first: the game is not the file's last, or it is whole
    if errors is None:
        errors = verify_game(record)
    ends = [e for e in errors if isinstance(e, TruncatedRecordError) and e.at_end]
    partial = {e.line for e in ends if e.partial}
    if any(e.line not in partial and e not in ends for e in errors):
        return None
    if any(isinstance(i, End) and i.line not in partial for i in record.items):
        return None  # a whole game, and a cut line after it
    return max(ends, key=lambda e: e.line, default=None)


def describe_cut(number: int, cut: RecordError) -> str:
    """The one line that names a game ``cut_short`` found, as every command prints it."""
    return (
        f"game {number} left out: truncated at line {cut.line}, before its end line"
        " (the run that wrote it stopped mid-game)"
    )


@dataclass
class FileReport:
    """What ``verify_file`` found: counts, and every game's errors in file order."""

    games: int = 0
    hands: int = 0
    moves: int = 0
    errors: list[RecordError] = field(default_factory=list)
    bad_games: int = 0

    @property
    def ok(self) -> bool:
        return self.games > 0 and not self.errors

    @property
    def first(self) -> RecordError | None:
        return min(self.errors, key=lambda e: e.line) if self.errors else None


def verify_records(records: Iterable[GameRecord]) -> FileReport:
    report = FileReport()
    for record in records:
        errors = verify_game(record)
        if record.items:
            report.games += 1
        report.hands += sum(isinstance(e, HandStart) for e in record.items)
        report.moves += sum(isinstance(e, Play) for e in record.items)
        if errors:
            report.bad_games += 1
            report.errors.extend(errors)
    return report


def verify_file(path: str) -> FileReport:
    """Verify every game of the record file at ``path``. Raises ``RecordError`` only if the
    file cannot be read at all."""
    return verify_records(read_games(path))


def iter_hands(record: GameRecord) -> Iterator[tuple[HandStart | None, list[Item]]]:
    """The record's lines grouped by hand: ``(hand line, its lines)``; the lines before the
    first hand come with ``None``, and the game's fault and end lines with the last hand."""
    current: HandStart | None = None
    lines: list[Item] = []
    for item in record.items:
        if isinstance(item, HandStart):
            if current is not None or lines:
                yield current, lines
            current, lines = item, []
        lines.append(item)
    if current is not None or lines:
        yield current, lines
