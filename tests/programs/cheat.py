"""A cheating engine: plays legal moves, and attacks its opponent or the referee (argv[1]).

Every attack reports what it achieved on stderr as ``FOUND <what>`` lines (nothing is
reported for an attack that got nowhere), so a test can tell a working attack from a
blocked one by outcome. argv[2] is a marker that every process it leaves behind carries
on its command line, so a test can find them.

Modes, each tried when the engine starts, unless said otherwise:

- ``kill``: SIGKILL the opponent's processes, found by a /proc scan (all the time).
- ``pipes``: read the opponent's stdin through /proc/<pid>/fd/0, then write ``quit`` to it
  (all the time).
- ``referee``: read the referee's command line, environment and memory (/proc/<pid>/mem).
- ``ptrace``: PTRACE_ATTACH the opponent and the referee (at every decision too).
- ``files``: look for the seed or the records in the files it can read (the record, the
  config, the debug log), below its working directory (at every decision too).
- ``store``: open the tournament's SQLite store, for reading and writing.
- ``escape``: leave two children behind, one in a new session, one in a new group.
- ``memory``: allocate 512 MiB and touch every page (at its first decision).
- ``fork``: fork 100 sleeping children.
"""

from __future__ import annotations

import ctypes
import os
import random
import re
import signal
import sqlite3
import sys
import threading
import time

from ginproto.sdk import Engine, GameView, Move, MoveKind

MODE = sys.argv[1]
MARKER = sys.argv[2] if len(sys.argv) > 2 else "cheat-marker"
SECRET = re.compile(rb"SECRET-[0-9a-f]{8,}")
VICTIM = re.compile(r"engines\.simple_engine|engines\.random_engine|simple\.js")


_reported: set[str] = set()


def report(what: str) -> None:
    if what not in _reported:
        _reported.add(what)
        sys.stderr.write(f"FOUND {what}\n")
        sys.stderr.flush()


