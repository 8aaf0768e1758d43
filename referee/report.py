"""Standings of a match: scores, Elo with its interval, LOS, points per hand, pairs, faults."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ginproto.table import GameLog
from referee import stats


@dataclass(slots=True)
class Tally:
    """One engine's results in a match."""

    name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    hands: int = 0
    hands_won: int = 0
    points: stats.RunningMean = field(default_factory=stats.RunningMean)  # per hand played:
    # net points in the two-player games, points scored in the three-player game
    faults: Counter[str] = field(default_factory=Counter)
    columns_won: int = 0  # Hollywood: games won of the three scored in each series

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


@dataclass(frozen=True, slots=True)
class GameSummary:
    """What the standings need of one game: who played, who won, the points per hand."""

    lineup: tuple[int, ...]
    key: int
    winner: int | None  # engine index
    faulted: tuple[int, str] | None  # (engine index, fault kind)
    hand_points: tuple[tuple[int | None, int], ...]  # (winner engine or None, points)
    seats: tuple[tuple[int, ...], ...]  # the engines holding cards in each hand
    columns: tuple[int | None, ...] = ()  # Hollywood: the engine that won each of the 3 games


def summarize(lineup: Sequence[int], key: int, game_log: GameLog) -> GameSummary:
    hands = []
    seats = []
    for hand in game_log.hands:
        if hand.entry is None:
            continue
        winner = hand.entry.winner
        hands.append((None if winner is None else lineup[winner], hand.entry.result.points))
        seats.append(tuple(lineup[p] for p in hand.entry.seats))
    fault = game_log.fault
    return GameSummary(
        lineup=tuple(lineup),
        key=key,
        winner=None if game_log.winner is None else lineup[game_log.winner],
        faulted=None if fault is None else (lineup[fault.player], fault.kind.value),
        hand_points=tuple(hands),
        seats=tuple(seats),
        columns=tuple(None if w is None else lineup[w] for w in game_log.game.game_winners)
        if len(game_log.game.game_winners) > 1
        else (),
    )


