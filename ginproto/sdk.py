"""Write a Gin Rummy engine in Python: subclass ``Engine``, answer three decisions, call ``run``.

The SDK does the protocol (spec/PROTOCOL.md) for you: the handshake, ``isready`` at any time,
options, and turning each ``position`` + ``go`` into a call of your method and its ``Move``
into the reply line. It never crashes on a bad referee line: it logs a warning to stderr and
reads on. The same object also plays in process (it is a ``ginproto.table.Player``), so a
bot can be tuned in a fast simulation and then run unchanged against other programs.

A complete engine that plays legal moves::

    import random

    from ginproto.sdk import Engine, GameView, Move, Option


    class RandomBot(Engine):
        name = "RandomBot"
        author = "A. Author"
        options = (Option.spin("Seed", default=0, min=0, max=2**31 - 1),)

        def offer(self, view: GameView) -> Move:  # the first upcard: take or pass
            return random.choice(view.hand.legal_moves())

        def draw(self, view: GameView) -> Move:  # stock or pile
            return random.choice(view.hand.legal_moves())

        def discard(self, view: GameView) -> Move:  # discard, knock (or big gin)
            return random.choice(view.hand.legal_moves())


    if __name__ == "__main__":
        RandomBot().run()

``view`` is a ``GameView``: ``view.hand`` holds this seat's cards, the pile (top last), the
first upcard (``view.hand.upcard``, the protocol's ``upcard`` field), the stock count, the
knock limit, the rules and the hand's history as this seat saw it;
``view.totals`` the scores. In the three-player game the captain also finds the sitter's
``view.advice``; the sitter is asked ``advise(view)`` with the captain's view, and by default
answers what it would play itself.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Mapping
from typing import ClassVar, TextIO, TypeVar

from ginproto import protocol
from ginproto.cards import Card
from ginproto.game import Entry, Game, GameView
from ginproto.hand import HandView, Phase
from ginproto.melds import Meld
from ginproto.moves import Move, MoveKind
from ginproto.protocol import (
    GameOver,
    Gin,
    GinOk,
    Go,
    HandOver,
    Id,
    Info,
    IsReady,
    MatchScore,
    MoveReply,
    NewGame,
    NewMatch,
    OptionDecl,
    OptionValue,
    Position,
    ProtocolError,
    Quit,
    ReadyOk,
    SetOption,
    Unknown,
    parse_referee_line,
)
from ginproto.rules import Rules
from ginproto.table import Decision, Fault, FaultKind, PlayerFault

logger = logging.getLogger(__name__)

_M = TypeVar("_M")

Option = OptionDecl
"""An option declaration: ``Option.spin("Seed", default=0, min=0, max=9)``, ``Option.check``,
``Option.combo``, ``Option.string``."""


class Engine:
    """Base class of a Python engine. Override ``offer``, ``draw`` and ``discard``.

    Class attributes: ``name`` and ``author`` (sent as ``id`` lines), an optional ``version``,
    and ``options``, the declared options. Read an option's current typed value with
    ``self.option("Seed")``; ``on_option`` is called when the referee sets one.

    During a decision, ``self.go`` is the ``go`` message with the clock (all ``None`` in
    process).
    """

    name: ClassVar[str] = "unnamed engine"
    author: ClassVar[str] = "unknown"
    version: ClassVar[str | None] = None
    options: ClassVar[tuple[OptionDecl, ...]] = ()

    def __init__(self) -> None:
        self._values: dict[str, OptionValue] = {}
        for decl in self.options:
            self._values[decl.name.lower()] = decl.default_value
        self.go: Go = Go(Decision.OFFER)
        self._position: GameView | None = None
        self._out: TextIO | None = None

    # -- the decisions: override these --------------------------------------------------
    def offer(self, view: GameView) -> Move:
        """The first upcard is offered: ``Move.take()`` or ``Move.pass_()``."""
        raise NotImplementedError(f"{type(self).__name__} must implement offer()")

    def draw(self, view: GameView) -> Move:
        """Draw: ``Move.stock()`` or ``Move.pile()``."""
        raise NotImplementedError(f"{type(self).__name__} must implement draw()")

    def discard(self, view: GameView) -> Move:
        """Discard ``Move.discard(card)``, knock ``Move.knock(card[, melds])``, or big gin."""
        raise NotImplementedError(f"{type(self).__name__} must implement discard()")

    def advise(self, view: GameView) -> Move:
        """Three-player sitter: advise the captain, whose view this is. By default, answer
        what this engine would play in the captain's place."""
        return self._by_phase(view)

    # -- optional hooks -------------------------------------------------------------------
    def on_option(self, name: str, value: OptionValue) -> None:
        """An option was set (``name`` as declared); the value is already in ``option()``."""

    def on_new_match(self, message: NewMatch) -> None:
        """A match starts."""

    def on_new_game(self, message: NewGame) -> None:
        """A game starts; ``message.player`` is this engine's player number."""

    def on_hand_over(self, message: HandOver) -> None:
        """A hand ended: ``message.entry`` shows both hands, the melds, layoffs and points."""

    def on_game_over(self, message: GameOver) -> None:
        """A game ended."""

    def on_match_score(self, message: MatchScore) -> None:
        """The match score after a game (``MatchOver`` when the match has ended)."""

    # -- options --------------------------------------------------------------------------
    def option(self, name: str) -> OptionValue:
        """The current value of a declared option (names are not case sensitive)."""
        return self._values[name.lower()]

    def set_option(self, name: str, text: str | None) -> None:
        """Set a declared option from its text value; ``ProtocolError`` if unknown or bad."""
        for decl in self.options:
            if decl.name.lower() == name.lower():
                value = decl.value_of("" if text is None else text)
                self._values[decl.name.lower()] = value
                self.on_option(decl.name, value)
                return
        known = ", ".join(d.name for d in self.options) or "none"
        raise ProtocolError(f"unknown option {name!r} (declared: {known})")

    # -- the Player protocol (in process) -------------------------------------------------
    def decide(self, view: GameView, decision: Decision) -> Move:
        """Answer one decision in process. An exception in the engine's own code becomes a
        ``PlayerFault`` (a crash), an answer that is not a ``Move`` a malformed reply."""
        self.go = _GO[decision._value_]
        return self._decide(view, decision)

    def hand_over(self, player: int, entry: Entry) -> None:
        self._hook(self.on_hand_over, HandOver(player, entry))

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        try:
            message = GameOver.of(player, game, fault)
        except ValueError as exc:
            logger.warning("game_over for a game that is not over: %s", exc)
            return
        self._hook(self.on_game_over, message)

    def _decide(self, view: GameView, decision: Decision) -> Move:
        try:
            if decision is _ADVICE:
                move = self.advise(view)
            else:  # as _by_phase, one call less on every decision
                phase = view.hand.phase
                if phase is _DISCARD:
                    move = self.discard(view)
                elif phase is _DRAW:
                    move = self.draw(view)
                else:
                    move = self._by_phase(view)
        except PlayerFault:
            raise
        except Exception as exc:
            raise PlayerFault(FaultKind.CRASH, f"{type(exc).__name__}: {exc}") from exc
        if move.__class__ is not Move and not isinstance(move, Move):
            raise PlayerFault(FaultKind.MALFORMED, f"the engine answered {move!r}, not a Move")
        return move

    def _by_phase(self, view: GameView) -> Move:
        phase = view.hand.phase
        if phase is Phase.OFFER:
            return self.offer(view)
        if phase is Phase.DRAW:
            return self.draw(view)
        if phase is Phase.DISCARD:
            return self.discard(view)
        raise ValueError("no decision: the hand is over")

    def _hook(self, hook: Callable[[_M], None], message: _M) -> None:
        try:
            hook(message)
        except Exception:
            logger.exception("%s raised in a hook", self.name)

    # -- the text protocol ----------------------------------------------------------------
    def handshake_lines(self) -> list[str]:
        """The lines that answer ``gin``: ``id`` lines, ``option`` lines, ``ginok``."""
        lines = [Id(protocol.NAME, self.name).format(), Id(protocol.AUTHOR, self.author).format()]
        if self.version is not None:
            lines.append(Id(protocol.VERSION, self.version).format())
        lines += [decl.format() for decl in self.options]
        lines.append(GinOk().format())
        return lines

    def run(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        """Speak the protocol on ``stdin``/``stdout`` (default: the process's) until ``quit``
        or the end of input. Each reply is flushed at once."""
        if stdin is None:
            stdin = _utf8(sys.stdin, None)
        if stdout is None:
            stdout = _utf8(sys.stdout, "\n")
        try:
            while True:
                line = stdin.readline()
                if not line:
                    return
                if not self.handle(line, stdout):
                    return
        except BrokenPipeError:
            return  # the referee has gone; nothing to answer

    def handle(self, line: str, stdout: TextIO) -> bool:
        """Act on one referee line, writing any answer to ``stdout``. Returns ``False`` on
        ``quit``. Bad referee lines are logged and ignored; the engine's own exceptions in a
        decision propagate, so a broken engine stops (the referee rules it a crash)."""
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("%s << %s", self.name, line.rstrip("\n"))
        self._out = stdout
        try:
            message = parse_referee_line(line)
        except ProtocolError as exc:
            if exc.keyword == protocol.GO and self._position is not None:
                # A go the engine cannot read (a decision word of a later version, say) is
                # still answered, as for the phase of the latest position (spec 5.7).
                logger.warning("answering an unreadable go from the position's phase: %s", exc)
                phase = self._position.hand.phase
                if phase is not Phase.OVER:
                    self._answer(Go(Decision(phase.value)), stdout)
                return True
            logger.warning("ignoring a bad referee line: %s", exc)
            return True
        if isinstance(message, Position):
            self._position = message.view
        elif isinstance(message, Go):
            self._answer(message, stdout)
        elif isinstance(message, IsReady):
            _write(stdout, ReadyOk().format(), self.name)
        elif isinstance(message, Gin):
            for reply in self.handshake_lines():
                _write(stdout, reply, self.name)
        elif isinstance(message, SetOption):
            try:
                self.set_option(message.name, message.value)
            except ProtocolError as exc:
                logger.warning("ignoring setoption: %s", exc)
        elif isinstance(message, HandOver):
            self._hook(self.on_hand_over, message)
        elif isinstance(message, GameOver):
            self._hook(self.on_game_over, message)
        elif isinstance(message, MatchScore):
            self._hook(self.on_match_score, message)
        elif isinstance(message, NewGame):
            self._hook(self.on_new_game, message)
        elif isinstance(message, NewMatch):
            self._hook(self.on_new_match, message)
        elif isinstance(message, Quit):
            return False
        elif isinstance(message, Unknown) and message.line:
            logger.debug("ignoring an unknown line: %s", message.line)
        return True

    def _answer(self, go: Go, stdout: TextIO) -> None:
        view = self._position
        if view is None:
            logger.warning("ignoring go %s: no position was sent before it", go.decision)
            return
        self._position = None
        if view.hand.phase is Phase.OVER:
            logger.warning("ignoring go %s: the position's hand is over", go.decision)
            return
        self.go = go
        try:
            move = self._decide(view, go.decision)
        except PlayerFault as fault:
            if fault.__cause__ is not None:
                raise fault.__cause__ from None
            raise
        _write(stdout, MoveReply(move).format(), self.name)

    def info(self, text: str) -> None:
        """Send an ``info`` line, free text the referee logs (in process: log at DEBUG)."""
        if self._out is None:
            logger.debug("%s info: %s", self.name, text)
        else:
            _write(self._out, Info(text).format(), self.name)


_ADVICE, _DISCARD, _DRAW = Decision.ADVICE, Phase.DISCARD, Phase.DRAW

# In process there is no clock. Keyed by the value: a member hashes in Python, a string in C.
_GO = {decision.value: Go(decision) for decision in Decision}


def _write(stdout: TextIO, line: str, name: str) -> None:
    logger.debug("%s >> %s", name, line)
    stdout.write(line + "\n")
    stdout.flush()


def _utf8(stream: TextIO, newline: str | None) -> TextIO:
    """The process stream, switched to UTF-8 (and ``newline``) where that is possible."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, OSError):  # already in use: leave it
            reconfigure(encoding="utf-8", errors="replace", newline=newline)
    return stream


def option_values(engine: Engine) -> Mapping[str, OptionValue]:
    """Every declared option of ``engine`` with its current value, by declared name."""
    return {decl.name: engine.option(decl.name) for decl in engine.options}


__all__ = [
    "Card",
    "Decision",
    "Engine",
    "GameOver",
    "GameView",
    "HandOver",
    "HandView",
    "MatchScore",
    "Meld",
    "Move",
    "MoveKind",
    "NewGame",
    "NewMatch",
    "Option",
    "OptionValue",
    "Phase",
    "Rules",
    "option_values",
]