def processes() -> list[tuple[int, int, list[str]]]:
    """Every other process we can see: pid, parent pid, command line."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.append((int(entry), ppid, argv))
    return out


def victims() -> list[int]:
    """The opponents: engines started by the same referee process as we were (only those,
    so that a run without the sandbox harms no other program on the machine)."""
    return [
        pid
        for pid, ppid, argv in processes()
        if ppid == os.getppid() and VICTIM.search(" ".join(argv))
    ]


def referees() -> list[int]:
    """The referee: ginref itself, or its worker process, among our ancestors."""
    table = {pid: (ppid, argv) for pid, ppid, argv in processes()}
    out = []
    pid = os.getppid()
    while pid in table and pid > 1:
        ppid, argv = table[pid]
        if any(os.path.basename(a) == "ginref" or "referee.cli" in a for a in argv[:3]):
            out.append(pid)
        pid = ppid
    return out


def attack_kill() -> None:
    """Kill the opponent again and again, in a thread of its own: the referee restarts an
    engine that died between two decisions, but not one that dies while it is asked."""

    def loop() -> None:
        while True:
            for pid in victims():
                try:
                    os.kill(pid, signal.SIGKILL)
                    report(f"killed {pid}")
                except OSError:
                    pass
            time.sleep(0.01)

    threading.Thread(target=loop, daemon=True).start()


def attack_pipes() -> None:
    """Spy on the opponent's input once, then keep writing ``quit`` into it, in a thread of
    its own (as for ``kill``)."""
    spied: set[int] = set()

    def loop() -> None:
        while True:
            for pid in victims():
                if pid not in spied:
                    spied.add(pid)
                    spy(pid)
                try:
                    fd = os.open(f"/proc/{pid}/fd/0", os.O_WRONLY | os.O_NONBLOCK)
                    os.write(fd, b"quit\n")
                    os.close(fd)
                    report(f"wrote quit to {pid}'s input")
                except OSError:
                    pass
            time.sleep(0.01)

    threading.Thread(target=loop, daemon=True).start()


def spy(pid: int) -> None:
    try:
        fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        data = os.read(fd, 4096)
        report(f"read {pid}'s input: {data[:60]!r}" if data else f"opened {pid}'s input")
    except BlockingIOError:
        report(f"opened {pid}'s input for reading")
    except OSError:
        pass
    finally:
        os.close(fd)


def secrets_in(data: bytes, where: str) -> None:
    for found in sorted(set(SECRET.findall(data))):
        report(f"{where}: {found.decode()}")


def attack_referee() -> None:
    for pid, _ppid, argv in processes():  # and any command line in sight
        secrets_in("\0".join(argv).encode(), f"the command line of {pid}")
    for pid in referees():
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as f:
                    data = f.read()
                report(f"read the referee's {part} ({len(data)} bytes)")
                secrets_in(data, f"referee {part}")
            except OSError:
                pass
        try:
            regions = []
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    span, perms = line.split()[:2]
                    if perms.startswith("r") and ("[heap]" in line or len(line.split()) < 6):
                        lo, hi = (int(x, 16) for x in span.split("-"))
                        regions.append((lo, hi))
            seen = 0
            with open(f"/proc/{pid}/mem", "rb") as mem:
                for lo, hi in regions:
                    if seen > 256 << 20:
                        break
                    try:
                        mem.seek(lo)
                        data = mem.read(min(hi - lo, 64 << 20))
                    except OSError:
                        continue
                    seen += len(data)
                    secrets_in(data, "referee memory")
            if seen:
                report(f"read {seen} bytes of the referee's memory")
        except OSError:
            pass


def attack_ptrace() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    for who, pids in (("opponent", victims()), ("referee", referees())):
        for pid in pids:
            if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
                report(f"ptrace attached to the {who} {pid}")
                os.waitpid(pid, getattr(os, "__WALL", 0x40000000))
                libc.ptrace(17, pid, None, None)  # PTRACE_DETACH


def attack_files() -> None:
    count = 0
    for root, _dirs, files in os.walk("."):
        for name in files:
            count += 1
            if count > 5000:
                return
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as f:
                    data = f.read(1 << 20)
            except OSError:
                continue
            if b"[Seed " in data:
                report(f"a record: {path}")
            secrets_in(data, path)


def attack_store() -> None:
    for root, _dirs, files in os.walk("."):
        for name in files:
            if name.endswith(".sqlite"):
                path = os.path.join(root, name)
                try:
                    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
                    tables = db.execute("select count(*) from sqlite_master").fetchone()[0]
                    db.close()
                    report(f"read the store {path} ({tables} tables)")
                    with open(path, "r+b"):
                        report(f"opened the store {path} for writing")
                except (OSError, sqlite3.Error):
                    pass


def leave_child(how: str) -> None:
    pid = os.fork()
    if pid == 0:
        try:
            if how == "session":
                os.setsid()
            else:
                os.setpgid(0, 0)
            if os.fork() == 0:  # and a double fork, for good measure
                os.execv(
                    sys.executable,
                    [sys.executable, "-c", "import time; time.sleep(120)", MARKER, how],
                )
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    # Whether it outlives the game, only a look at the processes afterwards can tell.
    sys.stderr.write(f"left a child behind ({how})\n")


def attack_escape() -> None:
    leave_child("session")
    leave_child("group")


def attack_memory() -> None:
    block = b"\1" * (512 << 20)
    report(f"allocated {len(block) >> 20} MiB")
    del block


def attack_fork() -> None:
    made = 0
    for _ in range(100):
        try:
            pid = os.fork()
        except OSError as exc:
            sys.stderr.write(f"fork failed after {made} children: {exc}\n")
            break
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        made += 1
    sys.stderr.write(f"forked {made} children\n")
    if made == 100:
        report("forked 100 children")


ATTACKS = {
    "kill": attack_kill,
    "pipes": attack_pipes,
    "referee": attack_referee,
    "ptrace": attack_ptrace,
    "files": attack_files,
    "store": attack_store,
    "escape": attack_escape,
    "memory": attack_memory,
    "fork": attack_fork,
}
EVERY_MOVE = {"files", "ptrace"}  # the opponent and the record come later
AT_FIRST_MOVE = {"memory", *EVERY_MOVE}


class Cheat(Engine):
    name = f"cheat-{MODE}"
    author = "ginproto tests"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(MODE)
        self.attacked = False

    def _move(self, view: GameView) -> Move:
        if MODE in EVERY_MOVE or (MODE in AT_FIRST_MOVE and not self.attacked):
            self.attacked = True
            ATTACKS[MODE]()
        legal = view.hand.legal_moves()
        # A knock whenever it can: the games end soon (random play seldom knocks), and the
        # attacks, not the play, are what the tests look at. Not for the attacks made at every
        # move: they look for what comes later (the opponent, the records of earlier games),
        # and need the long games of random play to find it.
        knocks = [m for m in legal if m.kind in (MoveKind.KNOCK, MoveKind.BIG_GIN)]
        if MODE in EVERY_MOVE:
            knocks = []
        return self.rng.choice(knocks or legal)

    def offer(self, view: GameView) -> Move:
        return self._move(view)

    def draw(self, view: GameView) -> Move:
        return self._move(view)

    def discard(self, view: GameView) -> Move:
        return self._move(view)


if __name__ == "__main__":
    if MODE not in AT_FIRST_MOVE:
        ATTACKS[MODE]()
    Cheat().run()
