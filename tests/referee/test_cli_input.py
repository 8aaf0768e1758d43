"""Input a new user got wrong, each answered with a clear message before anything runs: an
absurd tournament, an output that is no folder, an empty seed, too few ``--sprt`` numbers, a
hand a game does not have, a misspelt engine for ``check``; and ``check``'s summary on
standard output with the results it sums up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ginproto.record import read_games
from referee.cli import cli
from referee.results.store import Store
from referee.scheduling.config import MAX_GAMES, ConfigError
from referee.scheduling.loader import load_config

QUICK = ["--games", "1", "--rule", "target=1", "--no-sandbox", "-q"]


def write_config(folder: Path, **keys: Any) -> Path:
    top = {"seed": 1, "games": 2, "tc": "inf", "output": "out", "sandbox": "off", **keys}
    lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()]
    lines += ["[rules]", "target = 1"]
    for command in ("random", "simple"):
        lines += ["[[engines]]", f'command = "{command}"']
    path = folder / "cup.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_tournament_of_more_games_than_a_store_can_list_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"makes 1000000000000 games.* at most {MAX_GAMES}"):
        load_config(write_config(tmp_path, games=1_000_000_000_000))
    load_config(write_config(tmp_path, games=MAX_GAMES))  # the most is allowed


def test_the_games_limit_counts_every_pairing(tmp_path: Path) -> None:
    config = write_config(tmp_path, games=MAX_GAMES // 2 + 1)
    config.write_text(config.read_text() + '[[engines]]\ncommand = "random"\n')  # 3 pairings
    with pytest.raises(ConfigError, match="over 3 pairings"):
        load_config(config)


def test_an_empty_output_is_refused_not_taken_as_the_config_folder(tmp_path: Path) -> None:
    config = write_config(tmp_path, output="")
    result = CliRunner().invoke(cli, ["tournament", str(config), "-q"])
    assert result.exit_code == 2, result.output
    assert "output must name a folder for the results, not be empty" in result.output
    assert not Store.exists(tmp_path)
    result = CliRunner().invoke(cli, ["tournament", str(write_config(tmp_path)), "--output", ""])
    assert result.exit_code == 2 and "--output: must name a folder" in result.output


def test_an_output_that_is_a_file_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "results").write_text("mine\n")
    with pytest.raises(ConfigError, match=r"output .*results is a regular file, not a folder"):
        load_config(write_config(tmp_path, output="results"))
    assert (tmp_path / "results").read_text() == "mine\n"


@pytest.mark.parametrize("command", ["match", "tournament"])
def test_an_empty_seed_is_refused(tmp_path: Path, command: str) -> None:
    """An empty seed would deal the same, guessable cards on every run."""
    args = (
        ["match", "simple", "random", *QUICK]
        if command == "match"
        else ["tournament", str(write_config(tmp_path)), "-q"]
    )
    result = CliRunner().invoke(cli, [*args, "--seed", ""])
    assert result.exit_code == 2, result.output
    assert "--seed: must not be empty" in result.output
    assert "Rank" not in result.output


def test_an_empty_seed_in_a_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="seed must not be empty"):
        load_config(write_config(tmp_path, seed=""))


def test_too_few_sprt_numbers_are_named_for_what_they_are() -> None:
    result = CliRunner().invoke(cli, ["match", "simple", "random", "--sprt", "0", "10", *QUICK])
    assert result.exit_code == 2
    assert "'--games' is not a number: --sprt takes four numbers, ELO0 ELO1 ALPHA BETA" in (
        result.output
    )


@pytest.fixture(scope="module")
def one_hand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A record of one game of one hand (to 1 point)."""
    record = tmp_path_factory.mktemp("replay") / "games.gin"
    result = CliRunner().invoke(
        cli, ["match", "simple", "random", "--seed", "3", "--record", str(record), *QUICK]
    )
    assert result.exit_code == 0, result.output
    assert len(list(read_games(record))) == 1
    return record


@pytest.mark.parametrize("mode", [[], ["--json"], ["--openspiel"]])
def test_a_hand_the_game_lacks_is_refused_before_anything_is_printed(
    one_hand: Path, mode: list[str]
) -> None:
    result = CliRunner().invoke(cli, ["replay", str(one_hand), *mode, "--game", "1", "--hand", "2"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "there is no hand 2 in game 1" in result.stderr and "it has 1 hand" in result.stderr


def test_check_prints_its_summary_with_the_results() -> None:
    result = CliRunner().invoke(cli, ["check", "random", "--no-sandbox"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("PASS handshake")
    assert lines[-1] == f"all {len(lines) - 1} checks passed"


def test_check_hints_at_the_built_in_engine_a_name_misspells() -> None:
    result = CliRunner().invoke(cli, ["check", "rando", "--no-sandbox"])
    assert result.exit_code == 1
    first, last = result.stdout.splitlines()  # the failed start, then the tally: no more
    assert first.startswith("FAIL handshake: 'rando' is no built-in engine and no program")
    assert "did you mean 'random'?" in first
    assert last.startswith("0 of 20 checks passed; the other 19 cannot run")
