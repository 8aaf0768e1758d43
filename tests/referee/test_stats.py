"""Match statistics against numbers worked out by hand from the published formulas.

Each expected value is derived in a comment from its formula, so a reader can redo it with a
pocket calculator; z = 1.959964 is the two-sided 95% normal quantile.
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from referee.results.stats import (
    ELO_PER_NAT,
    SPRT,
    elo_from_score,
    elo_interval,
    elo_mle,
    expected_score,
    los,
    mean_interval,
    pair_stats,
    pentanomial,
    sprt_llr,
)

Z95 = 1.959964
approx = pytest.approx


# --------------------------------------------------------------------------- Elo


def test_elo_from_score_hand_values() -> None:
    # -400 log10(1/0.6 - 1) = -400 log10(2/3) = 400 * 0.176091 = 70.4365
    assert elo_from_score(0.6) == approx(70.4365, abs=1e-4)
    # -400 log10(1/3) = 400 * 0.477121 = 190.8485
    assert elo_from_score(0.75) == approx(190.8485, abs=1e-4)
    assert elo_from_score(0.25) == approx(-190.8485, abs=1e-4)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.0) == -math.inf
    assert elo_from_score(1.0) == math.inf
    with pytest.raises(ValueError):
        elo_from_score(1.5)


def test_expected_score_inverts_elo_from_score() -> None:
    for score in (0.01, 0.2, 0.5, 0.6, 0.93):
        assert expected_score(elo_from_score(score)) == approx(score, abs=1e-12)
    # 1 / (1 + 10^(-10/400)) = 1 / 1.944061 = 0.514387
    assert expected_score(10) == approx(0.514387, abs=1e-6)


def test_elo_interval_60_40_0() -> None:
    # mu = 0.6, var = 0.6 * 0.4^2 + 0.4 * 0.6^2 = 0.24, stderr = sqrt(0.24 / 100) = 0.0489898
    # mu -+ z * stderr = 0.6 -+ 0.0960182 -> scores 0.5039818 and 0.6960182
    # elo: -400 log10(1/0.5039818 - 1) = 2.7669, -400 log10(1/0.6960182 - 1) = 143.9092
    elo, lo, hi = elo_interval(60, 40, 0)
    assert elo == approx(70.4365, abs=1e-4)
    assert lo == approx(2.7669, abs=1e-4)
    assert hi == approx(143.9092, abs=1e-4)
    assert (hi - lo) / 2 == approx(70.571, abs=1e-3)  # cutechess's "+-" margin
    wider = elo_interval(60, 40, 0, confidence=0.99)
    assert wider.lo < lo and wider.hi > hi


def test_elo_interval_with_draws() -> None:
    # 30-20-50: mu = 0.55, var = (30 * 0.45^2 + 50 * 0.05^2 + 20 * 0.55^2) / 100 = 0.1225
    # stderr = sqrt(0.1225 / 100) = 0.035, half width = 0.0685987 -> 0.4814013 .. 0.6185987
    result = elo_interval(30, 20, 50)
    assert result.elo == approx(elo_from_score(0.55))
    assert result.lo == approx(elo_from_score(0.55 - Z95 * 0.035), abs=1e-3)
    assert result.hi == approx(elo_from_score(0.55 + Z95 * 0.035), abs=1e-3)


def test_elo_interval_extremes() -> None:
    assert elo_interval(10, 0, 0) == (math.inf, math.inf, math.inf)
    assert elo_interval(0, 10, 0) == (-math.inf, -math.inf, -math.inf)
    assert elo_interval(0, 0, 10) == (0.0, 0.0, 0.0)
    # one loss in ten: the lower end is finite, the upper one is clamped at a score of 1
    elo, lo, hi = elo_interval(9, 1, 0)
    assert math.isfinite(elo) and math.isfinite(lo) and hi == math.inf
    with pytest.raises(ValueError):
        elo_interval(0, 0, 0)


def test_los_hand_values() -> None:
    # (10 - 5) / sqrt(2 * 15) = 0.912871; erf(0.912871) = 0.803294; LOS = 0.901647
    assert los(10, 5) == approx(0.901647, abs=1e-6)
    assert los(10, 5) == approx(NormalDist().cdf(5 / math.sqrt(15)))  # the same, as Phi
    assert los(5, 10) == approx(1 - 0.901647, abs=1e-6)
    assert los(7, 7) == 0.5
    assert los(0, 0) == 0.5


# --------------------------------------------------------------------------- SPRT


def test_sprt_bounds() -> None:
    sprt = SPRT(0, 10, alpha=0.05, beta=0.05)
    # ln(0.05 / 0.95) = -ln 19 = -2.944439
    assert sprt.lower == approx(-2.944439, abs=1e-6)
    assert sprt.upper == approx(2.944439, abs=1e-6)
    other = SPRT(0, 5, alpha=0.05, beta=0.1)
    assert other.lower == approx(math.log(0.1 / 0.95))  # -2.251292
    assert other.upper == approx(math.log(18))  # 2.890372
    with pytest.raises(ValueError):
        SPRT(5, 0)
    with pytest.raises(ValueError):
        SPRT(0, 5, alpha=0.0)


def test_sprt_llr_hand_values() -> None:
    s0, s1 = 0.5, 0.5143872  # expected scores at 0 and 10 Elo
    # 60-40-0: a = 0.6, var = 0.6 - 0.36 = 0.24, var/n = 0.0024
    # LLR = (s1 - s0)(2a - s0 - s1) / (2 var/n) = 0.0143872 * 0.1856128 / 0.0048 = 0.556343
    assert sprt_llr(60, 40, 0, 0, 10) == approx(0.556343, abs=1e-5)
    assert sprt_llr(60, 40, 0, 0, 10) == approx((s1 - s0) * (1.2 - s0 - s1) / 0.0048, abs=1e-5)
    # 30-20-50: a = 0.55, var = (30 + 12.5) / 100 - 0.3025 = 0.1225, var/n = 0.001225
    # LLR = 0.0143872 * 0.0856128 / 0.00245 = 0.502746
    assert sprt_llr(30, 20, 50, 0, 10) == approx(0.502746, abs=1e-5)
    assert sprt_llr(0, 0, 0, 0, 10) == 0.0
    # No variance yet: one pseudo-game of score 1/2 is added. 10 wins, 0 vs 50 Elo:
    # m = 11, a = 10.5/11, var = a - a^2, LLR = (s1 - s0)(2a - s0 - s1) / (2 var / m).
    a = 10.5 / 11
    s0, s1 = 0.5, 1 / (1 + 10 ** (-50 / 400))
    expected = (s1 - s0) * (2 * a - s0 - s1) / (2 * (a - a * a) / 11)
    assert sprt_llr(10, 0, 0, 0, 50) == approx(expected, abs=1e-9)
    assert expected == approx(7.59, abs=0.01)
    assert sprt_llr(0, 10, 0, 0, 50) < -2.944  # a sweep the other way accepts H0


def test_sprt_states() -> None:
    sprt = SPRT(0, 10)
    assert sprt.state == "continue" and sprt.llr == 0.0
    assert sprt.update(60, 40, 0) == "continue"
    assert sprt.llr == approx(0.556343, abs=1e-5)
    # ten times the same results: the LLR scales with n, 5.563 > 2.944
    assert sprt.update(540, 360, 0) == "H1"
    assert (sprt.wins, sprt.losses, sprt.draws) == (600, 400, 0)

    even = SPRT(0, 10)
    for _ in range(5000):
        even.update(wins=1)
        even.update(losses=1)
    # a = 0.5, var = 0.25: LLR = 0.0143872 * (1 - 1.0143872) / (2 * 0.25 / 10000) = -4.1398
    assert even.llr == approx(-4.1398, abs=1e-3)
    assert even.state == "H0"
    assert "H0" in repr(even)


# --------------------------------------------------------------------------- means and pairs


def test_mean_interval_hand_values() -> None:
    # mean 3, sample stdev sqrt(2.5) = 1.581139, half width 1.959964 * 1.581139 / sqrt(5) = 1.385904
    mean, lo, hi = mean_interval([1, 2, 3, 4, 5])
    assert mean == 3.0
    assert lo == approx(3 - 1.385904, abs=1e-6)
    assert hi == approx(3 + 1.385904, abs=1e-6)
    assert mean_interval([7.0]) == (7.0, -math.inf, math.inf)
    assert mean_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError):
        mean_interval([])


def test_pentanomial_counts() -> None:
    assert pentanomial([0, 0.5, 1, 1, 1.5, 2, 2, 2]) == (1, 1, 2, 1, 3)
    with pytest.raises(ValueError):
        pentanomial([0.3])
    with pytest.raises(ValueError):
        pentanomial([2.5])


def test_pair_stats_hand_values() -> None:
    # counts (0, 1, 4, 2, 3) over 10 pairs; pair scores x = 0.25, 0.5, 0.75, 1
    # mu = (0.25 + 4 * 0.5 + 2 * 0.75 + 3 * 1) / 10 = 0.675
    # var = (0.425^2 + 4 * 0.175^2 + 2 * 0.075^2 + 3 * 0.325^2) / 10 = 0.63125 / 10 = 0.063125
    # stderr = sqrt(0.063125 / 10) = 0.0794512, half width = 0.1557216
    # elo: 126.9682 at 0.675, 13.4027 at 0.5192784, 276.3416 at 0.8307216
    stats = pair_stats([2, 2, 1.5, 1, 1, 1, 0.5, 2, 1.5, 1])
    assert stats.counts == (0, 1, 4, 2, 3)
    assert stats.elo == approx(126.9682, abs=1e-4)
    assert stats.lo == approx(13.4027, abs=1e-4)
    assert stats.hi == approx(276.3416, abs=1e-4)
    counts, elo, lo, hi = stats  # unpacks as (pentanomial counts, elo, lo, hi)
    assert counts == stats.counts and (elo, lo, hi) == (stats.elo, stats.lo, stats.hi)


def test_pairs_cancel_the_luck_of_the_deal() -> None:
    """Each deal won by whoever held the good seat: 50-50 in games, no doubt at all in pairs."""
    assert pair_stats([1.0] * 50) == ((0, 0, 50, 0, 0), 0.0, 0.0, 0.0)
    games = elo_interval(50, 50, 0)
    assert games.hi - games.lo > 100
    with pytest.raises(ValueError):
        pair_stats([])


# --------------------------------------------------------------------------- MLE ratings


def _games(a: str, b: str, wins: int, losses: int, draws: int = 0) -> list[tuple[str, str, float]]:
    return [(a, b, 1.0)] * wins + [(a, b, 0.0)] * losses + [(a, b, 0.5)] * draws


def test_mle_two_players_matches_the_score() -> None:
    # The MLE difference is elo_from_score(0.6) = 70.4365, split +-35.2183 around the mean 0.
    # Fisher information of the difference: n p (1 - p) = 100 * 0.24 = 24; each centred rating
    # is half the difference, variance 1 / 96 nat^2; half width 1.959964 * 173.7178 / sqrt(96)
    # = 34.7502 Elo.
    ratings = elo_mle(_games("A", "B", 60, 40))
    assert list(ratings) == ["A", "B"]
    assert ratings["A"].elo == approx(35.2183, abs=1e-4)
    assert ratings["B"].elo == approx(-35.2183, abs=1e-4)
    assert ratings["A"].hi - ratings["A"].elo == approx(34.7502, abs=1e-4)
    assert ratings["B"].elo - ratings["B"].lo == approx(34.7502, abs=1e-4)


def test_mle_chain_is_fitted_exactly_with_laplacian_covariance() -> None:
    # A-B and B-C both 60-40 and no A-C games: a tree, so each pair is fitted exactly:
    # A = +70.4365, B = 0, C = -70.4365. The information is 24 L with L the path Laplacian
    # [[1,-1,0],[-1,2,-1],[0,-1,1]]; pinv(L) has diagonal (5/9, 2/9, 5/9), so the half widths
    # are 1.959964 * 173.7178 * sqrt(5/9/24) = 51.8025 and sqrt(2/9/24) -> 32.7628.
    ratings = elo_mle(_games("A", "B", 60, 40) + _games("B", "C", 60, 40))
    assert ratings["A"].elo == approx(70.4365, abs=1e-4)
    assert ratings["B"].elo == approx(0.0, abs=1e-9)
    assert ratings["C"].elo == approx(-70.4365, abs=1e-4)
    assert ratings["A"].hi - ratings["A"].elo == approx(51.8025, abs=1e-4)
    assert ratings["B"].hi - ratings["B"].elo == approx(32.7628, abs=1e-4)
    assert ratings["C"].hi - ratings["C"].elo == approx(51.8025, abs=1e-4)


def test_mle_symmetric_cycle_is_all_zero() -> None:
    # A beats B, B beats C, C beats A, each 3-1: by symmetry every rating is 0.
    results = _games("A", "B", 3, 1) + _games("B", "C", 3, 1) + _games("C", "A", 3, 1)
    ratings = elo_mle(results)
    widths = {round(r.hi - r.lo, 9) for r in ratings.values()}
    assert all(r.elo == approx(0.0, abs=1e-9) for r in ratings.values())
    assert len(widths) == 1


def test_mle_satisfies_the_score_equations() -> None:
    """Independent check: at the maximum each player's expected total equals the actual one."""
    rng = random.Random(7)
    strength = {"A": 150.0, "B": 40.0, "C": 0.0, "D": -90.0}
    results: list[tuple[str, str, float]] = []
    names = list(strength)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = expected_score(strength[a] - strength[b])
            for _ in range(30):
                r = rng.random()
                results.append((a, b, 1.0 if r < 0.9 * p else 0.5 if r < 0.9 * p + 0.1 else 0.0))
    ratings = elo_mle(results)
    assert sum(r.elo for r in ratings.values()) == approx(0.0, abs=1e-9)
    for name in names:
        actual = expected = 0.0
        for a, b, s in results:
            if name in (a, b):
                mine, other = (a, b) if name == a else (b, a)
                actual += s if name == a else 1.0 - s
                expected += expected_score(ratings[mine].elo - ratings[other].elo)
        assert expected == approx(actual, abs=1e-6)
    assert ratings["A"].elo > ratings["D"].elo


