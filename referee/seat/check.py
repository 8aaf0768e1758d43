"""A conformance checker for engines: a scripted battery of protocol exchanges, each judged.

This is the bot author's first tool, in the manner of fastchess's ``--compliance``: before an
engine plays a match, ``ginref check ENGINE`` runs it through every kind of line and decision
spec/PROTOCOL.md defines and says, check by check, what it got wrong.

Nothing here is a second copy of a rule or of the protocol. The positions are dealt and played
by the rules engine (``ginproto.game.Game`` with hand-made decks), sent and read with the codec
(``ginproto.protocol``), and every reply is judged by the rules engine: a move is legal when its
plain form is in ``legal_moves()`` of the view the engine was shown and ``Game.apply`` accepts
it on a copy of the game (which also judges any declared melds). Engine processes are run by
the referee's own plumbing: ``EnginePlayer`` for the handshake and decisions, exactly as in a
match, and its ``EngineProcess`` for the raw lines a match never sends in that order.

``run_checks`` returns one ``CheckResult`` per check and prints nothing; the ``ginref check``
command (``referee.cli.check``) prints them. After a check fails, the engine is restarted so
that one fault does not spill into the next check.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ginproto import protocol as proto
from ginproto.cards import DECK, Card, parse_cards
from ginproto.game import Game, GameView, Roles
from ginproto.hand import IllegalMoveError, Phase
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, Fault, FaultKind, PlayerFault
from ginproto.text import ID_LIMIT, plural, printable
from referee.seat.clock import DEFAULT_MARGIN, TimeControl
from referee.seat.diagnose import command_problem, start_hint
from referee.seat.player import EnginePlayer, EngineSpec
from referee.seat.preflight import builtin_hint, option_problem
from referee.seat.process import EngineError, EngineProcess, EngineTimeout
from referee.seat.remote import connect_remote
from referee.seat.remote_transport import RemoteTransport

_Process = EngineProcess | RemoteTransport
"""What the battery talks to: the engine's process, or a session of a remote engine."""

log = logging.getLogger(__name__)

