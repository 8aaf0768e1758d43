"""The record writer: strict, and atomic on disk.

``write_game`` refuses anything the reader would not read back to the same value, so
``write_game(read(text)) == text`` for every record it writes; ``dumps`` writes several.
``append_game(path, record)`` adds a game to a file atomically (a torn tail from a crash is cut
first, ``torn_tail``), in a file only its owner can read (``RECORD_MODE``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from ginproto.cards import CardError, check_deck
from ginproto.record.model import (
    FORMAT_LINE,
    Comment,
    Deal,
    End,
    Event,
    GameRecord,
    Header,
    Play,
    RecordWriteError,
    Show,
    Totals,
    _excerpt,
)

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# The writer.


_HEADER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")


def _header_name_ok(name: str) -> bool:
    return _HEADER_NAME.fullmatch(name) is not None


_REPEATABLE = re.compile(r"Player[0-9]+\.Option")


def _conflict(earlier: Iterable[Header], header: Header) -> str | None:
    """Why ``header`` contradicts an earlier header of the same name, or ``None``. Only
    ``PlayerN.Option`` may appear more than once with different values."""
    if _REPEATABLE.fullmatch(header.name):
        return None
    for h in earlier:
        if h.name == header.name and h.value != header.value:
            where = f" at line {h.line}" if h.line else ""
            return (
                f"header [{header.name}] says {_excerpt(header.value)}, but the header{where}"
                f" says {_excerpt(h.value)}"
            )
    return None


def write_game(record: GameRecord) -> str:
    """The canonical text of one game, ending with the blank line after its ``end`` line.

    Strict: raises ``RecordWriteError`` for a record that would not read back as written (a bad
    header name, a comment with a line break, a game without exactly one ``end`` line at the
    end of its events, a deal that is not a 52-card deck, ...).
    """
    lines = [c.text() for c in record.preamble]
    lines.append(FORMAT_LINE)
    ends = 0
    seen_event = False
    headers: list[Header] = []
    for item in record.items:
        if isinstance(item, Header):
            if not _header_name_ok(item.name):
                raise RecordWriteError(f"bad header name {item.name!r}")
            if seen_event:
                raise RecordWriteError(f"header [{item.name}] after the first event")
            clash = _conflict(headers, item)
            if clash is not None:
                raise RecordWriteError(clash)
            headers.append(item)
        elif isinstance(item, Comment):
            if "\n" in item.body or "\r" in item.body:
                raise RecordWriteError("a comment must not contain a line break")
        else:
            seen_event = True
            if ends:
                raise RecordWriteError(f"an event after the end line: {item.text()}")
            _check_event(item)
        text = item.text()
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise RecordWriteError(f"not valid text: {text!r}") from None
        lines.append(text)
        if isinstance(item, End):
            ends += 1
            lines.append("")
    if not ends:
        raise RecordWriteError("a game record must end with an end line")
    return "\n".join(lines) + "\n"


def _check_event(event: Event) -> None:
    """The writer's checks on one event: what its text form cannot carry back."""
    try:
        if isinstance(event, Deal):
            check_deck(event.deck)
        elif isinstance(event, Play):
            if (event.card is not None) != event.move.is_draw:
                raise RecordWriteError(f"{event.move.kind}: only a draw records its card")
        elif isinstance(event, Show) and event.role not in ("knocker", "defender"):
            raise RecordWriteError(f"a show line is for a knocker or defender: {event.role!r}")
        elif isinstance(event, Totals | End):
            columns = event.scores if isinstance(event, End) else event.columns
            if not columns or len({len(c) for c in columns}) != 1 or len(columns[0]) not in (2, 3):
                raise RecordWriteError(f"scores need 2 or 3 players in every game: {columns}")
    except CardError as exc:
        raise RecordWriteError(str(exc)) from None


def dumps(records: Iterable[GameRecord]) -> str:
    """Many games as one file's text."""
    return "".join(write_game(r) for r in records)


# ---------------------------------------------------------------------------------------------
# Atomic append.


