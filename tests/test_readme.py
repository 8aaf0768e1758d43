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

The README is the front door: it starts with the two commands to copy (a short match; the whole
test suite, exactly as ``.ci/run`` runs it), and the reference and the measurements live in
docs/, whose relative links, like the README's, must lead somewhere. Every file the README's
examples write is covered by ``.gitignore``.
"""

from __future__ import annotations

import doctest
import itertools
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
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


def test_the_readme_starts_with_the_two_commands_to_copy() -> None:
    """Before any section: set up and play a short match; set up and run the whole test
    suite, the very command of CI."""
    text = README.read_text()
    first = text.split("\n## ", 1)[0]
    sh = [body.strip() for language, body, _ in blocks(first) if language == "sh"]
    assert sh[0] == (
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/ginref match"
        " random simple --games 20 --seed 1"
    )
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    suite = [line for line in ci if line.startswith("python3 -m venv")]
    assert suite and sh[1] == suite[-1]


def test_the_readme_stays_a_front_door() -> None:
    """The reference and the measurements are in docs/: the README keeps the tour."""
    text = README.read_text()
    assert len(text) < 20_000, "move long prose to docs/ (USAGE, PERFORMANCE, EXPERT)"
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:2] == ["What it does", "A short tour"]
    assert "The sandbox in brief" in headings
    for doc in ("USAGE", "API", "EXPERT", "PERFORMANCE", "DEVELOPMENT"):
        assert f"(docs/{doc}.md)" in text, doc


def _anchor(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's) gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_relative_link_of_the_docs_leads_somewhere() -> None:
    """Moving a section must not leave a link behind: each relative link names a file that
    exists and, with ``#``, a heading of it."""
    broken = []
    for page in [README, *DOCS]:
        text = re.sub(FENCE, "", page.read_text())
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif fragment and linked.suffix == ".md":
                anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", linked.read_text(), re.M)}
                if fragment not in anchors:
                    broken.append(f"{page.name}: {target}")
    assert broken == []


def test_the_moved_reference_holds_no_example_that_no_test_runs() -> None:
    """The pages that took the README's reference (USAGE, PERFORMANCE, DEVELOPMENT) show
    commands as text only: a runnable example belongs in the README, where it is run."""
    for name in ("USAGE.md", "PERFORMANCE.md", "DEVELOPMENT.md"):
        languages = {lang for lang, _, _ in blocks((ROOT / "docs" / name).read_text())}
        assert not languages & {"sh", "pycon"}, name


def written_files(text: str) -> set[str]:
    """The files and folders the README's examples write, relative to the top folder: the
    bot it saves, every ``--record``, ``--html``, ``--output`` and ``>`` target, and the
    output folder of each tournament file it plays."""
    out = set(saved_files(text))
    for command in commands(text):
        words = shlex.split(command, comments=True)
        for flag, value in itertools.pairwise(words):
            if flag in ("--record", "--html", "--output", ">"):
                out.add(value.rstrip("/") + ("/" if flag == "--output" else ""))
        played = words[:2] == ["ginref", "tournament"] and words[2].endswith(".toml")
        if played and "--output" not in words:
            config = ROOT / words[2]
            folder = tomllib.loads(config.read_text())["output"]
            out.add(str((config.parent / folder).relative_to(ROOT)) + "/")
    return out


def test_gitignore_covers_every_file_the_readme_examples_write() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: .gitignore cannot be asked")
    written = written_files(README.read_text())
    assert {"games.gin", "hands.jsonl", "os.jsonl", "randombot.py", "report.html"} <= written
    probe = [w + "x" if w.endswith("/") else w for w in sorted(written)]  # a file inside
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", *probe], cwd=ROOT, capture_output=True, text=True
    )
    assert sorted(set(probe) - set(proc.stdout.split())) == []


def test_the_library_examples_run_as_doctests() -> None:
    for language, body, _ in blocks(README.read_text()):
        if language != "pycon":
            continue
        test = doctest.DocTestParser().get_doctest(body, {}, "README", str(README), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, body


@pytest.mark.slow(first=True)  # 60 s of commands, one after another
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
    before = {p.relative_to(copy) for p in copy.rglob("*")}
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
    # Everything the examples wrote is what written_files() names, and .gitignore covers it.
    new = {p.relative_to(copy) for p in copy.rglob("*")} - before
    tops = {p for p in new if not any(parent in new for parent in p.parents)}
    if (ROOT / ".git").exists():
        probe = sorted(f"{p}/x" if (copy / p).is_dir() else str(p) for p in tops)
        proc = subprocess.run(["git", "check-ignore", "--no-index", *probe], cwd=ROOT,
                              capture_output=True, text=True)
        assert sorted(set(probe) - set(proc.stdout.split())) == []
