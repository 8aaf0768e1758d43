"""docs/USAGE.md is the reference of every ``ginref`` command: each one has a section."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from referee.cli import cli

USAGE = Path(__file__).resolve().parent.parent / "docs" / "USAGE.md"


def commands() -> list[str]:
    return cli.list_commands(click.Context(cli))


def test_the_commands_are_listed_from_the_group() -> None:
    assert {"check", "match", "play", "replay", "stats", "tournament"} <= set(commands())


@pytest.mark.parametrize("command", commands())
def test_every_command_has_a_section_in_usage(command: str) -> None:
    """A heading names the command as it is typed (``ginref CMD``), followed by the text
    that says what it does."""
    text = USAGE.read_text()
    headings = re.findall(r"^#+ .*`ginref (\w+)`.*$", text, re.M)
    assert command in headings, f"docs/USAGE.md has no section for ginref {command}"
    heading = next(h for h in re.findall(r"^#+ .*$", text, re.M) if f"`ginref {command}`" in h)
    body = text.split(heading, 1)[1].split("\n#", 1)[0]
    assert f"ginref {command}" in body, f"the section of ginref {command} never shows it"


def test_the_check_section_says_what_it_prints_and_its_exit_status() -> None:
    text = USAGE.read_text()
    section = text.split("`ginref check`", 1)[1].split("\n## ", 1)[0]
    for words in ("PASS", "FAIL", "exit status", "--verbose", "--move-timeout"):
        assert words in section, words
