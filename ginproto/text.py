"""Text from outside, made safe to store and to show: bounded, with control characters escaped.

An engine chooses its own ``id name``, ``id version``, option names and every line it writes,
and a record file can hold any text in its quoted strings. Shown raw, such text can clear a
terminal, retitle its window, move the cursor or hide itself behind a carriage return; stored
whole, a 300 KB name makes a record line that no reader accepts. ``printable`` is the one
place where such text is tamed: every character that is not printable (C0 and C1 controls,
DEL, lone surrogates, format characters such as the bidirectional overrides) is shown as an
escape in the manner of Python's ``repr`` (``\\x1b``, ``\\u202e``), and a text longer than a
limit is cut, saying how much was cut. Printable text, including any non-ASCII letter, stays as
it is, and ``printable`` of its own result changes nothing.

The limits below are the referee's: ``ID_LIMIT`` for what an engine says of itself in the
handshake (names, versions, option names and values), ``DETAIL_LIMIT`` for a fault's reason
and ``LOG_LIMIT`` for a line in a log.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DETAIL_LIMIT", "ID_LIMIT", "LOG_LIMIT", "REASON_LIMIT", "printable"]

ID_LIMIT: Final = 100
"""Characters kept of an engine's ``id`` text, option names and option values."""

DETAIL_LIMIT: Final = 1000
"""Characters kept of a fault's reason (which may quote an engine's lines)."""

REASON_LIMIT: Final = 200
"""Characters kept of a fault's reason in a few words, and of each line of an engine's
standard error shown with it."""

LOG_LIMIT: Final = 2000
"""Characters kept of one protocol line in a log."""


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str, limit: int | None = None) -> str:
    """``text`` with every non-printable character escaped, cut to ``limit`` characters.

    A cut text ends with ``...(N more characters)`` and is at most ``limit`` characters long
    with it, so it never passes for the whole text. A space is printable; a tab, a line break
    or an escape character is not.
    """
    if text.isprintable():
        out = text
    else:
        out = "".join(ch if ch.isprintable() else _escape(ch) for ch in text)
    if limit is not None and len(out) > limit:
        keep = max(0, limit - len(_CUT.format(len(out))))
        return out[:keep] + _CUT.format(len(out) - keep)
    return out


_CUT: Final = "...({} more characters)"
