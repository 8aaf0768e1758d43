"""The game clock over a match: every game starts with its whole base time, whatever the last
game cost, and the engine is told so in its ``go`` lines."""

from __future__ import annotations

import sys
from pathlib import Path

from ginproto.rules import Rules
from ginproto.table import Decision
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from tests.seat.test_clock import ENGINE, _view


def test_each_game_starts_with_the_whole_base_time(tmp_path: Path) -> None:
    """At 2+0, game 1's decision uses some of the clock; game 2 starts again from 2 s (one
    engine process plays both games)."""
    script = tmp_path / "scripted.py"
    script.write_text(ENGINE)
    sent: list[str] = []
    player = EnginePlayer(
        EngineSpec((sys.executable, str(script), "sleep", "0.2")),
        TimeControl(base=2.0, increment=0.0, move=5.0, margin=1.0),
        10.0,
        on_line=lambda direction, line: sent.append(line) if direction == "to" else None,
    )
    try:
        player.new_game(1, 0, Rules())
        player.decide(_view(), Decision.OFFER)
        assert player.clock.remaining is not None and player.clock.remaining < 1.9
        player.new_game(2, 0, Rules())
        player.decide(_view(), Decision.OFFER)
    finally:
        player.close()
    go = [line for line in sent if line.startswith("go ")]
    assert go[0] == "go offer time 2000 inc 0 movetime 5000", sent
    assert go[1] == "go offer time 2000 inc 0 movetime 5000", sent
    assert len(go) == 2
