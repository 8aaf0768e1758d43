"""A match's standings, from game summaries with hand-worked values: who is credited with each
result, point and fault, and what the head-to-head and duplicate figures say.

The summaries are built by hand (no game is played), so every figure can be checked against
arithmetic done here.
"""

from __future__ import annotations

import pytest

from referee.results import stats
from referee.results.report import GameSummary, Standings


def game(
    lineup: tuple[int, ...],
    winner: int | None,
    hands: tuple[tuple[int | None, int], ...] = (),
    key: int = 0,
    faulted: tuple[int, str] | None = None,
) -> GameSummary:
    return GameSummary(
        lineup=lineup,
        key=key,
        winner=winner,
        faulted=faulted,
        hand_points=hands,
        seats=tuple(lineup for _ in hands),
    )


def test_results_are_credited_to_engines_whatever_their_seats() -> None:
    s = Standings(["A", "B"])
    s.add(game((0, 1), winner=0))
    s.add(game((1, 0), winner=0))  # A wins from the other seat
    s.add(game((1, 0), winner=1))
    s.add(game((0, 1), winner=None))
    a, b = s.tallies
    assert (a.games, a.wins, a.losses, a.draws) == (4, 2, 1, 1)
    assert (b.games, b.wins, b.losses, b.draws) == (4, 1, 2, 1)
    assert a.score == pytest.approx(2.5 / 4)
    assert s.games == 4
    engines = s.to_json()["engines"]
    assert [(e["wins"], e["losses"], e["draws"]) for e in engines] == [(2, 1, 1), (1, 2, 1)]


def test_points_per_hand_are_points_won_and_the_net_figure_is_their_difference() -> None:
    s = Standings(["A", "B"])
    s.add(game((0, 1), winner=0, hands=((0, 30), (1, 10), (None, 0))))
    s.add(game((1, 0), winner=0, hands=((0, 20),)))
    a, b = s.tallies
    assert (a.hands, a.hands_won, b.hands, b.hands_won) == (4, 2, 4, 1)
    # Each engine scores the points of the hands it won, 0 in the others ...
    assert a.points.mean == pytest.approx((30 + 0 + 0 + 20) / 4)
    assert b.points.mean == pytest.approx((0 + 10 + 0 + 0) / 4)
    # ... and the net figure is A's points minus B's, a hand.
    h = s.head_to_head()
    assert h["net_points_per_hand"]["mean"] == pytest.approx((30 - 10 + 0 + 20) / 4)
    assert h["net_points_per_hand"]["hands"] == 4


def test_head_to_head_elo_and_los_are_those_of_the_score() -> None:
    s = Standings(["A", "B"])
    for winner in (0,) * 12 + (1,) * 6 + (None,) * 2:
        s.add(game((0, 1) if s.games % 2 else (1, 0), winner=winner))
    h = s.to_json()["head_to_head"]
    assert (h["wins"], h["losses"], h["draws"], h["games"]) == (12, 6, 2, 20)
    assert h["score"] == pytest.approx(0.65)
    expected = stats.elo_interval(12, 6, 2)
    assert h["elo"]["elo"] == pytest.approx(stats.elo_from_score(0.65))
    assert h["elo"]["elo"] == pytest.approx(expected.elo)
    assert h["elo"]["lo"] == pytest.approx(expected.lo) and expected.lo < expected.elo
    assert h["elo"]["hi"] == pytest.approx(expected.hi) and expected.hi > expected.elo
    assert h["los"] == pytest.approx(stats.los(12, 6))
    assert 0.5 < h["los"] < 1.0


def test_faults_are_counted_for_the_engine_that_made_them() -> None:
    s = Standings(["A", "B"])
    s.add(game((1, 0), winner=0, faulted=(1, "timeout")))
    s.add(game((0, 1), winner=0, faulted=(1, "timeout")))
    s.add(game((0, 1), winner=1, faulted=(0, "crash")))
    a, b = s.to_json()["engines"]
    assert a["faults"] == {"crash": 1}
    assert b["faults"] == {"timeout": 2}


def test_duplicate_pairs_are_scored_by_engine_not_by_seat() -> None:
    s = Standings(["A", "B"], duplicate=True)
    # Deck 0: A wins from both seats (2 points of 2). Deck 1: each seat wins once (1 of 2).
    # Deck 2: B wins from both seats (0 of 2).
    s.add(game((0, 1), winner=0, key=0))
    s.add(game((1, 0), winner=0, key=0))
    s.add(game((0, 1), winner=0, key=1))
    s.add(game((1, 0), winner=1, key=1))
    s.add(game((0, 1), winner=1, key=2))
    s.add(game((1, 0), winner=1, key=2))
    assert sorted(s.pair_scores) == [0.0, 1.0, 2.0]
    pairs = s.pairs()
    assert pairs is not None
    assert pairs["pairs"] == 3
    assert pairs["pentanomial"] == [1, 0, 1, 0, 1]
    assert pairs["elo"] == pytest.approx(0.0, abs=1e-9)


def test_an_unfinished_pair_is_not_counted() -> None:
    s = Standings(["A", "B"], duplicate=True)
    s.add(game((0, 1), winner=0, key=4))
    assert s.pairs() is None
    s.add(game((1, 0), winner=None, key=4))
    assert s.pair_scores == [1.5]


def test_a_game_log_is_summarized_by_engine() -> None:
    from helpers import KnockerPlayer

    from ginproto.rules import Rules, Variant
    from ginproto.table import play_game
    from referee.results.report import summarize

    log = play_game(Rules(target=40), [KnockerPlayer(1), KnockerPlayer(2)], seed=3, key=5)
    summary = summarize((7, 4), 5, log)  # engine 7 is player 0, engine 4 player 1
    assert summary.lineup == (7, 4) and summary.key == 5
    assert log.winner is not None
    assert summary.winner == (7, 4)[log.winner]
    assert summary.faulted is None
    entries = [h.entry for h in log.hands if h.entry is not None]
    assert len(summary.hand_points) == len(entries) > 0
    for (winner, points), seats, entry in zip(
        summary.hand_points, summary.seats, entries, strict=True
    ):
        assert winner == (None if entry.winner is None else (7, 4)[entry.winner])
        assert points == entry.result.points
        assert seats == tuple((7, 4)[p] for p in entry.seats)
    assert summary.columns == ()

    hollywood = play_game(
        Rules(variant=Variant.HOLLYWOOD, target=30), [KnockerPlayer(3), KnockerPlayer(4)], 8
    )
    columns = summarize((1, 0), 0, hollywood).columns
    assert len(columns) == 3
    assert columns == tuple(
        None if w is None else (1, 0)[w] for w in hollywood.game.game_winners
    )


def test_a_forfeit_is_summarized_against_the_engine_that_made_it() -> None:
    from helpers import RandomPlayer

    from ginproto.game import GameView
    from ginproto.moves import Move
    from ginproto.rules import Rules
    from ginproto.table import Decision, FaultKind, PlayerFault, play_game
    from referee.results.report import summarize

    class Faulty(RandomPlayer):
        def decide(self, view: GameView, decision: Decision) -> Move:
            raise PlayerFault(FaultKind.CRASH, "gone")

    log = play_game(Rules(), [RandomPlayer(1), Faulty(2)], seed=1)
    summary = summarize((3, 9), 0, log)
    assert summary.faulted == (9, "crash")
    assert summary.winner == 3
