"""The referee's own files: checked and made before any engine starts, and written safely.

A sandboxed engine must never see the referee's record, store, config, debug log or stderr
files, even inside a folder it may read. The sandbox can only cover up a path that exists when
the engine starts, so a run first creates its output files (empty, mode 0600) and folders
(`reserve_paths`), then gives every engine a policy that hides them
(``referee.seat.player.sandboxed``). A run that
is refused before its first game removes the files it made and left empty (`remove_if_empty`),
so it leaves nothing behind. The command line and the Python API (``referee.api``) share
these; failures are plain ``OSError`` naming the file, for each caller to report its way.

Every output path obeys one rule (`OUTPUT_RULE`), checked before anything is played
(`check_file`, `check_folder`): a file output is a regular file, written in place or replaced
through a temporary file and a rename, or a new file in a folder that exists; a folder output
is a folder (or a link to one) that exists or can be made. Anything else is refused, never
opened: a device (``/dev/null`` too), a FIFO, a socket, a folder given for a file, a symbolic
link given for a file. So the referee never replaces, renames over, truncates or chmods
anything but a regular file it was named, even run as root. The writers (`open_regular`,
`write_file`) check again as they open, and never follow a link.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import stat
from collections.abc import Sequence

from referee.errors import RefereeError

log = logging.getLogger(__name__)

__all__ = [
    "OUTPUT_RULE",
    "UnsafeOutput",
    "check_file",
    "check_folder",
    "check_outputs",
    "open_regular",
    "remove_if_empty",
    "reserve_paths",
    "write_file",
]

OUTPUT_RULE = (
    "An output file must be a regular file (written in place, or replaced whole) or a new"
    " file in a folder that exists; a device (even /dev/null), a FIFO, a socket, a folder or"
    " a symbolic link is refused before anything is played, and never written."
)
"""The rule in a sentence, for ``--help`` and the docs."""


class UnsafeOutput(RefereeError, OSError):
    """An output path the referee refuses to write: not a regular file, a link, or a file in
    a folder that does not exist. ``str()`` is ``PATH: why``."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def _refused(path: str, st: os.stat_result, wanted: str) -> UnsafeOutput:
    if stat.S_ISLNK(st.st_mode):
        return UnsafeOutput(
            errno.ELOOP,
            f"a symbolic link (to {os.path.realpath(path)}); the referee never writes through"
            f" one: give the {wanted} itself",
            path,
        )
    code = errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL
    return UnsafeOutput(
        code, f"{_kind(st.st_mode)}, not a {wanted}; the referee writes only to a {wanted}", path
    )


