"""The results store of a tournament: one SQLite file, and the game-records file kept from it.

The store is the truth. It holds the tournament's settings (in a canonical JSON form, compared
when a run is resumed), every scheduled game with its pairing, seats, seed, deck key and state,
and every finished game's result, faults and record text. A game's result, faults, record and
its ``done`` state are written in one transaction, so they never disagree, and the database
runs in WAL mode with ``synchronous=FULL``: a ``kill -9`` (or a power cut) loses at most the
games in progress, which are still ``pending`` and are played again, from the same seed, on
resume.

The human-facing records file (``games.gin``) is derived from the store: each game is appended
after its commit, and on resume ``RecordsFile.reconcile`` rewrites the file if it does not hold
exactly the committed games, in schedule order (a crash between the commit and the append, or
games finished out of order, leaves it behind; never ahead). Before that, a resume checks the
store against the records (``referee.results.integrity``) and refuses one they contradict. Every
file here is created with mode 0600: the store and the records name the seed.

Schema (``SCHEMA_VERSION`` 1)::

    meta(name PRIMARY KEY, value)          schema, settings (canonical JSON), run, created, referee
    engines(engine PRIMARY KEY, name)      engine index (as in the settings) and display name
    pairings(pairing PRIMARY KEY, engines) the engines of each pairing, JSON list
    games(game PRIMARY KEY, pairing, round, seats, seed, key, state)
        game: schedule position from 0 (the record's Game header is game + 1)
        round: the game's number within its pairing, from 0
        seats: JSON list, the engine index of each player by player number
        seed: JSON (a number or a string); key: the deck key; state: 'pending' or 'done'
    results(game PRIMARY KEY, winner, termination, hands, summary, record, finished, seconds)
        winner: engine index or NULL (drawn); summary: JSON of what the standings need
    faults(game, engine, player, kind, detail, hand)
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import logging
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ginproto.record import append_game, fsync_dir
from referee.defaults import LOCK_NAME as LOCK_NAME
from referee.defaults import RECORDS_NAME as RECORDS_NAME
from referee.defaults import STORE_NAME as STORE_NAME
from referee.errors import RefereeError

log = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 1
FILE_MODE: Final = 0o600
"""Every file of a tournament is its owner's alone: the store and the records hold the seed,
which reveals every deck."""
BUSY_TIMEOUT: Final = 30.0
"""Seconds a connection to the store waits for a lock another holds (a run writing a game,
a reader opening it on a busy machine) before it gives up."""

_SCHEMA = """
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE engines (
    engine INTEGER PRIMARY KEY,
    name   TEXT NOT NULL UNIQUE
);
CREATE TABLE pairings (
    pairing INTEGER PRIMARY KEY,
    engines TEXT NOT NULL
);
CREATE TABLE games (
    game    INTEGER PRIMARY KEY,
    pairing INTEGER NOT NULL REFERENCES pairings(pairing),
    round   INTEGER NOT NULL,
    seats   TEXT NOT NULL,
    seed    TEXT NOT NULL,
    key     INTEGER NOT NULL,
    state   TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done'))
);
CREATE INDEX games_by_state ON games(state, game);
CREATE TABLE results (
    game        INTEGER PRIMARY KEY REFERENCES games(game),
    winner      INTEGER REFERENCES engines(engine),
    termination TEXT NOT NULL,
    hands       INTEGER NOT NULL,
    summary     TEXT NOT NULL,
    record      TEXT NOT NULL,
    finished    TEXT NOT NULL,
    seconds     REAL NOT NULL
);
CREATE TABLE faults (
    game   INTEGER NOT NULL REFERENCES results(game),
    engine INTEGER NOT NULL REFERENCES engines(engine),
    player INTEGER NOT NULL,
    kind   TEXT NOT NULL,
    detail TEXT NOT NULL,
    hand   INTEGER NOT NULL
);
CREATE INDEX faults_by_game ON faults(game);
"""


class StoreError(RefereeError):
    """The store cannot be created, opened or written as asked (a message for the user)."""


class StoreBusy(StoreError):
    """Another referee is running the tournament in this directory."""


@dataclass(frozen=True, slots=True)
class Scheduled:
    """One scheduled game: ``seats[p]`` is the engine index of player ``p``."""

    game: int
    pairing: int
    round: int
    seats: tuple[int, ...]
    seed: int | str
    key: int
    state: str = "pending"


@dataclass(frozen=True, slots=True)
class FaultRow:
    """A fault ruled in a game: the engine (index) and player that forfeited, and why."""

    engine: int
    player: int
    kind: str
    detail: str
    hand: int
    reason: str = field(default="", compare=False)
    """Why, in a few words, as the progress line shows it (not stored: the detail is)."""
    stderr: tuple[str, ...] = field(default=(), compare=False)
    """The last lines of the engine's stderr (``Fault.stderr``; not stored either)."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game as the store keeps it. ``summary`` is JSON text for the standings."""

    game: int
    winner: int | None
    termination: str
    hands: int
    summary: str
    record: str
    faults: tuple[FaultRow, ...] = ()
    seconds: float = 0.0
    finished: str = ""


