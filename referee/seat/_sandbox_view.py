"""What a sandboxed engine may read: what its command needs, and what it is known to start.

A command names what it needs: its program (found on its ``PATH``), the interpreter of a
script's ``#!`` line, and the files among its arguments (``FILE:NAME`` names ``FILE``, as in
``gin-policy mybot.py:act``). A program comes with its install (`install_root`:
``/opt/py/bin/python3`` brings ``/opt/py``, a pyenv shim brings the pyenv root), along its
chain of symbolic links; a Python virtual environment brings its base Python and its editable
installs; the referee's own interpreter brings the built-in engines' packages. A file
directly in ``/tmp`` is shown by itself (the engine's ``/tmp`` is its own).

Besides, what the engine is known to start (`inferred`): the installs of the directories on
its ``PATH``, and the paths a wrapper script names in its text (absolute, ``~/`` and
``$HOME/``), never a system folder for sockets or secrets (`_private`). The system
directories are read by every engine, so they are never listed here. `to_hide` then picks
the referee's own paths that lie inside what an engine reads, to be covered up, and
`sockets` the Unix sockets there (a read-only bind does not stop ``connect()``).

`blocked` reads an engine's last words (``No such file or directory``, ``not found``...)
for paths that exist but that its sandbox hides, so that the referee can say which and how
to show them.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import engines
import ginproto

__all__ = [
    "SYSTEM_DIRS",
    "blocked",
    "inferred",
    "inside",
    "install_root",
    "needed",
    "outermost",
    "sockets",
    "to_hide",
    "user_home",
    "visible",
    "which",
]

SYSTEM_DIRS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

_NEVER: Final = ("/proc", "/sys", "/dev", "/run", "/var/run", "/boot", "/etc")
"""Never shown for what a command names or starts: sockets, devices, the system's secrets
(the few files of ``/etc`` an engine needs are shown on their own)."""

_SECRETS: Final = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config",
    ".local/share",
    ".password-store",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
)
"""In the user's home: never shown for what a PATH or a script names."""

_CLIMB: Final = 4  # a file's folder and up to three above it, for its install
_SCRIPT_BYTES: Final = 64 << 10
_SCRIPTS: Final = 4  # wrapper scripts read for paths, at most
_SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})


def needed(argv: Sequence[str], workdir: str | None, path_var: str) -> list[str]:
    """The directories the command needs, outside the system directories, without nesting
    (a file directly in ``/tmp`` named on the command line: the file itself)."""
    dirs: set[str] = set()
    base = workdir or os.getcwd()
    if workdir is not None:
        dirs.add(workdir)
    program = argv[0]
    found = which(program, base, path_var)
    if found is not None:
        dirs.update(_expand(_program_roots(found, path_var)))
        if os.path.realpath(found) == os.path.realpath(sys.executable):
            # The referee's own interpreter runs the built-in engines: their packages.
            for package in (engines, ginproto):
                dirs.add(str(Path(package.__file__ or "").resolve().parent))
    for arg in argv[1:]:
        if arg.startswith("-") or not arg:
            continue
        path = os.path.join(base, arg)
        if not os.path.exists(path) and ":" in arg:
            # FILE:NAME names FILE (gin-policy's mybot.py:act, as Python tools write it)
            path = os.path.join(base, arg.rpartition(":")[0])
        if os.path.exists(path) and not inside(os.path.abspath(path), "/dev"):
            real = os.path.realpath(path)
            for candidate in (os.path.abspath(path), real):
                dirs.add(_folder_of(candidate))
    # /tmp is the engine's own; a command naming the referee's /tmp itself gets none of it.
    return outermost(
        d for d in dirs if d and not _system(d) and not inside("/tmp", d) and os.path.exists(d)
    )


def inferred(
    argv: Sequence[str], workdir: str, path_var: str, hidden: Sequence[str] = ()
) -> list[str]:
    """What the command is known to start, beyond what it names: the installs of the
    directories on its ``PATH`` (``/opt/node/bin`` brings ``/opt/node``, a version manager's
    ``shims`` its root), and the paths its wrapper scripts name (absolute, ``~/`` and
    ``$HOME/``, ``~`` being the user's home), with their installs. Never a system
    directory, a private one (`_private`), the host's ``/tmp`` for an absolute path, or a
    path inside one of the referee's ``hidden`` ones."""
    home = user_home()
    roots: set[str] = set()
    for entry in path_var.split(os.pathsep):
        if os.path.isabs(entry) and os.path.isdir(entry) and not inside(entry, "/tmp"):
            roots.add(install_root(os.path.normpath(entry)))
    for script in _scripts(argv, workdir, path_var):
        for path in _paths_in(script, home):
            if os.path.exists(path):
                if os.path.isfile(path) and os.access(path, os.X_OK):
                    roots |= _program_roots(path, path_var, depth=1)
                else:
                    roots.add(install_root(path))
    hidden_abs = [os.path.abspath(h) for h in hidden]
    return outermost(
        d
        for d in _expand(roots)
        if d
        and os.path.exists(d)
        and not _system(d)
        and not _private(d, home)
        and not any(inside(d, h) for h in hidden_abs)
    )


