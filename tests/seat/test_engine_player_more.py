"""An engine process as a player: what needs a real process (timeouts, crashes, closed pipes,
long lines, stderr, its folder, environment and sandbox), with the words a user reads in each
ruling. The protocol exchange itself, on a scripted transport, is
tests/protocol/test_engine_protocol.py.

Each engine here is a small Python script told, for every word it is sent, which lines to write
back (``!exit N`` ends it, ``!sleep S`` waits), so one behaviour is scripted per test.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from pathlib import Path

import pytest

import referee.seat.player
from engines import BUILTIN
from ginproto.game import Game, GameEnd
from ginproto.rules import Rules
from ginproto.table import FaultKind, PlayerFault
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec, EngineSpecError
from referee.seat.sandbox import Policy
from tests.helpers import first_view
from tests.seat.test_engine_player import decide

SCRIPT = """
import json, sys, time
replies = json.loads(sys.argv[1])
default = {"gin": ["ginok protocol 1"], "isready": ["readyok"], "go": ["move pass"]}
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    for out in replies.get(word, default.get(word, [])):
        if out.startswith("!exit"):
            sys.exit(int(out.split()[1]))
        if out == "!close":
            import os
            sys.stdin.close()
            os.close(0)
            continue
        if out.startswith("!err"):
            print(out[5:], file=sys.stderr, flush=True)
            continue
        if out.startswith("!sleep"):
            time.sleep(float(out.split()[1]))
            continue
        print(out, flush=True)
    if word == "quit":
        break
