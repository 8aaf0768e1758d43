"""A scripted engine, in memory: a ``referee.seat.transport.Transport`` that expects the
referee's lines one by one and answers each with lines of its own, as python-chess's
``MockTransport`` does for its engine protocol.

    engine = ScriptedTransport().handshake(["id name Bot"]).expect("position").expect(
        "go", ["move pass"]
    )
    player = seat(engine)

An expected line matches the line sent when it is the same, or its first words
(``"position"`` matches any position line). A line sent that the script does not expect fails
the test at once, naming both, and `ScriptedTransport.done` checks that every expected line
came. Nothing here waits: a read with no answer waiting is a timeout at once, the way a
silent engine ends, and ``exit(code)`` ends the engine after its answers, as a crash does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from ginproto import protocol as proto
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from referee.seat.process import EngineBrokenPipe, EngineExited, EngineTimeout, LineHook

CONTROL = TimeControl(None, 0.0, 5.0)
SPEC = EngineSpec(("scripted-bot",))


class ScriptedTransport:
    """One scripted engine: its expected lines, each with its answer, in order."""

    def __init__(self, name: str = "scripted-bot") -> None:
        self.name = name
        self.script: deque[tuple[str, list[str], int | None]] = deque()
        self.waiting: deque[str] = deque()  # answers written, not yet read
        self.sent: list[str] = []  # every line the referee sent, in order
        self.returncode: int | None = None
        self.stderr_tail = ""
        self.stderr_error: OSError | None = None
        self.closed = False
        self.on_line: LineHook | None = None

    # -- the script ------------------------------------------------------------------------
    def expect(
        self, line: str, answers: Sequence[str] = (), *, exit: int | None = None
    ) -> ScriptedTransport:
        """Expect ``line`` next (or a line that starts with its words); answer ``answers``;
        with ``exit``, end with that code after them."""
        self.script.append((line, list(answers), exit))
        return self

    def handshake(
        self, lines: Sequence[str] = (), options: Sequence[tuple[str, str]] = ()
    ) -> ScriptedTransport:
        """The usual start: ``gin`` answered with ``lines`` and ``ginok``, then ``setoption``
        for each of ``options``, ``isready`` and ``newmatch``."""
        self.expect(str(proto.Gin()), [*lines, f"ginok protocol {proto.PROTOCOL_VERSION}"])
        for name, value in options:
            self.expect(str(proto.SetOption(name, value)))
        return self.expect("isready", ["readyok"]).expect("newmatch")

    def say(self, *lines: str) -> ScriptedTransport:
        """Lines the engine writes now, unasked (out of turn)."""
        self.waiting.extend(lines)
        return self

    def done(self) -> None:
        """Every expected line was sent."""
        assert not self.script, f"never sent: {[line for line, _, _ in self.script]}"

    # -- the transport ---------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return not self.closed and self.returncode is None

    def send(self, line: str, timeout: float = 5.0) -> None:
        if self.returncode is not None:
            raise EngineBrokenPipe("its input is closed", name=self.name)
        self.sent.append(line)
        if self.on_line is not None:
            self.on_line("to", line)
        assert self.script, f"{self.name} expected no more lines, but was sent {line!r}"
        expected, answers, code = self.script.popleft()
        assert line == expected or line.startswith(expected + " "), (
            f"{self.name} expected {expected!r}, but was sent {line!r}"
        )
        self.waiting.extend(answers)
        if code is not None:
            self.returncode = code

    def send_lines(self, lines: Sequence[str], timeout: float = 5.0) -> None:
        for line in lines:
            self.send(line, timeout)

    def read_line(self, timeout: float) -> str:
        if self.waiting:
            line = self.waiting.popleft()
            if self.on_line is not None:
                self.on_line("from", line)
            return line
        if self.returncode is not None:
            raise EngineExited(
                f"engine {self.name!r} exited with code {self.returncode}",
                name=self.name,
                returncode=self.returncode,
            )
        raise EngineTimeout(f"engine {self.name!r} wrote nothing", name=self.name)

    def ready(self) -> bool:
        return bool(self.waiting) or self.returncode is not None

    def close(self, grace: float = 1.0, quit_line: str | None = None) -> None:
        if self.alive and quit_line is not None:
            self.sent.append(quit_line)
        self.closed = True


def seat(
    *engines: ScriptedTransport,
    spec: EngineSpec = SPEC,
    control: TimeControl = CONTROL,
    startup_timeout: float = 5.0,
    on_line: LineHook | None = None,
) -> EnginePlayer:
    """A seat connected to ``engines``: the first when it starts, the next when it restarts."""
    queue = deque(engines)

    def connect(
        spec: EngineSpec, *, stderr_path: str | None, line_limit: int, on_line: LineHook | None
    ) -> ScriptedTransport:
        assert queue, "the seat started its engine once more than scripted"
        engine = queue.popleft()
        engine.on_line = on_line
        return engine

    return EnginePlayer(spec, control, startup_timeout, on_line=on_line, connect=connect)
