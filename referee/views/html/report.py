"""A match report as one HTML page: the figures, their charts, and every game to replay.

``write_match_report(sources, out_path)`` reads game records (files, or ``GameRecord``s in
memory), replays each through the rules engine (``referee.views.html.model``), and writes:

- the result block, the very lines ``ginref match`` prints (``referee.results.report.Standings``);
- the Elo difference with its 95% interval after each game (two engines), or each engine's
  maximum-likelihood rating as the games come in (more engines), as a chart;
- the SPRT log-likelihood ratio after each game, with its bounds, when an SPRT is given;
- the distribution of the points per hand of each engine;
- the faults of each engine, with their reasons;
- a table of the games, each linking to its replay in the viewer below it (``#g12``).

Engines are told apart by the names the records give them. The statistics are those of
``referee.results.stats``; the charts are drawn in the page by the vendored Chartist library.
"""

from __future__ import annotations

import html
import logging
import math
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ginproto.record import GameRecord, read_games
from referee.results import stats
from referee.results.report import GameSummary, Standings
from referee.results.standings import TournamentStandings, pairwise
from referee.views.html.model import game_data
from referee.views.html.page import render_page
from referee.views.html.viewer import write_page

log = logging.getLogger(__name__)

__all__ = ["match_report", "write_match_report"]

Source = str | os.PathLike[str] | GameRecord
BIN = 10  # points per bar of the points-per-hand distribution
MAX_POINTS = 40  # at most this many points on a chart over games
INTERVAL = "ct-interval"  # the class of an interval's or a bound's line (grey, dashed)


def _records(sources: Iterable[Source]) -> Iterable[GameRecord]:
    for source in sources:
        if isinstance(source, GameRecord):
            yield source
        else:
            yield from read_games(source)


def _finite(x: float) -> float | None:
    return round(x, 2) if math.isfinite(x) else None


def seat_names(players: Sequence[str]) -> list[str]:
    """The engines of one game by name; a name that repeats in the game gets ``#2``, ``#3``
    (as ``ginref match`` names two copies of one engine)."""
    seen: Counter[str] = Counter()
    out = []
    for name in players:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def _summary(game: dict[str, Any], index: dict[str, int]) -> GameSummary:
    """What the standings need of a game, from the viewer's (replayed) data."""
    lineup = tuple(index.setdefault(name, len(index)) for name in seat_names(game["players"]))
    end = game["end"] or {}
    fault = game["fault"]
    hands = [h for h in game["hands"] if h.get("result")]
    return GameSummary(
        lineup=lineup,
        key=int(game["info"].get("Key", game["n"])),
        winner=None if end.get("winner") is None else lineup[end["winner"]],
        faulted=None if fault is None else (lineup[fault["p"]], fault["kind"]),
        hand_points=tuple(
            (
                None if h["result"]["winner"] is None else lineup[h["result"]["winner"]],
                h["result"]["points"],
            )
            for h in hands
        ),
        seats=tuple(tuple(lineup[p] for p in h["seats"]) for h in hands),
        columns=tuple(None if w is None else lineup[w] for w in end.get("games", ()))
        if game["columns"] > 1
        else (),
    )


def _checkpoints(n: int) -> list[int]:
    """The games after which a chart over games takes a point: all, or about MAX_POINTS."""
    step = max(1, math.ceil(n / MAX_POINTS))
    marks = list(range(step, n + 1, step))
    if marks and marks[-1] != n:
        marks.append(n)
    return marks


def _elo_chart(summaries: Sequence[GameSummary], names: Sequence[str]) -> dict[str, Any]:
    marks = _checkpoints(len(summaries))
    if len(names) == 2:
        w = l_ = d = 0
        series: list[list[float | None]] = [[], [], []]
        for i, s in enumerate(summaries, start=1):
            score = 0.5 if s.winner is None else (1.0 if s.winner == 0 else 0.0)
            w, l_, d = w + (score == 1.0), l_ + (score == 0.0), d + (score == 0.5)
            if i in marks:
                e = stats.elo_interval(w, l_, d)
                for k, v in enumerate((e.elo, e.lo, e.hi)):
                    series[k].append(_finite(v))
        return {
            "type": "line",
            "labels": [str(m) for m in marks],
            "series": series,
            "names": [f"Elo of {names[0]} vs {names[1]}", "95% interval: low", "high"],
            "classes": [None, INTERVAL, INTERVAL],
        }
    results: list[tuple[str, str, float]] = []
    per_engine: list[list[float | None]] = [[] for _ in names]
    for i, s in enumerate(summaries, start=1):
        results.extend((str(a), str(b), score) for a, b, score in pairwise(s))
        if i in marks:
            ratings = stats.elo_mle(results, prior_draws=1.0)
            for engine in range(len(names)):
                r = ratings.get(str(engine))
                per_engine[engine].append(None if r is None else _finite(r.elo))
    return {
        "type": "line",
        "labels": [str(m) for m in marks],
        "series": per_engine,
        "names": [f"{n} (maximum-likelihood Elo)" for n in names],
    }


