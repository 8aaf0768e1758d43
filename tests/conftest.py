"""Test configuration: slow soak tests, and the fuzz tests' full counts, run under CI (CI=true)
or with --slow; and the run's reaper (tests/reaper.py), which ends every process the run
started when pytest ends, even by ``kill -9``."""

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


def _under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


# The tests that take ten seconds or more (measured on the 2-core machine): they run first,
# spread over the workers, so that none of them starts last and holds the run open while the
# other workers have nothing left to do.
LONG_TESTS = frozenset(
    {
        "test_live.py::test_stalled_clients_cannot_stop_the_run",
        "test_tournament.py::test_kill_9_and_resume_gives_the_uninterrupted_results",
        "test_no_leftovers.py::test_killing_the_run_during_a_dask_test_leaves_no_process",
        "test_playouts.py::test_random_playouts_keep_every_invariant",
        "test_sandbox_cpu.py::test_a_cpu_hog_no_longer_makes_its_opponent_time_out",
        "test_expert.py::test_it_beats_random_play",
        "test_sandbox.py::test_read_shows_an_engine_what_its_script_starts",
        "test_replay.py::test_records_verify_clean_in_every_variant",
        "test_melds.py::test_discard_deadwoods_matches_naive",
        "test_html.py::test_two_hundred_games",
        "test_protocol.py::test_random_token_lines_raise_only_protocol_errors",
        "test_protocol.py::test_every_view_entry_and_result_of_a_game_round_trips",
        "test_dask.py::test_a_tournament_gives_the_local_games",
        "test_dask.py::test_a_match_gives_the_local_games",
        "test_record.py::test_fuzz_mutated_records",
        "test_expert.py::test_games_in_every_variant_have_no_fault",
    }
)


def _is_long(item: pytest.Item) -> bool:
    return item.nodeid.split("[")[0].rpartition("/")[2] in LONG_TESTS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not _is_long(item))  # stable: the rest keep their order
    if config.getoption("--slow") or _under_ci():
        return
    skip = pytest.mark.skip(reason="slow: runs under CI=true or with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
