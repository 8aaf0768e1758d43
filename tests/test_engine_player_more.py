"""An engine process as a player: the handshake, what is sent to the engine, and the ruling for
each thing an engine can do wrong, with the words a user reads in it.

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

import referee.engine
from engines import BUILTIN
from ginproto import protocol as proto
from ginproto.game import Game, GameEnd
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import Decision, Fault, FaultKind, PlayerFault, play_game
from ginproto.text import ID_LIMIT, printable
from referee.clock import TimeControl
from referee.engine import EnginePlayer, EngineSpec, EngineSpecError
from referee.sandbox import Policy
from tests.helpers import KnockerPlayer, first_view
from tests.test_engine_player import decide

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


def test_the_handshake_records_what_the_engine_says_and_sends_its_options(
    tmp_path: Path,
) -> None:
    sent: list[str] = []
    replies = {
        "gin": [
            "id name Scripted Bot",
            "id author Ann Author",
            "id version 2.1",
            "option name Depth type spin default 3 min 1 max 9",
            "option name Style type combo default calm var calm var wild",
            "this line is nonsense",
            "ginok protocol 1",
        ]
    }
    p = make(tmp_path, replies, sent=sent, options=(("Depth", "5"), ("Style", "wild")))
    try:
        p.start()
        assert p.alive
        assert (p.id.name, p.id.author, p.id.version, p.id.protocol) == (
            "Scripted Bot",
            "Ann Author",
            "2.1",
            1,
        )
        assert p.name == "Scripted Bot"
        assert [o.name for o in p.id.options] == ["Depth", "Style"]
        assert p.id.options[0].default == "3"
        assert p.id.options[1].vars == ("calm", "wild")
        assert sent[0].startswith("gin")
        assert sent[1:] == [
            "setoption name Depth value 5",
            "setoption name Style value wild",
            "isready",
            "newmatch",
        ]
    finally:
        p.close()
    assert not p.alive


def test_a_display_name_overrides_the_engine_name(tmp_path: Path) -> None:
    p = make(tmp_path, {"gin": ["id name Told", "ginok protocol 1"]}, name="Given")
    try:
        assert p.name == "Given"
        p.start()
        assert p.name == "Given" and p.id.name == "Told"
    finally:
        p.close()


def test_before_the_handshake_the_name_is_the_label(tmp_path: Path) -> None:
    p = make(tmp_path)
    assert p.name == "python3" or p.name == Path(sys.executable).name


def test_what_an_engine_says_of_itself_is_bounded_and_printable(tmp_path: Path) -> None:
    long = "N" * (ID_LIMIT + 50)
    replies = {
        "gin": [
            f"id name {long}",
            "id author a\x1bb",
            f"option name {long} type combo default {long} var {long}",
            "ginok protocol 1",
        ]
    }
    p = make(tmp_path, replies)
    try:
        p.start()
        assert p.id.name is not None and p.id.name.startswith("NNN")
        assert len(p.id.name) < len(long)
        assert p.id.author is not None and "\x1b" not in p.id.author
        option = p.id.options[0]
        for text in (option.name, option.default, *option.vars):
            assert len(text) < len(long) and text.startswith("NNN")
    finally:
        p.close()


def test_another_protocol_version_is_a_startup_fault(tmp_path: Path) -> None:
    p = make(tmp_path, {"gin": ["ginok protocol 7"]})
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.STARTUP
    assert "speaks protocol 7" in fault.detail and "this referee speaks 1" in fault.detail
    assert p.process is None and p.id.protocol == 7


def test_no_ginok_in_time_is_a_startup_fault(tmp_path: Path) -> None:
    p = make(tmp_path, {"gin": ["id name Mute"]}, startup_timeout=0.5)
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.STARTUP
    assert fault.detail == "no ginok within 0.5s"
    assert p.process is None


def test_no_readyok_in_time_is_a_startup_fault(tmp_path: Path) -> None:
    p = make(tmp_path, {"isready": ["info busy"]}, startup_timeout=0.5)
    fault = fault_of(p.start)
    assert fault.kind is FaultKind.STARTUP
    assert fault.detail == "no readyok within 0.5s"


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


def test_a_game_is_announced_before_the_first_decision(tmp_path: Path) -> None:
    sent: list[str] = []
    p = make(tmp_path, sent=sent)
    try:
        p.start()
        p.new_game(4, 1, Rules())
        assert decide(p, first_view()) == Move.pass_()
        words = [line.split()[0] for line in sent]
        assert words[-4:] == ["isready", "newgame", "position", "go"]
        newgame = next(line for line in sent if line.startswith("newgame"))
        assert newgame.split()[1:5] == ["game", "4", "player", "1"]
        count = len(sent)
        assert decide(p, first_view()) == Move.pass_()
        # The second decision of the game sends no new game and no ping.
        assert [line.split()[0] for line in sent[count:]] == ["position", "go"]
    finally:
        p.close()


def test_an_engine_is_started_at_its_first_decision(tmp_path: Path) -> None:
    p = make(tmp_path)
    try:
        p.new_game(1, 0, Rules())
        assert not p.alive
        # From this thread: an engine dies with the thread that started it (pdeathsig).
        assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
        assert p.alive
    finally:
        p.close()


def test_lines_written_out_of_turn_are_never_the_answer(tmp_path: Path) -> None:
    """An engine that writes a move after ``isready`` (before any ``go``): that line is thrown
    away, and the answer is the one written after ``go``."""
    received: list[str] = []
    p = make(
        tmp_path,
        {"newgame": ["move knock", "!sleep 0.3"], "go": ["move pass"]},
        received=received,
    )
    try:
        p.start()
        p.new_game(1, 0, Rules())
        p._ensure_ready()
        time.sleep(0.6)  # time for the stray line to be written
        assert decide(p, first_view()) == Move.pass_()
    finally:
        p.close()


def test_a_move_that_does_not_parse_is_malformed_and_quoted(tmp_path: Path) -> None:
    p = make(tmp_path, {"go": ["move sideways"]})
    try:
        p.start()
        fault = decide(p, first_view())
        assert isinstance(fault, PlayerFault)
        assert fault.kind is FaultKind.MALFORMED
        assert fault.detail.startswith("'move sideways': ")
    finally:
        p.close()


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


def test_the_game_and_match_results_are_counted_and_sent(tmp_path: Path) -> None:
    sent: list[str] = []
    p = make(tmp_path, sent=sent)
    try:
        p.start()
        for winner in (0, 1, None, 0):
            p.game_over(0, finished(winner), None)
        assert p.record == [2, 1, 1]
        assert len([line for line in sent if line.startswith("gameover")]) == 4
        scores = [line for line in sent if line.startswith("matchscore")]
        assert len(scores) == 4
        assert scores[0].split()[1:] == ["games", "1", "wins", "1", "losses", "0", "draws", "0"]
        assert scores[-1].split()[1:] == SCORE_4_2_1_1
        p.finish_match()
        assert sent[-2].split() == ["matchover", *SCORE_4_2_1_1]
        assert sent[-1] == "quit"
        assert not p.alive and p.process is None
    finally:
        p.close()


def test_a_loss_is_counted_from_the_engines_seat(tmp_path: Path) -> None:
    sent: list[str] = []
    p = make(tmp_path, sent=sent)
    try:
        p.start()
        game = finished(0)
        count = len(sent)
        p.game_over(1, game, None)
        assert p.record == [0, 1, 0]
        assert sent[count].startswith("gameover")
    finally:
        p.close()


def test_information_for_a_dead_engine_is_dropped(tmp_path: Path) -> None:
    sent: list[str] = []
    p = make(tmp_path, sent=sent)
    p.game_over(0, finished(None), None)  # never started: nothing is sent, the game counts
    assert sent == [] and p.record == [0, 0, 1]


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


def test_the_end_of_a_hand_and_of_a_game_are_sent_as_the_codec_writes_them(
    tmp_path: Path,
) -> None:
    sent: list[str] = []
    p = make(tmp_path, sent=sent)
    log = play_game(Rules(), [KnockerPlayer(1), KnockerPlayer(2)], seed=3)
    entry = log.game.entries[0]
    game = finished(1)
    fault = Fault(0, FaultKind.TIMEOUT, "no move after 1.00s (draw)", 0)
    try:
        p.start()
        p.hand_over(1, entry)
        assert sent[-1] == str(proto.HandOver(1, entry))
        p.game_over(0, game, fault)
        assert sent[-2] == str(proto.GameOver.of(0, game, fault))
        assert sent[-2] != str(proto.GameOver.of(1, game, fault))
        assert sent[-2] != str(proto.GameOver.of(0, game, None))
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


def test_malformed_lines_in_the_handshake_are_logged_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    replies = {"gin": ["option type spin", "ginok protocol x", "ginok protocol 1"]}
    p = make(tmp_path, replies, name="Shown")
    try:
        with caplog.at_level("INFO", logger="referee.engine"):
            p.start()
        assert p.alive and p.id.options == []
    finally:
        p.close()
    ignored = [r.getMessage() for r in caplog.records if "ignored malformed line" in r.getMessage()]
    assert len(ignored) == 2
    assert ignored[0].startswith("Shown: ignored malformed line 'option type spin': malformed")
    assert ignored[1].startswith("Shown: ignored malformed line 'ginok protocol x': malformed")


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
    """``time`` as ``referee.engine`` sees it: ``offset`` seconds ahead of the real clock."""

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
    monkeypatch.setattr(referee.engine, "time", later)

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


def test_a_move_line_is_parsed_once_and_the_lines_kept_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same ``move`` line answered twice is parsed by the codec once; when as many lines
    as are kept have been read, they are forgotten before the next is kept."""
    kept = {
        f"move from another match {i}": Move.pass_() for i in range(referee.engine._REPLIES_KEPT)
    }
    monkeypatch.setattr(referee.engine, "_REPLIES", kept)
    parsed: list[str] = []
    parse = proto.parse_reply

    def counted(line: str) -> Move | None:
        parsed.append(line)
        return parse(line)

    monkeypatch.setattr(proto, "parse_reply", counted)
    p = make(tmp_path)
    try:
        p.start()
        p.new_game(1, 0, Rules())
        assert decide(p, first_view()) == Move.pass_()
        assert decide(p, first_view()) == Move.pass_()
    finally:
        p.close()
    assert parsed == ["move pass"]
    assert kept == {"move pass": Move.pass_()}


