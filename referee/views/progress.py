"""Progress on long work: a bar with an ETA on a terminal, one plain line per step when piped."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from ginproto.text import printable


class Progress:
    """Shows ``done / total`` with the elapsed time and an ETA.

    On a terminal the bar is redrawn in place on stderr; otherwise each ``step`` prints one
    line, so logs stay readable. ``quiet`` shows nothing.
    """

    def __init__(
        self, total: int, label: str = "games", stream: TextIO | None = None, quiet: bool = False
    ) -> None:
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.started = time.monotonic()
        self._drawn = False

    def eta(self) -> float | None:
        if not self.done or self.done >= self.total:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done)

    def step(self, text: str = "", note: bool = False, below: Sequence[str] = ()) -> None:
        """One more unit done; ``text`` says what (the plain line shows it). With ``note``
        the text is shown on a terminal too, on a line of its own above the bar; ``below``
        are lines shown under it either way (each escaped: they may be an engine's)."""
        self.done += 1
        if self.quiet:
            return
        if self.tty:
            if note:
                self._clear()
                for line in (printable(text), *(printable(b) for b in below)):
                    print(line, file=self.stream)
            self._draw()
        else:
            eta = self.eta()
            when = f", ETA {_duration(eta)}" if eta is not None else ""
            # ``text`` names engines, whose names are theirs to choose: escaped, never raw.
            line = f"[{self.done}/{self.total}{when}] {printable(text)}".rstrip()
            print(line, file=self.stream)
            for extra in below:
                print(printable(extra), file=self.stream)
            self.stream.flush()

    def _clear(self) -> None:
        """Blank the bar's line, for a line of text in its place."""
        if self._drawn:
            width = shutil.get_terminal_size((80, 20)).columns
            self.stream.write("\r" + " " * max(0, width - 1) + "\r")

    def _draw(self) -> None:
        width = max(10, min(40, shutil.get_terminal_size((80, 20)).columns - 45))
        filled = int(width * self.done / self.total) if self.total else width
        eta = self.eta()
        elapsed = time.monotonic() - self.started
        tail = f"ETA {_duration(eta)}" if eta is not None else f"{_duration(elapsed)}"
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} {self.label}  {tail}   ")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
