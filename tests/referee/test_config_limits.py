"""What a tournament config (or the command line) may ask for, checked before anything is
built: a schedule too large to store is refused by counting its games, never by listing them;
engine names, seeds and event names are taken in NFC form and refused past their limits."""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
import tracemalloc
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ginproto.text import EVENT_LIMIT, NAME_LIMIT, SEED_LIMIT
from referee import api
from referee.cli import cli
from referee.cli.options import seed_value
from referee.scheduling.config import (
    MAX_GAMES,
    ConfigError,
    check_size,
    game_count,
    pairing_count,
    pairings,
)
from referee.scheduling.loader import build_config, load_config
from referee.scheduling.plan import plan

ROOT = Path(__file__).resolve().parents[2]
GINREF = [sys.executable, "-c", "import sys; from referee.__main__ import main; sys.exit(main())"]
MEMORY = 400 * 2**20
"""The address space the refusal of a huge config runs in: listing its 56.9 million pairings
takes gigabytes."""

COMPOSED = "Caf\u00e9"  # é as one character
DECOMPOSED = "Cafe\u0301"  # e and a combining acute accent: shown the same
MEGA = "x" * 2**20


def _big_toml(folder: Path, engines: int = 700) -> Path:
    lines = ['variant = "threehanded"', "games = 2", "seed = 1", 'output = "big"',
             'sandbox = "off"']
    for i in range(engines):
        lines += ["[[engines]]", f'name = "Engine {i}"', 'command = "random"']
    path = folder / "big.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _limited() -> None:
    """In the child: a bounded address space, and death with the test run."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def test_a_huge_three_player_round_robin_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """700 engines of the three-handed game (a 31 KB file): 56.9 million pairings. The file is
    refused with a message saying how many games it makes, exit 2, in a process that may not
    use 400 MB; before, it was a MemoryError traceback."""
    toml = _big_toml(tmp_path)
    assert toml.stat().st_size < 40_000
    process = subprocess.Popen(
        [*GINREF, "tournament", str(toml)], cwd=tmp_path, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_limited,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == 2, err
    assert "Traceback" not in err and "MemoryError" not in err, err
    assert f"{2 * 56_921_900} games" in err and f"at most {MAX_GAMES}" in err, err
    assert out == ""


def test_counting_a_huge_schedule_allocates_next_to_nothing() -> None:
    """The same config built from a table, as the Python API takes it: its check allocates a
    few kilobytes, not the gigabytes of a list of its pairings."""
    table = {
        "variant": "threehanded",
        "games": 2,
        "seed": 1,
        "engines": [{"name": f"E{i}", "command": "random"} for i in range(700)],
    }
    config = build_config(table)
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="makes 113843800 games"):
            check_size(config)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak} bytes"


def test_the_python_api_refuses_a_huge_schedule_before_any_engine_starts(
    tmp_path: Path,
) -> None:
    table = {
        "games": 1000,
        "seed": 1,
        "engines": [{"name": f"E{i}", "command": "/nonexistent/engine"} for i in range(30)],
    }
    with pytest.raises(ConfigError, match="makes 435000 games"):
        api.play_tournament(build_config(table, find_engines=False), output=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@settings(max_examples=150, deadline=None)
@given(
    engines=st.integers(min_value=2, max_value=9),
    three=st.booleans(),
    gauntlet=st.booleans(),
    games=st.integers(min_value=1, max_value=7),
    duplicate=st.booleans(),
)
def test_the_count_is_the_number_of_games_the_plan_makes(
    engines: int, three: bool, gauntlet: bool, games: int, duplicate: bool
) -> None:
    players = 3 if three else 2
    if engines < players:
        engines = players
    if duplicate:
        games *= players
    config = build_config(
        {
            "variant": "threehanded" if three else "standard",
            "format": "gauntlet" if gauntlet else "round-robin",
            "games": games,
            "duplicate": duplicate,
            "seed": 3,
            "engines": [{"name": f"E{i}", "command": "random"} for i in range(engines)],
        }
    )
    fmt = config.format
    assert pairing_count(fmt, engines, players) == len(pairings(fmt, engines, players))
    built = plan(config)
    assert game_count(config) == len(built.games) == len(list(built.games))
    assert len(built.pairings) == pairing_count(fmt, engines, players)


@pytest.mark.parametrize("fmt", ["round-robin", "gauntlet"])
@pytest.mark.parametrize("players", [2, 3])
def test_the_count_of_small_and_empty_fields(fmt: str, players: int) -> None:
    for engines in range(0, 6):
        assert pairing_count(fmt, engines, players) == len(pairings(fmt, engines, players))


# ------------------------------------------------------------------------------------------
# Names, seeds and events


def _config(**keys: Any) -> dict[str, Any]:
    return {
        "seed": 1,
        "engines": [{"name": "A", "command": "random"}, {"name": "B", "command": "simple"}],
        **keys,
    }


def test_names_equal_after_nfc_are_refused_as_duplicates() -> None:
    assert unicodedata.normalize("NFC", DECOMPOSED) == COMPOSED != DECOMPOSED
    table = _config(
        engines=[{"name": COMPOSED, "command": "random"}, {"name": DECOMPOSED, "command": "simple"}]
    )
    with pytest.raises(ConfigError, match=r"engines\[1\] and engines\[2\] are both named"):
        build_config(table)


def test_a_name_is_kept_in_nfc_form() -> None:
    config = build_config(
        _config(engines=[{"name": DECOMPOSED, "command": "random"},
                         {"name": "B", "command": "simple"}])
    )
    assert config.names[0] == COMPOSED


def test_a_megabyte_name_is_refused_with_a_short_message(tmp_path: Path) -> None:
    toml = tmp_path / "cup.toml"
    toml.write_text(
        f'seed = 1\n[[engines]]\nname = "{MEGA}"\ncommand = "random"\n'
        '[[engines]]\nname = "B"\ncommand = "simple"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(toml)
    message = str(caught.value)
    assert f"name is {2**20} characters long; at most {NAME_LIMIT}" in message
    assert len(message) < 300 + len(str(toml))
    result = CliRunner().invoke(cli, ["tournament", str(toml), "--output", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert f"at most {NAME_LIMIT}" in result.output and len(result.output) < 2000


def test_a_name_at_the_limit_is_taken() -> None:
    name = "n" * NAME_LIMIT
    config = build_config(
        _config(engines=[{"name": name, "command": "random"}, {"name": "B", "command": "simple"}])
    )
    assert config.names[0] == name
    with pytest.raises(ConfigError, match=f"at most {NAME_LIMIT}"):
        build_config(_config(engines=[{"name": name + "n", "command": "random"},
                                      {"name": "B", "command": "simple"}]))


def test_a_seed_is_taken_in_nfc_form_and_refused_past_its_limit() -> None:
    assert build_config(_config(seed=DECOMPOSED)).seed == COMPOSED
    assert seed_value(DECOMPOSED) == COMPOSED
    assert build_config(_config(seed="s" * SEED_LIMIT)).seed == "s" * SEED_LIMIT
    assert seed_value("9" * SEED_LIMIT) == int("9" * SEED_LIMIT)
    with pytest.raises(ConfigError, match=f"seed is {2**20} characters long; at most 256"):
        build_config(_config(seed=MEGA))
    with pytest.raises(ConfigError, match="at most 256"):
        build_config(_config(seed="9" * 5000))  # digits past int()'s limit: no traceback


def test_an_event_past_its_limit_is_refused() -> None:
    assert build_config(_config(event=DECOMPOSED)).event == COMPOSED
    with pytest.raises(ConfigError, match=f"at most {EVENT_LIMIT}"):
        build_config(_config(event="e" * (EVENT_LIMIT + 1)))


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["match", "random", "simple", "--seed", MEGA], "--seed"),
        (["match", "random", "simple", "--name", f"1={MEGA}"], "--name"),
        (["tournament", "x.toml", "--seed", MEGA], "--seed"),
        (["tournament", "x.toml", "--event", MEGA], "at most"),
    ],
)
def test_a_megabyte_option_is_refused_with_a_short_message(
    args: list[str], hint: str, tmp_path: Path
) -> None:
    (tmp_path / "x.toml").write_text(
        'seed = 1\noutput = "o"\n[[engines]]\nname = "A"\ncommand = "random"\n'
        '[[engines]]\nname = "B"\ncommand = "simple"\n'
    )
    with contextlib.chdir(tmp_path):
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output[:2000]
    assert hint in result.output and "characters long" in result.output
    assert len(result.output) < 2000
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_python_api_takes_names_and_seeds_in_nfc_form() -> None:
    with pytest.raises(ValueError, match=f"at most {NAME_LIMIT}"):
        api.play_match(["random", "simple"], names=[MEGA, None], games=1)
    with pytest.raises(ValueError, match=f"at most {SEED_LIMIT}"):
        api.play_match(["random", "simple"], seed=MEGA, games=1)


def test_stored_settings_are_used_as_they_were_stored() -> None:
    """A store made before the limits (a long name, a seed not in NFC form) still resumes and
    verifies: its settings are not changed; what the command line gives now is checked."""
    long_name = "n" * (NAME_LIMIT + 10)
    table = _config(
        seed=DECOMPOSED,
        engines=[{"name": long_name, "command": "random"}, {"name": "B", "command": "simple"}],
    )
    config = build_config(table, stored=True)
    assert config.names[0] == long_name and config.seed == DECOMPOSED
    with pytest.raises(ConfigError, match=f"at most {EVENT_LIMIT}"):
        build_config(table, overrides={"event": MEGA}, stored=True)
    assert build_config(table, overrides={"seed": DECOMPOSED}, stored=True).seed == COMPOSED
