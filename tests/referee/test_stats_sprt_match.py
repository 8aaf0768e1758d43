"""An SPRT stops a match as soon as it decides, either way: accepting H1 (the first engine is
the stronger by ELO1) or H0 (it is not better than ELO0), which saves as many games."""

from __future__ import annotations

from referee import play_match


def test_an_sprt_that_accepts_h0_stops_the_match() -> None:
    """Random tested against simple: it is no better, and the test says so early."""
    result = play_match(["random", "simple"], games=200, seed=1, sprt=(0, 300, 0.05, 0.05))
    assert result.sprt is not None
    assert result.sprt.state == "H0" and result.sprt.llr <= result.sprt.lower
    assert result.stopped_early
    assert len(result.games) == result.standings[0].games < 200
    assert result.to_json()["sprt"]["state"] == "H0"
