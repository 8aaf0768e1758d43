"""Each engine in a sandbox of its own: bubblewrap for what it can see, cgroups for what it may use.

An engine is a program we did not write. Run bare, it could kill its opponent, read the
opponent's pipes or the referee's memory through /proc, read the record being written, or
leave a process behind. So by default every engine starts inside bubblewrap (``bwrap``, the
sandbox Flatpak uses), and this module is the thin adapter that builds its command line:

- its own PID, IPC, UTS, network and user namespaces: it sees no process but its own, has no
  network (unless allowed), and holds no capability;
- death with the referee (``--die-with-parent``): when the outer ``bwrap`` is killed, the
  namespace's first process dies, and the kernel kills every process left in the namespace,
  however it forked, ``setsid()`` or ``setpgid()`` included;
- no way to the referee's terminal: ``/dev/tty`` is covered with a read-only ``/dev/null``, and
  no descriptor of a terminal is passed in (``/dev/pts`` is the sandbox's own). So an engine can
  neither read the user's keys nor push input into the shell (``TIOCSTI``). The engine stays
  in the referee's session (no ``--new-session``), as ``referee.seat.process`` explains: Linux
  schedules by session, and an engine in a session of its own answers a busy referee late;
- a read-only view of only what its command needs and is known to start
  (``referee.seat._sandbox_view``): the system directories, the interpreter and its install (a
  virtual environment, its base Python, editable installs; a version manager's root), the
  directories of the files named on its command line (a file directly in ``/tmp`` by
  itself) and its working directory, the installs of its ``PATH``, the paths its wrapper
  script names; the referee's own files there (the record, the store, the debug log, the
  config, the stderr folder: ``Policy.hidden``) and the Unix sockets are covered up. The
  user's folders it reads are linked from its home too, so that ``$HOME/.nvm`` leads there.
  When it fails for a path that exists but that it is not shown, `Jail.blocked_note` says
  which, and the ``--read`` that shows it;
- a private, writable ``/tmp`` of ``disk`` bytes, with ``HOME=/tmp/home`` inside it, and a
  ``/dev/shm`` of as many;
- its stdin and stdout held by the engine alone (not by bwrap's own processes): one that
  closes either is found out at once, as without the sandbox (`_command`).

Limits (`Limits`): memory, processes, writable disk and CPUs. Where the referee may create
cgroups (root, with cgroup v1 memory and pids controllers), each engine gets one memory and one
pids cgroup, which also tell afterwards which limit was hit. Elsewhere, ``prlimit`` inside the
sandbox sets ``RLIMIT_DATA`` for memory and ``RLIMIT_NPROC`` for processes (which the kernel
does not apply to root: `support` then says the process limit is not enforced). The disk limit
is the size of the ``/tmp`` tmpfs (and of ``/dev/shm``'s). The CPU limit is a CFS quota (cgroup
v1 ``cpu.cfs_quota_us``, v2 ``cpu.max``) on a cpu cgroup of the engine's own: however many
processes it spins, it gets that many CPUs' worth of time, and no more than its fair share
against its opponent, since its own cgroup also takes it out of the referee's autogroup (where
the scheduler would count it and its opponent as one). No rlimit can stand in for it: without a
cpu cgroup, `support` says the CPU limit is not enforced.

`Policy.affinity` pins an engine to some CPUs (``--affinity``; `referee.seat.affinity` chooses
them); it applies bare too (``referee.seat.process``).

Where bubblewrap cannot run (not installed, or user namespaces disabled), `support` says
why; the referee then plays bare with one warning line (mode ``auto``), or refuses to start
(``require``). ``off`` runs bare on purpose.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import itertools
import json
import logging
import math
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from referee.errors import RefereeError
from referee.seat._sandbox_view import (
    SYSTEM_DIRS,
    blocked,
    inferred,
    inside,
    needed,
    outermost,
    sockets,
    to_hide,
    user_home,
    which,
)

__all__ = [
    "Jail",
    "Limits",
    "Policy",
    "SandboxError",
    "SandboxMode",
    "Support",
    "cpu_quota",
    "format_size",
    "parse_cpus",
    "parse_size",
    "prepare",
    "start_warnings",
    "support",
    "unenforced",
]

logger = logging.getLogger(__name__)

KiB: Final = 1 << 10
MiB: Final = 1 << 20
GiB: Final = 1 << 30

HOME: Final = "/tmp/home"
"""The engine's home inside the sandbox, on its private ``/tmp``."""

_CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
_PROC_CGROUP: Final = Path("/proc/self/cgroup")
_ETC: Final = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "passwd",
    "group",
    "nsswitch.conf",
    "localtime",
    "timezone",
    "ssl",
    "ca-certificates",
    "hosts",
    "mime.types",
    "nodejs",
)
_ETC_GLOBS: Final = ("python3*",)
_NAMESPACES: Final = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
)
_SESSION: Final = ("--cap-drop", "ALL", "--die-with-parent")
LIMIT_NAMES: Final = ("memory", "processes", "disk", "cpus")
CPUS_MIN: Final = 0.01
CPUS_MAX: Final = 1024.0
_CPU_PERIOD_US: Final = 10_000  # short, so that a throttled engine waits at most this long
_CPU_QUOTA_MIN_US: Final = 1_000  # the kernel's smallest quota
_ARGS_PIPE_MAX: Final = 60 * KiB  # below a pipe's capacity, so the write never blocks


class SandboxError(RefereeError, RuntimeError):
    """The sandbox was required but cannot run; the message says why."""


class SandboxMode(StrEnum):
    """``auto``: sandbox when possible, else warn and run bare; ``require``: refuse to run
    bare; ``off``: run bare on purpose."""

    AUTO = "auto"
    REQUIRE = "require"
    OFF = "off"


# --------------------------------------------------------------------------- limits

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"2G"``, ``"512MiB"``, ``"100k"`` or a number of bytes; ValueError otherwise."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"expected a size such as 2G, 512M or 100000, not {text!r}")
    number, unit = float(match.group(1)), match.group(2).lower()
    size = int(number * {"": 1, "k": KiB, "m": MiB, "g": GiB, "t": 1 << 40}[unit])
    if size < 1:
        raise ValueError(f"a size must be positive, not {text!r}")
    return size


