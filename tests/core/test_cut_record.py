"""A record cut in the middle of a game (a run killed mid-game): every command that reads
records keeps the finished games, names the cut one in one line on standard error, and exits
as docs/USAGE.md ("A record cut short") says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ginproto.rules import Rules
from ginproto.simulate import GreedyPlayer, run_games
from referee.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def ginref(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cut") / "whole.gin"
    run_games(Rules(target=40), [GreedyPlayer(), GreedyPlayer()], 3, "cut", record=path)
    return path


def cut_file(whole: Path, folder: Path, mid_line: bool) -> tuple[Path, int]:
    """The record with its third game cut half-way (within a line, or after a whole line),
    and the line where the cut is."""
    text = whole.read_text()
    start = text.rindex("%ginrec")
    end = start + (len(text) - start) // 2
    if not mid_line:
        end = text.index("\n", end) + 1
    elif text[end - 1] == "\n":
        end += 2
    cut = text[:end]
    path = folder / ("mid-line.gin" if mid_line else "whole-lines.gin")
    path.write_text(cut)
    return path, cut.count("\n") + (0 if cut.endswith("\n") else 1)


def named(path: Path, line: int) -> str:
    return (
        f"{path}: game 3 left out: truncated at line {line}, before its end line"
        " (the run that wrote it stopped mid-game)"
    )


@pytest.mark.parametrize("mid_line", [True, False], ids=["mid-line", "whole-lines"])
def test_every_command_keeps_the_finished_games_and_names_the_cut_one(
    whole: Path, tmp_path: Path, mid_line: bool
) -> None:
    path, line = cut_file(whole, tmp_path, mid_line)
    out_html = tmp_path / "games.html"
    expected = {
        ("replay",): 0,
        ("replay", "--json"): 0,
        ("replay", "--openspiel"): 0,
        ("replay", "--html", str(out_html)): 0,
        ("stats",): 0,
        ("stats", "--json"): 0,
        ("replay", "--verify"): 1,
    }
    for args, status in expected.items():
        code, out, err = ginref(*args, str(path))
        assert code == status, (args, out, err)
        assert err.splitlines().count(named(path, line)) == 1, (args, err)
        assert "Traceback" not in out + err

    # What each one keeps: the two finished games, the same as from the whole file.
    _, shown, _ = ginref("replay", str(path))
    assert re.findall(r"^Game \d+:", shown, re.M) == ["Game 1:", "Game 2:"]
    _, lines, _ = ginref("replay", "--json", str(path))
    _, all_lines, _ = ginref("replay", "--json", str(whole))
    kept = [json.loads(x) for x in lines.splitlines()]
    assert {o["game"] for o in kept} == {1, 2}
    assert kept == [o for o in map(json.loads, all_lines.splitlines()) if o["game"] < 3]
    _, figures, _ = ginref("stats", "--json", str(path))
    assert json.loads(figures)["games"] == 2
    assert ginref("replay", "--html", str(out_html), str(path))[2].endswith(
        f"{out_html}: 2 games\n"
    )

    # --verify answers whether the file is whole: the finished games verify, the file is not.
    code, out, err = ginref("replay", "--verify", str(path))
    assert out == ""
    assert err.splitlines()[-1].startswith(f"Error: {path}: not a whole record: it ends in a")
    assert "; what comes before it verifies: 2 games, " in err


def test_a_finished_game_of_a_cut_file_is_shown_and_the_cut_one_is_refused(
    whole: Path, tmp_path: Path
) -> None:
    path, line = cut_file(whole, tmp_path, mid_line=True)
    for mode in ([], ["--json"], ["--verify"]):
        code, out, err = ginref("replay", *mode, "--game", "2", str(path))
        assert code == 0 and err == "", (mode, err)
        code, out, err = ginref("replay", *mode, "--game", "3", str(path))
        assert code == 1 and out == ""
        assert err == (
            f"Error: {path}: game 3 is truncated at line {line}, before its end line (the run"
            " that wrote it stopped mid-game): only finished games can be shown or verified\n"
        )


def test_a_file_holding_only_a_cut_game_is_an_error_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "only.gin"
    path.write_text('%ginrec 1\n[Event "x"]\n')
    for args in (["replay"], ["replay", "--json"], ["replay", "--verify"], ["stats"]):
        code, _, err = ginref(*args, str(path))
        assert code == 1, args
        assert f"{path}: game 1 left out: truncated at line 2" in err
        assert err.splitlines()[-1].startswith("Error: ")


def test_a_game_without_its_end_line_inside_a_file_is_still_wrong(
    whole: Path, tmp_path: Path
) -> None:
    """Only the end of the file cuts a game short: a missing end line before another game
    is a wrong record, as before."""
    lines = whole.read_text().splitlines(keepends=True)
    first_end = next(i for i, x in enumerate(lines) if x.startswith("end "))
    path = tmp_path / "holed.gin"
    path.write_text("".join(lines[:first_end] + lines[first_end + 1 :]))
    code, _, err = ginref("replay", "--json", str(path))
    assert code == 1 and "does not verify" in err and "left out" not in err


def test_usage_explains_a_cut_record_once_and_each_command_points_there() -> None:
    usage = (ROOT / "docs" / "USAGE.md").read_text()
    assert usage.count("### A record cut short") == 1
    for command in ("replay", "stats"):
        help_text = " ".join(ginref(command, "--help")[1].split())
        assert "cut short" in help_text and "USAGE.md" in help_text, command


def test_verify_names_the_cut_game_besides_a_wrong_one(whole: Path, tmp_path: Path) -> None:
    path, line = cut_file(whole, tmp_path, mid_line=False)
    text = path.read_text()
    first_totals = text.index("\ntotals ") + len("\ntotals ")
    path.write_text(text[:first_totals] + "9" + text[first_totals:])  # game 1 made wrong
    code, out, err = ginref("replay", "--verify", str(path))
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert "wrong totals line" in lines[0]
    assert lines[-2:] == [named(path, line), f"Error: {path}: 1 of 2 games does not verify"]
