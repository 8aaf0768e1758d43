"""``ginref stats``: the result block of a match, from its record files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ginproto.record import TruncatedRecordError, loads
from referee.cli import cli
from referee.results.report import summarize_records


def ginref(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.output


def match(path: Path, *args: str) -> tuple[list[str], dict[str, object]]:
    """Play a match with ``--record path``; return its result block and its JSON figures."""
    common = ["match", *args, "--tc", "inf", "-q", "--record", str(path)]
    code, text = ginref(*common)
    assert code == 0, text
    path.unlink()  # the same games again, for the JSON figures
    code, data = ginref(*common, "--json")
    assert code == 0, data
    return text.splitlines(), json.loads(data)


FIGURES = ("engines", "games", "head_to_head", "pairs")


@pytest.fixture(scope="module")
def duplicate_match(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], dict]:  # type: ignore[type-arg]
    path = tmp_path_factory.mktemp("stats") / "dup.gin"
    lines, data = match(path, "simple", "random", "--games", "6", "--seed", "5", "--duplicate")
    return path, lines, data


def test_stats_prints_the_block_of_the_match_that_played_the_games(
    duplicate_match: tuple[Path, list[str], dict],  # type: ignore[type-arg]
) -> None:
    path, lines, _ = duplicate_match
    code, out = ginref("stats", str(path))
    assert code == 0
    assert out.splitlines() == lines
    assert any(line.startswith("Duplicate pairs: 3,") for line in lines)


def test_stats_json_gives_the_figures_of_match_json(
    duplicate_match: tuple[Path, list[str], dict],  # type: ignore[type-arg]
) -> None:
    path, _, data = duplicate_match
    code, out = ginref("stats", "--json", str(path))
    assert code == 0
    got = json.loads(out)
    for key in FIGURES:
        assert got[key] == data[key], key
    assert got["variants"] == ["standard"] and got["files"] == [str(path)]
    assert got["skipped"] == []


def test_an_interrupted_run_counts_its_finished_games_and_names_the_torn_one(
    duplicate_match: tuple[Path, list[str], dict],  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    path, _, _ = duplicate_match
    text = path.read_text()
    torn = tmp_path / "torn.gin"
    cut = text.rindex("%ginrec")
    torn.write_text(text[: cut + (len(text) - cut) // 2])  # the last game cut off mid-way
    result = summarize_records([str(torn)])
    assert result.standings.games == 5
    [skipped] = result.skipped
    assert skipped.game == 6 and isinstance(skipped.error, TruncatedRecordError)
    code, out = ginref("stats", str(torn))
    assert code == 0
    assert f"{torn}: game 6 left out:" in out
    score = next(line for line in out.splitlines() if line.startswith("Score of"))
    assert score.startswith("Score of Simple vs Random: ") and score.endswith("] 5")


def test_files_are_merged_as_one_run(tmp_path: Path) -> None:
    a, b = tmp_path / "a.gin", tmp_path / "b.gin"
    match(a, "simple", "random", "--games", "2", "--seed", "1")
    match(b, "simple", "random", "--games", "3", "--seed", "2")
    whole = tmp_path / "whole.gin"
    whole.write_text(a.read_text() + b.read_text())
    merged = summarize_records([str(a), str(b)]).to_json()
    assert merged["games"] == 5 and merged["pairs"] is None  # different deals: no pairs
    assert merged == {**summarize_records([str(whole)]).to_json(), "files": [str(a), str(b)]}
    names = [e["name"] for e in merged["engines"]]
    assert names == ["Simple", "Random"]


def test_three_player_records(tmp_path: Path) -> None:
    path = tmp_path / "three.gin"
    lines, data = match(
        path, "simple", "random", "simple", "--games", "3", "--seed", "3", "--rule", "target=40"
    )
    assert lines[0].startswith("Score of Simple vs Random vs Simple#2: ")
    code, out = ginref("stats", str(path))
    assert code == 0 and out.splitlines() == lines
    code, out = ginref("stats", "--json", str(path))
    got = json.loads(out)
    assert got["engines"] == data["engines"] and got["variants"] == ["threehanded"]


def test_nothing_to_count_is_an_error_and_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gin"
    junk.write_text("hello\n")
    code, out = ginref("stats", str(junk))
    assert code == 1
    assert f"{junk}: game 1 left out: {junk}:1: unexpected line 'hello'" in out
    assert "Error: no game in these records verifies" in out
    code, out = ginref("stats", str(tmp_path / "missing.gin"))
    assert code == 2 and "does not exist" in out
    code, out = ginref("stats")
    assert code == 2
    code, out = ginref("stats", "-", "-")
    assert code == 2 and "only once" in out


def test_a_game_that_does_not_verify_is_left_out(
    duplicate_match: tuple[Path, list[str], dict],  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    path, _, _ = duplicate_match
    games = path.read_text().split("%ginrec 1\n")[1:]
    bad = games[0].replace("totals ", "totals 1", 1)  # a wrong running score in game 1
    edited = tmp_path / "edited.gin"
    edited.write_text("".join("%ginrec 1\n" + g for g in [bad, *games[1:]]))
    assert len(loads(edited.read_text())) == 6
    result = summarize_records([str(edited)])
    assert result.standings.games == 5
    assert [s.game for s in result.skipped] == [1]
