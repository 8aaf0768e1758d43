"""CPU time: the sandbox's CPU limit (``--limit cpus=N``, a quota on a cpu cgroup of each
engine's own) and ``--affinity`` (each game's engines pinned to CPUs of their own).

The decisive test plays a CPU hog (tests/programs/cpu_load.py: 16 processes spinning during its
opponent's turns) against an engine that needs 10 ms of CPU per decision, at a move limit of
0.25 s: with the CPU limit the opponent keeps it; without the cpu cgroup (all the sandboxed
engines then share the referee's autogroup) it times out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import cli
from referee.scheduling.config import ConfigError
from referee.scheduling.loader import build_config, load_config
from referee.seat import sandbox
from referee.seat.affinity import CpuPlan, cpu_list
from referee.seat.process import EngineProcess
from referee.seat.sandbox import GiB, Limits, Policy, SandboxMode, cpu_quota, support
from tests.seat.test_sandbox import _sandbox_in_ci, needs_sandbox

__all__ = ["_sandbox_in_ci"]  # the fixture: under CI=true the sandbox must run

ROOT = Path(__file__).resolve().parents[2]
CPU_LOAD = ROOT / "tests" / "programs" / "cpu_load.py"
GINREF = str(Path(sys.executable).with_name("ginref"))
ALLOWED = sorted(os.sched_getaffinity(0))
CI = os.environ.get("CI") == "true"

needs_cpu_cgroup = pytest.mark.skipif(
    "cpu" not in support().cgroups and not CI,  # CI runs as root, where it must work
    reason="the referee cannot make cpu cgroups here (a writable cgroup v1 cpu controller,"
    " or a v2 cgroup that hands cpu on to its children)",
)
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2 and not CI, reason="pinning needs two CPUs")


def _engine(*args: str) -> str:
    return f"{sys.executable} {CPU_LOAD} {' '.join(args)}"


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str
    pid: int  # the referee's


def _ginref(
    args: list[str], cwd: Path, cpus: set[int] | None = None, timeout: float = 120
) -> Ran:
    """``ginref`` in ``cwd``; with ``cpus``, the referee may run on those CPUs only."""

    def restrict() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    with subprocess.Popen(
        [GINREF, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=restrict if cpus is not None else None,
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        finally:
            process.kill()  # if the wait timed out: nothing outlives the test
    return Ran(process.returncode, out, err, process.pid)


def _reported(where: Path, word: str) -> list[str]:
    """What the engines wrote after ``word`` on stderr (in the stderr file ``where``, or
    every one in the folder ``where``), one item per engine start."""
    paths = sorted(where.glob("*.stderr")) if where.is_dir() else [where]
    return [
        line.split(" ", 1)[1]
        for path in paths
        for line in path.read_text().splitlines()
        if line.startswith(f"{word} ")
    ]


def _cpus(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


# ------------------------------------------------------------------------------- the limit


def test_the_cpu_limit_is_read_and_named() -> None:
    assert Limits().cpus == 1
    assert Limits().updated({"cpus": "0.5"}) == Limits(cpus=0.5)
    assert Limits().updated({"CPUs": 2}).cpus == 2
    assert Limits(cpus=0.5).describe("cpus") == "CPU limit 0.5"
    # quota and period, in microseconds: a short period, and never below the kernel's 1 ms
    assert cpu_quota(1) == (10_000, 10_000)
    assert cpu_quota(0.5) == (5_000, 10_000)
    if (os.cpu_count() or 1) > 2:
        assert cpu_quota(2.5) == (25_000, 10_000)
    assert cpu_quota(0.01) == (1_000, 100_000)
    assert cpu_quota(os.cpu_count() or 1) == (-1, 10_000)  # no quota: the whole machine


@pytest.mark.parametrize("bad", ["0", "-1", "lots", "nan", "inf", "", "2000", True, 0.001])
def test_a_bad_cpu_limit_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match=r"cpus must be a number of CPUs from 0\.01 to 1024"):
        Limits().updated({"cpus": bad})


@pytest.mark.parametrize("bad", ["cpus=0", "cpus=half", "2:cpus=", "cpus=1e9"])
def test_a_bad_cpu_limit_is_a_usage_error(bad: str) -> None:
    result = CliRunner().invoke(cli, ["match", "random", "simple", "--limit", bad])
    assert result.exit_code == 2, result.output
    assert "--limit" in result.output and "cpus must be a number of CPUs" in result.output
    assert "Traceback" not in result.output


def test_the_tournament_file_sets_the_cpu_limit_and_affinity(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        "affinity = true\n[limits]\ncpus = 0.5\n"
        '[[engines]]\ncommand = "random"\nlimits = { cpus = 2 }\n'
        '[[engines]]\ncommand = "simple"\n'
    )
    config = load_config(path)
    first, second = config.specs()
    assert first.sandbox.limits == Limits(cpus=2)
    assert second.sandbox.limits == Limits(cpus=0.5)
    assert config.affinity
    assert config.run_options()["limits"] == {"cpus": 0.5}
    assert config.run_options()["affinity"] is True
    path.write_text(path.read_text().replace("cpus = 0.5", 'cpus = "many"'))
    with pytest.raises(ConfigError, match=r"limits: cpus must be a number of CPUs"):
        load_config(path)
    path.write_text('affinity = true\ndask = "local:2"\n[[engines]]\ncommand = "random"\n'
                    '[[engines]]\ncommand = "simple"\n')
    with pytest.raises(ConfigError, match="affinity pins the engines of local games"):
        load_config(path)


def test_stores_made_before_the_cpu_limit_still_resume() -> None:
    """A store keeps only the limits that differ from the defaults, and no affinity in its
    settings: a store from before either existed has the same settings, and its run options
    (without ``affinity``) still build a config."""
    table = {
        "seed": 1,
        "engines": [
            {"command": "random", "limits": {"memory": GiB}},
            {"command": "simple"},
        ],
    }
    config = build_config(table)
    settings = config.settings()
    assert settings["engines"][0]["limits"] == {"memory": GiB}
    assert "affinity" not in settings
    old_run_options = {"concurrency": 1, "sandbox": "auto", "limits": {}, "network": False}
    resumed = build_config({**settings, **old_run_options})
    assert resumed.settings() == settings
    assert resumed.sandbox.limits == Limits() and not resumed.affinity
    assert Limits().settings() == {}
    assert Limits().updated(Limits(cpus=0.5).settings()) == Limits(cpus=0.5)


def test_an_unenforceable_cpu_limit_is_named_at_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu = "cpus (no writable cpu cgroup: an engine may take its opponent's CPU time)"
    assert cpu in sandbox.unenforced({"memory": Path("/m"), "pids": Path("/p")})
    assert cpu not in sandbox.unenforced({"cpu": Path("/c")})
    found = sandbox.Support("/usr/bin/bwrap", "", {}, (cpu,))
    monkeypatch.setattr(sandbox, "support", lambda: found)
    assert sandbox.start_warnings(SandboxMode.AUTO) == [
        f"warning: sandbox limit not enforced: {cpu}"
    ]
    assert sandbox.start_warnings(SandboxMode.OFF) == []  # bare on purpose: no limits


@needs_sandbox
def test_a_match_without_a_cpu_cgroup_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    real = support()
    cgroups = {k: v for k, v in real.cgroups.items() if k != "cpu"}
    found = sandbox.Support(real.bwrap, "", cgroups, sandbox.unenforced(cgroups))
    monkeypatch.setattr(sandbox, "support", lambda: found)
    result = CliRunner().invoke(cli, ["match", "random", "simple", "--games", "1", "-q"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "not enforced: cpus" in line]
    assert lines == [
        "warning: sandbox limit not enforced: cpus (no writable cpu cgroup: an engine may"
        " take its opponent's CPU time)"
    ]


def _fake_cgroups(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, proc: str, files: dict[str, str]
) -> None:
    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "proc").write_text(proc)
    monkeypatch.setattr(sandbox, "_CGROUP_ROOT", root)
    monkeypatch.setattr(sandbox, "_PROC_CGROUP", tmp_path / "proc")


def test_the_cpu_cgroup_on_cgroup_v1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake_cgroups(
        monkeypatch, tmp_path, "4:cpu,cpuacct:/ref\n3:pids:/ref\n0::/\n",
        {"cpu/ref/cpu.shares": "1024", "pids/ref/pids.max": "max"},
    )
    found = sandbox._cgroup_dirs()
    assert found == {"cpu": tmp_path / "cgroup/cpu/ref", "pids": tmp_path / "cgroup/pids/ref"}
    made = sandbox._make_cgroups(sandbox.Support("bwrap", "", found), Limits(cpus=0.5))
    assert (made["cpu"] / "cpu.cfs_quota_us").read_text() == "5000"
    assert (made["cpu"] / "cpu.cfs_period_us").read_text() == "10000"


@pytest.mark.parametrize("handed_on", [True, False])
def test_the_cpu_cgroup_on_cgroup_v2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, handed_on: bool
) -> None:
    """One hierarchy: the referee's cgroup serves where it hands cpu on to its children."""
    control = "cpu memory pids" if handed_on else "memory pids"
    _fake_cgroups(
        monkeypatch, tmp_path, "0::/user.slice/ref\n",
        {"cgroup.controllers": "cpu memory pids",
         "user.slice/ref/cgroup.controllers": "cpu memory pids",
         "user.slice/ref/cgroup.subtree_control": control},
    )
    found = sandbox._cgroup_dirs()
    if not handed_on:
        assert found == {}
        return
    assert found == {"cpu": tmp_path / "cgroup/user.slice/ref"}
    made = sandbox._make_cgroups(sandbox.Support("bwrap", "", found), Limits(cpus=0.25))
    assert (made["cpu"] / "cpu.max").read_text() == "2500 10000"
    made = sandbox._make_cgroups(sandbox.Support("bwrap", "", found), Limits(cpus=1024))
    assert (made["cpu"] / "cpu.max").read_text() == "max 10000"


