"""One family of refusals: every "the referee cannot do what you asked" is a RefereeError,
importable where it always was, and the command line says each one in one place."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from referee.cli import LazyGroup
from referee.cluster.worker import EngineUnavailable, PluginMissing
from referee.errors import CannotServe, DaskError, OutputError, RefereeError, ReportError
from referee.outputs import UnsafeOutput
from referee.results.store import StoreBusy, StoreError
from referee.seat.preflight import EngineNotReady
from referee.seat.sandbox import SandboxError

REFUSALS: list[type[Exception]] = [
    EngineNotReady,
    StoreError,
    StoreBusy,
    DaskError,
    SandboxError,
    EngineUnavailable,
    PluginMissing,
    UnsafeOutput,
    OutputError,
    CannotServe,
    ReportError,
]


@pytest.mark.parametrize("kind", REFUSALS, ids=lambda k: k.__name__)
def test_every_refusal_is_a_referee_error(kind: type[Exception]) -> None:
    assert issubclass(kind, RefereeError)


def test_the_refusals_keep_the_bases_callers_caught_before() -> None:
    assert issubclass(SandboxError, RuntimeError)
    assert issubclass(EngineUnavailable, RuntimeError)
    assert issubclass(UnsafeOutput, OSError)
    assert str(UnsafeOutput(21, "a folder, not a file", "out")) == "out: a folder, not a file"


class Refused(RefereeError):
    exit_code = 3


def _group(error: Exception) -> click.Group:
    group = LazyGroup(name="ginref", lazy={})

    @group.command()
    def run() -> None:
        raise error

    return group


@pytest.mark.parametrize(
    ("error", "code"),
    [(EngineNotReady("engine 'x' cannot be used: it quit"), 1), (Refused("not today"), 3)],
)
def test_the_group_says_a_refusal_and_exits_with_its_code(error: Exception, code: int) -> None:
    result = CliRunner().invoke(_group(error), ["run"])
    assert result.exit_code == code
    assert result.output == f"Error: {error}\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_an_error_that_is_no_refusal_is_not_dressed_up_as_one() -> None:
    result = CliRunner().invoke(_group(RuntimeError("a bug")), ["run"])
    assert isinstance(result.exception, RuntimeError)
    assert "Error:" not in result.output
