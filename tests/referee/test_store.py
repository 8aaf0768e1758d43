"""The tournament store: schema, transactions, crash safety, the records file kept from it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.results.store import (
    RECORDS_NAME,
    STORE_NAME,
    DirectoryLock,
    FaultRow,
    GameResult,
    RecordsFile,
    Scheduled,
    Store,
    StoreBusy,
    StoreError,
    canonical_json,
)

SETTINGS = {"games": 2, "seed": 7, "engines": [{"name": "A"}, {"name": "B"}], "event": "é"}


def schedule(n: int = 4) -> list[Scheduled]:
    return [Scheduled(i, 0, i, (i % 2, 1 - i % 2), 7, i) for i in range(n)]


def record(game: int) -> str:
    return f'%ginrec 1\n[Event "test"]\n[Game "{game + 1}"]\nend target winner 0 scores 100 0\n\n'


def result(game: int, faults: tuple[FaultRow, ...] = ()) -> GameResult:
    return GameResult(
        game=game,
        winner=game % 2,
        termination="target",
        hands=3,
        summary=json.dumps({"game": game}),
        record=record(game),
        faults=faults,
        seconds=0.25,
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.create(tmp_path / "t", SETTINGS, ["A", "B"], [(0, 1)], schedule(), {"concurrency": 2})
    yield s
    s.close()


def test_create_and_open(store: Store, tmp_path: Path) -> None:
    assert store.settings == SETTINGS
    assert store.run_options == {"concurrency": 2}
    assert store.names == ["A", "B"]
    assert store.pairings == [(0, 1)]
    assert store.games() == schedule()
    assert store.counts() == (0, 4)
    assert store.meta("schema") == "1"
    assert store.meta("settings") == canonical_json(SETTINGS)
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert not (tmp_path / "t" / (STORE_NAME + ".new")).exists()
    store.close()
    again = Store.open(tmp_path / "t")
    assert again.games("pending") == schedule()
    again.close()


def test_seeds_keep_their_type(tmp_path: Path) -> None:
    games = [Scheduled(0, 0, 0, (0, 1), "abc", 0), Scheduled(1, 0, 1, (1, 0), 12, 1)]
    with Store.create(tmp_path, {}, ["A", "B"], [(0, 1)], games) as s:
        assert [g.seed for g in s.games()] == ["abc", 12]


def test_create_refuses_an_existing_store(store: Store, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="already holds"):
        Store.create(tmp_path / "t", SETTINGS, ["A", "B"], [(0, 1)], schedule())


def test_open_needs_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="holds no tournament"):
        Store.open(tmp_path)
    (tmp_path / STORE_NAME).write_text("not a database, just text " * 100)
    with pytest.raises(StoreError, match="not a tournament store"):
        Store.open(tmp_path)


def test_a_half_created_store_does_not_count(tmp_path: Path) -> None:
    # A crash while creating leaves only the temporary file; creating again works.
    (tmp_path / (STORE_NAME + ".new")).write_text("torn")
    assert not Store.exists(tmp_path)
    with Store.create(tmp_path, SETTINGS, ["A", "B"], [(0, 1)], schedule()) as s:
        assert s.counts() == (0, 4)


def test_commit_stores_everything_together(store: Store) -> None:
    fault = FaultRow(engine=1, player=0, kind="illegal", detail="discard 7h: not held", hand=2)
    store.commit(result(1, (fault,)))
    assert store.counts() == (1, 4)
    assert [g.game for g in store.games("done")] == [1]
    [stored] = list(store.results())
    assert stored.game == 1 and stored.winner == 1 and stored.hands == 3
    assert stored.faults == (fault,)
    assert stored.record == record(1)
    assert stored.finished  # a timestamp
    assert list(store.records()) == [(1, record(1))]


def test_a_game_is_never_stored_twice(store: Store) -> None:
    store.commit(result(0))
    with pytest.raises(StoreError, match="not a pending game"):
        store.commit(result(0))
    with pytest.raises(StoreError, match="not a pending game"):
        store.commit(result(99))
    assert store.counts() == (1, 4)
    assert len(list(store.results())) == 1


def test_a_failed_commit_writes_nothing(store: Store) -> None:
    bad = FaultRow(engine=None, player=0, kind="crash", detail="", hand=0)  # type: ignore[arg-type]
    with pytest.raises(sqlite3.IntegrityError):
        store.commit(result(2, (bad,)))
    assert store.counts() == (0, 4)
    assert list(store.results()) == []
    store.commit(result(2))  # and the store goes on
    assert store.counts() == (1, 4)


def test_records_file_appends_in_order(store: Store) -> None:
    file = RecordsFile(store)
    assert not file.reconcile()  # no games, no file: nothing to do
    for g in (0, 1):
        store.commit(result(g))
        file.add(g, record(g))
    assert file.path.read_text() == record(0) + record(1)
    assert file.path.name == RECORDS_NAME


def test_records_file_filling_a_gap_keeps_schedule_order(store: Store) -> None:
    file = RecordsFile(store)
    for g in (0, 2, 1):  # 1 finishes last (a resume after a stop that left a gap)
        store.commit(result(g))
        file.add(g, record(g))
    assert file.path.read_text() == record(0) + record(1) + record(2)


@pytest.mark.parametrize(
    "damage",
    ["missing", "behind", "torn", "extra", "reordered"],
)
def test_reconcile_rebuilds_the_file_from_the_store(store: Store, damage: str) -> None:
    for g in (0, 1, 2):
        store.commit(result(g))
    file = RecordsFile(store)
    path = file.path
    expected = record(0) + record(1) + record(2)
    path.write_text(expected)
    assert not file.reconcile()
    if damage == "missing":
        path.unlink()
    elif damage == "behind":  # killed between the commit and the append
        path.write_text(record(0) + record(1))
    elif damage == "torn":
        path.write_text(expected[:-20])
    elif damage == "extra":
        path.write_text(expected + record(3))
    else:
        path.write_text(record(1) + record(0) + record(2))
    assert file.reconcile()
    assert path.read_text() == expected
    assert file.last == 2
    store.commit(result(3))
    file.add(3, record(3))
    assert path.read_text() == expected + record(3)


def test_directory_lock(tmp_path: Path) -> None:
    with DirectoryLock(tmp_path), pytest.raises(StoreBusy, match=f"pid {os.getpid()}"):
        DirectoryLock(tmp_path).acquire()
    with DirectoryLock(tmp_path):  # released
        pass


_WRITER = textwrap.dedent(
    """
    import json, sys
    from referee.results.store import GameResult, Store
    store = Store.open(sys.argv[1])
    print("ready", flush=True)
    for g in store.games("pending"):
        store.commit(GameResult(g.game, 0, "target", 2, json.dumps({"g": g.game}),
                                "x" * 5000 + str(g.game), ()))
    """
)


def test_kill_9_during_commits_leaves_a_consistent_store(tmp_path: Path) -> None:
    n = 3000
    games = [Scheduled(i, 0, i, (0, 1), 1, i) for i in range(n)]
    Store.create(tmp_path, {}, ["A", "B"], [(0, 1)], games).close()
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    with Store.open(tmp_path) as watcher:  # WAL: readers do not block the writer
        deadline = time.monotonic() + 30
        while watcher.counts()[0] < 20 and time.monotonic() < deadline:
            time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store.open(tmp_path) as store:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        done, total = store.counts()
        assert 0 < done < total == n, "the kill should come in the middle"
        # Every done game has its result and record, and nothing else does.
        done_games = [g.game for g in store.games("done")]
        results = list(store.results())
        assert [r.game for r in results] == done_games == list(range(done))
        assert all(r.record == "x" * 5000 + str(r.game) for r in results)
