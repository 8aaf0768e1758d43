"""One engine process as a player, asserted directly: the deadline of a decision, whatever
the engine writes meanwhile (the clock it is sent is tests/protocol/test_engine_protocol.py's).

The engines are a few lines of Python written here, one behaviour each. A decision that never
ends is caught by a guard thread, so a broken deadline fails the test instead of hanging it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from ginproto.game import GameView
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import Decision, FaultKind, PlayerFault
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from tests.helpers import first_view

SCRIPT = """
import sys, time
mode = sys.argv[1]
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "gin":
        print("id name Scripted\\nginok protocol 1", flush=True)
    elif word == "isready":
        print("readyok", flush=True)
    elif word == "go":
        if mode == "chatty":
            while True:
                print("info thinking", flush=True)
                time.sleep(0.05)
        if mode == "slow":
            time.sleep(float(sys.argv[2]))
        print("move pass", flush=True)
    elif word == "quit":
        break
"""


def player(
    tmp_path: Path, control: TimeControl, *mode: str, sent: list[str] | None = None
) -> EnginePlayer:
    script = tmp_path / "engine.py"
    script.write_text(SCRIPT)
    spec = EngineSpec((sys.executable, str(script), *mode))

    def on_line(direction: str, line: str) -> None:
        if sent is not None and direction == "to":
            sent.append(line)

    p = EnginePlayer(spec, control, startup_timeout=20.0, on_line=on_line)
    # Started from this thread: an engine dies with the thread that started it (pdeathsig).
    p.start()
    p.new_game(1, 0, Rules())
    return p


def decide(p: EnginePlayer, view: GameView, guard: float = 30.0) -> Move | PlayerFault:
    """The engine's decision or its fault; fails if the decision outlives ``guard`` seconds."""
    out: list[Move | PlayerFault] = []

    def run() -> None:
        try:
            out.append(p.decide(view, Decision.OFFER))
        except PlayerFault as fault:
            out.append(fault)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(guard)
    if t.is_alive():
        p.close()
        pytest.fail("the decision never ended: its deadline was not kept")
    return out[0]


def test_info_lines_do_not_extend_the_deadline(tmp_path: Path) -> None:
    p = player(tmp_path, TimeControl(None, 0.0, 0.5), "chatty")
    try:
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.TIMEOUT
        assert "info thinking" in fault.detail
    finally:
        p.close()


def test_a_late_answer_is_a_timeout(tmp_path: Path) -> None:
    p = player(tmp_path, TimeControl(None, 0.0, 0.3), "slow", "1.5")
    try:
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.TIMEOUT
    finally:
        p.close()


def test_the_decision_is_cut_off_when_the_game_clock_runs_out(tmp_path: Path) -> None:
    # A move limit of 60 s, but only 0.4 s on the game clock: the engine that takes 20 s
    # flags, and the referee does not wait for the move limit.
    p = player(tmp_path, TimeControl(0.4, 0.0, 60.0), "slow", "20")
    try:
        fault = decide(p, first_view(), guard=15.0)
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.FLAG
    finally:
        p.close()