def canonical_json(value: Any) -> str:
    """One text per value: sorted keys, no spaces, so equal settings give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Store:
    """An open tournament store. Use one ``Store`` from one thread; close it when done."""

    def __init__(self, path: Path, db: sqlite3.Connection) -> None:
        self.path = path
        self.db = db
        self._settings: dict[str, Any] | None = None

    # -- creating and opening ----------------------------------------------------------------
    @staticmethod
    def exists(directory: str | os.PathLike[str]) -> bool:
        return (Path(directory) / STORE_NAME).exists()

    @classmethod
    def create(
        cls,
        directory: str | os.PathLike[str],
        settings: Mapping[str, Any],
        engines: Sequence[str],
        pairings: Sequence[Sequence[int]],
        games: Sequence[Scheduled],
        run: Mapping[str, Any] | None = None,
    ) -> Store:
        """Create the store of a new tournament in ``directory`` (made if needed).

        The whole schedule is written in one transaction into a temporary file that is then
        renamed into place, so a store either exists complete or not at all.
        """
        from ginproto import __version__

        folder = Path(directory)
        path = folder / STORE_NAME
        if path.exists():
            raise StoreError(f"{folder} already holds a tournament store")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / (STORE_NAME + ".new")
            for leftover in (tmp, *(Path(f"{tmp}-{end}") for end in ("journal", "wal", "shm"))):
                leftover.unlink(missing_ok=True)
            # SQLite gives its journal and WAL files the database file's mode: create that
            # file first, owner only, so that no other user can read the seed or the results.
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
            db = sqlite3.connect(tmp, isolation_level=None)
            try:
                # In WAL mode from the start: no open ever changes the journal's mode, which
                # a reader opening the store at the same moment could find locked.
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                db.execute("BEGIN")
                # executescript() would commit: run the statements one by one instead.
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                created = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
                meta = {
                    "schema": str(SCHEMA_VERSION),
                    "settings": canonical_json(dict(settings)),
                    "run": canonical_json(dict(run or {})),
                    "created": created,
                    "referee": f"ginproto {__version__}",
                }
                db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                db.executemany("INSERT INTO engines VALUES (?, ?)", enumerate(engines))
                db.executemany(
                    "INSERT INTO pairings VALUES (?, ?)",
                    ((i, json.dumps(list(p))) for i, p in enumerate(pairings)),
                )
                db.executemany(
                    "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, 'pending')",
                    (
                        (
                            g.game,
                            g.pairing,
                            g.round,
                            json.dumps(list(g.seats)),
                            json.dumps(g.seed),
                            g.key,
                        )
                        for g in games
                    ),
                )
                db.execute("COMMIT")
            finally:
                db.close()
            _fsync(tmp)
            os.replace(tmp, path)
            fsync_dir(folder)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot create the store in {folder}: {exc}") from None
        return cls.open(folder)

    @classmethod
    def open(cls, directory: str | os.PathLike[str]) -> Store:
        """Open the store in ``directory``; ``StoreError`` if there is none or it is not one."""
        folder = Path(directory)
        path = folder / STORE_NAME
        if not path.is_file():
            raise StoreError(f"{folder} holds no tournament (no {STORE_NAME})")
        try:
            db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"{path} is not a tournament store: {exc}") from None
        if row is None or row[0] != str(SCHEMA_VERSION):
            db.close()
            raise StoreError(f"{path}: unknown store schema {row and row[0]!r}")
        return cls(path, db)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def directory(self) -> Path:
        return self.path.parent

    # -- what the store holds --------------------------------------------------------------
    def meta(self, name: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def settings(self) -> dict[str, Any]:
        """The tournament's settings as created (the canonical form)."""
        if self._settings is None:
            self._settings = json.loads(self.meta("settings") or "{}")
        return dict(self._settings)

    @property
    def run_options(self) -> dict[str, Any]:
        """Options of the last run that do not change results (concurrency, timeouts...)."""
        loaded: dict[str, Any] = json.loads(self.meta("run") or "{}")
        return loaded

    def set_run_options(self, run: Mapping[str, Any]) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('run', ?)", (canonical_json(dict(run)),)
            )

    @property
    def names(self) -> list[str]:
        return [str(r[0]) for r in self.db.execute("SELECT name FROM engines ORDER BY engine")]

    @property
    def pairings(self) -> list[tuple[int, ...]]:
        rows = self.db.execute("SELECT engines FROM pairings ORDER BY pairing")
        return [tuple(json.loads(r[0])) for r in rows]

    def games(self, state: str | None = None) -> list[Scheduled]:
        """The scheduled games in schedule order, all or those in ``state``."""
        sql = "SELECT game, pairing, round, seats, seed, key, state FROM games"
        args: tuple[str, ...] = ()
        if state is not None:
            sql += " WHERE state = ?"
            args = (state,)
        rows = self.db.execute(sql + " ORDER BY game", args)
        return [
            Scheduled(g, p, r, tuple(json.loads(s)), json.loads(seed), k, st)
            for g, p, r, s, seed, k, st in rows
        ]

    def counts(self) -> tuple[int, int]:
        """(games done, games scheduled)."""
        done, total = self.db.execute(
            "SELECT COALESCE(SUM(state = 'done'), 0), COUNT(*) FROM games"
        ).fetchone()
        return int(done), int(total)

    def results(self) -> Iterator[GameResult]:
        """Every stored result in schedule order, with its faults (streamed)."""
        faults: dict[int, list[FaultRow]] = {}
        for game, engine, player, kind, detail, hand in self.db.execute(
            "SELECT game, engine, player, kind, detail, hand FROM faults ORDER BY rowid"
        ):
            faults.setdefault(game, []).append(FaultRow(engine, player, kind, detail, hand))
        cursor = self.db.execute(
            "SELECT game, winner, termination, hands, summary, record, seconds, finished"
            " FROM results ORDER BY game"
        )
        for game, winner, termination, hands, summary, record, seconds, finished in cursor:
            yield GameResult(
                game,
                winner,
                termination,
                hands,
                summary,
                record,
                tuple(faults.get(game, ())),
                seconds,
                finished,
            )

    def records(self) -> Iterator[tuple[int, str]]:
        """(game, record text) of every finished game, in schedule order (streamed)."""
        for game, record in self.db.execute("SELECT game, record FROM results ORDER BY game"):
            yield int(game), str(record)

    def last_done(self) -> int:
        """The highest finished game, or -1."""
        row = self.db.execute("SELECT MAX(game) FROM results").fetchone()
        return -1 if row[0] is None else int(row[0])

    # -- writing a result ------------------------------------------------------------------
    def commit(self, result: GameResult) -> None:
        """Store one finished game: its result, faults, record and ``done`` state together.

        ``StoreError`` if the game is not a pending game of this tournament (never stored
        twice). Nothing is written unless everything is.
        """
        finished = result.finished or datetime.datetime.now(datetime.UTC).isoformat(
            timespec="seconds"
        )
        with self._transaction():
            cursor = self.db.execute(
                "UPDATE games SET state = 'done' WHERE game = ? AND state = 'pending'",
                (result.game,),
            )
            if cursor.rowcount != 1:
                raise StoreError(f"game {result.game + 1} is not a pending game of {self.path}")
            self.db.execute(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    result.game,
                    result.winner,
                    result.termination,
                    result.hands,
                    result.summary,
                    result.record,
                    finished,
                    result.seconds,
                ),
            )
            self.db.executemany(
                "INSERT INTO faults VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (result.game, f.engine, f.player, f.kind, f.detail, f.hand)
                    for f in result.faults
                ),
            )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")


