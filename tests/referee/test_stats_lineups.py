"""``ginref stats`` on records of different lineups (a match A-B and a match C-D): a score
line for each lineup that met, and standings over each engine's own games; never the
three-player header of engines that did not play together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ginproto.rules import Rules, Variant
from ginproto.simulate import GreedyPlayer, RandomPlayer, run_games
from referee.cli import cli


def named(kind: type[GreedyPlayer] | type[RandomPlayer], name: str, *args: str) -> object:
    player = kind(*args)
    player.name = name  # type: ignore[misc]
    return player


def record(path: Path, *players: object, games: int = 4, rules: Rules | None = None) -> Path:
    run_games(rules or Rules(target=40), list(players), games, path.stem, record=path)  # type: ignore[arg-type]
    return path


def stats(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["stats", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout


def table(out: str) -> list[str]:
    """The rows of the standings, below their ``Rank`` header."""
    lines = out.splitlines()
    return lines[next(i for i, x in enumerate(lines) if x.startswith("Rank ")) + 1 :]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lineups")


def test_two_matches_of_different_engines_give_one_score_line_each(folder: Path) -> None:
    ab = record(folder / "ab.gin", named(GreedyPlayer, "A"), named(RandomPlayer, "B", "b"))
    cd = record(folder / "cd.gin", named(RandomPlayer, "C", "c"), named(GreedyPlayer, "D"))
    code, out = stats(str(ab), str(cd))
    assert code == 0, out
    lines = out.splitlines()
    _, alone_ab = stats(str(ab))
    _, alone_cd = stats(str(cd))
    assert lines[0] == alone_ab.splitlines()[0] and lines[0].startswith("Score of A vs B: ")
    assert lines[1] == alone_cd.splitlines()[0] and lines[1].startswith("Score of C vs D: ")
    assert lines[2] == "4 engines, not all of them met: each one's figures are over its own games"
    assert not any(" vs C" in line or "Elo" in line for line in lines)
    rows = {line.split()[1]: line for line in table(out)}
    assert set(rows) == {"A", "B", "C", "D"}
    for alone in (alone_ab, alone_cd):  # each engine's row is its row in its own match
        for line in table(alone):
            assert rows[line.split()[1]].split()[2:] == line.split()[2:]
    data = json.loads(stats("--json", str(ab), str(cd))[1])
    assert [m["engines"] for m in data["meetings"]] == [["A", "B"], ["C", "D"]]
    assert [m["games"] for m in data["meetings"]] == [4, 4]
    assert "head_to_head" not in data


def test_three_engines_in_two_player_games_are_not_a_three_player_game(folder: Path) -> None:
    ab = record(folder / "ab2.gin", named(GreedyPlayer, "A"), named(RandomPlayer, "B", "b"))
    ac = record(folder / "ac.gin", named(GreedyPlayer, "A"), named(RandomPlayer, "C", "c"))
    code, out = stats(str(ab), str(ac))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("Score of A vs B: ") and lines[1].startswith("Score of A vs C: ")
    assert "vs B vs C" not in out and " drawn " not in out
    a_row = next(line for line in table(out) if line.split()[1] == "A")
    assert a_row.split()[2] == "8"  # A's games: both matches
    # The games of one lineup, of two players or three, keep the block of their match.
    assert "not all of them met" not in stats(str(ab))[1]
    three = record(
        folder / "abc.gin",
        named(GreedyPlayer, "A"),
        named(RandomPlayer, "B", "b"),
        named(RandomPlayer, "C", "c"),
        games=3,
        rules=Rules(variant=Variant.THREEHANDED, target=40),
    )
    out = stats(str(three))[1]
    assert out.startswith("Score of A vs B vs C: ") and "not all of them met" not in out
    assert "meetings" not in json.loads(stats("--json", str(three))[1])
