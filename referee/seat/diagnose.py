"""What to do when an engine does not start: the usual first-bot mistakes, named.

An engine that cannot start fails with what the system says (``[Errno 13] Permission
denied``, ``1: import: not found``, a ``ModuleNotFoundError``) or with silence (``no ginok
within 10s``). Those are true, and of little help to someone writing a first bot. This module
looks at what the referee knows, the engine's command, the files it names, its standard error
and whether it wrote anything at all, and says what to change:

- `command_problem`, before or instead of a start: a file that is not executable, a file of
  this folder named without ``./`` (a bare word is looked up on ``PATH``), a program of the
  referee's own environment that is not on ``PATH`` (``gin-policy``), a misspelt built-in
  engine. These replace the system's error: they are the whole story.
- `start_hint`, after a failed start: a script with no ``#!`` line, a Python that lacks a
  module the engine imports (naming that Python), an engine that wrote nothing at all (most
  often: it does not flush its output).

The hints are the same with the sandbox on or off, since they come from the command and the
files, not from how the start failed.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence

from engines import BUILTIN
from ginproto import protocol as proto

__all__ = ["command_problem", "quote_hint", "start_hint"]

_INTERPRETERS = {".py": "python3", ".js": "node", ".sh": "sh", ".rb": "ruby", ".pl": "perl"}
_IMPORT_ERROR = re.compile(r"\b(ModuleNotFoundError|ImportError)\b[^\n]*")


def _path(env: dict[str, str]) -> str:
    """The PATH the engine is started with (``referee.seat.process``)."""
    return env.get("PATH", os.environ.get("PATH", os.defpath))


def _file(program: str, cwd: str | None) -> str:
    return os.path.join(cwd or os.getcwd(), program)


def _interpreter_for(program: str) -> str:
    """The interpreter a script is most likely written for, by its name."""
    return _INTERPRETERS.get(os.path.splitext(program)[1].lower(), "python3")


def _first_line(path: str) -> bytes | None:
    """The first bytes of a regular file, or None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read(256)
    except OSError:
        return None


def _is_text(head: bytes) -> bool:
    return b"\0" not in head and not head.startswith(b"\x7fELF")


def command_problem(
    argv: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None
) -> str | None:
    """What is wrong with the engine command ``argv`` before it even runs, as one sentence
    that says what to do; None if nothing is known to be wrong."""
    if not argv:
        return None
    program = argv[0]
    rest = list(argv[1:])
    path = _path(env or {})
    if os.sep not in program:
        if shutil.which(program, path=path) is not None:
            return None
        if os.path.isfile(_file(program, cwd)):
            fixed = shlex.join([f".{os.sep}{program}", *rest])
            return (
                f"{program!r} is a file in this folder, but a command without a '/' is looked"
                f" up on PATH: write {fixed!r}"
                f" (or {shlex.join([_interpreter_for(program), program, *rest])!r})"
            )
        beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), program)
        if os.path.isfile(beside) and os.access(beside, os.X_OK):
            # A console script of the referee's own environment (gin-policy) that is not active.
            activate = os.path.join(os.path.dirname(beside), "activate")
            other = f", or activate the environment ('. {activate}')"
            return (
                f"{program!r} is not on PATH, but the referee's environment has it: write"
                f" {shlex.join([beside, *rest])!r}{other if os.path.isfile(activate) else ''}"
            )
        if not rest:
            close = difflib.get_close_matches(program, list(BUILTIN), n=1)
            if close:
                return (
                    f"{program!r} is no built-in engine and no program: did you mean"
                    f" {close[0]!r}? (built-in: {', '.join(BUILTIN)})"
                )
        return None
    file = _file(program, cwd)
    if os.path.isfile(file) and not os.access(file, os.X_OK):
        head = _first_line(file) or b""
        runner = _shebang_program(head) or _interpreter_for(program)
        return (
            f"{program} is not executable: make it so with 'chmod +x {program}', or run it"
            f" with its interpreter: {shlex.join([runner, program, *rest])!r}"
        )
    return None


