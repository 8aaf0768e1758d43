"""An engine process as a seat at the table: the protocol spoken over a transport.

The transport (``referee.seat.transport.Transport``) carries the lines; ``EnginePlayer`` makes
one with its ``connect`` factory, by default `spawn`, which starts the engine's process
(``referee.seat.process.EngineProcess``) in its sandbox. A test connects it to a scripted
transport instead, and so tests the protocol exchange without a process.

``EnginePlayer`` satisfies ``ginproto.table.Player``. Everything an engine can do wrong ends
as a ``PlayerFault`` with a reason, which the table turns into a forfeit:

========================================  =========  ==========================================
what happened                             kind       when
========================================  =========  ==========================================
exits, crashes, closes its pipes          crash      at any time
no ``ginok`` / ``readyok`` in time        startup    the handshake, the ``isready`` ping
no ``move`` in time                       timeout    a decision's per-move limit
the game clock runs out                   flag       a decision, with ``--tc``
a ``move`` line that does not parse       malformed  a decision
a line longer than the limit              malformed  a decision
========================================  =========  ==========================================

Lines that are not ``move`` lines while a move is awaited (``info``, unknown words, stray
``readyok``) are logged and ignored, as spec/PROTOCOL.md requires.
"""

from __future__ import annotations

import logging
import os
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from engines import BUILTIN
from ginproto import protocol as proto
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import Decision, Fault, FaultKind, PlayerFault
from ginproto.text import ID_LIMIT, printable
from referee.outputs import reserve_paths
from referee.seat.clock import PlayerClock, TimeControl
from referee.seat.process import (
    EngineBrokenPipe,
    EngineError,
    EngineExited,
    EngineLineTooLong,
    EngineProcess,
    EngineTimeout,
    LineHook,
)
from referee.seat.sandbox import Limits, Policy, SandboxMode, support
from referee.seat.transport import Transport

log = logging.getLogger(__name__)

_REPLIES: dict[str, Move] = {}
"""``move`` lines already read, with their move: the same few hundred lines come back game
after game, and a move is immutable, so each is parsed by the codec once."""
_REPLIES_KEPT = 4096
_LATE_LOOK = 0.05
"""Seconds a launched engine's handshake waits at least, when it comes after the startup
timeout: enough to read the lines already written, bounded however many come."""


class EngineSpecError(ValueError):
    """An engine argument that names no built-in engine and is no usable command line."""


REMOTE = "remote:"


def remote_name(text: str) -> str:
    """The NAME of ``remote:NAME`` (`EngineSpecError` unless it is a plain word, as the
    tokens file's names are)."""
    from referee.seat.tokens import NAME_PATTERN

    name = text.removeprefix(REMOTE)
    if not NAME_PATTERN.fullmatch(name):
        raise EngineSpecError(
            f"{text[:80]!r}: a remote engine's name is letters, digits, '_', '.' and '-' (at"
            " most 64)"
        )
    return name


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """How to start an engine: argv (never run through a shell), working directory,
    options to set, an optional display name overriding its ``id name``, and its sandbox
    (``referee.seat.sandbox``: on where it can run, by default). ``env`` is added to the minimal
    environment every engine gets (``referee.seat.process``)."""

    argv: tuple[str, ...]
    name: str | None = None
    cwd: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    control: TimeControl | None = None  # overrides the match's time control
    env: tuple[tuple[str, str], ...] = ()
    sandbox: Policy = field(default_factory=Policy)

    @classmethod
    def parse(cls, text: str, **kwargs: object) -> EngineSpec:
        """A built-in name (``random``, ``simple``...) or a command line, split as a shell
        would split it (``"node engines/simple.js"``) but never run through one."""
        text = text.strip()
        if text.startswith(REMOTE):
            remote_name(text)  # checked
            return cls((text,), **kwargs)  # type: ignore[arg-type]
        if text in BUILTIN:
            return cls(tuple(BUILTIN[text]), **kwargs)  # type: ignore[arg-type]
        try:
            argv = tuple(shlex.split(text))
        except ValueError as exc:
            raise EngineSpecError(f"cannot split the engine command {text!r}: {exc}") from None
        if not argv:
            raise EngineSpecError("an engine needs a built-in name or a command line")
        return cls(argv, **kwargs)  # type: ignore[arg-type]

    @property
    def remote(self) -> str | None:
        """NAME, for ``remote:NAME`` (an argv of that one word): the engine of the client
        that connects with NAME's token (``referee.seat.remote``); else None."""
        argv = self.argv
        if len(argv) == 1 and argv[0].startswith(REMOTE):
            return argv[0].removeprefix(REMOTE)
        return None

    @property
    def label(self) -> str:
        """A name to show before the engine has said its own."""
        return self.name or self.builtin or os.path.basename(self.argv[0])

    @property
    def builtin(self) -> str | None:
        """The built-in engine this is, if it is one."""
        return next((name for name in BUILTIN if list(self.argv) == BUILTIN[name]), None)

    @property
    def policy(self) -> Policy:
        """The sandbox policy to start it with: a built-in engine run from no folder of its
        own does not see the working directory."""
        if self.builtin is not None and self.cwd is None:
            return replace(self.sandbox, workdir=False)
        return self.sandbox


