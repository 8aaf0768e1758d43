"""No ``ginref`` command prints a Python traceback or hangs, whatever it is given.

Each bad input below goes to a command, and the test asserts a clean message and the exit
code click gives it: 2 for a usage error (a bad option, argument or config file), 1 for a
failure (a file that holds no game, a directory that holds no tournament). The inputs are
the ones that once crashed or hung the referee, and their siblings across the commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from referee.cli import cli

ENGINES = ["random", "simple"]
TWO_ENGINES = '[[engines]]\ncommand = "random"\n[[engines]]\ncommand = "simple"\n'


def run(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def assert_clean(result: Result, code: int, *words: str) -> None:
    text = result.output
    # An exception click did not turn into a message is what a user sees as a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}\n{text}"
    )
    assert "Traceback" not in text, text
    assert result.exit_code == code, text
    assert "Error:" in text, text
    for word in words:
        assert word in text, text


BAD_TIMEOUTS = [
    ("--move-timeout", "inf", "finite"),
    ("--move-timeout", "nan", "finite"),
    ("--move-timeout", "-inf", "finite"),
    ("--move-timeout", "0", "more than zero"),
    ("--move-timeout", "-1", "more than zero"),
    ("--move-timeout", "1e300", "too long"),
    ("--move-timeout", "fast", "number of seconds"),
    ("--startup-timeout", "inf", "finite"),
    ("--startup-timeout", "nan", "finite"),
    ("--startup-timeout", "0.0000001", "at least 0.001"),
]


@pytest.mark.parametrize(("option", "value", "message"), BAD_TIMEOUTS)
@pytest.mark.parametrize("command", ["match", "check", "play", "tournament"])
def test_bad_timeouts_are_usage_errors(
    tmp_path: Path, command: str, option: str, value: str, message: str
) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(TWO_ENGINES)
    args = {
        "match": ["match", *ENGINES],
        "check": ["check", "simple"],
        "play": ["play", "simple"],
        "tournament": ["tournament", str(config), "-d", str(tmp_path / "out")],
    }[command]
    assert_clean(run([*args, option, value]), 2, option, message)


SILENT = f"{sys.executable} -c 'import time; time.sleep(60)'"
GINREF = [sys.executable, "-c", "from referee.cli import main; main()"]


@pytest.mark.parametrize("command", ["match", "check", "play"])
def test_a_nan_startup_timeout_with_a_silent_engine_does_not_hang(command: str) -> None:
    engines = [SILENT, "simple"] if command == "match" else [SILENT]
    proc = subprocess.run(
        [*GINREF, command, *engines, "--startup-timeout", "nan"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "finite" in proc.stderr


BAD_SPRT = [
    ["nan", "5", "0.05", "0.05"],
    ["0", "nan", "0.05", "0.05"],
    ["0", "5", "nan", "0.05"],
    ["0", "5", "0.05", "inf"],
    ["-inf", "5", "0.05", "0.05"],
    ["0", "1e308", "0.05", "0.05"],
    ["5", "0", "0.05", "0.05"],
    ["0", "5", "0", "0.05"],
    ["0", "5", "0.05", "1"],
    ["0", "5", "x", "0.05"],
]


@pytest.mark.parametrize("values", BAD_SPRT)
def test_bad_sprt_values_are_usage_errors(values: list[str]) -> None:
    assert_clean(run(["match", *ENGINES, "--sprt", *values]), 2, "--sprt")


TOO_BIG = [
    ("--rule", "target=999999999999999", "12 digits"),
    ("--rule", "hand_cap=1000000000000", "12 digits"),
    ("--rule", "game_bonus=999999999999", "12 digits"),  # a final score would not fit
    ("--rule", "target=999999999999", "12 digits"),
    ("--tc", "99999999999999+0", "too long"),
    ("--tc", "60+99999999999999", "too long"),
    ("--move-timeout", "99999999999999", "too long"),
]


@pytest.mark.parametrize(("option", "value", "message"), TOO_BIG)
@pytest.mark.parametrize("command", ["match", "play"])
def test_numbers_past_the_protocol_limit_are_refused(
    command: str, option: str, value: str, message: str
) -> None:
    engines = ENGINES if command == "match" else ["simple"]
    assert_clean(run([command, *engines, option, value]), 2, option, message)


def test_an_unknown_rule_is_named_with_the_known_ones() -> None:
    result = run(["match", *ENGINES, "--rule", "x=y"])
    assert_clean(result, 2, "'--rule'", "unknown rule 'x'", "gin_bonus", "shutout_double")
    assert "--variant" not in result.output.splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["match", *ENGINES, "--games", "0"], "--games"),
        (["match", *ENGINES, "--games", "-5"], "--games"),
        (["match", *ENGINES, "--games", "many"], "--games"),
        (["match", *ENGINES, "--variant", "chess"], "--variant"),
        (["match", *ENGINES, "--rule", "target"], "NAME=VALUE"),
        (["match", *ENGINES, "--rule", "target=ten"], "whole number"),
        (["match", *ENGINES, "--rule", "target=" + "9" * 5000], "whole number"),
        (["match", *ENGINES, "--rule", "big_gin=maybe"], "true or false"),
        (["match", *ENGINES, "--tc", "fast"], "--tc"),
        (["match", *ENGINES, "--tc", "60+nan"], "--tc"),
        (["match", *ENGINES, "--concurrency", "0"], "--concurrency"),
        (["match", *ENGINES, "--name", "7=X"], "--name"),
        (["match", *ENGINES, "-o", "3:Seed=1"], "engine number"),
        (["match", "random"], "two engines"),
        (["match", "random", "random", "random", "random"], "two engines"),
        (["match", "random", "random", "random", "--variant", "standard"], "2 engines"),
        (["match", "random", "simple", "--sprt", "0", "5", "0.05"], "--sprt"),
        (["match", "", "simple"], "ENGINES"),
        (["match", "'unclosed", "simple"], "ENGINES"),
        (["check", ""], "ENGINE"),
        (["check", "simple", "-o", "novalue"], "NAME=VALUE"),
        (["play", "simple", "--variant", "chess"], "--variant"),
        (["play", "simple", "random", "--variant", "standard"], "one engine"),
        (["play", "simple", "--name", "  "], "--name"),
        (["replay"], "FILE"),
        (["replay", "no-such-file.gin"], "does not exist"),
        (["replay", "."], "directory"),
        (["replay", "--game", "0", "x.gin"], "--game"),
        (["tournament"], "CONFIG"),
        (["tournament", "no-such-file.toml"], "no such file"),
        (["tournament", "."], "directory"),
        (["tournament", "--games", "0", "x.toml"], "--games"),
        (["nosuchcommand"], "No such command"),
    ],
)
def test_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_clean(run(args), 2, message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "needs at least 2 engines"),
        ("\x00\x01\x02garbage\xff", "not"),
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "too deeply nested"),
        ("move_timeout = inf\n" + TWO_ENGINES, "move_timeout must be a finite number"),
        ("move_timeout = nan\n" + TWO_ENGINES, "move_timeout must be a finite number"),
        ("move_timeout = -1\n" + TWO_ENGINES, "move_timeout must be more than zero"),
        ("move_timeout = 1e300\n" + TWO_ENGINES, "move_timeout is too long"),
        ('move_timeout = "10"\n' + TWO_ENGINES, "move_timeout must be a number"),
        ("move_timeout = true\n" + TWO_ENGINES, "move_timeout must be a number"),
        ("startup_timeout = nan\n" + TWO_ENGINES, "startup_timeout must be a finite"),
        ("startup_timeout = inf\n" + TWO_ENGINES, "startup_timeout must be a finite"),
        ('tc = "99999999999999+0"\n' + TWO_ENGINES, "too long"),
        ('tc = "60+inf"\n' + TWO_ENGINES, "time control"),
        ("[rules]\ntarget = 999999999999999\n" + TWO_ENGINES, "12 digits"),
        ("[rules]\nbox_bonus = 99999999999\n" + TWO_ENGINES, "12 digits"),
        ("[rules]\nx = 1\n" + TWO_ENGINES, "unknown rule 'x'"),
        ("[rules]\ntarget = [1]\n" + TWO_ENGINES, "rules.target"),
        ("games = 0\n" + TWO_ENGINES, "games"),
        ("games = -3\n" + TWO_ENGINES, "games"),
        ('games = "ten"\n' + TWO_ENGINES, "games must be a whole number"),
        ("games = 1.5\n" + TWO_ENGINES, "games must be a whole number"),
        ("concurrency = 0\n" + TWO_ENGINES, "concurrency"),
        ('variant = "chess"\n' + TWO_ENGINES, "variant"),
        ('format = "swiss"\n' + TWO_ENGINES, "format"),
        ("engines = 5\n", "engines must be"),
        ('[[engines]]\ncommand = ""\n' + TWO_ENGINES, "command is empty"),
        ("[[engines]]\nname = 'x'\n" + TWO_ENGINES, "command is missing"),
        ('[[engines]]\ncommand = "/no/such/bot"\n' + TWO_ENGINES, "cannot find the program"),
        ('[[engines]]\ncommand = "random"\nmove_timeout = inf\n' + TWO_ENGINES, "finite"),
        ("seed = -1\n" + TWO_ENGINES, "seed"),
        ("nonsense = 1\n" + TWO_ENGINES, "unknown key 'nonsense'"),
    ],
)
def test_bad_tournament_files(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "cup.toml"
    config.write_bytes(text.encode("utf-8", "surrogateescape"))
    result = run(["tournament", str(config), "-d", str(tmp_path / "out")])
    assert_clean(result, 2, message)


def test_bad_tournament_options(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(TWO_ENGINES)
    out = str(tmp_path / "out")
    for args, message in [
        (["--rule", "target=999999999999999"], "12 digits"),
        (["--rule", "x=y"], "unknown rule 'x'"),
        (["--tc", "99999999999999+0"], "too long"),
        (["--games", "-1"], "--games"),
        (["--concurrency", "0"], "--concurrency"),
    ]:
        assert_clean(run(["tournament", str(config), "-d", out, *args]), 2, message)


@pytest.mark.parametrize(
    ("content", "args"),
    [
        (b"", []),
        (b"", ["--verify"]),
        (bytes(range(256)) * 20, []),
        (bytes(range(256)) * 20, ["--verify"]),
        (bytes(range(256)) * 20, ["--json"]),
        (b"%ginrec 1\n[Event \"x\"]\n", ["--verify"]),
        (b"%ginrec 1\nnonsense\n" * 3, []),
    ],
)
def test_records_that_hold_no_game_are_failures(
    tmp_path: Path, content: bytes, args: list[str]
) -> None:
    record = tmp_path / "games.gin"
    record.write_bytes(content)
    assert_clean(run(["replay", *args, str(record)]), 1)


def test_resume_of_a_directory_without_a_tournament_is_a_failure(tmp_path: Path) -> None:
    assert_clean(run(["tournament", "--resume", str(tmp_path)]), 1, "holds no tournament")
    assert_clean(run(["tournament", "--resume", str(tmp_path / "none")]), 1)


def test_a_huge_clock_is_carried_within_the_protocol_limit() -> None:
    # 999999999 s is the longest clock a line carries; with its increment, the remaining
    # time soon passes 12 digits of milliseconds, and is then written as the most it can be.
    result = run(
        ["match", *ENGINES, "--games", "1", "--seed", "3", "--tc", "999999999+999999999",
         "--json", "-q"]
    )
    assert result.exit_code == 0, result.output
    engines = json.loads(result.output)["engines"]
    assert [e["faults"] for e in engines] == [{}, {}]
