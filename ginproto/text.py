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

What a user names (an engine's name, a seed, an event, in a tournament's config or on the
command line) is not cut but refused past its limit (``NAME_LIMIT``, ``SEED_LIMIT``,
``EVENT_LIMIT``; `too_long` says so), and taken in Unicode's NFC form (`nfc`): two names
typed differently but shown the same (``é`` as one character, or as ``e`` and a combining
accent) are the same name, and the same seed.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = [
    "DETAIL_LIMIT",
    "EVENT_LIMIT",
    "ID_LIMIT",
    "LOG_LIMIT",
    "NAME_LIMIT",
    "REASON_LIMIT",
    "SEED_LIMIT",
    "nfc",
    "plural",
    "printable",
    "too_long",
]

ID_LIMIT: Final = 100
"""Characters kept of an engine's ``id`` text, option names and option values."""

DETAIL_LIMIT: Final = 1000
"""Characters kept of a fault's reason (which may quote an engine's lines)."""

REASON_LIMIT: Final = 200
"""Characters kept of a fault's reason in a few words, and of each line of an engine's
standard error shown with it."""

LOG_LIMIT: Final = 2000
"""Characters kept of one protocol line in a log."""

NAME_LIMIT: Final = 64
"""The longest engine name a user may give (in a config, or ``--name``)."""

SEED_LIMIT: Final = 256
"""The longest seed a user may give, as digits or text: room for a passphrase, and for any
whole number of 128 bits and more (a random seed has 39 digits)."""

EVENT_LIMIT: Final = 200
"""The longest event name a user may give."""


def nfc(text: str) -> str:
    """``text`` in Unicode's NFC form: composed, as it is typed and shown."""
    return unicodedata.normalize("NFC", text)


def too_long(text: str, limit: int, what: str) -> str | None:
    """Why ``text`` is refused as ``what`` (``"the name"``), or None when it fits ``limit``."""
    if len(text) <= limit:
        return None
    return f"{what} is {len(text)} characters long; at most {limit} are allowed"


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


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and the noun that goes with it: ``1 game``, ``0 games``, ``3 games``
    (``nouns``: the plural, when it is not the noun and an ``s``)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
