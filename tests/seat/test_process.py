"""The process layer against hostile engines: every fault is an EngineError, nothing survives.

The engines are small Python scripts in tests/programs/. Every test checks, through /proc, that no
process of the engine's group is left running once it is closed.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.seat.process import (
    EngineBrokenPipe,
    EngineClosed,
    EngineError,
    EngineExited,
    EngineLineTooLong,
    EngineProcess,
    EngineStartError,
    EngineTimeout,
)

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")

ENGINES = Path(__file__).parents[1] / "programs"

Spawn = Callable[..., EngineProcess]


def engine_argv(script: str, *args: str) -> list[str]:
    return [sys.executable, str(ENGINES / f"{script}.py"), *args]


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a pid from /proc, or None if there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields[0], int(fields[2])


def running(pid: int) -> bool:
    """True if pid is a live process (zombies, waiting for someone to reap them, are dead)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    """Live processes in a process group, from the process table."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == pgid and stat[0] not in ("Z", "X"):
                members.append(int(entry))
    return members


def assert_no_survivors(proc: EngineProcess, *extra_pids: int) -> None:
    """Nothing of the engine's group (nor the given pids) runs; SIGKILL may need a moment."""
    deadline = time.monotonic() + 2.0
    while True:
        left = group_members(proc.pid) + [pid for pid in extra_pids if running(pid)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert left == [], f"processes left behind: {left}"
    assert not proc.alive


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """Start test engines by script name; close them all and check for survivors afterwards."""
    started: list[EngineProcess] = []

    def _spawn(script: str, *args: str, **kwargs: Any) -> EngineProcess:
        kwargs.setdefault("name", script)
        proc = EngineProcess.start(engine_argv(script, *args), **kwargs)
        started.append(proc)
        return proc

    yield _spawn
    for proc in started:
        proc.close(grace=0)
        assert_no_survivors(proc)


# --------------------------------------------------------------------------- good engines


def test_echo_round_trip_logs_every_line(spawn: Spawn, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[str, str]] = []
    caplog.set_level(logging.DEBUG, logger="referee.seat.process")
    eng = spawn("echo", name="alice", on_line=lambda d, line: seen.append((d, line)))
    assert eng.alive and eng.returncode is None and eng.pid > 0
    eng.send("hello world")
    assert eng.read_line(5) == "hello world"
    eng.send("stderr warming up")
    eng.send("ünïcode")
    assert eng.read_line(5) == "ünïcode"
    eng.close(grace=2, quit_line="quit")
    assert eng.returncode == 0
    protocol = [entry for entry in seen if entry[0] != "stderr"]
    assert protocol == [
        ("to", "hello world"),
        ("from", "hello world"),
        ("to", "stderr warming up"),
        ("to", "ünïcode"),
        ("from", "ünïcode"),
        ("to", "quit"),
    ]
    messages = [r.getMessage() for r in caplog.records]
    assert "alice to: hello world" in messages
    assert "alice from: hello world" in messages
    assert_no_survivors(eng)


def test_stderr_lines_reach_the_hook_when_there_is_no_file(spawn: Spawn) -> None:
    seen: list[tuple[str, str]] = []
    eng = spawn("echo", on_line=lambda d, line: seen.append((d, line)))
    eng.send("stderr something odd")
    deadline = time.monotonic() + 5
    while ("stderr", "something odd") not in seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ("stderr", "something odd") in seen
    assert "something odd" in eng.stderr_tail
    eng.close(grace=1, quit_line="quit")
    assert_no_survivors(eng)


def test_stderr_goes_to_its_file(spawn: Spawn, tmp_path: Path) -> None:
    log = tmp_path / "alice.stderr"
    eng = spawn("echo", stderr_path=str(log))
    eng.send("stderr to the file")
    eng.close(grace=1, quit_line="quit")
    assert log.read_text() == "to the file\n"
    assert_no_survivors(eng)


def test_environment_is_minimal_and_cwd_is_home(spawn: Spawn, tmp_path: Path) -> None:
    os.environ["GINPROTO_SECRET_DEAL"] = "Th 9s 2c"  # must not reach the engine
    try:
        eng = spawn("echo", cwd=str(tmp_path), env={"ENGINE_OPTION": "1"})
        eng.send("env")
        assert eng.read_line(5) == "ENGINE_OPTION,HOME,LANG,PATH"
        eng.send("cwd")
        assert eng.read_line(5) == str(tmp_path)
    finally:
        del os.environ["GINPROTO_SECRET_DEAL"]
    eng.close(grace=1, quit_line="quit")
    assert_no_survivors(eng)


def test_invalid_utf8_is_replaced_and_crlf_stripped(spawn: Spawn) -> None:
    eng = spawn("echo")
    eng.send("badbytes")
    assert eng.read_line(5) == "ok\ufffd\ufffdok"
    eng.close()
    assert_no_survivors(eng)


def test_context_manager_and_idempotent_close() -> None:
    with EngineProcess.start(engine_argv("echo"), name="ctx") as eng:
        eng.send("hi")
        assert eng.read_line(5) == "hi"
    assert eng.closed and not eng.alive
    eng.close()  # again: nothing happens
    with pytest.raises(EngineClosed):
        eng.read_line(0.1)
    with pytest.raises(EngineClosed):
        eng.send("hi")
    assert_no_survivors(eng)


def test_send_rejects_line_breaks(spawn: Spawn) -> None:
    eng = spawn("echo")
    with pytest.raises(ValueError):
        eng.send("two\nlines")
    eng.close()
    assert_no_survivors(eng)


def test_start_failures(tmp_path: Path) -> None:
    with pytest.raises(EngineStartError) as info:
        EngineProcess.start([str(tmp_path / "no-such-engine")], name="ghost")
    assert info.value.reason == "start-failed" and "ghost" in str(info.value)
    with pytest.raises(EngineStartError):
        EngineProcess.start(engine_argv("echo"), cwd=str(tmp_path / "missing"))


# --------------------------------------------------------------------------- faults


def test_crash_at_start_is_exited_with_code_and_stderr(spawn: Spawn) -> None:
    eng = spawn("crash")
    with pytest.raises(EngineExited) as info:
        eng.read_line(5)
    err = info.value
    assert err.reason == "exited" and err.returncode == 3 and err.name == "crash"
    assert "exited with code 3" in str(err)
    assert "cannot load weights" in str(err)
    with pytest.raises(EngineExited):  # end of file stays end of file
        eng.read_line(0)
    with pytest.raises(EngineBrokenPipe) as pipe:
        eng.send("anyone there?")
    assert pipe.value.reason == "broken-pipe"
    eng.close()
    assert eng.returncode == 3
    assert_no_survivors(eng)


def test_killed_by_signal_names_the_signal(spawn: Spawn) -> None:
    eng = spawn("echo")
    eng.send("kill")
    with pytest.raises(EngineExited) as info:
        eng.read_line(5)
    assert info.value.returncode == -signal.SIGKILL
    assert "SIGKILL" in str(info.value)
    eng.close()
    assert_no_survivors(eng)


def test_hang_times_out_on_read_and_on_send(spawn: Spawn) -> None:
    eng = spawn("hang")
    start = time.monotonic()
    with pytest.raises(EngineTimeout) as info:
        eng.read_line(0.2)
    assert 0.2 <= time.monotonic() - start < 1.0
    assert info.value.reason == "timeout"
    # hang.py never reads stdin: once the pipe is full, send gives up after its timeout.
    start = time.monotonic()
    with pytest.raises(EngineTimeout):
        for _ in range(100):
            eng.send("x" * 100_000, timeout=0.2)
    assert time.monotonic() - start < 2.0
    eng.close(grace=0.1)
    assert_no_survivors(eng)


def test_ten_megabyte_line_is_rejected_with_bounded_memory(spawn: Spawn) -> None:
    """The over-long line is reported, its bytes discarded, and the engine stays usable."""
    tracemalloc.start()
    try:
        eng = spawn("longline")
        with pytest.raises(EngineLineTooLong) as info:
            eng.read_line(10)
        assert info.value.reason == "line-too-long"
        assert eng.read_line(10) == "after"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"reader buffered {peak} bytes for a 10 MB line"
    eng.send("still here")
    assert eng.read_line(5) == "still here"
    eng.close()
    assert_no_survivors(eng)


@pytest.mark.parametrize("to_file", [False, True], ids=["discarded", "file"])
def test_100mb_on_stderr_does_not_block(spawn: Spawn, tmp_path: Path, to_file: bool) -> None:
    log = tmp_path / "chatty.stderr"
    kwargs: dict[str, Any] = {"stderr_path": str(log), "stderr_limit": 1 << 20} if to_file else {}
    start = time.monotonic()
    eng = spawn("chatty", **kwargs)
    assert eng.read_line(10) == "ready"
    eng.send("move")
    assert eng.read_line(10) == "move"
    assert time.monotonic() - start < 10
    eng.close()
    assert "noise" in eng.stderr_tail
    if to_file:
        data = log.read_bytes()
        assert len(data) < (1 << 20) + 100
        assert data.endswith(b"[referee: stderr truncated here]\n")
    assert_no_survivors(eng)


def test_orphan_holding_the_pipes_is_killed(spawn: Spawn) -> None:
    """The engine exits, its child ignores SIGTERM and keeps stdout open: close() kills it."""
    eng = spawn("orphan")
    child = int(eng.read_line(5))
    with pytest.raises(EngineExited) as info:  # the parent is gone, the pipe is not closed
        eng.read_line(1.0)
    assert info.value.returncode == 0
    assert running(child) and child in group_members(eng.pid)
    start = time.monotonic()
    eng.close(grace=0.2)
    assert time.monotonic() - start < 2.0
    assert_no_survivors(eng, child)


def test_escaped_grandchild_does_not_hang_close(spawn: Spawn) -> None:
    """A child that left the process group cannot be killed by the group, but close() returns."""
    eng = spawn("orphan", "--escape")
    child = int(eng.read_line(5))
    try:
        start = time.monotonic()
        eng.close(grace=0.1)
        assert time.monotonic() - start < 3.0
        assert_no_survivors(eng)
    finally:
        os.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 2
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not running(child)


def test_ignored_quit_is_killed_after_grace(spawn: Spawn) -> None:
    eng = spawn("stubborn")
    assert eng.read_line(5) == "ready"
    eng.send("ping")
    assert eng.read_line(5) == "pong"
    start = time.monotonic()
    eng.close(grace=0.3, quit_line="quit")
    assert 0.3 <= time.monotonic() - start < 2.0
    assert eng.returncode == -signal.SIGKILL
    assert_no_survivors(eng)


def test_polite_quit_exits_within_grace(spawn: Spawn) -> None:
    eng = spawn("echo")
    start = time.monotonic()
    eng.close(grace=5, quit_line="quit")
    assert time.monotonic() - start < 2.0
    assert eng.returncode == 0
    assert_no_survivors(eng)


def test_all_faults_share_the_base_class() -> None:
    for cls in (EngineTimeout, EngineExited, EngineLineTooLong, EngineBrokenPipe, EngineClosed):
        assert issubclass(cls, EngineError) and issubclass(cls, RuntimeError)
    reasons = {c.reason for c in (EngineTimeout, EngineExited, EngineLineTooLong, EngineBrokenPipe)}
    assert reasons == {"timeout", "exited", "line-too-long", "broken-pipe"}