RECORD_MODE: Final = 0o600
"""The mode of a record file this module creates: its owner's alone, since a record names the
seed, and the seed reveals every deck."""


def append_game(path: str | os.PathLike[str], record: GameRecord | str) -> None:
    """Add one finished game to the record file at ``path``, creating it (mode 0600) if needed.

    The guarantee (spec/RECORD.md, "Appending"): a game is in the file whole, or not at all.
    The game's whole text is built and checked first, then written on a descriptor opened
    ``O_APPEND``, under an exclusive ``flock`` on the file (so appenders in other threads and
    processes never interleave), then ``fsync``ed before this returns. An error (a full disk:
    "No space left on device") truncates the file back to where it was. A ``kill -9`` (or a
    crash of the machine) in the middle of the write can still leave the start of the game at
    the end of the file: the reader reports that torn game as truncated, and the next append
    first cuts it off (``torn_tail``), so the file holds whole games again.
    """
    import fcntl  # POSIX only; imported here so that reading records works everywhere

    text = record if isinstance(record, str) else write_game(record)
    data = text.encode("utf-8")
    name = os.fspath(path)
    created = not os.path.exists(name)
    fd = os.open(name, os.O_RDWR | os.O_APPEND | os.O_CREAT, RECORD_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        torn = torn_tail(fd, size)
        if torn < size:
            log.warning(
                "%s: cut off the torn game at its end (%d bytes from byte %d), left by an"
                " append that was interrupted",
                name,
                size - torn,
                torn,
            )
            os.ftruncate(fd, torn)
            size = torn
        elif size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a last line of someone else's: keep ours on lines of its own
        try:
            rest = memoryview(data)
            while rest:  # one write, unless the disk fills: then its error (ENOSPC) is raised
                rest = rest[os.write(fd, rest) :]
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise
    finally:
        os.close(fd)  # closing releases the lock
    if created:
        fsync_dir(Path(name).resolve().parent)


_CHUNK: Final = 1 << 16


def torn_tail(fd: int, size: int) -> int:
    """Where the record file open on ``fd`` (``size`` bytes) should end: ``size`` when its last
    game is whole, else the offset where that torn game starts.

    An append writes a game's ``%ginrec`` line first and its ``end`` line last, so what a
    write cut short leaves is a game of this format with no whole ``end`` line (one with its
    line break). Only the last game is read, backwards to the last line that starts with ``%``
    (which no line inside a game does), so this costs one game's reading however large the
    file; and usually only its last line.
    """
    tail = os.pread(fd, min(size, 4096), max(0, size - 4096))
    body = tail.rstrip(b"\n")
    cut = body.rfind(b"\n")
    whole_line = cut >= 0 or size <= len(tail)
    if len(body) < len(tail) and whole_line and body[cut + 1 :].startswith(b"end "):
        return size  # the common case: the file ends with an end line and its line break
    start = _last_game_start(fd, size)
    if start is None:
        return size
    game = os.pread(fd, size - start, start)
    first = (FORMAT_LINE + "\n").encode()
    if not (game.startswith(first) or first.startswith(game)):
        return size  # not a game of this format: none of ours
    lines = game.split(b"\n")[:-1]  # the lines with their line break
    return size if any(line.startswith(b"end ") for line in lines) else start


def _last_game_start(fd: int, size: int) -> int | None:
    """The offset of the last line that starts with ``%`` (a game's format line), or None."""
    end = size
    while end > 0:
        begin = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - begin + 1, begin)  # one byte more: a line break at ``end``
        at = len(chunk)
        while True:
            at = chunk.rfind(b"%", 0, at)
            if at < 0:
                break
            if begin + at == 0 or (at > 0 and chunk[at - 1 : at] == b"\n"):
                return begin + at
            if at == 0:  # the byte before is in the previous chunk
                if os.pread(fd, 1, begin - 1) == b"\n":
                    return begin
                break
        end = begin
    return None


def fsync_dir(directory: Path) -> None:
    """Make a file's creation or rename in ``directory`` durable (best effort)."""
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
