"""The sandbox, judged by outcome: real cheating engines (tests/programs/cheat.py) attack their
opponent and the referee in a match, at concurrency 2, in the three-player game and in a
tournament. Sandboxed, every attack fails: the opponent plays on without a fault, nothing
secret reaches the cheater, no process is left, the record verifies. The same attacks with
``--no-sandbox`` work, which shows that the tests can tell.

Where bubblewrap cannot run these tests skip, saying why; under CI=true they fail instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner
from helpers import killed_by_a_limit

from referee.cli import cli
from referee.seat import sandbox
from referee.seat.player import EngineSpec
from referee.seat.process import EngineProcess
from referee.seat.sandbox import GiB, Limits, MiB, Policy, SandboxMode, parse_size, support

ROOT = Path(__file__).resolve().parents[2]
CHEAT = ROOT / "tests" / "programs" / "cheat.py"
GINREF = str(Path(sys.executable).with_name("ginref"))
CI = os.environ.get("CI") == "true"

needs_sandbox = pytest.mark.skipif(
    not support().available and not CI,
    reason=f"the sandbox cannot run here: {support().reason}",
)


@pytest.fixture(autouse=True)
def _sandbox_in_ci(request: pytest.FixtureRequest) -> None:
    if CI and request.node.get_closest_marker("skipif") is not None:
        assert support().available, f"CI must run the sandbox: {support().reason}"


# ------------------------------------------------------------------------------- cheaters


@dataclass
class Outcome:
    code: int
    output: str  # the referee's stdout and stderr
    standings: dict[str, dict[str, object]]  # by engine name
    cheat_stderr: str
    record: Path
    record_text: str
    leftovers: list[int]


def _leftovers(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                stat = Path(f"/proc/{entry}/stat").read_text()
                if stat.rpartition(")")[2].split()[0] != "Z":
                    found.append(int(entry))
    return found


@contextlib.contextmanager
def _play(tmp: Path, setting: str, mode: str, sandboxed: bool) -> Iterator[Outcome]:
    """Run the cheater in ``setting``; kill whatever of it is left afterwards."""
    token = f"SECRET-{uuid.uuid4().hex}"
    marker = f"cheatmark-{uuid.uuid4().hex}"
    cheat = f"{sys.executable} {CHEAT} {mode} {marker}"
    common = ["--seed", token, "--tc", "inf", "--move-timeout", "10", "--stderr-dir", "err"]
    common += [] if sandboxed else ["--no-sandbox"]
    common += ["--json", "-q"]
    limits = {"memory": "256M", "processes": 32}
    if setting == "tournament":
        (tmp / "cup.toml").write_text(
            f'games = 2\ntc = "inf"\noutput = "out"\n[rules]\ntarget = 25\n'
            f"[[engines]]\nname = \"cheat-{mode}\"\ncommand = {json.dumps(cheat)}\n"
            f"limits = {{ memory = \"256M\", processes = 32 }}\n"
            f'[[engines]]\nname = "Simple"\ncommand = "simple"\n'
        )
        argv = [GINREF, "tournament", "cup.toml", *common]
        record = tmp / "out" / "games.gin"
    else:
        engines = {"three": [cheat, "simple", "random"]}.get(setting, [cheat, "simple"])
        games = {"match": 2, "concurrency": 4, "three": 1}[setting]
        argv = [GINREF, "match", *engines, "--games", str(games), "--rule", "target=25"]
        argv += ["--record", "rec.gin", *common]
        argv += [f"--limit=1:{k}={v}" for k, v in limits.items()]
        if setting == "concurrency":
            argv += ["--concurrency", "2"]
        record = tmp / "rec.gin"
    env = {**os.environ, "GINREF_TEST_SECRET": token}
    try:
        done = subprocess.run(
            argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        # What the kernel still tears down after the referee has ended: a fifth of a second,
        # and no longer than until none is left.
        deadline = time.monotonic() + 0.2
        while (leftovers := _leftovers(marker)) and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            report = json.loads(done.stdout)
        except ValueError:
            report = {"engines": []}
        cheat_err = "".join(
            p.read_text(errors="replace") for p in sorted((tmp / "err").glob("cheat*"))
        )
        yield Outcome(
            code=done.returncode,
            output=done.stdout + done.stderr,
            standings={e["name"]: e for e in report["engines"]},
            cheat_stderr=cheat_err,
            record=record,
            record_text=record.read_text() if record.exists() else "",
            leftovers=leftovers,
        )
    finally:
        for pid in _leftovers(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _verifies(record: Path) -> bool:
    return CliRunner().invoke(cli, ["replay", "--verify", str(record)]).exit_code == 0


MODES = ["kill", "pipes", "referee", "ptrace", "files", "store", "escape", "memory", "fork"]
SETTINGS = ["match", "concurrency", "three", "tournament"]


def _cases() -> Iterator[object]:
    for mode in MODES:
        for setting in SETTINGS:
            if mode == "store" and setting != "tournament":
                continue  # a match has no store
            quick = setting == "match" or (mode == "store" and setting == "tournament")
            marks = [] if quick else [pytest.mark.slow]
            yield pytest.param(setting, mode, id=f"{setting}-{mode}", marks=marks)


@needs_sandbox
@pytest.mark.parametrize(("setting", "mode"), list(_cases()))
def test_every_attack_fails_in_the_sandbox(tmp_path: Path, setting: str, mode: str) -> None:
    with _play(tmp_path, setting, mode, sandboxed=True) as outcome:
        assert outcome.code == 0, outcome.output
        assert "not isolated" not in outcome.output
        # The opponents play on unharmed: no fault of theirs, in any game.
        for name, row in outcome.standings.items():
            if not name.startswith("cheat"):
                assert row["faults"] == {}, (name, row, outcome.cheat_stderr)
        # Nothing leaks: the cheater found nothing, saw no secret.
        assert "FOUND" not in outcome.cheat_stderr, outcome.cheat_stderr
        assert "SECRET-" not in outcome.cheat_stderr
        assert outcome.leftovers == [], "a process of the engine outlived its game"
        assert _verifies(outcome.record), outcome.record_text[-2000:]
        if mode == "memory":  # the cheater forfeits, saying which limit it hit
            assert "memory limit 256 MiB" in outcome.record_text
        if mode == "fork":
            assert "fork failed after" in outcome.cheat_stderr, outcome.cheat_stderr


def _bare_cases() -> Iterator[object]:
    for mode in MODES:
        setting = "tournament" if mode == "store" else "match"
        yield pytest.param(setting, mode, id=f"{setting}-{mode}", marks=[pytest.mark.slow])


@pytest.mark.parametrize(("setting", "mode"), list(_bare_cases()))
def test_every_attack_works_without_the_sandbox(tmp_path: Path, setting: str, mode: str) -> None:
    with _play(tmp_path, setting, mode, sandboxed=False) as outcome:
        found = outcome.cheat_stderr
        if mode in ("kill", "pipes"):
            victim = outcome.standings["Simple"]
            assert victim["faults"], (victim, found)
        elif mode == "referee":
            assert "FOUND referee cmdline: SECRET-" in found, found
            assert "FOUND referee environ: SECRET-" in found, found
            assert "FOUND referee memory: SECRET-" in found, found
        elif mode == "ptrace":
            assert "FOUND ptrace attached to the referee" in found, found
            assert "FOUND ptrace attached to the opponent" in found, found
        elif mode == "files":
            assert "FOUND a record: ./rec.gin" in found, found
            assert "rec.gin: SECRET-" in found, found
        elif mode == "store":
            assert "opened the store ./out/tournament.sqlite for writing" in found, found
        elif mode == "escape":
            assert len(outcome.leftovers) >= 2, found
        elif mode == "memory":
            assert "FOUND allocated 512 MiB" in found, found
        elif mode == "fork":
            assert "FOUND forked 100 children" in found, found


# ------------------------------------------------------------------------------- the view


_PROBE = r"""
import json, os, socket, sys
facts = {"cwd": os.getcwd(), "home": os.environ.get("HOME"), "pids": sorted(
    int(p) for p in os.listdir("/proc") if p.isdigit())}
