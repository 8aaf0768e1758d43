"""Test engine that loads the CPU, and tells which CPUs it may run on.

``cpu_load.py [--spin N] [--work SECONDS]``: it plays as the built-in ``simple`` engine (which
knocks as soon as it can, so that games are short). With ``--spin N`` it keeps N busy processes
spinning during its opponent's turns: a CPU hog. They stop from the moment its own turn's
position comes until it has discarded (or passed), so that the hog answers in time itself (a
hog that made itself time out would end the game before it shows anything). With
``--work SECONDS`` it spends that much CPU time on each decision before answering: an engine
that needs the CPU to keep its move limit. At the start it writes on stderr ``cpus <list>``,
the CPUs it may run on (``Cpus_allowed_list`` in ``/proc/self/status``), and with ``--spin``,
``spinning N`` once the spinners have started.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import sys
import time
from typing import TextIO

from engines.simple_engine import SimpleEngine
from ginproto.moves import MoveKind
from ginproto.sdk import GameView, Move


def _allowed_cpus() -> str:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return "?"


def _spinner() -> None:
    """A child that spins until its parent dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    while True:
        pass


def _ours(line: str) -> bool:
    """Whether the line asks for (or comes right before) a decision of this engine's."""
    return line.startswith(("position ", "go "))


_TURN_ENDS = (MoveKind.PASS, MoveKind.DISCARD, MoveKind.KNOCK, MoveKind.BIG_GIN)


class CpuLoad(SimpleEngine):
    name = "CpuLoad"
    author = "ginproto tests"

    def __init__(self, spin: int, work: float) -> None:
        super().__init__()
        self.work = work
        self.turn_over = True  # whether its last move ended its turn
        self.spinners = 0  # the spinners' process group
        for _ in range(spin):
            pid = os.fork()
            if pid == 0:
                os.setpgid(0, self.spinners)
                _spinner()
            self.spinners = self.spinners or pid
            with contextlib.suppress(OSError):  # the child may have done it first
                os.setpgid(pid, self.spinners)
        if spin:
            sys.stderr.write(f"spinning {spin}\n")
            sys.stderr.flush()

    def handle(self, line: str, stdout: TextIO) -> bool:
        if self.spinners and _ours(line):
            os.killpg(self.spinners, signal.SIGSTOP)  # its own turn: the spinners rest
        try:
            return super().handle(line, stdout)
        finally:
            if self.spinners and line.startswith("go ") and self.turn_over:
                os.killpg(self.spinners, signal.SIGCONT)  # the opponent's turn

    def _work(self, move: Move) -> Move:
        end = time.process_time() + self.work
        while time.process_time() < end:
            pass
        self.turn_over = move.kind in _TURN_ENDS
        return move

    def offer(self, view: GameView) -> Move:
        return self._work(super().offer(view))

    def draw(self, view: GameView) -> Move:
        return self._work(super().draw(view))

    def discard(self, view: GameView) -> Move:
        return self._work(super().discard(view))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--spin", type=int, default=0)
    parser.add_argument("--work", type=float, default=0.0)
    args = parser.parse_args()
    sys.stderr.write(f"cpus {_allowed_cpus()}\n")
    sys.stderr.flush()
    CpuLoad(args.spin, args.work).run()
