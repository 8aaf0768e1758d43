"""The result block of a match: its figures, their text, and their JSON
(referee/results/report.py)."""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import pytest

from referee.results.report import GameSummary, Standings, elo_text, signed

Z95 = NormalDist().inv_cdf(0.975)


def game(
    lineup: tuple[int, ...],
    winner: int | None,
    hands: list[tuple[int | None, int]] | None = None,
    key: int = 0,
    fault: tuple[int, str] | None = None,
    seats: list[tuple[int, ...]] | None = None,
) -> GameSummary:
    """A game between engines ``lineup``; by default one hand, won by the game's winner for
    10 points (a drawn game: one drawn hand)."""
    if hands is None:
        hands = [(winner, 0 if winner is None else 10)]
    if seats is None:
        seats = [tuple(lineup[:2]) for _ in hands]
    return GameSummary(tuple(lineup), key, winner, fault, tuple(hands), tuple(seats))


def two(wins: int, losses: int, draws: int = 0, names: tuple[str, str] = ("A", "B")) -> Standings:
    s = Standings(list(names))
    for w, n in ((0, wins), (1, losses), (None, draws)):
        for i in range(n):
            s.add(game((0, 1) if i % 2 else (1, 0), w))
    return s


def hand_elo(score: float) -> float:
    return -400 * math.log10(1 / score - 1)


# -- Elo, LOS and their text ------------------------------------------------------------------


def test_an_infinite_upper_bound_is_shown_with_the_point_estimate() -> None:
    """6 - 2 - 0 used to read '+inf (no game lost)'."""
    s = two(6, 2)
    lines = s.lines()
    mu = 0.75
    sd = math.sqrt((6 * (1 - mu) ** 2 + 2 * mu**2) / 8 / 8)
    lo = hand_elo(mu - Z95 * sd)
    assert lines[1] == (
        f"Elo difference: +{hand_elo(mu):.1f} ({lo:+.1f}, +inf), LOS: "
        f"{100 * 0.5 * (1 + math.erf(4 / math.sqrt(16))):.1f} %"
    )
    assert lines[1].startswith("Elo difference: +190.8 (-34.9, +inf)")
    assert "no game lost" not in "\n".join(lines)


def test_no_game_lost_is_said_only_of_a_perfect_record() -> None:
    assert two(5, 0).lines()[1].startswith("Elo difference: +inf (no game lost), LOS:")
    assert two(0, 3).lines()[1].startswith("Elo difference: -inf (no game won), LOS:")
    # Won five, drew one: a finite estimate, an unbounded interval above, and a game not won.
    text = two(5, 0, 1).lines()[1]
    assert "+inf)" in text and "no game lost" not in text


def test_an_even_score_reads_zero_never_minus_zero() -> None:
    lines = two(4, 4).lines()
    assert lines[1].startswith("Elo difference: 0.0 +/- ")
    assert "-0.0 " not in lines[1] and "+0.0 " not in lines[1]
    assert signed(-0.0, 1) == "0.0" and signed(-1e-9, 2) == "0.00" and signed(0.004, 2) == "0.00"
    assert signed(0.25, 2) == "+0.25" and signed(-0.25, 2) == "-0.25"
    assert signed(math.inf, 1) == "+inf" and signed(-math.inf, 1) == "-inf"


def test_elo_text_both_bounds_infinite() -> None:
    assert elo_text({"elo": 0.0, "lo": -math.inf, "hi": math.inf}) == "0.0 (-inf, +inf)"
    assert elo_text({"elo": 12.34, "lo": 2.0, "hi": 20.0}) == "+12.3 +/- 9.0"


def test_json_gives_the_values_of_elo_los_and_points_computed_by_hand() -> None:
    s = two(6, 2)
    data = json.loads(json.dumps(s.to_json(), allow_nan=False))
    h = data["head_to_head"]
    assert (h["wins"], h["losses"], h["draws"], h["games"], h["score"]) == (6, 2, 0, 8, 0.75)
    mu = 0.75
    sd = math.sqrt((6 * (1 - mu) ** 2 + 2 * mu**2) / 8 / 8)
    assert h["elo"]["elo"] == pytest.approx(400 * math.log10(3))
    assert h["elo"]["lo"] == pytest.approx(hand_elo(mu - Z95 * sd))
    assert h["elo"]["hi"] is None  # +inf: the score interval reaches 1
    assert h["los"] == pytest.approx(0.5 * (1 + math.erf((6 - 2) / math.sqrt(2 * 8))))
    # Each game had one hand of 10 points for its winner: A scored 10 in 6 of 8 hands.
    a = data["engines"][0]
    assert a["points_per_hand"]["mean"] == pytest.approx(60 / 8)
    net = h["net_points_per_hand"]
    assert net["mean"] == pytest.approx((60 - 20) / 8) and net["hands"] == 8
    values = [10] * 6 + [-10] * 2
    sd_net = math.sqrt(sum((v - 5) ** 2 for v in values) / 7)
    assert net["hi"] - net["lo"] == pytest.approx(2 * Z95 * sd_net / math.sqrt(8))


