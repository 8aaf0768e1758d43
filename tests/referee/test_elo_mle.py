"""The tournament's maximum-likelihood Elo (``stats.elo_mle``) on cases worked out by hand.

With two players the maximum-likelihood difference is the Elo of the score, and its variance is
``1 / (n p (1 - p))`` in natural units; a chain of pairs splits into independent pairs; a cycle
and an even score give everyone 0. The ratings are centred (mean 0) and each interval is the
rating plus or minus ``z`` standard errors of the centred rating.
"""

from __future__ import annotations

import math

import pytest

from referee.results import stats
from referee.results.stats import ELO_PER_NAT, elo_mle

Z95 = 1.959963984540054


def test_no_results_no_ratings() -> None:
    assert elo_mle([]) == {}


@pytest.mark.parametrize(("wins", "losses", "draws"), [(2, 1, 0), (3, 1, 2), (1, 4, 1), (7, 2, 3)])
def test_two_players_are_rated_by_the_elo_of_the_score(wins: int, losses: int, draws: int) -> None:
    results = (
        [("a", "b", 1.0)] * wins + [("b", "a", 1.0)] * losses + [("a", "b", 0.5)] * draws
    )
    r = elo_mle(results)
    n = wins + losses + draws
    p = (wins + 0.5 * draws) / n
    diff = stats.elo_from_score(p)
    assert list(r) == ["a", "b"]
    assert r["a"].elo == pytest.approx(diff / 2, abs=1e-6)
    assert r["b"].elo == pytest.approx(-diff / 2, abs=1e-6)
    # Each centred rating is half the difference, so its variance is a quarter of the
    # difference's, 1 / (n p (1 - p)) in natural units.
    half = Z95 * ELO_PER_NAT * math.sqrt(1.0 / (4.0 * n * p * (1.0 - p)))
    for name in "ab":
        assert r[name].lo == pytest.approx(r[name].elo - half, abs=1e-6)
        assert r[name].hi == pytest.approx(r[name].elo + half, abs=1e-6)


def test_the_score_is_read_from_either_side() -> None:
    """The same games written from b's side give the same ratings."""
    forward = elo_mle([("a", "b", 1.0), ("a", "b", 1.0), ("a", "b", 0.0), ("a", "b", 0.5)])
    backward = elo_mle([("b", "a", 0.0), ("b", "a", 0.0), ("b", "a", 1.0), ("b", "a", 0.5)])
    for name in "ab":
        assert forward[name].elo == pytest.approx(backward[name].elo, abs=1e-6)
        assert forward[name].lo == pytest.approx(backward[name].lo, abs=1e-6)
        assert forward[name].hi == pytest.approx(backward[name].hi, abs=1e-6)
    assert forward["a"].elo == pytest.approx(stats.elo_from_score(2.5 / 4) / 2, abs=1e-6)


def test_an_even_score_rates_both_players_zero() -> None:
    r = elo_mle([("a", "b", 1.0), ("b", "a", 1.0), ("a", "b", 0.5), ("b", "a", 0.5)])
    half = Z95 * ELO_PER_NAT * math.sqrt(1.0 / (4.0 * 4 * 0.25))
    for name in "ab":
        assert r[name].elo == pytest.approx(0.0, abs=1e-9)
        assert r[name].hi == pytest.approx(half, abs=1e-6)
        assert r[name].lo == pytest.approx(-half, abs=1e-6)