def format_size(size: int) -> str:
    """``2147483648`` -> ``"2 GiB"``; sizes that are not whole units keep a decimal."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if size >= unit:
            value = size / unit
            return f"{value:g} {name}" if value.is_integer() else f"{value:.1f} {name}"
    return f"{size} B"


def parse_cpus(value: object) -> float:
    """A CPU limit: ``1``, ``"0.5"``, ``2.5``: how many CPUs' worth of time, from
    `CPUS_MIN` to `CPUS_MAX`; ValueError otherwise."""
    text = str(value).strip()
    try:
        if isinstance(value, bool):
            raise ValueError
        cpus = float(text)
    except ValueError:
        cpus = math.nan
    if not CPUS_MIN <= cpus <= CPUS_MAX:  # NaN and the infinities too
        raise ValueError(
            f"cpus must be a number of CPUs from {CPUS_MIN:g} to {CPUS_MAX:g}, such as 1 or"
            f" 0.5, not {value!r}"
        )
    return cpus


def cpu_quota(cpus: float) -> tuple[int, int]:
    """The CFS quota and period, in microseconds, that give ``cpus`` CPUs' worth of time; a
    quota of -1 (none) for as many CPUs as the machine has, or more (a quota above its
    parent's would be refused)."""
    period = _CPU_PERIOD_US
    if cpus >= (os.cpu_count() or 1):
        return -1, period
    if cpus * period < _CPU_QUOTA_MIN_US:
        period = math.ceil(_CPU_QUOTA_MIN_US / cpus)
    return max(_CPU_QUOTA_MIN_US, round(cpus * period)), period


@dataclass(frozen=True, slots=True)
class Limits:
    """What one engine may use: bytes of memory, processes (threads count, as the kernel
    counts them), bytes written to its private ``/tmp`` (and home), and CPUs' worth of
    time (``0.5``: half of one CPU; however many processes share it)."""

    memory: int = 2 * GiB
    processes: int = 128
    disk: int = 256 * MiB
    cpus: float = 1.0

    def updated(self, items: Mapping[str, object]) -> Limits:
        """These limits with ``items`` (``memory="1G"``, ``processes=32``, ``cpus=0.5``...)
        applied; ValueError names a bad name or value."""
        changes: dict[str, Any] = {}  # int or float, as the field
        for name, value in items.items():
            key = name.strip().lower()
            if key not in LIMIT_NAMES:
                raise ValueError(f"unknown limit {name!r}; limits are {', '.join(LIMIT_NAMES)}")
            if key == "cpus":
                changes[key] = parse_cpus(value)
            elif key == "processes":
                text = str(value).strip()
                if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
                    raise ValueError(f"processes must be a whole number above 0, not {value!r}")
                changes[key] = int(text)
            elif isinstance(value, int) and not isinstance(value, bool):
                if value < 1:
                    raise ValueError(f"{key} must be positive, not {value}")
                changes[key] = value
            elif isinstance(value, str):
                changes[key] = parse_size(value)
            else:
                raise ValueError(f"{key} must be a size such as \"2G\", not {value!r}")
        return dataclasses.replace(self, **changes)

    def describe(self, name: str) -> str:
        """``"memory limit 2 GiB"``, ``"process limit 128"``, ``"disk limit 256 MiB"``,
        ``"CPU limit 0.5"``."""
        if name == "processes":
            return f"process limit {self.processes}"
        if name == "cpus":
            return f"CPU limit {self.cpus:g}"
        return f"{name} limit {format_size(getattr(self, name))}"

    def settings(self) -> dict[str, int | float]:
        """The limits that differ from the defaults (for a tournament's stored settings:
        a store made before a limit existed holds none of it, and means its default)."""
        default = Limits()
        return {n: getattr(self, n) for n in LIMIT_NAMES if getattr(self, n) != getattr(default, n)}


@dataclass(frozen=True, slots=True)
class Policy:
    """How one engine is to be run: the mode, its limits, whether it may use the network,
    and the referee's paths it must not see even inside a directory it may read, and
    whether it sees its working directory (built-in engines do not need it)."""

    mode: SandboxMode = SandboxMode.AUTO
    limits: Limits = dataclasses.field(default_factory=Limits)
    network: bool = False
    hidden: tuple[str, ...] = ()
    workdir: bool = True
    readable: tuple[str, ...] = ()  # more paths it may read, given by the user
    affinity: tuple[int, ...] = ()  # the CPUs it is pinned to (bare too); () for any


# --------------------------------------------------------------------------- support


@dataclass(frozen=True, slots=True)
class Support:
    """What this machine offers: whether bubblewrap runs (``reason`` says why not), and how
    the limits are enforced (``cgroups``: memory, pids and cpu cgroups, by controller;
    else rlimits), with a sentence for each limit that cannot be enforced."""

    bwrap: str | None
    reason: str
    cgroups: dict[str, Path]
    unenforced: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return self.bwrap is not None


_probe_lock = threading.Lock()


@functools.cache
def _support() -> Support:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Support(None, "bubblewrap (bwrap) is not installed", {})
    # Every option an engine's sandbox uses, on a view of the whole system.
    mounts = ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    mounts += ["--size", str(MiB), "--tmpfs", "/tmp"]
    try:
        done = subprocess.run(
            [bwrap, *_NAMESPACES, *_SESSION, "--unshare-net", *mounts, "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Support(None, f"bwrap cannot run: {exc}", {})
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = why[-1] if why else f"exit status {done.returncode}"
        return Support(None, f"bwrap cannot create its namespaces ({detail})", {})
    cgroups = _cgroup_dirs()
    return Support(bwrap, "", cgroups, unenforced(cgroups))


def unenforced(cgroups: Mapping[str, Path]) -> tuple[str, ...]:
    """A sentence for each limit that cannot be enforced with these cgroups."""
    out: list[str] = []
    if "memory" not in cgroups and shutil.which("prlimit") is None:
        out.append("memory (no memory cgroup and no prlimit)")
    if "pids" not in cgroups and (os.geteuid() == 0 or shutil.which("prlimit") is None):
        out.append(
            "processes (no writable pids cgroup"
            + (", and RLIMIT_NPROC does not apply to root)" if os.geteuid() == 0 else ")")
        )
    if "cpu" not in cgroups:
        out.append(
            "cpus (no writable cpu cgroup: an engine may take its opponent's CPU time)"
        )
    return tuple(out)


def support() -> Support:
    """Probe the machine once per process: bubblewrap, namespaces, cgroups."""
    with _probe_lock:
        return _support()


def start_warnings(mode: SandboxMode) -> list[str]:
    """The warning lines a match or tournament prints at its start, or raises `SandboxError`
    for ``require`` when the sandbox cannot run. ``off`` is a choice, and says nothing."""
    if mode is SandboxMode.OFF:
        return []
    found = support()
    if not found.available:
        if mode is SandboxMode.REQUIRE:
            raise SandboxError(f"the sandbox is required, but {found.reason}; refusing to start")
        return [
            f"warning: engines are NOT isolated: {found.reason}; they run bare, able to see"
            " and harm each other and the referee (install bubblewrap, or --no-sandbox to"
            " choose this)"
        ]
    return [f"warning: sandbox limit not enforced: {what}" for what in found.unenforced]


def _cgroup_dirs() -> dict[str, Path]:
    """The referee's own v1 memory, pids and cpu cgroups, where it can create children; for
    cpu, on cgroup v2 (one hierarchy), the referee's cgroup where it hands the cpu controller
    on to its children (``cgroup.subtree_control``)."""
    found: dict[str, Path] = {}
    try:
        lines = _PROC_CGROUP.read_text().splitlines()
    except OSError:
        return found
    unified: str | None = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if not controllers:
            unified = path
        for controller in controllers.split(","):
            if controller in ("memory", "pids", "cpu"):
                base = _CGROUP_ROOT / controller / path.lstrip("/")
                if _can_make_children(base):
                    found[controller] = base
    if "cpu" not in found and unified is not None:
        # cgroup v2: the hierarchy is mounted at the root itself (not as v1's "unified").
        base = _CGROUP_ROOT / unified.lstrip("/")
        if (
            (_CGROUP_ROOT / "cgroup.controllers").exists()
            and "cpu" in _read(base / "cgroup.subtree_control").split()
            and _can_make_children(base)
        ):
            found["cpu"] = base
    return found


def _can_make_children(base: Path) -> bool:
    probe = base / f"ginref-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    _remove_stale(base)
    return True


def _remove_stale(base: Path) -> None:
    """Remove the empty cgroups left by referees that were killed before cleaning up."""
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            match = re.fullmatch(r"ginref-(\d+)-\d+(?:-[0-9a-f]+)?", entry.name)
            if match and not Path(f"/proc/{match.group(1)}").exists():
                with contextlib.suppress(OSError):
                    entry.rmdir()


# --------------------------------------------------------------------------- the jail


_counter = itertools.count(1)


@dataclass(frozen=True, slots=True)
class View:
    """What one engine's sandbox shows (``shown``: read-only, or its own) and covers up
    inside that (``covered``), with the ``PATH`` it runs with: what `Jail.blocked_note`
    judges its errors by."""

    shown: tuple[str, ...]
    covered: tuple[str, ...]
    path_var: str


class Jail:
    """One engine process's sandbox: the command to start, and its cgroups.

    ``command`` and ``pass_fds`` go to ``Popen``; `started` is called once it has started,
    `limit_hit` after it died (which limit, if any, killed it), `blocked_note` (which path the
    sandbox kept from it, if any), and `release` after it was reaped (it kills whatever is
    left in its cgroups and removes them).
    """

    def __init__(
        self,
        command: list[str],
        pass_fds: tuple[int, ...],
        info_fd: int,
        limits: Limits,
        cgroups: dict[str, Path],
        view: View | None = None,
    ) -> None:
        self.command = command
        self.pass_fds = pass_fds
        self.info_fd = info_fd
        self.limits = limits
        self.cgroups = cgroups
        self.view = view

    def started(self) -> None:
        """The process has started: close our end of the arguments pipe."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()

    def limit_hit(self, stderr_tail: str = "") -> str | None:
        """``"memory limit 2 GiB"`` (or processes, disk) if the engine ran into a limit. (The
        CPU limit kills nothing: it only slows down an engine that uses more.)"""
        memory = self.cgroups.get("memory")
        if memory is not None:
            control = _read(memory / "memory.oom_control")
            kills = re.search(r"oom_kill (\d+)", control)
            hit = int(kills.group(1)) > 0 if kills else _read(memory / "memory.failcnt") != "0"
            if hit:
                return self.limits.describe("memory")
        pids = self.cgroups.get("pids")
        if pids is not None:
            events = re.search(r"max (\d+)", _read(pids / "pids.events"))
            if events and int(events.group(1)) > 0:
                return self.limits.describe("processes")
        tail = stderr_tail[-2000:]
        if "No space left on device" in tail or "ENOSPC" in tail:
            return self.limits.describe("disk")
        if memory is None and re.search(
            r"MemoryError|Cannot allocate memory|out of memory|bad_alloc|allocation failed", tail
        ):
            return self.limits.describe("memory")
        if pids is None and re.search(r"Resource temporarily unavailable|EAGAIN", tail):
            return self.limits.describe("processes")
        return None

    def blocked_note(self, stderr_tail: str) -> str:
        """When the engine's last words say it could not find a path that exists here but
        that its sandbox hides: ``"; the sandbox hides PATH: ..."``, with the option that
        shows it. Else ``""``."""
        if self.view is None:
            return ""
        view = self.view
        found = blocked(stderr_tail[-2000:], view.shown, view.covered, HOME, view.path_var)
        if not found:
            return ""
        shows = list(dict.fromkeys(show for _, show in found))
        options = " ".join(f"--read {shlex.quote(show)}" for show in shows)
        config = ", ".join(json.dumps(show) for show in shows)
        return (
            f"; the sandbox hides {', '.join(path for path, _ in found)}: to let the engine"
            f" read it, add {options} (in a tournament config: read = [{config}])"
        )

    def release(self) -> None:
        """After bwrap was killed: wait for the namespace's first process to end (the kernel
        kills the rest of the namespace before it does), kill what is left in the cgroups
        (nothing, normally) and remove them."""
        init = self._init_pid()
        if init is not None:
            deadline = time.monotonic() + 2.0
            while _running(init) and time.monotonic() < deadline:
                time.sleep(0.002)
        for path in self.cgroups.values():
            deadline = time.monotonic() + 2.0
            while True:
                pids = [int(p) for p in _read(path / "cgroup.procs").split()]
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        logger.warning("cannot remove the cgroup %s", path)
                        break
                    time.sleep(0.005)
        self.cgroups = {}
        self.started()
        if self.info_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.info_fd)
            self.info_fd = -1

    def _init_pid(self) -> int | None:
        if self.info_fd < 0:
            return None
        try:
            data = os.read(self.info_fd, 4096)
        except OSError:
            return None
        match = re.search(rb'"child-pid"\s*:\s*(\d+)', data)
        return int(match.group(1)) if match else None


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    stat = _read(Path(f"/proc/{pid}/stat"))
    return bool(stat) and stat.rpartition(")")[2].split()[:1] != ["Z"]


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def prepare(
    argv: Sequence[str], cwd: str | None, env: Mapping[str, str], policy: Policy
) -> Jail | None:
    """The sandbox for ``argv`` (run in ``cwd`` with ``env``), or None to run it bare
    (mode ``off``, or ``auto`` where the sandbox cannot run). Raises `SandboxError` for
    ``require`` where it cannot run."""
    if policy.mode is SandboxMode.OFF:
        return None
    found = support()
    if found.bwrap is None:
        if policy.mode is SandboxMode.REQUIRE:
            raise SandboxError(f"the sandbox is required, but {found.reason}")
        return None
    workdir = os.path.abspath(cwd or os.getcwd())
    program = which(argv[0], workdir, env.get("PATH", os.defpath))
    # As a bare start would fail (execve's own errors), not later from inside the sandbox.
    if program is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    if os.path.isdir(program) or not os.access(program, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), argv[0])
    args, view = _bwrap_args(argv, workdir, env, policy, found)
    cgroups = _make_cgroups(found, policy.limits)
    try:
        command, fds, info = _command(found.bwrap, args, cgroups)
    except BaseException:
        Jail([], (), -1, policy.limits, cgroups).release()
        raise
    return Jail(command, fds, info, policy.limits, cgroups, view)


def _make_cgroups(found: Support, limits: Limits) -> dict[str, Path]:
    made: dict[str, Path] = {}
    # The random part: a referee killed before cleaning up leaves its cgroups behind, and a
    # later one may be given its process number; the same name would find them in the way,
    # and the engine would run without its limits.
    name = f"ginref-{os.getpid()}-{next(_counter)}-{secrets.token_hex(4)}"
    quota, period = cpu_quota(limits.cpus)
    settings: dict[str, list[tuple[str, object]]] = {
        "memory": [
            ("memory.limit_in_bytes", limits.memory),
            ("memory.memsw.limit_in_bytes", limits.memory),
        ],
        # The sandbox's own two processes (bwrap and its init) count too.
        "pids": [("pids.max", limits.processes + 2)],
        "cpu": [("cpu.cfs_period_us", period), ("cpu.cfs_quota_us", quota)],
    }
    for controller, base in found.cgroups.items():
        path = base / name
        files = settings[controller]
        if controller == "cpu" and (base / "cgroup.controllers").exists():  # cgroup v2
            files = [("cpu.max", f"{quota if quota > 0 else 'max'} {period}")]
        try:
            path.mkdir()
            made[controller] = path
            for file, value in files:
                if controller == "cpu" or (path / file).exists():
                    (path / file).write_text(str(value))
        except OSError as exc:
            logger.warning("cannot set up the %s cgroup %s: %s", controller, path, exc)
    return made


def _command(
    bwrap: str, args: list[str], cgroups: Mapping[str, Path]
) -> tuple[list[str], tuple[int, ...], int]:
    """The command that starts bwrap inside the cgroups, the descriptors it inherits, and
    ours of its info pipe. bwrap reads its arguments from a pipe (``--args``), so that its
    command line, which its first process keeps where the engine can read it, holds no path
    of the referee's (only the engine's own command follows); it writes the pid of that first
    process to the info pipe.

    The engine's stdin and stdout reach it past bwrap: a shell moves them to two spare
    descriptors and gives bwrap ``/dev/null`` instead; bwrap's own two processes close every
    descriptor but their standard ones, and a shell inside moves the two back for the engine.
    So the engine alone holds its pipes, and one that closes its stdout (or stdin) is seen to
    at once, as without the sandbox, not only when its move's time is out."""
    split = args.index("--")
    options = ["--info-fd", "", *args[:split]]
    info_read, info_write = os.pipe()
    os.set_blocking(info_read, False)
    options[1] = str(info_write)
    data = "".join(a + "\0" for a in options).encode()
    fds: tuple[int, ...] = (info_write,)
    read = -1
    if len(data) <= _ARGS_PIPE_MAX:
        read, write = os.pipe()
        try:
            os.write(write, data)
        finally:
            os.close(write)
        fds += (read,)
    # Two spare descriptors below 10 (what a shell's redirections can name).
    stdin_fd, stdout_fd = [fd for fd in range(3, 10) if fd not in fds][:2]
    inner = [
        "--",
        "/bin/sh",
        "-c",
        f'exec 0<&{stdin_fd} 1>&{stdout_fd} {stdin_fd}<&- {stdout_fd}>&- && exec "$@"',
        "sh",
        *args[split + 1 :],
    ]
    command = [bwrap, "--args", str(read), *inner] if read >= 0 else [bwrap, *options, *inner]
    # The shell joins the cgroups, then becomes bwrap: everything it starts is inside.
    joins = "".join(f'echo $$ > "${i + 1}" && ' for i in range(len(cgroups)))
    shift = f"shift {len(cgroups)} && " if cgroups else ""
    moves = f"exec {stdin_fd}<&0 {stdout_fd}>&1 </dev/null >/dev/null && "
    script = f'{joins}{moves}{shift}exec "$@"'
    procs = [str(path / "cgroup.procs") for path in cgroups.values()]
    return ["/bin/sh", "-c", script, "sh", *procs, *command], fds, info_read


def _bwrap_args(
    argv: Sequence[str], workdir: str, env: Mapping[str, str], policy: Policy, found: Support
) -> tuple[list[str], View]:
    limits = policy.limits
    out = [*_NAMESPACES, *_SESSION]
    if not policy.network:
        out.append("--unshare-net")
    shown: list[str] = ["/proc", "/dev"]  # the sandbox's own (its /tmp shows only what is bound)
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
            shown.append(path)
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
            shown.append(path)
    etc = [f"/etc/{name}" for name in _ETC]
    for pattern in _ETC_GLOBS:
        etc += [str(p) for p in sorted(Path("/etc").glob(pattern))]
    for path in etc:
        if os.path.lexists(path):
            out += ["--ro-bind-try", path, path]
            shown.append(path)
    out += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev"]
    out += ["--ro-bind", "/dev/null", "/dev/tty"]  # the referee's terminal, out of reach
    # Shared memory is written to as /tmp is: a tmpfs of the disk limit too (bwrap's /dev
    # would let it grow up to the memory limit).
    out += ["--size", str(limits.disk), "--tmpfs", "/dev/shm"]
    # The private /tmp first: a directory the engine reads may lie below /tmp.
    out += ["--size", str(limits.disk), "--tmpfs", "/tmp", "--dir", HOME]
    path_var = env.get("PATH", os.defpath)
    named = needed(argv, workdir if policy.workdir else None, path_var)
    named += [os.path.abspath(p) for p in policy.readable if os.path.exists(p)]
    shows = [*named, *inferred(argv, workdir, path_var, policy.hidden)]
    readable = outermost(shows)
    for path in readable:
        out += ["--ro-bind", path, path]
    # The engine's home stands for the user's: the user's folders it may read are there too,
    # so that a script's $HOME/.nvm or ~/.pyenv leads to them.
    home = user_home()
    mirrored = [p for p in shows if p != home and inside(p, home)] if home != "/" else []
    for path in outermost(mirrored):
        out += ["--symlink", path, os.path.join(HOME, os.path.relpath(path, home))]
    covered = to_hide(policy.hidden, readable)
    for path in covered:
        if os.path.isdir(path):
            out += ["--tmpfs", path, "--remount-ro", path]
        else:
            out += ["--ro-bind", "/dev/null", path]
    bare_sockets = [p for p in sockets(readable) if not any(inside(p, c) for c in covered)]
    for path in bare_sockets:
        out += ["--ro-bind", "/dev/null", path]
    out += ["--setenv", "HOME", HOME, "--setenv", "TMPDIR", "/tmp"]
    out += ["--chdir", workdir if policy.workdir else HOME]
    inner = list(argv)
    if not found.cgroups.keys() >= {"memory", "pids"}:
        inner = _prlimit(inner, limits, found)
    view = View(
        tuple([*shown, *readable]),
        tuple([*covered, *bare_sockets, *(os.path.abspath(h) for h in policy.hidden)]),
        path_var,
    )
    return [*out, "--", *inner], view


def _prlimit(argv: list[str], limits: Limits, found: Support) -> list[str]:
    """Rlimits set inside the sandbox (so RLIMIT_NPROC counts only the sandbox's processes),
    for the limits no cgroup enforces."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return argv
    options = []
    if "memory" not in found.cgroups:
        options.append(f"--data={limits.memory}")
    if "pids" not in found.cgroups and os.geteuid() != 0:
        options.append(f"--nproc={limits.processes}")
    return [prlimit, *options, "--", *argv] if options else argv