def _sprt_chart(
    summaries: Sequence[GameSummary], sprt: tuple[float, float, float, float]
) -> dict[str, Any]:
    test = stats.SPRT(*sprt)
    llr: list[float | None] = []
    marks = _checkpoints(len(summaries))
    for i, s in enumerate(summaries, start=1):
        score = 0.5 if s.winner is None else (1.0 if s.winner == 0 else 0.0)
        test.update(int(score == 1.0), int(score == 0.0), int(score == 0.5))
        if i in marks:
            llr.append(_finite(test.llr))
    return {
        "type": "line",
        "labels": [str(m) for m in marks],
        "series": [llr, [round(test.lower, 3)] * len(marks), [round(test.upper, 3)] * len(marks)],
        "names": ["log-likelihood ratio", "lower bound (H0)", "upper bound (H1)"],
        "classes": [None, INTERVAL, INTERVAL],
        "state": test.state,
        "llr": test.llr,
        "bounds": [test.lower, test.upper],
    }


def _points_chart(summaries: Sequence[GameSummary], names: Sequence[str]) -> dict[str, Any]:
    """Each engine's points per hand as the standings count them (net points between two
    engines, points scored in the three-player game), in bins of BIN points."""
    counts: list[Counter[int]] = [Counter() for _ in names]
    for s in summaries:
        two = len(s.lineup) == 2
        for (winner, points), seated in zip(s.hand_points, s.seats, strict=True):
            for e in seated:
                if two:
                    value = 0 if winner is None else (points if winner == e else -points)
                else:
                    value = points if winner == e else 0
                counts[e][math.floor(value / BIN)] += 1
    bins = sorted({b for c in counts for b in c}) or [0]
    lo, hi = bins[0], bins[-1]
    span = range(lo, hi + 1)
    return {
        "type": "bar",
        "labels": [f"{b * BIN}..{b * BIN + BIN - 1}" for b in span],
        "series": [[c[b] for b in span] for c in counts],
        "names": list(names),
    }


def _sweeper(summaries: Sequence[GameSummary], names: Sequence[str]) -> int | None:
    """The engine of a two-engine match that won every game, if one did: then the Elo
    difference is infinite after every game and a chart of it would be empty."""
    winners = {s.winner for s in summaries}
    if len(names) != 2 or len(winners) != 1:
        return None
    (winner,) = winners
    return winner  # None when every game was drawn: an Elo difference of 0, charted