"""

CONTROL = TimeControl(None, 0.0, 5.0)
SCORE_4_2_1_1 = ["games", "4", "wins", "2", "losses", "1", "draws", "1"]


def make(
    tmp_path: Path,
    replies: dict[str, list[str]] | None = None,
    *,
    sent: list[str] | None = None,
    received: list[str] | None = None,
    control: TimeControl = CONTROL,
    startup_timeout: float = 20.0,
    stderr_path: str | None = None,
    **spec_args: object,
) -> EnginePlayer:
    script = tmp_path / "engine.py"
    script.write_text(SCRIPT)
    spec = EngineSpec(
        (sys.executable, str(script), json.dumps(replies or {})),
        **spec_args,  # type: ignore[arg-type]
    )

    def on_line(direction: str, line: str) -> None:
        if direction == "to" and sent is not None:
            sent.append(line)
        if direction == "from" and received is not None:
            received.append(line)

    return EnginePlayer(
        spec, control, startup_timeout=startup_timeout, on_line=on_line, stderr_path=stderr_path
    )


def fault_of(action: object) -> PlayerFault:
    assert callable(action)
    with pytest.raises(PlayerFault) as info:
        action()
    return info.value


# -- EngineSpec ---------------------------------------------------------------------------------


def test_a_spec_is_a_builtin_name_or_a_command_line() -> None:
    name = next(iter(BUILTIN))
    builtin = EngineSpec.parse(f"  {name} ")
    assert list(builtin.argv) == BUILTIN[name]
    assert builtin.builtin == name and builtin.label == name
    spec = EngineSpec.parse("node 'my engines/simple.js' --fast", cwd="/tmp")
    assert spec.argv == ("node", "my engines/simple.js", "--fast")
    assert spec.cwd == "/tmp" and spec.builtin is None
    assert spec.label == "node"
    assert EngineSpec(("/opt/bots/gin-bot", "-x"), name="Shown").label == "Shown"
    assert EngineSpec(("/opt/bots/gin-bot", "-x")).label == "gin-bot"


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_spec_is_refused(text: str) -> None:
    with pytest.raises(EngineSpecError) as info:
        EngineSpec.parse(text)
    assert str(info.value) == "an engine needs a built-in name or a command line"


def test_a_spec_that_does_not_split_is_refused() -> None:
    with pytest.raises(EngineSpecError) as info:
        EngineSpec.parse("engine 'unclosed")
    assert str(info.value).startswith('cannot split the engine command "engine \'unclosed": ')


def test_a_builtin_engine_from_no_folder_does_not_see_the_working_directory() -> None:
    name = next(iter(BUILTIN))
    assert EngineSpec.parse(name).policy.workdir is False
    assert EngineSpec.parse(name, cwd="/tmp").policy.workdir == EngineSpec(("x",)).sandbox.workdir
    own = EngineSpec(("python3", "bot.py"))
    assert own.policy == own.sandbox


# -- the handshake ------------------------------------------------------------------------------


def test_no_ginok_in_time_is_a_startup_fault(tmp_path: Path) -> None:
    p = make(tmp_path, {"gin": ["id name Mute"]}, startup_timeout=0.5)
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.STARTUP
    assert fault.detail == "no ginok within 0.5s"
    assert p.process is None


def test_no_readyok_in_time_is_a_startup_fault(tmp_path: Path) -> None:
    # The same limit holds the handshake: long enough for a Python to start on a busy machine.
    p = make(tmp_path, {"isready": ["info busy"]}, startup_timeout=2.0)
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.STARTUP
    assert fault.detail == "no readyok within 2s"


def test_an_engine_that_exits_in_the_handshake_crashed(tmp_path: Path) -> None:
    p = make(tmp_path, {"gin": ["id name Gone", "!exit 3"]})
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.CRASH
    assert "while waiting for ginok" in fault.detail
    assert "3" in fault.detail
    assert p.process is None


def test_what_an_engine_writes_to_stderr_is_kept_in_its_file(tmp_path: Path) -> None:
    log = tmp_path / "engine.err"
    p = make(tmp_path, {"gin": ["!err warming up", "ginok protocol 1"]}, stderr_path=str(log))
    try:
        p.start()
    finally:
        p.close()
    assert "warming up" in log.read_text()
    assert p.stderr_error is None


def test_a_command_that_cannot_start_is_a_crash(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-engine"
    p = EnginePlayer(EngineSpec((str(missing),)), CONTROL)
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.CRASH
    assert fault.detail.startswith("cannot start: ")


def test_a_long_line_in_the_handshake_is_malformed(tmp_path: Path) -> None:
    p = make(tmp_path, {"gin": ["id name " + "x" * 500, "ginok protocol 1"]})
    p.line_limit = 100
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.MALFORMED
    assert fault.detail == "a line longer than 100 bytes"


# -- decisions ----------------------------------------------------------------------------------


def test_a_long_move_line_is_malformed(tmp_path: Path) -> None:
    p = make(tmp_path, {"go": ["move " + "x" * 500]})
    p.line_limit = 200
    try:
        p.start()
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.MALFORMED
        assert fault.detail == "a line longer than 200 bytes"
    finally:
        p.close()


def test_an_engine_that_exits_instead_of_moving_crashed(tmp_path: Path) -> None:
    p = make(tmp_path, {"go": ["!exit 5"]})
    try:
        p.start()
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.CRASH
        assert "5" in fault.detail
    finally:
        p.close()


def test_ignored_lines_are_quoted_in_a_timeout_three_at_most(tmp_path: Path) -> None:
    long = "info " + "y" * 76  # 81 characters: cut to 80, and marked as cut
    just = "info " + "z" * 75  # 80 characters: shown whole
    p = make(
        tmp_path,
        {"go": [long, just, "hello", "info four", "!sleep 30"]},
        control=TimeControl(None, 0.0, 0.8),
    )
    try:
        p.start()
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.TIMEOUT
        assert fault.detail.startswith("no move after ")
        assert "(offer)" in fault.detail
        shown = repr(long[:80] + "...")
        assert fault.detail.endswith(f"; ignored lines: {shown}, {just!r}, 'hello'")
    finally:
        p.close()


def test_a_silent_timeout_names_no_ignored_lines(tmp_path: Path) -> None:
    p = make(tmp_path, {"go": ["!sleep 30"]}, control=TimeControl(None, 0.0, 0.4))
    try:
        p.start()
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.TIMEOUT
        assert "ignored" not in fault.detail
        assert fault.detail.endswith("s (offer)")
        # The time it took is the time since the go line: at least the limit, and well
        # under the time this test allows before it gives up.
        seconds = float(fault.detail.removeprefix("no move after ").split("s")[0])
        assert 0.4 <= seconds < 30
    finally:
        p.close()


def test_a_flag_says_the_game_clock_ran_out(tmp_path: Path) -> None:
    p = make(tmp_path, {"go": ["!sleep 30"]}, control=TimeControl(0.4, 0.0, 60.0))
    try:
        p.start()
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.FLAG
        assert fault.detail.startswith("game clock ran out after ")
    finally:
        p.close()


def test_an_overdrawn_clock_is_sent_as_zero(tmp_path: Path) -> None:
    sent: list[str] = []
    p = make(tmp_path, sent=sent, control=TimeControl(10.0, 1.5, 4.0))
    try:
        p.start()
        p.new_game(1, 0, Rules())
        p.clock.remaining = -3.0
        decide(p, first_view())
        go = [line for line in sent if line.startswith("go ")]
        assert go == ["go offer time 0 inc 1500 movetime 4000"]
    finally:
        p.close()


# -- what the engine is told ----------------------------------------------------------------


def finished(winner: int | None) -> Game:
    """A game over, won by player ``winner`` (by forfeit), or drawn at the hand cap."""
    game = Game(Rules())
    if winner is None:
        game._finish(GameEnd.HAND_CAP, None)
    else:
        game.forfeit(1 - winner)
    return game


def test_an_engine_that_exits_after_ginok_crashed(tmp_path: Path) -> None:
    """It exits as soon as it has said ``ginok``: whether the referee finds out writing
    ``isready`` or waiting for ``readyok``, the ruling is a crash that gives its exit status."""
    p = make(tmp_path, {"gin": ["ginok protocol 1", "!exit 4"]})
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.CRASH
    assert "4" in fault.detail
    assert p.process is None


def test_an_engine_that_dies_after_a_game_does_not_stop_the_referee(tmp_path: Path) -> None:
    sent: list[str] = []
    p = make(tmp_path, {"gameover": ["!exit 0"]}, sent=sent)
    try:
        p.start()
        p.game_over(0, finished(0), None)
        time.sleep(0.3)  # time for it to exit
        p.game_over(0, finished(1), None)
        assert p.record == [1, 1, 0]
        p.finish_match()
        assert p.process is None
    finally:
        p.close()


def test_an_engine_that_stops_reading_and_exits_crashed_with_its_status(tmp_path: Path) -> None:
    """It closes its input, says ``ginok`` and exits: writing to it fails, and the ruling
    gives its exit status."""
    p = make(tmp_path, {"gin": ["!close", "ginok protocol 1", "!exit 6"]})
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.CRASH
    assert "6" in fault.detail
    assert p.process is None


def test_an_engine_that_stops_reading_but_runs_on_crashed_with_a_broken_pipe(
    tmp_path: Path,
) -> None:
    """It closes its input before it says ``readyok``, and goes on running: writing to it
    fails, no exit status comes within a second, and the ruling is a crash for the broken
    pipe."""
    p = make(tmp_path, {"isready": ["!close", "readyok", "!sleep 30"]}, name="Shown")
    p.quit_grace = 0.2
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.CRASH
    assert fault.detail.startswith("broken-pipe: engine 'Shown' (pid "), fault.detail
    assert fault.detail.endswith(" cannot write (Broken pipe)"), fault.detail
    assert p.process is None


WHERE = """
import os, sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "gin":
        print("info cwd " + os.getcwd(), flush=True)
        print("info word " + os.environ.get("GIN_WORD", "-"), flush=True)
        print("info cpus " + " ".join(map(str, sorted(os.sched_getaffinity(0)))), flush=True)
        print("ginok protocol 1", flush=True)
    elif word == "isready":
        print("readyok", flush=True)
    elif word == "quit":
        break
