"""Standings of a match: scores, Elo with its interval, LOS, points per hand, pairs, faults.

``summarize`` reduces a played game to the little the standings need (``GameSummary``), and
``Standings`` adds summaries up and prints the result block, or gives the same figures as JSON.
The figures mean the same in every variant:

- *points per hand* (``Pts/hand``, ``points_per_hand``) is an engine's mean score per hand in
  which it held cards: the points it won in the hands it won, 0 in the others. Only a hand's
  winner scores (RULES.md), so the three-player sitter's hands do not count, and nobody is
  charged the points of a hand lost.
- *net points per hand* (two engines only) is the first engine's points won minus its
  opponent's, per hand: the difference of their points per hand, with its interval.

Names come from engines and records, so every name is shown through ``ginproto.text.printable``
and the table's column is as wide as the longest one. JSON has no infinities: an unbounded end
of an interval, or an infinite Elo, is ``null``.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ginproto.game import Game
from ginproto.record import FaultLine, GameRecord, RecordError, read_games
from ginproto.replay import cut_short, replay_game
from ginproto.table import GameLog
from ginproto.text import ID_LIMIT, plural, printable
from referee.results import stats


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
    points: stats.RunningMean = field(default_factory=stats.RunningMean)  # points scored per
    # hand played (0 for a hand lost or drawn), in every variant
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
    """A played game's summary; ``lineup`` gives the engine of each player number."""
    fault = game_log.fault
    return summarize_game(
        lineup, key, game_log.game, None if fault is None else (fault.player, fault.kind.value)
    )


def summarize_game(
    lineup: Sequence[int], key: int, game: Game, fault: tuple[int, str] | None
) -> GameSummary:
    """A finished game's summary, from the rules engine's ``Game`` (played or replayed) and
    the fault that ended it, if any (player number, fault kind)."""
    hands = []
    seats = []
    for entry in game.entries:
        winner = entry.winner
        hands.append((None if winner is None else lineup[winner], entry.result.points))
        seats.append(tuple(lineup[p] for p in entry.seats))
    return GameSummary(
        lineup=tuple(lineup),
        key=key,
        winner=None if game.winner is None else lineup[game.winner],
        faulted=None if fault is None else (lineup[fault[0]], fault[1]),
        hand_points=tuple(hands),
        seats=tuple(seats),
        columns=tuple(None if w is None else lineup[w] for w in game.game_winners)
        if len(game.game_winners) > 1
        else (),
    )


@dataclass(slots=True)
class Meeting:
    """The games of one lineup of engines (by index, sorted): who won how many."""

    engines: tuple[int, ...]
    games: int = 0
    draws: int = 0
    wins: Counter[int] = field(default_factory=Counter)

    def score(self, engine: int) -> float:
        return (self.wins[engine] + self.draws / 2) / self.games if self.games else 0.0


