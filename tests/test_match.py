"""``ginref match`` end to end: real engine processes, every variant, hostile engines, seeds."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ginproto.record import FaultLine, loads
from ginproto.rules import Rules, Variant
from ginproto.table import FaultKind
from referee.cli import cli
from referee.clock import TimeControl
from referee.engine import EngineSpec
from referee.match import MatchConfig, run_match, schedule

HOSTILE = str(Path(__file__).parent / "engines" / "hostile.py")
MARKERS = ("hostile.py", "ginproto-hostile-child")
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
        if state != "Z" and any(m in cmd for m in MARKERS) and "pytest" not in cmd:
            found.append(f"{pid}: {cmd}")
    return found


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
        assert result.played == 3
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
            control=TimeControl(base=None, increment=0, move=0.5),
            startup_timeout=1.0,
        ),
        [f"hostile-{mode}", "Random"],
    )
    assert result.played == 2
    assert time.monotonic() - started < 30
    tally = result.standings.tallies[0]
    assert tally.faults[kind.value] >= 1, tally.faults
    assert tally.wins == 0
    games = loads(record.read_text())
    fault_lines = [i.text() for g in games for i in g.events if i.text().startswith("fault")]
    assert fault_lines and all(f" {kind.value} " in line for line in fault_lines), fault_lines
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
         str(record)],
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
    assert result.played == 2
    assert sum(result.standings.tallies[0].faults.values()) == 0
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


def test_missing_engine_program_is_a_ruling_not_a_crash() -> None:
    result = CliRunner().invoke(
        cli, ["match", "/nonexistent/engine", "random", "--games", "1", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "crash 1" in result.output


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
    from referee.engine import EnginePlayer

    class Pipe:
        alive = True

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