"""


def test_an_engine_starts_in_its_folder_with_its_environment_and_sandbox_policy(
    tmp_path: Path,
) -> None:
    """The spec's working directory, added environment and sandbox policy (here: pinned to
    one CPU) are the ones the engine process gets."""
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "where.py"
    script.write_text(WHERE)
    cpu = min(os.sched_getaffinity(0))
    spec = EngineSpec(
        (sys.executable, str(script)),
        cwd=str(home),
        env=(("GIN_WORD", "hello"),),
        sandbox=Policy(affinity=(cpu,)),
    )
    received: list[str] = []
    p = EnginePlayer(
        spec,
        CONTROL,
        startup_timeout=20.0,
        on_line=lambda direction, line: received.append(line) if direction == "from" else None,
    )
    try:
        p.start()
    finally:
        p.close()
    assert received[:3] == [f"info cwd {home}", "info word hello", f"info cpus {cpu}"]


def test_the_end_of_stderr_and_a_failure_to_keep_it_outlive_the_process(tmp_path: Path) -> None:
    """After the engine is closed, its stderr's last words are still there for messages, and
    so is the referee's failure to write them to its file (a full disk: /dev/full)."""
    p = make(tmp_path, {"gin": ["!err last words", "ginok protocol 1"]}, stderr_path="/dev/full")
    assert p.stderr_tail == "" and p.stderr_error is None
    p.start()
    p.close()
    assert p.process is None
    assert "last words" in p.stderr_tail
    assert isinstance(p.stderr_error, OSError) and p.stderr_error.errno == errno.ENOSPC


