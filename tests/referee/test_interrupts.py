"""Ctrl-C means one thing in every ``ginref`` command: the standings (or, with ``--json``, the
JSON) of the games finished, a record that holds only whole games, exit 130, no traceback, and
no process left behind.

Each test runs a real ``ginref`` process and sends it SIGINT at one moment: while it is still
loading, while an engine takes its time over the handshake, in the middle of a match or a
tournament. Each engine carries a marker in its environment, so that a test can tell whether
any is left; whatever a test started is killed when it ends, pass or fail.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
import uuid
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from click.testing import CliRunner

from ginproto.record import read_games
from referee.cli import cli
from referee.results.store import RECORDS_NAME, Store
from referee.scheduling.match import deferred_interrupts

ROOT = Path(__file__).resolve().parents[2]
# What the ginref script runs (pyproject.toml), whether or not the project is installed anew.
GINREF = [sys.executable, "-c", "import sys; from referee.__main__ import main; sys.exit(main())"]
MARK = "GINREF_TEST_RUN"
FAST = ["--rule", "target=1", "--tc", "inf", "--no-sandbox"]  # a game is one hand

SLOW_HANDSHAKE = "import time\ntime.sleep(60)  # never answers gin\n"

Start = Callable[..., subprocess.Popen[str]]


def _child_setup() -> None:
    """In the started process, before ginref runs: Ctrl-C as a terminal gives it (a test run
    in the background inherits SIGINT ignored), and death with the test run if it dies."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _pids() -> Iterator[int]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            yield int(entry.name)


def marked(marker: str) -> list[int]:
    """The live processes whose environment carries ``marker``: the test's engines."""
    needle = f"{MARK}={marker}".encode()
    found = []
    for pid in _pids():
        with suppress(OSError):
            if needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                stat = _stat(pid)
                if stat is not None and stat[0] != "Z":
                    found.append(pid)
    return found


def in_group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid``: the referee and its game workers."""
    out = []
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[0] != "Z" and int(stat[2]) == pgid:
            out.append(pid)
    return out


def cpu_seconds(pid: int) -> float:
    stat = _stat(pid)
    if stat is None:
        return 0.0
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def started(pid: int) -> bool:
    """For a command that reads its standard input: a tenth of a second of CPU time, or, on a
    machine quick enough that it has loaded sooner and waits for that input, CPU time spent
    and standing still."""
    spent = cpu_seconds(pid)
    if spent >= 0.1:
        return True
    time.sleep(0.3)
    return spent > 0 and cpu_seconds(pid) == spent


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


@pytest.fixture
def marker() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def start(tmp_path: Path, marker: str) -> Iterator[Start]:
    """Start ``ginref ARGS`` in its own process group, in ``tmp_path``; at the end, kill it,
    its group and every engine carrying the test's marker."""
    started: list[subprocess.Popen[str]] = []

    def run(*args: str, stdin: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(
            [*GINREF, *args], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, cwd=tmp_path, env=env, start_new_session=True, preexec_fn=_child_setup,
        )
        started.append(process)
        return process

    try:
        yield run
    finally:
        for process in started:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.kill()
            process.communicate()
        for pid in marked(marker):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def interrupt(process: subprocess.Popen[str], times: int = 1) -> tuple[str, str]:
    """Ctrl-C (``times`` of them), then the output once the process has ended."""
    for n in range(times):
        if n:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
    return process.communicate(timeout=60)


def assert_clean_exit(
    process: subprocess.Popen[str], out: str, err: str, marker: str
) -> None:
    """Exit 130, no traceback nor click's abort, and nothing left running: no engine of the
    test, no worker of the referee's process group (a process ends a moment after it is
    told to, so their absence is waited for, briefly). A second Ctrl-C that comes once the
    command has written everything and is exiting ends it by the signal's own action, as
    ``ginref`` lets it then (``referee.cli.main``): a shell says 130 for that too."""
    assert process.returncode in (130, -signal.SIGINT), (out, err)
    assert "Traceback" not in err and "Aborted" not in err, err
    wait_for(lambda: not marked(marker), "the engines to end", timeout=5)
    wait_for(lambda: not in_group(process.pid), "the referee's workers to end", timeout=5)


def record_games(path: Path) -> int:
    """How many whole games ``path`` holds, after ``ginref replay --verify`` accepts it."""
    result = CliRunner().invoke(cli, ["replay", "--verify", str(path)])
    assert result.exit_code == 0, result.output
    return len(list(read_games(path)))


def finished_games(path: Path) -> int:
    if not path.exists():
        return 0
    with suppress(OSError):
        return sum(1 for g in read_games(path) if not g.errors)
    return 0


def tournament_config(folder: Path, marker: str, **keys: object) -> Path:
    top = {"seed": 5, "games": 5000, "tc": "inf", "output": "out", "sandbox": "off", **keys}
    lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()]
    lines += ["[rules]", "target = 1"]
    for command in ("random", "simple"):
        lines += ["[[engines]]", f'command = "{command}"', f'env = {{ {MARK} = "{marker}" }}']
    path = folder / "cup.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_ctrl_c_while_a_game_is_recorded_waits_for_the_record_to_be_whole() -> None:
    # Python's own Ctrl-C handler, as ginref has it: the process running the test may have
    # another (one started in the background inherits SIGINT ignored, and an earlier test
    # may have set its own); what it had is put back afterwards.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        steps: list[str] = []
        with pytest.raises(KeyboardInterrupt), deferred_interrupts():
            signal.raise_signal(signal.SIGINT)
            steps += ["recorded", "counted"]
        assert steps == ["recorded", "counted"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_every_held_interrupt_is_delivered_in_turn() -> None:
    """As a tournament needs: the first Ctrl-C asks to stop, the second to stop at once."""
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with deferred_interrupts():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            assert seen == []
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.SIGINT, signal.SIGINT]


