"""Faults as a person reads them: the kind and, in a few words, why.

``ginref match`` and ``ginref tournament`` name each forfeit on their progress line and list
them under the result block; ``--json`` carries the same words. Everything shown here comes
from the ruling (``ginproto.table.Fault``): its reason and the last lines of the engine's
standard error, both made printable and bounded where they were taken, and escaped again
here, since an engine chose them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from ginproto.table import Fault
from ginproto.text import REASON_LIMIT, printable

__all__ = ["FAULTS_SHOWN", "Forfeit", "fault_lines", "fault_words", "stderr_block"]

FAULTS_SHOWN: Final = 20
"""Forfeits listed under a result block; ``--json`` lists them all."""


def fault_words(kind: str, reason: str) -> str:
    """``"crash, exited with code 1: ValueError: bad state"``: the kind, then why."""
    reason = printable(reason, REASON_LIMIT)
    return f"{kind}, {reason}" if reason else kind


def stderr_block(lines: Sequence[str], indent: str = "    ") -> list[str]:
    """The engine's last stderr lines, each set off as the engine's (``| ...``)."""
    if not lines:
        return [f"{indent}(nothing on its stderr)"]
    return [f"{indent}| {printable(line, REASON_LIMIT)}" for line in lines]


class Forfeit(NamedTuple):
    """One forfeit to list: the game's number, the engine's name, the fault's kind, why,
    and the end of the engine's stderr."""

    game: int
    name: str
    kind: str
    reason: str
    stderr: tuple[str, ...] = ()

    @classmethod
    def of(cls, game: int, name: str, fault: Fault) -> Forfeit:
        return cls(game, name, fault.kind.value, fault.why, fault.stderr)


def fault_lines(
    faults: Sequence[Forfeit], verbose: bool = False, title: str = "Forfeits:"
) -> list[str]:
    """The forfeits of a run under its result block: ``game N: NAME forfeits: KIND,
    REASON``, the first `FAULTS_SHOWN` of them; with ``verbose`` each with the end of the
    engine's stderr. Nothing when there were none."""
    if not faults:
        return []
    out = ["", title]
    for forfeit in faults[:FAULTS_SHOWN]:
        words = fault_words(forfeit.kind, forfeit.reason)
        out.append(f"  game {forfeit.game}: {printable(forfeit.name)} forfeits: {words}")
        if verbose:
            out += stderr_block(forfeit.stderr, "      ")
    left = len(faults) - FAULTS_SHOWN
    if left > 0:
        out.append(f"  ... and {left} more (--json lists every one)")
    return out