def test_mle_needs_a_finite_solution_or_a_prior() -> None:
    perfect = _games("A", "B", 5, 0) + _games("B", "C", 2, 2, 1)
    with pytest.raises(ValueError, match="prior_draws"):
        elo_mle(perfect)
    with pytest.raises(ValueError):  # two groups that never met
        elo_mle(_games("A", "B", 2, 2) + _games("C", "D", 2, 2))
    ratings = elo_mle(perfect, prior_draws=1.0)
    assert all(math.isfinite(r.lo) and math.isfinite(r.hi) for r in ratings.values())
    assert ratings["A"].elo > ratings["B"].elo
    assert sum(r.elo for r in ratings.values()) == approx(0.0, abs=1e-9)
    assert elo_mle([]) == {}
    with pytest.raises(ValueError):
        elo_mle([("A", "A", 1.0)])


def test_mle_prior_shrinks_toward_the_mean() -> None:
    plain = elo_mle(_games("A", "B", 60, 40))
    shrunk = elo_mle(_games("A", "B", 60, 40), prior_draws=10.0)
    assert 0 < shrunk["A"].elo < plain["A"].elo
    assert round(ELO_PER_NAT, 4) == 173.7178  # 400 / ln 10


def test_running_mean_gives_the_same_interval_in_constant_memory() -> None:
    import random

    from referee.results.stats import RunningMean, mean_interval

    rng = random.Random(5)
    values = [rng.randint(-60, 90) for _ in range(5000)]
    running = RunningMean()
    for v in values:
        running.add(v)
    expected = mean_interval(values)
    got = running.interval()
    assert running.n == 5000
    assert got.mean == approx(expected.mean, abs=1e-9)
    assert got.lo == approx(expected.lo, abs=1e-9) and got.hi == approx(expected.hi, abs=1e-9)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_a_confidence_outside_zero_one_is_refused(confidence: float) -> None:
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
        elo_interval(3, 1, 0, confidence)
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
        mean_interval([1.0, 2.0], confidence)


