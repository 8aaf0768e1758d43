"""A tournament's plan: its pairings and their games. Game ``r`` of every pairing is dealt
from the same deck key, so every engine meets the same deals, and the seats rotate within each
pairing (balanced when the games per pairing are a multiple of the players; otherwise each
pairing starts one seat further, which balances them over the pairings). Pairings are
interleaved, one game of each in turn, so partial results cover every pairing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from ginproto.rules import Rules
from referee.results.played import GameJob
from referee.results.store import Scheduled
from referee.scheduling.config import TournamentConfig, pairings
from referee.scheduling.match import Schedule, schedule

log = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class Plan:
    pairings: tuple[tuple[int, ...], ...]
    games: Sequence[Scheduled]


class _Games(Sequence[Scheduled]):
    """A tournament's games in playing order, made on demand: round by round, each pairing's
    game of that round in turn. Game ``i`` is round ``i // P`` of pairing ``i % P``."""

    def __init__(self, per_pairing: Sequence[Schedule], rounds: int, seed: int | str) -> None:
        self.per_pairing = per_pairing
        self.rounds = rounds
        self.seed = seed

    def __len__(self) -> int:
        return self.rounds * len(self.per_pairing)

    @overload
    def __getitem__(self, i: int) -> Scheduled: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Scheduled]: ...
    def __getitem__(self, i: int | slice) -> Scheduled | Sequence[Scheduled]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("game index out of range")
        r, p = divmod(i, len(self.per_pairing))
        job = self.per_pairing[p][r]
        return Scheduled(i, p, r, job.lineup, self.seed, job.key)

    def __iter__(self) -> Iterator[Scheduled]:
        return (self[i] for i in range(len(self)))


def plan(config: TournamentConfig) -> Plan:
    """Every game of the tournament, in the order they are played (made as they are read)."""
    if config.seed is None:
        raise ValueError("the seed is not chosen yet")
    groups = pairings(config.format, len(config.engines), config.rules.players)
    n = config.rules.players
    # Each pairing starts its seat rotation one further than the last, so that an engine's
    # seats stay balanced over the pairings even when the games per pairing are not.
    per_pairing = [
        schedule(
            config.rules,
            group[p % n :] + group[: p % n],
            config.games,
            config.seed,
            config.duplicate,
        )
        for p, group in enumerate(groups)
    ]
    return Plan(tuple(groups), _Games(per_pairing, config.games, config.seed))


def job_of(game: Scheduled, rules: Rules) -> GameJob:
    return GameJob(game.game, rules, game.seed, game.key, game.seats)
