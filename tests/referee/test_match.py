"""``ginref match`` end to end: real engine processes, every variant, hostile engines, seeds."""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ginproto.record import FaultLine, loads
from ginproto.rules import Rules, Variant
from ginproto.table import FaultKind
from referee.cli import cli
from referee.scheduling.match import MatchConfig, run_match, schedule
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec

HOSTILE = str(Path(__file__).parents[1] / "programs" / "hostile.py")
MARKERS = (HOSTILE, "ginproto-hostile-child")
# Each test process marks the engines it starts bare (they inherit its environment), so that
# the look for leftovers passes over those of another test process running beside it.
RUN = f"GINPROTO_TEST_PROCESS={os.getpid()}"
os.environ["GINPROTO_TEST_PROCESS"] = str(os.getpid())
STANDARD = Rules()


def hostile(mode: str) -> EngineSpec:
    return EngineSpec((sys.executable, HOSTILE, mode))


def our_processes() -> list[str]:
    """Command lines of live processes started by these tests' hostile engines."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        cmd = raw.replace(b"\0", b" ").decode(errors="replace")
        if state == "Z" or not any(m in cmd for m in MARKERS) or "pytest" in cmd:
            continue
        if not _ours(int(pid)):  # another test process's engine
            continue
        found.append(f"{pid}: {cmd}")
    return found


def _ours(pid: int) -> bool:
    """Whether the process was started by this test process: it or the nearest of its
    ancestors that carries a mark (a sandboxed engine does not inherit the environment) bears
    this one's, or this process is among its ancestors. An orphan counts as ours."""
    while pid > 1:
        if pid == os.getpid():
            return True
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return True
        marks = [v for v in environ.split("\0") if v.startswith("GINPROTO_TEST_PROCESS=")]
        if marks:
            return RUN in marks
        if parent > 1 and _is_test_process(parent) and parent != os.getpid():
            return False  # a sandboxed engine of another test process
        pid = parent
    return True


