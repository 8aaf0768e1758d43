"""A game job: everything one game of a match needs, and nothing else.

A ``GameJob`` names the rules, the seed, the deck key and the line-up of one game; played by
``ginproto.table.play_game`` it gives one ``GameLog``. It sits below the match runner
(``referee.scheduling.match``) and the seats that play it (``referee.scheduling.seats``), which both
need it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ginproto.rules import Rules


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: ``lineup[p]`` is the engine (by its index in the match) that plays
    as player ``p``; ``key`` picks the deck sequence, shared by the games of a duplicate set."""

    index: int
    rules: Rules
    seed: int | str
    key: int
    lineup: tuple[int, ...]