class _Later:
    """``time`` as ``referee.seat.player`` sees it: ``offset`` seconds ahead of the real
    clock."""

    def __init__(self) -> None:
        self.offset = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.offset


@pytest.mark.parametrize(
    ("control", "kind"),
    [
        (TimeControl(None, 0.0, 5.0), FaultKind.TIMEOUT),
        (TimeControl(10.0, 0.0, 60.0), FaultKind.FLAG),
    ],
)
def test_a_move_read_after_its_time_is_too_late(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, control: TimeControl, kind: FaultKind
) -> None:
    """The move comes, but by the referee's clock after the per-move limit (or after the game
    clock's end): it is not taken, and the ruling says it came too late. The clock is moved
    on 30 seconds as the move line is read, so no test waits that long."""
    later = _Later()
    monkeypatch.setattr(referee.seat.player, "time", later)

    def on_line(direction: str, line: str) -> None:
        if direction == "from" and line.startswith("move "):
            later.offset += 30.0

    p = make(tmp_path, control=control)
    p.on_line = on_line
    try:
        p.start()
        fault = decide(p, first_view())
    finally:
        p.close()
    assert isinstance(fault, PlayerFault)
    assert fault.kind is kind
    assert fault.detail == "answered pass too late"


def test_information_an_engine_no_longer_reads_is_logged_and_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """It closes its input after a game and runs on: the ``matchover`` line cannot be written,
    which is logged with the reason, and the match ends all the same."""
    p = make(tmp_path, {"gameover": ["!close", "closed", "!sleep 30"]}, name="Shown")
    p.quit_grace = 0.2
    try:
        p.start()
        p.game_over(0, finished(0), None)
        assert p.process is not None
        assert p.process.read_line(20) == "closed"  # its input is closed; it is still running
        caplog.clear()
        with caplog.at_level("INFO", logger="referee.seat.player"):
            p.finish_match()
        assert p.process is None and p.record == [1, 0, 0]
    finally:
        p.close()
    messages = [r.getMessage() for r in caplog.records if r.name == "referee.seat.player"]
    assert len(messages) == 1, messages
    assert messages[0].startswith(
        "Shown: could not send an information line: engine 'Shown' (pid "
    ), messages
    assert messages[0].endswith(" cannot write (Broken pipe)"), messages
