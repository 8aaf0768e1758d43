"""One untrusted engine process: start it, exchange lines with timeouts, and kill it.

An engine is a program we did not write and must not trust. This module guarantees that whatever
the engine does (answer late, never answer, flood stdout or stderr, print a line of ten megabytes,
crash, ignore ``quit``, leave children behind) the referee sees one of a few `EngineError`s with a
short machine ``reason`` and never blocks for longer than the timeout it asked for.

Design (synchronous, so that a match runner can run N games in N threads):

- The engine runs from an argv list and never through a shell, with a minimal environment;
  given a sandbox policy, inside bubblewrap with its limits (``referee.seat.sandbox`` builds that
  command and cleans up after it). A sandboxed engine runs in a process group of its own
  (``process_group=0``) within the referee's session: not being the terminal's foreground group,
  it gets no signal from the keyboard, and the sandbox hides the terminal itself. It stays in
  the referee's session on purpose: Linux's scheduler shares the CPU out between sessions
  (autogroup), and on a busy machine a referee that waits for an engine in another session is
  woken late, several times slower per decision than one that shares it. (Where the sandbox
  gives each engine a cpu cgroup of its own, for its CPU limit, that cgroup is its group: the
  price of an opponent that cannot take its CPU time.) An engine run without
  a sandbox gets a session of its own instead, so that it has no controlling terminal to open:
  it pays the scheduling cost, not the referee's terminal.
- A policy's ``affinity`` (``--affinity``) pins the engine to those CPUs, sandboxed or bare:
  the thread that starts it pins itself for the moment of the start, so that the engine
  inherits the CPUs from its first instruction, and every process it starts inherits them.
- Stdout is read by the thread that asks for a line, straight from the pipe (``poll`` and
  ``os.read`` on its descriptor, cut into lines of at most ``line_limit`` bytes): no thread and
  no hand-over between threads stands between the engine's answer and the referee. Nothing is
  read before it is asked for, so an engine that floods stdout fills its own pipe and is slowed
  down, while the referee's memory stays flat (one chunk and one line at most).
- A thread always drains stderr, into a file or nowhere, so a chatty engine never blocks on
  a full stderr pipe. The last few kilobytes are kept to give error messages some context.
- `EngineProcess.close` kills the whole process group with SIGKILL, grandchildren included, and
  reaps the engine. The engine is only ever reaped there, so the group id stays reserved (by the
  zombie) until the group has been killed, and a recycled pid can never be hit by mistake.
- Every protocol line goes to ``logging`` at DEBUG with the engine's name and direction, and to an
  optional ``on_line(direction, line)`` callback.

Each `EngineProcess` costs one thread (stderr's). One game thread drives ``send`` /
``read_line`` / ``close``; ``close`` may also be called from another thread to abort a game: a
read in progress notices within ``_POLL_MS`` and raises `EngineClosed`.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import logging
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import IO, Final, Self

from referee.seat.sandbox import Jail, Policy, SandboxError, prepare

__all__ = [
    "EngineBrokenPipe",
    "EngineClosed",
    "EngineError",
    "EngineExited",
    "EngineLineTooLong",
    "EngineProcess",
    "EngineStartError",
    "EngineTimeout",
    "LineHook",
    "minimal_environment",
    "stderr_lines",
]

logger = logging.getLogger(__name__)

LineHook = Callable[[str, str], None]
"""``on_line(direction, line)``; direction is ``"to"``, ``"from"`` or ``"stderr"``."""

DEFAULT_LINE_LIMIT: Final = 1 << 20
DEFAULT_STDERR_LIMIT: Final = 64 << 20
_CHUNK: Final = 1 << 16
_TAIL_BYTES: Final = 4096
_POLL_MS: Final = 100
_JOIN_TIMEOUT: Final = 1.0


# --------------------------------------------------------------------------- errors


class EngineError(RuntimeError):
    """An engine misbehaved (or went away). The referee turns it into a ruling, not a crash.

    ``reason`` is a short machine word for the game record ("timeout", "exited", ...); the message
    carries the context a human needs: engine name, exit status, the tail of its stderr.
    """

    reason: str = "engine-error"

    def __init__(self, message: str, *, name: str = "") -> None:
        super().__init__(message)
        self.name = name


class EngineStartError(EngineError):
    """The engine could not be started at all (missing executable, bad working directory)."""

    reason = "start-failed"


class EngineTimeout(EngineError):
    """The engine did not answer (or did not accept input) within the allowed time."""

    reason = "timeout"


class EngineExited(EngineError):
    """The engine closed its stdout or died; ``returncode`` is negative for a signal, as Popen."""

    reason = "exited"

    def __init__(
        self, message: str, *, name: str = "", returncode: int | None = None, status: str = ""
    ) -> None:
        super().__init__(message, name=name)
        self.returncode = returncode
        self.status = status
        """How it ended, in a few words (``"exited with code 1"``; a sandbox limit first)."""


class EngineLineTooLong(EngineError):
    """The engine wrote a line longer than the limit; the excess was read and thrown away."""

    reason = "line-too-long"


class EngineBrokenPipe(EngineError):
    """The engine no longer reads its stdin (it has exited or closed it)."""

    reason = "broken-pipe"


class EngineClosed(EngineError):
    """The process was already closed by the referee; a referee-side sequencing problem."""

    reason = "closed"


# --------------------------------------------------------------------------- helpers


_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


@contextlib.contextmanager
def _pinned(cpus: Sequence[int]) -> Iterator[None]:
    """Run the block on ``cpus`` only (this thread alone), then on the CPUs it had before;
    no ``cpus``: as it is. A child started in the block inherits them."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _die_with_parent(argv: Sequence[str], cwd: str | None, env: Mapping[str, str]) -> list[str]:
    """``argv``, run so that Linux kills the engine if the referee dies (even by SIGKILL):
    through util-linux's ``setpriv --pdeathsig KILL``, which sets the death signal and then
    execs the engine in the same process. Elsewhere, or when the program cannot be found
    (so that the start fails as it would without the wrapper), ``argv`` unchanged."""
    program = argv[0]
    if _SETPRIV is None:
        return list(argv)
    if os.sep not in program:
        found = shutil.which(program, path=env.get("PATH"))
        if found is None:
            return list(argv)
    elif not os.access(os.path.join(cwd or "", program), os.X_OK):
        return list(argv)
    return [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]



