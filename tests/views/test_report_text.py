"""More of the result block's text and figures, each on a case small enough to work by hand:
an even record's LOS, several fault kinds on one engine, interleaved duplicate pairs, a
three-player match before its first game, and the summaries of drawn and forfeited games.
"""

from __future__ import annotations

from ginproto.game import Game, GameEnd
from ginproto.rules import Rules
from referee.results.report import GameSummary, Standings, summarize_game


def game(
    lineup: tuple[int, ...],
    winner: int | None,
    key: int = 0,
    fault: tuple[int, str] | None = None,
) -> GameSummary:
    hands = ((winner, 0 if winner is None else 10),)
    return GameSummary(tuple(lineup), key, winner, fault, hands, (tuple(lineup),))


def test_an_even_record_has_a_los_of_one_half() -> None:
    s = Standings(["A", "B"])
    s.add(game((0, 1), 0))
    s.add(game((1, 0), 1))
    assert s.head_to_head()["los"] == 0.5
    # Score 1/2 with a standard error of 0.5 / sqrt 2: the 95 % interval of the score passes
    # both 0 and 1, so both Elo bounds are infinite. Net points +10 and -10 a hand: mean 0,
    # standard error 10, so +/- 1.96 * 10.
    assert s.lines() == [
        "Score of A vs B: 1 - 1 - 0  [0.500] 2",
        "Elo difference: 0.0 (-inf, +inf), LOS: 50.0 %",
        "Net points per hand (A): 0.00 +/- 19.60 over 2 hands",
        "",
        "Rank Engine   Games   Won  Lost Drawn   Score  Pts/hand  Faults",
        "1    A            2     1     1     0   50.0%     +5.00  none",
        "2    B            2     1     1     0   50.0%     +5.00  none",
    ]


def test_every_fault_kind_of_an_engine_is_listed() -> None:
    s = Standings(["A", "B"])
    s.add(game((0, 1), 1, fault=(0, "timeout")))
    s.add(game((1, 0), 1, fault=(0, "crash")))
    s.add(game((0, 1), 1, fault=(0, "timeout")))
    assert s.lines()[-1] == (
        "2    A            3     0     3     0    0.0%      0.00  crash 1, timeout 2"
    )
    assert s.to_json()["engines"][0]["faults"] == {"crash": 1, "timeout": 2}


def test_interleaved_duplicate_pairs_are_matched_by_their_deck() -> None:
    """Deck 0 then deck 1, each from the first seats, then both from the swapped seats: A wins
    both games of deck 0 and loses both of deck 1, so the pairs are 2 and 0, never 1 and 1."""
    s = Standings(["A", "B"], duplicate=True)
    s.add(game((0, 1), 0, key=0))
    s.add(game((0, 1), 1, key=1))
    s.add(game((1, 0), 0, key=0))
    s.add(game((1, 0), 1, key=1))
    pairs = s.pairs()
    assert pairs is not None
    assert pairs["pairs"] == 2
    assert pairs["pentanomial"] == [1, 0, 0, 0, 1]


def test_a_three_player_match_before_its_first_game_has_no_score_line() -> None:
    s = Standings(["A", "B", "C"])
    lines = s.lines()
    assert lines[0] == ""
    assert not any(line.startswith("Score of") for line in lines)
    assert len(lines) == 5  # the blank line, the heading, one row per engine


def test_a_three_player_score_line_counts_the_drawn_games() -> None:
    s = Standings(["A", "B", "C"])
    s.add(GameSummary((0, 1, 2), 0, None, None, (), ()))
    s.add(GameSummary((2, 0, 1), 1, 2, None, (), ()))
    assert s.lines()[0] == "Score of A vs B vs C: 0 - 0 - 1, 1 drawn  [0.250, 0.250, 0.750] 2"


def test_a_drawn_game_is_summarized_for_nobody() -> None:
    g = Game(Rules())
    g._finish(GameEnd.HAND_CAP, None)  # drawn: the hand cap reached with the totals level
    summary = summarize_game((1, 0), 3, g, None)
    assert summary.winner is None and summary.faulted is None
    assert summary.lineup == (1, 0) and summary.key == 3
    assert summary.columns == ()
    s = Standings(["A", "B"])
    s.add(summary)
    assert [(t.draws, t.wins, t.losses) for t in s.tallies] == [(1, 0, 0), (1, 0, 0)]


def test_a_forfeit_is_summarized_by_engine() -> None:
    g = Game(Rules())
    g.forfeit(0)  # player 0 forfeits: player 1 wins
    summary = summarize_game((1, 0), 0, g, (0, "crash"))
    assert summary.winner == 0  # player 1 is engine 0
    assert summary.faulted == (1, "crash")  # player 0 is engine 1


def test_a_hollywood_forfeit_before_any_game_is_won_has_no_column_winner() -> None:
    g = Game(Rules.from_params({"variant": "hollywood"}))
    g.forfeit(1)
    summary = summarize_game((1, 0), 0, g, (1, "timeout"))
    assert summary.columns == (None, None, None)
    assert summary.winner == 1
    s = Standings(["A", "B"])
    s.add(summary)
    assert s.hollywood_series == 1
    assert [t.columns_won for t in s.tallies] == [0, 0]
    assert "Hollywood games won (three per series, 1 series): A 0, B 0" in s.lines()
