"""Each isolation flag of the sandbox, shown by an attack that only it stops: an engine
(tests/programs/breakout.py) reaches its opponent's System V and POSIX IPC (``--unshare-ipc``),
outlives a referee killed with SIGKILL (``--die-with-parent``), kills its opponent
(``--unshare-pid``), uses a capability to make its read-only folder writable or to uncover a
hidden file (``--cap-drop ALL``), talks to a colluding program on the machine through an
abstract Unix socket (``--unshare-net``), and lives in namespaces of its own (``--unshare-uts``
and the others: once the capabilities are dropped no attack tells the UTS namespace apart, so
the test compares the namespaces themselves).

With one flag removed from ``referee/seat/sandbox.py`` its attack succeeds and its test fails.
The network and ``/dev/tty`` have more attacks in tests/seat/test_sandbox.py; the covers of the
referee's files are tested in tests/seat/test_sandbox_hidden.py.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.seat.process import EngineProcess
from referee.seat.sandbox import Policy, SandboxMode
from tests.seat.test_sandbox import _leftovers, _sandbox_in_ci, needs_sandbox

__all__ = ["_sandbox_in_ci"]  # the fixture that refuses a skip under CI=true

ROOT = Path(__file__).resolve().parents[2]
BREAKOUT = ROOT / "tests" / "programs" / "breakout.py"
REQUIRE = Policy(mode=SandboxMode.REQUIRE)
WAIT = 30.0  # seconds: a bound against hangs, never a measurement

pytestmark = needs_sandbox


def _kill_marked(marker: str) -> None:
    for pid in _leftovers(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def attacker(
    mode: str, *args: str, cwd: Path | None = None, policy: Policy = REQUIRE
) -> Iterator[tuple[EngineProcess, dict[str, object]]]:
    """The breakout engine in ``mode``, sandboxed: the process and what it reported. Every
    process it made is killed afterwards, whatever the test found."""
    marker = f"breakout-{uuid.uuid4().hex}"
    argv = [sys.executable, str(BREAKOUT), mode, marker, *args]
    process = EngineProcess.start(argv, cwd=str(cwd) if cwd else None, sandbox=policy)
    try:
        assert process.sandboxed
        yield process, json.loads(process.read_line(WAIT))
    finally:
        process.close()
        _kill_marked(marker)


# ------------------------------------------------------------------------ --unshare-ipc


libc = ctypes.CDLL(None, use_errno=True)
libc.mq_unlink.argtypes = [ctypes.c_char_p]


def _remove_ipc(key: int, name: str) -> None:
    """What the attack made, if it reached the machine's IPC namespace."""
    ipc_rmid = 0
    shm = libc.shmget(key, 0, 0)
    if shm >= 0:
        libc.shmctl(shm, ipc_rmid, None)
    queue = libc.msgget(key, 0)
    if queue >= 0:
        libc.msgctl(queue, ipc_rmid, None)
    libc.mq_unlink(f"/{name}".encode())


def test_an_engine_cannot_reach_its_opponents_shared_memory_or_queues() -> None:
    """The opponent keeps its secret in a System V shared memory segment and message queue
    and a POSIX message queue (as an engine with helper processes may); the cheater, started
    after it, looks them up by their key and name."""
    key = int.from_bytes(os.urandom(3), "big") + 1
    name = f"ginproto-{uuid.uuid4().hex[:12]}"
    secret = f"SECRET-{uuid.uuid4().hex}"
    try:
        with attacker("ipc-host", str(key), secret, name) as (_, made):
            assert "shm" in made and "msg" in made and made["mqueue"] is True, made
            with attacker("ipc-guest", str(key), name) as (_, seen):
                assert seen["FOUND"] == [], seen
    finally:
        _remove_ipc(key, name)


# ------------------------------------------------------------------------ --die-with-parent