def _creatable_in(path: str) -> None:
    """A new ``path`` can be made: its folder exists (links followed) and is writable."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        raise UnsafeOutput(errno.ENOENT, f"the folder {folder} does not exist", path) from None
    except OSError as exc:
        raise UnsafeOutput(exc.errno or errno.EINVAL, f"{folder}: {exc.strerror}", path) from None
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeOutput(errno.ENOTDIR, f"{folder} is not a folder", path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UnsafeOutput(errno.EACCES, f"cannot create a file in {folder}", path)


def check_file(path: str | os.PathLike[str]) -> None:
    """``UnsafeOutput`` unless ``path`` is a writable regular file (not a link to one) or
    can be created as a new file in an existing folder."""
    name = os.fspath(path)
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        _creatable_in(name)
        return
    except NotADirectoryError:
        raise UnsafeOutput(errno.ENOTDIR, "a folder on its path is a file", name) from None
    except OSError as exc:
        raise UnsafeOutput(exc.errno or errno.EINVAL, exc.strerror or str(exc), name) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refused(name, st, "regular file")
    if not os.access(name, os.W_OK):
        raise UnsafeOutput(errno.EACCES, "Permission denied", name)


def check_folder(path: str | os.PathLike[str], files: Sequence[str] = ()) -> None:
    """``UnsafeOutput`` unless ``path`` is a writable folder (or a link to one), or can be
    made under the nearest folder that exists; the ``files`` the referee writes in it must
    pass `check_file` where they exist."""
    name = os.fspath(path)
    try:
        st = os.stat(name)  # a link to a folder is a folder to write in: the link is untouched
    except FileNotFoundError:
        if os.path.islink(name):
            raise UnsafeOutput(errno.ENOENT, "a symbolic link to nothing", name) from None
        above = os.path.dirname(os.path.abspath(name))
        while not os.path.lexists(above):
            above = os.path.dirname(above)
        if not os.path.isdir(above):
            raise UnsafeOutput(errno.ENOTDIR, f"{above} is not a folder", name) from None
        if not os.access(above, os.W_OK | os.X_OK):
            raise UnsafeOutput(errno.EACCES, f"cannot create a folder in {above}", name) from None
        return
    except NotADirectoryError:
        raise UnsafeOutput(errno.ENOTDIR, "a folder on its path is a file", name) from None
    except OSError as exc:
        raise UnsafeOutput(exc.errno or errno.EINVAL, exc.strerror or str(exc), name) from None
    if not stat.S_ISDIR(st.st_mode):
        if os.path.islink(name):
            raise UnsafeOutput(
                errno.ENOTDIR,
                f"a symbolic link to {_kind(st.st_mode)} ({os.path.realpath(name)}), not a"
                " folder",
                name,
            )
        raise _refused(name, st, "folder")
    if not os.access(name, os.W_OK | os.X_OK):
        raise UnsafeOutput(errno.EACCES, "Permission denied", name)
    for file in files:
        inside = os.path.join(name, file)
        if os.path.lexists(inside):
            check_file(inside)


def open_regular(path: str | os.PathLike[str], flags: int, mode: int = 0o600) -> int:
    """``os.open`` of a regular file only: what is at ``path`` is checked first (nothing
    else is ever opened: opening a device can act on it), the open never follows a link,
    and the opened file is checked again. ``UnsafeOutput`` for anything else."""
    name = os.fspath(path)
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISREG(st.st_mode):
            raise _refused(name, st, "regular file")
    # O_NONBLOCK: a FIFO put there meanwhile fails to open instead of blocking.
    fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refused(name, st, "regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` as the whole of the regular file ``path``: to a new temporary file in
    its folder, synced, then renamed over it, so a reader never sees half of it; an existing
    file keeps its mode. Where the folder takes no new file but the file is writable, the
    file is rewritten in place. ``UnsafeOutput`` where ``path`` is not a regular file."""
    name = os.fspath(path)
    check_file(name)
    try:
        old: os.stat_result | None = os.lstat(name)
    except FileNotFoundError:
        old = None
    folder, base = os.path.split(os.path.abspath(name))
    while True:
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.tmp")
        try:  # mode 0666 less the umask, as any new file; an existing file's mode below
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
        except PermissionError:
            if old is None:
                raise
            _write_in_place(name, data)
            return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                with contextlib.suppress(OSError):  # as root: the owner stays the file's
                    os.fchown(fd, old.st_uid, old.st_gid)
            os.fsync(fd)
        check_file(name)  # nothing but a regular file was put there meanwhile
        os.replace(tmp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_in_place(path: str, data: bytes) -> None:
    fd = open_regular(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, 0)
        rest = memoryview(data)
        while rest:
            rest = rest[os.write(fd, rest) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def check_outputs(
    files: Sequence[str | os.PathLike[str] | None] = (),
    folders: Sequence[str | os.PathLike[str] | None] = (),
) -> None:
    """`check_file` of each of ``files`` and `check_folder` of each of ``folders`` (``None``
    for an output not asked for), before anything is played or made."""
    for file in files:
        if file is not None:
            check_file(file)
    for folder in folders:
        if folder is not None:
            check_folder(folder)


def reserve_paths(paths: Sequence[str | None], folders: Sequence[str | None] = ()) -> list[str]:
    """Create the referee's output files (empty, if new) and folders before any engine
    starts, so that the sandbox can cover them up; their absolute paths. ``OSError`` (with
    the file named) if one cannot be made. A new file is made only where nothing is (never
    through a link); the callers check their outputs first (`check_outputs`)."""
    out = []
    for folder in folders:
        if folder:
            os.makedirs(folder, exist_ok=True)
            out.append(os.path.abspath(folder))
    for path in paths:
        if path:
            if not os.path.lexists(path):
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                os.close(os.open(path, flags, 0o600))
            out.append(os.path.abspath(path))
    return out


def remove_if_empty(paths: Sequence[str]) -> None:
    """Remove the files of ``paths`` that are still empty (made by `reserve_paths` for a run
    that never started), so that a refused run leaves nothing behind."""
    for path in paths:
        with contextlib.suppress(OSError):
            if os.path.isfile(path) and os.path.getsize(path) == 0:
                os.unlink(path)
