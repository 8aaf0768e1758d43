"""An engine kept in the user's home never sees the rest of it: a home with ``bin/`` and
``lib/`` folders looks like an install's prefix, but the sandbox shows the engine's own folder,
never the home whole with its keys."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.seat.process import EngineProcess
from referee.seat.sandbox import Policy, SandboxMode
from tests.seat.test_sandbox import _sandbox_in_ci, needs_sandbox

__all__ = ["_sandbox_in_ci"]  # the fixture that refuses a skip under CI=true

WAIT = 30.0  # seconds: a bound against hangs, never a measurement

PEEK = """
import os, sys
try:
    with open(os.environ["KEY"]) as f:
        print("read", f.read().strip(), flush=True)
except OSError as exc:
    print("refused", exc.strerror, flush=True)
"""

pytestmark = needs_sandbox


def test_an_engine_in_a_home_with_bin_and_lib_cannot_read_the_users_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    for folder in ("bin", "lib", ".ssh", "bots/peek"):
        (home / folder).mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text("PRIVATE-KEY\n")
    bot = home / "bots" / "peek" / "bot"
    bot.write_text(f"#!{sys.executable}\n{PEEK}")
    bot.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    process = EngineProcess.start(
        [str(bot)],
        cwd=str(bot.parent),
        env={"KEY": str(key)},
        sandbox=Policy(mode=SandboxMode.REQUIRE),
    )
    try:
        assert process.sandboxed
        said = process.read_line(WAIT)
    finally:
        process.close()
    assert said.startswith("refused"), said
