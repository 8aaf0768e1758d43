"""Which CPUs the engines of each game run on, with ``--affinity`` (as fastchess pins them).

A match or tournament plays ``games`` games at once, one per worker, each worker with its
engines. Pinned, the games at once get disjoint CPUs, as equal in number as can be: an
engine busy in one game cannot slow down the engines of another, and a game's engines
take the same CPUs from game to game. Within a game's CPUs, each engine gets a disjoint
part of its own where there are enough for every engine of the worker; otherwise the
game's engines share them (they take turns, and the CPU limit shares the time out fairly:
``referee.seat.sandbox``). With fewer CPUs than games at once, games must share CPUs, and
`CpuPlan.warning` says so.

Pinning places the engines; it does not fence them: an engine may widen its own CPUs
again. What bounds an engine's CPU time is the sandbox's CPU limit.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass

from referee.seat.player import EngineSpec

__all__ = ["CpuPlan", "cpu_list"]


def cpu_list(cpus: Sequence[int]) -> str:
    """``(0, 1, 2, 5)`` -> ``"0-2,5"``, as ``/proc/PID/status`` writes ``Cpus_allowed_list``."""
    parts: list[str] = []
    ordered = sorted(set(cpus))
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
            first, last = ordered[start], ordered[i - 1]
            parts.append(str(first) if first == last else f"{first}-{last}")
            start = i
    return ",".join(parts)


@dataclass(frozen=True, slots=True)
class CpuPlan:
    """The CPUs of each worker's engines: ``cpus`` are those the referee may use, shared
    out among ``games`` games at once, each with ``engines`` engine processes."""

    cpus: tuple[int, ...]
    games: int
    engines: int

    @classmethod
    def here(cls, games: int, engines: int) -> CpuPlan:
        """The plan over the CPUs this process may run on."""
        return cls(tuple(sorted(os.sched_getaffinity(0))), max(1, games), max(1, engines))

    @property
    def shared(self) -> bool:
        """Whether games played at once share CPUs (there are fewer CPUs than games)."""
        return len(self.cpus) < self.games

    def game_cpus(self, worker: int) -> tuple[int, ...]:
        """The CPUs of the games of ``worker`` (from 0)."""
        n = len(self.cpus)
        if self.shared:
            return (self.cpus[worker % n],)
        slot = worker % self.games
        return self.cpus[slot * n // self.games : (slot + 1) * n // self.games]

    def engine_cpus(self, worker: int) -> list[tuple[int, ...]]:
        """The CPUs of each of ``worker``'s engines, in engine order."""
        cpus = self.game_cpus(worker)
        n = len(cpus)
        if n < self.engines:
            return [cpus] * self.engines
        k = self.engines
        return [cpus[e * n // k : (e + 1) * n // k] for e in range(k)]

    def pinned(self, specs: Sequence[EngineSpec], worker: int) -> tuple[EngineSpec, ...]:
        """``specs`` (the worker's engines, in order) with their CPUs in their policies."""
        per_engine = self.engine_cpus(worker)
        return tuple(
            dataclasses.replace(spec, sandbox=dataclasses.replace(spec.sandbox, affinity=cpus))
            for spec, cpus in zip(specs, per_engine, strict=True)
        )

    def warning(self) -> str | None:
        """The warning line to print at the start, when games at once must share CPUs."""
        if not self.shared:
            return None
        n = len(self.cpus)
        return (
            f"warning: --affinity: {n} CPU{'s' if n != 1 else ''} ({cpu_list(self.cpus)}) for"
            f" {self.games} games at once: games share CPUs, and an engine's work can slow"
            f" down another game's engines (play at most {n} at once with --concurrency)"
        )
