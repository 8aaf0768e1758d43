"""What a sandboxed engine may read: the directories its command needs, and no more.

A command names what it needs: its program (found on its ``PATH``), the interpreter of a
script's ``#!`` line, and the files among its arguments. A program's install root comes with
it (``/opt/py/bin/python3`` brings ``/opt/py``), along its chain of symbolic links; a Python
virtual environment brings its base Python and its editable installs; the referee's own
interpreter brings the built-in engines' packages. The system directories are read by every
engine, so they are never listed here. `to_hide` then picks the referee's own paths that lie
inside what an engine reads, to be covered up.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import engines
import ginproto

__all__ = ["SYSTEM_DIRS", "needed", "to_hide", "which"]

SYSTEM_DIRS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def needed(argv: Sequence[str], workdir: str | None, path_var: str) -> list[str]:
    """The directories the command needs, outside the system directories, without nesting."""
    dirs: set[str] = set()
    base = workdir or os.getcwd()
    if workdir is not None:
        dirs.add(workdir)
    program = argv[0]
    found = which(program, base, path_var)
    if found is not None:
        dirs.update(_program_dirs(found, path_var))
        if os.path.realpath(found) == os.path.realpath(sys.executable):
            # The referee's own interpreter runs the built-in engines: their packages.
            for package in (engines, ginproto):
                dirs.add(str(Path(package.__file__ or "").resolve().parent))
    for arg in argv[1:]:
        if arg.startswith("-") or not arg:
            continue
        path = os.path.join(base, arg)
        if os.path.exists(path) and not _inside(os.path.abspath(path), "/dev"):
            real = os.path.realpath(path)
            for candidate in (os.path.abspath(path), real):
                dirs.add(candidate if os.path.isdir(candidate) else os.path.dirname(candidate))
    # /tmp is the engine's own; a command naming the referee's /tmp itself gets none of it.
    return _outermost(
        d for d in dirs if d and not _system(d) and not _inside("/tmp", d) and os.path.isdir(d)
    )


def which(program: str, base: str, path_var: str) -> str | None:
    if os.sep in program:
        path = os.path.join(base, program)
        return os.path.abspath(path) if os.path.exists(path) else None
    return shutil.which(program, path=path_var)


def _program_dirs(program: str, path_var: str, depth: int = 0) -> set[str]:
    """The install roots of a program, along its chain of symbolic links, and of the
    interpreter its ``#!`` line names; a virtual environment's base Python and its editable
    installs."""
    dirs: set[str] = set()
    chain = [os.path.abspath(program)]
    seen = 0
    while os.path.islink(chain[-1]) and seen < 20:
        seen += 1
        target = os.readlink(chain[-1])
        chain.append(os.path.normpath(os.path.join(os.path.dirname(chain[-1]), target)))
    chain.append(os.path.realpath(program))
    for path in chain:
        dirs.add(_root_of(path))
    for root in list(dirs):
        dirs |= _venv_dirs(root)
    if depth == 0:
        interpreter = _shebang(os.path.realpath(program))
        if interpreter:
            first = interpreter[0]
            if os.path.basename(first) == "env" and len(interpreter) > 1:
                first = shutil.which(interpreter[1], path=path_var) or first
            dirs |= _program_dirs(first, path_var, depth + 1)
    return dirs


def _root_of(path: str) -> str:
    """``/opt/py/bin/python3`` -> ``/opt/py`` (a prefix with ``lib``); else the file's folder."""
    folder = os.path.dirname(path)
    if os.path.basename(folder) == "bin":
        prefix = os.path.dirname(folder)
        if any(os.path.exists(os.path.join(prefix, n)) for n in ("pyvenv.cfg", "lib")):
            return prefix
    return folder


def _venv_dirs(root: str) -> set[str]:
    """For a virtual environment: its base Python's prefix and its editable installs."""
    dirs: set[str] = set()
    cfg = os.path.join(root, "pyvenv.cfg")
    try:
        text = Path(cfg).read_text()
    except OSError:
        return dirs
    home = re.search(r"^home\s*=\s*(.+)$", text, re.MULTILINE)
    if home:
        dirs.add(_root_of(os.path.join(home.group(1).strip(), "python")))
    for site in Path(root).glob("lib*/python*/site-packages"):
        for pth in site.glob("*.pth"):
            for line in _read(pth).splitlines():
                if line.startswith("/") and os.path.isdir(line.strip()):
                    dirs.add(line.strip())
        for finder in site.glob("__editable__*finder.py"):
            mapping = re.search(r"^MAPPING[^=]*=\s*(\{.*\})\s*$", _read(finder), re.MULTILINE)
            if mapping:
                with contextlib.suppress(ValueError, SyntaxError):
                    for value in ast.literal_eval(mapping.group(1)).values():
                        if isinstance(value, str) and os.path.exists(value):
                            dirs.add(value if os.path.isdir(value) else os.path.dirname(value))
    return dirs


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _shebang(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    return head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system(path: str) -> bool:
    return any(_inside(path, d) for d in SYSTEM_DIRS) or path in ("/", "/etc")


def _outermost(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(_inside(path, kept) for kept in out):
            out.append(path)
    return sorted(out)


def to_hide(hidden: Sequence[str], readable: Sequence[str]) -> list[str]:
    """The referee's paths inside a readable directory; never one that would cover a
    directory the engine needs."""
    out = []
    for raw in hidden:
        path = os.path.abspath(raw)
        if not os.path.lexists(path):
            continue
        inside = any(_inside(path, d) for d in readable)
        covers = any(_inside(d, path) for d in readable)
        if inside and not covers:
            out.append(path)
    return _outermost(out)
