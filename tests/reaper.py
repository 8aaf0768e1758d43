"""The test run's reaper: when pytest ends, however it ends (``kill -9`` included), every process
the run started ends too: engines, sandboxes, browsers, Dask schedulers and workers.

``conftest.py`` starts this script at the start of a run, in a session of its own, before
anything else is started, with the pid of pytest and a folder of its own. The run's processes
are found two ways:

- **a freezer cgroup** (cgroup v1, where the run may make one, as root): pytest joins a new
  cgroup after starting the reaper, so every process it starts from then on, however it forks
  or whatever session it makes, is listed in that cgroup's ``cgroup.procs``. The sandbox uses
  the memory, pids and cpu controllers, never the freezer, so an engine stays listed. At the
  end the cgroup is frozen (nothing in it can fork any more), everything in it is killed, and
  it is removed.
- **the process tree**, everywhere: every ``POLL`` seconds the reaper notes pytest's
  descendants (with their start times, so that a reused pid is never taken for one), and at
  the end kills those still alive. A process started and orphaned between two looks can
  escape this way, which is why the cgroup comes first where it can be had.

Usage (by conftest.py): ``python tests/reaper.py PID FOLDER``; it writes ``FOLDER/ready`` once
it watches (and ``FOLDER/cgroup``, the path of the cgroup for pytest to join, when it made one).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

POLL = 0.2
FREEZER = Path("/sys/fs/cgroup/freezer")


def start_time(pid: int) -> str | None:
    """The start time of ``pid`` (field 22 of its stat), None if it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    if not fields or fields[0] == "Z":
        return None
    return fields[19]


def children() -> dict[int, list[int]]:
    """Parent pid -> child pids, of every process on the machine."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1:
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def descendants(root: int) -> list[int]:
    tree, found, todo = children(), [], [root]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def make_cgroup(pid: int) -> Path | None:
    """A freezer cgroup for the run, below the reaper's own, or None where none can be made."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "freezer" in controllers.split(","):
            group = FREEZER / path.lstrip("/") / f"ginproto-tests-{pid}"
            try:
                group.mkdir()
            except OSError:
                return None
            return group
    return None


def kill_cgroup(group: Path) -> None:
    """Freeze ``group`` (and the cgroups below it: a nested run's), kill everything in them,
    thaw them (a frozen process dies only when thawed), and remove them once they are empty."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        groups = sorted((Path(d) for d, _, _ in os.walk(group)), key=lambda p: -len(p.parts))
        pids: list[int] = []
        for each in groups:
            with contextlib.suppress(OSError):
                (each / "freezer.state").write_text("FROZEN")
            with contextlib.suppress(OSError, ValueError):
                pids += [int(p) for p in (each / "cgroup.procs").read_text().split()]
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for each in groups:
            with contextlib.suppress(OSError):
                (each / "freezer.state").write_text("THAWED")
        if not pids:
            for each in groups:  # the deepest first
                with contextlib.suppress(OSError):
                    each.rmdir()
            if not group.exists():
                return
        time.sleep(0.05)


def main() -> int:
    pid, folder = int(sys.argv[1]), Path(sys.argv[2])
    born = start_time(pid)
    if born is None:
        return 0
    group = make_cgroup(pid)
    if group is not None:
        (folder / "cgroup").write_text(str(group))
    (folder / "ready").write_text("")
    seen: dict[int, str] = {}
    me = os.getpid()
    while start_time(pid) == born:
        for child in descendants(pid):
            if child != me and child not in seen and (started := start_time(child)) is not None:
                seen[child] = started
        time.sleep(POLL)
    if group is not None:
        kill_cgroup(group)
    for child, started in seen.items():
        if start_time(child) == started:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
    for name in ("ready", "cgroup"):
        with contextlib.suppress(OSError):
            (folder / name).unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