# ------------------------------------------------------------------------------------------
# The records file, kept from the store


class RecordsFile:
    """The game-records file of a tournament: the committed games, in schedule order.

    ``add`` appends a game committed after every game already in the file, and rewrites the
    file from the store (atomically) for a game that fills a gap before them.
    """

    def __init__(self, store: Store, path: str | os.PathLike[str] | None = None) -> None:
        self.store = store
        self.path = Path(path) if path is not None else store.directory / RECORDS_NAME
        self.last = -1

    def reconcile(self) -> bool:
        """Make the file hold exactly the store's committed games in schedule order. Returns
        whether it had to be rewritten. Streams, so a large tournament needs little memory."""
        self.last = self.store.last_done()
        if self._matches():
            return False
        self.rewrite()
        return True

    def _matches(self) -> bool:
        try:
            f = self.path.open("rb")
        except FileNotFoundError:
            return self.last < 0
        with f:
            for _, text in self.store.records():
                data = text.encode("utf-8")
                if f.read(len(data)) != data:
                    return False
            return f.read(1) == b""

    def rewrite(self) -> None:
        """Write the file from the store: to a temporary file, synced, then renamed."""
        tmp = self.path.with_name(self.path.name + ".new")
        tmp.unlink(missing_ok=True)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE), "wb") as f:
            for _, text in self.store.records():
                f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)
        self.last = self.store.last_done()
        log.info("rewrote %s from the store", self.path)

    def add(self, game: int, record: str) -> None:
        """A game just committed to the store."""
        if game > self.last:
            append_game(self.path, record)
            self.last = game
        else:
            self.rewrite()


# ------------------------------------------------------------------------------------------
# One referee per tournament directory


class DirectoryLock:
    """An exclusive lock on a tournament directory, released when the process ends (even by
    ``kill -9``), so two referees never play the same games."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = Path(directory) / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            who = f" (pid {other})" if other else ""
            raise StoreBusy(
                f"{self.path.parent} is in use by another ginref{who}; wait for it to end"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DirectoryLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