def minimal_environment(cwd: str | None) -> dict[str, str]:
    """The environment an engine gets by default: PATH, HOME (its working directory) and LANG.

    Nothing of the referee's own environment leaks beyond PATH, so no variable can carry
    information about the deal.
    """
    home = cwd if cwd is not None else os.getcwd()
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "LANG": "C.UTF-8"}


STDERR_LINES: Final = 10
"""Lines of an engine's stderr shown with a fault (``ginref match -v``, ``--json``)."""


def stderr_lines(tail: str, count: int = STDERR_LINES) -> tuple[str, ...]:
    """The last ``count`` lines of an engine's stderr ``tail`` (`EngineProcess.stderr_tail`)
    that hold something, each made safe to show: cut at line feeds only, so a carriage
    return cannot start a line of its own, then every control character escaped and each
    line bounded (``ginproto.text.printable``). A first line the tail cut short is left out."""
    from ginproto.text import REASON_LIMIT, printable

    lines = tail.split("\n")
    if len(tail.encode("utf-8", "surrogatepass")) >= _TAIL_BYTES:
        lines = lines[1:]
    kept = [line.rstrip() for line in lines if line.strip()]
    return tuple(printable(line, REASON_LIMIT) for line in kept[-count:])


def _describe_status(returncode: int | None) -> str:
    if returncode is None:
        return "closed its stdout but is still running"
    if returncode < 0:
        try:
            signame = signal.Signals(-returncode).name
        except ValueError:
            signame = f"signal {-returncode}"
        return f"was killed by {signame}"
    return f"exited with code {returncode}"


def _decode(data: bytes | bytearray) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[:-1] if text.endswith("\r") else text