def test_lines_thrown_away_are_logged_with_the_engine_name_cut_to_200_characters(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A malformed handshake line (with the codec's complaint), a line written out of turn,
    and a line that is not the move: each is logged, and a long one is cut."""
    bad = "ginok protocol " + "9" * 300
    early = "info early " + "e" * 300
    chat = "info " + "w" * 300
    replies = {"gin": [bad, "ginok protocol 1"], "newgame": [early], "go": [chat, "move pass"]}
    p = make(tmp_path, replies, name="Shown")
    try:
        with caplog.at_level("INFO", logger="referee.engine"):
            p.start()
            p.new_game(1, 0, Rules())
            p._ensure_ready()  # newgame is sent, and answered out of turn
            process = p.process
            assert process is not None
            guard = time.monotonic() + 30
            while not process.ready():
                assert time.monotonic() < guard, "the line out of turn never came"
                time.sleep(0.01)
            assert decide(p, first_view()) == Move.pass_()
    finally:
        p.close()
    with pytest.raises(proto.ProtocolError) as complaint:
        proto.parse_engine_line(bad)
    why = str(complaint.value)
    assert len(why) > 200
    assert [r.getMessage() for r in caplog.records if r.name == "referee.engine"] == [
        f"Shown: ignored malformed line {bad[:80] + '...'!r}: {printable(why, 200)}",
        f"Shown: discarded a line written out of turn: {printable(early, 200)}",
        f"Shown: ignored line: {printable(chat, 200)}",
    ]


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
        with caplog.at_level("INFO", logger="referee.engine"):
            p.finish_match()
        assert p.process is None and p.record == [1, 0, 0]
    finally:
        p.close()
    messages = [r.getMessage() for r in caplog.records if r.name == "referee.engine"]
    assert len(messages) == 1, messages
    assert messages[0].startswith(
        "Shown: could not send an information line: engine 'Shown' (pid "
    ), messages
    assert messages[0].endswith(" cannot write (Broken pipe)"), messages