def _shebang_program(head: bytes) -> str | None:
    """The program a ``#!`` line names (``python3`` for ``#!/usr/bin/env python3``)."""
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        return words[0] if words else None
    return words[0]


def _interpreter(argv: Sequence[str], cwd: str | None, path: str) -> tuple[str, str] | None:
    """The interpreter that ran the engine, found as the system finds it, and the script it
    ran: from the ``#!`` line of the program, or the program itself (``python3 bot.py``)."""
    program = argv[0]
    if os.sep in program and os.path.isfile(_file(program, cwd)):
        named = _shebang_program(_first_line(_file(program, cwd)) or b"")
        if named is None:
            return None
        found = named if os.sep in named else shutil.which(named, path=path)
        return (found or named), program
    found = shutil.which(program, path=path) if os.sep not in program else program
    script = next((a for a in argv[1:] if not a.startswith("-")), "bot.py")
    return (found or program), script


def start_hint(
    argv: Sequence[str],
    stderr: str,
    heard: bool,
    *,
    timed_out: bool,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """What to try after the engine ``argv`` failed to start, as ``"; ..."`` to add to the
    error, or ``""``. ``stderr`` is the end of its standard error, ``heard`` whether it wrote
    any line on its output, ``timed_out`` whether the handshake ran out of time."""
    path = _path(env or {})
    program = argv[0]
    if os.sep in program:
        file = _file(program, cwd)
        head = _first_line(file) if os.path.isfile(file) else None
        if head is not None and _is_text(head) and not head.startswith(b"#!"):
            runner = _interpreter_for(program)
            return (
                f"; {program} has no '#!' line, so the system runs it as a shell script: add"
                f" '#!/usr/bin/env {runner}' as its first line, or name the interpreter:"
                f" {shlex.join([runner, *argv])!r}"
            )
    imported = _IMPORT_ERROR.search(stderr)
    if imported is not None:
        ran = _interpreter(argv, cwd, path)
        if ran is not None and re.match(r"(python|pypy)", os.path.basename(ran[0])):
            interpreter, script = ran
            # A virtual environment's python is a link to the system's: compared by folder.
            same = os.path.dirname(os.path.abspath(sys.executable)) == os.path.dirname(
                os.path.abspath(interpreter)
            )
            other = "/path/to/.venv/bin/python" if same else sys.executable
            return (
                f"; it ran with {interpreter}, which cannot import a module it needs"
                f" ({imported.group(0).strip()[:120]}): install the module for that Python,"
                f" or run the engine with another one: {shlex.join([other, script])!r}"
            )
    if timed_out and not heard and not re.search(r"Error\b", stderr):
        return (
            f"; it wrote nothing at all: a bot that answers {proto.GIN} may not flush its"
            " output (each line must be flushed: print(..., flush=True) or"
            " sys.stdout.flush() in Python, or run it with python3 -u)"
        )
    return ""


_RUNNERS = re.compile(
    r"(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|java|ruby|perl|php|lua|julia|Rscript"
    r"|sh|bash|dash|zsh)"
)
"""Interpreters: a file named after one is its script, not an engine of its own."""


def quote_hint(words: Sequence[str], command: str) -> str | None:
    """For ``ginref check python3 bot.py``: the command split in several arguments, where an
    interpreter (a program on PATH) is followed by a file that exists. The message to show,
    or None."""
    for i, word in enumerate(words[:-1]):
        if word in BUILTIN or " " in word or not _RUNNERS.fullmatch(os.path.basename(word)):
            continue
        following = words[i + 1]
        if following in BUILTIN or shutil.which(word) is None:
            continue
        if os.path.isfile(following):
            end = i + 2
            while end < len(words) and os.path.isfile(words[end]) and words[end] not in BUILTIN:
                end += 1
            joined = shlex.join(words[i:end])
            fixed = [*words[:i], f'"{joined}"', *words[end:]]
            return (
                f"an engine's command is one argument: put it in quotes, as in"
                f" ginref {command} {' '.join(fixed)}"
            )
    return None
