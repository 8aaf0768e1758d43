"""A test run killed with SIGKILL leaves no process behind (tests/reaper.py): a pytest of its
own plays a sandboxed match, or a match on a real Dask cluster (scheduler and workers started
in sessions of their own, as the Dask tests start them), and is killed while it plays; every
process it had started must be gone soon after."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from reaper import descendants, start_time

from referee.seat.sandbox import support

ROOT = Path(__file__).resolve().parents[2]
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def kill_while(test: str, ready: Callable[[list[str]], bool]) -> list[str]:
    """Run ``test`` in a pytest of its own, wait until ``ready`` holds of the command lines of
    its processes, SIGKILL that pytest alone, and return the command lines of the processes it
    had started that are still alive 15 seconds later."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    seen: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"the run of {test} ended before it was killed"
            for pid in descendants(proc.pid):
                if pid not in seen and (started := start_time(pid)) is not None:
                    seen[pid] = started
            if ready([cmdline(p) for p in seen if start_time(p) == seen[p]]):
                break
            assert time.monotonic() < deadline, f"the run of {test} never got going"
            time.sleep(0.1)
        time.sleep(0.3)  # into play
        for pid in descendants(proc.pid):  # the last ones started
            if pid not in seen and (started := start_time(pid)) is not None:
                seen[pid] = started
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 15
        alive = list(seen)
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = [p for p in seen if start_time(p) == seen[p]]
        return [cmdline(p) or str(p) for p in alive]
    finally:
        for pid, started in seen.items():  # whatever a failure left: not this run's leftovers
            if start_time(pid) == started:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.skipif(not support().available and not CI, reason=f"no sandbox: {support().reason}")
def test_killing_the_run_during_a_sandboxed_match_leaves_no_process() -> None:
    left = kill_while(
        "tests/leftover_runs.py::test_a_long_sandboxed_match",
        lambda lines: sum("bwrap" in line for line in lines) >= 2,
    )
    assert left == [], f"left behind: {left}"


@pytest.mark.slow
def test_killing_the_run_during_a_dask_test_leaves_no_process() -> None:
    pytest.importorskip("distributed")
    left = kill_while(
        "tests/referee/test_dask.py::test_a_match_gives_the_local_games[real]",
        lambda lines: sum(" worker " in line for line in lines) >= 2,
    )
    assert left == [], f"left behind: {left}"