def _unbounded(winner: int, games: int, names: Sequence[str]) -> str:
    """In words, in place of an empty chart: ``winner`` won all the ``games``."""
    sign = "+" if winner == 0 else "-"
    return (
        '<p id="elo-unbounded" class="no-chart">'
        f"{html.escape(names[winner])} won every game ({games} of {games}), so the Elo"
        f" difference of {html.escape(names[0])} vs {html.escape(names[1])} is unbounded"
        f" ({sign}inf): it has no finite estimate or interval, and no chart, until"
        f" {html.escape(names[1 - winner])} wins or draws a game.</p>"
    )


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], label: str) -> str:
    out = [f'<table class="report" aria-label="{html.escape(label)}"><thead><tr>']
    out += [f"<th>{h}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _td(text: object, cls: str = "") -> str:
    return f'<td{f" class={cls!r}" if cls else ""}>{text}</td>'


def _figure(chart_id: str, caption: str) -> str:
    return (
        f'<figure><div id="{chart_id}" class="ct-chart" role="img"'
        f' aria-label="{html.escape(caption)}"></div>'
        f'<div id="{chart_id}-legend" class="legend"></div>'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def match_report(
    games: Sequence[dict[str, Any]],
    *,
    names: Sequence[str] | None = None,
    sprt: tuple[float, float, float, float] | None = None,
    duplicate: bool | None = None,
    tournament: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The report's HTML and its chart specifications, from the viewer's data of the games.
    ``tournament`` gives the result block of ``ginref tournament`` (maximum-likelihood Elo,
    the cross-table) instead of ``ginref match``'s."""
    index: dict[str, int] = {name: i for i, name in enumerate(names or ())}
    summaries = [_summary(g, index) for g in games]
    engines = sorted(index, key=index.__getitem__)
    if duplicate is None:
        keys = Counter(s.key for s in summaries if len(s.lineup) == 2)
        duplicate = any(n > 1 for n in keys.values())
    standings = Standings(engines, duplicate)
    for s in summaries:
        standings.add(s)
    block = standings.lines()
    if tournament:
        table = TournamentStandings(engines)
        for s in summaries:
            table.add(s)
        block = table.lines()
    charts: dict[str, Any] = {}
    parts = ['<section id="report" class="report" aria-labelledby="report-title">']
    parts.append('<h2 id="report-title">Result</h2>')
    if sprt is not None and len(engines) == 2:
        charts["chart-sprt"] = _sprt_chart(summaries, sprt)
        s = charts["chart-sprt"]
        state = {"H0": "H0 accepted", "H1": "H1 accepted"}.get(s["state"], "continue")
        block.append(f"SPRT: llr {s['llr']:.3f} ({s['bounds'][0]:.3f}, {s['bounds'][1]:.3f}),"
                     f" {state}")
    parts.append(f'<pre id="result-block">{html.escape(chr(10).join(block))}</pre>')
    if summaries:
        sweep = _sweeper(summaries, engines)
        if sweep is not None:
            parts.append(_unbounded(sweep, len(summaries), engines))
        else:
            elo = _elo_chart(summaries, engines)
            charts["chart-elo"] = elo
            what = (
                "The Elo difference with its 95% interval after each game"
                if len(engines) == 2
                else "Each engine's maximum-likelihood Elo after each game"
            )
            parts.append(
                _figure(
                    "chart-elo",
                    what + " (games on the horizontal axis; no point while it is infinite, as"
                    " long as one side has lost no game).",
                )
            )
    if "chart-sprt" in charts:
        elo0, elo1, alpha, beta = sprt  # type: ignore[misc]
        parts.append(
            _figure(
                "chart-sprt",
                f"The SPRT log-likelihood ratio after each game (elo0 {elo0:g}, elo1 {elo1:g},"
                f" alpha {alpha:g}, beta {beta:g}), between its two bounds.",
            )
        )
    if summaries:
        charts["chart-points"] = _points_chart(summaries, engines)
        parts.append(
            _figure(
                "chart-points",
                f"Hands by points per hand of each engine, in bins of {BIN}: net points (won"
                " minus lost) in the two-player games, points scored in the three-player game.",
            )
        )
    parts.append(_faults(games, engines, index))
    parts.append(_games_table(games, index))
    parts.append("</section>")
    return "\n".join(parts), charts


def _faults(games: Sequence[dict[str, Any]], engines: Sequence[str], index: dict[str, int]) -> str:
    counts: list[Counter[str]] = [Counter() for _ in engines]
    rows = []
    for g in games:
        f = g["fault"]
        if f is None:
            continue
        name = seat_names(g["players"])[f["p"]]
        counts[index[name]][f["kind"]] += 1
        rows.append(
            [
                _td(f'<a href="#g{g["n"]}">game {g["n"]}</a>', "text"),
                _td(html.escape(name), "text"),
                _td(html.escape(f["kind"]), "text"),
                _td(html.escape(f["detail"]), "text"),
            ]
        )
    out = ['<h2 id="faults">Faults</h2>']
    out.append(
        _table(
            ["Engine", "Faults", "By kind"],
            (
                [
                    _td(html.escape(n), "text"),
                    _td(sum(c.values())),
                    _td(html.escape(", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "none"),
                        "text"),
                ]
                for n, c in zip(engines, counts, strict=True)
            ),
            "faults per engine",
        )
    )
    if rows:
        out.append("<h3>Each fault and its reason</h3>")
        out.append(_table(["Game", "Engine", "Kind", "Reason"], rows, "every fault"))
    return "\n".join(out)


def _games_table(games: Sequence[dict[str, Any]], index: dict[str, int]) -> str:
    rows = []
    for g in games:
        end = g["end"] or {}
        winner = end.get("winner")
        players = g["players"]
        scores = " / ".join(" - ".join(str(v) for v in col) for col in end.get("scores", []))
        fault = g["fault"]
        rows.append(
            [
                _td(f'<a href="#g{g["n"]}h1m0" data-game="{g["n"]}">game {g["n"]}</a>', "text"),
                _td(html.escape(" vs ".join(players)), "text"),
                _td("drawn" if winner is None else html.escape(players[winner]), "text"),
                _td(html.escape(str(end.get("how", ""))), "text"),
                _td(len(g["hands"])),
                _td(scores),
                _td(
                    ""
                    if fault is None
                    else html.escape(f"{players[fault['p']]}: {fault['kind']}"),
                    "text",
                ),
            ]
        )
    return '<div id="games"><h2 id="games-title">Games</h2>' + _table(
        ["Game (replay)", "Players, by seat", "Winner", "End", "Hands", "Final score", "Fault"],
        rows,
        "the games, each linking to its replay",
    ) + "</div>"


def write_match_report(
    sources: Iterable[Source],
    out_path: str | os.PathLike[str],
    *,
    title: str = "ginref match report",
    names: Sequence[str] | None = None,
    sprt: tuple[float, float, float, float] | None = None,
    duplicate: bool | None = None,
    tournament: bool = False,
) -> int:
    """Write the report of the games in ``sources`` (record files or ``GameRecord``s) to
    ``out_path``, with every game in the replay viewer below the figures; return the number
    of games. ``names`` fixes the engines' order (the first is the one the head-to-head
    figures speak for); ``sprt`` is ``(elo0, elo1, alpha, beta)`` when the match ran one;
    ``duplicate`` pairs the games that share a deck (default: when any deck key repeats);
    ``tournament`` writes the tournament's result block (maximum-likelihood Elo, cross-table).
    Raises ``RecordError`` if a game does not verify."""
    games = [game_data(r, n) for n, r in enumerate(_records(sources), start=1)]
    report, charts = match_report(
        games, names=names, sprt=sprt, duplicate=duplicate, tournament=tournament
    )
    write_page(out_path, render_page(title, games, report, charts))
    log.info("wrote %s: %d games", out_path, len(games))
    return len(games)
