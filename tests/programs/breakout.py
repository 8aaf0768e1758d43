"""An engine program that tries to break out of its sandbox by one way at a time (argv[1]),
for the tests of each of the sandbox's isolation flags (tests/seat/test_sandbox_flags.py).

It prints one JSON line: what it achieved, each success as a ``FOUND`` entry, so that a test
judges by outcome. Then it waits for a line on stdin (except ``survive``). argv[2] is a
marker that the test finds its processes by, and argv[3:] the mode's arguments.

- ``ipc-host KEY SECRET NAME``: makes what an engine may use to talk to its own helpers: a
  System V shared memory segment and message queue of key KEY holding SECRET, and a POSIX
  message queue /NAME. Reports what it made.
- ``ipc-guest KEY NAME``: looks for them, as a cheating opponent would.
- ``caps RECORD FOLDER``: uses a capability to undo its sandbox: makes its read-only
  FOLDER writable (a remount, and a new mount namespace's remount), uncovers the hidden RECORD
  (unmounting its cover), sets the hostname, and reports the capabilities it holds.
- ``socket NAME``: connects to the abstract Unix socket NAME (a colluding program's, outside).
- ``kill REVERSED``: SIGKILLs every process it sees whose command line holds the opponent's
  marker, given reversed (so that its own command line does not hold it).
- ``namespaces``: reports the namespaces it is in (``/proc/self/ns``).
- ``survive``: ignores its input and its end, and sleeps: it must die with the referee.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
import time

MODE = sys.argv[1]
ARGS = sys.argv[3:]
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_void_p]

IPC_CREAT = 0o1000
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
MNT_DETACH = 2
CLONE_NEWNS = 0x20000
MSG_SIZE = 256


class Message(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * MSG_SIZE)]


def error() -> str:
    return os.strerror(ctypes.get_errno())


def ipc_host(key: int, secret: str, name: str) -> dict[str, object]:
    facts: dict[str, object] = {}
    shm = libc.shmget(key, 4096, IPC_CREAT | 0o600)
    if shm >= 0:
        address = libc.shmat(shm, None, 0)
        ctypes.memmove(address, secret.encode(), len(secret))
        facts["shm"] = shm
    queue = libc.msgget(key, IPC_CREAT | 0o600)
    if queue >= 0:
        message = Message(1, secret.encode())
        libc.msgsnd(queue, ctypes.byref(message), MSG_SIZE, 0)
        facts["msg"] = queue
    mqueue = libc.mq_open(f"/{name}".encode(), os.O_CREAT | os.O_RDWR, 0o600, None)
    facts["mqueue"] = mqueue >= 0 or error()
    return facts


def ipc_guest(key: int, name: str) -> dict[str, object]:
    found: list[str] = []
    shm = libc.shmget(key, 0, 0)
    if shm >= 0:
        address = libc.shmat(shm, None, 0o10000)  # SHM_RDONLY
        data = ctypes.string_at(address, 64).split(b"\0")[0].decode(errors="replace")
        found.append(f"the opponent's shared memory: {data}")
    queue = libc.msgget(key, 0)
    if queue >= 0:
        message = Message()
        if libc.msgrcv(queue, ctypes.byref(message), MSG_SIZE, 0, 0o4000) >= 0:  # IPC_NOWAIT
            found.append(f"the opponent's message queue: {message.mtext.decode()}")
        else:
            found.append("the opponent's message queue")
    if libc.mq_open(f"/{name}".encode(), os.O_RDONLY, 0, None) >= 0:
        found.append("the opponent's POSIX message queue")
    return {"FOUND": found}


def caps(record: str, folder: str) -> dict[str, object]:
    found: list[str] = []
    facts: dict[str, object] = {"FOUND": found}
    with open("/proc/self/status") as f:
        status = f.read()
    facts["CapEff"] = next(line.split()[1] for line in status.splitlines() if "CapEff" in line)

    def try_write(how: str) -> None:
        path = os.path.join(folder, f"written-{how}")
        try:
            with open(path, "w") as f:
                f.write("x")
            found.append(f"wrote into its read-only folder after {how}")
        except OSError as exc:
            facts[f"write after {how}"] = exc.strerror

    def try_read(how: str) -> None:
        try:
            with open(record) as f:
                text = f.read(200)
        except OSError as exc:
            facts[f"read after {how}"] = exc.strerror
            return
        if text:
            found.append(f"read the hidden record after {how}: {text[:60]!r}")

    flags = MS_REMOUNT | MS_BIND
    if libc.mount(None, folder.encode(), None, flags, None) == 0:
        try_write("a remount")
    else:
        facts["remount"] = error()
    if libc.umount2(record.encode(), MNT_DETACH) == 0:
        try_read("an unmount")
    else:
        facts["umount"] = error()
    if libc.unshare(CLONE_NEWNS) == 0:
        facts["new mount namespace"] = True
        if libc.mount(None, folder.encode(), None, flags, None) == 0:
            try_write("a remount in a new mount namespace")
        if libc.umount2(record.encode(), MNT_DETACH) == 0:
            try_read("an unmount in a new mount namespace")
    else:
        facts["unshare"] = error()
    if libc.sethostname(b"breakout", 8) == 0:
        found.append("set the hostname")
    else:
        facts["sethostname"] = error()
    return facts


def connect(name: str) -> dict[str, object]:
    found: list[str] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect("\0" + name)
            s.sendall(b"hello from the sandbox\n")
            found.append(f"connected to @{name}")
        except OSError as exc:
            return {"FOUND": found, "connect": exc.strerror}
    return {"FOUND": found}


def kill(victim: str) -> dict[str, object]:
    found: list[str] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if victim.encode() not in f.read():
                    continue
            os.kill(int(entry), signal.SIGKILL)
            found.append(f"killed {entry}")
        except OSError:
            pass
    return {"FOUND": found}


def survive() -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(json.dumps({"pid": os.getpid()}), flush=True)
    while True:
        time.sleep(1)


def main() -> None:
    if MODE == "survive":
        survive()
    if MODE == "ipc-host":
        facts = ipc_host(int(ARGS[0]), ARGS[1], ARGS[2])
    elif MODE == "ipc-guest":
        facts = ipc_guest(int(ARGS[0]), ARGS[1])
    elif MODE == "caps":
        facts = caps(ARGS[0], ARGS[1])
    elif MODE == "kill":
        facts = kill(ARGS[0][::-1])
    elif MODE == "namespaces":
        facts = {n: os.readlink(f"/proc/self/ns/{n}") for n in sorted(os.listdir("/proc/self/ns"))}
    elif MODE == "socket":
        facts = connect(ARGS[0])
    else:
        raise SystemExit(f"unknown mode {MODE!r}")
    print(json.dumps(facts), flush=True)
    sys.stdin.readline()


if __name__ == "__main__":
    main()
