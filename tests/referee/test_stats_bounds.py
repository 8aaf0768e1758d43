"""The statistics refuse what they cannot mean, at their exact bounds, and the SPRT's one
special case (a run of identical results) has its hand-worked value."""

from __future__ import annotations

import math

import pytest

from referee.results import stats
from referee.results.stats import MAX_SPRT_ELO, SPRT


@pytest.mark.parametrize("counts", [(-1, 0, 0), (0, -1, 0), (0, 0, -1)])
def test_negative_counts_are_refused(counts: tuple[int, int, int]) -> None:
    w, lost, d = counts
    with pytest.raises(ValueError, match="non-negative"):
        stats.elo_interval(w, lost, d)
    with pytest.raises(ValueError, match="non-negative"):
        stats.sprt_llr(w, lost, d, 0, 10)
    with pytest.raises(ValueError, match="non-negative"):
        SPRT(0, 10).update(w, lost, d)
    if d == 0:
        with pytest.raises(ValueError, match="non-negative"):
            stats.los(w, lost)


def test_sprt_bounds_are_exact() -> None:
    s = SPRT(-MAX_SPRT_ELO, MAX_SPRT_ELO, 0.05, 0.1)
    assert (s.elo0, s.elo1, s.alpha, s.beta) == (-2000.0, 2000.0, 0.05, 0.1)
    assert s.lower == pytest.approx(math.log(0.1 / 0.95))
    assert s.upper == pytest.approx(math.log(0.9 / 0.05))
    for alpha, beta in ((0.0, 0.05), (1.0, 0.05), (0.05, 0.0), (0.05, 1.0), (2.0, 0.5)):
        with pytest.raises(ValueError, match="ALPHA and BETA must be between 0 and 1"):
            SPRT(0, 10, alpha, beta)
    for elo0, elo1 in ((-2000.5, 0), (0, 2000.5), (-3000, -2500), (math.nan, 5), (0, math.inf)):
        with pytest.raises(ValueError, match="between -2000 and 2000"):
            SPRT(elo0, elo1)
    for elo0, elo1 in ((5, 5), (10, 0)):
        with pytest.raises(ValueError, match="need ELO0 < ELO1"):
            SPRT(elo0, elo1)


def test_a_run_of_draws_gets_the_pseudo_game_value() -> None:
    # 0-0-10: no variance, so half a win and half a loss are added (m = 11): a = 1/2,
    # var = 3/11 - 1/4 = 1/44, and the LLR for 0 vs 50 Elo is -242 (s1 - 1/2)^2.
    s1 = stats.expected_score(50)
    assert stats.sprt_llr(0, 0, 10, 0, 50) == pytest.approx(-242 * (s1 - 0.5) ** 2)
    assert stats.sprt_llr(0, 0, 10, 0, 50) == pytest.approx(-1.23589, abs=1e-4)
    assert stats.sprt_llr(0, 0, 0, 0, 50) == 0.0


def test_a_refused_update_leaves_the_sprt_as_it_was() -> None:
    s = SPRT(0, 10)
    s.update(1, 0, 0)
    for counts in ((-1, 0, 0), (0, -1, 0), (0, 0, -1)):
        with pytest.raises(ValueError, match="non-negative"):
            s.update(*counts)
        assert (s.wins, s.losses, s.draws) == (1, 0, 0)
    s.update(0, 0, 1)
    s.update(0, 2, 1)
    assert (s.wins, s.losses, s.draws) == (1, 2, 2)
