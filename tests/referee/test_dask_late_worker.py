"""A Dask worker that joins after the check made before game 1, and cannot run an engine: it
must not play a game in which that engine is blamed for its own absence. The run stops
instead, naming the worker and the engine, as the check before game 1 does."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from ginproto.rules import Rules
from referee.cluster.backend import DaskBackend, DaskError
from referee.results.played import Played
from referee.scheduling.backends import JobContext
from referee.scheduling.match import schedule
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec
from tests.referee.test_dask import BOUND, DASK, RealCluster, stop_group


class LateCluster(RealCluster):
    """A scheduler and worker ``A``, which finds ``mybot`` on its PATH; worker ``B``, which
    does not, starts only when asked (`join_b`)."""

    def start_workers(self) -> None:
        self.a = self.start_worker("A", f"{self.bots}{os.pathsep}")
        with self.client() as client:
            client.wait_for_workers(1, timeout=BOUND)

    def start_worker(self, name: str, path_prefix: str) -> subprocess.Popen[bytes]:
        path = os.environ.get("PATH", os.defpath)
        return self.start(
            [
                *DASK, "worker", self.address, "--name", name, "--nthreads", "1",
                "--host", "127.0.0.1", "--no-dashboard",
                "--local-directory", str(self.folder / f"worker-{name}"),
            ],
            env={**os.environ, "PATH": path_prefix + path},
        )  # fmt: skip

    def join_b_and_stop_a(self) -> None:
        """B joins; A leaves, so that every game left goes to B."""
        self.start_worker("B", "")
        with self.client() as client:
            client.wait_for_workers(2, timeout=BOUND)
        a = self.procs[1]  # the scheduler is procs[0]
        os.killpg(a.pid, signal.SIGKILL)  # at once: the scheduler sees its connection close
        stop_group(a)
        deadline = time.monotonic() + BOUND
        while set(self.workers()) != {"B"}:
            assert time.monotonic() < deadline, "worker A did not leave"
            time.sleep(0.05)


@pytest.fixture
def late(tmp_path: Path) -> Iterator[LateCluster]:
    cluster = LateCluster(tmp_path / "cluster")
    try:
        yield cluster
    finally:
        cluster.close()


def test_a_worker_without_the_engine_joining_mid_run_plays_no_game(late: LateCluster) -> None:
    specs = (EngineSpec.parse("mybot", name="Bot"), EngineSpec.parse("simple", name="Simple"))
    control = TimeControl.parse("inf")
    context = JobContext(specs, ("Bot", "Simple"), control)
    played: list[Played] = []
    with DaskBackend(late.address, ahead=4) as cluster:
        cluster.check_engines(specs, control, 10.0)  # worker A alone: it passes
        late.join_b_and_stop_a()
        b = late.workers()["B"]
        jobs = schedule(Rules(target=25), [0, 1], 4, 7)
        with pytest.raises(DaskError) as error:
            for done in cluster.run(jobs, context.seats):
                played.append(done)
    faults = [d.log.fault for d in played if d.log.fault is not None]
    assert faults == [], "a game was played, and forfeited, on a worker without the engine"
    assert f"engine 'Bot' (mybot) does not start on Dask worker {b}" in str(error.value)