__all__ = ["CHECKS", "CheckResult", "run_checks"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check: its name, whether the engine passed, and what was wrong (or, for a pass,
    a note such as whether it knocked). ``lines`` are the protocol lines of the check, with
    ``>`` for the referee's, ``<`` for the engine's and ``!`` for its standard error."""

    name: str
    ok: bool
    detail: str = ""
    lines: tuple[str, ...] = ()


class _Fail(Exception):
    """A check's verdict against the engine; the message says what was wrong."""


# ==========================================================================================
# Positions, dealt and played by the rules engine


def _deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> tuple[Card, ...]:
    """A deck dealing ``non_dealer`` and ``dealer`` their ten cards (alternately, as
    ``ginproto.hand`` deals), turning ``upcard``, with ``stock`` on top of the stock; the
    other cards follow in deck order."""
    head: list[Card] = []
    for a, b in zip(parse_cards(non_dealer), parse_cards(dealer), strict=True):
        head += [a, b]
    head += parse_cards(upcard) + parse_cards(stock)
    used = set(head)
    assert len(used) == len(head) == 21 + len(parse_cards(stock)), "a card is named twice"
    return (*head, *(c for c in DECK if c not in used))


# No melds anywhere: a naive engine's highest deadwood card is the King on top of the stock.
_PLAIN = _deck(
    non_dealer="2c 5c 8c 3d 6d 9d 4h 7h As 3s",
    dealer="Ac 4c 7c 2d 5d 8d 3h 6h 9h 2s",
    upcard="Kc",
    stock="Ks Qd",
)
_KING = Card.from_str("Ks")  # the top of _PLAIN's stock
# Three melds, the Kd and the 9s drawn: a knock discarding the Kd leaves 9.
_KNOCK = _deck(
    non_dealer="Ac 2c 3c Ad 2d 3d 4h 5h 6h Kd",
    dealer="7c 8c 9c 7d 8d 9d Th Jh Qh Ks",
    upcard="Qc",
    stock="9s",
)
# The same, but the 7h drawn: a knock discarding the Kd is gin.
_GIN = _deck(
    non_dealer="Ac 2c 3c Ad 2d 3d 4h 5h 6h Kd",
    dealer="7c 8c 9c 7d 8d 9d Th Jh Qh Ks",
    upcard="Qc",
    stock="7h",
)
# Oklahoma with the 3c turned (knock limit 3): discarding the Kd would leave 7, so no knock.
_OKLAHOMA = _deck(
    non_dealer="4c 5c 6c Ad 2d 3d 4h 5h 6h Kd",
    dealer="9c Tc Jc 7d 8d 9d Th Jh Qh Ks",
    upcard="3c",
    stock="7s",
)

_PASS, _STOCK, _TAKE, _PILE = Move.pass_(), Move.stock(), Move.take(), Move.pile()


def _game(
    deck: Sequence[Card],
    rules: Rules | None = None,
    first_dealer: int = 1,
    roles: Roles | None = None,
    moves: Sequence[Move] = (),
) -> Game:
    """A game with one hand dealt from ``deck`` and ``moves`` played in it. With the default
    ``first_dealer=1`` the non-dealer is seat 0 = player 0."""
    game = Game(rules or Rules(), first_dealer, roles)
    game.deal(deck)
    for move in moves:
        game.apply(move)
    return game


def _drawn(game: Game) -> Card:
    """The card the last turn drew (the referee knows every card)."""
    assert game.hand is not None
    card = game.hand.history[-1].card
    assert card is not None
    return card


def _judge(game: Game, view: GameView, move: Move) -> None:
    """Raise ``_Fail`` unless ``move`` is legal for the seat of ``view`` (the player to move;
    the captain, for the sitter's advice) in ``game``."""
    plain = Move(move.kind, move.card)
    trial = copy.deepcopy(game)
    try:
        trial.apply(move)
    except IllegalMoveError as exc:
        raise _Fail(f"illegal reply 'move {move}': {exc}") from None
    if plain not in view.hand.legal_moves():
        legal = ", ".join(str(m) for m in view.hand.legal_moves())
        raise _Fail(f"illegal reply 'move {move}' (legal: {legal})")


# ==========================================================================================
# The session: one engine process at a time, with a transcript per check


class _Session:
    """The engine under test, started on demand and restarted after a failed check."""

    def __init__(
        self,
        spec: EngineSpec,
        move_timeout: float,
        startup_timeout: float,
        quit_grace: float,
        time_margin: float = DEFAULT_MARGIN,
    ) -> None:
        self.spec = spec
        self.move_timeout = move_timeout
        self.startup_timeout = startup_timeout
        self.quit_grace = quit_grace
        self.control = TimeControl(
            base=None, increment=0.0, move=move_timeout, margin=time_margin
        )
        self.lines: list[str] = []
        self.player = EnginePlayer(
            spec, self.control, startup_timeout, on_line=self.hook, quit_grace=quit_grace
        )
        self.games = 0
        self.start_failures = 0
        self.broken: str | None = None  # why no check can run any more
        # The process the current check has talked to: if it dies, the check fails.
        self.in_check: _Process | None = None

    def hook(self, direction: str, line: str) -> None:
        arrow = {"to": ">", "from": "<"}.get(direction, "!")
        self.lines.append(f"{arrow} {line}")

    # -- the process ------------------------------------------------------------------------
    def ensure(self) -> _Process:
        """The running engine process, started (handshake and options included) if need be."""
        if self.broken is not None:
            raise _Fail(f"not run: {self.broken}")
        if not self.player.alive and self.in_check is not None:
            # The process this check was talking to has gone: a failure of this check, never
            # a silent fresh start (which made the verdict hang on how fast the engine died).
            raise _Fail(f"the engine failed: {self.in_check.exit_error()}")
        if not self.player.alive:
            try:
                self.player.start()
            except PlayerFault as fault:
                self.start_failures += 1
                if self.start_failures >= 2:
                    self.broken = f"the engine does not start ({fault.kind}: {fault.detail})"
                raise
            self.start_failures = 0
        process = self.player.process
        assert isinstance(process, EngineProcess | RemoteTransport), "a real engine, or remote"
        self.in_check = process
        return process

    def restart(self) -> None:
        """Close the engine so that the next check starts from a fresh process."""
        self.player.close()

    def close(self) -> None:
        self.player.close()

    # -- decisions as in a match -----------------------------------------------------------
    def decide(self, game: Game, player: int, decision: Decision | None = None,
               advice: Move | None = None) -> tuple[Move, GameView]:
        """Ask ``player`` for its decision in ``game``, as a match would (``newgame``,
        ``isready``, ``position``, ``go``); raise ``_Fail`` unless the reply is legal."""
        self.ensure()
        view = game.view(player)
        if advice is not None:
            view = dataclasses.replace(view, advice=advice)
        if decision is None:
            decision = Decision(view.hand.phase.value)
        self.games += 1
        self.player.new_game(self.games, player, game.rules)
        move = self.player.decide(view, decision)
        _judge(game, view, move)
        self.settle(f"after 'move {move}'")
        return move, view

    def play(self, game: Game, player: int, decision: Decision | None = None) -> Move:
        """``decide``, then play the move in ``game``."""
        move, _ = self.decide(game, player, decision)
        game.apply(move)
        return move

    # -- raw lines -------------------------------------------------------------------------
    def send(self, line: str) -> None:
        process = self.ensure()
        try:
            process.send(line)
        except EngineError as exc:
            raise _Fail(f"cannot send to the engine: {exc}") from None

    def settle(self, after: str) -> None:
        """``isready`` and its ``readyok``: a ``move`` line before it is one reply too many."""
        self.send(str(proto.IsReady()))
        self.await_ready(after)

    def await_ready(self, after: str) -> None:
        """Wait for ``readyok`` (the ``isready`` was sent); any ``move`` first is a failure."""
        process = self.ensure()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            line = self._read(process, deadline, f"no {proto.READYOK} within "
                              f"{self.startup_timeout:g}s {after}")
            message = _parse(line)
            if isinstance(message, proto.ReadyOk):
                return
            if isinstance(message, proto.MoveReply):
                raise _Fail(f"sent {line[:200]!r} {after}, when no {proto.GO} was pending")

    def await_move(self, what: str) -> Move:
        """Wait for the ``move`` line answering the ``go`` just sent."""
        process = self.ensure()
        deadline = time.monotonic() + self.move_timeout + self.control.margin
        while True:
            line = self._read(process, deadline, f"no {proto.MOVE} within "
                              f"{self.move_timeout:g}s {what}")
            try:
                move = proto.parse_reply(line)
            except proto.ProtocolError as exc:
                raise _Fail(f"malformed reply {line[:200]!r}: {exc}") from None
            if move is not None:
                return move

    def _read(self, process: _Process, deadline: float, late: str) -> str:
        try:
            return process.read_line(max(deadline - time.monotonic(), 0.0))
        except EngineTimeout:
            raise _Fail(late) from None
        except EngineError as exc:
            raise _Fail(f"the engine failed: {exc}") from None

    def go(self, decision: Decision, extra: str = "") -> str:
        # A game clock too, as in a match: an engine must read past the clock fields.
        move_ms = int(self.move_timeout * 1000)
        clock_ms = min(20 * move_ms, proto.MAX_NUMBER)
        line = str(proto.Go(decision, time=clock_ms, inc=move_ms // 10, movetime=move_ms))
        return f"{line} {extra}".rstrip()


def _with_stderr(exc: EngineError, process: _Process) -> str:
    """The error, with the end of the engine's standard error once it has all arrived."""
    process.close(grace=0.0)
    tail = process.stderr_tail.strip()
    note = process.sandbox_note()  # the sandbox hid a path it needs, and how to show it
    text = str(exc) if note in str(exc) else f"{exc}{note}"
    if not tail or "stderr ends:" in text:
        return text
    return f"{text}; its stderr ends: {' | '.join(tail.splitlines()[-3:])[-300:]!r}"


def _parse(line: str) -> proto.EngineMessage | None:
    try:
        return proto.parse_engine_line(line)
    except proto.ProtocolError:
        return None


# ==========================================================================================
# The checks

Check = Callable[[_Session], str]
"""A check drives the session and returns a note for a pass, or raises ``_Fail`` /
``PlayerFault``."""


def _check_handshake(s: _Session) -> str:
    """``gin`` -> ``id name``, well-formed ``option`` lines, ``ginok`` of our version, in time.
    Run on a process of its own with raw lines, because ``EnginePlayer`` (rightly, in a match)
    ignores malformed ``id`` and ``option`` lines."""
    started = time.monotonic()
    env = dict(s.spec.env)
    remote = s.spec.remote
    problem = None if remote is not None else command_problem(s.spec.argv, s.spec.cwd, env)
    if problem is not None:
        s.broken = "the engine cannot be started"
        raise _Fail(problem)

    def hint(heard: bool, timed_out: bool) -> str:
        if remote is not None:  # its program runs on its author's machine
            return ""
        argv, cwd = s.spec.argv, s.spec.cwd
        return start_hint(argv, process.stderr_tail, heard, timed_out=timed_out, cwd=cwd, env=env)

    process: _Process
    try:
        if remote is not None:
            process = connect_remote(remote, on_line=s.hook)
        else:
            process = EngineProcess.start(
                list(s.spec.argv),
                cwd=s.spec.cwd,
                env=dict(s.spec.env),
                name=s.spec.label,
                on_line=s.hook,
                sandbox=s.spec.policy,
            )
    except EngineError as exc:
        s.broken = "the engine cannot be started"
        hinted = "" if remote is not None else builtin_hint(s.spec)
        raise _Fail(f"cannot start: {exc}{hinted}") from None
    try:
        try:
            process.send(str(proto.Gin()))
        except EngineError as exc:
            s.broken = "the handshake failed"
            text = _with_stderr(exc, process)
            raise _Fail(f"cannot send {proto.GIN}: {text}{hint(False, False)}") from None
        deadline = started + s.startup_timeout
        name, options, problems = _handshake_replies(s, process, deadline, hint)
        elapsed = time.monotonic() - started
        if name is None:
            problems.insert(0, f"no '{proto.ID} {proto.NAME}' line before {proto.GINOK}")
        if problems:
            raise _Fail("; ".join(problems))
        return f"{name!r}, {plural(options, 'option')}, {proto.GINOK} after {elapsed:.2f}s"
    finally:
        process.close(grace=s.quit_grace, quit_line=str(proto.Quit()))


def _handshake_replies(
    s: _Session, process: _Process, deadline: float, hint: Callable[[bool, bool], str]
) -> tuple[str | None, int, list[str]]:
    """The engine's lines after ``gin``, up to its ``ginok``: the name it gave, how many
    options it declared and the problems seen. ``hint(heard, timed_out)`` says what may be
    wrong when the engine fails or times out (``heard``: it sent a line)."""
    heard = False
    name: str | None = None
    options = 0
    problems: list[str] = []
    while True:
        try:
            line = process.read_line(max(deadline - time.monotonic(), 0.0))
            heard = True
        except EngineTimeout:
            s.broken = "the handshake failed"
            raise _Fail(
                f"no {proto.GINOK} within {s.startup_timeout:g}s{hint(heard, True)}"
            ) from None
        except EngineError as exc:
            s.broken = "the handshake failed"
            text = _with_stderr(exc, process)
            raise _Fail(
                f"the engine failed during the handshake: {text}{hint(heard, False)}"
            ) from None
        try:
            message = proto.parse_engine_line(line)
        except proto.ProtocolError as exc:
            if exc.keyword == proto.GINOK:
                s.broken = "the handshake failed"
                raise _Fail(f"malformed {line[:200]!r}: {exc}") from None
            problems.append(f"malformed {line[:200]!r}: {exc}")
            continue
        if isinstance(message, proto.GinOk):
            if message.protocol != proto.PROTOCOL_VERSION:
                s.broken = "the handshake failed"
                raise _Fail(
                    f"{proto.GINOK} {proto.PROTOCOL} {message.protocol}: the referee "
                    f"speaks version {proto.PROTOCOL_VERSION}"
                )
            return name, options, problems
        if isinstance(message, proto.Id) and message.key == proto.NAME:
            name = printable(message.value, ID_LIMIT)
        elif isinstance(message, proto.OptionDecl):
            options += 1
        elif isinstance(message, proto.MoveReply):
            problems.append(f"sent {line[:200]!r} during the handshake")


def _check_options(s: _Session) -> str:
    """Every declared option set to its default (then the ``-o`` values again), and
    ``readyok`` after; every ``-o`` option must be declared and its value valid for it."""
    s.ensure()  # the handshake sets the -o options and pings, as in a match
    declared = {o.name.lower(): o for o in s.player.id.options}
    for name, value in s.spec.options:
        problem = option_problem(name, value, s.player.id.options)
        if problem is not None:
            raise _Fail(problem)
    for option in s.player.id.options:
        s.send(str(proto.SetOption(option.name, option.default)))
    for name, value in s.spec.options:
        s.send(str(proto.SetOption(name, value)))
    s.settle(f"after {proto.SETOPTION}")
    return f"{len(declared)} declared"


def _check_isready(s: _Session) -> str:
    s.ensure()
    started = time.monotonic()
    s.player.ping()
    return f"{proto.READYOK} after {time.monotonic() - started:.3f}s"


def _check_isready_in_play(s: _Session) -> str:
    """``isready`` between a ``position`` and its ``go``, and between two decisions."""
    game = _game(_PLAIN, moves=[_PASS, _PASS])
    for decision in (Decision.DRAW, Decision.DISCARD):
        view = game.view(0)
        s.send(str(proto.Position(view)))
        s.send(str(proto.IsReady()))
        s.await_ready(f"between {proto.POSITION} and {proto.GO}")
        s.send(s.go(decision))
        move = s.await_move(f"for {proto.GO} {decision}")
        _judge(game, view, move)
        game.apply(move)
        s.settle(f"between two decisions, after 'move {move}'")
    return ""


_UNKNOWN_LINE = "frobnicate the deck 42"
_UNKNOWN_FIELD = "futurefield 7"
_UNKNOWN_PARAM = "future_rule=on"


def _check_unknown_lines(s: _Session) -> str:
    """An unknown command, an unknown field first in ``position``, an unknown rule parameter
    and an unknown field in ``go`` must change nothing."""
    s.send(_UNKNOWN_LINE)
    s.settle(f"after the unknown line {_UNKNOWN_LINE!r}")
    game = _game(_PLAIN, moves=[_PASS, _PASS, _STOCK])
    view = game.view(0)
    word, rest = str(proto.Position(view)).split(" ", 1)
    s.send(f"{word} {_UNKNOWN_FIELD} {rest} {_UNKNOWN_PARAM}")
    s.send(s.go(Decision.DISCARD, _UNKNOWN_FIELD))
    move = s.await_move("for a position and go with unknown fields")
    _judge(game, view, move)
    s.settle(f"after 'move {move}'")
    return ""


def _check_offer_non_dealer(s: _Session) -> str:
    move, _ = s.decide(_game(_PLAIN), 0)
    return f"it chose {move}"


def _check_offer_dealer(s: _Session) -> str:
    move, _ = s.decide(_game(_PLAIN, moves=[_PASS]), 1)
    return f"it chose {move}"


def _check_draw(s: _Session) -> str:
    game = _game(_PLAIN, moves=[_PASS, _PASS, _STOCK])
    game.apply(Move.discard(_drawn(game)))
    move, _ = s.decide(game, 1)
    return f"it chose {move}"


def _check_draw_stock_only(s: _Session) -> str:
    s.decide(_game(_PLAIN, moves=[_PASS, _PASS]), 0)
    return ""


def _check_discard(s: _Session) -> str:
    move, _ = s.decide(_game(_PLAIN, moves=[_PASS, _PASS, _STOCK]), 0)
    return f"it chose {move}"


def _knocked(move: Move, gin: bool = False) -> str:
    if move.kind is MoveKind.KNOCK:
        return f"it {'went gin' if gin else 'knocked'}: {move}"
    return f"it did not knock: {move}"


def _check_knock(s: _Session) -> str:
    move, _ = s.decide(_game(_KNOCK, moves=[_PASS, _PASS, _STOCK]), 0)
    return _knocked(move)


def _check_gin(s: _Session) -> str:
    move, _ = s.decide(_game(_GIN, moves=[_PASS, _PASS, _STOCK]), 0)
    return _knocked(move, gin=True)


def _check_stock_three(s: _Session) -> str:
    """The last draw before a drawn hand (three cards in the stock), then its discard."""
    game = _game(_PLAIN, moves=[_PASS, _PASS])
    assert game.hand is not None
    while game.hand.stock_count > 3:
        game.apply(_STOCK)
        game.apply(Move.discard(_drawn(game)))
    mover = game.seats[game.hand.to_move]
    s.play(game, mover, Decision.DRAW)
    stock = game.hand.stock_count
    move = s.play(game, mover, Decision.DISCARD)
    return f"{move} with {plural(stock, 'card')} left in the stock"


def _check_pile_card(s: _Session) -> str:
    """After taking the first upcard, and after drawing from the pile, the card taken must
    not go back (``discard_taken=false``); each time it is the engine's worst card."""
    for game, player in (
        (_game(_PLAIN, moves=[_TAKE]), 0),
        (_game(_PLAIN, moves=[_PASS, _PASS, _STOCK, Move.discard(_KING), _PILE]), 1),
    ):
        assert game.hand is not None
        taken = game.hand.taken
        try:
            s.decide(game, player)
        except _Fail as failure:
            raise _Fail(f"with {taken} just taken from the pile: {failure}") from None
    return ""


def _check_oklahoma(s: _Session) -> str:
    rules = Rules(variant=Variant.OKLAHOMA)
    s.decide(_game(_OKLAHOMA, rules), 0)
    game = _game(_OKLAHOMA, rules, moves=[_PASS, _PASS, _STOCK])
    assert game.hand is not None
    limit = game.hand.knock_limit
    try:
        move, _ = s.decide(game, 0)
    except _Fail as failure:
        raise _Fail(f"knock limit {limit}: {failure}") from None
    return f"knock limit {limit}: it chose {move}"


def _check_hollywood(s: _Session) -> str:
    """Three score columns, the first game closed, and the engine as player 1."""
    game = Game(Rules(variant=Variant.HOLLYWOOD), first_dealer=0)
    for player, points in ((1, 60), (0, 18), (1, 45)):
        game.enter(player, points)
    game.deal(_PLAIN)
    s.play(game, 1)  # the offer, to the non-dealer (seat 1)
    assert game.hand is not None
    while game.hand.phase is not Phase.DISCARD:
        mover = game.seats[game.hand.to_move]
        s.play(game, mover)
    s.decide(game, game.seats[game.hand.to_move])
    return ""


_ROLES = Roles(box=0, captain=1, sitter=2)


def _three(moves: Sequence[Move] = ()) -> Game:
    return _game(_PLAIN, Rules(variant=Variant.THREEHANDED), roles=_ROLES, moves=moves)


def _check_advice(s: _Session) -> str:
    """The sitter advises the captain on each kind of decision, and after the captain took
    the upcard (which it must not advise discarding)."""
    sitter = _ROLES.sitter
    given = []
    for moves in ([], [_PASS, _PASS], [_PASS, _PASS, _STOCK], [_TAKE]):
        game = _three(moves)
        move, _ = s.decide(game, sitter, Decision.ADVICE)
        given.append(str(move))
    return f"advised {', '.join(given)}"


def _check_three_player(s: _Session) -> str:
    """The captain's decision with the sitter's advice in its position; the box's decision."""
    s.decide(_three(), _ROLES.captain, advice=_PASS)
    game = _three([_PASS, _PASS, _STOCK])
    s.decide(game, _ROLES.captain, advice=Move.discard(_drawn(game)))
    s.decide(_three([_PASS]), _ROLES.box)
    return ""


def _finished_games() -> tuple[Game, Game, Game]:
    """Three games whose last hand is over: a gin that ends the game (target 10), a knock,
    and a hand drawn when the stock ran low."""
    gin = _game(_GIN, Rules(target=10), moves=[_PASS, _PASS, _STOCK])
    gin.apply(Move.knock(Card.from_str("Kd")))
    knock = _game(_KNOCK, moves=[_PASS, _PASS, _STOCK])
    knock.apply(Move.knock(Card.from_str("Kd")))
    drawn = _game(_PLAIN, moves=[_PASS, _PASS])
    assert drawn.hand is not None
    while drawn.hand is not None:
        drawn.apply(_STOCK)
        drawn.apply(Move.discard(_drawn(drawn)))
    return gin, knock, drawn


def _check_information(s: _Session) -> str:
    """``handover`` (gin, knock, drawn hand), ``gameover``, ``matchscore`` and ``matchover``
    get no reply, and the engine still answers ``isready`` and a decision afterwards."""
    gin, knock, drawn = _finished_games()
    lines = [str(proto.HandOver(0, g.entries[-1])) for g in (gin, knock, drawn)]
    forfeited = _game(_PLAIN)
    forfeited.forfeit(1)
    lines += [
        str(proto.GameOver.of(0, gin)),
        str(proto.GameOver.of(0, forfeited, Fault(1, FaultKind.TIMEOUT, "no move", 1))),
        str(proto.MatchScore(1, 1, 0, 0)),
        str(proto.MatchOver(2, 1, 1, 0)),
    ]
    for line in lines:
        s.send(line)
    s.settle("after the information lines")
    s.send(str(proto.NewMatch()))
    s.decide(_game(_PLAIN, moves=[_PASS, _PASS, _STOCK]), 0)
    return ""


def _check_quit(s: _Session) -> str:
    process = s.ensure()
    started = time.monotonic()
    try:
        process.send(str(proto.Quit()))
    except EngineError as exc:
        raise _Fail(f"cannot send {proto.QUIT}: {exc}") from None
    deadline = started + s.quit_grace
    while process.returncode is None and time.monotonic() < deadline:
        time.sleep(0.005)
    code = process.returncode
    s.close()
    if code is None:
        raise _Fail(f"still running {s.quit_grace:g}s after {proto.QUIT}")
    note = f"exited after {time.monotonic() - started:.2f}s"
    return note if code == 0 else f"{note} with exit code {code}"


CHECKS: tuple[tuple[str, Check], ...] = (
    ("handshake", _check_handshake),
    ("options", _check_options),
    ("isready", _check_isready),
    ("isready-in-play", _check_isready_in_play),
    ("unknown-lines", _check_unknown_lines),
    ("offer-non-dealer", _check_offer_non_dealer),
    ("offer-dealer", _check_offer_dealer),
    ("draw", _check_draw),
    ("draw-stock-only", _check_draw_stock_only),
    ("discard", _check_discard),
    ("knock", _check_knock),
    ("gin", _check_gin),
    ("stock-three", _check_stock_three),
    ("pile-card", _check_pile_card),
    ("oklahoma", _check_oklahoma),
    ("hollywood", _check_hollywood),
    ("advice", _check_advice),
    ("three-player", _check_three_player),
    ("information", _check_information),
    ("quit", _check_quit),
)
"""The battery, in the order it runs: each check's name and its function."""


def run_checks(
    spec: EngineSpec,
    move_timeout: float = 5.0,
    startup_timeout: float = 10.0,
    quit_grace: float = 5.0,
    time_margin: float = DEFAULT_MARGIN,
    on_result: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run the whole battery against the engine ``spec`` and return one result per check
    run. The battery stops at an engine that cannot be started (or fails its handshake):
    the checks after it are not run, and have no result.

    ``move_timeout`` is the limit for each decision, ``startup_timeout`` for the handshake and
    every ``isready``, ``quit_grace`` how long the engine may take to exit after ``quit`` (time
    enough for an interpreter with large libraries to unwind on a busy machine; it says how
    long it took), ``time_margin`` the grace on each decision's limit, as in a match.
    ``on_result`` is called with each result as soon as its check is done.
    Engine faults are results, never exceptions; the engine is always stopped at the end
    (after a Ctrl-C too).
    """
    session = _Session(spec, move_timeout, startup_timeout, quit_grace, time_margin)
    results = []
    try:
        for name, check in CHECKS:
            session.lines = []
            session.in_check = None
            if session.broken is not None:
                break  # the rest cannot run: `not_run` says how many, and why
            try:
                note = check(session)
            except _Fail as failure:
                ok, detail = False, str(failure)
            except PlayerFault as fault:
                ok, detail = False, f"{fault.kind}: {fault.detail}"
            except EngineError as exc:  # raw lines the checks send, should one slip through
                ok, detail = False, f"the engine failed: {exc}"
            else:
                ok, detail = True, note
            if not ok:
                session.restart()
            log.info("check %s: %s %s", name, "pass" if ok else "FAIL", detail)
            results.append(CheckResult(name, ok, detail, tuple(session.lines)))
            if on_result is not None:
                on_result(results[-1])
    finally:
        session.close()
    return results
