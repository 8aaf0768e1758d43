"""One way to run games: a backend turns jobs into ``Played`` games, in job order, the same
games whatever the backend or the number of workers; a watch sees each game's players; and
one ``cpu_plan`` serves the match and the tournament."""

from __future__ import annotations

import pytest
from helpers import RandomPlayer

from ginproto.record import EngineInfo, record_from_log, write_game
from ginproto.rules import Rules
from ginproto.table import GameLog, Player, play_game
from referee.results.played import GameJob, Played
from referee.scheduling.backends import Backend, LocalBackend, cpu_plan
from referee.scheduling.match import schedule


class InProcessSeats:
    """Two random players in process: a game costs no engine process."""

    def players(self, job: GameJob) -> list[Player]:
        return [RandomPlayer(job.key), RandomPlayer(job.key + 1)]

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        return (EngineInfo(name="a"), EngineInfo(name="b"))

    def close(self) -> None:
        pass


JOBS = schedule(Rules(target=25), [0, 1], 6, seed=4)


def _text(log: GameLog) -> str:
    return write_game(record_from_log(log, [EngineInfo(name="a"), EngineInfo(name="b")]))


def _alone(job: GameJob) -> str:
    """The record of ``job`` played alone, here."""
    return _text(play_game(job.rules, InProcessSeats().players(job), job.seed, job.key))


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_a_local_backend_yields_the_games_in_job_order(processes: bool) -> None:
    backend: Backend = LocalBackend(2, processes=processes)
    played = list(backend.run(JOBS, InProcessSeats))
    assert [p.job for p in played] == list(JOBS)
    for done in played:
        assert isinstance(done, Played)
        assert _text(done.log) == _alone(done.job)  # the same game as played alone
        assert done.engines == (EngineInfo(name="a"), EngineInfo(name="b"))
        assert done.seconds >= 0.0


def test_a_watch_sees_every_game_s_players_and_changes_no_game() -> None:
    seen: list[int] = []

    def watch(job: GameJob, players: list[Player]) -> list[Player]:
        seen.append(job.index)
        return players

    played = list(LocalBackend(1, watch=watch).run(JOBS, InProcessSeats))
    assert seen == [job.index for job in JOBS]
    assert [_text(p.log) for p in played] == [_alone(job) for job in JOBS]


def test_stop_starts_no_new_game() -> None:
    got: list[Played] = []
    for done in LocalBackend(1).run(JOBS, InProcessSeats, stop=lambda: len(got) >= 2):
        got.append(done)
    # The game the worker had begun when the stop came is finished and yielded, in order.
    assert 2 <= len(got) <= 3
    assert [p.job.index for p in got] == list(range(len(got)))


def test_one_cpu_plan_for_both_kinds_of_run() -> None:
    assert cpu_plan(False, 4, 2) is None  # no --affinity
    assert cpu_plan(True, 4, 2, dask=True) is None  # the engines run on the cluster's workers
    tournament = cpu_plan(True, 4, 2)
    match = cpu_plan(True, 4, 2, games=1)  # one game: one worker's CPUs
    assert tournament is not None and match is not None
    assert (tournament.games, tournament.engines) == (4, 2)
    assert (match.games, match.engines) == (1, 2)
