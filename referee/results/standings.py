"""A tournament's standings: per engine games, score, maximum-likelihood Elo with its
interval, points per hand and faults; and the pairwise cross-table.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import Any

from ginproto.text import printable
from referee.results import stats
from referee.results.report import (
    GameSummary,
    Standings,
    distinct,
    finite_json,
    signed,
    summary_from_json,
)
from referee.results.store import Store

log = logging.getLogger(__name__)

def pairwise(summary: GameSummary) -> list[tuple[int, int, float]]:
    """A game as results between pairs of engines, ``(a, b, score of a)``.

    Two players: the game itself. Three players: the winner beats each of the others, and the
    others draw with each other (a drawn game is a draw between every pair).
    """
    out = []
    for a, b in itertools.combinations(summary.lineup, 2):
        w = summary.winner
        out.append((a, b, 0.5 if w not in (a, b) else (1.0 if w == a else 0.0)))
    return out


class TournamentStandings:
    """The standings of a tournament: per engine figures and the pairwise cross-table."""

    def __init__(self, names: Sequence[str], confidence: float = 0.95) -> None:
        self.names = list(names)
        self.confidence = confidence
        self.tally = Standings(names)
        n = len(self.names)
        self.cross_games = [[0] * n for _ in range(n)]
        self.cross_score = [[0.0] * n for _ in range(n)]
        self.played = 0
        """From a store: the games stored (the standings are theirs)."""
        self.scheduled = 0
        """From a store: the games of the whole tournament."""

    @classmethod
    def from_store(cls, store: Store) -> TournamentStandings:
        s = cls(store.names)
        for result in store.results():
            s.add(summary_from_json(result.summary))
        s.played, s.scheduled = store.counts()
        return s

    def add(self, summary: GameSummary) -> None:
        self.tally.add(summary)
        for a, b, score in pairwise(summary):
            self.cross_games[a][b] += 1
            self.cross_games[b][a] += 1
            self.cross_score[a][b] += score
            self.cross_score[b][a] += 1.0 - score

    @property
    def games(self) -> int:
        return self.tally.games

    def ratings(self) -> tuple[dict[int, stats.EloInterval], float]:
        """Maximum-likelihood Elo of each engine that played (mean 0), and the virtual draws
        used: 0, or 1 per engine when some rating would not be finite without them."""
        n = len(self.names)
        results: list[tuple[str, str, float]] = []
        for a in range(n):
            for b in range(a + 1, n):
                games = self.cross_games[a][b]
                # Only a pairing's game count and total score enter the likelihood.
                mean = self.cross_score[a][b] / games if games else 0.0
                results += [(self.names[a], self.names[b], mean)] * games
        if not results:
            return {}, 0.0
        prior = 0.0
        try:
            by_name = stats.elo_mle(results, self.confidence)
        except ValueError:
            prior = 1.0
            by_name = stats.elo_mle(results, self.confidence, prior_draws=prior)
        return {self.names.index(k): v for k, v in by_name.items()}, prior

    def rows(self) -> list[dict[str, Any]]:
        """One row per engine, best first (by Elo, then score)."""
        ratings, _ = self.ratings()
        out = []
        for i, t in enumerate(self.tally.tallies):
            pts = t.points.interval(self.confidence) if t.points.n else None
            elo = ratings.get(i)
            out.append(
                {
                    "name": t.name,
                    "games": t.games,
                    "wins": t.wins,
                    "losses": t.losses,
                    "draws": t.draws,
                    "score": t.score,
                    "elo": None if elo is None else {"elo": elo.elo, "lo": elo.lo, "hi": elo.hi},
                    "hands": t.hands,
                    "points_per_hand": None
                    if pts is None
                    else {"mean": pts.mean, "lo": pts.lo, "hi": pts.hi},
                    "faults": dict(sorted(t.faults.items())),
                }
            )

        def order(row: dict[str, Any]) -> tuple[bool, float, float, str]:
            elo = row["elo"]["elo"] if row["elo"] else 0.0
            return (row["games"] == 0, -elo, -row["score"], row["name"])

        out.sort(key=order)
        for rank, row in enumerate(out, 1):
            row["rank"] = rank
        return out

    def cross_table(self) -> dict[str, dict[str, dict[str, float | int]]]:
        """``[a][b]``: a's score against b, and their games (pairs that met)."""
        out: dict[str, dict[str, dict[str, float | int]]] = {}
        for a, name in enumerate(self.names):
            out[name] = {
                self.names[b]: {"games": g, "score": self.cross_score[a][b]}
                for b, g in enumerate(self.cross_games[a])
                if g
            }
        return out

    def to_json(self) -> dict[str, Any]:
        _, prior = self.ratings()
        out: dict[str, Any] = finite_json(
            {
                "games": self.games,
                "confidence": self.confidence,
                "elo_prior_draws": prior,
                "engines": self.rows(),
                "cross_table": self.cross_table(),
            }
        )
        return out

    def lines(self) -> list[str]:
        """The final table and the cross-table, as text."""
        rows = self.rows()
        _, prior = self.ratings()
        shown = dict(zip(self.names, distinct([printable(n) for n in self.names]), strict=True))
        width = max([len(shown[r["name"]]) for r in rows] + [6])
        out = [
            f"{'Rank':<5}{'Engine':<{width + 2}}{'Games':>6}{'Won':>6}{'Lost':>6}{'Drawn':>6}"
            f"{'Score':>8}{'Elo':>7}{'+/-':>6}{'Pts/hand':>10}  Faults"
        ]
        for r in rows:
            elo, margin = "-", "-"
            if r["elo"] is not None:
                e = r["elo"]
                elo = signed(round(e["elo"]), 0)  # never "-0"
                margin = f"{(e['hi'] - e['lo']) / 2:.0f}"
            pts = r["points_per_hand"]
            faults = ", ".join(f"{k} {v}" for k, v in r["faults"].items()) or "none"
            out.append(
                f"{r['rank']:<5}{shown[r['name']]:<{width + 2}}{r['games']:>6}{r['wins']:>6}"
                f"{r['losses']:>6}{r['draws']:>6}{100 * r['score']:>7.1f}%{elo:>7}{margin:>6}"
                f"{'-' if pts is None else signed(pts['mean'], 2):>10}  {faults}"
            )
        pct = f"{100 * self.confidence:g}%"
        note = f"Elo: maximum likelihood over all games, mean 0, +/- the {pct} interval"
        if prior:
            note += f"; with {prior:g} virtual draw per engine against a 0-rated engine, since"
            note += " some ratings are not finite otherwise"
        out += ["", note + "."]
        # The cross-table, engines in rank order, columns by rank number.
        order = [self.names.index(r["name"]) for r in rows]
        cell = max(7, *(len(f"{self.cross_games[a][b]}") * 2 + 4 for a in order for b in order))
        out += ["", "Cross-table (the row's score against the column):"]
        out.append(" " * (5 + width + 2) + "".join(f"{k:>{cell}}" for k in range(1, len(rows) + 1)))
        for rank, a in enumerate(order, 1):
            cells = []
            for b in order:
                g = self.cross_games[a][b]
                if a == b:
                    cells.append(f"{'x':>{cell}}")
                elif not g:
                    cells.append(f"{'-':>{cell}}")
                else:
                    cells.append(f"{self.cross_score[a][b]:g}/{g}".rjust(cell))
            out.append(f"{rank:<5}{shown[self.names[a]]:<{width + 2}}" + "".join(cells))
        return out

