"""``ginref`` starts fast: a command imports only what it runs.

Each case runs in a fresh interpreter (``sys.modules`` of this test run holds everything), and
looks at which modules the command left imported: ``ginref --help`` and a command's ``--help``
need none of the machinery, and a match of two built-in engines neither the tournament store,
nor Dask, nor the HTML report, nor the conformance battery.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli import cli

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["check", "match", "play", "replay", "stats", "tournament"]

# Run a ginref command line in-process, its output kept; print the modules left imported.
CHILD = """
import contextlib, io, json, sys
from referee.cli import cli
args = json.loads(sys.argv[1])
out = io.StringIO()
code = None
if args is not None:
    with contextlib.redirect_stdout(out):
        code = cli.main(args, prog_name="ginref", standalone_mode=False)
print(json.dumps({"modules": sorted(sys.modules), "out": out.getvalue(), "code": code}))
"""

# Heavy, and of no use to show help: third-party packages, the store, the page machinery, the
# battery, the expert engine, the runners, the protocol and the rules engine's game.
NEVER_FOR_HELP = (
    "ginproto.protocol",
    "ginproto.game",
    "ginproto.record",
    "dask",
    "distributed",
    "pyspiel",
    "numpy",
    "playwright",
    "sqlite3",
    "referee.views.html",
    "referee.seat.check",
    "referee.results.store",
    "referee.cluster.backend",
    "referee.scheduling",
    "referee.results.integrity",
    "referee.scheduling.match",
    "referee.views.play",
    "referee.views.replay",
    "ginproto.openspiel",
    "engines.expert",
)

# What a match of two built-in engines, here and not on a cluster, does not use.
NEVER_FOR_MATCH = (
    "dask",
    "distributed",
    "pyspiel",
    "numpy",
    "playwright",
    "sqlite3",
    "referee.views.html",
    "referee.seat.check",
    "referee.results.store",
    "referee.cluster.backend",
    "referee.scheduling.plan",
    "referee.results.standings",
    "referee.scheduling.tournament",
    "referee.results.integrity",
    "ginproto.openspiel",
    "engines.expert",
)


def run_ginref(args: list[str] | None) -> dict[str, object]:
    """Import ``referee.cli`` in a fresh interpreter and, unless ``args`` is None, run ginref
    with ``args``; the modules it left imported, its output and its exit code."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,  # the child is killed if it hangs
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def imported(result: dict[str, object], heavy: tuple[str, ...]) -> list[str]:
    """The modules of ``heavy`` (or a submodule of one) that ``result`` shows imported."""
    modules = result["modules"]
    assert isinstance(modules, list)
    return [h for h in heavy if any(m == h or m.startswith(h + ".") for m in modules)]


@pytest.mark.parametrize(
    "args",
    [None, ["--help"], *([name, "--help"] for name in COMMANDS)],
    ids=lambda args: "import" if args is None else " ".join(args),
)
def test_help_imports_no_machinery(args: list[str] | None) -> None:
    result = run_ginref(args)
    assert imported(result, NEVER_FOR_HELP) == []
    if args is not None:
        assert result["code"] == 0
        assert "Usage: ginref" in str(result["out"])


def test_group_help_lists_every_command() -> None:
    out = str(run_ginref(["--help"])["out"])
    rows = out.split("Commands:")[1].strip().splitlines()
    listed = [row.split()[0] for row in rows]
    assert listed == COMMANDS
    assert all(len(row.split()) > 1 for row in rows)  # each with its one-line help


def test_every_command_loads_under_its_name() -> None:
    ctx = cli.make_context("ginref", ["--help"], resilient_parsing=True)
    assert cli.list_commands(ctx) == COMMANDS
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        assert command.name == name
    assert cli.get_command(ctx, "no-such-command") is None


def test_a_match_imports_only_what_it_uses() -> None:
    result = run_ginref(
        ["match", "random", "simple", "--games", "1", "--seed", "1", "--no-sandbox", "-q"]
    )
    assert "Score of Random vs Simple" in str(result["out"])
    assert imported(result, NEVER_FOR_MATCH) == []