def _is_test_process(pid: int) -> bool:
    """A pytest process, or a pytest-xdist worker (an execnet interpreter)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return "pytest" in cmd or "exec(eval(sys.stdin.readline()))" in cmd


def no_processes_left(timeout: float = 3.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := our_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def config(
    *engines: EngineSpec, rules: Rules = STANDARD, games: int = 2, **kw: object
) -> MatchConfig:
    return MatchConfig(
        engines=engines,
        rules=rules,
        games=games,
        seed=kw.pop("seed", 7),  # type: ignore[arg-type]
        control=kw.pop("control", TimeControl(base=30, increment=0.5, move=1.0)),  # type: ignore[arg-type]
        startup_timeout=kw.pop("startup_timeout", 5.0),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


# -- schedule ----------------------------------------------------------------------------
def test_schedule_rotates_seats_and_duplicate_shares_decks() -> None:
    jobs = schedule(Rules(), [0, 1], 4, seed=1)
    assert [j.lineup for j in jobs] == [(0, 1), (1, 0), (0, 1), (1, 0)]
    assert [j.key for j in jobs] == [0, 1, 2, 3]
    dup = schedule(Rules(), [0, 1], 4, seed=1, duplicate=True)
    assert [j.key for j in dup] == [0, 0, 1, 1]
    three = schedule(Rules(variant=Variant.THREEHANDED), [0, 1, 2], 3, seed=1, duplicate=True)
    assert [j.lineup for j in three] == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert [j.key for j in three] == [0, 0, 0]


# -- every variant, real processes ---------------------------------------------------------
@pytest.mark.parametrize("variant", ["standard", "oklahoma", "hollywood"])
def test_builtin_engines_play_every_two_player_variant(variant: str, tmp_path: Path) -> None:
    record = tmp_path / "games.gin"
    result = CliRunner().invoke(
        cli,
        [
            "match",
            "random",
            "simple",
            "--variant",
            variant,
            "--games",
            "2",
            "--seed",
            "3",
            "--record",
            str(record),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Score of Random vs Simple:" in result.output
    games = loads(record.read_text())
    assert len(games) == 2 and all(not g.errors for g in games)
    verify = CliRunner().invoke(cli, ["replay", "--verify", str(record)])
    assert verify.exit_code == 0, verify.output


def test_three_players_with_advice(tmp_path: Path) -> None:
    record = tmp_path / "three.gin"
    result = CliRunner().invoke(
        cli,
        [
            "match",
            "simple",
            "random",
            "simple",
            "--games",
            "2",
            "--seed",
            "5",
            "--record",
            str(record),
            "-q",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    text = record.read_text()
    assert " advise " in text  # the sitter's advice reached the record
    assert CliRunner().invoke(cli, ["replay", "--verify", str(record)]).exit_code == 0


def test_same_seed_gives_identical_records_that_verify(tmp_path: Path) -> None:
    paths = [tmp_path / "a.gin", tmp_path / "b.gin"]
    for path in paths:
        result = run_match(
            config(
                EngineSpec.parse("simple"),
                EngineSpec.parse("random"),
                games=3,
                record=str(path),
                duplicate=True,
            ),
            ["Simple", "Random"],
        )
        assert len(result.games) == 3
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert CliRunner().invoke(cli, ["replay", "--verify", str(paths[0])]).exit_code == 0


def test_referee_and_in_process_runner_give_the_same_games(tmp_path: Path) -> None:
    from engines.random_engine import RandomEngine
    from engines.simple_engine import SimpleEngine
    from ginproto.record import EngineInfo, GameRecord, record_from_log
    from ginproto.table import play_game

    def body(record: GameRecord) -> list[str]:
        """The record's events: everything but the headers (which name the engines)."""
        return [i.text() for i in record.events if type(i).__name__ not in ("Header", "Comment")]

    path = tmp_path / "ref.gin"
    run_match(
        config(EngineSpec.parse("simple"), EngineSpec.parse("random"), games=2, record=str(path)),
        ["Simple", "Random"],
    )
    by_referee = loads(path.read_text())
    jobs = schedule(STANDARD, [0, 1], 2, seed=7)
    for job, recorded in zip(jobs, by_referee, strict=True):
        engines = {0: SimpleEngine, 1: RandomEngine}
        log = play_game(job.rules, [engines[e]() for e in job.lineup], job.seed, job.key)
        in_process = record_from_log(log, [EngineInfo("a"), EngineInfo("b")])
        assert body(in_process) == body(recorded)
        assert len(body(recorded)) > 20


# -- hostile engines -------------------------------------------------------------------------
CASES = [
    ("crash-start", FaultKind.CRASH, "exit"),
    ("crash-mid", FaultKind.CRASH, "exit"),
    ("no-ginok", FaultKind.STARTUP, "no ginok"),
    ("hang-go", FaultKind.TIMEOUT, "no move"),
    ("garbage", FaultKind.MALFORMED, "'move'"),
    ("longline", FaultKind.MALFORMED, "longer than"),
    ("orphan", FaultKind.CRASH, "exit"),
    ("not-held", FaultKind.ILLEGAL, "not in the player's hand"),
    ("wrong-kind", FaultKind.ILLEGAL, "is not allowed now"),
    ("above-limit", FaultKind.ILLEGAL, "above the knock limit"),
    ("discard-taken", FaultKind.ILLEGAL, "just taken"),
    ("bad-melds", FaultKind.ILLEGAL, "bad declared melds"),
]


@pytest.mark.parametrize(("mode", "kind", "reason"), CASES, ids=[c[0] for c in CASES])
def test_hostile_engine_forfeits_with_the_right_ruling(
    mode: str, kind: FaultKind, reason: str, tmp_path: Path
) -> None:
    record = tmp_path / "games.gin"
    started = time.monotonic()
    result = run_match(
        config(
            hostile(mode),
            EngineSpec.parse("random"),
            games=2,
            record=str(record),
            # Room enough that the healthy engine is never short of time on a busy machine.
            control=TimeControl(base=None, increment=0, move=1.0),
            startup_timeout=3.0,
        ),
        [f"hostile-{mode}", "Random"],
    )
    assert len(result.games) == 2
    assert time.monotonic() - started < 30
    tally, other = result.standings
    assert tally.faults[kind.value] >= 1, tally.faults
    assert tally.wins == 0
    assert sum(other.faults.values()) == 0, other.faults  # the healthy engine is never blamed
    games = loads(record.read_text())
    fault_lines = [i.text() for g in games for i in g.events if i.text().startswith("fault")]
    assert fault_lines and all(f" {kind.value} " in line for line in fault_lines), fault_lines
    for game in games:  # each game's fault names the hostile engine's seat in that game
        seat = next(p for p in (0, 1) if game.header(f"Player{p}") == f"hostile-{mode}")
        faults = [i.text() for i in game.events if i.text().startswith("fault")]
        assert faults == [] or all(line.startswith(f"fault {seat} ") for line in faults)
    assert any(reason in line for line in fault_lines), fault_lines
    assert CliRunner().invoke(cli, ["replay", "--verify", str(record)]).exit_code == 0
    assert no_processes_left() == []


