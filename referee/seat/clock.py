"""Time control: a per-game clock (base + increment) and a per-decision limit.

A decision's time is charged in full to the game clock, overdraft included: a clock that went
below zero stays below zero, and the next decision's budget shrinks by as much. A player is
flagged when its clock goes below minus the margin (``TimeControl.margin``, 0.1 s unless
``--time-margin`` says otherwise), which absorbs pipe latency and scheduling noise but never
adds up from one decision to the next.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ginproto.protocol import MAX_NUMBER
from referee.defaults import DEFAULT_MARGIN as DEFAULT_MARGIN  # part of this module's API

MAX_SECONDS = MAX_NUMBER / 1000
"""The longest duration a protocol line can carry: its milliseconds must fit in a number."""


class TimeControlError(ValueError):
    """A time control's text form is malformed, or a duration is not a usable number."""

    setting: str | None = None
    """The setting refused, by its name in a `referee.settings.Clock` (``"tc"``...), when
    known: the command line names its option."""


def duration(value: object, what: str, zero: bool = False) -> float:
    """``value`` as seconds, checked: a finite number, positive (or zero when ``zero``), and
    small enough that its milliseconds fit in a protocol number. Every timeout and clock
    setting, from the command line or a config file, passes through here.

    Raises ``TimeControlError`` naming ``what``.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TimeControlError(f"{what} must be a number of seconds, not {value!r}")
    try:
        seconds = float(value)
    except (ValueError, OverflowError):
        raise TimeControlError(f"{what} must be a number of seconds, not {value!r}") from None
    if not math.isfinite(seconds):
        raise TimeControlError(f"{what} must be a finite number of seconds, not {value!r}")
    if seconds < 0 or (seconds == 0 and not zero):
        bound = "zero or more" if zero else "more than zero"
        raise TimeControlError(f"{what} must be {bound} seconds, not {value!r}")
    if seconds > MAX_SECONDS:
        raise TimeControlError(
            f"{what} is too long: at most {MAX_SECONDS:.0f} seconds, so that its milliseconds"
            f" fit in a protocol number"
        )
    if not zero and seconds < 0.001:
        raise TimeControlError(f"{what} must be at least 0.001 seconds, not {value!r}")
    return seconds


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
        base = duration(m.group(1), "the base time")
        inc = duration(m.group(2) or "0", "the increment", zero=True)
        return cls(base, inc, duration(move, "the move timeout"), margin)

    def __str__(self) -> str:
        base = "inf" if self.base is None else f"{self.base:g}+{self.increment:g}"
        return f"{base}/move {self.move:g}"


class PlayerClock:
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
