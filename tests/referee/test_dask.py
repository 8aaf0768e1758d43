"""The Dask backend: the same games as a local run, on a LocalCluster and on a real cluster
(``dask scheduler`` and ``dask worker`` processes on 127.0.0.1), through worker deaths, a
killed referee, a worker that lacks an engine and a scheduler that is not there."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")

import dask.config
from distributed import Client

from ginproto.record import read_games, write_game
from ginproto.rules import Rules
from referee.cli import cli
from referee.cluster.backend import DaskBackend, DaskError
from referee.results.played import GameJob, Played
from referee.results.store import RECORDS_NAME, Store
from referee.scheduling.backends import JobContext, LocalBackend
from referee.scheduling.match import schedule
from referee.scheduling.seats import EngineSeats
from referee.scheduling.tournament import result_of
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec
from referee.seat.sandbox import Policy, SandboxMode
from tests.referee.test_tournament import (
    REFEREE,
    done_count,
    game_rows,
    run_api,
    without_date,
    write_config,
)

DASK = [sys.executable, "-m", "dask"]
BOUND = 120  # seconds: a bound against hangs, never a measurement


# ------------------------------------------------------------------------------------------
# Processes


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """End a process started in its own session, with everything it started."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever the group left behind
    proc.wait(timeout=10)


class RealCluster:
    """``dask scheduler`` and two ``dask worker`` processes (nannies), on 127.0.0.1 with ports
    chosen by the OS. Worker ``A`` finds ``mybot`` on its PATH; worker ``B`` does not."""

    def __init__(self, folder: Path, port: int = 0) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen[bytes]] = []
        self.bots = folder / "bots"
        self.bots.mkdir(parents=True, exist_ok=True)
        bot = self.bots / "mybot"
        # A script with its interpreter on its #! line, which the sandbox lets it read.
        bot.write_text(f"#!{sys.executable}\nfrom engines.simple_engine import main\nmain()\n")
        bot.chmod(0o755)
        self.scheduler = self.start_scheduler(port)
        self.start_workers()

    def start_scheduler(self, port: int) -> subprocess.Popen[bytes]:
        scheduler_file = self.folder / f"scheduler-{len(self.procs)}.json"
        proc = self.start(
            [
                *DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(scheduler_file),
            ]
        )
        deadline = time.monotonic() + BOUND
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert time.monotonic() < deadline, "the scheduler did not start"
            assert proc.poll() is None, "the scheduler exited"
            time.sleep(0.05)
        self.address = str(json.loads(scheduler_file.read_text())["address"])
        return proc

    def start_workers(self) -> None:
        path = os.environ.get("PATH", os.defpath)
        for name, extra in (("A", f"{self.bots}{os.pathsep}"), ("B", "")):
            self.start(
                [
                    *DASK,
                    "worker",
                    self.address,
                    "--name",
                    name,
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                    "--local-directory",
                    str(self.folder / f"worker-{name}"),
                ],
                env={**os.environ, "PATH": extra + path},
            )
        with self.client() as client:
            client.wait_for_workers(2, timeout=BOUND)

    def start(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        with open(self.folder / f"{len(self.procs)}.log", "wb") as log:
            proc = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.folder,
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc

    def client(self) -> Client:
        return Client(self.address, set_as_default=False, timeout=BOUND)

    def workers(self) -> dict[str, str]:
        """Worker name -> address."""
        with self.client() as client:
            info = client.scheduler_info(n_workers=-1)["workers"]
        return {str(w["name"]): str(a) for a, w in info.items()}

    def close(self) -> None:
        for proc in reversed(self.procs):
            stop_group(proc)


@pytest.fixture(scope="module")
def real_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:
    cluster = RealCluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def cluster(real_cluster: RealCluster) -> Iterator[DaskBackend]:
    with DaskBackend(real_cluster.address, ahead=4) as connected:
        yield connected


BARE = Policy(SandboxMode.OFF)
"""For the pid-writing bot: its pid file is the host's, which a sandboxed engine cannot write."""


def pid_bot(folder: Path) -> tuple[Path, Path]:
    """The simple engine behind a script that first appends its pid to a file: (script, file)."""
    pids = folder / "pids"
    bot = folder / "bot"
    bot.write_text(
        f"#!/bin/sh\necho $$ >> {pids}\nexec {sys.executable} -m engines.simple_engine\n"
    )
    bot.chmod(0o755)
    return bot, pids


def where(kind: str, request: pytest.FixtureRequest, local: int = 2) -> str:
    if kind == "local":
        return f"local:{local}"
    cluster: RealCluster = request.getfixturevalue("real_cluster")
    return cluster.address


def ginref(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*REFEREE, *args], capture_output=True, text=True, timeout=BOUND, env=env)


