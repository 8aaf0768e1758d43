"""The game clock and the per-decision limit: the arithmetic, and its use in real decisions.

Each test here stands for one way the clock could silently stop ruling: the increment not
added, an overdraft forgiven, the game clock not capping a decision's budget, or every line an
engine writes buying it a fresh timeout.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest

from ginproto.cards import DECK
from ginproto.game import Game, GameView
from ginproto.rules import Rules
from ginproto.table import Decision, FaultKind, PlayerFault
from referee.seat.clock import DEFAULT_MARGIN, PlayerClock, TimeControl, TimeControlError
from referee.seat.player import EnginePlayer, EngineSpec

# -- the arithmetic ----------------------------------------------------------------------------


def test_the_increment_is_added_after_each_decision() -> None:
    clock = PlayerClock(TimeControl(base=10.0, increment=2.0, move=30.0))
    assert clock.spend(1.0) is None
    assert clock.remaining == pytest.approx(11.0)
    assert clock.spend(0.5) is None
    assert clock.remaining == pytest.approx(12.5)


def test_an_overdraft_counts_and_flags_the_player_in_the_end() -> None:
    """At 0.3+0 a player spending 0.08 s a decision is flagged once it is 0.1 s over."""
    clock = PlayerClock(TimeControl(base=0.3, increment=0.0, move=10.0, margin=0.1))
    verdicts = [clock.spend(0.08) for _ in range(6)]
    assert verdicts[:4] == [None] * 4
    assert clock.remaining is not None and clock.remaining < -0.1
    assert "flag" in verdicts[4:]


def test_an_overdraft_within_the_margin_is_carried_to_the_next_decision() -> None:
    clock = PlayerClock(TimeControl(base=1.0, increment=0.5, move=10.0, margin=0.1))
    assert clock.spend(1.05) is None  # 0.05 s over, within the margin
    assert clock.remaining == pytest.approx(0.45)  # -0.05 + 0.5, not 0 + 0.5
    assert clock.budget() == pytest.approx(0.55)
    assert clock.spend(0.54) is None  # 0.09 s over: within the margin again
    assert clock.remaining == pytest.approx(0.41)
    assert clock.spend(0.52) == "flag"  # 0.11 s over


def test_the_budget_is_capped_by_the_game_clock_and_never_negative() -> None:
    clock = PlayerClock(TimeControl(base=1.0, increment=0.0, move=10.0, margin=0.1))
    assert clock.budget() == pytest.approx(1.1)
    clock.remaining = 20.0
    assert clock.budget() == pytest.approx(10.1)  # then by the per-move limit
    clock.remaining = -0.05
    assert clock.budget() == pytest.approx(0.05)
    clock.remaining = -0.5
    assert clock.budget() == 0.0


def test_the_per_move_limit_gives_a_timeout_verdict() -> None:
    clock = PlayerClock(TimeControl(base=None, increment=0.0, move=1.0, margin=0.1))
    assert clock.spend(1.05) is None
    assert clock.spend(1.2) == "timeout"
    assert clock.remaining is None


def test_a_time_control_carries_its_margin() -> None:
    assert TimeControl.parse("60+1").margin == DEFAULT_MARGIN == 0.1
    control = TimeControl.parse("60+1", move=5, margin=0.25)
    assert (control.base, control.increment, control.move, control.margin) == (60, 1, 5, 0.25)
    assert TimeControl.parse("inf", margin=0.3).margin == 0.3
    with pytest.raises(TimeControlError):
        TimeControl.parse("fast")


# -- in real decisions --------------------------------------------------------------------------

ENGINE = """
import sys, time
mode, arg = sys.argv[1], float(sys.argv[2])
def say(line):
    sys.stdout.write(line + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    word = line.split()[:1]
    if word == ["gin"]:
        say("id name scripted"); say("ginok protocol 1")
    elif word == ["isready"]:
        say("readyok")
    elif word == ["go"]:
        if mode == "info":  # info lines every 50 ms, then the move after ARG seconds
            start = time.monotonic()
            while time.monotonic() - start < arg:
                say("info thinking"); time.sleep(0.05)
        else:  # mode "sleep": think ARG seconds
            time.sleep(arg)
        say("move pass")
    elif word == ["quit"]:
        break
"""


def _view() -> GameView:
    game = Game(Rules(), first_dealer=1)
    game.deal(DECK)
    return game.view(0)


def _decide(tmp_path: Path, mode: str, seconds: float, control: TimeControl) -> PlayerFault:
    script = tmp_path / "scripted.py"
    script.write_text(ENGINE)
    player = EnginePlayer(
        EngineSpec((sys.executable, str(script), mode, str(seconds))), control, 10.0
    )
    try:
        player.new_game(1, 0, Rules())
        with pytest.raises(PlayerFault) as info:
            player.decide(_view(), Decision.OFFER)
    finally:
        player.close()
    return info.value


def test_info_lines_do_not_extend_a_decisions_deadline(tmp_path: Path) -> None:
    """Lines that are not the move never buy more time: the engine is ruled out at its
    deadline, long before its move comes (not when the move comes, too late)."""
    control = TimeControl(base=None, increment=0.0, move=0.3, margin=0.1)
    fault = _decide(tmp_path, "info", 3.0, control)
    assert fault.kind is FaultKind.TIMEOUT
    assert fault.detail.startswith("no move after"), fault.detail
    assert "info thinking" in fault.detail  # the ignored lines are named


def test_the_game_clock_caps_a_decision_below_the_per_move_limit(tmp_path: Path) -> None:
    """With 0.3 s on its clock and 10 s per move, the engine is flagged at the clock's end
    (with no move read), not when its move finally comes."""
    control = TimeControl(base=0.3, increment=0.0, move=10.0, margin=0.1)
    fault = _decide(tmp_path, "sleep", 2.0, control)
    assert fault.kind is FaultKind.FLAG
    assert fault.detail.startswith("game clock ran out after"), fault.detail


def test_a_go_line_never_sends_a_negative_clock(tmp_path: Path) -> None:
    """In overdraft (within the margin) the clock is sent as ``time 0``, still owed."""
    script = tmp_path / "scripted.py"
    script.write_text(ENGINE)
    sent: list[str] = []
    control = TimeControl(base=5.0, increment=0.0, move=5.0, margin=0.1)
    player = EnginePlayer(
        EngineSpec((sys.executable, str(script), "sleep", "0")),
        control,
        10.0,
        on_line=lambda direction, line: sent.append(line) if direction == "to" else None,
    )
    try:
        player.new_game(1, 0, Rules())
        player.clock.remaining = -0.05
        # 0.05 s may be too short on a busy machine; the line sent is the point.
        with contextlib.suppress(PlayerFault):
            player.decide(_view(), Decision.OFFER)
    finally:
        player.close()
    go = [line for line in sent if line.startswith("go ")]
    assert go == ["go offer time 0 inc 0 movetime 5000"], sent


SLOW_ENGINE = """
import sys, time
from engines.random_engine import RandomEngine

engine = RandomEngine()
for line in sys.stdin:
    if line.startswith("go "):
        time.sleep(0.04)
    if not engine.handle(line, sys.stdout):
        break
"""


def test_a_bot_that_keeps_overdrawing_its_clock_is_flagged(tmp_path: Path) -> None:
    """40 ms a decision at 0.3+0, margin 0.25 s: no one decision is near the margin, but the
    clock is empty after eight, and the bot is flagged once its overdraft passes the margin,
    in every game (its opponent has no clock)."""
    from referee.scheduling.match import MatchConfig, run_match

    script = tmp_path / "slow.py"
    script.write_text(SLOW_ENGINE)
    root = Path(__file__).resolve().parents[2]
    slow = EngineSpec(
        (sys.executable, str(script)),
        control=TimeControl(base=0.3, increment=0.0, move=10.0, margin=0.25),
        env=(("PYTHONPATH", str(root)),),
    )
    config = MatchConfig(
        engines=(slow, EngineSpec.parse("simple")),  # it knocks early: short games
        rules=Rules(target=25),  # short games, each still far longer than eight decisions
        games=2,
        seed=3,
        control=TimeControl(base=None, increment=0.0, move=10.0),
    )
    result = run_match(config, ["slow", "simple"])
    slow_tally, other_tally = result.standings
    assert slow_tally.faults == {"flag": 2}, slow_tally.faults
    assert not other_tally.faults
