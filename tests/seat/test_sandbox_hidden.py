"""What the referee writes next to a sandboxed engine stays out of its sight: a cheating engine
(tests/programs/cheat.py, mode ``files``) reads every file below its working directory, in a
match and in a tournament run from that folder. Each of the referee's files there holds the
secret (the seed, or what the opponent wrote): the record, the debug log, the opponent's
stderr in the stderr folder, the tournament's config, its store folder, and the opponent's
own folder. The cheater must find none of it, and the test names the one it found.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from tests.seat.test_sandbox import _leftovers, _sandbox_in_ci, needs_sandbox

__all__ = ["_sandbox_in_ci"]  # the fixture that refuses a skip under CI=true

ROOT = Path(__file__).resolve().parents[2]
CHEAT = ROOT / "tests" / "programs" / "cheat.py"
GINREF = str(Path(sys.executable).with_name("ginref"))

pytestmark = needs_sandbox


def _rival(folder: Path, secret: str) -> Path:
    """An honest engine that writes ``secret`` to its stderr, says it in its ``id author``
    (which the debug log keeps), and keeps a file of it (an opening book, say) in its own
    folder."""
    folder.mkdir()
    (folder / "book.txt").write_text(f"{secret}\n")
    script = folder / "bot.py"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stderr.write('book {secret}\\n')\n"
        "sys.stderr.flush()\nfrom engines.simple_engine import SimpleEngine\n"
        f"SimpleEngine.author = {secret!r}\nSimpleEngine().run()\n"
    )
    script.chmod(0o755)
    return script


def _run(argv: list[str], cwd: Path, marker: str) -> str:
    """Run the referee; the cheater's stderr. Whatever of the cheater is left is killed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    finally:
        for pid in _leftovers(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not isolated" not in done.stderr
    return "".join(p.read_text(errors="replace") for p in sorted((cwd / "err").glob("cheat*")))


def _leaked(found: str, where: dict[str, str]) -> list[str]:
    """Which of the referee's files (by name) the cheater read its secret from."""
    lines = [line for line in found.splitlines() if line.startswith("FOUND ")]
    return [name for name, path in where.items() if any(f"./{path}" in line for line in lines)]


def test_a_match_hides_its_record_debug_log_and_stderr_folder(tmp_path: Path) -> None:
    seed = f"SECRET-{uuid.uuid4().hex}"
    secret = f"SECRET-{uuid.uuid4().hex}"
    rival = _rival(tmp_path / "rival", secret)  # outside the cheater's folder: not its to see
    work = tmp_path / "work"
    work.mkdir()
    marker = f"cheatmark-{uuid.uuid4().hex}"
    argv = [GINREF, "match", f"{sys.executable} {CHEAT} files {marker}", str(rival)]
    argv += ["--games", "2", "--seed", seed, "--tc", "inf", "--rule", "target=25", "-q"]
    argv += ["--record", "rec.gin", "--debug-log", "debug.log", "--stderr-dir", "err"]
    found = _run(argv, work, marker)
    # The secrets are there to be found: the seed in the record, the rival's secret in the
    # debug log and its stderr file.
    assert seed in (work / "rec.gin").read_text()
    assert secret in (work / "debug.log").read_text()
    assert any(secret in p.read_text() for p in (work / "err").iterdir())
    where = {"the record": "rec.gin", "the debug log": "debug.log", "the stderr folder": "err/"}
    assert _leaked(found, where) == [], found
    assert "SECRET-" not in found, found


def test_a_tournament_hides_its_config_store_stderr_and_the_opponents_folder(
    tmp_path: Path,
) -> None:
    seed = f"SECRET-{uuid.uuid4().hex}"
    secret = f"SECRET-{uuid.uuid4().hex}"
    _rival(tmp_path / "rival", secret)
    marker = f"cheatmark-{uuid.uuid4().hex}"
    cheat = f"{sys.executable} {CHEAT} files {marker}"
    (tmp_path / "cup.toml").write_text(
        f'seed = "{seed}"\ngames = 1\ntc = "inf"\noutput = "out"\n[rules]\ntarget = 25\n'
        f"[[engines]]\nname = \"cheat\"\ncommand = {json.dumps(cheat)}\n"
        '[[engines]]\nname = "Rival"\ncommand = "./bot.py"\ncwd = "rival"\n'
    )
    argv = [GINREF, "tournament", "cup.toml", "--stderr-dir", "err", "-q"]
    found = _run(argv, tmp_path, marker)
    assert seed in (tmp_path / "out" / "games.gin").read_text()
    assert any(secret in p.read_text() for p in (tmp_path / "err").iterdir())
    where = {
        "the config": "cup.toml",
        "the output folder": "out/",
        "the stderr folder": "err/",
        "the opponent's folder": "rival/",
    }
    assert _leaked(found, where) == [], found
    assert "SECRET-" not in found, found