@pytest.mark.parametrize("mode", ["loud-id", "loud-fault"])
def test_an_engines_own_text_is_bounded_and_escaped_on_screen_and_in_records(
    mode: str, tmp_path: Path
) -> None:
    """300 KB id lines, or a malformed move, full of terminal controls (clear screen, window
    title, bell, carriage return): the record stays readable and verifies, and nothing raw
    reaches the terminal."""
    from ginproto.text import DETAIL_LIMIT, ID_LIMIT

    record = tmp_path / "games.gin"
    command = " ".join([sys.executable, HOSTILE, mode])
    result = CliRunner().invoke(
        cli,
        ["match", command, "random", "--games", "1", "--seed", "1", "--tc", "inf", "--record",
         str(record), "--rule", "hand_cap=1"],  # one hand: random play rarely ends a game
    )
    assert result.exit_code == 0, result.output
    for raw in ("\x1b", "\x07", "\r"):
        assert raw not in result.output
    text = record.read_text()
    assert max(len(line) for line in text.splitlines()) < 2 * max(ID_LIMIT, DETAIL_LIMIT)
    assert CliRunner().invoke(cli, ["replay", "--verify", str(record)]).exit_code == 0
    [game] = loads(text)
    if mode == "loud-id":
        assert r"Loud\x1b[2J\x1b]0;pwned\x07" in result.output
        name, version = game.players[0].name, game.players[0].version
        assert name.startswith(r"Loud\x1b[2J") and len(name) <= ID_LIMIT
        assert version.startswith(r"v\x1b[31m999") and len(version) <= ID_LIMIT
    else:
        fault = next(i for i in game.events if isinstance(i, FaultLine))
        assert fault.kind is FaultKind.MALFORMED and len(fault.detail) <= DETAIL_LIMIT
        assert "\x1b" not in fault.detail and r"\x1b[2J" in fault.detail
    shown = CliRunner().invoke(cli, ["replay", str(record)])
    assert shown.exit_code == 0 and "\x1b" not in shown.output and "\x07" not in shown.output


@pytest.mark.parametrize("mode", ["stderr-flood", "ignore-quit"])
def test_noisy_or_stubborn_engine_plays_and_is_still_reaped(mode: str) -> None:
    started = time.monotonic()
    # A short game (target 25) against a player that knocks: the point is the process handling.
    result = run_match(
        config(hostile(mode), EngineSpec.parse("simple"), games=2, rules=Rules(target=25)),
        [mode, "Simple"],
    )
    assert len(result.games) == 2
    assert sum(result.standings[0].faults.values()) == 0
    assert time.monotonic() - started < 60
    assert no_processes_left() == []