@pytest.mark.parametrize("score", [-0.01, 1.01, 2.0])
def test_a_score_outside_zero_one_has_no_elo(score: float) -> None:
    with pytest.raises(ValueError, match=r"score must be in \[0, 1\]"):
        elo_from_score(score)


@pytest.mark.parametrize("counts", [(-1, 2, 2), (2, -1, 2), (2, 2, -1), (0, 0, 0)])
def test_counts_must_be_non_negative_and_some(counts: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError, match="need non-negative counts and at least one game"):
        elo_interval(*counts)
    if sum(counts) == 0:
        return
    with pytest.raises(ValueError, match="counts must be non-negative"):
        sprt_llr(*counts, 0, 10)
    with pytest.raises(ValueError, match="counts must be non-negative"):
        SPRT(0, 10).update(*counts)
    if counts[2] >= 0:
        with pytest.raises(ValueError, match="counts must be non-negative"):
            los(counts[0], counts[1])


@pytest.mark.parametrize(
    ("elo0", "elo1", "alpha", "beta", "words"),
    [
        (0, 10, 0.0, 0.05, "(?i)alpha and beta"),
        (0, 10, 1.0, 0.05, "(?i)alpha and beta"),
        (0, 10, 0.05, 0.0, "(?i)alpha and beta"),
        (0, 10, 0.05, 1.0, "(?i)alpha and beta"),
        (10, 10, 0.05, 0.05, "(?i)need elo0 < elo1"),
    ],
)
def test_sprt_parameters_are_checked(
    elo0: float, elo1: float, alpha: float, beta: float, words: str
) -> None:
    with pytest.raises(ValueError, match=f"(?i){words}"):
        SPRT(elo0, elo1, alpha, beta)


