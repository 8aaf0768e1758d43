"""Ctrl-C (SIGINT) and SIGTERM for the whole life of ``ginref match`` and ``ginref tournament``.

One handler is installed as the command starts and removed as it ends; what a signal means
follows the run's phase, so that no signal ever falls between two handlers:

- before the games (the engines are checked, say), and, in a match, during them: what it meant
  before the command (``KeyboardInterrupt`` for Ctrl-C), so the run stops at once;
- during a tournament's games: the first one stops the tournament after the games in
  progress, a second one raises ``KeyboardInterrupt``;
- once the games are over (the last one has ended, the results are shown, the live page may
  stay up): the first one is noted, and the command ends with 128 + its number (130 for
  Ctrl-C) as soon as the results are shown, without keeping the page up; the next one is
  noted too (a double press must not cut the standings short), and one more raises
  ``KeyboardInterrupt``.

``wait`` keeps the command (and its live page) up until a signal or a number of seconds,
listening to the same handler.
"""

from __future__ import annotations

import enum
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
POLL = 0.05
"""Seconds between two looks at the flag while waiting: the wait ends this soon after a
signal (the handler only sets a flag; a lock taken in a handler could deadlock the thread)."""


class Phase(enum.Enum):
    BEFORE = "before the games"
    GAMES = "the games"
    OVER = "the games are over"


class Interrupts:
    """The phase of a run and the signals received once its games began (the first one's
    number is ``signum``). Called, it is the tournament's ``stop`` hook: first asked as the
    games begin, it moves the phase to ``GAMES`` and says whether to stop."""

    def __init__(self, defer_first: bool) -> None:
        self.defer_first = defer_first
        self.phase = Phase.BEFORE
        self.signum: int | None = None
        self.stopping = False
        self.repeated = False  # a signal came again once the games were over
        self.previous: dict[int, Any] = {}

    def __call__(self) -> bool:
        if self.phase is Phase.BEFORE:
            self.phase = Phase.GAMES
        return self.stopping

    def over(self) -> None:
        """The last game has ended: a signal from now on ends the command."""
        self.phase = Phase.OVER

    def wait(self, seconds: float | None) -> int | None:
        """Wait until a signal (its number) or for ``seconds`` (None: no end; then None)."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while self.signum is None:
            left = POLL if deadline is None else min(POLL, deadline - time.monotonic())
            if left <= 0:
                return None
            time.sleep(left)
        return self.signum

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.phase is Phase.BEFORE or (self.phase is Phase.GAMES and not self.defer_first):
            self._as_before(signum, frame)
            return
        if self.stopping:
            if self.phase is Phase.OVER and not self.repeated:
                # The results are being shown, and the command ends right after them: a
                # second Ctrl-C (a double press) must not cut the standings short. A third
                # one stops at once all the same (standard output that nobody reads, say).
                self.repeated = True
                return
            raise KeyboardInterrupt
        self.signum = signum
        self.stopping = True
        if self.phase is Phase.GAMES:
            sys.stderr.write(
                "\nStopping after the games in progress (interrupt again to stop at once)...\n"
            )

    def _as_before(self, signum: int, frame: FrameType | None) -> None:
        before = self.previous.get(signum)
        if before is None:  # a handler not installed from Python: the default action
            before = signal.SIG_DFL
        if callable(before):
            before(signum, frame)
        elif before != signal.SIG_IGN:
            signal.signal(signum, before)
            signal.raise_signal(signum)


@contextmanager
def interrupts(defer_first: bool) -> Iterator[Interrupts]:
    """An `Interrupts` whose handler takes SIGINT and SIGTERM for the length of the block
    (only in the main thread, where signals are received; elsewhere nothing is installed)."""
    state = Interrupts(defer_first)
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    for s in SIGNALS:
        state.previous[s] = signal.signal(s, state.handle)
    try:
        yield state
    finally:
        for signum, handler in state.previous.items():
            signal.signal(signum, handler)
