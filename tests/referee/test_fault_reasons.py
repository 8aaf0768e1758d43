"""Every forfeit says why where the user looks: the progress line, the result block, the
JSON, and with -v the end of the engine's stderr, made safe to show."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import cli

HOSTILE = str(Path(__file__).parents[1].joinpath("programs") / "hostile.py")

# mode: the kind, and what its reason must say (the move sent and why, the time against the
# limit, the line sent and what was expected, the exception the engine died of)
CASES = {
    "traceback": ("crash", r"exited with code 1: ValueError: no card to play\\x1b\[2J"),
    "not-held": ("illegal", r"discard \w\w: \w\w is not in the player's hand"),
    "hang-go": ("timeout", r"took \d+\.\d\ds for its \w+ decision, limit 1s \(\+0\.1s margin\)"),
    "garbage": ("malformed", r"sent 'move' \(malformed move line: expected a move after 'move'"),
}


def run(mode: str, *extra: str) -> tuple[str, str]:
    """``ginref match`` of the hostile engine against random: (stdout, stderr)."""
    result = CliRunner().invoke(
        cli,
        ["match", f"{sys.executable} {HOSTILE} {mode}", "random", "--games", "1",
         "--seed", "1", "--move-timeout", "1", "--sandbox", "off", *extra],
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.stderr.replace("Traceback (most recent call last):", "")
    return result.stdout, result.stderr


@pytest.mark.parametrize("mode", list(CASES))
def test_the_progress_line_and_the_result_block_say_why(mode: str) -> None:
    kind, reason = CASES[mode]
    out, err = run(mode)
    progress = next(line for line in err.splitlines() if line.startswith("[1/1]"))
    assert re.search(rf"hostile-{mode} forfeits: {kind}, {reason}", progress), err
    assert re.search(rf"game 1: hostile-{mode} forfeits: {kind}, {reason}", out), out
    assert "Forfeits:" in out


@pytest.mark.parametrize("mode", ["traceback", "not-held"])
def test_json_carries_each_forfeit_with_its_reason(mode: str) -> None:
    kind, reason = CASES[mode]
    out, _ = run(mode, "--json", "-q")
    figures = json.loads(out)
    assert figures["engines"][0]["faults"] == {kind: 1}  # the fields it had stay
    (forfeit,) = figures["forfeits"]
    assert forfeit["game"] == 1 and forfeit["engine"] == 0 and forfeit["kind"] == kind
    assert forfeit["name"] == f"hostile-{mode}"
    assert re.search(reason, forfeit["reason"]), forfeit


def test_verbose_shows_the_end_of_stderr_made_safe() -> None:
    out, err = run("traceback", "-v")
    for text in (out, err):
        assert "| loading weights" in text
        assert "| Traceback (most recent call last):" in text
        assert "| ValueError: no card to play\\x1b[2J" in text
        # A carriage return cannot start a line of the referee's; escapes stay escaped.
        assert "| \\x0dgame 9: hostile-traceback wins\\x1b[31m red\\x1b]0;pwned\\x07" in text
        assert "\x1b" not in text and "\r" not in text and "\x07" not in text
        assert not re.search(r"^game 9", text, re.MULTILINE)
    # Without -v the stderr lines stay out of sight; the reason is there.
    out, err = run("traceback")
    assert "loading weights" not in out + err
    assert "ValueError: no card to play" in out


def test_json_keeps_the_last_stderr_lines() -> None:
    out, _ = run("traceback", "--json", "-q")
    (forfeit,) = json.loads(out)["forfeits"]
    assert forfeit["stderr"][0] == "loading weights"
    assert forfeit["stderr"][-1] == "ValueError: no card to play\\x1b[2J"
    assert len(forfeit["stderr"]) <= 10


def test_the_tournament_progress_line_and_summary_say_why(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        'event = "cup"\ngames = 1\nseed = 1\nconcurrency = 1\noutput = "out"\n'
        f'[[engines]]\nname = "Bad"\n'
        f"command = {json.dumps([sys.executable, HOSTILE, 'not-held'])}\n"
        '[[engines]]\nname = "Random"\ncommand = "random"\n'
    )
    result = CliRunner().invoke(cli, ["tournament", str(config), "--sandbox", "off", "-v"])
    assert result.exit_code == 0, result.output
    assert "    (nothing on its stderr)" in result.stderr  # -v: its stderr, empty here
    assert re.search(
        r"game 1: Bad vs Random: Random wins \(Bad forfeits: illegal, discard \w\w: \w\w is not"
        r" in the player's hand\)",
        result.stderr,
    ), result.stderr
    # and the list under the standings
    assert re.search(
        r"Forfeits:\n  game 1: Bad forfeits: illegal, discard \w\w: \w\w is not in the player's"
        r" hand\n      \(nothing on its stderr\)",
        result.stdout,
    ), result.stdout


def test_a_flag_says_how_much_the_clock_had_left() -> None:
    out, err = run("hang-go", "--tc", "0.5+0")
    reason = r"flag, took \d+\.\d\ds for its \w+ decision, with 0\.50s left on its clock"
    assert re.search(rf"hostile-hang-go forfeits: {reason} \(\+0\.1s margin\)\)", err), err
    assert re.search(rf"game 1: hostile-hang-go forfeits: {reason}", out), out


def test_a_crash_with_nothing_on_stderr_says_how_it_ended() -> None:
    out, err = run("crash-mid", "-v")
    assert "(hostile-crash-mid forfeits: crash, exited with code 7)" in err
    assert "game 1: hostile-crash-mid forfeits: crash, exited with code 7\n" in out
    assert "      (nothing on its stderr)" in out
