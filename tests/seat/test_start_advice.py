"""A start that fails says what to do: the first-bot mistakes, named, with the sandbox on and
off, in ``ginref match`` and in ``ginref check`` (which then stops at one line)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import cli
from referee.seat.sandbox import support

SANDBOXES = [
    "off",
    pytest.param(
        "require",
        marks=pytest.mark.skipif(
            not support().available, reason=f"the sandbox cannot run here: {support().reason}"
        ),
    ),
]

ROOT = Path(__file__).resolve().parents[2]


def bot(folder: Path, name: str, text: str, executable: bool = True) -> Path:
    path = folder / name
    path.write_text(text)
    path.chmod(0o755 if executable else 0o644)
    return path


def not_executable(folder: Path) -> tuple[str, list[str]]:
    bot(folder, "bot.py", "#!/usr/bin/env python3\nprint('id name x', flush=True)\n", False)
    return "./bot.py", ["./bot.py is not executable", "chmod +x ./bot.py", "'python3 ./bot.py'"]


def no_shebang(folder: Path) -> tuple[str, list[str]]:
    bot(folder, "bot.py", "import sys\nprint('id name x', flush=True)\n")
    return "./bot.py", ["./bot.py has no '#!' line", "'#!/usr/bin/env python3'",
                        "'python3 ./bot.py'"]


def without_dot_slash(folder: Path) -> tuple[str, list[str]]:
    bot(folder, "bot.py", "#!/usr/bin/env python3\n")
    return "bot.py", ["'bot.py' is a file in this folder", "write './bot.py'"]


def no_flush(folder: Path) -> tuple[str, list[str]]:
    # Answers the handshake, but its lines wait in a buffer that is never flushed.
    bot(folder, "bot.py", "#!/usr/bin/env python3\nimport sys\nfor line in sys.stdin:\n"
        "    print('id name x')\n    print('ginok')\n")
    return "./bot.py", ["no ginok within 1s", "it wrote nothing at all",
                        "print(..., flush=True)", "python3 -u"]


def missing_module(folder: Path) -> tuple[str, list[str]]:
    bot(folder, "bot.py", "#!/usr/bin/env python3\nimport ginproto_no_such_module\n")
    python3 = shutil.which("python3")
    assert python3 is not None
    return "./bot.py", [f"it ran with {python3}, which cannot import a module",
                        "No module named 'ginproto_no_such_module'", "bot.py'"]


def misspelt(folder: Path) -> tuple[str, list[str]]:
    return "simpel", ["'simpel' is no built-in engine and no program: did you mean 'simple'?"]


CASES: dict[str, Callable[[Path], tuple[str, list[str]]]] = {
    "not executable": not_executable,
    "no shebang": no_shebang,
    "without ./": without_dot_slash,
    "no flush": no_flush,
    "missing module": missing_module,
    "misspelt built-in": misspelt,
}
def _timeout(case: str) -> str:
    """The startup timeout: 1 s where the engine is to be timed out, else time enough for a
    Python to start in a sandbox on a busy machine (such an engine fails as soon as it runs)."""
    return "1" if case == "no flush" else "30"


RAW = ["Errno", "Traceback", "not found\n"]  # the system's words alone are not the message


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("case", list(CASES))
def test_match_says_what_to_do(
    case: str, sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    engine, shown = CASES[case](tmp_path)
    result = CliRunner().invoke(
        cli, ["match", engine, "random", "--games", "1", "--startup-timeout", _timeout(case),
              "--sandbox", sandbox, "-q"],
    )
    assert result.exit_code == 1, result.output
    (line,) = [x for x in result.output.splitlines() if x]  # one line
    assert line.startswith(f"Error: engine {engine!r} cannot be used: "), line
    for text in shown:
        assert text in line, line
    assert "Errno" not in line and "Traceback" not in result.output


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("case", list(CASES))
def test_check_says_what_to_do_and_stops(
    case: str, sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    engine, shown = CASES[case](tmp_path)
    result = CliRunner().invoke(
        cli, ["check", engine, "--startup-timeout", _timeout(case), "--sandbox", sandbox]
    )
    assert result.exit_code == 1, result.output
    failed, tally = result.output.splitlines()
    assert failed.startswith("FAIL handshake: "), failed
    for text in shown:
        assert text in failed, failed
    assert tally == (
        "0 of 20 checks passed; the other 19 cannot run before the engine starts and"
        " completes its handshake"
    )
    assert "Errno" not in failed and "Traceback" not in result.output


def test_an_unquoted_command_is_told_to_be_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    bot(tmp_path, "randombot.py", "print('hello')\n")
    result = CliRunner().invoke(cli, ["check", "python3", "randombot.py"])
    assert result.exit_code == 2
    assert 'put it in quotes, as in ginref check "python3 randombot.py"' in result.output
    assert "unexpected extra argument" not in result.output
    result = CliRunner().invoke(cli, ["match", "python3", "randombot.py", "simple"])
    assert result.exit_code == 2
    assert 'as in ginref match "python3 randombot.py" simple' in result.output
    result = CliRunner().invoke(cli, ["check", "random", "simple"])
    assert result.exit_code == 2
    assert "check takes one engine, not 2 (random simple)" in result.output


def test_a_module_missing_from_the_python_named_suggests_the_referees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run by a Python other than the referee's, the hint offers the referee's."""
    monkeypatch.chdir(tmp_path)
    bot(tmp_path, "bot.py", "#!/usr/bin/python3\nimport ginproto_no_such_module\n")
    if Path(sys.executable).parent == Path("/usr/bin"):
        pytest.skip("the referee runs under /usr/bin/python3 itself")
    result = CliRunner().invoke(
        cli, ["match", "./bot.py", "random", "--sandbox", "off", "-q"]
    )
    assert result.exit_code == 1, result.output
    assert "it ran with /usr/bin/python3" in result.output
    assert f"run the engine with another one: '{sys.executable} ./bot.py'" in result.output