_REFEREE = """\
import sys, time
from referee.seat.process import EngineProcess
from referee.seat.sandbox import Policy, SandboxMode
engine = EngineProcess.start(sys.argv[1:], sandbox=Policy(mode=SandboxMode.REQUIRE))
print(engine.read_line(30), flush=True)
time.sleep(120)
"""


def test_an_engine_dies_with_a_killed_referee() -> None:
    """A referee killed by SIGKILL (which it cannot catch: nothing of its own closes the
    engine) while the engine ignores its input's end and every signal it may: nothing of
    the engine is left running."""
    marker = f"breakout-{uuid.uuid4().hex}"
    referee = subprocess.Popen(
        [sys.executable, "-c", _REFEREE, sys.executable, str(BREAKOUT), "survive", marker],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert referee.stdout is not None
        said = json.loads(referee.stdout.readline())
        assert "pid" in said
        assert _leftovers(marker), "the engine is not running"
        referee.kill()
        referee.wait(WAIT)
        deadline = time.monotonic() + WAIT
        while _leftovers(marker) and time.monotonic() < deadline:
            time.sleep(0.05)  # what the kernel tears down after the referee died
        assert _leftovers(marker) == [], "the engine outlived the referee"
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait(WAIT)
        _kill_marked(marker)


# ------------------------------------------------------------------------ --cap-drop ALL


def test_an_engine_holds_no_capability_to_undo_its_sandbox(tmp_path: Path) -> None:
    """Within its namespaces an engine could hold every capability: with CAP_SYS_ADMIN it
    would remount its read-only folder writable, unmount the cover of the referee's record,
    or set the hostname. It can do none of it."""
    record = tmp_path / "rec.gin"
    record.write_text(f"[Seed SECRET-{uuid.uuid4().hex}]\n")
    policy = Policy(mode=SandboxMode.REQUIRE, hidden=(str(record),))
    before = socket.gethostname()
    with attacker("caps", str(record), str(tmp_path), cwd=tmp_path, policy=policy) as (_, seen):
        assert seen["FOUND"] == [], seen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.gin"]
    assert socket.gethostname() == before


# ------------------------------------------------------------------------ --unshare-net


def test_an_engine_cannot_reach_a_colluding_program_on_the_machine() -> None:
    """A program on the machine listens on an abstract Unix socket (no file: only a network
    namespace of its own keeps an engine from it), to pass the engine what it should play."""
    name = f"ginproto-colluder-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind("\0" + name)
        listener.listen(1)
        listener.setblocking(False)
        with attacker("socket", name) as (_, seen):
            assert seen["FOUND"] == [], seen
            with pytest.raises(BlockingIOError):
                listener.accept()[0].close()


# ------------------------------------------------------------------------ --unshare-pid


def test_an_engine_cannot_kill_its_opponent() -> None:
    """The opponent runs (in a sandbox of its own, as every engine does); the cheater kills
    every process it can find by the opponent's command line."""
    victim = f"breakout-victim-{uuid.uuid4().hex}"
    argv = [sys.executable, str(BREAKOUT), "survive", victim]
    opponent = EngineProcess.start(argv, sandbox=REQUIRE)
    try:
        opponent.read_line(WAIT)
        assert _leftovers(victim)
        with attacker("kill", victim[::-1]) as (_, seen):
            assert seen["FOUND"] == [], seen
        assert _leftovers(victim), "the opponent was killed"
    finally:
        opponent.close()
        _kill_marked(victim)


# ------------------------------------------------------------------------ the namespaces


@pytest.mark.parametrize("namespace", ["ipc", "net", "pid", "user", "uts"])
def test_an_engine_lives_in_namespaces_of_its_own(namespace: str) -> None:
    """Its own UTS namespace (``--unshare-uts``), among others: a hostname it sets (were it
    allowed to) is its own. With the capabilities dropped no attack tells the UTS namespace
    apart, so this compares the namespace itself with the referee's."""
    with attacker("namespaces") as (_, seen):
        assert seen[namespace] != os.readlink(f"/proc/self/ns/{namespace}"), seen
