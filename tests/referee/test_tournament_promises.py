"""What a tournament promises its organiser beyond the games themselves: a resume keeps every
setting that decides the games (the move timeout too), an engine with a time control of its own
gets the tournament's time margin, and the records file never holds a game the store has not
committed."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ginproto.record import EngineInfo
from ginproto.rules import Rules
from ginproto.simulate import RandomPlayer
from ginproto.table import Decision, play_game
from referee.results.played import GameJob, Played
from referee.results.store import RECORDS_NAME, GameResult, Store
from referee.scheduling.config import TournamentConfig
from referee.scheduling.loader import build_config
from referee.scheduling.seats import Seats
from referee.scheduling.tournament import SettingsChanged, open_tournament, run_tournament
from referee.seat.player import EnginePlayer
from tests.seat.test_clock import ENGINE, _view


def _config(**keys: Any) -> TournamentConfig:
    table = {"seed": 3, "games": 2, "engines": [{"command": "simple"}, {"command": "random"}]}
    return build_config({**table, **keys})


def test_a_resume_with_another_move_timeout_is_refused(tmp_path: Path) -> None:
    """The move timeout decides which answers are forfeits: a resume may not change it, as it
    may not change the time control."""
    open_tournament(_config(move_timeout=10), tmp_path, resume=False).close()
    with pytest.raises(SettingsChanged) as info:
        open_tournament(_config(move_timeout=2), tmp_path, resume=True)
    assert info.value.changes == ["move timeout: 10.0 -> 2.0"]
    with pytest.raises(SettingsChanged) as info:
        open_tournament(_config(move_timeout=10, tc="60+1"), tmp_path, resume=True)
    assert info.value.changes == ['time control: "120+1" -> "60+1"']
    open_tournament(_config(move_timeout=10), tmp_path, resume=True).close()


def test_an_engine_with_its_own_time_control_gets_the_tournaments_time_margin(
    tmp_path: Path,
) -> None:
    """A slow link (``time_margin = 3``): an engine whose own move timeout is 1 s answers
    after 2 s, within the margin, and is not forfeited."""
    script = tmp_path / "slow.py"
    script.write_text(ENGINE)
    config = _config(
        time_margin=3,
        engines=[
            {"name": "Slow", "command": [sys.executable, str(script), "sleep", "2"],
             "tc": "inf", "move_timeout": 1},
            {"command": "random"},
        ],
    )
    spec = config.specs()[0]
    player = EnginePlayer(spec, config.control, 10.0)
    try:
        player.new_game(1, 0, Rules())
        move = player.decide(_view(), Decision.OFFER)  # PlayerFault (timeout) otherwise
    finally:
        player.close()
    assert str(move) == "pass"


class _Backend:
    """Plays each game in process, between two random players: no engine process."""

    def run(
        self,
        jobs: Iterable[GameJob],
        seats: Callable[[], Seats],
        stop: Callable[[], bool] = lambda: False,
    ) -> Iterator[Played]:
        for job in jobs:
            players = [RandomPlayer(job.key), RandomPlayer(job.key + 1)]
            log = play_game(job.rules, players, job.seed, job.key)
            yield Played(job, log, (EngineInfo("a"), EngineInfo("b")))


def test_the_records_file_never_holds_a_game_the_store_did_not_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store is the truth and the records file is kept from it, never ahead: when the
    store cannot commit game 2 (a full disk, say), the file holds game 1 only."""
    config = _config()
    store = open_tournament(config, tmp_path, resume=False)
    commit = Store.commit

    def failing(self: Store, result: GameResult) -> None:
        if result.game == 1:
            raise sqlite3.OperationalError("database or disk is full")
        commit(self, result)

    monkeypatch.setattr(Store, "commit", failing)
    try:
        with pytest.raises(sqlite3.OperationalError, match="disk is full"):
            run_tournament(store, config, _Backend())
        assert store.counts()[0] == 1
        [(game, record)] = store.records()
    finally:
        store.close()
    assert game == 0 and '[Game "1"]' in record
    assert (tmp_path / RECORDS_NAME).read_text() == record
