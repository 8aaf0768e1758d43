"""Counts in what ``ginref`` prints agree with their nouns: ``1 game``, never ``1 games``."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from ginproto.rules import Rules
from ginproto.simulate import GreedyPlayer, run_games
from ginproto.text import plural
from referee.cli import cli

ROOT = Path(__file__).resolve().parents[2]
NOUNS = "game|hand|move|card|option|engine|seat|difference|check|point|file|error|line|worker"


def ginref(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.output


def test_plural() -> None:
    assert plural(1, "game") == "1 game"
    assert [plural(n, "game") for n in (0, 2, 12)] == ["0 games", "2 games", "12 games"]
    assert plural(2, "series", "series") == "2 series"


def test_verify_counts_a_single_game_as_one(tmp_path: Path) -> None:
    path = tmp_path / "one.gin"
    run_games(Rules(target=10), [GreedyPlayer(), GreedyPlayer()], 1, "one", record=path)
    code, out = ginref("replay", "--verify", str(path))
    assert code == 0, out
    assert re.fullmatch(rf"{path}: 1 game, \d+ hands?, \d+ moves: all verified\n", out), out
    code, out = ginref("replay", "--html", str(tmp_path / "one.html"), str(path))
    assert code == 0 and out.endswith("one.html: 1 game\n"), out


def test_a_match_of_one_game_says_one_game(tmp_path: Path) -> None:
    code, out = ginref("match", "simple", "random", "--games", "1", "--tc", "inf", "--seed", "1")
    assert code == 0, out
    assert "Match: Simple vs Random, standard, 1 game, seed 1," in out
    assert " 1 games" not in out


def test_no_message_counts_with_a_bracketed_plural() -> None:
    """``2 card(s)``: the counts go through ``ginproto.text.plural`` instead."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("ginproto", "referee", "engines")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(rf"\b({NOUNS})\(s\)", line)
    ]
    assert found == []
