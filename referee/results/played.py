"""A game to play and a game played: what every backend takes and gives back.

A ``GameJob`` names the rules, the seed, the deck key and the line-up of one game; played by
``ginproto.table.play_game`` it gives one ``GameLog``. A backend (``referee.scheduling.backends``
for local workers, ``referee.cluster`` for a Dask cluster) turns jobs into ``Played`` games,
whatever the run: a match makes records and standings of them, a tournament the rows of its
store, the live page what a spectator sees. Both sit here, below the scheduling that makes the
jobs and the views that show the games, so that each reads them without reaching the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from ginproto.record import EngineInfo
from ginproto.rules import Rules
from ginproto.table import GameLog


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: ``lineup[p]`` is the engine (by its index in the run) that plays
    as player ``p``; ``key`` picks the deck sequence, shared by the games of a duplicate set."""

    index: int
    rules: Rules
    seed: int | str
    key: int
    lineup: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Played:
    """A finished job: its game, what the record says of each player (by player number), and
    the seconds the game took where it was played."""

    job: GameJob
    log: GameLog
    engines: tuple[EngineInfo, ...]
    seconds: float = 0.0
