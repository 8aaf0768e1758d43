"""Standings read back from record files (``summarize_records``), against the standings of the
same games counted as they were played: the same block, the same JSON, with the games that do
not verify listed and left out.

The games are played in memory by seeded players and written with the record writer, so no
engine process is started.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from ginproto.moves import Move
from ginproto.record import EngineInfo, dumps, record_from_log
from ginproto.rules import Rules
from ginproto.table import Decision, FaultKind, GameLog, PlayerFault, play_game
from referee.results.report import Standings, summarize, summarize_records
from tests.helpers import KnockerPlayer

NAMES = ("Knocker", "Other")


class Faulty(KnockerPlayer):
    """Plays like ``KnockerPlayer`` until its ``n``-th decision, where it times out."""

    def __init__(self, seed: int, n: int) -> None:
        super().__init__(seed)
        self.left = n

    def decide(self, view, decision: Decision) -> Move:  # type: ignore[no-untyped-def]
        self.left -= 1
        if self.left <= 0:
            raise PlayerFault(FaultKind.TIMEOUT, "no move after 1.00s (draw)")
        return super().decide(view, decision)


def played(
    seed: int, lineup: tuple[int, int], rules: Rules | None = None, fault_at: int = 0
) -> GameLog:
    players = [KnockerPlayer(seed * 10 + e) for e in lineup]
    if fault_at:
        players[1] = Faulty(seed * 10 + lineup[1], fault_at)
    return play_game(rules or Rules(), players, seed=seed)


def text_of(log: GameLog, lineup: tuple[int, int]) -> str:
    return dumps([record_from_log(log, [EngineInfo(NAMES[e]) for e in lineup])])


GAMES = [
    (1, (0, 1), 0),
    (1, (1, 0), 0),  # the same deal from the other seats: a duplicate pair
    (2, (0, 1), 0),
    (2, (1, 0), 3),  # the second engine of the lineup times out at its third decision
    (3, (1, 0), 0),
]


def expected(duplicate: bool) -> Standings:
    s = Standings(list(NAMES), duplicate)
    for seed, lineup, fault_at in GAMES:
        log = played(seed, lineup, fault_at=fault_at)
        s.add(summarize(lineup, 0, log))
    return s


def write(tmp_path: Path) -> Path:
    path = tmp_path / "match.gin"
    path.write_text(
        "".join(text_of(played(s, lineup, fault_at=f), lineup) for s, lineup, f in GAMES)
    )
    return path


def test_records_give_the_block_and_json_of_the_games_as_played(tmp_path: Path) -> None:
    path = write(tmp_path)
    found = summarize_records([str(path)])
    want = expected(duplicate=True)
    assert found.skipped == []
    assert found.files == [str(path)]
    assert found.variants == [str(Rules().variant)]
    assert found.standings.duplicate
    assert found.standings.lines() == want.lines()
    data = found.to_json()
    want_json = want.to_json()
    for key in ("engines", "games", "head_to_head", "pairs"):
        assert data[key] == want_json[key]
    assert data["pairs"]["pairs"] == 2
    assert data["skipped"] == [] and data["files"] == [str(path)]
    assert sum(e["faults"].get("timeout", 0) for e in data["engines"]) == 1
    assert data["engines"][0]["faults"] == {"timeout": 1}  # Knocker timed out (seat 1 of 2)


def test_the_same_deal_from_the_same_seats_is_no_pair(tmp_path: Path) -> None:
    path = tmp_path / "twice.gin"
    log = played(1, (0, 1))
    path.write_text(text_of(log, (0, 1)) + text_of(log, (0, 1)))
    found = summarize_records([str(path)])
    assert not found.standings.duplicate
    assert found.standings.pairs() is None


def test_games_that_do_not_verify_are_listed_and_left_out(tmp_path: Path) -> None:
    good = text_of(played(1, (0, 1)), (0, 1))
    torn = text_of(played(2, (1, 0)), (1, 0))
    path = tmp_path / "torn.gin"
    path.write_text(good + torn[: len(torn) // 2])
    found = summarize_records([str(path)])
    assert found.standings.games == 1
    [skipped] = found.skipped
    assert (skipped.path, skipped.game) == (str(path), 2)
    [listed] = found.to_json()["skipped"]
    assert listed["file"] == str(path) and listed["game"] == 2
    assert listed["line"] == skipped.error.line and listed["error"] == skipped.error.message


def test_a_game_with_a_wrong_move_is_left_out_with_its_line(tmp_path: Path) -> None:
    good = text_of(played(1, (0, 1)), (0, 1))
    lines = text_of(played(2, (0, 1)), (0, 1)).splitlines(keepends=True)
    # Swap the card of the first discard for another: the replay no longer verifies.
    for i, line in enumerate(lines):
        if " discard " in line or line.split()[1:2] == ["discard"]:
            lines[i] = line.replace(line.split()[-1], "ZZ")
            break
    path = tmp_path / "wrong.gin"
    path.write_text(good + "".join(lines) + good)
    found = summarize_records([str(path)])
    assert found.standings.games == 2  # the games after a bad one are still read
    assert [(s.path, s.game) for s in found.skipped] == [(str(path), 2)]
    error = found.skipped[0].error
    assert error.line > 0
    assert str(error).startswith(f"{path}:{error.line}: ")


def test_files_are_read_in_order_and_engines_numbered_as_first_seen(tmp_path: Path) -> None:
    first, second = tmp_path / "a.gin", tmp_path / "b.gin"
    first.write_text(text_of(played(1, (1, 0)), (1, 0)))
    second.write_text(text_of(played(2, (0, 1)), (0, 1)))
    found = summarize_records([str(first), str(second)])
    assert found.standings.names == ["Other", "Knocker"]
    assert found.files == [str(first), str(second)]
    assert found.standings.games == 2


def test_the_variants_read_are_listed_once_each(tmp_path: Path) -> None:
    oklahoma = Rules.from_params({"variant": "oklahoma"})
    path = tmp_path / "mixed.gin"
    path.write_text(
        text_of(played(1, (0, 1)), (0, 1))
        + text_of(played(2, (0, 1), oklahoma), (0, 1))
        + text_of(played(3, (0, 1)), (0, 1))
    )
    found = summarize_records([str(path)])
    assert found.variants == [str(Rules().variant), str(oklahoma.variant)]
    assert found.to_json()["variants"] == found.variants


def test_a_dash_reads_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    text = text_of(played(1, (0, 1)), (0, 1))

    class Stdin:
        buffer = io.BytesIO(text.encode())

    monkeypatch.setattr(sys, "stdin", Stdin)
    found = summarize_records(["-"])
    assert found.standings.games == 1 and found.files == ["-"]
    assert found.standings.names == list(NAMES)


def test_a_bad_game_read_from_standard_input_is_placed_in_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = text_of(played(1, (0, 1)), (0, 1))
    torn = text_of(played(2, (1, 0)), (1, 0))

    class Stdin:
        buffer = io.BytesIO((good + torn[: len(torn) // 2]).encode())

    monkeypatch.setattr(sys, "stdin", Stdin)
    found = summarize_records(["-"])
    [skipped] = found.skipped
    assert (skipped.path, skipped.game) == ("-", 2)
    assert str(skipped.error).startswith("<stdin>:")


def test_a_file_with_no_game_is_listed_and_the_next_file_read(tmp_path: Path) -> None:
    junk, good = tmp_path / "junk.gin", tmp_path / "good.gin"
    junk.write_text("this is no record\n")
    good.write_text(text_of(played(1, (0, 1)), (0, 1)))
    found = summarize_records([str(junk), str(good)])
    assert found.standings.games == 1
    [skipped] = found.skipped
    assert (skipped.path, skipped.game, skipped.error.line) == (str(junk), 1, 1)
    assert "this is no record" in skipped.error.message


@pytest.mark.parametrize(("first", "second"), [((1, 0), (2, 0)), ((1, 0), (1, 1))])
def test_different_deals_from_swapped_seats_are_no_pair(
    tmp_path: Path, first: tuple[int, int], second: tuple[int, int]
) -> None:
    """Games pair only when both the seed and the key of their deals agree."""
    path = tmp_path / "two.gin"
    (seed_a, key_a), (seed_b, key_b) = first, second
    a = play_game(Rules(), [KnockerPlayer(1), KnockerPlayer(2)], seed=seed_a, key=key_a)
    b = play_game(Rules(), [KnockerPlayer(3), KnockerPlayer(4)], seed=seed_b, key=key_b)
    path.write_text(text_of(a, (0, 1)) + text_of(b, (1, 0)))
    found = summarize_records([str(path)])
    assert not found.standings.duplicate
    assert found.standings.pairs() is None


def test_interleaved_pairs_are_matched_by_their_deal(tmp_path: Path) -> None:
    """Deals 3 and 2 from the first seats, then both from the swapped seats. Knocker wins
    both games of deal 3 and loses both of deal 2: pairs of 2 and 0, not two of 1."""
    order = [(3, (0, 1)), (2, (0, 1)), (3, (1, 0)), (2, (1, 0))]
    logs = [played(seed, lineup) for seed, lineup in order]
    path = tmp_path / "interleaved.gin"
    path.write_text(
        "".join(text_of(log, lineup) for log, (_, lineup) in zip(logs, order, strict=True))
    )
    want = Standings(list(NAMES), duplicate=True)
    for log, (seed, lineup) in zip(logs, order, strict=True):
        want.add(summarize(lineup, seed, log))
    found = summarize_records([str(path)])
    assert found.standings.pairs() == want.pairs()
    assert found.standings.pair_scores == want.pair_scores
    pairs = found.standings.pairs()
    assert pairs is not None and pairs["pentanomial"] == [1, 0, 0, 0, 1]
