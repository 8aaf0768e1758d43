"""The seam under the engine protocol: what a seat (``referee.seat.player.EnginePlayer``) needs
of the pipe to its engine, and nothing of how that pipe is made.

A transport carries lines: ``send`` and ``send_lines`` write them, ``read_line`` waits up to a
timeout for the next one, ``ready`` says whether one is waiting, ``close`` ends the engine
(after a ``quit`` line and a grace period). It reports what went wrong with the exceptions of
``referee.seat.process``: ``EngineTimeout`` when nothing came in time, ``EngineExited`` when the
engine is gone (``returncode`` says how), ``EngineLineTooLong``, ``EngineBrokenPipe`` when it no
longer reads; the seat turns each into a ruling. ``referee.seat.process.EngineProcess``, an
untrusted process in its sandbox, is the one transport a match uses; a test gives the seat a
scripted one instead (``tests/transport.py``), so that the protocol exchange is tested without
a process, as python-chess tests its engine protocol on a mock transport.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["Transport"]


class Transport(Protocol):
    """The lines to and from one engine."""

    @property
    def alive(self) -> bool:
        """Whether the engine is still there to talk to."""
        ...

    @property
    def returncode(self) -> int | None:
        """How the engine ended (negative: by a signal), or None while it runs."""
        ...

    @property
    def stderr_tail(self) -> str:
        """The end of what it wrote on stderr, for messages."""
        ...

    @property
    def stderr_error(self) -> OSError | None:
        """Why its stderr could not be kept where asked (the referee's failure), if it could
        not."""
        ...

    def send(self, line: str, timeout: float = 5.0) -> None:
        """Write one line (``EngineBrokenPipe``, ``EngineTimeout``...)."""
        ...

    def send_lines(self, lines: Sequence[str], timeout: float = 5.0) -> None:
        """Write lines in one go."""
        ...

    def read_line(self, timeout: float) -> str:
        """The next line the engine wrote, waiting up to ``timeout`` seconds."""
        ...

    def ready(self) -> bool:
        """Whether a line (or the end) is waiting to be read."""
        ...

    def close(self, grace: float = 1.0, quit_line: str | None = None) -> None:
        """Send ``quit_line``, give the engine ``grace`` seconds, then end it."""
        ...
