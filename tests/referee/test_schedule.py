"""Schedules are made on demand: a match or tournament of any length costs the same memory.

``ginref match --games 1000000000000`` must start at once and play game after game, not build
every job before the first one. The memory is measured with ``tracemalloc`` (allocations, not
time), against a schedule of a million games, which a list would need well over 100 MB for.
"""

from __future__ import annotations

import itertools
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

from helpers import RandomPlayer

from ginproto.record import EngineInfo
from ginproto.rules import Rules, Variant
from ginproto.table import GameLog, Player
from referee.results.played import GameJob
from referee.scheduling.backends import LocalBackend
from referee.scheduling.config import TournamentConfig
from referee.scheduling.loader import build_config
from referee.scheduling.match import schedule
from referee.scheduling.plan import plan

T = TypeVar("T")
MILLION = 10**6
HUGE = 10**12


def peak_bytes(make: Callable[[], T]) -> tuple[T, int]:
    tracemalloc.start()
    try:
        value = make()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def old_schedule(
    rules: Rules, engines: list[int], games: int, seed: int, duplicate: bool
) -> list[GameJob]:
    """The schedule as a list, the way it was always made: the games must not change."""
    n = len(engines)
    return [
        GameJob(
            i, rules, seed, i // n if duplicate else i,
            tuple(engines[(p + i % n) % n] for p in range(n)),
        )
        for i in range(games)
    ]


def test_a_schedule_of_a_million_games_takes_no_memory() -> None:
    jobs, peak = peak_bytes(lambda: schedule(Rules(), [0, 1], MILLION, seed=5, duplicate=True))
    assert peak < 100_000, f"{peak} bytes for the schedule"
    assert len(jobs) == MILLION


def test_a_huge_schedule_gives_its_first_and_last_games() -> None:
    rules = Rules(variant=Variant.THREEHANDED)
    jobs = schedule(rules, [0, 1, 2], HUGE, seed=9, duplicate=True)
    assert len(jobs) == HUGE
    first = list(itertools.islice(jobs, 7))
    assert first == old_schedule(rules, [0, 1, 2], 7, 9, True)
    last = jobs[-1]
    assert (last.index, last.key, last.lineup) == (HUGE - 1, (HUGE - 1) // 3, (0, 1, 2))


def test_the_games_are_the_same_as_before() -> None:
    for rules, engines in ((Rules(), [0, 1]), (Rules(variant=Variant.THREEHANDED), [2, 0, 1])):
        for duplicate in (False, True):
            jobs = schedule(rules, engines, 13, seed=3, duplicate=duplicate)
            assert list(jobs) == old_schedule(rules, engines, 13, 3, duplicate)
            assert [jobs[i] for i in range(13)] == list(jobs)


class InProcessSeats:
    """Two random players in process: a game costs no engine process."""

    def players(self, job: GameJob) -> list[Player]:
        return [RandomPlayer(job.key), RandomPlayer(job.key + 1)]

    def finished(self, job: GameJob, game: GameLog) -> tuple[EngineInfo, ...]:
        return (EngineInfo(name="a"), EngineInfo(name="b"))

    def close(self) -> None:
        pass


def test_running_a_huge_schedule_reads_only_the_games_it_plays() -> None:
    def play_three() -> list[int]:
        jobs = schedule(Rules(target=10), [0, 1], MILLION, seed=1)
        played: list[int] = []
        for done in LocalBackend(1).run(jobs, InProcessSeats, stop=lambda: len(played) >= 3):
            played.append(done.job.index)
        return played

    played, peak = peak_bytes(play_three)
    assert played[:3] == [0, 1, 2]
    # A million jobs queued up front take far more than this; three games take far less.
    assert peak < 20_000_000, f"{peak} bytes"


def test_a_huge_tournament_plan_is_made_on_demand() -> None:
    def make() -> TournamentConfig:
        table = {
            "games": HUGE,
            "seed": 4,
            "engines": [{"command": "random"}, {"command": "simple"}, {"command": "random"}],
        }
        return build_config(table)

    config = make()
    p, peak = peak_bytes(lambda: plan(config))
    assert peak < 100_000, f"{peak} bytes for the plan"
    assert len(p.games) == 3 * HUGE
    first = list(itertools.islice(p.games, 4))
    assert [(g.game, g.pairing, g.round) for g in first] == [
        (0, 0, 0), (1, 1, 0), (2, 2, 0), (3, 0, 1)
    ]
    assert p.games[-1].round == HUGE - 1
