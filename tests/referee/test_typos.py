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


MISTAKES = """\
gmes = 4
concurency = 2
tc = "fast"
[rules]
knock_limt = 10
[[engines]]
comand = "simple"
[[engines]]
command = "random"
"""


def test_a_tournament_file_with_five_mistakes_names_every_one_at_once(tmp_path: Path) -> None:
    from referee.scheduling.config import ConfigError
    from referee.scheduling.loader import load_config

    path = tmp_path / "typos.toml"
    path.write_text(MISTAKES)
    expected = [
        "unknown key 'gmes' (did you mean 'games'?)",
        "unknown key 'concurency' (did you mean 'concurrency'?)",
        "tc: time control must be BASE+INC",
        "rules: unknown rule 'knock_limt'; did you mean 'knock_limit'?",
        "engines[1] (?): unknown key 'comand' (did you mean 'command'?)",
    ]
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: 6 problems:\n")
    for words in expected:
        assert f"\n  - {words}" in message, words
    code, out = ginref("tournament", str(path), "--output", str(tmp_path / "out"))
    assert code == 2 and "6 problems" in out
    assert all(words in out for words in expected)
    assert not (tmp_path / "out").exists()


def test_one_mistake_is_one_line_as_before(tmp_path: Path) -> None:
    from referee.scheduling.config import ConfigError
    from referee.scheduling.loader import load_config

    path = tmp_path / "one.toml"
    fixed = MISTAKES
    for wrong, right in (
        ("gmes", "games"),
        ("concurency", "concurrency"),
        ('"fast"', '"60+1"'),
        ("knock_limt", "knock_limit"),
        ("comand", "command"),
    ):
        fixed = fixed.replace(wrong, right)
    path.write_text(fixed)
    load_config(path)  # sound once every mistake is fixed
    path.write_text(fixed.replace("games", "gmes"))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: unknown key 'gmes' (did you mean 'games'?)"