class Standings:
    """Accumulates game summaries and computes the figures of the result block."""

    def __init__(self, names: Sequence[str], duplicate: bool = False) -> None:
        self.names = list(names)
        self.duplicate = duplicate  # pair the games that share a deck sequence
        self.tallies = [Tally(n) for n in names]
        self.games = 0
        self.hollywood_series = 0
        self._open_pairs: dict[tuple[int, tuple[int, ...]], float] = {}  # first game's score
        self.pair_scores: list[float] = []

    def add(self, game: GameSummary) -> None:
        self.games += 1
        if game.columns:
            self.hollywood_series += 1
        if self.duplicate and len(game.lineup) == 2:
            # The two games of a pair share the deck key, with the seats swapped.
            pair = (game.key, tuple(sorted(game.lineup)))
            score = _score_for(game, 0)
            first = self._open_pairs.pop(pair, None)
            if first is None:
                self._open_pairs[pair] = score
            else:
                self.pair_scores.append(first + score)
        two = len(game.lineup) == 2
        for e in game.lineup:
            t = self.tallies[e]
            t.games += 1
            if game.winner is None:
                t.draws += 1
            elif game.winner == e:
                t.wins += 1
            else:
                t.losses += 1
        if game.faulted is not None:
            self.tallies[game.faulted[0]].faults[game.faulted[1]] += 1
        for column_winner in game.columns:
            if column_winner is not None:
                self.tallies[column_winner].columns_won += 1
        for (winner, points), seated in zip(game.hand_points, game.seats, strict=True):
            for e in seated:
                t = self.tallies[e]
                t.hands += 1
                if winner == e:
                    t.hands_won += 1
                if two:
                    t.points.add(0 if winner is None else (points if winner == e else -points))
                else:
                    t.points.add(points if winner == e else 0)

    # -- two engines ------------------------------------------------------------------------
    def head_to_head(self) -> dict[str, Any]:
        """The figures for engine 0 against engine 1."""
        a = self.tallies[0]
        out: dict[str, Any] = {
            "wins": a.wins,
            "losses": a.losses,
            "draws": a.draws,
            "games": a.games,
            "score": a.score,
        }
        if a.games:
            elo = stats.elo_interval(a.wins, a.losses, a.draws)
            out["elo"] = {"elo": elo.elo, "lo": elo.lo, "hi": elo.hi}
        out["los"] = stats.los(a.wins, a.losses) if a.wins + a.losses else None
        if a.points.n:
            m = a.points.interval()
            out["points_per_hand"] = {
                "mean": m.mean,
                "lo": m.lo,
                "hi": m.hi,
                "hands": a.points.n,
            }
        return out

    def pairs(self) -> dict[str, Any] | None:
        """Duplicate statistics: the games that share a deck sequence, scored as pairs."""
        pair_scores = self.pair_scores
        if not pair_scores:
            return None
        ps = stats.pair_stats(pair_scores)
        return {
            "pairs": len(pair_scores),
            "pentanomial": list(ps.counts),
            "elo": ps.elo,
            "lo": ps.lo,
            "hi": ps.hi,
        }

    def to_json(self) -> dict[str, Any]:
        engines = []
        for t in self.tallies:
            pts = t.points.interval() if t.points.n else None
            engines.append(
                {
                    "name": t.name,
                    "games": t.games,
                    "wins": t.wins,
                    "losses": t.losses,
                    "draws": t.draws,
                    "score": t.score,
                    "hands": t.hands,
                    "hands_won": t.hands_won,
                    "points_per_hand": None
                    if pts is None
                    else {"mean": pts.mean, "lo": pts.lo, "hi": pts.hi},
                    "faults": dict(sorted(t.faults.items())),
                    "hollywood_games_won": t.columns_won,
                }
            )
        out: dict[str, Any] = {"engines": engines, "games": self.games}
        if len(self.tallies) == 2:
            out["head_to_head"] = finite_json(self.head_to_head())
            out["pairs"] = finite_json(self.pairs())
        return out

    def lines(self) -> list[str]:
        """The result block, in the manner of cutechess-cli."""
        out: list[str] = []
        if len(self.tallies) == 2:
            a, b = self.tallies
            h = self.head_to_head()
            out.append(
                f"Score of {a.name} vs {b.name}: {a.wins} - {a.losses} - {a.draws}"
                f"  [{a.score:.3f}] {a.games}"
            )
            if "elo" in h:
                out.append(f"Elo difference: {_elo_text(h['elo'])}, LOS: {_pct(h['los'])}")
            if "points_per_hand" in h:
                p = h["points_per_hand"]
                half = (p["hi"] - p["lo"]) / 2
                out.append(
                    f"Points per hand ({a.name}): {p['mean']:+.2f} +/- {half:.2f}"
                    f" over {p['hands']} hands"
                )
            pairs = self.pairs()
            if pairs is not None:
                out.append(
                    f"Duplicate pairs: {pairs['pairs']}, pentanomial {pairs['pentanomial']},"
                    f" Elo {_elo_text(pairs)}"
                )
        if self.hollywood_series:
            series = self.hollywood_series
            won = ", ".join(f"{t.name} {t.columns_won}" for t in self.tallies)
            out.append(f"Hollywood games won (three per series, {series} series): {won}")
        out.append("")
        out.append(
            f"{'Rank':<5}{'Engine':<22}{'Games':>6}{'Won':>6}{'Lost':>6}{'Drawn':>6}"
            f"{'Score':>8}{'Pts/hand':>10}  Faults"
        )
        order = sorted(range(len(self.tallies)), key=lambda i: -self.tallies[i].score)
        for rank, i in enumerate(order, 1):
            t = self.tallies[i]
            pts = f"{t.points.mean:+.2f}" if t.points.n else "-"
            faults = ", ".join(f"{k} {v}" for k, v in sorted(t.faults.items())) or "none"
            out.append(
                f"{rank:<5}{t.name[:21]:<22}{t.games:>6}{t.wins:>6}{t.losses:>6}{t.draws:>6}"
                f"{100 * t.score:>7.1f}%{pts:>10}  {faults}"
            )
        return out


def _score_for(game: GameSummary, engine: int) -> float:
    if game.winner is None:
        return 0.5
    return 1.0 if game.winner == engine else 0.0


def _elo_text(e: dict[str, Any]) -> str:
    elo, lo, hi = e["elo"], e["lo"], e["hi"]
    if not all(math.isfinite(x) for x in (elo, lo, hi)):
        return "+inf (no game lost)" if elo > 0 else "-inf (no game won)"
    return f"{elo:+.1f} +/- {(hi - lo) / 2:.1f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def finite_json(obj: Any) -> Any:
    """JSON has no infinities: map them to None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite_json(v) for v in obj]
    return obj