def _cpu_cgroup_of(pid: int) -> Path:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return Path("/sys/fs/cgroup/cpu") / path.lstrip("/")
        if not controllers and "cpu" in support().cgroups:  # cgroup v2
            return Path("/sys/fs/cgroup") / path.lstrip("/")
    raise AssertionError(f"no cpu cgroup for {pid}")


@needs_sandbox
@needs_cpu_cgroup
def test_an_engine_runs_in_a_cpu_cgroup_of_its_own_removed_afterwards() -> None:
    script = "import sys; print('ready', flush=True); sys.stdin.readline()"
    policy = Policy(limits=Limits(cpus=0.5), workdir=False)
    process = EngineProcess.start([sys.executable, "-c", script], sandbox=policy)
    try:
        assert process.read_line(30) == "ready"
        group = _cpu_cgroup_of(process.pid)
        assert group.name.startswith(f"ginref-{os.getpid()}-")
        if (group / "cpu.max").exists():
            assert (group / "cpu.max").read_text().split() == ["5000", "10000"]
        else:
            assert (group / "cpu.cfs_quota_us").read_text().strip() == "5000"
            assert (group / "cpu.cfs_period_us").read_text().strip() == "10000"
    finally:
        process.close()
    assert not group.exists()


@needs_sandbox
@needs_cpu_cgroup
def test_cgroups_left_by_a_killed_referee_of_the_same_number_take_no_limit_away() -> None:
    """A referee killed with ``kill -9`` leaves its cgroups; a later referee may be given its
    process number. The engine still gets cgroups of its own, with its memory limit."""
    if "memory" not in support().cgroups:
        pytest.skip("no memory cgroup here")
    base = support().cgroups["memory"]
    counter = next(sandbox._counter)
    left = [base / f"ginref-{os.getpid()}-{n}" for n in range(counter + 1, counter + 40)]
    for path in left:  # what a killed referee of this number left, in the old naming too
        path.mkdir(exist_ok=True)
    script = "import sys; print('ready', flush=True); sys.stdin.readline()"
    policy = Policy(limits=Limits(memory=200 << 20, cpus=0.5), workdir=False)
    try:
        process = EngineProcess.start([sys.executable, "-c", script], sandbox=policy)
        try:
            assert process.read_line(30) == "ready"
            group = _memory_cgroup_of(process.pid)
            assert group not in left and group.parent == base
            assert int((group / "memory.limit_in_bytes").read_text()) == 200 << 20
        finally:
            process.close()
    finally:
        for path in left:
            path.rmdir()