def test_json_has_no_infinities_anywhere() -> None:
    """One hand played: its points interval is infinite, and JSON says null, not Infinity."""
    s = Standings(["A", "B"])
    s.add(game((0, 1), 0))
    text = json.dumps(s.to_json(), allow_nan=False)
    data = json.loads(text)
    assert data["engines"][0]["points_per_hand"] == {"mean": 10.0, "lo": None, "hi": None}
    assert data["head_to_head"]["elo"] == {"elo": None, "lo": None, "hi": None}


# -- duplicate pairs ----------------------------------------------------------------------------


def test_a_duplicate_pair_is_scored_by_engine_not_by_seat() -> None:
    """Engine A wins both decks from both seats: two won pairs (2 of 2 each). Scored by seat
    (for whoever sits first), each pair would read 1 of 2. Then A wins a deck from seat 0 and
    loses it from seat 1: an even pair, which by seat would read 2."""
    s = Standings(["A", "B"], duplicate=True)
    for key in (1, 2):
        s.add(game((0, 1), 0, key=key))
        s.add(game((1, 0), 0, key=key))
    assert s.pair_scores == [2.0, 2.0]
    s.add(game((0, 1), 0, key=3))
    s.add(game((1, 0), 1, key=3))
    assert s.pair_scores == [2.0, 2.0, 1.0]
    pairs = s.pairs()
    assert pairs is not None and pairs["pentanomial"] == [0, 0, 1, 0, 2]


def test_the_pairs_line_states_an_infinite_bound() -> None:
    s = Standings(["A", "B"], duplicate=True)
    for key, (first, second) in enumerate([(0, 0), (0, 0), (0, 1), (0, 0)]):
        s.add(game((0, 1), first, key=key))
        s.add(game((1, 0), second, key=key))
    line = next(x for x in s.lines() if x.startswith("Duplicate pairs:"))
    assert line.startswith("Duplicate pairs: 4, pentanomial [0, 0, 1, 0, 3], Elo +")
    assert line.endswith(", +inf)")
    assert "no game lost" not in line


# -- names --------------------------------------------------------------------------------------


def test_control_characters_in_names_are_shown_escaped() -> None:
    evil = "Evil\x1b[2J\x1b]0;title\x07\rX"
    text = "\n".join(two(1, 1, names=(evil, "B")).lines())
    for raw in ("\x1b", "\x07", "\r"):
        assert raw not in text
    assert "Evil\\x1b[2J\\x1b]0;title\\x07\\x0dX vs B" in text


def test_long_names_are_never_cut_into_the_same_name() -> None:
    a, b = "Engine with a long name, version 1", "Engine with a long name, version 2"
    lines = two(1, 1, names=(a, b)).lines()
    rows = [x for x in lines if x[:1] in ("1", "2")]
    assert any(a in row for row in rows) and any(b in row for row in rows)
    header = next(x for x in lines if x.startswith("Rank"))
    # The column is as wide as the longest name: the games column ends under its header.
    end = header.index("Games") + len("Games")
    for row in rows:
        assert row[end - 1] == "2" and row[end] == " "


def test_equal_names_are_told_apart() -> None:
    lines = "\n".join(two(1, 1, names=("Same", "Same")).lines())
    assert "Score of Same vs Same#2:" in lines


# -- three players ------------------------------------------------------------------------------


def three_player_standings() -> Standings:
    """Three hands of one game among A, B, C: A (box) beats B (captain) for 20 while C sits
    out; B (box) beats C for 30 while A sits out; a drawn hand between C and A. A wins."""
    s = Standings(["A", "B", "C"])
    s.add(
        GameSummary(
            (0, 1, 2),
            0,
            0,
            None,
            ((0, 20), (1, 30), (None, 0)),
            ((0, 1), (1, 2), (2, 0)),
        )
    )
    return s


def test_three_player_points_per_hand_are_points_scored_nobody_charged() -> None:
    s = three_player_standings()
    a, b, c = s.tallies
    assert (a.hands, b.hands, c.hands) == (2, 2, 2)  # the sitter's hands do not count
    # Points scored per hand played: A 20 in 2 hands, B 30 in 2, C nothing in 2; a hand lost
    # costs nothing (only the hand's winner scores).
    assert (a.points.mean, b.points.mean, c.points.mean) == (10.0, 15.0, 0.0)