class _TooLong:
    """Inbox marker: a line went over the limit (the rest of it is being discarded)."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        self.limit = limit


class _Eof:
    """Inbox marker: stdout reached end of file."""

    __slots__ = ()


_EOF: Final = _Eof()
_Item = str | _TooLong | _Eof


# --------------------------------------------------------------------------- the process


def _spawn(
    argv: Sequence[str],
    cwd: str | None,
    env: dict[str, str],
    jail: Jail | None,
    sandbox: Policy | None,
) -> subprocess.Popen[bytes]:
    """The engine's process, with pipes for its three streams: in its ``jail`` if it has
    one, else bare (and killed with the referee where it can be), on the CPUs of the
    ``sandbox`` policy's affinity."""
    with _pinned(sandbox.affinity if sandbox is not None else ()):
        return subprocess.Popen(
            jail.command if jail is not None else _die_with_parent(argv, cwd, env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            # Sandboxed: the referee's session (see the module docstring); bare: its own.
            process_group=0 if jail is not None else None,
            start_new_session=jail is None,
            close_fds=True,
            pass_fds=jail.pass_fds if jail is not None else (),
            bufsize=0,
        )


class EngineProcess:
    """One running engine, spoken to in lines. Build it with `EngineProcess.start`."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        *,
        name: str,
        line_limit: int,
        stderr_sink: IO[bytes] | None,
        stderr_limit: int,
        on_line: LineHook | None,
        jail: Jail | None = None,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._jail = jail
        self.name = name
        self.line_limit = line_limit
        self._on_line = on_line
        self._stdin = proc.stdin
        self._stdout = proc.stdout
        self._stderr = proc.stderr
        self._in_fd = self._stdin.fileno()
        os.set_blocking(self._in_fd, False)

        self._returncode: int | None = None
        self._eof = False
        self._closed = False
        self._close_lock = threading.Lock()
        self._io_lock = threading.Lock()
        self._tail = b""
        self.stderr_error: OSError | None = None  # writing ``stderr_path`` failed (referee's)
        # Stdout, read on demand by the thread that calls read_line (see _fill).
        self._out_fd = self._stdout.fileno()
        self._out_poll = select.poll()
        self._out_poll.register(self._out_fd, select.POLLIN)
        self._items: collections.deque[_Item] = collections.deque()  # read, not yet taken
        self._line = bytearray()  # the start of a line whose newline has not come yet
        self._discarding = False  # inside a too-long line, waiting for its newline
        self._out_done = False  # stdout reached its end (or the process was closed)
        self._read_lock = threading.Lock()  # held while reading stdout; close waits for it
        self._stop_stderr = threading.Event()
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr,
            args=(stderr_sink, stderr_limit),
            name=f"engine-{name}-stderr",
            daemon=True,
        )
        self._stderr_thread.start()

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        stderr_path: str | None = None,
        line_limit: int = DEFAULT_LINE_LIMIT,
        *,
        on_line: LineHook | None = None,
        stderr_limit: int = DEFAULT_STDERR_LIMIT,
        sandbox: Policy | None = None,
    ) -> EngineProcess:
        """Start ``argv`` (never through a shell) in a process group of its own.

        With a ``sandbox`` policy it starts inside bubblewrap with its limits
        (``referee.seat.sandbox``), unless the policy's mode says to run it bare.

        ``env`` entries are added to `minimal_environment`; nothing else is inherited.
        ``stderr_path`` receives the engine's stderr (at most ``stderr_limit`` bytes, the rest is
        drained and dropped); without it stderr is discarded, or handed line by line to
        ``on_line("stderr", ...)`` and the DEBUG log. ``line_limit`` is the longest stdout line
        accepted, in bytes, newline excluded. Raises `EngineStartError` if it cannot start.

        ``on_line`` sees "to" and "from" lines in the thread that calls `send` / `read_line`
        (so in protocol order; lines never read are never reported), and "stderr" lines in the
        stderr thread, where an exception from it is logged and swallowed.
        """
        if not argv:
            raise ValueError("empty argv")
        if line_limit < 1:
            raise ValueError("line_limit must be positive")
        name = name if name is not None else os.path.basename(argv[0])
        full_env = minimal_environment(cwd)
        if env is not None:
            full_env.update(env)
        sink: IO[bytes] | None = None
        if stderr_path is not None:
            # Appended to, so that a restarted engine keeps its earlier crash log. The file is
            # the referee's: an OSError here is raised as it is, never blamed on the engine.
            sink = open(stderr_path, "ab", buffering=0)  # noqa: SIM115 - the stderr thread's
        jail: Jail | None = None
        try:
            if sandbox is not None:
                jail = prepare(argv, cwd, full_env, sandbox)
            proc = _spawn(argv, cwd, full_env, jail, sandbox)
        except (OSError, SandboxError) as exc:
            if sink is not None:
                sink.close()
            if jail is not None:
                jail.release()
            raise EngineStartError(f"{name}: cannot start {argv[0]!r}: {exc}", name=name) from exc
        if jail is not None:
            jail.started()
        logger.debug(
            "%s started: pid %d, argv %r, cwd %r%s",
            name,
            proc.pid,
            list(argv),
            cwd,
            ", sandboxed" if jail is not None else "",
        )
        return cls(
            proc,
            name=name,
            line_limit=line_limit,
            stderr_sink=sink,
            stderr_limit=stderr_limit,
            on_line=on_line,
            jail=jail,
        )

    # ----------------------------------------------------------------------- accessors

    @property
    def pid(self) -> int:
        """The engine's pid, which is also its process group id."""
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """Exit code, or minus the signal number; None while the engine runs."""
        return self._status()

    @property
    def alive(self) -> bool:
        """True while the engine runs and has not been closed."""
        return not self._closed and self._status() is None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def sandboxed(self) -> bool:
        """Whether the engine runs in a sandbox."""
        return self._jail is not None

    @property
    def stderr_tail(self) -> str:
        """The last few kilobytes the engine wrote to stderr, for error messages."""
        return self._tail.decode("utf-8", errors="replace")

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running" if self._status() is None else "exited"
        return f"<EngineProcess {self.name!r} pid={self.pid} {state}>"

    # ----------------------------------------------------------------------- I/O

    def send(self, line: str, timeout: float = 5.0) -> None:
        """Write one line (a newline is added).

        Raises `EngineBrokenPipe` if the engine no longer reads, and `EngineTimeout` if it stops
        reading so long that the pipe stays full for ``timeout`` seconds (the line may then be
        half written; the engine is at fault either way). A line containing a newline is a
        referee bug and raises ValueError.
        """
        self.send_lines((line,), timeout)

    def send_lines(self, lines: Sequence[str], timeout: float = 5.0) -> None:
        """Write several lines with one system call where the pipe allows (as `send`).

        A decision's ``position`` and ``go`` go together, which saves a wake-up of the engine.
        """
        for line in lines:
            if "\n" in line or "\r" in line:
                raise ValueError(f"protocol line contains a line break: {line!r}")
        data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        with self._io_lock:
            if self._closed:
                raise EngineClosed(f"{self.name}: send after close", name=self.name)
            if self._on_line is not None or logger.isEnabledFor(logging.DEBUG):
                for line in lines:
                    self._log("to", line)
            fd = self._in_fd
            view = memoryview(data)
            deadline: float | None = None
            while view:
                try:
                    written = os.write(fd, view)
                except BlockingIOError:
                    written = 0
                except OSError as exc:  # EPIPE mostly; anything else means the same here
                    raise EngineBrokenPipe(
                        self._context(f"cannot write ({exc.strerror})"), name=self.name
                    ) from exc
                view = view[written:]
                if not view:
                    break
                # The pipe is full: the engine has not read its input. Wait for it, a while.
                now = time.monotonic()
                if deadline is None:
                    deadline = now + timeout
                remaining = deadline - now
                if remaining <= 0:
                    raise EngineTimeout(
                        self._context(f"did not read its input within {timeout:.3f}s"),
                        name=self.name,
                    )
                poller = select.poll()
                poller.register(fd, select.POLLOUT)
                poller.poll(max(1, int(remaining * 1000)))

    def read_line(self, timeout: float) -> str:
        """The next line the engine wrote on stdout, without its line ending.

        Raises `EngineTimeout` if no line arrives within ``timeout`` seconds (or `EngineExited`
        if by then the engine has died), `EngineExited` at end of file, and `EngineLineTooLong`
        for a line over ``line_limit`` bytes. After a too-long line the engine keeps running and
        later lines remain readable; it is the caller's decision to forfeit it.
        Invalid UTF-8 is decoded with replacement characters.
        """
        if self._closed:
            raise EngineClosed(f"{self.name}: read after close", name=self.name)
        if self._eof:
            raise self._exited_error()
        items = self._items
        if not items:
            self._fill(timeout)
        if self._closed:
            raise EngineClosed(f"{self.name}: closed while reading", name=self.name)
        item = items.popleft() if items else None
        if type(item) is str:
            if self._on_line is not None or logger.isEnabledFor(logging.DEBUG):
                self._log("from", item)
            return item
        if item is None:
            if self._status() is not None:
                raise self._exited_error()
            raise EngineTimeout(self._context(f"no line within {timeout:.3f}s"), name=self.name)
        if isinstance(item, _TooLong):
            raise EngineLineTooLong(
                self._context(f"wrote a line longer than {item.limit} bytes"), name=self.name
            )
        self._eof = True  # the end of stdout
        self._await_exit(0.5)
        raise self._exited_error()

    # ----------------------------------------------------------------------- shutdown

    def close(self, grace: float = 1.0, quit_line: str | None = None) -> None:
        """Stop the engine and everything it started. Idempotent; never raises EngineError.

        Sends ``quit_line`` if given, closes stdin, waits up to ``grace`` seconds for the engine
        to exit on its own, then SIGKILLs the whole process group (children that survived
        their parent included) and reaps the engine.
        """
        with self._close_lock:
            if self._closed:
                return
            try:
                if quit_line is not None and self._status() is None:
                    with contextlib.suppress(EngineError):
                        self.send(quit_line, timeout=min(grace, 0.5))
                with self._io_lock:
                    self._closed = True
                    self._stdin.close()
                deadline = time.monotonic() + grace
                delay = 0.001
                while self._status() is None and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.02)
                self._kill_group()
                try:
                    self._proc.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    logger.warning("%s: pid %d survived SIGKILL for 5s", self.name, self.pid)
            finally:
                self._closed = True
                self._stop_threads()
                if self._jail is not None:
                    self._jail.release()
            logger.debug("%s closed: %s", self.name, _describe_status(self._proc.returncode))

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _kill_group(self) -> None:
        # The leader is not reaped yet (see _status), so its pid still names this group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def _stop_threads(self) -> None:
        # Unread stdout is of no interest any more; stderr is given a moment to reach its file.
        # A read in progress in another thread ends within _POLL_MS, seeing the process closed.
        if self._read_lock.acquire(timeout=_JOIN_TIMEOUT):
            try:
                self._out_done = True
                self._items.clear()
                self._stdout.close()
            finally:
                self._read_lock.release()
        else:  # never expected: a read polls the closed flag
            logger.warning("%s: a read of stdout did not end; leaving its pipe open", self.name)
        self._stderr_thread.join(_JOIN_TIMEOUT / 2)
        self._stop_stderr.set()
        self._stderr_thread.join(_JOIN_TIMEOUT)
        if self._stderr_thread.is_alive():  # never expected: the thread polls its stop flag
            logger.warning(
                "%s: %s did not stop; leaving its pipe open", self.name, self._stderr_thread.name
            )
        else:
            self._stderr.close()

    # ----------------------------------------------------------------------- internals

    def _status(self) -> int | None:
        """Exit status without reaping the engine (so its pid keeps naming the group)."""
        if self._returncode is not None:
            return self._returncode
        if self._proc.returncode is not None:
            self._returncode = self._proc.returncode
            return self._returncode
        try:
            info = os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped meanwhile by close()
            return self._proc.returncode
        if info is None or info.si_pid == 0:
            return None
        if info.si_code == os.CLD_EXITED:
            self._returncode = info.si_status
        else:  # CLD_KILLED, CLD_DUMPED
            self._returncode = -info.si_status
        return self._returncode

    def _await_exit(self, limit: float) -> None:
        deadline = time.monotonic() + limit
        while self._status() is None and time.monotonic() < deadline:
            time.sleep(0.005)

    def exit_error(self) -> EngineExited:
        """What a read would raise now that the engine has exited: its status and the end of
        its stderr."""
        return self._exited_error()

    def _exited_error(self) -> EngineExited:
        code = self._status()
        code = self._status()
        if code is not None:  # give the last words on stderr a moment to arrive
            self._stderr_thread.join(_JOIN_TIMEOUT / 5)
        shown = code
        if self._jail is not None and code is not None and 128 < code < 128 + 65:
            shown = 128 - code  # bwrap exits with 128 + N when its command died of signal N
        status = _describe_status(shown)
        message = self._context(status)
        limit = self._jail.limit_hit(self.stderr_tail) if self._jail is not None else None
        if limit is not None:
            message = f"{limit}: {message}"
            status = f"{limit}: {status}"
        return EngineExited(
            message + self.sandbox_note(), name=self.name, returncode=code, status=status
        )

    def sandbox_note(self) -> str:
        """When the sandbox is why the engine failed (its stderr says it could not find a
        path that exists here but that the sandbox hides): ``"; the sandbox hides PATH: ...
        add --read ..."``; else ``""``."""
        return self._jail.blocked_note(self.stderr_tail) if self._jail is not None else ""

    def _context(self, what: str) -> str:
        message = f"engine {self.name!r} (pid {self.pid}) {what}"
        tail = self.stderr_tail.strip()
        if tail:
            lines = tail.splitlines()[-3:]
            message += f"; stderr ends: {' | '.join(lines)[-300:]!r}"
        return message

    def _log(self, direction: str, line: str) -> None:
        logger.debug("%s %s: %s", self.name, direction, line)
        if self._on_line is not None:
            self._on_line(direction, line)

    def _wait_readable(self, fd: int, stop: threading.Event) -> bool:
        """Poll ``fd`` until it is readable (True) or ``stop`` is set (False)."""
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while not stop.is_set():
            if poller.poll(_POLL_MS):
                return True
        return False

    def ready(self) -> bool:
        """Whether a line (or the end of stdout) can be read now without waiting."""
        if self._items or self._out_done:
            return True
        if self._closed:
            return False
        return bool(self._out_poll.poll(0))

    def _fill(self, timeout: float) -> None:
        """Read stdout until at least one item (a line, a too-long mark or the end) is
        waiting in ``_items``, ``timeout`` seconds have passed, or the process is closed.

        The bytes are cut into lines as they come: a line is kept up to ``line_limit`` bytes,
        beyond which it is dropped, a too-long mark queued in its place and the rest of it
        discarded up to its newline. So memory holds one chunk and one line at most.
        """
        with self._read_lock:
            if self._out_done or self._closed:
                return
            items = self._items
            fd = self._out_fd
            poll = self._out_poll.poll
            deadline = 0.0
            if timeout > 0:
                deadline = time.monotonic() + timeout
            wait = max(0, min(_POLL_MS, math.ceil(timeout * 1000)))
            while True:
                if not poll(wait):
                    if self._closed:
                        return
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    wait = min(_POLL_MS, math.ceil(left * 1000))
                    continue
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    line = self._line
                    if line and not self._discarding and not self._closed:
                        items.append(_decode(line))  # a last line without its newline
                    line.clear()
                    items.append(_EOF)
                    self._out_done = True
                    return
                self._cut(chunk)
                if items:
                    return

    def _cut(self, chunk: bytes) -> None:
        """Cut ``chunk`` into lines onto ``_items``; keep an unfinished line in ``_line``."""
        items = self._items
        line = self._line
        limit = self.line_limit
        start = 0
        if not self._discarding and not line:
            # The common case: whole short lines. Each is decoded straight from the chunk.
            newline = chunk.find(b"\n")
            while newline >= 0 and newline - start <= limit:
                items.append(_decode(chunk[start:newline]))
                start = newline + 1
                newline = chunk.find(b"\n", start)
        while True:
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            if not self._discarding:
                line += chunk[start:end]
                if len(line) > limit:
                    line.clear()
                    self._discarding = True
                    items.append(_TooLong(limit))
            if newline < 0:
                break
            if self._discarding:
                self._discarding = False
            else:
                items.append(_decode(line))
            line.clear()
            start = newline + 1

    def _drain_stderr(self, sink: IO[bytes] | None, cap: int) -> None:
        """Stderr thread: always read, so the engine never blocks; keep a tail for messages."""
        fd = self._stderr.fileno()
        want_lines = sink is None and (
            self._on_line is not None or logger.isEnabledFor(logging.DEBUG)
        )
        written = 0
        line = bytearray()
        try:
            while self._wait_readable(fd, self._stop_stderr):
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                self._tail = (self._tail + chunk)[-_TAIL_BYTES:]
                if sink is not None:
                    if written < cap:
                        part = chunk[: cap - written]
                        written += len(part)
                        if written >= cap:
                            part += b"\n[referee: stderr truncated here]\n"
                        sink = self._keep_stderr(sink, part)
                elif want_lines:
                    *complete, rest = (bytes(line) + chunk).split(b"\n")
                    line = bytearray(rest[: self.line_limit])
                    for raw in complete:
                        self._log_stderr(_decode(raw[: self.line_limit]))
            if want_lines and line:
                self._log_stderr(_decode(line))
        finally:
            if sink is not None:
                self._keep_stderr(sink, None)

    def _keep_stderr(self, sink: IO[bytes], data: bytes | None) -> IO[bytes] | None:
        """Write ``data`` to the stderr file (``None``: close it). A failure is the referee's
        (a full disk, say): noted in ``stderr_error`` for the referee to act on, and the file
        is given up, while the engine's stderr goes on being drained."""
        try:
            if data is None:
                sink.close()
                return None
            while data:  # unbuffered, so that a full disk is found out at once
                written = sink.write(data)
                if not written:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                data = data[written:]
            return sink
        except OSError as exc:
            self.stderr_error = self.stderr_error or exc
            with contextlib.suppress(OSError):
                sink.close()
            return None

    def _log_stderr(self, line: str) -> None:
        try:
            self._log("stderr", line)
        except Exception:  # a faulty hook must not stop the drain
            logger.exception("%s: on_line hook failed on a stderr line", self.name)
