"""The clock's arithmetic, asserted directly: what a decision may take, what it costs, when it
flags, and how a time control and a duration are read.

Times are given to the clock, never measured here, so these tests need no process and no
timing threshold.
"""

from __future__ import annotations

import math

import pytest

from referee.seat.clock import MAX_SECONDS, PlayerClock, TimeControl, TimeControlError, duration


def clock(base: float | None = 10.0, inc: float = 2.0, move: float = 5.0) -> PlayerClock:
    return PlayerClock(TimeControl(base, inc, move, margin=0.1))


def test_the_increment_is_added_after_a_decision_in_time() -> None:
    c = clock(base=10, inc=2)
    assert c.spend(1.0) is None
    assert c.remaining == pytest.approx(11.0)
    assert c.spend(3.0) is None
    assert c.remaining == pytest.approx(10.0)


def test_without_a_game_clock_nothing_is_counted() -> None:
    c = clock(base=None, inc=0, move=5)
    assert c.remaining is None
    assert c.spend(4.0) is None
    assert c.remaining is None
    assert c.budget() == pytest.approx(5.1)  # the move limit and the margin


def test_the_budget_is_the_move_limit_or_the_game_clock_whichever_is_less() -> None:
    assert clock(base=100, move=5).budget() == pytest.approx(5.1)
    assert clock(base=1, move=5).budget() == pytest.approx(1.1)
    c = clock(base=6, inc=0, move=5)
    assert c.spend(4.0) is None
    assert c.budget() == pytest.approx(2.1)  # 2 s left on the game clock


def test_a_decision_past_the_move_limit_is_a_timeout() -> None:
    assert clock(base=None, move=5).spend(5.05) is None  # within the margin
    assert clock(base=None, move=5).spend(5.2) == "timeout"
    assert clock(base=1000, move=5).spend(5.2) == "timeout"


def test_running_out_of_the_game_clock_is_a_flag() -> None:
    c = clock(base=3, inc=0, move=5)
    assert c.spend(3.05) is None  # within the margin
    assert clock(base=3, inc=0, move=5).spend(3.2) == "flag"
    assert clock(base=3, inc=10, move=5).spend(3.2) == "flag"  # the increment comes too late


def test_time_controls_read_and_show() -> None:
    tc = TimeControl.parse("60+0.5", move=3)
    assert (tc.base, tc.increment, tc.move) == (60.0, 0.5, 3.0)
    assert str(tc) == "60+0.5/move 3"
    assert TimeControl.parse(" 90 ").increment == 0.0
    for text in ("inf", "none", "0"):
        none = TimeControl.parse(text, move=2)
        assert (none.base, none.increment, none.move) == (None, 0.0, 2.0)
        assert str(none) == "inf/move 2"
    for bad in ("", "60+", "+1", "-5+1", "60+-1", "1e3", "sixty", "60+1+1", "0.0"):
        with pytest.raises(TimeControlError):
            TimeControl.parse(bad)


def test_the_defaults_of_a_time_control() -> None:
    for text in ("60", "60+1", "inf"):
        tc = TimeControl.parse(text)
        assert (tc.move, tc.margin) == (10.0, 0.1)
    assert TimeControl.parse("60+1", move=4, margin=0.3).margin == 0.3
    assert TimeControl.parse("inf", move=4, margin=0.3).margin == 0.3


def test_time_control_errors_say_what_is_wrong() -> None:
    with pytest.raises(TimeControlError, match=r"BASE\+INC in seconds .* not 'sixty'"):
        TimeControl.parse("sixty")
    with pytest.raises(TimeControlError, match="the base time is too long"):
        TimeControl.parse("99999999999999+0")
    with pytest.raises(TimeControlError, match="the increment is too long"):
        TimeControl.parse("60+99999999999999")
    with pytest.raises(TimeControlError, match="the base time must be more than zero"):
        TimeControl.parse("0.0+1")
    with pytest.raises(TimeControlError, match="the move timeout must be"):
        TimeControl.parse("60+1", move=math.inf)


def test_durations_are_finite_positive_and_fit_a_protocol_line() -> None:
    assert duration(2, "x") == 2.0
    assert duration(1, "x") == 1.0
    assert duration("1", "x", zero=True) == 1.0
    assert duration(0.001, "x") == 0.001  # the shortest
    assert duration("0.5", "x") == 0.5
    assert duration(0, "x", zero=True) == 0.0
    assert duration(MAX_SECONDS, "x") == MAX_SECONDS
    assert MAX_SECONDS * 1000 == 999_999_999_999
    for bad in (math.inf, -math.inf, math.nan, "nan", "inf", 0, -1, "x", True, None, [1]):
        with pytest.raises(TimeControlError, match="the timeout"):
            duration(bad, "the timeout")
    with pytest.raises(TimeControlError, match="too long"):
        duration(MAX_SECONDS * 1.001, "x")
    with pytest.raises(TimeControlError, match=r"at least 0\.001"):
        duration(0.0001, "x")
    with pytest.raises(TimeControlError):
        duration(-1, "x", zero=True)


def test_a_nearly_spent_clock_keeps_its_fraction_of_a_second() -> None:
    c = clock(base=0.5, inc=0.0, move=5)
    assert c.spend(0.3) is None
    assert c.remaining == pytest.approx(0.2)
    assert c.budget() == pytest.approx(0.3)  # 0.2 s left, plus the margin
    with pytest.raises(TimeControlError, match="zero or more seconds"):
        duration(-1, "x", zero=True)