def test_a_cycle_rates_everyone_zero_with_equal_intervals() -> None:
    r = elo_mle([("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0)])
    widths = {round(e.hi - e.lo, 9) for e in r.values()}
    assert len(widths) == 1
    for e in r.values():
        assert e.elo == pytest.approx(0.0, abs=1e-9)
        assert e.lo == pytest.approx(-e.hi, abs=1e-9)
        assert e.hi > 0


def test_a_chain_of_pairs_is_rated_pair_by_pair() -> None:
    """a beats b 2-1 and b beats c 2-1, and nothing else: each step is ln 2 natural units, so
    the centred ratings are +ln 2, 0 and -ln 2. The two differences are independent, each of
    variance 1 / (3 * 2/3 * 1/3) = 3/2, which gives the centred variances 5/6, 1/3, 5/6."""
    results = [("a", "b", 1.0), ("a", "b", 1.0), ("b", "a", 1.0)]
    results += [("b", "c", 1.0), ("c", "b", 0.0), ("c", "b", 1.0)]
    r = elo_mle(results)
    step = ELO_PER_NAT * math.log(2.0)
    assert r["a"].elo == pytest.approx(step, abs=1e-6)
    assert r["b"].elo == pytest.approx(0.0, abs=1e-6)
    assert r["c"].elo == pytest.approx(-step, abs=1e-6)
    for name, variance in (("a", 5 / 6), ("b", 1 / 3), ("c", 5 / 6)):
        half = Z95 * ELO_PER_NAT * math.sqrt(variance)
        assert r[name].hi - r[name].elo == pytest.approx(half, abs=1e-6)
        assert r[name].elo - r[name].lo == pytest.approx(half, abs=1e-6)


def test_the_confidence_sets_the_width() -> None:
    results = [("a", "b", 1.0), ("a", "b", 1.0), ("b", "a", 1.0)]
    r95, r99 = elo_mle(results), elo_mle(results, confidence=0.99)
    assert r99["a"].elo == pytest.approx(r95["a"].elo)
    ratio = (r99["a"].hi - r99["a"].lo) / (r95["a"].hi - r95["a"].lo)
    assert ratio == pytest.approx(2.5758293035489004 / Z95, rel=1e-9)


def test_a_large_gap_is_found_from_the_far_start() -> None:
    """99 wins out of 100: Newton's method must travel far from 0 and still land on the
    score's Elo."""
    results = [("a", "b", 1.0)] * 99 + [("b", "a", 1.0)]
    r = elo_mle(results)
    assert r["a"].elo - r["b"].elo == pytest.approx(stats.elo_from_score(0.99), abs=1e-6)


@pytest.mark.parametrize(
    "results",
    [
        [("a", "b", 1.0)],  # a perfect record
        [("a", "b", 1.0), ("a", "b", 1.0)],
        [("b", "a", 0.0)],  # the same, written from the loser's side
        [("a", "b", 1.0), ("b", "a", 1.0), ("c", "d", 0.5)],  # two separate groups
        [("a", "b", 0.5), ("b", "c", 1.0)],  # c never scores
        [("a", "b", 0.5), ("c", "b", 1.0)],  # c never loses
    ],
)
def test_ratings_that_would_be_infinite_are_refused(
    results: list[tuple[str, str, float]],
) -> None:
    with pytest.raises(ValueError, match="prior_draws > 0"):
        elo_mle(results)


def test_draws_alone_connect_players() -> None:
    r = elo_mle([("a", "b", 0.5), ("b", "c", 0.5)])
    for e in r.values():
        assert e.elo == pytest.approx(0.0, abs=1e-9)
        assert math.isfinite(e.lo) and math.isfinite(e.hi)


def test_a_prior_keeps_a_perfect_record_finite() -> None:
    """One win, with one virtual draw each against a phantom rated 0. By symmetry a = x and
    b = -x (natural units), where x solves 1 - s(2x) + 1/2 - s(x) = 0 (s the logistic); the
    centred variance is 1 / (2 (2w + q)) with w = s(2x)(1 - s(2x)) and q = s(x)(1 - s(x))."""
    r = elo_mle([("a", "b", 1.0)], prior_draws=1.0)

    def s(t: float) -> float:
        return 1.0 / (1.0 + math.exp(-t))

    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1.0 - s(2 * mid) + 0.5 - s(mid) > 0:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    w = s(2 * x) * (1 - s(2 * x))
    q = s(x) * (1 - s(x))
    half = Z95 * ELO_PER_NAT * math.sqrt(1.0 / (2.0 * (2.0 * w + q)))
    assert r["a"].elo == pytest.approx(ELO_PER_NAT * x, abs=1e-6)
    assert r["b"].elo == pytest.approx(-ELO_PER_NAT * x, abs=1e-6)
    for name in "ab":
        assert r[name].hi - r[name].elo == pytest.approx(half, abs=1e-6)
        assert r[name].elo - r[name].lo == pytest.approx(half, abs=1e-6)


def test_a_prior_pulls_ratings_toward_the_mean() -> None:
    results = [("a", "b", 1.0), ("a", "b", 1.0), ("b", "a", 1.0)]
    plain = elo_mle(results)["a"].elo
    mild = elo_mle(results, prior_draws=1.0)["a"].elo
    strong = elo_mle(results, prior_draws=10.0)["a"].elo
    assert 0.0 < strong < mild < plain


@pytest.mark.parametrize(
    ("results", "prior", "words"),
    [
        ([("a", "a", 1.0)], 0.0, "cannot play itself"),
        ([("a", "b", 1.5)], 0.0, "score must be in"),
        ([("a", "b", -0.5)], 0.0, "score must be in"),
        ([("a", "b", 0.5)], -1.0, "prior_draws must be non-negative"),
    ],
)
def test_bad_results_are_refused(
    results: list[tuple[str, str, float]], prior: float, words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        elo_mle(results, prior_draws=prior)


def test_scores_at_the_ends_of_the_range_are_accepted() -> None:
    r = elo_mle([("a", "b", 0.0), ("a", "b", 1.0)])
    assert r["a"].elo == pytest.approx(0.0, abs=1e-9)


def test_the_whole_refusal_of_infinite_ratings() -> None:
    with pytest.raises(ValueError) as info:
        elo_mle([("a", "b", 1.0)])
    assert str(info.value) == (
        "ratings are not finite: some players have no score against a group of others "
        "(a perfect record, or separate groups); pass prior_draws > 0"
    )


def test_a_prior_with_an_uneven_field_matches_a_direct_maximisation() -> None:
    """a scores 5 of 6 against b and against c, b and c draw; one virtual draw each against a
    phantom rated 0. The ratings and intervals are checked against a plain gradient ascent on
    the log-likelihood and its Hessian taken by finite differences (natural units), centred as
    the ratings are."""
    results = [("a", "b", 1.0)] * 5 + [("a", "c", 1.0)] * 5
    results += [("b", "a", 1.0), ("c", "a", 1.0), ("b", "c", 0.5)]

    def ln_s(x: float) -> float:
        return -math.log1p(math.exp(-x))

    def loglik(t: list[float]) -> float:
        index = {"a": 0, "b": 1, "c": 2}
        total = 0.0
        for x, y, score in results:
            d = t[index[x]] - t[index[y]]
            total += score * ln_s(d) + (1 - score) * ln_s(-d)
        return total + sum(0.5 * (ln_s(v) + ln_s(-v)) for v in t)

    theta = [0.0, 0.0, 0.0]
    h = 1e-6
    for _ in range(2000):
        grad = []
        for k in range(3):
            up = theta.copy()
            up[k] += h
            down = theta.copy()
            down[k] -= h
            grad.append((loglik(up) - loglik(down)) / (2 * h))
        theta = [v + 0.3 * g for v, g in zip(theta, grad, strict=True)]
    mean = sum(theta) / 3
    assert abs(mean) > 0.01  # the phantom makes the uncentred ratings matter

    e = 1e-4
    hess = [[0.0] * 3 for _ in range(3)]
    for i in range(3):
        for j in range(3):
            def at(di: float, dj: float, i: int = i, j: int = j) -> float:
                t = theta.copy()
                t[i] += di
                t[j] += dj
                return loglik(t)

            hess[i][j] = (at(e, e) - at(e, -e) - at(-e, e) + at(-e, -e)) / (4 * e * e)
    cov = _inverse3([[-x for x in row] for row in hess])
    # The variance of a centred rating t_i - mean(t).
    var = []
    for i in range(3):
        row = sum(cov[i]) / 3
        grand = sum(sum(r) for r in cov) / 9
        var.append(cov[i][i] - 2 * row + grand)

    r = elo_mle(results, prior_draws=1.0)
    for k, name in enumerate("abc"):
        assert r[name].elo == pytest.approx(ELO_PER_NAT * (theta[k] - mean), abs=1e-4)
        half = Z95 * ELO_PER_NAT * math.sqrt(var[k])
        assert r[name].hi - r[name].elo == pytest.approx(half, rel=1e-5)


def _inverse3(m: list[list[float]]) -> list[list[float]]:
    """The inverse of a 3 x 3 matrix by cofactors."""
    (a, b, c), (d, e, f), (g, h, i) = m
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    adj = [
        [e * i - f * h, c * h - b * i, b * f - c * e],
        [f * g - d * i, a * i - c * g, c * d - a * f],
        [d * h - e * g, b * g - a * h, a * e - b * d],
    ]
    return [[x / det for x in row] for row in adj]
