"""The engines a Dask worker keeps warm for a run (``referee.cluster.worker.EnginesPlugin``), in
process: when the run ends (the plugin's teardown) while a game is still being played there,
that game ends as it should, its engines are closed once it does, and none is lent again."""

from __future__ import annotations

import threading
from typing import ClassVar

import pytest

pytest.importorskip("distributed")

from ginproto.record import EngineInfo
from ginproto.rules import Rules
from ginproto.simulate import RandomPlayer
from ginproto.table import GameLog, Player
from referee.cluster.worker import EnginesPlugin
from referee.results.played import GameJob, Played

WAIT = 30.0  # seconds: a bound against hangs, never a measurement


class _Seats:
    """Two in-process players; the first waits at its first decision until ``go`` is set, so
    that a game can be caught in progress."""

    made: ClassVar[list[_Seats]] = []

    def __init__(self, started: threading.Event, go: threading.Event) -> None:
        self.started, self.go = started, go
        self.closed = False
        _Seats.made.append(self)

    def players(self, job: GameJob) -> list[Player]:
        started, go = self.started, self.go

        class Waiting(RandomPlayer):
            def decide(self, view, decision):  # type: ignore[no-untyped-def]
                started.set()
                assert go.wait(WAIT)
                return super().decide(view, decision)

        return [Waiting(1, knocks=True), RandomPlayer(2, knocks=True)]

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        return (EngineInfo("a"), EngineInfo("b"))

    def close(self) -> None:
        self.closed = True


def test_a_game_in_progress_when_the_run_ends_closes_its_engines_when_it_ends() -> None:
    started, go = threading.Event(), threading.Event()
    _Seats.made.clear()
    plugin = EnginesPlugin(lambda: _Seats(started, go), None, frozenset())
    job = GameJob(0, Rules(target=25), 5, 0, (0, 1))
    results: list[Played] = []
    game = threading.Thread(target=lambda: results.append(plugin.play(job)))
    game.start()
    try:
        assert started.wait(WAIT)
        plugin.close()  # the run is over: the plugin is torn down mid-game
        [seats] = _Seats.made
        assert not seats.closed  # a game in progress is never killed
    finally:
        go.set()
        game.join(WAIT)
    [played] = results
    assert played.log.game.is_over  # the game was played to its end
    assert seats.closed  # and its engines were closed then
    with pytest.raises(RuntimeError, match="closed"):
        plugin.play(job)  # nothing is lent once the run is over
    assert len(_Seats.made) == 1
