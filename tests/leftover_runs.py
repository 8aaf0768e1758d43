"""Runs that tests/referee/test_no_leftovers.py starts in a pytest of their own and kills with
SIGKILL (not collected in the suite itself: the name does not start with ``test_``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GINREF = str(Path(sys.executable).with_name("ginref"))


def test_a_long_sandboxed_match(tmp_path: Path) -> None:
    """A sandboxed match far longer than the test that kills this run waits: the referee is a
    process of its own, in a session of its own, as a test helper starts one."""
    subprocess.run(
        [GINREF, "match", "random", "simple", "--games", "100000", "--sandbox", "require",
         "--record", str(tmp_path / "games.gin"), "-q"],
        start_new_session=True,
        check=False,
    )