def _memory_cgroup_of(pid: int) -> Path:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return Path("/sys/fs/cgroup/memory") / path.lstrip("/")
    raise AssertionError(f"no memory cgroup for {pid}")


# ------------------------------------------------------------------------------- the hog


@pytest.mark.slow
@needs_sandbox
@needs_cpu_cgroup
def test_a_cpu_hog_no_longer_makes_its_opponent_time_out(tmp_path: Path) -> None:
    """64 processes spin during the opponent's turns. Each sandboxed engine in a cpu cgroup
    of its own (the hog's quota: one CPU, however many it spins), the opponent gets its fair
    share and keeps a 1 s move limit with 10 ms of work a decision. Without the cpu cgroup it
    would get 1/65 of the referee's autogroup, and its decisions would take over a second on
    a busy machine. The limit is 1 s, not less, because the rest of the test run loads the
    machine too: at 0.25 s (with 16 spinners) a decision once timed out under that load
    alone."""
    args = ["match", _engine("--spin", "64"), _engine("--work", "0.01"), "--games", "2"]
    args += ["--seed", "1", "--rule", "target=1", "--tc", "inf", "--move-timeout", "1"]
    args += ["--startup-timeout", "30", "--name", "1=hog", "--name", "2=opponent"]
    args += ["--stderr-dir", "err", "--json", "-q"]
    done = _ginref(args, tmp_path, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not enforced" not in done.stderr
    opponent = {e["name"]: e for e in json.loads(done.stdout)["engines"]}["opponent"]
    assert opponent["faults"] == {}, (opponent, done.stderr)
    assert opponent["games"] == 2
    assert _reported(tmp_path / "err", "spinning")[:1] == ["64"]  # the hog did spin
    # Every engine's cgroups were removed (by their referee, which has ended).
    left = [p for base in support().cgroups.values() for p in base.glob(f"ginref-{done.pid}-*")]
    assert left == []


# ------------------------------------------------------------------------------- affinity


def test_the_cpus_of_each_game_and_engine() -> None:
    four = CpuPlan((0, 1, 2, 3), games=2, engines=2)
    assert [four.engine_cpus(w) for w in (0, 1)] == [[(0,), (1,)], [(2,), (3,)]]
    assert four.warning() is None
    two = CpuPlan((4, 6), games=2, engines=2)  # a game's engines share its CPU
    assert [two.engine_cpus(w) for w in (0, 1)] == [[(4,), (4,)], [(6,), (6,)]]
    assert two.warning() is None
    three = CpuPlan(tuple(range(7)), games=2, engines=3)
    assert three.engine_cpus(0) == [(0,), (1,), (2,)]
    assert three.engine_cpus(1) == [(3,), (4,), (5, 6)]
    alone = CpuPlan((0, 1), games=1, engines=3)
    assert alone.engine_cpus(0) == [(0, 1)] * 3
    shared = CpuPlan((0, 1), games=3, engines=2)
    assert [shared.game_cpus(w) for w in range(3)] == [(0,), (1,), (0,)]
    assert shared.warning() == (
        "warning: --affinity: 2 CPUs (0-1) for 3 games at once: games share CPUs, and an"
        " engine's work can slow down another game's engines (play at most 2 at once with"
        " --concurrency)"
    )
    assert cpu_list((0, 1, 2, 5, 7, 8)) == "0-2,5,7-8"


def test_pinning_an_engine_leaves_the_referee_as_it_was() -> None:
    script = (
        "print([l.split(':')[1].strip() for l in open('/proc/self/status')"
        " if l.startswith('Cpus_allowed_list')][0], flush=True)"
    )
    before = os.sched_getaffinity(0)
    cpu = ALLOWED[-1]
    policy = Policy(mode=SandboxMode.OFF, affinity=(cpu,))
    with EngineProcess.start([sys.executable, "-c", script], sandbox=policy) as process:
        assert process.read_line(30) == str(cpu)
    assert os.sched_getaffinity(0) == before


def _disjoint(sets: list[set[int]]) -> bool:
    return sum(len(cpus) for cpus in sets) == len(set().union(*sets))


@needs_two_cpus
@pytest.mark.parametrize(("players", "mode"), [(2, "sandboxed"), (3, "bare")])
def test_affinity_gives_the_games_at_once_cpus_of_their_own(
    tmp_path: Path, players: int, mode: str
) -> None:
    """Two games at once: each worker's engines on CPUs no engine of the other has; within
    a game, each engine on CPUs of its own where there are enough, else the game's."""
    if mode == "sandboxed" and not support().available and not CI:
        pytest.skip(f"the sandbox cannot run here: {support().reason}")
    engines = [_engine() for _ in range(players)]
    args = ["match", *engines, "--games", "2", "--seed", "1", "--rule", "target=1"]
    args += ["--concurrency", "2", "--stderr-dir", "err", "-q", "--affinity"]
    args += ["--no-sandbox"] if mode == "bare" else []
    done = _ginref(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--affinity" not in done.stderr  # no warning: there are CPUs enough
    workers: dict[str, list[set[int]]] = {}
    for path in sorted((tmp_path / "err").glob("*.stderr")):  # NAME.wWORKER.stderr
        (text,) = _reported(path, "cpus")
        workers.setdefault(path.name.split(".w", 1)[1], []).append(_cpus(text))
    assert sorted(len(seen) for seen in workers.values()) == [players, players]
    first, second = workers.values()
    assert _disjoint([set().union(*first), set().union(*second)])
    for seen in (first, second):
        assert all(cpus and cpus <= set(ALLOWED) for cpus in seen)
        if len(ALLOWED) // 2 >= players:
            assert _disjoint(seen)
        else:  # fewer CPUs than engines: the game's engines share them
            assert all(cpus == seen[0] for cpus in seen)


def test_affinity_says_when_games_at_once_share_cpus(tmp_path: Path) -> None:
    """A referee that may use one CPU, playing two games at once: one warning line."""
    cpu = ALLOWED[0]
    args = ["match", "random", "simple", "--games", "2", "--seed", "1", "--rule", "target=1"]
    args += ["--concurrency", "2", "--affinity", "-q", "--no-sandbox"]
    done = _ginref(args, tmp_path, cpus={cpu})
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning: --affinity")]
    assert warned == [
        f"warning: --affinity: 1 CPU ({cpu}) for 2 games at once: games share CPUs, and an"
        " engine's work can slow down another game's engines (play at most 1 at once with"
        " --concurrency)"
    ]


def test_affinity_is_for_local_games() -> None:
    result = CliRunner().invoke(
        cli, ["match", "random", "simple", "--affinity", "--dask", "local:1"]
    )
    assert result.exit_code == 2, result.output
    assert "--affinity pins the engines of local games" in result.output


@needs_two_cpus
def test_a_tournament_pins_its_engines(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(
        'games = 1\noutput = "out"\nconcurrency = 1\nsandbox = "off"\n[rules]\ntarget = 1\n'
        f"[[engines]]\ncommand = {json.dumps(_engine())}\n"
        f"[[engines]]\nname = \"second\"\ncommand = {json.dumps(_engine())}\n"
    )
    done = _ginref(["tournament", "t.toml", "--affinity", "--stderr-dir", "err", "-q"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    first, second = [_cpus(t) for t in _reported(tmp_path / "err", "cpus")]
    assert first and second and not first & second


def test_records_are_the_same_with_the_cpu_options(tmp_path: Path) -> None:
    base = ["match", "random", "simple", "--games", "1", "--seed", "5", "--rule", "target=25"]
    base += ["-q"]
    plain = _ginref([*base, "--record", "plain.gin"], tmp_path)
    pinned = _ginref(
        [*base, "--record", "pinned.gin", "--affinity", "--limit", "cpus=0.5"], tmp_path
    )
    assert plain.returncode == pinned.returncode == 0, plain.stderr + pinned.stderr
    assert (tmp_path / "plain.gin").read_bytes() == (tmp_path / "pinned.gin").read_bytes()
