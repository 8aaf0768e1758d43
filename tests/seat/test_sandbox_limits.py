"""A sandboxed engine's process limit is exactly what it says: ``processes = N`` lets the engine
run N tasks (its own process and threads, as the kernel counts them), however the sandbox
itself is made, and refuses the next one."""

from __future__ import annotations

import os
import sys

import pytest

from referee.seat.process import EngineProcess
from referee.seat.sandbox import Limits, Policy, SandboxMode, support
from tests.seat.test_sandbox import _sandbox_in_ci, needs_sandbox

__all__ = ["_sandbox_in_ci"]  # the fixture that refuses a skip under CI=true

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
WAIT = 30.0  # seconds: a bound against hangs, never a measurement
LIMIT = 6

THREADS = """
import sys, threading
wanted = int(sys.argv[1])
stop = threading.Event()
started = 1  # this process itself
try:
    while started < wanted:
        threading.Thread(target=stop.wait, daemon=True).start()
        started += 1
    print("ran", started, flush=True)
except RuntimeError:
    print("refused at", started + 1, flush=True)
stop.set()
"""

pytestmark = [
    needs_sandbox,
    pytest.mark.skipif(
        "pids" not in support().cgroups and not CI,
        reason="no writable pids cgroup here: the process limit is an rlimit",
    ),
]


def _run(tasks: int) -> str:
    policy = Policy(mode=SandboxMode.REQUIRE, limits=Limits(processes=LIMIT))
    process = EngineProcess.start(
        [sys.executable, "-c", THREADS, str(tasks)], sandbox=policy
    )
    try:
        assert process.sandboxed
        return process.read_line(WAIT)
    finally:
        process.close()


def test_an_engine_may_run_as_many_tasks_as_its_process_limit() -> None:
    assert _run(LIMIT) == f"ran {LIMIT}"


def test_an_engine_may_not_run_one_task_more() -> None:
    assert _run(LIMIT + 1) == f"refused at {LIMIT + 1}"