def test_sprt_keeps_its_parameters_and_adds_up_draws() -> None:
    s = SPRT(0, 10, 0.1, 0.2)
    assert (s.elo0, s.elo1, s.alpha, s.beta) == (0, 10, 0.1, 0.2)
    s.update(0, 0, 1)
    s.update(0, 0, 2)
    assert s.draws == 3 and "at 0-0-3" in repr(s)


def test_sprt_llr_of_only_draws_uses_the_pseudo_game() -> None:
    # Five draws: one pseudo-game of score 1/2 is added (half a win, half a loss), so
    # m = 6, a = (0.5 + 2.5) / 6 and var = (0.5 + 5/4) / 6 - a^2.
    m, a = 6.0, 3.0 / 6
    var = 1.75 / 6 - a * a
    s0, s1 = 0.5, expected_score(50)
    assert sprt_llr(0, 0, 5, 0, 50) == approx((s1 - s0) * (2 * a - s0 - s1) / (2 * var / m))


def test_empty_inputs_are_refused_with_a_reason() -> None:
    from referee.results.stats import RunningMean

    with pytest.raises(ValueError, match="mean_interval of no values"):
        mean_interval([])
    with pytest.raises(ValueError, match="mean_interval of no values"):
        RunningMean().interval()
    with pytest.raises(ValueError, match="pair_stats of no pairs"):
        pair_stats([])
    with pytest.raises(ValueError, match=r"a pair score is 0, 0.5, 1, 1.5 or 2, not 0.25"):
        pentanomial([0.25])
    one = RunningMean()
    one.add(4.0)
    assert tuple(one.interval()) == (4.0, -math.inf, math.inf)