for place in ("/tmp", os.environ["HOME"], os.getcwd()):
    try:
        with open(os.path.join(place, "probe.txt"), "w") as f:
            f.write("x")
        facts["writable " + place] = True
    except OSError:
        facts["writable " + place] = False
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    facts["network"] = True
except OSError:
    facts["network"] = False
facts["secret"] = [v for v in os.environ.values() if "SECRET-" in v]
facts["listing"] = sorted(os.listdir("."))
try:
    facts["hidden"] = open("rec.gin").read()
except OSError as exc:
    facts["hidden"] = str(exc)
print(json.dumps(facts), flush=True)
sys.stdin.readline()
"""


@needs_sandbox
def test_what_an_engine_sees(tmp_path: Path) -> None:
    (tmp_path / "rec.gin").write_text("[Seed SECRET-0123456789]\n")
    (tmp_path / "bot.py").write_text(_PROBE)
    policy = Policy(hidden=(str(tmp_path / "rec.gin"),))
    process = EngineProcess.start(
        [sys.executable, "bot.py"], cwd=str(tmp_path), env={"X": "1"}, sandbox=policy
    )
    try:
        facts = json.loads(process.read_line(30))
    finally:
        process.close()
    assert process.sandboxed
    assert facts["cwd"] == str(tmp_path)
    assert facts["home"] == sandbox.HOME
    assert facts["writable /tmp"] and facts[f"writable {sandbox.HOME}"]
    assert not facts[f"writable {tmp_path}"]  # its own folder is read-only
    assert not facts["network"]
    assert facts["pids"] == [1, 2]  # bwrap's first process, and itself
    assert "SECRET" not in facts["hidden"]  # the referee's record is covered up
    assert "bot.py" in facts["listing"]
    assert not (tmp_path / "probe.txt").exists()


@needs_sandbox
def test_engines_of_every_kind_run_sandboxed(tmp_path: Path) -> None:
    """The built-ins (a Python module from the venv, JavaScript under node), a compiled
    binary and a script elsewhere on disk, with its own #! line."""
    script = tmp_path / "elsewhere" / "bot"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nfrom engines.random_engine import main\nmain()\n")
    script.chmod(0o755)
    commands = [["simple"], [str(script)]]
    if _has("node"):
        commands.append(["js-simple"])
    if _has("cc"):
        source = tmp_path / "bin.c"
        source.write_text(
            '#include <stdio.h>\n#include <string.h>\nint main(void){char l[4096];'
            'setvbuf(stdout,0,_IONBF,0);while(fgets(l,sizeof l,stdin)){'
            'if(!strncmp(l,"gin",3)&&l[3]==10)printf("id name C\\nginok protocol 1\\n");'
            'else if(!strncmp(l,"isready",7))printf("readyok\\n");'
            'else if(!strncmp(l,"quit",4))return 0;}return 0;}\n'
        )
        subprocess.run(["cc", "-O", "-o", str(tmp_path / "cbot"), str(source)], check=True)
        commands.append([str(tmp_path / "cbot")])
    for argv in commands:
        spec = EngineSpec.parse(" ".join(argv))
        process = EngineProcess.start(list(spec.argv), sandbox=spec.policy)
        try:
            process.send("gin")
            lines = [process.read_line(30) for _ in range(2)]
            while not lines[-1].startswith("ginok"):
                lines.append(process.read_line(30))
            process.send("isready")
            assert process.read_line(30) == "readyok", argv
        finally:
            process.close(quit_line="quit")
        assert process.sandboxed