# The local runs the Dask runs are compared with, each played once for the tests that share it.


@pytest.fixture(scope="module")
def local_cup(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], tuple[int, int]]:
    """The round-robin of `write_config` (2 games per pairing), played locally: its game rows
    and its counts."""
    folder = tmp_path_factory.mktemp("local-cup")
    with run_api(write_config(folder, concurrency=2, games=2), folder / "whole") as whole:
        return game_rows(whole), whole.counts()


MATCH = ["match", "simple", "random", "--games", "8", "--seed", "41", "--duplicate", "--json"]


@pytest.fixture(scope="module")
def local_match(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    """`MATCH` played locally on 2 workers: its records file and its JSON."""
    record = tmp_path_factory.mktemp("local-match") / "local.gin"
    local = ginref(*MATCH, "--concurrency", "2", "--record", str(record))
    assert local.returncode == 0, local.stderr
    return record.read_text(), json.loads(local.stdout)


@pytest.fixture(scope="module")
def whole_cup_of_four(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The round-robin of `write_config` with 4 games per pairing, played locally without a
    break: its folder and its ``--json`` standings."""
    folder = tmp_path_factory.mktemp("whole-cup")
    config = write_config(folder, concurrency=2, games=4)
    whole = CliRunner().invoke(
        cli, ["tournament", str(config), "-q", "--json", "-d", str(folder / "whole")]
    )
    assert whole.exit_code == 0, whole.output
    return folder / "whole", json.loads(whole.output)


# ------------------------------------------------------------------------------------------
# The same games as a local run


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["local", "real"])
def test_a_tournament_gives_the_local_games(
    kind: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    local_cup: tuple[list[Any], tuple[int, int]],
) -> None:
    config = write_config(tmp_path, concurrency=2, games=2)
    expected, total = local_cup
    result = CliRunner().invoke(
        cli,
        ["tournament", str(config), "-d", str(tmp_path / "out"), "--dask", where(kind, request)],
    )
    assert result.exit_code == 0, result.output
    assert "on " in result.output and "Dask" in result.output
    with Store.open(tmp_path / "out") as store:
        assert store.counts() == total == (12, 12)
        assert game_rows(store) == expected  # faults and forfeits included
        text = (tmp_path / "out" / RECORDS_NAME).read_text()
        assert text == "".join(t for _, t in store.records())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["local", "real"])
def test_a_match_gives_the_local_games(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, local_match: tuple[str, Any]
) -> None:
    # Another number of workers than the local run's 2: the same games all the same.
    address = where(kind, request, local=3)
    dask = ginref(*MATCH, "--dask", address, "--record", str(tmp_path / "dask.gin"))
    assert dask.returncode == 0, dask.stderr
    assert "Dask" in dask.stderr and "Traceback" not in dask.stderr
    records, standings = local_match
    assert (tmp_path / "dask.gin").read_text() == records
    assert json.loads(dask.stdout) == standings


def test_engines_stay_warm_and_are_closed_when_the_run_ends(
    cluster: DaskBackend, tmp_path: Path
) -> None:
    """Every engine process writes its pid when it starts: 20 games on 2 workers start a few
    engines (the check before game 1, then one set per worker), not 40; and none is left
    running after the run."""
    bot, pids = pid_bot(tmp_path)
    specs = (
        EngineSpec((str(bot),), "Bot", sandbox=BARE),
        EngineSpec.parse("random", name="Random"),
    )
    control = TimeControl.parse("inf")
    cluster.check_engines(specs, control, 10.0)
    checked = len(pids.read_text().split())
    assert checked == 2  # once on each worker
    jobs = schedule(Rules(), [0, 1], 20, 5)
    context = JobContext(specs, ("Bot", "Random"), control)
    consumed = 0
    window: list[int] = []

    def lazily() -> Iterator[GameJob]:
        nonlocal consumed
        for job in jobs:
            consumed += 1
            yield job

    out = []
    for done in cluster.run(lazily(), context.seats):
        window.append(consumed - len(out))
        out.append(done)
    assert [d.job.index for d in out] == list(range(20))
    started = pids.read_text().split()
    assert len(started) - checked <= 2, started  # one Bot per worker, kept warm
    assert max(window) <= 4  # submitted and not yet handed over: at most ``ahead``, not all 20
    assert not wait_gone([int(p) for p in started])
    local = list(LocalBackend(1).run(jobs, context.seats))
    mine = [result_of(d).record for d in local]
    assert [result_of(d).record for d in out] == mine


def test_closing_the_cluster_mid_run_closes_the_engines_on_the_workers(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    """A run left unfinished (its consumer gone, say, after an error): closing the connection
    still closes the run's engines on the workers."""
    bot, pids = pid_bot(tmp_path)
    specs = (
        EngineSpec((str(bot),), "Bot", sandbox=BARE),
        EngineSpec.parse("simple", name="Simple"),
    )
    context = JobContext(specs, ("Bot", "Simple"), TimeControl.parse("inf"))
    cluster = DaskBackend(real_cluster.address)
    try:
        games = cluster.run(schedule(Rules(), [0, 1], 20, 3), context.seats)
        next(games)
        started = [int(p) for p in pids.read_text().split()]
        assert started and all(alive(p) for p in started)
    finally:
        cluster.close()
    assert not wait_gone(started), "engines of an unfinished run outlived the connection"
    games.close()


def test_stop_submits_nothing_more(cluster: DaskBackend) -> None:
    specs = (EngineSpec.parse("simple"), EngineSpec.parse("random"))
    control = TimeControl.parse("inf")
    jobs = schedule(Rules(), [0, 1], 30, 9)
    got: list[Played] = []

    def seats() -> EngineSeats:
        return EngineSeats(specs, control, 10.0)

    for done in cluster.run(jobs, seats, lambda: len(got) >= 2):
        got.append(done)
    # The games submitted before the stop finish and come in order; no new one starts.
    assert 2 <= len(got) <= 2 + 4
    assert [d.job.index for d in got] == list(range(len(got)))


# ------------------------------------------------------------------------------------------
# Faults of the cluster


@pytest.mark.slow
def test_a_worker_killed_mid_run(
    real_cluster: RealCluster, tmp_path: Path, whole_cup_of_four: tuple[Path, Any]
) -> None:
    """SIGKILL one worker process while it plays: its game is played again elsewhere, and the
    tournament ends with every game once, records that verify, and the local results."""
    config = write_config(tmp_path, concurrency=2, games=4)
    with Store.open(whole_cup_of_four[0]) as whole:
        expected = game_rows(whole)
    out = tmp_path / "out"
    victim_address = real_cluster.workers()["B"]
    proc = subprocess.Popen(
        [*REFEREE, "tournament", str(config), "-q", "--dask", real_cluster.address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = None
    engines: list[int] = []
    try:
        with real_cluster.client() as client:
            deadline = time.monotonic() + BOUND
            while killed is None and proc.poll() is None:
                assert time.monotonic() < deadline
                busy = client.processing(workers=[victim_address]).get(victim_address, [])
                if done_count(out) >= 3 and busy:
                    pid = client.run(os.getpid, workers=[victim_address])[victim_address]
                    engines = children(pid)
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                time.sleep(0.01)
        _, stderr = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert killed is not None, "the tournament ended before a worker could be killed"
    assert engines and not wait_gone(engines), "the killed worker's engines outlived it"
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    with Store.open(out) as store:
        assert store.counts() == (24, 24)
        assert [g.game for g in store.games("done")] == list(range(24))
        assert game_rows(store) == expected
    verify = ginref("replay", "--verify", str(out / RECORDS_NAME))
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.mark.slow
def test_a_scheduler_restarted_mid_run(tmp_path: Path) -> None:
    """The scheduler killed and started again (at the same address, with new workers, as a
    deployment would): the games it lost are played again, and the match ends with every game
    once, as locally."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cluster = RealCluster(tmp_path / "cluster", port)
    try:
        base = ["match", "simple", "random", "--games", "30", "--seed", "8", "-q"]
        record = tmp_path / "dask.gin"
        proc = subprocess.Popen(
            [*REFEREE, *base, "--dask", cluster.address, "--record", str(record)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + BOUND
        while proc.poll() is None and len(_games(record)) < 3:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert proc.poll() is None, "the match ended before the scheduler could be killed"
        cluster.scheduler.kill()
        cluster.scheduler.wait(timeout=BOUND)
        cluster.scheduler = cluster.start_scheduler(port)
        cluster.start_workers()
        _, stderr = proc.communicate(timeout=BOUND)
        assert proc.returncode == 0, stderr
        assert "submitting it again" in stderr and "Traceback" not in stderr
        local = ginref(*base, "--record", str(tmp_path / "local.gin"))
        assert local.returncode == 0, local.stderr
        assert _games(record) == _games(tmp_path / "local.gin")
        assert len(_games(record)) == 30
    finally:
        cluster.close()


def _games(path: Path) -> list[str]:
    """The games of a records file, without their date."""
    if not path.exists():
        return []
    return [without_date(write_game(r)).replace("/python3 ", "/python ") for r in read_games(path)]


@pytest.mark.slow
def test_the_referee_killed_and_resumed(
    tmp_path: Path, whole_cup_of_four: tuple[Path, Any]
) -> None:
    """kill -9 of ginref mid-run: its local cluster goes with it, and --resume (on a cluster
    again) ends with the standings of an uninterrupted run."""
    config = write_config(tmp_path, concurrency=2, games=4)
    whole, first = whole_cup_of_four
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [*REFEREE, "tournament", str(config), "-q", "--dask", "local:2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + BOUND
    while proc.poll() is None and done_count(out) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    family = [proc.pid]
    for pid in family:
        family += children(pid)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=BOUND)
    assert proc.returncode == -signal.SIGKILL, "the run ended before the kill"
    assert not wait_gone(family), "the workers or their engines outlived the referee"
    with Store.open(out) as store:
        done, total = store.counts()
    assert 3 <= done < total
    resumed = ginref("tournament", "--resume", str(out), "-q", "--json", "--dask", "local:2")
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    assert again["engines"] == first["engines"]
    assert again["cross_table"] == first["cross_table"]
    with Store.open(out) as a, Store.open(whole) as b:
        assert game_rows(a) == game_rows(b)


def test_an_engine_missing_on_one_worker_is_refused_before_game_1(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    record = tmp_path / "games.gin"
    result = ginref(
        "match", "mybot", "simple", "--games", "2", "--dask", real_cluster.address,
        "--record", str(record),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    b = real_cluster.workers()["B"]
    assert f"engine 'mybot' (mybot) does not start on Dask worker {b}" in result.stderr
    assert real_cluster.workers()["A"] not in result.stderr
    assert not record.exists()  # not one game played


def test_an_engine_missing_on_one_worker_stops_a_tournament_before_game_1(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    config = write_config(tmp_path)
    text = config.read_text().replace('command = "random"', 'command = "mybot"')
    config.write_text(text)
    result = CliRunner().invoke(cli, ["tournament", str(config), "--dask", real_cluster.address])
    assert result.exit_code == 1, result.output
    assert f"does not start on Dask worker {real_cluster.workers()['B']}" in result.output
    assert not Store.exists(tmp_path / "out")


def test_an_unreachable_scheduler_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nobody listens there
    # Dask's connect timeout, as DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=1s would set it.
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        result = CliRunner().invoke(
            cli, ["match", "simple", "random", "--dask", f"tcp://127.0.0.1:{port}"]
        )
    assert result.exit_code == 1, result.output
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port} within 1s" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# ------------------------------------------------------------------------------------------
# Options


@pytest.mark.parametrize("value", ["local:0", "local:x", "nowhere", ""])
def test_bad_addresses(value: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["match", "simple", "random", "--dask", value])
    assert result.exit_code == 2 and "--dask" in result.output, result.output
    config = write_config(tmp_path, dask=value)
    result = CliRunner().invoke(cli, ["tournament", str(config)])
    assert result.exit_code == 2 and "dask:" in result.output, result.output


def test_without_dask_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    result = CliRunner().invoke(cli, ["match", "simple", "random", "--dask", "local:1"])
    assert result.exit_code == 1
    assert "pip install 'ginproto[dask]'" in result.output
    with pytest.raises(DaskError, match="ginproto\\[dask\\]"):
        DaskBackend("local:1")
    # Everything else works as without it.
    result = CliRunner().invoke(cli, ["match", "simple", "random", "--games", "1", "--seed", "1"])
    assert result.exit_code == 0, result.output


def test_debug_log_is_refused_on_a_cluster(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["match", "simple", "random", "--dask", "local:1", "--debug-log", str(tmp_path / "d")],
    )
    assert result.exit_code == 2 and "--debug-log" in result.output


def test_a_local_workers_heartbeat_failure_at_shutdown_prints_no_traceback() -> None:
    # A retiring worker's last heartbeat can meet the scheduler that dropped it; in a local
    # cluster the referee is closing it, and the worker's traceback would reach its stderr.
    from referee.cluster.worker import HEARTBEAT_FAILED, LocalWorkerPlugin, QuietHeartbeat

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("distributed.worker", logging.ERROR, "", 0, msg, None, None)

    quiet = QuietHeartbeat()
    assert not quiet.filter(record(HEARTBEAT_FAILED))
    assert quiet.filter(record("Unexpected exception during heartbeat. Closing worker."))
    with DaskBackend("local:1") as cluster:

        def quieted(dask_worker: Any) -> bool:
            worker_log = logging.getLogger("distributed.worker")
            return LocalWorkerPlugin.name in dask_worker.plugins and any(
                isinstance(f, QuietHeartbeat) for f in worker_log.filters
            )

        assert list(cluster.client.run(quieted).values()) == [True]
