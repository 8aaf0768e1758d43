"""The referee's refusals: what it cannot do that it was asked to do.

Every refusal meant for the person who asked (an engine that does not start, a store that
holds another tournament, a cluster that cannot be reached, a sandbox that cannot run, a file
of the referee's own that cannot be made...) is a `RefereeError`. Its message is the whole
sentence to show, and ``exit_code`` the code ``ginref`` exits with: the command line turns
every one of them into ``Error: MESSAGE`` in one place (``referee.cli``), and a Python caller
catches the one base. The kinds keep their names where they were first defined:
``referee.seat.preflight.EngineNotReady``, ``referee.results.store.StoreError``
(``StoreBusy``...), ``referee.seat.sandbox.SandboxError``,
``referee.cluster.worker.EngineUnavailable`` and ``PluginMissing``,
``referee.outputs.UnsafeOutput`` (an ``OSError`` too), and those below.

Mistakes in the arguments themselves stay ``ValueError`` (``RulesError``, ``ConfigError``...),
and an engine's misbehaviour during a game is a ruling, never an error.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CannotServe", "DaskError", "OutputError", "RefereeError", "ReportError"]


class RefereeError(Exception):
    """The referee cannot do what it was asked; ``str()`` is the message for the user."""

    exit_code: int = 1
    """What ``ginref`` exits with after printing ``Error: MESSAGE``."""


class DaskError(RefereeError):
    """The Dask cluster cannot be used as asked (``referee.cluster``); the message says why,
    for the user. It lives here, not with the cluster, so that the commands catch it without
    importing the cluster, and the settings raise it without reaching above themselves."""


class OutputError(RefereeError):
    """A file or folder of the referee's own (a record, a store, a stderr folder) cannot be
    made or written before the run begins."""

    @classmethod
    def cannot_write(cls, exc: OSError) -> OutputError:
        """The message for an ``OSError`` of one of the referee's own files."""
        return cls(
            f"the referee cannot write its own file: {exc.strerror or exc}"
            f"{': ' + str(exc.filename) if exc.filename else ''}"
        )


class CannotServe(RefereeError):
    """The live page cannot be served on the address asked for (a port in use, say)."""


class ReportError(RefereeError):
    """The HTML report of a run cannot be written. The run itself is over: ``result`` holds
    what it returns (None when it was interrupted before any game finished)."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result