def _has(program: str) -> bool:
    return shutil.which(program) is not None


@pytest.mark.slow
@needs_sandbox
def test_read_shows_an_engine_what_its_script_starts(tmp_path: Path) -> None:
    """A script that uses a folder the sandbox cannot know of (here it sources a file from
    a runtime folder elsewhere) cannot start sandboxed, and says why; ``--read`` makes
    that folder readable, and then it plays."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "env.sh").write_text(f"PY={sys.executable}\n")
    script = tmp_path / "bot" / "bot.sh"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\n. {runtime}/env.sh\nexec "$PY" -m engines.random_engine\n')
    script.chmod(0o755)
    base = [GINREF, "match", str(script), "random", "--games", "1", "--seed", "1", "-q"]
    base += ["--env", f"1:PYTHONPATH={ROOT}", "--startup-timeout", "30"]
    base += ["--read", sys.prefix, "--read", sys.base_prefix]  # the interpreter, wherever
    refused = subprocess.run(base, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "env.sh" in refused.stderr and "cannot be used" in refused.stderr
    played = subprocess.run(
        [*base, "--read", str(runtime)], capture_output=True, text=True, timeout=120
    )
    assert played.returncode == 0, played.stdout + played.stderr
    assert "Score of" in played.stdout


_TTY_PROBE = """\
import os
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("reached the terminal", flush=True)
except OSError as exc:
    print("no terminal:", exc.strerror, flush=True)
