"""Secrets and integrity: random seeds, private files, torn appends, and a store that is checked
against its records."""

from __future__ import annotations

import io
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ginproto.record import (
    RecordReader,
    TruncatedRecordError,
    append_game,
    write_game,
)
from ginproto.replay import verify_game
from ginproto.rules import Rules
from ginproto.simulate import RandomPlayer, play_one

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def long_game() -> str:
    """One game of many hands: its text spans many pages, so a kill can land mid-write."""
    rules = Rules(target=300)
    players = [RandomPlayer("a", knocks=True), RandomPlayer("b", knocks=True)]
    _, record = play_one(rules, players, "torn", 1, event="t", site="s", date="2026.01.01")
    text = write_game(record)
    assert not verify_game(record)
    return text


# -- a record survives a kill -9 in the middle of an append ---------------------------------

# The appender skips fsync: it guards against a machine crash, not a process kill (the page
# cache outlives the process), and without it nearly every kill lands in the middle of a write.
APPENDER = """
import os, sys
from ginproto.record import append_game
os.fsync = lambda fd: None
path, source = sys.argv[1], sys.argv[2]
text = open(source, encoding="utf-8").read()
append_game(path, text)
print("ready", flush=True)
while True:
    append_game(path, text)
"""


def _check_file(path: Path, text: str) -> tuple[int, bool]:
    """The file is whole games and at most the start of one more, which the reader reports as
    torn; return (whole games, torn)."""
    data, game = path.read_bytes(), text.encode()
    whole = len(data) // len(game)
    rest = data[whole * len(game) :]
    assert data[: whole * len(game)] == game * whole
    assert game.startswith(rest)
    if rest:
        [torn] = RecordReader(io.BytesIO(rest))
        assert any(isinstance(e, TruncatedRecordError) for e in torn.errors), torn.errors
    return whole, bool(rest)


def test_a_kill_during_appends_leaves_whole_games_and_the_next_append_is_clean(
    tmp_path: Path, long_game: str
) -> None:
    source = tmp_path / "game.gin"
    source.write_text(long_game)
    rng = random.Random(11)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    trials, torn_seen = 0, 0
    deadline = time.monotonic() + 30
    while trials < 12 and time.monotonic() < deadline:
        trials += 1
        path = tmp_path / "run.gin"
        path.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(path), str(source)],
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"ready\n"
            time.sleep(rng.uniform(0.0, 0.005))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        whole, torn = _check_file(path, long_game)
        torn_seen += torn
        assert whole >= 1
        append_game(path, long_game)
        assert path.read_bytes() == long_game.encode() * (whole + 1)  # games that verify
    assert trials >= 3
    print(f"{trials} kills, {torn_seen} left a torn game, every one cut off by the next append")
