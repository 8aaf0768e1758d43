"""A Ctrl-C as a run ends: ``ginref match`` and ``ginref tournament``, with and without
``--serve``, end at once with exit 130 whenever the Ctrl-C comes after the last game, however
close to the end of the games, to the results or to the page that stays up it lands.

Each test plays a short run (random against simple, two games of one hand) again and again,
and sends SIGINT a varying moment after standard error says the last game has ended, so that
the signals fall all over the run's last steps. Every process a test starts dies with it (in its
own session, killed with its group at the end, and with the test run if that dies).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GINREF = [sys.executable, "-c", "import sys; from referee.__main__ import main; sys.exit(main())"]
LAST_GAME = b"[2/2]"
"""What standard error says when the second and last game has ended."""
RUNS = 8
WITHIN = 1.0
"""Seconds from the Ctrl-C to the exit: a generous bound for a command that ends at once."""

TOURNAMENT = """\
event = "End cup"
games = 2
seed = 11
concurrency = 2
tc = "inf"
sandbox = "off"
output = "cup"
[rules]
target = 1
[[engines]]
name = "Random"
command = "random"
[[engines]]
name = "Simple"
command = "simple"
"""


def _child_setup() -> None:
    """Ctrl-C as a terminal gives it, and death with the test run."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _command(kind: str, serve: bool, folder: Path) -> list[str]:
    if kind == "match":
        args = ["match", "random", "simple", "--games", "2", "--seed", "5", "--tc", "inf",
                "--rule", "target=1", "--no-sandbox"]
    else:
        (folder / "cup.toml").write_text(TOURNAMENT)
        args = ["tournament", "cup.toml"]
    return [*GINREF, *args, *(["--serve", "127.0.0.1:0"] if serve else [])]


def _exited(pid: int) -> bool:
    """Whether ``pid`` (a child not yet waited for) has ended, without reaping it."""
    found = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return found is not None


def _interrupt_at_the_end(
    kind: str, serve: bool, folder: Path, delay: float
) -> tuple[int | None, float, str]:
    """Run the command, send it SIGINT ``delay`` seconds after its last game has ended; its exit
    code (None: it had ended before the signal could be sent), the seconds from the signal to
    the exit, and its standard error."""
    process = subprocess.Popen(
        _command(kind, serve, folder), cwd=folder, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True, preexec_fn=_child_setup,
    )
    assert process.stderr is not None
    err = b""
    try:
        deadline = time.monotonic() + 60
        while LAST_GAME not in err:
            assert time.monotonic() < deadline, f"the run did not end: {err.decode()}"
            ready, _, _ = select.select([process.stderr], [], [], 1)
            if ready:
                chunk = os.read(process.stderr.fileno(), 65536)
                assert chunk, f"the command ended before its last game: {err.decode()}"
                err += chunk
        time.sleep(delay)
        if _exited(process.pid):  # without --serve, the command may be done already
            process.wait()
            return None, 0.0, err.decode()
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            code = process.wait(timeout=20)  # its standard error is far less than a pipe holds
        except subprocess.TimeoutExpired:
            raise AssertionError(f"delay {delay:.3f}: the Ctrl-C was swallowed") from None
        took = time.monotonic() - sent
        return code, took, (err + process.stderr.read()).decode()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        process.stderr.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["match", "tournament"])
@pytest.mark.parametrize("serve", [True, False], ids=["serve", "no-serve"])
def test_ctrl_c_as_the_run_ends_ends_it_at_once(
    kind: str, serve: bool, tmp_path: Path
) -> None:
    """Sent at the moment the last game is reported and up to a third of a second after (with
    --serve: the results, the page marked over, the page staying up; without: the results and
    the exit, up to a twentieth of a second after), a Ctrl-C ends the command within a second
    with exit 130, every time; never is it swallowed, leaving the command (or its page)
    waiting for another."""
    hits = 0
    # Without --serve the command ends a tenth of a second or so after its last game: the
    # signals fall within that; a run already over at the signal is not counted.
    span = 0.3 if serve else 0.05
    for run in range(RUNS):
        folder = tmp_path / str(run)
        folder.mkdir()
        delay = span * run / (RUNS - 1)
        code, took, err = _interrupt_at_the_end(kind, serve, folder, delay)
        if code is None:
            continue  # ended before the Ctrl-C: nothing to interrupt
        hits += 1
        # 130; or killed by the signal itself, as the interpreter exits (a shell says 130)
        assert code in (130, -signal.SIGINT), f"delay {delay:.3f}: exit {code}\n{err}"
        assert took < WITHIN, f"delay {delay:.3f}: {took:.2f} s to exit\n{err}"
        assert "Traceback" not in err, err
    assert hits >= 2, f"only {hits} of {RUNS} runs were still going at the Ctrl-C"


# ------------------------------------------------------------------------------------------
# The handler itself, in this process (pytest's main thread receives the signals)


def test_a_signal_before_the_wait_is_not_lost() -> None:
    """A Ctrl-C once the games are over, before the page's wait begins, ends the wait at once:
    the wait listens to the handler that took it, not to one of its own installed later."""
    from referee.cli.interrupts import interrupts

    with interrupts(defer_first=True) as signals:
        signals()  # the games begin
        signals.over()
        signal.raise_signal(signal.SIGINT)
        started = time.monotonic()
        assert signals.wait(None) == signal.SIGINT
        assert time.monotonic() - started < WITHIN


def test_a_tournaments_first_ctrl_c_stops_after_the_games_and_a_second_at_once() -> None:
    from referee.cli.interrupts import interrupts

    with interrupts(defer_first=True) as signals:
        assert signals() is False
        signal.raise_signal(signal.SIGINT)
        assert signals() is True and signals.signum == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)


def test_a_wait_with_an_end_returns_none_without_a_signal() -> None:
    from referee.cli.interrupts import interrupts

    with interrupts(defer_first=False) as signals:
        signals.over()
        assert signals.wait(0.1) is None
        assert signals.wait(0) is None


def test_before_the_games_a_ctrl_c_is_what_it_was() -> None:
    from referee.cli.interrupts import interrupts

    # Python's own handler, even in a test run started with SIGINT ignored
    outside = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with interrupts(defer_first=True), pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, outside)


def test_a_double_ctrl_c_lets_the_standings_be_shown_and_a_third_stops_at_once() -> None:
    """Ctrl-C pressed twice: the first stops the tournament after the games in progress; the
    second, if it comes once they are over and the standings are being written, is noted and
    does not cut them short (the command then ends with 130). A third stops at once."""
    from referee.cli.interrupts import interrupts

    with interrupts(defer_first=True) as signals:
        signals()  # the games begin
        signal.raise_signal(signal.SIGINT)  # stop after the games in progress
        signals.over()  # they are over: the standings are being written
        try:
            signal.raise_signal(signal.SIGINT)  # the double press's second
        except KeyboardInterrupt:
            pytest.fail("the second Ctrl-C of a double press cut the standings short")
        assert signals.signum == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