def test_two_player_points_per_hand_mean_the_same_as_three_player() -> None:
    s = Standings(["A", "B"])
    s.add(game((0, 1), 0, hands=[(0, 20), (1, 30), (None, 0), (0, 10)]))
    a, b = s.tallies
    assert a.points.mean == pytest.approx(30 / 4) and b.points.mean == pytest.approx(30 / 4)
    assert s.head_to_head()["net_points_per_hand"]["mean"] == pytest.approx(0.0)


def test_three_player_matches_get_a_score_line() -> None:
    s = three_player_standings()
    s.add(GameSummary((1, 2, 0), 1, None, None, ((None, 0),), ((1, 2),)))
    s.add(GameSummary((2, 0, 1), 2, 2, (1, "timeout"), (), ()))
    lines = s.lines()
    assert lines[0] == "Score of A vs B vs C: 1 - 0 - 1, 1 drawn  [0.500, 0.167, 0.500] 3"
    table = "\n".join(lines)
    assert "Pts/hand" in table and "timeout 1" in table


# -- the whole block, line by line --------------------------------------------------------------


def mixed() -> Standings:
    """Alpha and Beta, two decks played from both seats: Alpha wins the first deck's first
    game (hands +20 and -10) and draws the second; it forfeits both games of the second deck
    on time (one hand of 5 for Beta is played before the first forfeit)."""
    s = Standings(["Alpha", "Beta"], duplicate=True)
    s.add(game((0, 1), 0, hands=[(0, 20), (1, 10)], key=0))
    s.add(game((1, 0), None, hands=[(None, 0)], key=0))
    s.add(game((0, 1), 1, hands=[(1, 5)], key=1, fault=(0, "timeout")))
    s.add(game((1, 0), 1, hands=[], key=1, fault=(0, "timeout")))
    return s


def test_the_whole_result_block_with_figures_computed_by_hand() -> None:
    s = mixed()
    # 1 - 2 - 1: score 3/8, per-game variance (0.625^2 + 0.125^2 + 2 * 0.375^2) / 4.
    mu, var = 0.375, (0.625**2 + 0.125**2 + 2 * 0.375**2) / 4
    hi = hand_elo(mu + Z95 * math.sqrt(var / 4))
    assert mu - Z95 * math.sqrt(var / 4) < 0  # the lower end is -inf
    los = 0.5 * (1 + math.erf((1 - 2) / math.sqrt(2 * 3)))
    net = [20, -10, 0, -5]
    half = Z95 * math.sqrt(sum((v - 1.25) ** 2 for v in net) / 3) / 2
    # Pairs by Alpha's score: deck 0 scores 1 + 1/2, deck 1 scores 0.
    pmu, pvar = 0.375, (0.375**2 + 0.375**2) / 2
    phi = hand_elo(pmu + Z95 * math.sqrt(pvar / 2))
    assert s.lines() == [
        "Score of Alpha vs Beta: 1 - 2 - 1  [0.375] 4",
        f"Elo difference: {hand_elo(mu):+.1f} (-inf, {hi:+.1f}), LOS: {100 * los:.1f} %",
        f"Net points per hand (Alpha): +1.25 +/- {half:.2f} over 4 hands",
        f"Duplicate pairs: 2, pentanomial [1, 0, 0, 1, 0], Elo {hand_elo(pmu):+.1f}"
        f" (-inf, {phi:+.1f})",
        "",
        "Rank Engine   Games   Won  Lost Drawn   Score  Pts/hand  Faults",
        "1    Beta         4     2     1     1   62.5%     +3.75  none",
        "2    Alpha        4     1     2     1   37.5%     +5.00  timeout 2",
    ]


def test_the_whole_json_with_figures_computed_by_hand() -> None:
    data = mixed().to_json()
    alpha, beta = data["engines"]
    assert alpha == {
        "name": "Alpha",
        "games": 4,
        "wins": 1,
        "losses": 2,
        "draws": 1,
        "score": 0.375,
        "hands": 4,
        "hands_won": 1,
        "points_per_hand": alpha["points_per_hand"],
        "faults": {"timeout": 2},
        "hollywood_games_won": 0,
    }
    assert alpha["points_per_hand"]["mean"] == 5.0
    sd = math.sqrt(3 * 25 + 15**2) / math.sqrt(3)  # 20, 0, 0, 0 around 5
    assert alpha["points_per_hand"]["hi"] == pytest.approx(5 + Z95 * sd / 2)
    assert (beta["hands"], beta["hands_won"], beta["faults"]) == (4, 2, {})
    assert beta["points_per_hand"]["mean"] == 3.75 and beta["score"] == 0.625
    assert data["games"] == 4
    assert data["pairs"]["pairs"] == 2 and data["pairs"]["pentanomial"] == [1, 0, 0, 1, 0]
    assert data["pairs"]["lo"] is None and data["pairs"]["hi"] > data["pairs"]["elo"]
    assert data["head_to_head"]["los"] == pytest.approx(0.5 * (1 + math.erf(-1 / math.sqrt(6))))