@dataclass(slots=True)
class EngineId:
    """What the engine said of itself in the handshake."""

    name: str | None = None
    author: str | None = None
    version: str | None = None
    options: list[proto.OptionDecl] = field(default_factory=list)
    protocol: int = proto.PROTOCOL_VERSION


class Connect(Protocol):
    """What makes the transport to an engine: `spawn`, or a test's scripted one."""

    def __call__(
        self,
        spec: EngineSpec,
        *,
        stderr_path: str | None,
        line_limit: int,
        on_line: LineHook | None,
    ) -> Transport: ...


def spawn(
    spec: EngineSpec,
    *,
    stderr_path: str | None = None,
    line_limit: int = 1 << 20,
    on_line: LineHook | None = None,
) -> Transport:
    """Start the engine's process, in its sandbox (``EngineError`` if it cannot start); for a
    remote engine, a session of it through the listener (``referee.seat.remote``)."""
    if spec.remote is not None:
        from referee.seat.remote import connect_remote

        return connect_remote(spec.remote, line_limit=line_limit, on_line=on_line)
    return EngineProcess.start(
        list(spec.argv),
        cwd=spec.cwd,
        env=dict(spec.env),
        name=spec.label,
        stderr_path=stderr_path,
        line_limit=line_limit,
        on_line=on_line,
        sandbox=spec.policy,
    )