"""

_TTY_REFEREE = """\
import os
import sys
from referee.seat.process import EngineProcess
from referee.seat.sandbox import Policy, SandboxMode
os.close(os.open("/dev/tty", os.O_RDWR))  # the referee itself runs on a terminal
policy = Policy(mode=SandboxMode.REQUIRE) if sys.argv[2] == "sandboxed" else None
with EngineProcess.start([sys.executable, "-c", sys.argv[1]], sandbox=policy) as engine:
    print("engine says:", engine.read_line(30), flush=True)
"""


@pytest.mark.parametrize("mode", ["sandboxed", "bare"])
def test_an_engine_cannot_reach_the_referees_terminal(mode: str) -> None:
    """A referee run from a terminal: its engine cannot open that terminal, so it can neither
    read the user's keys nor push input into the shell. A sandboxed engine shares the referee's
    session, and the sandbox hides the terminal; a bare one has a session of its own."""
    if mode == "sandboxed" and not support().available and not CI:
        pytest.skip(f"the sandbox cannot run here: {support().reason}")
    child = pexpect.spawn(
        sys.executable, ["-c", _TTY_REFEREE, _TTY_PROBE, mode], encoding="utf-8", timeout=60
    )
    child.expect(r"engine says: (.*)\r\n")
    said = str(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert said.startswith("no terminal"), said


# ------------------------------------------------------------------------------- without it


def _unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = sandbox.Support(None, "bubblewrap (bwrap) is not installed", {})
    monkeypatch.setattr(sandbox, "support", lambda: missing)


@pytest.mark.parametrize(
    ("options", "code", "warnings"),
    [([], 0, 1), (["--sandbox", "require"], 1, 0), (["--no-sandbox"], 0, 0)],
    ids=["auto", "require", "off"],
)
def test_where_the_sandbox_cannot_run(
    monkeypatch: pytest.MonkeyPatch, options: list[str], code: int, warnings: int
) -> None:
    _unavailable(monkeypatch)
    result = CliRunner().invoke(
        cli, ["match", "random", "simple", "--games", "1", "--seed", "1", "-q", *options]
    )
    assert result.exit_code == code, result.output
    lines = result.output.splitlines()
    assert sum("engines are NOT isolated: bubblewrap (bwrap) is not installed" in line
               for line in lines) == warnings
    if code:
        assert "the sandbox is required, but bubblewrap (bwrap) is not installed" in result.output
    else:
        assert "Score of" in result.output


def test_no_sandbox_contradicting_require_is_refused() -> None:
    result = CliRunner().invoke(
        cli, ["match", "random", "simple", "--no-sandbox", "--sandbox", "require"]
    )
    assert result.exit_code == 2
    assert "--no-sandbox contradicts --sandbox require" in result.output


# ------------------------------------------------------------------------------- limits


def test_limits_are_read_and_named() -> None:
    assert parse_size("2G") == 2 * GiB
    assert parse_size("512MiB") == 512 * MiB
    assert parse_size("1000") == 1000
    with pytest.raises(ValueError):
        parse_size("lots")
    limits = Limits().updated({"memory": "1G", "processes": "16", "disk": 1 << 20})
    assert limits == Limits(memory=GiB, processes=16, disk=MiB)
    assert limits.describe("memory") == "memory limit 1 GiB"
    assert limits.describe("processes") == "process limit 16"
    with pytest.raises(ValueError, match="unknown limit 'cpu'"):
        Limits().updated({"cpu": "1"})


@pytest.mark.parametrize(
    "bad", ["memory=lots", "cpu=1", "3:memory=1G", "memory", "processes=0"]
)
def test_a_bad_limit_is_a_usage_error(bad: str) -> None:
    result = CliRunner().invoke(cli, ["match", "random", "simple", "--limit", bad])
    assert result.exit_code == 2, result.output
    assert "--limit" in result.output


def test_the_tournament_file_sets_the_sandbox(tmp_path: Path) -> None:
    from referee.scheduling.config import ConfigError
    from referee.scheduling.loader import load_config

    path = tmp_path / "t.toml"
    path.write_text(
        'sandbox = "require"\n[limits]\nmemory = "1G"\n'
        '[[engines]]\ncommand = "random"\nlimits = { processes = 8 }\nnetwork = true\n'
        '[[engines]]\ncommand = "simple"\n'
    )
    config = load_config(path)
    first, second = config.specs(hidden=["/x"])
    assert first.sandbox == Policy(
        SandboxMode.REQUIRE, Limits(memory=GiB, processes=8), True, ("/x",)
    )
    assert second.sandbox.limits == Limits(memory=GiB)
    assert not second.sandbox.network
    path.write_text(path.read_text().replace('"require"', '"sometimes"'))
    with pytest.raises(ConfigError, match="sandbox must be one of auto, require, off"):
        load_config(path)


@needs_sandbox
def test_without_cgroups_memory_is_limited_by_rlimit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no cgroup can be made (a normal user), RLIMIT_DATA limits the memory, and the
    engine's death is still put down to the limit; the process limit is then unenforced
    for root, and the warning says so."""
    found = support()
    bare = sandbox.Support(found.bwrap, "", {}, ("processes (no writable pids cgroup)",))
    monkeypatch.setattr(sandbox, "support", lambda: bare)
    assert sandbox.start_warnings(SandboxMode.AUTO) == [
        "warning: sandbox limit not enforced: processes (no writable pids cgroup)"
    ]
    script = "import sys; print('ready', flush=True); sys.stdin.readline(); b = b'1' * (512 << 20)"
    policy = Policy(limits=Limits(memory=256 * MiB))
    reason = killed_by_a_limit(script, policy)
    assert reason.startswith("memory limit 256 MiB: "), reason


