"""Search over a decision's candidate moves: the evaluation names a few, play-outs choose.

Every candidate (taking the pile's top card or drawing from the stock; one of the best
discards) is applied to a copy of each of the decision's sampled worlds (``rollout.worlds``: a
``Hand`` of the rules core dealt from this seat's view) and the hand is played to its end by the
play-out policy (``rollout.play_outs``), so every rule is the core's. This seat plays on in two
ways from there, as one play-out branched where they part: knocking as soon as it can, and
waiting for gin (``limits``); a candidate is worth the better of the two means, so a move that
keeps a hand for gin is not judged by a seat that knocks at its first chance.

The evaluation's choice stands unless another candidate beats it, in the same worlds, by more
than ``z`` standard errors of the paired difference (``choose``). With few worlds only clear
differences move a decision; more time means more worlds for the same candidates, and smaller
differences that the play-outs see can then override the evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from engines.expert.rollout import play_outs
from ginproto.hand import Hand
from ginproto.moves import Move

__all__ = ["Table", "choose", "play_candidates"]


@dataclass(frozen=True)
class Table:
    """The played-out points of each candidate, for each of this seat's ways to play on, in
    each world: ``values[candidate][limit][world]``."""

    values: list[list[list[int]]]

    def best_limit(self, candidate: int) -> int:
        """The way to play on (index into the limits) with the best mean for ``candidate``."""
        rows = self.values[candidate]
        return max(range(len(rows)), key=lambda i: (sum(rows[i]), -i))

    def row(self, candidate: int) -> list[int]:
        """``candidate``'s points per world, played on in its best way."""
        return self.values[candidate][self.best_limit(candidate)]

    def mean(self, candidate: int) -> float:
        """``candidate``'s mean points, played on in its best way."""
        row = self.row(candidate)
        return sum(row) / len(row) if row else 0.0


def play_candidates(
    worlds: Sequence[Hand], seat: int, roots: Sequence[Move], limits: Sequence[int | None]
) -> Table:
    """Each of ``roots`` (moves legal for ``seat`` now) applied to a copy of every world and
    played out for each of ``limits`` (``rollout.play_outs``); the worlds are left untouched."""
    values: list[list[list[int]]] = [[[] for _ in limits] for _ in roots]
    for world in worlds:
        for c, root in enumerate(roots):
            trial = world.clone()
            trial.apply(root)
            for i, value in enumerate(play_outs(trial, seat, limits)):
                values[c][i].append(value)
    return Table(values)


def choose(table: Table, default: int, z: float) -> int:
    """The candidate to play: ``default`` (the evaluation's choice) unless another one's mean
    beats it by more than ``z`` standard errors of their paired difference over the worlds; of
    several that do, the one with the best mean."""
    base = table.row(default)
    n = len(base)
    if n < 2:
        return default
    best, best_mean = default, table.mean(default)
    for c in range(len(table.values)):
        if c == default:
            continue
        row = table.row(c)
        diffs = [a - b for a, b in zip(row, base, strict=True)]
        mean = sum(diffs) / n
        if mean <= 0:
            continue
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        if mean > z * math.sqrt(var / n) and table.mean(c) > best_mean:
            best, best_mean = c, table.mean(c)
    return best