class EnginePlayer:
    """One engine, started on first use and restarted after it faults. ``connect`` makes
    the transport to it each time it starts (default: its process, `spawn`)."""

    def __init__(
        self,
        spec: EngineSpec,
        control: TimeControl,
        startup_timeout: float = 10.0,
        stderr_path: str | None = None,
        on_line: LineHook | None = None,
        line_limit: int = 1 << 20,
        quit_grace: float = 1.0,
        connect: Connect = spawn,
    ) -> None:
        self.spec = spec
        self.control = spec.control or control
        if spec.remote is not None:  # its lines cross a network both ways
            from referee.seat.remote import latency_margin

            self.control = replace(self.control, margin=self.control.margin + latency_margin())
        self.startup_timeout = startup_timeout
        self.stderr_path = stderr_path
        self.on_line = on_line
        self.line_limit = line_limit
        self.quit_grace = quit_grace
        self.connect = connect
        self.process: Transport | None = None
        """The transport to the running engine (its process), or None."""
        self.id = EngineId()
        self.clock = PlayerClock(self.control)
        self._pending_game: proto.NewGame | None = None
        self._positions = proto.PositionWriter()  # this engine's position lines, turn by turn
        self.record = [0, 0, 0]  # this process line's games won, lost, drawn
        self.stderr_tail = ""  # the end of the last closed process's stderr, for messages
        self._stderr_error: OSError | None = None
        # When `launch` started the process whose handshake is still to come, and whether
        # its ``gin`` was sent.
        self._launched: float | None = None
        self._gin_sent = False
        self.heard = False
        """Whether the process last started wrote a line on its output (a start that ran
        out of time without one most often means an engine that does not flush)."""

    @property
    def name(self) -> str:
        return self.spec.name or self.id.name or self.spec.label

    @property
    def latency(self) -> str:
        """For a remote engine, the round trips measured to it as a record keeps them
        (``referee.seat.remote``); else ``""``."""
        if self.spec.remote is None:
            return ""
        from referee.seat.remote import latency_header

        return latency_header(self.spec.remote)

    # -- lifetime --------------------------------------------------------------------------
    def launch(self) -> None:
        """Start the process, if none runs, and send it ``gin`` without waiting for the answer:
        the rest of the handshake is left to `start` (or to the first decision). Engines
        launched together load at the same time instead of one after another. The startup
        timeout counts from here, the start of the process (spec/PROTOCOL.md, section 7.1). A
        process that cannot be started is not an error here: `start` tries again and raises
        the fault."""
        if self.process is not None:
            return
        try:
            self.process = self._spawn()
        except PlayerFault:
            return
        self._launched = time.monotonic()
        try:
            self.process.send_lines([str(proto.Gin())])
            self._gin_sent = True
        except EngineError:
            self._gin_sent = False  # `start` sends it again, and rules on what it meets

    def start(self) -> None:
        """Start the process (or take the one `launch` started) and complete the handshake,
        or raise ``PlayerFault``."""
        launched, gin_sent = self._launched, self._gin_sent
        self._launched, self._gin_sent = None, False
        if launched is None:
            self.close()
            self.process = self._spawn()
        self.id = EngineId()
        try:
            if not gin_sent:
                self._send(proto.Gin())
            if launched is None:
                deadline = time.monotonic() + self.startup_timeout
            else:  # the lines it wrote while it waited are read, however late it is asked
                deadline = max(launched + self.startup_timeout, time.monotonic() + _LATE_LOOK)
            while True:
                message = self._read_until(deadline, "ginok")
                if isinstance(message, proto.GinOk):
                    self.id.protocol = message.protocol
                    if message.protocol != proto.PROTOCOL_VERSION:
                        raise PlayerFault(
                            FaultKind.STARTUP,
                            f"speaks protocol {message.protocol}; this referee speaks"
                            f" {proto.PROTOCOL_VERSION}",
                        )
                    break
                if isinstance(message, proto.Id):
                    # What an engine says of itself reaches records and terminals: bounded,
                    # control characters escaped.
                    text = printable(message.value, ID_LIMIT)
                    if message.key == proto.NAME:
                        self.id.name = text
                    elif message.key == proto.AUTHOR:
                        self.id.author = text
                    elif message.key == proto.VERSION:
                        self.id.version = text
                elif isinstance(message, proto.OptionDecl):
                    self.id.options.append(_bounded_option(message))
            for name, value in self.spec.options:
                self._send(proto.SetOption(name, value))
            self.ping()
            self._send(proto.NewMatch())
        except PlayerFault:
            self.close()
            raise

    def _spawn(self) -> Transport:
        self.heard = False
        try:
            return self.connect(
                self.spec,
                stderr_path=self.stderr_path,
                line_limit=self.line_limit,
                on_line=self.on_line,
            )
        except EngineError as exc:
            raise PlayerFault(FaultKind.CRASH, f"cannot start: {exc}") from None

    def ping(self) -> None:
        """``isready`` and wait for ``readyok``; ``PlayerFault`` if it does not come in time."""
        self._send(proto.IsReady())
        deadline = time.monotonic() + self.startup_timeout
        while not isinstance(self._read_until(deadline, "readyok"), proto.ReadyOk):
            pass

    def new_game(self, number: int, player: int, rules: Rules) -> None:
        """Prepare for a game; the engine is started (or pinged) when first asked to move."""
        self.clock = PlayerClock(self.control)
        self._pending_game = proto.NewGame(number, player, rules)

    def finish_match(self) -> None:
        """Tell a live engine the match is over (``matchover``), then close it."""
        w, lost, d = self.record
        self._inform(proto.MatchOver(w + lost + d, w, lost, d))
        self.close()

    def close(self) -> None:
        """``quit``, a grace period, then the whole process group is killed."""
        self._launched, self._gin_sent = None, False
        if self.process is not None:
            self.process.close(grace=self.quit_grace, quit_line=proto.Quit().format())
            self.stderr_tail = self.process.stderr_tail
            self._stderr_error = self._stderr_error or self.process.stderr_error
            self.process = None

    @property
    def stderr_error(self) -> OSError | None:
        """Why the engine's stderr could not be kept in ``stderr_path`` (a referee failure,
        such as a full disk), or ``None``; the first failure of any of its processes."""
        if self._stderr_error is None and self.process is not None:
            return self.process.stderr_error
        return self._stderr_error

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.alive

    def _ensure_ready(self) -> None:
        if self._launched is not None or self.process is None or not self.process.alive:
            self.start()
        if self._pending_game is not None:
            message, self._pending_game = self._pending_game, None
            self.ping()
            self._send(message)

    # -- the table's questions -------------------------------------------------------------
    def decide(self, view: GameView, decision: Decision) -> Move:
        self._ensure_ready()
        process = self.process
        assert process is not None
        clock = self.clock
        control = clock.control
        budget = clock.budget()
        remaining = clock.remaining
        go = proto.Go(
            decision,
            # Never negative (an overdraft still owed reads 0), and a clock that increments
            # have grown past what a line carries reads as the most.
            time=None
            if remaining is None
            else min(max(0, int(remaining * 1000)), proto.MAX_NUMBER),
            inc=None if control.base is None else int(control.increment * 1000),
            movetime=int(control.move * 1000),
        )
        if process.ready():
            self._discard_stale()
        self._send(self._positions.format(view), go)
        started = time.monotonic()
        deadline = started + budget
        left = budget
        ignored: list[str] = []
        while True:
            try:
                if left <= 0:
                    raise EngineTimeout("no move", name=self.name)
                line = process.read_line(left)
            except EngineTimeout:
                elapsed = time.monotonic() - started
                kind = clock.spend(elapsed) or "timeout"
                what = "game clock ran out" if kind == "flag" else "no move"
                detail = f"{what} after {elapsed:.2f}s ({decision})"
                if ignored:
                    detail += f"; ignored lines: {_quote(ignored)}"
                why = _time_reason(kind, decision, elapsed, control, remaining)
                raise PlayerFault(FaultKind(kind), detail, why) from None
            except EngineLineTooLong:
                raise PlayerFault(
                    FaultKind.MALFORMED, f"a line longer than {self.line_limit} bytes"
                ) from None
            except EngineError as exc:
                raise PlayerFault(FaultKind.CRASH, _crash_text(exc), _crash_reason(exc)) from None
            move = _REPLIES.get(line)
            if move is not None:
                break
            try:
                move = proto.parse_reply(line)
            except proto.ProtocolError as exc:
                raise PlayerFault(
                    FaultKind.MALFORMED,
                    f"{_quote([line])}: {exc}",
                    f"sent {_quote([line], 60)} ({exc})",
                ) from None
            if move is not None:
                if len(_REPLIES) >= _REPLIES_KEPT:
                    _REPLIES.clear()
                _REPLIES[line] = move
                break
            log.info("%s: ignored line: %s", self.name, printable(line, 200))
            if len(ignored) < 3:
                ignored.append(line)
            left = deadline - time.monotonic()
        elapsed = time.monotonic() - started
        verdict = clock.spend(elapsed)
        if verdict is not None:
            why = _time_reason(verdict, decision, elapsed, control, remaining)
            raise PlayerFault(
                FaultKind(verdict), f"answered {move} too late", f"answered {move} too late: {why}"
            )
        return move

    def hand_over(self, player: int, entry: Entry) -> None:
        self._inform(proto.HandOver(player, entry))

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        won = game.winner == player
        self.record[0 if won else (2 if game.winner is None else 1)] += 1
        self._inform(proto.GameOver.of(player, game, fault))
        w, lost, d = self.record
        self._inform(proto.MatchScore(w + lost + d, w, lost, d))

    # -- lines -----------------------------------------------------------------------------
    def _discard_stale(self) -> None:
        """Throw away what the engine wrote since its last answer (spec/PROTOCOL.md: a line
        that arrives before a ``go`` is never taken as the answer to it)."""
        process = self.process
        assert process is not None
        while process.ready():
            try:
                line = process.read_line(0)
            except EngineError:
                return  # a dead engine is found out at the next read
            log.info(
                "%s: discarded a line written out of turn: %s", self.name, printable(line, 200)
            )

    def _inform(self, message: object) -> None:
        """Send an information line; an engine that died is found out at its next decision.
        One launched and not yet asked (its handshake to come) is told nothing."""
        if self.process is None or not self.process.alive or self._launched is not None:
            return
        try:
            self.process.send(str(message))
        except EngineError as exc:
            log.info("%s: could not send an information line: %s", self.name, exc)

    def _send(self, *messages: object) -> None:
        assert self.process is not None
        try:
            self.process.send_lines([str(m) for m in messages])
        except EngineBrokenPipe as exc:
            # Its input closed: most often it has exited, and its exit status says more.
            try:
                self.process.read_line(min(self.startup_timeout, 1.0))
            except EngineExited as exited:
                raise PlayerFault(FaultKind.CRASH, str(exited), _crash_reason(exited)) from None
            except EngineError:
                pass
            raise PlayerFault(FaultKind.CRASH, _crash_text(exc), _crash_reason(exc)) from None
        except EngineError as exc:
            raise PlayerFault(FaultKind.CRASH, _crash_text(exc), _crash_reason(exc)) from None

    def _read_until(self, deadline: float, waiting_for: str) -> proto.EngineMessage:
        """The next parsed engine line, or ``PlayerFault`` (startup) at the deadline."""
        assert self.process is not None
        while True:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise EngineTimeout("deadline", name=self.name)
                line = self.process.read_line(left)
                self.heard = True
            except EngineTimeout:
                raise PlayerFault(
                    FaultKind.STARTUP, f"no {waiting_for} within {self.startup_timeout:g}s"
                ) from None
            except EngineLineTooLong:
                raise PlayerFault(
                    FaultKind.MALFORMED, f"a line longer than {self.line_limit} bytes"
                ) from None
            except EngineError as exc:
                raise PlayerFault(
                    FaultKind.CRASH,
                    f"{_crash_text(exc)} while waiting for {waiting_for}",
                    f"{_crash_reason(exc)} while waiting for {waiting_for}",
                ) from None
            try:
                return proto.parse_engine_line(line)
            except proto.ProtocolError as exc:
                log.info(
                    "%s: ignored malformed line %s: %s",
                    self.name,
                    _quote([line]),
                    printable(str(exc), 200),
                )


