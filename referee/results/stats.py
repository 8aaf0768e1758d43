"""Match statistics: Elo with intervals, LOS, SPRT, duplicate-pair statistics and MLE ratings.

Pure functions on counts, standard library only. A game's score is from the first player's point
of view: 1 for a win, 1/2 for a draw, 0 for a loss. Elo is the logistic Elo of chess testing
tools, where a difference D means an expected score of ``1 / (1 + 10**(-D/400))``.

The formulas follow cutechess-cli (``Elo``: score mean, per-game variance, normal quantile),
fastchess (logistic GSPRT, pentanomial variance for game pairs) and the Bradley-Terry model
(maximum likelihood ratings), and each function names its source.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from statistics import NormalDist, fmean, stdev
from typing import Final, Literal, NamedTuple

__all__ = [
    "SPRT",
    "EloInterval",
    "MeanInterval",
    "PairStats",
    "SprtState",
    "elo_from_score",
    "elo_interval",
    "elo_mle",
    "expected_score",
    "los",
    "mean_interval",
    "pair_stats",
    "pentanomial",
    "sprt_llr",
]

ELO_PER_NAT: Final = 400.0 / math.log(10.0)
"""Logistic Elo per unit of log-odds: ``D = ELO_PER_NAT * theta`` (about 173.72)."""

SprtState = Literal["continue", "H0", "H1"]


class EloInterval(NamedTuple):
    """An Elo difference (or rating) with the bounds of its confidence interval."""

    elo: float
    lo: float
    hi: float


class MeanInterval(NamedTuple):
    """A sample mean with the bounds of its confidence interval."""

    mean: float
    lo: float
    hi: float


class PairStats(NamedTuple):
    """Duplicate-pair statistics: pentanomial counts and the Elo interval they give."""

    counts: tuple[int, int, int, int, int]
    elo: float
    lo: float
    hi: float


def _z(confidence: float) -> float:
    """Two-sided normal quantile: 1.959964 for 0.95."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def expected_score(elo: float) -> float:
    """Expected score at an Elo difference: ``1 / (1 + 10**(-elo/400))``."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_from_score(score: float) -> float:
    """Elo difference for a mean score: ``-400 * log10(1/score - 1)``.

    The inverse of `expected_score`. A score of 0 or 1 gives -inf or +inf.
    """
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"score must be in [0, 1], not {score}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def _score_interval(mean: float, stderr: float, confidence: float) -> EloInterval:
    """Map ``mean +- z * stderr`` (clamped to [0, 1]) through `elo_from_score`."""
    half = _z(confidence) * stderr
    return EloInterval(
        elo_from_score(mean),
        elo_from_score(max(0.0, mean - half)),
        elo_from_score(min(1.0, mean + half)),
    )


def elo_interval(wins: int, losses: int, draws: int, confidence: float = 0.95) -> EloInterval:
    """Elo difference from W/L/D counts with its confidence interval, as cutechess computes it.

    With n games, score ``mu = (W + D/2) / n`` and per-game variance
    ``var = (W (1-mu)^2 + D (1/2-mu)^2 + L mu^2) / n``, the score interval is
    ``mu -+ z * sqrt(var / n)`` (z the normal quantile), and both ends are mapped through
    `elo_from_score`, so the Elo interval is not symmetric. cutechess prints ``(hi - lo) / 2``
    as its "+-" margin.

    At 0% or 100% the variance is zero and the result is ``(-inf, -inf, -inf)`` or
    ``(inf, inf, inf)``: no finite Elo explains a perfect record. No games is a ValueError.
    """
    n = wins + losses + draws
    if min(wins, losses, draws) < 0 or n == 0:
        raise ValueError(f"need non-negative counts and at least one game: {wins}-{losses}-{draws}")
    mu = (wins + 0.5 * draws) / n
    var = (wins * (1.0 - mu) ** 2 + draws * (0.5 - mu) ** 2 + losses * mu**2) / n
    return _score_interval(mu, math.sqrt(var / n), confidence)


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority: ``0.5 * (1 + erf((W - L) / sqrt(2 (W + L))))``.

    The probability that the first player is the stronger one, given that draws carry no
    information (normal approximation of the binomial, as in cutechess). 0.5 without decisive
    games.
    """
    if wins < 0 or losses < 0:
        raise ValueError("counts must be non-negative")
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


