"""``gin-policy``: a policy function plays in the referee. A bot file in /tmp passes ``ginref
check`` and plays a match in the default sandbox; a bad spec is one line on stderr and a
non-zero exit before any handshake; a bad answer of the function is the policy's fault, ruled
as any engine's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import RandomPlayer

from ginproto.env import NUM_ACTIONS, OBSERVATION_SIZE
from ginproto.policy import policy_engine
from ginproto.record import FaultLine, read_games
from ginproto.rules import Rules
from ginproto.table import FaultKind, play_game
from referee.cli import cli
from referee.seat._sandbox_view import needed
from referee.seat.diagnose import command_problem
from referee.seat.sandbox import support

BIN = Path(sys.executable).parent
GIN_POLICY = str(BIN / "gin-policy")
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

needs_sandbox = pytest.mark.skipif(
    not support().available and not CI,
    reason=f"the sandbox cannot run here: {support().reason}",
)

# Deterministic, from the observation alone: knock when it can, else the first legal action
# (a NumPy integer, as np.flatnonzero gives it).
BOT = """\
import numpy as np


def act(observation):
    legal = np.flatnonzero(observation["action_mask"])
    knocks = legal[legal >= 56]
    return knocks[0] if knocks.size else legal[0]
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment's programs on PATH, as after ``. .venv/bin/activate``."""
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', os.defpath)}")


# -- in the default sandbox -----------------------------------------------------------------
@needs_sandbox
@pytest.mark.parametrize("form", ["file", "module"])
def test_a_policy_passes_ginref_check_in_the_default_sandbox(
    form: str, tmp_path: Path, on_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if CI:
        assert support().available, f"CI must run the sandbox: {support().reason}"
    if form == "file":
        # A file in a folder of /tmp that is not the working directory: the sandbox shows it
        # because the command names it (FILE:FUNCTION).
        spec = f"{write(tmp_path / 'x', 'mybot.py', BOT)}:act"
        name = "mybot:act"
    else:
        write(tmp_path / "bots", "__init__.py", "")
        write(tmp_path / "bots", "mybot.py", BOT)
        monkeypatch.chdir(tmp_path)
        spec, name = "bots.mybot:act", "bots.mybot:act"
    result = CliRunner().invoke(cli, ["check", f"gin-policy {spec}"])
    assert result.exit_code == 0, result.output
    assert f"PASS handshake ('{name}'" in result.output
    assert "all 20 checks passed" in result.output


@pytest.mark.slow
@needs_sandbox
def test_a_policy_plays_a_match_against_expert_in_the_default_sandbox(
    tmp_path: Path, on_path: None
) -> None:
    bot = write(tmp_path / "x", "mybot.py", BOT)
    record = tmp_path / "games.gin"
    result = CliRunner().invoke(
        cli,
        ["match", f"gin-policy {bot}:act", "expert", "--games", "2", "--seed", "1",
         "--record", str(record)],
    )
    assert result.exit_code == 0, result.output
    assert "NOT isolated" not in result.output  # it ran in the sandbox
    assert "mybot:act" in result.output and "Expert" in result.output
    games = list(read_games(record))
    assert len(games) == 2
    assert not [e for g in games for e in g.events if isinstance(e, FaultLine)]


# -- faults are the policy's ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "kind", "words"),
    [
        # pile at the first upcard: a move, but not a legal one
        ("return 3", FaultKind.ILLEGAL, "pile is not allowed now"),
        ("return np.int64(500)", FaultKind.MALFORMED, "action-500"),
        ("raise RuntimeError('boom')", FaultKind.CRASH, ""),
    ],
)
def test_a_bad_answer_of_the_function_is_the_policy_fault(
    body: str, kind: FaultKind, words: str, tmp_path: Path
) -> None:
    bot = write(
        tmp_path,
        "bad.py",
        f"import numpy as np\n\n\ndef act(observation):\n    print('thinking')\n    {body}\n",
    )
    record, stderr = tmp_path / "games.gin", tmp_path / "stderr"
    result = CliRunner().invoke(
        cli,
        ["match", f"{GIN_POLICY} {bot}:act", "random", "--games", "1", "--seed", "1",
         "--no-sandbox", "--record", str(record), "--stderr-dir", str(stderr)],
    )
    assert result.exit_code == 0, result.output
    (game,) = read_games(record)
    (fault,) = [e for e in game.events if isinstance(e, FaultLine)]
    assert game.header(f"Player{fault.player}") == "bad:act"
    assert fault.kind is kind and words in fault.detail, fault
    (log,) = [p for p in stderr.iterdir() if "bad" in p.name]
    text = log.read_text()
    assert "thinking" in text  # the function's prints go to stderr, not to the referee
    if kind is FaultKind.CRASH:
        assert "Traceback" in text and "RuntimeError: boom" in text
    elif kind is FaultKind.MALFORMED:
        assert "gin-policy: act returned" in text


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (-1, "act returned -1: no action (actions are 0 to 108)"),
        ("pass", "act returned 'pass' (str), not an action number"),
        (True, "act returned True, not an action number"),
        (np.float64(2.0), "act returned np.float64(2.0) (float64), not an action number"),
    ],
)
def test_an_answer_with_no_move_is_malformed_in_process_too(value: object, words: str) -> None:
    engine = policy_engine(lambda observation: value, "bad:act")
    log = play_game(Rules(), [engine, RandomPlayer(1)], seed=1)
    assert log.fault is not None and log.fault.player == 0
    assert log.fault.kind is FaultKind.MALFORMED and words in log.fault.detail