def _bounded_option(option: proto.OptionDecl) -> proto.OptionDecl:
    """An option declaration with its texts bounded and made printable (``ginproto.text``)."""
    return replace(
        option,
        name=printable(option.name, ID_LIMIT),
        default=printable(option.default, ID_LIMIT),
        vars=tuple(printable(v, ID_LIMIT) for v in option.vars),
    )


def _crash_text(exc: EngineError) -> str:
    if isinstance(exc, EngineExited):
        return str(exc)
    return f"{exc.reason}: {exc}"


def _crash_reason(exc: EngineError) -> str:
    """A crash in a few words: how the process ended (its stderr is added to the ruling once
    the process is closed and all of it has arrived), or what failed."""
    if isinstance(exc, EngineExited):
        return exc.status or "exited"
    if isinstance(exc, EngineBrokenPipe):
        return "stopped reading its input"
    if isinstance(exc, EngineTimeout):
        return "did not read its input"
    return exc.reason


def _time_reason(
    kind: str, decision: Decision, elapsed: float, control: TimeControl, left: float | None
) -> str:
    """Time used against the limit: ``"took 10.12s for its discard decision, limit 10s
    (+0.1s margin)"``, or for a flag the time its clock had left."""
    took = f"took {elapsed:.2f}s for its {decision} decision"
    margin = f"(+{control.margin:g}s margin)"
    if kind == "flag" and left is not None:
        return f"{took}, with {max(left, 0.0):.2f}s left on its clock {margin}"
    return f"{took}, limit {control.move:g}s {margin}"


def _quote(lines: Sequence[str], cut: int = 80) -> str:
    return ", ".join(repr(line[:cut] + ("..." if len(line) > cut else "")) for line in lines)


def sandboxed(
    specs: Sequence[EngineSpec],
    mode: SandboxMode,
    limits: Sequence[Limits] | None = None,
    network: bool = False,
    files: Sequence[str | None] = (),
    folders: Sequence[str | None] = (),
    readable: Sequence[str] = (),
) -> tuple[EngineSpec, ...]:
    """The specs with their sandbox policies. The referee's output ``files`` and
    ``folders`` are created first when the sandbox will run, so that it can hide them;
    ``readable`` paths are shown to every engine (read-only)."""
    hidden: tuple[str, ...] = ()
    if mode is not SandboxMode.OFF and support().available:
        hidden = tuple(reserve_paths(files, folders))
    return tuple(
        replace(
            spec,
            sandbox=Policy(
                mode,
                limits[i] if limits else Limits(),
                network,
                hidden,
                readable=tuple(os.path.abspath(p) for p in readable),
            ),
        )
        for i, spec in enumerate(specs)
    )
