"""What the Python API promises as ``ginref`` does, where it has code of its own: ``play_match``
honours its ``time_margin``, ``play_tournament`` hides its config file from a sandboxed engine,
and it refuses a folder that another run is playing."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import uuid
from pathlib import Path

import pytest

from referee import Clock, Outputs, Sandbox, StoreError, play_match, play_tournament
from referee.results.store import STORE_NAME, DirectoryLock, StoreBusy
from tests.seat.test_sandbox import _leftovers, _sandbox_in_ci, needs_sandbox
from tests.seat.test_sandbox_hidden import CHEAT, _leaked

__all__ = ["_sandbox_in_ci"]  # the fixture that refuses a skip under CI=true

SLOW_ONCE = """
import time
from engines.simple_engine import SimpleEngine

class SlowOnce(SimpleEngine):
    slept = False

    def offer(self, view):
        if not SlowOnce.slept:
            SlowOnce.slept = True
            time.sleep(2)
        return super().offer(view)

SlowOnce().run()
"""


def test_play_match_gives_its_time_margin_to_the_clock(tmp_path: Path) -> None:
    """Over a slow link (``time_margin=3``), an engine whose first answer comes 2 s into a 1 s
    move timeout is within the margin and plays on."""
    script = tmp_path / "slow.py"
    script.write_text(SLOW_ONCE)
    result = play_match(
        [f"{sys.executable} {script}", "random"],
        games=1,
        seed=4,
        clock=Clock(tc="inf", move_timeout=1, time_margin=3),
        rules={"target": 25},
        sandbox=Sandbox(mode="off"),
    )
    [game] = result.games
    assert game.fault is None, game.fault


@needs_sandbox
def test_play_tournament_hides_its_config_from_the_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The config file holds the seed, which gives every deal: a cheating engine reading every
    file below its working directory must not find it, from the API as from ``ginref``."""
    seed = f"SECRET-{uuid.uuid4().hex}"
    marker = f"cheatmark-{uuid.uuid4().hex}"
    cheat = f"{sys.executable} {CHEAT} files {marker}"
    config = tmp_path / "cup.toml"
    config.write_text(
        f'seed = "{seed}"\ngames = 1\ntc = "inf"\noutput = "out"\nsandbox = "require"\n'
        f"[rules]\ntarget = 25\n[[engines]]\nname = \"cheat\"\ncommand = {json.dumps(cheat)}\n"
        '[[engines]]\nname = "Simple"\ncommand = "simple"\n'
    )
    monkeypatch.chdir(tmp_path)
    try:
        standings = play_tournament(config, outputs=Outputs(stderr_dir=tmp_path / "err"))
    finally:
        for pid in _leftovers(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert standings.games == 1
    assert seed in (tmp_path / "out" / "games.gin").read_text()
    found = "".join(p.read_text(errors="replace") for p in (tmp_path / "err").glob("cheat*"))
    assert _leaked(found, {"the config": "cup.toml"}) == [], found
    assert "SECRET-" not in found, found


def test_play_tournament_refuses_a_folder_another_run_is_playing(tmp_path: Path) -> None:
    config = {"games": 1, "seed": 1, "engines": [{"command": "simple"}, {"command": "random"}]}
    with DirectoryLock(tmp_path), pytest.raises(StoreBusy, match="in use by another ginref"):
        play_tournament(config, output=tmp_path)
    assert not (tmp_path / STORE_NAME).exists()  # nothing was played
    assert issubclass(StoreBusy, StoreError)
    play_tournament(config, output=tmp_path)  # once the other run is over
    assert (tmp_path / STORE_NAME).exists()
