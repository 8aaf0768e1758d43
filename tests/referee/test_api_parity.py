"""``ginref match`` and ``ginref tournament`` are ``referee.api`` with a command line on top.

Every option of the two commands is a parameter of the API (under its own name, or the one the
table below gives), but for the few that only shape what the command prints, each listed with
its reason; and the command and the API give the same records and standings for the same
arguments.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from referee import Clock, Outputs, Sandbox, api
from referee.cli.match import match
from referee.cli.tournament import tournament
from referee.seat.remote import Listener

GINREF = [str(Path(sys.executable).with_name("ginref"))]

PRESENTATION = {
    "as_json": "--json prints the result as JSON: MatchResult.to_json() and"
    " TournamentStandings.to_json() are the same figures",
    "quiet": "-q only silences the progress lines, which the on_start and on_game hooks feed",
    "verbose": "-v only shows the stderr lines each fault carries (GameOutcome.fault.stderr)",
    "serve_for": "--serve-for only says how long the command keeps its live page up after the"
    " run; a caller of the API passes a LivePage of its own (serve=) and closes it when it likes",
}
"""Options that only shape what the command prints or how long it stays, with the reason each
has no parameter."""

CLOCK = ("tc", "move_timeout", "startup_timeout", "time_margin")
# Remote engines play through a Listener the caller holds around play_match or
# play_tournament (docs/API.md), as a live page is a LivePage the caller may hold.
REMOTE: dict[str, tuple[Callable[..., Any], str]] = {
    "listen": (Listener, "host"),
    "tokens": (Listener, "tokens"),
    "latency_margin": (Listener, "latency_margin"),
    "remote_wait": (Listener, "first_wait"),
    "tls": (Listener, "ssl_context"),
}
RENAMED: dict[str, dict[str, tuple[Callable[..., Any], str]]] = {
    "match": {
        "rule": (api.play_match, "rules"),
        **{option: (Clock, option) for option in CLOCK},
        **{option: (Outputs, option) for option in ("record", "debug_log", "stderr_dir")},
        "html_out": (Outputs, "html"),
        "sandbox": (Sandbox, "mode"),
        "no_sandbox": (Sandbox, "mode"),  # --no-sandbox is --sandbox off
        "limits": (Sandbox, "limits"),
        "network": (Sandbox, "network"),
        "readable": (Sandbox, "read"),
        **REMOTE,
    },
    "tournament": {
        "fmt": (api.play_tournament, "format"),
        "rule": (api.play_tournament, "rules"),
        **{option: (Clock, option) for option in CLOCK},
        "stderr_dir": (Outputs, "stderr_dir"),
        "html_out": (Outputs, "html"),
        "sandbox": (Sandbox, "mode"),
        "no_sandbox": (Sandbox, "mode"),
        "verify": (api.verify_tournament, "directory"),
        **REMOTE,
    },
}
"""Options whose parameter has another name, or belongs to another function or to one of
the values the functions take (`Clock`, `Sandbox`, `Outputs`)."""

COMMANDS: dict[str, tuple[click.Command, Callable[..., Any]]] = {
    "match": (match, api.play_match),
    "tournament": (tournament, api.play_tournament),
}


def _options(command: click.Command) -> list[str]:
    return [p.name for p in command.params if p.name is not None]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_is_a_parameter_of_the_api(name: str) -> None:
    command, function = COMMANDS[name]
    missing = []
    for option in _options(command):
        if option in PRESENTATION:
            continue
        target, parameter = RENAMED[name].get(option, (function, option))
        if parameter not in inspect.signature(target).parameters:
            missing.append(f"{option} ({target.__name__}.{parameter})")
    assert not missing, f"ginref {name} options with no referee.api parameter: {missing}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_values_the_options_belong_to_are_parameters_of_the_api(name: str) -> None:
    _, function = COMMANDS[name]
    assert {"clock", "sandbox", "outputs"} <= set(inspect.signature(function).parameters)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_tables_name_only_options_that_exist(name: str) -> None:
    command, _ = COMMANDS[name]
    options = set(_options(command))
    assert set(RENAMED[name]) <= options
    assert set(PRESENTATION) <= options


def _ginref(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GINREF, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        check=True,
    )


def _records(path: Path) -> list[str]:
    """The records' lines, but for the date they were played on."""
    return [line for line in path.read_text().splitlines() if not line.startswith("[Date ")]


def test_a_match_gives_the_same_records_and_figures_from_both(tmp_path: Path) -> None:
    shown = _ginref(
        "match", "simple", "random", "--games", "3", "--seed", "9", "--rule", "target=50",
        "--name", "2=R", "-o", "2:Seed=4", "--record", tmp_path / "cli.gin", "--sandbox",
        "off", "--json", "-q",
    )
    result = api.play_match(
        ["simple", "random"], games=3, seed=9, rules={"target": 50}, names=[None, "R"],
        options=[{}, {"Seed": 4}], outputs=Outputs(record=tmp_path / "api.gin"),
        sandbox=Sandbox(mode="off"),
    )
    assert json.loads(shown.stdout) == result.to_json()
    assert result.names == ("Simple", "R")
    cli_records = _records(tmp_path / "cli.gin")
    assert cli_records == _records(tmp_path / "api.gin")
    assert sum(line.startswith("[Game ") for line in cli_records) == 3


def test_a_tournament_gives_the_same_records_and_standings_from_both(tmp_path: Path) -> None:
    (tmp_path / "cup.toml").write_text(
        'games = 2\nseed = 3\nsandbox = "off"\n'
        '[[engines]]\nname = "S"\ncommand = "simple"\n'
        '[[engines]]\nname = "R"\ncommand = "random"\n'
        '[[engines]]\nname = "S2"\ncommand = "simple"\n'
    )
    shown = _ginref(
        "tournament", "cup.toml", "--output", "cli", "--games", "1", "--json", "-q",
        cwd=tmp_path,
    )
    standings = api.play_tournament(tmp_path / "cup.toml", output=tmp_path / "api", games=1)
    table = json.loads(shown.stdout)
    assert table.pop("tournament")["played"] == standings.played == standings.scheduled == 3
    assert table == standings.to_json()
    assert _records(tmp_path / "cli" / "games.gin") == _records(tmp_path / "api" / "games.gin")