def test_the_function_gets_the_environment_observation_and_numpy_integers_play() -> None:
    seen: list[dict[str, Any]] = []

    def act(observation: dict[str, Any]) -> Any:
        seen.append(observation)
        return np.flatnonzero(observation["action_mask"])[-1]  # a NumPy integer

    log = play_game(Rules(), [policy_engine(act, "p:act"), RandomPlayer(1)], seed=1)
    assert log.fault is None and seen
    for observation in seen:
        assert set(observation) == {"observation", "action_mask"}
        assert observation["observation"].dtype == np.float32
        assert observation["observation"].shape == (OBSERVATION_SIZE,)
        assert observation["action_mask"].dtype == np.int8
        assert observation["action_mask"].shape == (NUM_ACTIONS,)
    assert len({id(o["observation"]) for o in seen}) == len(seen)  # fresh arrays, to keep


# -- bad specs: one line, before the handshake ----------------------------------------------
def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GIN_POLICY, *args],
        input="gin\n",
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("spec", "files", "message"),
    [
        ("{d}/nope.py:act", {}, "gin-policy: no file {d}/nope.py"),
        ("{d}/mybot.py", {"mybot.py": BOT}, "names no function: write FILE.py:FUNCTION"),
        ("{d}/mybot.py:play", {"mybot.py": BOT}, "has no function 'play' (it defines: act)"),
        (
            "{d}/broken.py:act",
            {"broken.py": "import numpy\n\nx = 1 / 0\n"},
            "cannot load {d}/broken.py: ZeroDivisionError: division by zero (broken.py, line 3)",
        ),
        (
            "{d}/syntax.py:act",
            {"syntax.py": "def act(observation)\n    return 0\n"},
            "cannot load {d}/syntax.py: SyntaxError:",
        ),
        (
            "{d}/needs.py:act",
            {"needs.py": "import no_such_module_here\n"},
            "ModuleNotFoundError: No module named 'no_such_module_here' (needs.py, line 1)",
        ),
        ("no_such_package.agent:act", {}, "no module named 'no_such_package'"),
        ("{d}/mybot.py:np", {"mybot.py": BOT}, "mybot.py:np is a module, not a function"),
    ],
)
def test_a_bad_spec_is_one_line_and_a_non_zero_exit(
    spec: str, files: dict[str, str], message: str, tmp_path: Path
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    result = run(spec.format(d=tmp_path), cwd=tmp_path)
    assert result.returncode != 0
    assert result.stdout == ""  # no handshake
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("gin-policy: ")
    assert message.format(d=tmp_path) in result.stderr


def test_the_sandbox_shows_the_file_of_a_file_colon_name_argument(tmp_path: Path) -> None:
    bot = write(tmp_path / "x", "mybot.py", BOT)
    shown = needed([GIN_POLICY, f"{bot}:act"], "/", os.defpath)
    assert str(bot.parent) in shown
    assert not any(str(tmp_path / "x" / "mybot.py:act") in d for d in shown)


def test_a_program_of_the_referee_environment_off_path_is_named_with_its_path() -> None:
    problem = command_problem(["gin-policy", "mybot.py:act"], env={"PATH": "/usr/bin:/bin"})
    assert problem is not None
    assert f"'{GIN_POLICY} mybot.py:act'" in problem and "not on PATH" in problem


def test_help_says_how_to_use_it() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "FILE.py:FUNCTION" in result.stdout and "ginref check" in result.stdout
