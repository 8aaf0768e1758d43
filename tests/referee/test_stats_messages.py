"""The exact words of the statistics' refusals, which callers show to users as they are, and
the bounds of the SPRT's Elo range (each end allowed, the refusal naming the right problem)."""

from __future__ import annotations

import pytest

from referee.results import stats
from referee.results.stats import MAX_SPRT_ELO, SPRT


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stats.los(-1, 2), "counts must be non-negative"),
        (lambda: stats.sprt_llr(1, -2, 0, 0, 10), "counts must be non-negative"),
        (lambda: SPRT(0, 10).update(0, 0, -1), "counts must be non-negative"),
        (lambda: stats.mean_interval([]), "mean_interval of no values"),
        (lambda: stats.RunningMean().interval(), "mean_interval of no values"),
        (lambda: stats.pair_stats([]), "pair_stats of no pairs"),
        (
            lambda: stats.elo_mle([("a", "b", 0.5)], prior_draws=-0.5),
            "prior_draws must be non-negative",
        ),
    ],
)
def test_refusals_say_exactly_what_is_wrong(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


def test_the_ends_of_the_sprt_elo_range_are_allowed() -> None:
    s = SPRT(-MAX_SPRT_ELO, MAX_SPRT_ELO)
    assert (s.elo0, s.elo1) == (-MAX_SPRT_ELO, MAX_SPRT_ELO)


@pytest.mark.parametrize("elo", [MAX_SPRT_ELO, -MAX_SPRT_ELO])
def test_equal_bounds_at_an_end_of_the_range_are_refused_as_equal(elo: float) -> None:
    """At the very end of the range the bounds are in range; what is wrong is that they are
    equal, and the refusal says so."""
    with pytest.raises(ValueError) as info:
        SPRT(elo, elo)
    assert str(info.value) == f"need ELO0 < ELO1, not {elo} and {elo}"


def test_bounds_past_the_range_are_refused_with_the_range() -> None:
    with pytest.raises(ValueError) as info:
        SPRT(0, MAX_SPRT_ELO + 1)
    assert (
        str(info.value)
        == f"ELO0 and ELO1 must be between -2000 and 2000, not 0 and {MAX_SPRT_ELO + 1}"
    )
