"""One untrusted engine process: start it, exchange lines with timeouts, and kill it.

An engine is a program we did not write and must not trust. This module guarantees that whatever
the engine does (answer late, never answer, flood stdout or stderr, print a line of ten megabytes,
crash, ignore ``quit``, leave children behind) the referee sees one of a few `EngineError`s with a
short machine ``reason`` and never blocks for longer than the timeout it asked for.

Design (synchronous, thread based, so that a match runner can run N games in N threads):

- The engine runs in its own session and process group (``start_new_session=True``), from an argv
  list and never through a shell, with a minimal environment; given a sandbox policy, inside
  bubblewrap with its limits (``referee.sandbox`` builds that command and cleans up after it).
- A reader thread cuts stdout into lines of at most ``line_limit`` bytes and feeds them to an inbox
  that is bounded in bytes: an engine that floods stdout fills its own pipe and is slowed down,
  while the referee's memory stays flat.
- A second thread always drains stderr, into a file or nowhere, so a chatty engine never blocks on
  a full stderr pipe. The last few kilobytes are kept to give error messages some context.
- `EngineProcess.close` kills the whole process group with SIGKILL, grandchildren included, and
  reaps the engine. The engine is only ever reaped there, so the group id stays reserved (by the
  zombie) until the group has been killed, and a recycled pid can never be hit by mistake.
- Every protocol line goes to ``logging`` at DEBUG with the engine's name and direction, and to an
  optional ``on_line(direction, line)`` callback.

Reading stdout in the game thread itself (poll and read, no hand-over) costs less CPU, but on a
busy Linux machine it answers several times slower: the engine runs in a session of its own,
the scheduler shares the CPU out between sessions (autogroup), and a thread that has just done
the referee's work and sleeps in ``poll`` is woken late, while a reader thread that does
nothing else is woken at once (``bench/throughput.py`` shows both round trips).

Each `EngineProcess` costs two threads. One game thread drives ``send`` / ``read_line`` /
``close``; ``close`` may also be called from another thread to abort a game.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import IO, Final, Self

from referee.sandbox import Jail, Policy, SandboxError, prepare

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

    def __init__(self, message: str, *, name: str = "", returncode: int | None = None) -> None:
        super().__init__(message, name=name)
        self.returncode = returncode


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


class _Inbox:
    """Lines from the reader thread to the game thread, bounded in bytes (not in count)."""

    def __init__(self, max_bytes: int) -> None:
        self._cond = threading.Condition()
        self._items: collections.deque[_Item] = collections.deque()
        self._bytes = 0
        self._max_bytes = max_bytes
        self._closed = False

    def put(self, item: _Item) -> bool:
        """Queue an item, waiting while the inbox is full; False once the inbox is closed."""
        size = len(item) if isinstance(item, str) else 0
        with self._cond:
            while self._items and self._bytes + size > self._max_bytes and not self._closed:
                self._cond.wait()
            if self._closed:
                return False
            self._items.append(item)
            self._bytes += size
            self._cond.notify_all()
            return True

    def get(self, timeout: float) -> _Item | None:
        """The next item, or None if nothing came within ``timeout`` seconds or it was closed."""
        with self._cond:
            self._cond.wait_for(lambda: bool(self._items) or self._closed, max(timeout, 0.0))
            if not self._items:
                return None
            item = self._items.popleft()
            if isinstance(item, str):
                self._bytes -= len(item)
            self._cond.notify_all()
            return item

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def pending(self) -> bool:
        """Whether an item waits (a line, or a mark), without waiting for one."""
        return bool(self._items)


# --------------------------------------------------------------------------- the process


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
        self._inbox = _Inbox(2 * line_limit + _CHUNK)
        self._stop_stdout = threading.Event()
        self._stop_stderr = threading.Event()
        self._stdout_thread = threading.Thread(
            target=self._read_stdout, name=f"engine-{name}-stdout", daemon=True
        )
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr,
            args=(stderr_sink, stderr_limit),
            name=f"engine-{name}-stderr",
            daemon=True,
        )
        self._stdout_thread.start()
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
        """Start ``argv`` (never through a shell) in its own process group.

        With a ``sandbox`` policy it starts inside bubblewrap with its limits
        (``referee.sandbox``), unless the policy's mode says to run it bare.

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
            proc = subprocess.Popen(
                jail.command if jail is not None else _die_with_parent(argv, cwd, full_env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=full_env,
                start_new_session=True,
                close_fds=True,
                pass_fds=jail.pass_fds if jail is not None else (),
                bufsize=0,
            )
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

    def ready(self) -> bool:
        """Whether a line (or the end of stdout) waits to be read, without waiting."""
        return self._inbox.pending()

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
        item = self._inbox.get(timeout)
        if self._closed:
            raise EngineClosed(f"{self.name}: closed while reading", name=self.name)
        if item is None:
            if self._status() is not None:
                raise self._exited_error()
            raise EngineTimeout(self._context(f"no line within {timeout:.3f}s"), name=self.name)
        if isinstance(item, _TooLong):
            raise EngineLineTooLong(
                self._context(f"wrote a line longer than {item.limit} bytes"), name=self.name
            )
        if isinstance(item, _Eof):
            self._eof = True
            self._await_exit(0.5)
            raise self._exited_error()
        self._log("from", item)
        return item

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
        self._stop_stdout.set()
        self._inbox.close()
        self._stderr_thread.join(_JOIN_TIMEOUT / 2)
        self._stop_stderr.set()
        for thread, pipe in (
            (self._stdout_thread, self._stdout),
            (self._stderr_thread, self._stderr),
        ):
            thread.join(_JOIN_TIMEOUT)
            if thread.is_alive():  # never expected: the threads poll their stop flags
                logger.warning("%s: %s did not stop; leaving its pipe open", self.name, thread.name)
            else:
                pipe.close()

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

    def _exited_error(self) -> EngineExited:
        code = self._status()
        code = self._status()
        if code is not None:  # give the last words on stderr a moment to arrive
            self._stderr_thread.join(_JOIN_TIMEOUT / 5)
        shown = code
        if self._jail is not None and code is not None and 128 < code < 128 + 65:
            shown = 128 - code  # bwrap exits with 128 + N when its command died of signal N
        message = self._context(_describe_status(shown))
        limit = self._jail.limit_hit(self.stderr_tail) if self._jail is not None else None
        if limit is not None:
            message = f"{limit}: {message}"
        return EngineExited(message, name=self.name, returncode=code)

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

    def _read_stdout(self) -> None:
        """Reader thread: stdout bytes -> bounded lines -> inbox. Memory stays below the limit."""
        fd = self._stdout.fileno()
        limit = self.line_limit
        line = bytearray()
        discarding = False  # inside a too-long line, waiting for its newline
        try:
            while self._wait_readable(fd, self._stop_stdout):
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                start = 0
                while True:
                    newline = chunk.find(b"\n", start)
                    end = len(chunk) if newline < 0 else newline
                    if not discarding:
                        line += chunk[start:end]
                        if len(line) > limit:
                            line.clear()
                            discarding = True
                            if not self._inbox.put(_TooLong(limit)):
                                return
                    if newline < 0:
                        break
                    if discarding:
                        discarding = False
                    elif not self._inbox.put(_decode(line)):
                        return
                    line.clear()
                    start = newline + 1
            if line and not discarding and not self._stop_stdout.is_set():
                self._inbox.put(_decode(line))  # a last line without its newline
        finally:
            self._inbox.put(_EOF)

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
