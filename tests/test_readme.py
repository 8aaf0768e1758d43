"""The README's examples, run as written, in a fresh copy of the project after its set-up.

Everything is read from README.md itself, so the README cannot drift from the code:

- every ``sh`` block is run line by line, and so is every ``$ command`` line of an output
  block (the command behind a sample output), in the order the README gives them, in one
  shell after ``. .venv/bin/activate``, as the README tells the reader to do;
- a ``python`` block that the text before it says to "Save this as `NAME`" is written to NAME
  first (the bot that later commands run), and every ``pycon`` block runs as a doctest.

The set-up itself is not repeated: the copy's ``.venv`` is this test run's environment (a
link to it), so ``python3 -m venv .venv`` and ``pip install`` are left out of the set-up
lines and what follows them on the line runs as written. Also left out, and said so:

- commands that need a person at a terminal (``ginref play``, ``ginref replay --step``);
- the test suite's own command (``ruff``, ``mypy``, ``pytest``), which is what runs this test.

A ``console`` block is a template for the reader's own machines (a cluster's scheduler at
``HOST``), not a command to run here, and is not run.
"""

from __future__ import annotations

import doctest
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SAVE_AS = re.compile(r"Save this as `([^`]+)`:\s*$")
INTERACTIVE = ("ginref play", "--step")
SETUP = ("python3 -m venv", "pip install")
THE_SUITE = (".venv/bin/ruff", ".venv/bin/mypy", ".venv/bin/pytest")


def blocks(text: str) -> list[tuple[str, str, str]]:
    """``(language, body, text before the block)`` for every fenced block."""
    out = []
    last = 0
    for m in FENCE.finditer(text):
        out.append((m.group(1), m.group(2), text[last : m.start()]))
        last = m.end()
    return out


def commands(text: str) -> list[str]:
    """The shell commands of the README, in order, with the set-up and the interactive and
    test-suite commands left out (see the module docstring)."""
    out = []
    for language, body, _ in blocks(text):
        if language == "sh":
            lines = [line for line in body.splitlines() if line.strip()]
        elif language == "":
            lines = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
        else:
            continue
        for line in lines:
            if any(word in line for word in INTERACTIVE):
                continue
            parts = [p for p in line.split(" && ") if not any(w in p for w in SETUP)]
            if any(p.startswith(THE_SUITE) for p in parts):
                continue
            if parts:
                out.append(" && ".join(parts))
    return out


def saved_files(text: str) -> dict[str, str]:
    files = {}
    for language, body, before in blocks(text):
        m = SAVE_AS.search(before)
        if language == "python" and m:
            files[m.group(1)] = body
    return files


def test_the_readme_is_read_as_this_test_expects() -> None:
    text = README.read_text()
    cmds = commands(text)
    assert cmds[0] == ".venv/bin/ginref match random simple --games 20 --seed 1"
    assert ". .venv/bin/activate" in cmds
    assert any(c.startswith("ginref match simple js-simple") for c in cmds)
    assert any(c.startswith("ginref tournament --resume") for c in cmds)
    assert 'ginref check "python3 randombot.py"' in cmds
    assert list(saved_files(text)) == ["randombot.py"]
    assert "mybot.py" not in text  # the bot has one name throughout
    assert sum(1 for lang, _, _ in blocks(text) if lang == "pycon") >= 2
    assert any(lang == "pycon" and "play_match(" in body for lang, body, _ in blocks(text))


def test_the_library_examples_run_as_doctests() -> None:
    for language, body, _ in blocks(README.read_text()):
        if language != "pycon":
            continue
        test = doctest.DocTestParser().get_doctest(body, {}, "README", str(README), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, body


@pytest.mark.slow
def test_every_readme_command_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("the README plays the JavaScript engine: node is needed")
    copy = tmp_path / "ginproto"
    shutil.copytree(
        ROOT,
        copy,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.egg-info", ".mypy_cache", ".ruff_cache",
            ".pytest_cache", ".hypothesis", "tournament-results", "*.gin",
        ),
    )
    (copy / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    text = README.read_text()
    for name, body in saved_files(text).items():
        (copy / name).write_text(body)
    for command in commands(text):
        proc = subprocess.run(
            ["bash", "-c", f". .venv/bin/activate && {command}"],
            cwd=copy,
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, command