def test_games_without_pairs_when_not_duplicate_and_an_engine_without_hands() -> None:
    s = Standings(["A", "B"])  # the same deck key twice, but not a duplicate match
    s.add(game((0, 1), 0, hands=[], key=0, fault=(1, "crash")))
    s.add(game((1, 0), 0, hands=[], key=0, fault=(1, "crash")))
    assert s.pairs() is None and s.to_json()["pairs"] is None
    assert not any(line.startswith("Duplicate") for line in s.lines())
    rows = s.lines()[-2:]
    assert rows == [
        "1    A            2     2     0     0  100.0%         -  none",
        "2    B            2     0     2     0    0.0%         -  crash 2",
    ]
    assert s.to_json()["engines"][0]["points_per_hand"] is None
    assert "net_points_per_hand" not in s.head_to_head()
    assert s.lines()[1] == "Elo difference: +inf (no game lost), LOS: 92.1 %"  # 0.5 (1 + erf 1)


def test_no_decisive_game_has_no_los() -> None:
    s = Standings(["A", "B"])
    s.add(game((0, 1), None))
    assert s.head_to_head()["los"] is None
    assert s.lines()[1].endswith(", LOS: -")


def test_hollywood_counts_series_and_games_won() -> None:
    s = Standings(["A", "B"])
    for columns in ((0, 1, 0), (1, 1, None)):
        s.add(GameSummary((0, 1), 0, columns[0], None, ((0, 10),), ((0, 1),), columns))
    assert s.hollywood_series == 2
    assert [t.columns_won for t in s.tallies] == [2, 3]
    assert "Hollywood games won (three per series, 2 series): A 2, B 3" in s.lines()
    assert [e["hollywood_games_won"] for e in s.to_json()["engines"]] == [2, 3]


def test_summaries_must_have_one_seat_list_per_hand() -> None:
    s = Standings(["A", "B"])
    with pytest.raises(ValueError):
        s.add(GameSummary((0, 1), 0, 0, None, ((0, 10), (0, 5)), ((0, 1),)))


def test_names_are_cut_at_the_limit_and_kept_apart() -> None:
    from ginproto.text import ID_LIMIT
    from referee.results.report import distinct

    long = "N" * 300
    s = two(1, 1, names=(long + "1", long + "2"))
    shown = s.shown_names()
    assert all(len(n) <= ID_LIMIT + 3 for n in shown) and shown[0] != shown[1]
    assert shown[1] == shown[0] + "#2"
    assert distinct(["X#2", "X", "X"]) == ["X#2", "X", "X#3"]
    assert distinct(["A", "B"]) == ["A", "B"]


# -- a game's summary as stored (a tournament's store) ----------------------------------------


def test_a_summary_is_stored_as_compact_json_and_read_back_the_same() -> None:
    from referee.results.report import summary_from_json, summary_json

    summary = GameSummary(
        (2, 0, 1), 7, 2, (1, "timeout"), ((2, 25), (None, 0)), ((2, 0), (0, 1)), (2, None, 0)
    )
    text = summary_json(summary)
    assert text == (
        '{"lineup":[2,0,1],"key":7,"winner":2,"faulted":[1,"timeout"],'
        '"hands":[[2,25],[null,0]],"seats":[[2,0],[0,1]],"columns":[2,null,0]}'
    )
    assert summary_from_json(text) == summary
    drawn = GameSummary((0, 1), 3, None, None, ((None, 0),), ((0, 1),))
    assert summary_json(drawn) == (
        '{"lineup":[0,1],"key":3,"winner":null,"faulted":null,'
        '"hands":[[null,0]],"seats":[[0,1]],"columns":[]}'
    )
    assert summary_from_json(summary_json(drawn)) == drawn


def test_a_summary_stored_before_hollywood_columns_reads_with_none() -> None:
    from referee.results.report import summary_from_json

    text = '{"lineup":[1,0],"key":4,"winner":0,"faulted":null,"hands":[[0,12]],"seats":[[1,0]]}'
    assert summary_from_json(text) == GameSummary((1, 0), 4, 0, None, ((0, 12),), ((1, 0),), ())