def test_the_ginref_script_is_the_entry_point_the_tests_run() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["ginref"] == "referee.__main__:main"


@pytest.mark.parametrize("command", ["match", "tournament", "check", "replay", "stats"])
def test_ctrl_c_while_ginref_is_still_loading(
    tmp_path: Path, start: Start, marker: str, command: str
) -> None:
    """Sent once the interpreter itself has started (a tenth of a second of CPU time), while
    the command line is still being imported on a quiet machine: exit 130, one line. replay
    and stats may load in less than that; they are then interrupted waiting for their input."""
    args = {
        "match": ["match", "random", "random", "--games", "100000", "--env", f"{MARK}={marker}",
                  *FAST],
        "tournament": ["tournament", str(tournament_config(tmp_path, marker))],
        "check": ["check", "random", "--no-sandbox", "--env", f"{MARK}={marker}"],
        "replay": ["replay", "--verify", "-"],  # reading a standard input that never ends
        "stats": ["stats", "-"],
    }[command]
    process = start(*args, stdin=subprocess.PIPE)
    if command in ("replay", "stats"):  # they wait for the standard input once loaded
        wait_for(lambda: started(process.pid), "the interpreter to start")
    else:
        wait_for(lambda: cpu_seconds(process.pid) >= 0.1, "the interpreter to start")
    out, err = interrupt(process)
    assert_clean_exit(process, out, err, marker)
    assert "Interrupted" in err or "interrupted" in out, (out, err)


@pytest.mark.parametrize("command", ["match", "tournament", "check"])
def test_ctrl_c_while_an_engine_is_slow_to_answer_its_handshake(
    tmp_path: Path, start: Start, marker: str, command: str
) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW_HANDSHAKE)
    engine = f"{sys.executable} {slow}"
    record = tmp_path / "games.gin"
    if command == "tournament":
        config = tournament_config(tmp_path, marker)
        text = config.read_text().replace('"random"', json.dumps(engine), 1)
        config.write_text(text)
        process = start("tournament", str(config))
    elif command == "match":
        process = start("match", engine, "random", "--games", "3", "--record", str(record),
                        "--env", f"{MARK}={marker}", *FAST)
    else:
        process = start("check", engine, "--no-sandbox", "--env", f"{MARK}={marker}")
    wait_for(lambda: bool(marked(marker)), "the engine to start")
    out, err = interrupt(process)
    assert_clean_exit(process, out, err, marker)
    if command == "match":
        assert "Interrupted after 0 of 3 games" in err
        assert out == ""
        assert not record.exists()  # no game finished, so no record (not even an empty one)
    elif command == "tournament":
        assert "Interrupted" in err
        assert not (tmp_path / "out" / RECORDS_NAME).exists()
    else:
        assert out.splitlines()[-1] == "interrupted after 0 of 20 checks"


def test_ctrl_c_mid_match_prints_the_json_of_the_finished_games(
    tmp_path: Path, start: Start, marker: str
) -> None:
    """Two game workers (processes of the referee's own), so that none may outlive it."""
    record = tmp_path / "games.gin"
    process = start(
        # So many games that none of the test's waits, however slow, sees the match end.
        "match", "simple", "random", "--games", "100000", "--concurrency", "2", "--seed", "7",
        "--record", str(record), "--json", "-q", "--env", f"{MARK}={marker}", *FAST,
    )
    wait_for(lambda: finished_games(record) >= 2, "two finished games")
    out, err = interrupt(process)
    assert_clean_exit(process, out, err, marker)
    played = record_games(record)
    figures = json.loads(out)  # the whole of standard output is the JSON
    assert figures["games"] == played
    assert figures["stopped_early"] is True
    assert [e["games"] for e in figures["engines"]] == [played, played]
    assert f"Interrupted after {played} of 100000 games" in err


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_in_a_tournament_prints_the_standings_and_exits_130(
    tmp_path: Path, start: Start, marker: str, presses: int
) -> None:
    """The first Ctrl-C lets the game in progress finish; a second drops it. Either way: the
    standings of the games stored, a records file of whole games, exit 130."""
    config = tournament_config(tmp_path, marker)
    out_dir = tmp_path / "out"
    process = start("tournament", str(config), "-q")
    wait_for(lambda: finished_games(out_dir / RECORDS_NAME) >= 1, "a finished game")
    out, err = interrupt(process, presses)
    assert_clean_exit(process, out, err, marker)
    with Store.open(out_dir) as store:
        done, total = store.counts()
    assert 1 <= done < total
    assert record_games(out_dir / RECORDS_NAME) == done
    assert f"{done} of {total} games played" in out, (process.returncode, err)
    assert out.count("Rank") == 1  # the standings
    assert f"Interrupted after {done} of {total} games" in err
    assert f"--resume {out_dir}" in err


def test_an_interrupt_wrapped_while_a_class_is_made_is_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python 3.11 turns a Ctrl-C during a dataclass's ``__set_name__`` (a module loading) into
    a ``RuntimeError`` caused by it: ``ginref`` ends as for any interrupt, exit 130 and one
    line, and any other ``RuntimeError`` still propagates."""
    import referee.__main__ as entry
    import referee.cli

    def wrapped() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__") from exc

    monkeypatch.setattr(referee.cli, "main", wrapped)
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "\nInterrupted.\n"

    def broken() -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(referee.cli, "main", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        entry.main()
