"""The referee's own files, made before any engine starts, and the engines' sandbox policies.

A sandboxed engine must never see the referee's record, store, config, debug log or stderr
files, even inside a folder it may read. The sandbox can only cover up a path that exists when
the engine starts, so a run first creates its output files (empty, mode 0600) and folders
(`reserve_paths`), then gives every engine a policy that hides them (`sandboxed`). A run that
is refused before its first game removes the files it made and left empty (`remove_if_empty`),
so it leaves nothing behind. The command line and the Python API (``referee.api``) share
these; failures are plain ``OSError`` naming the file, for each caller to report its way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import Sequence

from referee.engine import EngineSpec
from referee.sandbox import Limits, Policy, SandboxMode, support

log = logging.getLogger(__name__)

__all__ = ["remove_if_empty", "reserve_paths", "sandboxed"]


def reserve_paths(paths: Sequence[str | None], folders: Sequence[str | None] = ()) -> list[str]:
    """Create the referee's output files (empty, if new) and folders before any engine
    starts, so that the sandbox can cover them up; their absolute paths. ``OSError`` (with
    the file named) if one cannot be made."""
    out = []
    for folder in folders:
        if folder:
            os.makedirs(folder, exist_ok=True)
            out.append(os.path.abspath(folder))
    for path in paths:
        if path:
            if not os.path.lexists(path):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
            out.append(os.path.abspath(path))
    return out


def remove_if_empty(paths: Sequence[str]) -> None:
    """Remove the files of ``paths`` that are still empty (made by `reserve_paths` for a run
    that never started), so that a refused run leaves nothing behind."""
    for path in paths:
        with contextlib.suppress(OSError):
            if os.path.isfile(path) and os.path.getsize(path) == 0:
                os.unlink(path)


def sandboxed(
    specs: Sequence[EngineSpec],
    mode: SandboxMode,
    limits: Sequence[Limits] | None = None,
    network: bool = False,
    files: Sequence[str | None] = (),
    folders: Sequence[str | None] = (),
    readable: Sequence[str] = (),
) -> tuple[EngineSpec, ...]:
    """The specs with their sandbox policies. The referee's output ``files`` and
    ``folders`` are created first when the sandbox will run, so that it can hide them;
    ``readable`` paths are shown to every engine (read-only)."""
    hidden: tuple[str, ...] = ()
    if mode is not SandboxMode.OFF and support().available:
        hidden = tuple(reserve_paths(files, folders))
    return tuple(
        dataclasses.replace(
            spec,
            sandbox=Policy(
                mode,
                limits[i] if limits else Limits(),
                network,
                hidden,
                readable=tuple(os.path.abspath(p) for p in readable),
            ),
        )
        for i, spec in enumerate(specs)
    )
