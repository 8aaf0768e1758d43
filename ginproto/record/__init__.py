"""Game records: the data model, a strict writer, a lenient streaming reader, atomic append.

The format is specified in ``spec/RECORD.md``. In short, each game is::

    %ginrec 1
    [Event "..."]             headers in the PGN manner, every rule parameter among them
    ...
    hand 1 dealer 0 limit 10  one event a line: the deal, every move, the showdown, the scores
    deal 7c 2d ...
    1 pass
    ...
    end target winner 0 scores 104 37
    <blank line>

The writer is strict: it refuses anything the reader would not read back to the same value,
and ``write_game(read(text)) == text`` for every record it writes. The reader is lenient, in
the manner of python-chess's PGN reader: it never raises on bad input, but collects
``RecordError``s with their line numbers in ``GameRecord.errors`` and reads on. Whether the
moves and scores of a well-formed record are *right* is ``ginproto.replay``'s question.

Players are numbered from 0, as in the protocol and ``ginproto.table``; hands and the three
Hollywood games from 1.

The API: ``record_from_log(log, engines, ...)`` turns a ``table.GameLog`` into a
``GameRecord``; ``write_game``/``dumps`` give its text; ``append_game(path, record)`` adds it to
a file atomically; ``read_games(path_or_stream)`` (``RecordReader``) and ``loads(text)`` read
games back. Errors: ``RecordError(ValueError)``, with ``RecordSyntaxError`` (a malformed line),
``TruncatedRecordError`` (a game cut short) and ``RecordWriteError`` (the writer's refusals);
``ginproto.replay.ReplayError`` is the same family's "well formed, but wrong".

The package is four modules, each importing only the ones before it: ``model`` (the lines, the
game, the errors), ``writer`` (``write_game``, ``dumps``, ``append_game``), ``from_log``
(``record_from_log`` and the events it builds) and ``reader`` (``RecordReader``, ``read_games``,
``loads``). Every public name is importable from ``ginproto.record`` itself.
"""

from ginproto.record.from_log import (
    end_event,
    entry_events,
    record_from_log,
    turn_event,
)
from ginproto.record.model import (
    FORMAT_LINE,
    FORMAT_VERSION,
    MAX_GAME_LINES,
    MAX_IDLE,
    MAX_LINE,
    MAX_SKIP,
    Advice,
    Comment,
    Cut,
    Deal,
    End,
    EngineInfo,
    Event,
    FaultLine,
    GameRecord,
    HandStart,
    Header,
    Item,
    LayOff,
    Play,
    RecordError,
    RecordSyntaxError,
    RecordWriteError,
    Result,
    Show,
    Totals,
    TruncatedRecordError,
    quote,
    unquote,
)
from ginproto.record.reader import (
    RecordReader,
    loads,
    parse_line,
    read_games,
)
from ginproto.record.writer import (
    RECORD_MODE,
    append_game,
    dumps,
    fsync_dir,
    torn_tail,
    write_game,
)

__all__ = [
    "FORMAT_LINE",
    "FORMAT_VERSION",
    "MAX_GAME_LINES",
    "MAX_IDLE",
    "MAX_LINE",
    "MAX_SKIP",
    "RECORD_MODE",
    "Advice",
    "Comment",
    "Cut",
    "Deal",
    "End",
    "EngineInfo",
    "Event",
    "FaultLine",
    "GameRecord",
    "HandStart",
    "Header",
    "Item",
    "LayOff",
    "Play",
    "RecordError",
    "RecordReader",
    "RecordSyntaxError",
    "RecordWriteError",
    "Result",
    "Show",
    "Totals",
    "TruncatedRecordError",
    "append_game",
    "dumps",
    "end_event",
    "entry_events",
    "fsync_dir",
    "loads",
    "parse_line",
    "quote",
    "read_games",
    "record_from_log",
    "torn_tail",
    "turn_event",
    "unquote",
    "write_game",
]
