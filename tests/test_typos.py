"""A misspelt rule or engine option is answered with the name that was meant."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ginproto.rules import Rules, RulesError
from referee.cli import cli


def ginref(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "args",
    [
        ["match", "simple", "random", "--rule", "knock_limt=10"],
        ["match", "simple", "random", "--rule", "knock-limt=10"],
        ["play", "simple", "--rule", "knock_limt=10"],
    ],
)
def test_a_misspelt_rule_on_the_command_line_gets_a_suggestion(args: list[str]) -> None:
    code, out = ginref(*args)
    assert code == 2
    assert "unknown rule 'knock_limt'; did you mean 'knock_limit'?" in out
    assert "Traceback" not in out


def test_a_misspelt_rule_in_a_tournament_file_gets_the_same_suggestion(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        '[rules]\nknock_limt = 10\n[[engines]]\ncommand = "simple"\n'
        '[[engines]]\ncommand = "random"\n'
    )
    code, out = ginref("tournament", str(config), "--output", str(tmp_path / "out"))
    assert code == 2
    assert "unknown rule 'knock_limt'; did you mean 'knock_limit'?" in out


def test_a_rule_like_no_other_lists_the_rules() -> None:
    with pytest.raises(RulesError) as caught:
        Rules.from_params({"zzz": "1"})
    message = str(caught.value)
    assert "did you mean" not in message
    assert "known rules: variant, target, gin_bonus" in message


def test_a_misspelt_engine_option_gets_a_suggestion() -> None:
    code, out = ginref("match", "expert", "random", "-o", "1:movetme=20", "--games", "1")
    assert code == 1
    assert (
        "engine 'expert': -o movetme: the engine declares no such option"
        " (declared: Seed, Movetime); did you mean 'Movetime'?"
    ) in out