def test_misbehaving_match_still_ends_with_status_zero_and_a_report() -> None:
    result = CliRunner().invoke(
        cli,
        [
            "match",
            f"{sys.executable} {HOSTILE} crash-mid",
            f"{sys.executable} {HOSTILE} hang-go",
            "--games",
            "2",
            "--move-timeout",
            "0.3",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "crash" in result.output and "timeout" in result.output
    assert no_processes_left() == []


# -- command line -------------------------------------------------------------------------------
def test_bad_arguments_are_usage_errors_not_tracebacks() -> None:
    runner = CliRunner()
    for args in (
        ["match", "random"],
        ["match", "random", "simple", "--variant", "threehanded"],
        ["match", "random", "simple", "--rule", "gin_bonus=lots"],
        ["match", "random", "simple", "--rule", "nonsense=1"],
        ["match", "random", "simple", "--tc", "fast"],
        ["match", "random", "simple", "-o", "3:Seed=1"],
        ["match", "random", "'unclosed"],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def _engines_that_cannot_start(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Engine arguments that cannot play, each with a text its error must show."""
    shebang = tmp_path / "crlf.py"
    shebang.write_bytes(b"#!/usr/bin/env python3\r\nprint('id name x')\n")
    shebang.chmod(0o755)
    return {
        "misspelt built-in": ("simpel", "did you mean 'simple'?"),
        "missing program": ("/nonexistent/engine", "No such file"),
        "a directory": (str(tmp_path), "Permission denied"),
        "bad shebang": (str(shebang), "python3"),  # from env, on its stderr
        "exits at once": ("sh -c 'exit 0'", "exited with code 0"),
        "no ginok": (f"{sys.executable} {HOSTILE} no-ginok", "no ginok"),
    }


@pytest.mark.parametrize(
    "case",
    ["misspelt built-in", "missing program", "a directory", "bad shebang", "exits at once",
     "no ginok"],
)
def test_an_engine_that_cannot_start_stops_the_match_before_game_1(
    case: str, tmp_path: Path
) -> None:
    engine, shown = _engines_that_cannot_start(tmp_path)[case]
    record = tmp_path / "games.gin"
    result = CliRunner().invoke(
        cli,
        ["match", "random", engine, "--games", "2", "--record", str(record),
         "--startup-timeout", "1"],
    )
    assert result.exit_code == 1, result.output
    assert "cannot be used" in result.output and shown in result.output, result.output
    assert "Rank" not in result.output and "Score of" not in result.output
    assert "Traceback" not in result.output
    assert not record.exists()
    assert no_processes_left() == []


def test_an_option_the_engine_does_not_declare_is_refused_before_game_1(tmp_path: Path) -> None:
    record = tmp_path / "games.gin"
    for option, declared in (("Sed=3", "Seed"), ("2:Sed=3", "none")):
        result = CliRunner().invoke(
            cli, ["match", "random", "simple", "-o", option, "--record", str(record)]
        )
        assert result.exit_code == 1, result.output
        engine = "simple" if option.startswith("2:") else "random"
        assert (
            f"engine '{engine}': -o Sed: the engine declares no such option"
            f" (declared: {declared})" in result.output
        ), result.output
        assert not record.exists()
    result = CliRunner().invoke(cli, ["match", "random", "simple", "-o", "1:Seed=x"])
    assert result.exit_code == 1 and "Seed=x" in result.output, result.output
    result = CliRunner().invoke(
        cli, ["match", "random", "simple", "-o", "1:Seed=3", "--games", "1", "-q"]
    )
    assert result.exit_code == 0, result.output


def test_env_reaches_the_engine_and_only_the_engine_it_names(tmp_path: Path) -> None:
    """An engine that prints its environment to stderr, kept with --stderr-dir."""
    script = tmp_path / "envbot.py"
    script.write_text(
        "import os, runpy, sys\n"
        "sys.stderr.write('ENV ' + repr(sorted(os.environ.items())) + '\\n')\n"
        "sys.stderr.flush()\n"
        "runpy.run_module('engines.random_engine', run_name='__main__')\n"
    )
    root = Path(__file__).resolve().parents[2]
    folder = tmp_path / "stderr"
    result = CliRunner().invoke(
        cli,
        [
            "match", f"{sys.executable} {script}", f"{sys.executable} {script}",
            "--env", f"PYTHONPATH={root}", "--env", "1:GIN_TEST=one", "--env", "2:GIN_TEST=two",
            "--games", "1", "-q", "--name", "1=A", "--name", "2=B",
            "--stderr-dir", str(folder),
            "--rule", "hand_cap=1",  # one hand: two random players rarely end a game
        ],
    )
    assert result.exit_code == 0, result.output
    seen = {f.name.split(".")[0]: f.read_text() for f in folder.iterdir()}
    assert "('GIN_TEST', 'one')" in seen["A"] and "('GIN_TEST', 'two')" in seen["B"]
    for text in seen.values():
        names = {name for name, _ in ast.literal_eval(text.splitlines()[0][4:])}
        # TMPDIR and PWD: the sandbox's private /tmp and the working directory (PROTOCOL 2.1)
        allowed = {"PATH", "HOME", "LANG", "TMPDIR", "PWD", "PYTHONPATH", "GIN_TEST"}
        assert names <= allowed, names


def test_sprt_stops_a_lopsided_match_early() -> None:
    result = CliRunner().invoke(
        cli,
        [
            "match",
            "simple",
            "random",
            "--games",
            "200",
            "--seed",
            "1",
            "--sprt",
            "0",
            "50",
            "0.05",
            "0.05",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "H1 accepted" in result.output and "Stopped early" in result.output


def test_json_output_has_the_figures() -> None:
    import json
    import math

    result = CliRunner().invoke(
        cli, ["match", "simple", "random", "--games", "2", "--seed", "1", "--json", "-q"]
    )
    data = json.loads(result.output)
    assert data["games"] == 2 and data["engines"][0]["name"] == "Simple"
    h = data["head_to_head"]
    assert set(h) >= {"wins", "losses", "draws", "elo", "los"}
    # Simple wins both games: its Elo and both bounds are +inf, which JSON gives as null, and
    # the LOS is 0.5 (1 + erf((W - L) / sqrt(2 (W + L)))) = 0.5 (1 + erf(1)).
    assert (h["wins"], h["losses"], h["draws"], h["score"]) == (2, 0, 0, 1.0)
    assert h["elo"] == {"elo": None, "lo": None, "hi": None}
    assert h["los"] == pytest.approx(0.5 * (1 + math.erf(1)))
    simple, rand = data["engines"]
    assert rand["hands_won"] == 0 and rand["points_per_hand"]["mean"] == 0.0
    net = h["net_points_per_hand"]
    assert net["hands"] == simple["hands"] == rand["hands"]
    assert net["mean"] == pytest.approx(
        simple["points_per_hand"]["mean"] - rand["points_per_hand"]["mean"]
    )


def test_matchscore_counts_wins_losses_and_draws_in_their_places() -> None:
    """The information lines after each game: a swap of draws and losses shows here."""
    from ginproto.cards import DECK
    from ginproto.game import Game, GamePhase
    from ginproto.moves import Move
    from referee.seat.player import EnginePlayer

    class Pipe:
        alive = True
        stderr_tail = ""
        stderr_error = None

        def __init__(self) -> None:
            self.sent: list[str] = []

        def send(self, line: str) -> None:
            self.sent.append(line)

        def close(self, grace: float, quit_line: str) -> None:
            self.alive = False

    def won_by(winner: int | None) -> Game:
        if winner is not None:
            game = Game(Rules())
            game.forfeit(1 - winner)
            return game
        game = Game(Rules(hand_cap=1))  # one drawn hand, and the game ends level
        game.deal(DECK)
        game.apply(Move.pass_())
        game.apply(Move.pass_())
        while game.phase is GamePhase.PLAY:
            drawn = game.apply(Move.stock()).card
            assert drawn is not None
            game.apply(Move.discard(drawn))
        assert game.is_over and game.winner is None
        return game

    player = EnginePlayer(EngineSpec.parse("random"), TimeControl.parse("inf"))
    pipe = Pipe()
    player.process = pipe  # type: ignore[assignment]
    for winner in (0, 1, 1, None):  # for player 0: won, lost, lost, drawn
        player.game_over(0, won_by(winner), None)
    scores = [line for line in pipe.sent if line.startswith("matchscore")]
    assert scores[-1] == "matchscore games 4 wins 1 losses 2 draws 1"
    assert scores[0] == "matchscore games 1 wins 1 losses 0 draws 0"
    player.finish_match()
    assert pipe.sent[-1] == "matchover games 4 wins 1 losses 2 draws 1"


def test_hollywood_standings_show_the_three_games_of_each_series() -> None:
    result = CliRunner().invoke(
        cli,
        [
            "match",
            "simple",
            "random",
            "--variant",
            "hollywood",
            "--games",
            "2",
            "--seed",
            "4",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("Hollywood games won"))
    counts = [int(n) for n in re.findall(r" (\d+)(?:,|$)", line)]
    assert "2 series" in line and sum(counts) == 6  # every series closes all three games


def test_debug_log_has_every_line_with_time_engine_and_direction(tmp_path: Path) -> None:
    log = tmp_path / "debug.log"
    result = CliRunner().invoke(
        cli,
        ["match", "simple", "random", "--games", "2", "--seed", "2", "-q", "--debug-log", str(log)],
    )
    assert result.exit_code == 0, result.output
    lines = log.read_text().splitlines()
    assert lines[0] == "# game 1" and "# game 2" in lines
    sent = [x for x in lines if " > " in x and not x.startswith("#")]
    received = [x for x in lines if " < " in x]
    assert any(re.fullmatch(r" *\d+\.\d{4} Simple > position .*", x) for x in sent)
    assert any(re.fullmatch(r" *\d+\.\d{4} Random < move \w+.*", x) for x in received)
    assert any(" > gin protocol 1" in x for x in sent) and any(" > quit" in x for x in sent)


# -- the referee's own files --------------------------------------------------------------------
LOGGING_ENGINE = """
import sys
from engines.random_engine import RandomEngine

engine = RandomEngine()
for line in sys.stdin:
    if line.startswith("newgame"):
        sys.stderr.write("log " * 2500 + "\\n")  # 10 kB of stderr a game
        sys.stderr.flush()
    if not engine.handle(line, sys.stdout):
        break
"""


def test_a_stderr_file_that_cannot_be_written_is_noted_and_the_engine_still_drained() -> None:
    """/dev/full as the stderr file: the engine writes 1 MB to stderr (far more than a pipe
    holds) and still gets its line out, and the failure is the referee's to report."""
    from referee.seat.process import EngineProcess

    code = "import sys; sys.stderr.write('x' * (1 << 20)); sys.stderr.flush(); print('done')"
    with EngineProcess.start([sys.executable, "-c", code], stderr_path="/dev/full") as engine:
        assert engine.read_line(30.0) == "done"
        error = engine.stderr_error
        assert error is not None and error.strerror == "No space left on device"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 kB tmpfs, where the system allows mounting one (as root on Linux)."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True, check=False,
    ) if shutil.which("mount") and os.geteuid() == 0 else None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_for_stderr_stops_the_match_and_keeps_the_finished_games(
    tmp_path: Path, small_disk: Path
) -> None:
    script = tmp_path / "logging_engine.py"
    script.write_text(LOGGING_ENGINE)
    record = tmp_path / "games.gin"
    root = Path(__file__).resolve().parents[2]
    result = CliRunner().invoke(
        cli,
        [
            "match", f"{sys.executable} {script}", "simple", "--games", "40", "--seed", "3",
            "--env", f"1:PYTHONPATH={root}", "--stderr-dir", str(small_disk / "stderr"),
            "--record", str(record), "-q",
        ],
    )
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output, result.output
    assert "Rank" not in result.output and "Traceback" not in result.output
    games = loads(record.read_text())
    assert 1 <= len(games) < 40, len(games)
    assert f"after {len(games)} finished games, kept in {record}" in result.output
    assert "forfeit" not in record.read_text()  # no engine was blamed for the full disk
    assert CliRunner().invoke(cli, ["replay", "--verify", str(record)]).exit_code == 0


def test_a_restarted_engine_keeps_its_earlier_stderr(tmp_path: Path) -> None:
    """The crash-mid engine is restarted after each crash; its stderr file keeps every start."""
    script = tmp_path / "noisy_crash.sh"
    script.write_text(
        f'#!/bin/sh\necho "started $$" >&2\nexec {sys.executable} {HOSTILE} crash-mid\n'
    )
    script.chmod(0o755)
    root = Path(__file__).resolve().parents[2]
    folder = tmp_path / "stderr"
    result = CliRunner().invoke(
        cli,
        [
            "match", str(script), "random", "--games", "3", "--seed", "1", "-q",
            "--env", f"1:PYTHONPATH={root}", "--stderr-dir", str(folder), "--name", "1=noisy",
            "--read", sys.base_prefix,  # the interpreter the script starts, wherever it lives
        ],
    )
    assert result.exit_code == 0, result.output
    assert "crash 3" in result.output
    (log,) = [f for f in folder.iterdir() if f.name.startswith("noisy")]
    assert log.read_text().count("started ") == 3  # one process per game, each line kept


@pytest.mark.parametrize("option", ["--record", "--debug-log"])
def test_a_referee_file_that_cannot_be_written_is_an_error_not_a_ruling(
    small_disk: Path, option: str
) -> None:
    """A full disk under the record or the debug log (never a device of the machine's: the
    referee refuses those before game 1, tests/referee/test_outputs.py)."""
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(b"x" * 4096)
    target = small_disk / "out"
    result = CliRunner().invoke(
        cli, ["match", "simple", "random", "--games", "3", option, str(target), "-q"]
    )
    assert result.exit_code == 1, result.output
    assert "the referee cannot write its own file: No space left on device" in result.output
    assert "Rank" not in result.output and "Traceback" not in result.output


def test_ctrl_c_prints_the_standings_of_the_finished_games(tmp_path: Path) -> None:
    record = tmp_path / "games.gin"
    referee = [sys.executable, "-c", "from referee.cli import main; main()"]
    process = subprocess.Popen(
        [*referee, "match", "simple", "random", "--games", "100000", "--tc", "inf",
         "--record", str(record), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if record.exists() and record.read_text().count("[Game ") >= 2:
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, (out, err)
    played = len(loads(record.read_text()))
    assert played >= 1  # a game being written at the interrupt is taken back whole
    assert f"Interrupted after {played} of 100000 games" in err
    rows = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    assert [(row[1], int(row[2])) for row in rows] == [("Simple", played), ("Random", played)]
    assert "Traceback" not in err and "Aborted" not in err


LATE_ONCE_ENGINE = """
import os, sys, time
from engines.random_engine import RandomEngine

engine, decisions = RandomEngine(), 0
print("started", file=sys.stderr, flush=True)
for line in sys.stdin:
    if line.startswith("go "):
        decisions += 1
        if decisions == 3 and not os.path.exists(os.environ["LATE_MARK"]):
            open(os.environ["LATE_MARK"], "w").close()
            time.sleep(float(os.environ["LATE_BY"]))  # past the limit; then it answers
    if not engine.handle(line, sys.stdout):
        break
"""


def test_a_move_after_a_timeout_is_never_taken_as_a_later_answer(tmp_path: Path) -> None:
    """The engine's third decision comes 0.5 s past its limit, once in the whole match (a
    file marks it). The referee rules a timeout, and the late move is never read: the engine's
    next game is played by a new process, and no other fault follows, for either engine."""
    script = tmp_path / "late_once.py"
    script.write_text(LATE_ONCE_ENGINE)
    root = Path(__file__).resolve().parents[2]
    record = tmp_path / "games.gin"
    folder = tmp_path / "stderr"
    result = CliRunner().invoke(
        cli,
        [
            "match", f"{sys.executable} {script}", "random", "--games", "4", "--seed", "5",
            "--tc", "inf", "--move-timeout", "3", "--record", str(record), "-q",
            "--name", "1=late", "--stderr-dir", str(folder),
            "--env", f"1:PYTHONPATH={root}", "--env", f"1:LATE_MARK={tmp_path / 'mark'}",
            "--env", "1:LATE_BY=3.6",
            "--no-sandbox",  # the mark must outlive the engine's restart: a file of the host's
            "--rule", "hand_cap=2",  # short games: two random players rarely end one
        ],
    )
    assert result.exit_code == 0, result.output
    games = loads(record.read_text())
    faults = [i.text() for g in games for i in g.events if i.text().startswith("fault")]
    assert len(faults) == 1 and " timeout " in faults[0], faults
    rows = {row[1]: " ".join(row[8:]) for row in
            (line.split() for line in result.output.splitlines() if line[:1].isdigit())}
    assert rows == {"late": "timeout 1", "Random": "none"}, result.output
    (log,) = [f for f in folder.iterdir() if f.name.startswith("late")]
    assert log.read_text().count("started") == 2  # restarted once, after its fault
    assert CliRunner().invoke(cli, ["replay", "--verify", str(record)]).exit_code == 0