# --------------------------------------------------------------------------- SPRT


def sprt_llr(wins: int, losses: int, draws: int, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0), logistic Elo.

    The trinomial GSPRT approximation (M. Van den Bergh) used by fastchess and cutechess-style
    tools: with n games, ``a = (W + D/2) / n`` the mean score, ``var = (W + D/4) / n - a^2`` the
    per-game variance, and ``s_i = 1 / (1 + 10**(-elo_i/400))``,

        LLR = (s1 - s0) * (2a - s0 - s1) / (2 * var / n)

    The approximation needs a variance estimate. When every game so far had the same result
    (all won, all lost or all drawn) the sample variance is 0; then the variance is taken as if
    half a win and half a loss had been added (one pseudo-game of score 1/2). Without it, a
    match one engine sweeps could never stop (fastchess reports 0 there); with it, ten straight
    wins give an LLR of about 7.6 for 0 vs 50 Elo. No game at all gives 0.
    """
    n = wins + losses + draws
    if min(wins, losses, draws) < 0:
        raise ValueError("counts must be non-negative")
    if n == 0:
        return 0.0
    a = (wins + 0.5 * draws) / n
    var = (wins + 0.25 * draws) / n - a * a
    m = float(n)
    if var <= 0.0:
        m = n + 1.0
        a = (wins + 0.5 + 0.5 * draws) / m
        var = (wins + 0.5 + 0.25 * draws) / m - a * a
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return (s1 - s0) * (2.0 * a - s0 - s1) / (2.0 * var / m)


MAX_SPRT_ELO = 2000.0
"""The largest Elo bound an SPRT takes: an expected score of 0.99999; beyond it the test can
never decide in a match of any length. The comparisons also refuse NaN."""


class SPRT:
    """Sequential probability ratio test of Elo ``elo0`` (H0) against ``elo1`` (H1).

    Wald's bounds: ``lower = ln(beta / (1 - alpha))``, ``upper = ln((1 - beta) / alpha)``
    (+-2.944 for alpha = beta = 0.05). The test stops, accepting H1, once the LLR (`sprt_llr`)
    reaches the upper bound, and accepting H0 once it reaches the lower one. ``alpha`` is the
    false-positive rate (accepting H1 when H0 holds), ``beta`` the false-negative rate.
    """

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> None:
        if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
            raise ValueError(f"ALPHA and BETA must be between 0 and 1, not {alpha} and {beta}")
        if not (-MAX_SPRT_ELO <= elo0 <= MAX_SPRT_ELO and -MAX_SPRT_ELO <= elo1 <= MAX_SPRT_ELO):
            raise ValueError(
                f"ELO0 and ELO1 must be between {-MAX_SPRT_ELO:g} and {MAX_SPRT_ELO:g},"
                f" not {elo0} and {elo1}"
            )
        if not elo0 < elo1:
            raise ValueError(f"need ELO0 < ELO1, not {elo0} and {elo1}")
        self.elo0 = elo0
        self.elo1 = elo1
        self.alpha = alpha
        self.beta = beta
        self.lower = math.log(beta / (1.0 - alpha))
        self.upper = math.log((1.0 - beta) / alpha)
        self.wins = 0
        self.losses = 0
        self.draws = 0

    def update(self, wins: int = 0, losses: int = 0, draws: int = 0) -> SprtState:
        """Add results (one game, ``update(1, 0, 0)``, or a batch) and return the new state."""
        if min(wins, losses, draws) < 0:
            raise ValueError("counts must be non-negative")
        self.wins += wins
        self.losses += losses
        self.draws += draws
        return self.state

    @property
    def llr(self) -> float:
        """The LLR of all results so far."""
        return sprt_llr(self.wins, self.losses, self.draws, self.elo0, self.elo1)

    @property
    def state(self) -> SprtState:
        """ "H1" at or above the upper bound, "H0" at or below the lower one, else "continue"."""
        llr = self.llr
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return "continue"

    def __repr__(self) -> str:
        return (
            f"SPRT(elo0={self.elo0}, elo1={self.elo1}, alpha={self.alpha}, beta={self.beta})"
            f" at {self.wins}-{self.losses}-{self.draws}: LLR {self.llr:.3f}"
            f" ({self.lower:.3f}, {self.upper:.3f}) {self.state}"
        )


# --------------------------------------------------------------------------- means


def mean_interval(values: Iterable[float], confidence: float = 0.95) -> MeanInterval:
    """Sample mean with a normal-approximation interval: ``mean -+ z * s / sqrt(n)``.

    ``s`` is the sample standard deviation (n - 1 in the denominator) and z the normal quantile,
    which is accurate for the hundreds of hands of a match; below about 30 values a Student t
    interval would be somewhat wider. One value gives ``(x, -inf, inf)``; none is a ValueError.
    """
    data = [float(v) for v in values]
    if not data:
        raise ValueError("mean_interval of no values")
    mean = fmean(data)
    if len(data) == 1:
        return MeanInterval(mean, -math.inf, math.inf)
    half = _z(confidence) * stdev(data, mean) / math.sqrt(len(data))
    return MeanInterval(mean, mean - half, mean + half)


class RunningMean:
    """``mean_interval`` over a stream, in constant memory (Welford's update), so that the
    standings of a run of any length keep no per-hand list."""

    __slots__ = ("_m2", "mean", "n")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self._m2 = 0.0

    def add(self, value: float) -> None:
        self.n += 1
        delta = value - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (value - self.mean)

    def interval(self, confidence: float = 0.95) -> MeanInterval:
        """The same figures as ``mean_interval`` of every value added."""
        if not self.n:
            raise ValueError("mean_interval of no values")
        if self.n == 1:
            return MeanInterval(self.mean, -math.inf, math.inf)
        half = _z(confidence) * math.sqrt(self._m2 / (self.n - 1)) / math.sqrt(self.n)
        return MeanInterval(self.mean, self.mean - half, self.mean + half)


# --------------------------------------------------------------------------- duplicate pairs


def pentanomial(pair_scores: Iterable[float]) -> tuple[int, int, int, int, int]:
    """Count game pairs by their total score for the first player: 0, 1/2, 1, 3/2, 2.

    Each pair is the same deals played twice with the seats swapped; its score is the sum of
    its two game scores. A total of 1 lumps win+loss together with draw+draw, as fastchess does.
    """
    counts = [0, 0, 0, 0, 0]
    for score in pair_scores:
        doubled = 2.0 * score
        k = round(doubled)
        if not (0 <= k <= 4 and abs(doubled - k) < 1e-9):
            raise ValueError(f"a pair score is 0, 0.5, 1, 1.5 or 2, not {score}")
        counts[k] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def pair_stats(pair_scores: Iterable[float], confidence: float = 0.95) -> PairStats:
    """Elo interval from duplicate game pairs, with the pentanomial variance of fastchess.

    With pair scores ``x_k = k/4`` (a pair's total over 2) and ``p_k`` the share of pairs in
    each of the five classes, ``mu = sum p_k x_k``, ``var = sum p_k (x_k - mu)^2`` per pair and
    the interval ``mu -+ z * sqrt(var / pairs)``, mapped through `elo_from_score`. Because both
    games of a pair share their deals, the pair variance is usually well below twice the game
    variance, which is the point of duplicate play. Extremes behave as in `elo_interval`.
    """
    counts = pentanomial(pair_scores)
    pairs = sum(counts)
    if pairs == 0:
        raise ValueError("pair_stats of no pairs")
    mu = sum(c * k / 4.0 for k, c in enumerate(counts)) / pairs
    var = sum(c * (k / 4.0 - mu) ** 2 for k, c in enumerate(counts)) / pairs
    elo, lo, hi = _score_interval(mu, math.sqrt(var / pairs), confidence)
    return PairStats(counts, elo, lo, hi)


# --------------------------------------------------------------------------- ratings


def _solve(matrix: Sequence[Sequence[float]], rhs: Sequence[float]) -> list[float]:
    """Solve a small dense linear system by Gaussian elimination with partial pivoting."""
    n = len(rhs)
    a = [[*row, b] for row, b in zip(matrix, rhs, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-300:
            raise ValueError("singular system")
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[r][col] != 0.0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[i][n] / a[i][i] for i in range(n)]


def _inverse(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    n = len(matrix)
    columns = [_solve(matrix, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[columns[j][i] for j in range(n)] for i in range(n)]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _softplus(x: float) -> float:
    """``ln(1 + e^x)`` without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _strongly_connected(n: int, beats: list[set[int]]) -> bool:
    """True if every player reaches every other along 'scored against' edges (both ways)."""

    def reach(edges: list[set[int]]) -> int:
        seen, todo = {0}, [0]
        while todo:
            for j in edges[todo.pop()] - seen:
                seen.add(j)
                todo.append(j)
        return len(seen)

    reverse: list[set[int]] = [set() for _ in range(n)]
    for i, targets in enumerate(beats):
        for j in targets:
            reverse[j].add(i)
    return reach(beats) == n and reach(reverse) == n


def elo_mle(
    results: Iterable[tuple[str, str, float]],
    confidence: float = 0.95,
    *,
    prior_draws: float = 0.0,
) -> dict[str, EloInterval]:
    """Maximum-likelihood Elo ratings (Bradley-Terry, logistic) for a tournament, mean 0.

    Each result is ``(player_a, player_b, score_a)`` with ``score_a`` in [0, 1] (draws as 1/2).
    The model is ``P(a beats b) = 1 / (1 + 10**(-(R_a - R_b)/400))``; the ratings maximise
    ``sum s ln p + (1 - s) ln(1 - p)`` over all games, found by Newton's method (the
    log-likelihood is concave), and are shifted so their mean is 0.

    Intervals come from the Fisher information ``I`` (the negated Hessian: ``I_ii = sum n p(1-p)``
    over i's games, ``I_ij = -n_ij p(1-p)``). Its pseudo-inverse, computed as
    ``inv(I + J/m) - J/m`` (J all ones, m players), is the covariance of the mean-0 ratings, and
    each interval is ``R_i -+ z * 400/ln(10) * sqrt(cov_ii)``.

    A finite maximum exists only if every player has scored against every other through some
    chain of results, both ways (Zermelo's condition; Hunter 2004, "MM algorithms for
    generalized Bradley-Terry models", assumption 1). Otherwise, e.g. a player without a loss,
    this raises ValueError, unless ``prior_draws > 0``: each player then gets that many virtual
    draws against a phantom rated 0, which keeps every rating finite and pulls it slightly
    toward the mean (``prior_draws=1`` is a mild choice for short events).
    """
    if prior_draws < 0:
        raise ValueError("prior_draws must be non-negative")
    names, games = _tally(results)
    m = len(names)
    if m == 0:
        return {}
    if prior_draws == 0.0 and m > 1 and not _strongly_connected(m, _beats(m, games)):
        raise ValueError(
            "ratings are not finite: some players have no score against a group of others "
            "(a perfect record, or separate groups); pass prior_draws > 0"
        )
    # Without the prior the information matrix is singular along (1, ..., 1), the direction in
    # which all ratings shift together; adding J/m makes it invertible without changing the
    # step, since the gradient has no component along that direction.
    shift = 1.0 / m if prior_draws == 0.0 else 0.0
    theta = _newton(games, m, prior_draws, shift)
    mean = fmean(theta)
    theta = [t - mean for t in theta]
    _, info = _gradient_and_information(games, m, prior_draws, [t + mean for t in theta])
    cov_diag = _centred_variances(info, prior_draws, shift)
    z = _z(confidence)
    ratings: dict[str, EloInterval] = {}
    for i, name in enumerate(names):
        elo = ELO_PER_NAT * theta[i]
        half = z * ELO_PER_NAT * math.sqrt(max(cov_diag[i], 0.0))
        ratings[name] = EloInterval(elo, elo - half, elo + half)
    return ratings


# The games between each pair of players of ``elo_mle``: (i, j), i < j -> [games, score of i].
_Games = dict[tuple[int, int], list[float]]


def _tally(results: Iterable[tuple[str, str, float]]) -> tuple[list[str], _Games]:
    """The players in order of first appearance, and the games and score of each pair."""
    index: dict[str, int] = {}
    games: _Games = {}
    for a, b, score in results:
        if a == b:
            raise ValueError(f"{a!r} cannot play itself")
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"score must be in [0, 1], not {score}")
        i, j = index.setdefault(a, len(index)), index.setdefault(b, len(index))
        key, s = ((i, j), score) if i < j else ((j, i), 1.0 - score)
        tally = games.setdefault(key, [0.0, 0.0])
        tally[0] += 1.0
        tally[1] += s
    return list(index), games


def _beats(m: int, games: _Games) -> list[set[int]]:
    """For each of the ``m`` players, the players it scored against."""
    beats: list[set[int]] = [set() for _ in range(m)]
    for (i, j), (n_ij, s_ij) in games.items():
        if s_ij > 0:
            beats[i].add(j)
        if s_ij < n_ij:
            beats[j].add(i)
    return beats


def _loglik(games: _Games, prior_draws: float, theta: list[float]) -> float:
    """The log-likelihood of the ratings ``theta`` (in nats), with the prior's draws."""
    total = 0.0
    for (i, j), (n_ij, s_ij) in games.items():
        d = theta[i] - theta[j]
        # ln p = -ln(1 + e^-d), ln(1 - p) = -ln(1 + e^d), written to avoid overflow
        total -= s_ij * _softplus(-d) + (n_ij - s_ij) * _softplus(d)
    for t in theta:
        total -= prior_draws * 0.5 * (_softplus(-t) + _softplus(t))
    return total


def _gradient_and_information(
    games: _Games, m: int, prior_draws: float, theta: list[float]
) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient at ``theta`` and its Fisher information there."""
    grad = [0.0] * m
    info = [[0.0] * m for _ in range(m)]
    for (i, j), (n_ij, s_ij) in games.items():
        p = _sigmoid(theta[i] - theta[j])
        grad[i] += s_ij - n_ij * p
        grad[j] -= s_ij - n_ij * p
        w = n_ij * p * (1.0 - p)
        info[i][i] += w
        info[j][j] += w
        info[i][j] -= w
        info[j][i] -= w
    for i in range(m):
        p = _sigmoid(theta[i])
        grad[i] += prior_draws * (0.5 - p)
        info[i][i] += prior_draws * p * (1.0 - p)
    return grad, info


def _newton(games: _Games, m: int, prior_draws: float, shift: float) -> list[float]:
    """The ratings (in nats) that maximise the log-likelihood: Newton's method with step
    halving, the information matrix shifted by ``shift`` times J."""
    theta = [0.0] * m
    current = _loglik(games, prior_draws, theta)
    for _ in range(200):
        grad, info = _gradient_and_information(games, m, prior_draws, theta)
        step = _solve([[x + shift for x in row] for row in info], grad)
        scale = 1.0
        while True:
            candidate = [t + scale * d for t, d in zip(theta, step, strict=True)]
            value = _loglik(games, prior_draws, candidate)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2.0
        theta, current = candidate, value
        if max(abs(scale * d) for d in step) < 1e-11:
            break
    return theta


def _centred_variances(info: list[list[float]], prior_draws: float, shift: float) -> list[float]:
    """The variance of each mean-0 rating, from the information matrix ``info``."""
    m = len(info)
    if prior_draws == 0.0:
        inv = _inverse([[x + shift for x in row] for row in info])
        return [inv[i][i] - shift for i in range(m)]
    # The covariance of the centred ratings C inv(I) C, with C = identity - J/m.
    inv = _inverse(info)
    row_means = [fmean(row) for row in inv]
    grand = fmean(row_means)
    return [inv[i][i] - 2.0 * row_means[i] + grand for i in range(m)]