def which(program: str, base: str, path_var: str) -> str | None:
    if os.sep in program:
        path = os.path.join(base, program)
        return os.path.abspath(path) if os.path.exists(path) else None
    return shutil.which(program, path=path_var)


def user_home() -> str:
    """The user's real home (the referee's ``HOME``), which ``~`` and ``$HOME`` name in a
    wrapper script; the engine's own home is elsewhere."""
    return os.path.normpath(os.path.expanduser("~"))


def _program_roots(program: str, path_var: str, depth: int = 0) -> set[str]:
    """The installs of a program, along its chain of symbolic links, and of the
    interpreter its ``#!`` line names (`_expand` adds what they bring)."""
    dirs: set[str] = set()
    chain = [os.path.abspath(program)]
    seen = 0
    while os.path.islink(chain[-1]) and seen < 20:
        seen += 1
        target = os.readlink(chain[-1])
        chain.append(os.path.normpath(os.path.join(os.path.dirname(chain[-1]), target)))
    chain.append(os.path.realpath(program))
    for path in chain:
        dirs.add(install_root(path))
    if depth == 0:
        interpreter = _shebang(os.path.realpath(program))
        if interpreter:
            first = interpreter[0]
            if os.path.basename(first) == "env" and len(interpreter) > 1:
                first = shutil.which(interpreter[1], path=path_var) or first
            dirs |= _program_roots(first, path_var, depth + 1)
    return dirs


def install_root(path: str) -> str:
    """The install a file or folder belongs to: the nearest of its folder and the three above
    it that is an install (`_is_install`: ``/opt/py/bin/python3`` -> ``/opt/py``,
    ``~/.pyenv/shims/python3`` -> ``~/.pyenv``), never a top-level folder, the home or above;
    else its folder (a file directly in ``/tmp``: the file itself)."""
    path = os.path.abspath(path)
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    candidate = folder
    for _ in range(_CLIMB):
        if _too_broad(candidate) or _system(candidate):
            break
        if _is_install(candidate):
            return candidate
        candidate = os.path.dirname(candidate)
    return _folder_of(path)


def _is_install(folder: str) -> bool:
    """A virtual environment, a prefix (``bin`` and ``lib``), or a version manager's root
    (``shims`` or ``bin``, with ``libexec``, ``versions`` or ``installs``: pyenv, rbenv,
    nodenv, asdf...)."""
    def has(name: str) -> bool:
        return os.path.isdir(os.path.join(folder, name))

    if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
        return True
    if has("bin") and has("lib"):
        return True
    return (has("shims") or has("bin")) and (has("libexec") or has("versions") or has("installs"))


def _expand(roots: Iterable[str]) -> set[str]:
    """Installs with what each brings (`_install_dirs`)."""
    out: set[str] = set()
    for root in set(roots):
        out |= _install_dirs(root)
    return out


def _install_dirs(root: str) -> set[str]:
    """An install and what it brings: a virtual environment's base Python and editable
    installs; for a version manager's root, the versions that are links or virtual
    environments elsewhere."""
    dirs = {root} | _venv_dirs(root)
    versions = os.path.join(root, "versions")
    if os.path.isdir(os.path.join(root, "shims")) and os.path.isdir(versions):
        with contextlib.suppress(OSError):
            for entry in os.scandir(versions):
                real = os.path.realpath(entry.path)
                if not inside(real, root):
                    dirs.add(install_root(real))
                dirs |= _venv_dirs(real)
    return dirs


def _folder_of(path: str) -> str:
    """A folder itself, a file's folder; a file directly in ``/tmp`` itself (the engine's
    ``/tmp`` is its own, and shows only the files named)."""
    if os.path.isdir(path):
        return path
    folder = os.path.dirname(path)
    return path if folder == "/tmp" else folder


def _too_broad(folder: str) -> bool:
    """``/``, a top-level folder (``/opt``, ``/home``, ``/tmp``), the user's home or above it,
    and ``~/.local`` (its ``share`` holds the user's data): never an install to show whole."""
    home = user_home()
    return (
        folder.count("/") <= 1
        or inside(home, folder)
        or folder == os.path.join(home, ".local")
    )


def _private(path: str, home: str) -> bool:
    """Never shown for what a command starts: sockets, devices and system secrets
    (`_NEVER`), the home itself and its secrets (`_SECRETS`), the home's ancestors."""
    if any(inside(path, d) for d in _NEVER) or inside(home, path) or path == "/":
        return True
    return any(inside(path, os.path.join(home, name)) for name in _SECRETS)


