"""Test engine for remote seats: the simple engine, which at its first decision ever (while the
file named by its argument does not exist) makes that file and kills the gin-connect that relays
it (its parent), as a dropped connection would; started again, it plays as the simple engine."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from engines.simple_engine import SimpleEngine
from ginproto.sdk import GameView, Move


def _cut() -> None:
    marker = Path(sys.argv[1])
    if not marker.exists():
        marker.write_text("cut\n")
        os.kill(os.getppid(), signal.SIGKILL)


class CutsItsRelay(SimpleEngine):
    def offer(self, view: GameView) -> Move:
        _cut()
        return super().offer(view)

    def draw(self, view: GameView) -> Move:
        _cut()
        return super().draw(view)

    def discard(self, view: GameView) -> Move:
        _cut()
        return super().discard(view)


if __name__ == "__main__":
    CutsItsRelay().run()