class Standings:
    """Accumulates game summaries and computes the figures of the result block.

    A match's games all seat the same engines. Games merged from several runs (``ginref
    stats``) may not: then each lineup that met has a score line of its own (``meetings``),
    and the standings give each engine's figures over the games it played.
    """

    def __init__(self, names: Sequence[str], duplicate: bool = False) -> None:
        self.names = list(names)
        self.duplicate = duplicate  # pair the games that share a deck sequence
        self.tallies = [Tally(n) for n in names]
        self.games = 0
        self.hollywood_series = 0
        self._open_pairs: dict[tuple[int, tuple[int, ...]], float] = {}  # first game's score
        self.pair_scores: list[float] = []
        self.net = stats.RunningMean()  # two engines: engine 0's points minus engine 1's, a hand
        self.meetings: dict[tuple[int, ...], Meeting] = {}  # by lineup, in order of meeting

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
        engines = tuple(sorted(game.lineup))
        meeting = self.meetings.setdefault(engines, Meeting(engines))
        meeting.games += 1
        if game.winner is None:
            meeting.draws += 1
        else:
            meeting.wins[game.winner] += 1
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
                t.points.add(points if winner == e else 0)
            if len(self.tallies) == 2:
                self.net.add(0 if winner is None else (points if winner == 0 else -points))

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
        if self.net.n:
            m = self.net.interval()
            out["net_points_per_hand"] = {
                "mean": m.mean,
                "lo": m.lo,
                "hi": m.hi,
                "hands": self.net.n,
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
        if self.mixed:
            out["meetings"] = [
                {
                    "engines": [self.tallies[e].name for e in m.engines],
                    "games": m.games,
                    "wins": [m.wins[e] for e in m.engines],
                    "draws": m.draws,
                }
                for m in self.meetings.values()
            ]
        if len(self.tallies) == 2:
            out["head_to_head"] = self.head_to_head()
            out["pairs"] = self.pairs()
        result: dict[str, Any] = finite_json(out)
        return result

    @property
    def mixed(self) -> bool:
        """Whether the games seat different lineups of the engines (records of several runs
        merged): engines that did not all play each other."""
        return len(self.meetings) > 1 or any(
            len(m.engines) < len(self.tallies) for m in self.meetings.values()
        )

    def _meeting_lines(self, names: Sequence[str]) -> list[str]:
        """A score line for each lineup that met, as a match of it prints its own."""
        out = []
        for m in self.meetings.values():
            who = " vs ".join(names[e] for e in m.engines)
            wins = [m.wins[e] for e in m.engines]
            if len(m.engines) == 2:
                first = m.engines[0]
                out.append(
                    f"Score of {who}: {wins[0]} - {wins[1]} - {m.draws}"
                    f"  [{m.score(first):.3f}] {m.games}"
                )
            else:
                scores = ", ".join(f"{m.score(e):.3f}" for e in m.engines)
                out.append(
                    f"Score of {who}: {' - '.join(map(str, wins))}, {m.draws} drawn"
                    f"  [{scores}] {m.games}"
                )
        return out

    def shown_names(self) -> list[str]:
        """The names as the result block shows them: printable, bounded, and distinct."""
        return distinct([printable(t.name, ID_LIMIT) for t in self.tallies])

    def lines(self) -> list[str]:
        """The result block, in the manner of cutechess-cli."""
        out: list[str] = []
        names = self.shown_names()
        if self.mixed:
            out += self._meeting_lines(names)
            out.append(
                f"{len(self.tallies)} engines, not all of them met: each one's figures are over"
                " its own games"
            )
        elif len(self.tallies) == 2:
            a = self.tallies[0]
            h = self.head_to_head()
            out.append(
                f"Score of {names[0]} vs {names[1]}: {a.wins} - {a.losses} - {a.draws}"
                f"  [{a.score:.3f}] {a.games}"
            )
            if "elo" in h:
                out.append(
                    f"Elo difference: {elo_text(h['elo'])},"
                    f" LOS: {_pct(h['los'])}"
                )
            if "net_points_per_hand" in h:
                p = h["net_points_per_hand"]
                out.append(
                    f"Net points per hand ({names[0]}): {signed(p['mean'], 2)}"
                    f" {_margin(p['lo'], p['hi'], 2)} over {plural(p['hands'], 'hand')}"
                )
            pairs = self.pairs()
            if pairs is not None:
                out.append(
                    f"Duplicate pairs: {pairs['pairs']}, pentanomial {pairs['pentanomial']},"
                    f" Elo {elo_text(pairs)}"
                )
        elif len(self.tallies) == 3 and self.games:
            wins = " - ".join(str(t.wins) for t in self.tallies)
            scores = ", ".join(f"{t.score:.3f}" for t in self.tallies)
            out.append(
                f"Score of {' vs '.join(names)}: {wins}, {self.tallies[0].draws} drawn"
                f"  [{scores}] {self.games}"
            )
        if self.hollywood_series:
            series = self.hollywood_series
            won = ", ".join(
                f"{name} {t.columns_won}" for name, t in zip(names, self.tallies, strict=True)
            )
            out.append(f"Hollywood games won (three per series, {series} series): {won}")
        out.append("")
        width = max([len(n) for n in names] + [6])
        out.append(
            f"{'Rank':<5}{'Engine':<{width + 2}}{'Games':>6}{'Won':>6}{'Lost':>6}{'Drawn':>6}"
            f"{'Score':>8}{'Pts/hand':>10}  Faults"
        )
        order = sorted(range(len(self.tallies)), key=lambda i: -self.tallies[i].score)
        for rank, i in enumerate(order, 1):
            t = self.tallies[i]
            pts = signed(t.points.mean, 2) if t.points.n else "-"
            faults = ", ".join(f"{k} {v}" for k, v in sorted(t.faults.items())) or "none"
            out.append(
                f"{rank:<5}{names[i]:<{width + 2}}{t.games:>6}{t.wins:>6}{t.losses:>6}"
                f"{t.draws:>6}{100 * t.score:>7.1f}%{pts:>10}  {faults}"
            )
        return out


# ------------------------------------------------------------------------------------------
# Standings from record files


@dataclass(frozen=True, slots=True)
class Skipped:
    """A game left out of the standings: where it is, and the first thing wrong with it."""

    path: str
    game: int  # its number in its file, from 1
    error: RecordError
    cut: bool = False  # the last game of its file, cut short (``ginproto.replay.cut_short``)


@dataclass(slots=True)
class RecordStandings:
    """What ``summarize_records`` found: the standings of every game that verifies, the games
    left out, and the variants and files read."""

    standings: Standings
    skipped: list[Skipped]
    variants: list[str]
    files: list[str]

    def to_json(self) -> dict[str, Any]:
        """The figures of ``match --json``, with the files read and the games left out."""
        out = self.standings.to_json()
        out["variants"] = self.variants
        out["files"] = self.files
        out["skipped"] = [
            {"file": s.path, "game": s.game, "line": s.error.line, "error": s.error.message}
            for s in self.skipped
        ]
        return out


def summarize_records(paths: Sequence[str]) -> RecordStandings:
    """The standings of the games in record files, as a match that played them would give.

    Each game is replayed through the rules engine (``ginproto.replay``), and only the games
    that verify are counted: a game cut short by an interrupted run, or one that is wrong, is
    listed in ``skipped``. The engines are told apart by the names in the records' ``PlayerN``
    headers, numbered in the order they first appear; ``-`` reads standard input. Games that
    share a deck sequence (the same ``Seed`` and ``Key``) with the seats swapped are duplicate
    pairs, and are scored as pairs. Raises ``RecordError`` (line 0) if a file cannot be read.
    """

    names: dict[str, int] = {}
    decks: dict[tuple[str, str], int] = {}
    lineups_by_deck: dict[int, set[tuple[int, ...]]] = {}
    summaries: list[GameSummary] = []
    skipped: list[Skipped] = []
    variants: list[str] = []
    for path in paths:
        source = read_games(sys.stdin.buffer, "<stdin>") if path == "-" else read_games(path)
        for number, record in enumerate(source, start=1):
            if not record.items:
                skipped.extend(Skipped(path, number, e) for e in record.errors[:1])
                continue
            cut = cut_short(record)
            if cut is not None:
                skipped.append(Skipped(path, number, cut, cut=True))
                continue
            try:
                if record.errors:
                    raise record.errors[0]
                game = replay_game(record)
            except RecordError as exc:
                exc.path = exc.path or record.path
                skipped.append(Skipped(path, number, exc))
                continue
            lineup = tuple(
                names.setdefault(info.name, len(names)) for info in record.players
            )
            deck = decks.setdefault(
                (record.header("Seed") or "", record.header("Key") or ""), len(decks)
            )
            lineups_by_deck.setdefault(deck, set()).add(lineup)
            variant = record.header("Variant") or ""
            if variant not in variants:
                variants.append(variant)
            summaries.append(summarize_game(lineup, deck, game, _fault_of(record)))
    # Duplicate play: a deck sequence played from both sides of the table.
    duplicate = any(
        any(tuple(reversed(lineup)) in lineups and len(lineup) == 2 for lineup in lineups)
        for lineups in lineups_by_deck.values()
    )
    standings = Standings(list(names), duplicate)
    for summary in summaries:
        standings.add(summary)
    return RecordStandings(standings, skipped, variants, list(paths))


def _fault_of(record: GameRecord) -> tuple[int, str] | None:
    for item in record.events:
        if isinstance(item, FaultLine):
            return item.player, item.kind.value
    return None


def _score_for(game: GameSummary, engine: int) -> float:
    if game.winner is None:
        return 0.5
    return 1.0 if game.winner == engine else 0.0


def signed(x: float, digits: int) -> str:
    """``x`` with its sign (``+1.50``, ``-0.25``), infinities as ``+inf``/``-inf``; a value
    that rounds to zero is ``0.00``, never ``-0.00`` or ``+0.00``."""
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    text = f"{x:.{digits}f}"
    if float(text) == 0.0:
        return f"{0.0:.{digits}f}"
    return text if text.startswith("-") else "+" + text


def _margin(lo: float, hi: float, digits: int) -> str:
    """``+/- half`` for a finite interval; the bounds themselves when one is infinite."""
    if math.isfinite(lo) and math.isfinite(hi):
        return f"+/- {(hi - lo) / 2:.{digits}f}"
    return f"({signed(lo, digits)}, {signed(hi, digits)})"


def elo_text(e: dict[str, Any]) -> str:
    """An Elo difference with its interval: ``+34.9 +/- 164.7`` when both bounds are finite,
    the bounds themselves when one is not (``+190.8 (+36.0, +inf)``), and an infinite
    difference only for a perfect record, which it names: ``+inf (no game lost)``."""
    elo, lo, hi = e["elo"], e["lo"], e["hi"]
    if math.isinf(elo):
        return "+inf (no game lost)" if elo > 0 else "-inf (no game won)"
    return f"{signed(elo, 1)} {_margin(lo, hi, 1)}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def distinct(names: Sequence[str]) -> list[str]:
    """The names with repeats told apart: the second ``X`` becomes ``X#2``, and so on."""
    seen: set[str] = set()
    out = []
    for name in names:
        shown, n = name, 1
        while shown in seen:
            n += 1
            shown = f"{name}#{n}"
        seen.add(shown)
        out.append(shown)
    return out


def finite_json(obj: Any) -> Any:
    """JSON has no infinities or NaN: map them to None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite_json(v) for v in obj]
    return obj


def summary_json(summary: GameSummary) -> str:
    return json.dumps(
        {
            "lineup": list(summary.lineup),
            "key": summary.key,
            "winner": summary.winner,
            "faulted": None if summary.faulted is None else list(summary.faulted),
            "hands": [list(h) for h in summary.hand_points],
            "seats": [list(s) for s in summary.seats],
            "columns": list(summary.columns),
        },
        separators=(",", ":"),
    )


def summary_from_json(text: str) -> GameSummary:
    d = json.loads(text)
    return GameSummary(
        lineup=tuple(d["lineup"]),
        key=d["key"],
        winner=d["winner"],
        faulted=None if d["faulted"] is None else (d["faulted"][0], d["faulted"][1]),
        hand_points=tuple((w, p) for w, p in d["hands"]),
        seats=tuple(tuple(s) for s in d["seats"]),
        columns=tuple(d.get("columns", ())),
    )
