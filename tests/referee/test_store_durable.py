"""What the store promises past a crash: a rewritten records file is on disk before it takes the
old one's place, every connection commits to disk (a power cut loses no committed game), and a
resumed run keeps the records file in schedule order however its games finish."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from referee.results.store import RecordsFile, Store
from tests.referee.test_store import SETTINGS, record, result, schedule


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.create(tmp_path / "t", SETTINGS, ["A", "B"], [(0, 1)], schedule())
    yield s
    s.close()


def test_a_rewritten_records_file_is_on_disk_before_it_replaces_the_old_one(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut right after the rename must find the new file's games, not an empty file:
    the new file is synced before the rename, and the folder after it."""
    for g in (0, 1):
        store.commit(result(g))
    file = RecordsFile(store)
    file.path.write_text("damaged\n")
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        events.append(("replace", os.fspath(src)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    assert file.reconcile()
    assert file.path.read_text() == record(0) + record(1)
    [(_, tmp)] = [e for e in events if e[0] == "replace"]
    at = events.index(("replace", tmp))
    assert ("fsync", tmp) in events[:at], events  # the new file's data, before the rename
    assert ("fsync", str(file.path.parent)) in events[at:], events  # the rename itself


def test_every_connection_to_a_store_commits_to_disk(store: Store, tmp_path: Path) -> None:
    """``synchronous=FULL``: a commit returns once the game is on disk, so a power cut (not
    only a ``kill -9``) loses no committed game. SQLite's WAL mode with ``NORMAL`` would lose
    the last commits."""
    full = 2
    assert store.db.execute("PRAGMA synchronous").fetchone()[0] == full
    again = Store.open(tmp_path / "t")
    try:
        assert again.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert again.db.execute("PRAGMA synchronous").fetchone()[0] == full
    finally:
        again.close()


def test_a_resumed_run_keeps_the_records_file_in_schedule_order(store: Store) -> None:
    """Games 0 and 2 were played (game 1 was still running when the run stopped) and the file
    holds them: on resume it is found in order and kept; game 1, played now, goes between
    them, not after game 2."""
    for g in (0, 2):
        store.commit(result(g))
    first = RecordsFile(store)
    first.path.write_text(record(0) + record(2))
    resumed = RecordsFile(store)
    assert not resumed.reconcile()  # nothing to rewrite
    store.commit(result(1))
    resumed.add(1, record(1))
    assert resumed.path.read_text() == record(0) + record(1) + record(2)
    store.commit(result(3))
    resumed.add(3, record(3))
    assert resumed.path.read_text() == record(0) + record(1) + record(2) + record(3)