@needs_sandbox
def test_the_disk_limit_is_the_size_of_tmp() -> None:
    script = (
        "import sys; print('ready', flush=True); sys.stdin.readline()\n"
        "open('/tmp/home/big', 'wb').write(b'1' * (2 << 20))"
    )
    policy = Policy(limits=Limits(disk=MiB))
    reason = killed_by_a_limit(script, policy)
    assert reason.startswith("disk limit 1 MiB: "), reason


@needs_sandbox
@pytest.mark.parametrize("network", [False, True])
def test_the_network_only_when_allowed(network: bool) -> None:
    script = "import socket; print(len(socket.if_nameindex()), flush=True)"
    here = len(__import__("socket").if_nameindex())
    process = EngineProcess.start(
        [sys.executable, "-c", script], sandbox=Policy(network=network, workdir=False)
    )
    try:
        seen = int(process.read_line(30))
    finally:
        process.close()
    assert seen == (here if network else 1)  # a namespace of its own has only "lo"


@pytest.mark.parametrize(("options", "code"), [([], 0), (["--sandbox", "require"], 1)])
def test_a_tournament_where_the_sandbox_cannot_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, options: list[str], code: int
) -> None:
    _unavailable(monkeypatch)
    (tmp_path / "t.toml").write_text(
        'games = 1\noutput = "out"\n[[engines]]\ncommand = "random"\n'
        '[[engines]]\ncommand = "simple"\n'
    )
    result = CliRunner().invoke(cli, ["tournament", str(tmp_path / "t.toml"), "-q", *options])
    assert result.exit_code == code, result.output
    warned = [line for line in result.output.splitlines() if "NOT isolated" in line]
    assert len(warned) == (0 if code else 1)
    assert ("1 of 1 game played" in result.output) == (code == 0)
