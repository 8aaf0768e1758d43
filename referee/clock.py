"""Time control: a per-game clock (base + increment) and a per-decision limit.

A decision's time is charged in full to the game clock, overdraft included: a clock that went
below zero stays below zero, and the next decision's budget shrinks by as much. A player is
flagged when its clock goes below minus the margin (``TimeControl.margin``, 0.1 s unless
``--time-margin`` says otherwise), which absorbs pipe latency and scheduling noise but never
adds up from one decision to the next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

DEFAULT_MARGIN: Final = 0.1
"""Seconds of grace on every time limit unless ``--time-margin`` says otherwise."""


class TimeControlError(ValueError):
    """A time control's text form is malformed."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """``base`` seconds per game plus ``increment`` after each decision, and at most
    ``move`` seconds for any one decision. ``margin`` is the grace allowed on top of both,
    for pipe latency and scheduling noise. ``base=None`` means no game clock."""

    base: float | None = 120.0
    increment: float = 1.0
    move: float = 10.0
    margin: float = DEFAULT_MARGIN

    @classmethod
    def parse(cls, text: str, move: float = 10.0, margin: float = DEFAULT_MARGIN) -> TimeControl:
        """Parse ``BASE+INC`` or ``BASE`` in seconds (``60+0.5``), or ``inf`` for no game clock."""
        text = text.strip()
        if text in ("inf", "none", "0"):
            return cls(None, 0.0, move, margin)
        m = re.fullmatch(r"(\d+(?:\.\d*)?)(?:\+(\d+(?:\.\d*)?))?", text)
        if not m:
            raise TimeControlError(
                f"time control must be BASE+INC in seconds (e.g. 60+0.5), not {text!r}"
            )
        base, inc = float(m.group(1)), float(m.group(2) or 0.0)
        if base <= 0:
            raise TimeControlError("the base time must be positive")
        return cls(base, inc, move, margin)

    def __str__(self) -> str:
        base = "inf" if self.base is None else f"{self.base:g}+{self.increment:g}"
        return f"{base}/move {self.move:g}"


class Clock:
    """One player's clock in one game. Times are in seconds; the caller measures them."""

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.remaining: float | None = control.base

    def budget(self) -> float:
        """How long the player may think on the next decision, margin included: the
        per-move limit, or less if the game clock (overdraft counted) has less left."""
        limit = self.control.move
        if self.remaining is not None:
            limit = min(limit, self.remaining)
        return max(limit + self.control.margin, 0.0)

    def spend(self, elapsed: float) -> str | None:
        """Charge a decision. Returns ``"flag"`` if the game clock ran out, ``"timeout"`` if
        the decision took longer than the per-move limit, else ``None``."""
        margin = self.control.margin
        if self.remaining is not None:
            self.remaining -= elapsed
            if self.remaining < -margin:
                return "flag"
            self.remaining += self.control.increment  # an overdraft within the margin counts
        if elapsed > self.control.move + margin:
            return "timeout"
        return None
