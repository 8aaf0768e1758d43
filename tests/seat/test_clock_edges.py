"""The exact edges of the clock's rulings: a decision that uses all of its time and all of the
grace is still in time; a hair more is not. The times are exact binary fractions."""

from __future__ import annotations

from referee.seat.clock import PlayerClock, TimeControl


def test_the_whole_move_limit_and_grace_is_in_time() -> None:
    clock = PlayerClock(TimeControl(None, 0.0, move=2.0, margin=0.5))
    assert clock.spend(2.5) is None
    assert clock.spend(2.5 + 2**-20) == "timeout"


def test_the_whole_game_clock_and_grace_is_in_time() -> None:
    clock = PlayerClock(TimeControl(1.0, 0.25, move=10.0, margin=0.5))
    assert clock.spend(1.5) is None
    assert clock.remaining == -0.5 + 0.25  # the overdraft stands, the increment is added
    other = PlayerClock(TimeControl(1.0, 0.25, move=10.0, margin=0.5))
    assert other.spend(1.5 + 2**-20) == "flag"