def _scripts(argv: Sequence[str], workdir: str, path_var: str) -> list[str]:
    """The wrapper scripts of a command: its program and the interpreter its ``#!`` line
    finds, when they are scripts; for a shell, the script it is given."""
    out: list[str] = []
    program = which(argv[0], workdir, path_var)
    if program is None:
        return out
    program = os.path.realpath(program)
    line = _shebang(program)
    if line:
        out.append(program)
        first = line[0]
        if os.path.basename(first) == "env" and len(line) > 1:
            first = shutil.which(line[1], path=path_var) or first
        first = os.path.realpath(first)
        if _shebang(first):
            out.append(first)
    elif os.path.basename(program) in _SHELLS:
        for arg in argv[1:]:
            path = os.path.join(workdir, arg)
            if not arg.startswith("-") and os.path.isfile(path):
                out.append(os.path.realpath(path))
                break
    return out[:_SCRIPTS]


_HOME_PATH: Final = re.compile(r"(?:\$\{HOME\}|\$HOME\b|(?<![\w/.$~-])~)(/[\w.+@%/-]*)")
_ABSOLUTE_PATH: Final = re.compile(r"(?<![\w$}/.~:-])(/[\w.+@%-][\w.+@%/-]*)")


def _paths_in(script: str, home: str) -> list[str]:
    """The paths a script's text names: absolute ones outside ``/tmp``, and ``~/``,
    ``$HOME/`` and ``${HOME}/`` ones in the user's ``home``."""
    try:
        with open(script, "rb") as f:
            text = f.read(_SCRIPT_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    out = []
    for match in _HOME_PATH.finditer(text):
        rest = match.group(1).strip("/").rstrip(".-")
        if rest:
            out.append(os.path.normpath(os.path.join(home, rest)))
    for match in _ABSOLUTE_PATH.finditer(text):
        path = os.path.normpath(match.group(1).rstrip(".-"))
        if not inside(path, "/tmp"):
            out.append(path)
    return out


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
        dirs.add(install_root(os.path.join(home.group(1).strip(), "python")))
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


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system(path: str) -> bool:
    return any(inside(path, d) for d in SYSTEM_DIRS) or path in ("/", "/etc")


def outermost(paths: Iterable[str]) -> list[str]:
    """The paths, without those inside another of them."""
    out: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(inside(path, kept) for kept in out):
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
        within = any(inside(path, d) for d in readable)
        covers = any(inside(d, path) for d in readable)
        if within and not covers:
            out.append(path)
    return outermost(out)


def sockets(readable: Sequence[str]) -> list[str]:
    """The Unix sockets inside the readable paths (or among them), as ``/proc/net/unix``
    lists them: a read-only view does not stop ``connect()``, so these are covered up."""
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return []
    out = set()
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed or abstract
        listed = fields[7].strip()
        # As the sandbox sees it: /var/run/x.sock may be /run/x.sock, /tmp/d a link.
        path = os.path.join(os.path.realpath(os.path.dirname(listed)), os.path.basename(listed))
        for name in {listed, path}:
            if any(inside(name, d) for d in readable):
                with contextlib.suppress(OSError):
                    if stat.S_ISSOCK(os.lstat(name).st_mode):
                        out.add(name)
    return sorted(out)


def visible(path: str, shown: Sequence[str], covered: Sequence[str]) -> bool:
    """Whether ``path`` can be read in a sandbox that shows ``shown`` and covers
    ``covered`` inside them."""
    return any(inside(path, s) for s in shown) and not any(inside(path, c) for c in covered)


_MISSING: Final = re.compile(
    r"No such file or directory|not found|can't open file|[Cc]annot open|Cannot find module"
    r"|Unable to access|ENOENT|does not exist"
)
_PROGRAM: Final = re.compile(
    r"env: '?([\w.+-]+)'?: No such file or directory|(?<![\w/.-])([\w.+-]+): (?:command )?not found"
)
"""A program named without its folder that was not found: env's words, and the shells'."""


def blocked(
    text: str,
    shown: Sequence[str],
    covered: Sequence[str],
    inner_home: str,
    path_var: str,
) -> list[tuple[str, str]]:
    """The paths an engine's last words (its stderr) say it could not find, that exist on
    this machine but that its sandbox hides, each with what to show for it (``--read``):
    its install, or its folder, or the file itself when it lies directly in ``/tmp``.
    ``inner_home`` is the engine's home in the sandbox, which stands for the user's home.
    A path the sandbox covers on purpose (the referee's own files, sockets) is never named."""
    if not _MISSING.search(text):
        return []
    home = user_home()
    candidates = [m.group(1) for m in _ABSOLUTE_PATH.finditer(text)]
    for match in _PROGRAM.finditer(text):
        program = shutil.which(match.group(1) or match.group(2), path=path_var)
        if program is not None:
            candidates.append(program)
    out: list[tuple[str, str]] = []
    for raw in candidates:
        path = os.path.normpath(raw.rstrip(".-"))
        if inside(path, inner_home):  # the engine's $HOME stands for the user's
            path = os.path.normpath(os.path.join(home, os.path.relpath(path, inner_home)))
        if not os.path.lexists(path) or any(inside(path, c) for c in covered):
            continue
        if visible(path, shown, covered) or any(path == p for p, _ in out):
            continue
        show = install_root(path)
        if _too_broad(show) or inside(home, show):
            show = path
        out.append((path, show))
    return out
