"""Test configuration: the slow tests (ten seconds or more each), and the fuzz tests' full
counts, run under CI (CI=true) or with --slow; and the run's reaper (tests/reaper.py), which
ends every process the run started when pytest ends, even by ``kill -9``."""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REAPER = Path(__file__).with_name("reaper.py")
# Set when the run is thorough (CI=true or --slow): see helpers.thorough.
THOROUGH = "GINPROTO_TESTS_THOROUGH"


def pytest_configure(config: pytest.Config) -> None:
    """Start the reaper, in the main process only (a pytest-xdist worker is one of the
    processes it watches), before any test starts a process; and compile the project's
    modules (`compile_project`). Not under mutmut, which sets ``MUTANT_UNDER_TEST`` and runs
    pytest once per mutant, in processes of its own: a reaper each time would cost a process
    start and its polling per mutant, and the tests it runs (``[tool.mutmut]`` in
    pyproject.toml) start only engines, which die with the process that started them
    (``referee.seat.process``, not mutated)."""
    if config.getoption("--slow") or _under_ci():
        os.environ[THOROUGH] = "1"  # read by helpers.thorough, as the test modules load
    if hasattr(config, "workerinput") or "MUTANT_UNDER_TEST" in os.environ:
        return
    compile_project()
    folder = Path(tempfile.mkdtemp(prefix="ginproto-reaper-"))
    subprocess.Popen(
        [sys.executable, str(REAPER), str(os.getpid()), str(folder)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # out of pytest's group: a killpg of the run leaves it watching
    )
    deadline = time.monotonic() + 10
    while not (folder / "ready").exists():
        if time.monotonic() > deadline:
            raise pytest.UsageError(f"the test run's reaper ({REAPER}) did not start")
        time.sleep(0.01)
    cgroup = folder / "cgroup"
    if cgroup.exists():  # everything this process starts from now on is in the reaper's cgroup
        Path(cgroup.read_text(), "cgroup.procs").write_text(str(os.getpid()))


def compile_project() -> None:
    """Write the bytecode of the project's modules (``__pycache__``, ignored by git) once, for
    the hundreds of referee and engine processes the run starts: where PYTHONDONTWRITEBYTECODE
    is set, or in the sandbox's read-only view of the project, none of them would write it,
    and each would compile every module it imports anew."""
    root = REAPER.parent.parent
    for folder in ("ginproto", "referee", "engines", "tests/programs"):
        compileall.compile_dir(root / folder, quiet=1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run the tests marked slow")


def _not_first(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("slow")
    return not (marker is not None and marker.kwargs.get("first", False))


def _under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


# A test marked slow takes ten seconds or more on the 2-core machine (pytest --durations shows
# them): a developer's run skips it, CI=true and --slow run it. They run in the files' order,
# among the others: most of them are CPU-bound, and run side by side they only wait for each
# other (on two cores, CI=true took 463 s with them first and 350 s in the files' order).
#
# The exception is a long test that mostly waits on the commands it runs one after another
# (``slow(first=True)``): it starts first, on a worker of its own, so that it is not the
# last test still running.
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow") or _under_ci():
        items.sort(key=_not_first)  # stable: the others keep the files' order
        return
    skip = pytest.mark.skip(reason="slow: runs under CI=true or with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
