"""The in-process runner, its built-in players, and the example record in spec/RECORD.md."""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

import pytest

from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move
from ginproto.record import GameRecord, loads, read_games, write_game
from ginproto.replay import verify_file, verify_game
from ginproto.rules import Rules, Variant
from ginproto.simulate import (
    GreedyPlayer,
    RandomPlayer,
    engine_info,
    example_records,
    play_one,
    run_games,
    seating_of,
)
from ginproto.table import Decision, Fault, FaultKind, GameLog, Player, PlayerFault, play_game

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "RECORD.md"
BEGIN, END = "<!-- record:begin -->", "<!-- record:end -->"


def spec_with_example(spec: str) -> str:
    """The spec's text with the generated example between its markers."""
    head, rest = spec.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n```\n{example_records()}```\n{END}{tail}"


def test_the_spec_shows_a_current_generated_record() -> None:
    """Regenerate with ``GINPROTO_UPDATE_SPEC=1 pytest tests/core/test_simulate.py``."""
    current = SPEC.read_text()
    expected = spec_with_example(current)
    if os.environ.get("GINPROTO_UPDATE_SPEC") and current != expected:
        SPEC.write_text(expected)
        current = expected
    assert current == expected, "spec/RECORD.md's example is stale; see this test's docstring"
    block = current.split(BEGIN, 1)[1].split(END, 1)[0]
    text = block.strip().removeprefix("```").removesuffix("```").lstrip("\n")
    games = loads(text, "RECORD.md")
    assert len(games) == 2 and all(not verify_game(g) for g in games)
    assert "".join(write_game(g) for g in games) == text


def test_example_records_are_deterministic() -> None:
    assert example_records() == example_records()


def test_run_games_appends_records_that_verify(tmp_path: Path) -> None:
    path = tmp_path / "run.rec"
    rules = Rules(variant=Variant.HOLLYWOOD)
    players = [GreedyPlayer(), RandomPlayer(3, knocks=True)]
    result = run_games(rules, players, 12, "run", record=path)
    assert result.games == 12
    assert sum(result.wins) + result.ties == 12
    assert result.hands == sum(t.startswith("hand ") for t in path.read_text().splitlines())
    report = verify_file(str(path))
    assert report.ok and report.games == 12 and report.hands == result.hands
    keys = [g.header("Key") for g in read_games(path)]
    assert keys == [str(k) for k in range(12)]


def test_the_same_seed_gives_the_same_record() -> None:
    rules = Rules(variant=Variant.THREEHANDED, target=50)

    def players() -> list[Player]:
        return [RandomPlayer(1, knocks=True), GreedyPlayer(), RandomPlayer(2, knocks=True)]

    fixed = {"site": "x", "date": "2025.01.01"}
    one = write_game(play_one(rules, players(), "same", 4, **fixed)[1])
    two = write_game(play_one(rules, players(), "same", 4, **fixed)[1])
    other = write_game(play_one(rules, players(), "other", 4, **fixed)[1])
    assert one == two != other


def test_players_from_a_factory_get_the_key(tmp_path: Path) -> None:
    seen: list[int] = []

    def factory(key: int) -> list[Player]:
        seen.append(key)
        return [RandomPlayer(key, knocks=True), GreedyPlayer()]

    logs = []
    run_games(Rules(target=30), factory, 3, "f", first_key=10, on_game=lambda g, r: logs.append(r))
    assert seen == [10, 11, 12]
    assert all(r is not None and not verify_game(loads(write_game(r))[0]) for r in logs)


def test_plain_random_games_finish_and_verify() -> None:
    rules = Rules(target=10)
    game_log, record = play_one(rules, [RandomPlayer(1), RandomPlayer(2)], "r", 0)
    assert game_log.game.is_over
    [back] = loads(write_game(record))
    assert not verify_game(back)


class Crashy(GreedyPlayer):
    """Raises the referee's fault on its fifth decision, as an engine would by crashing."""

    name = "crashy"

    def __init__(self) -> None:
        self.count = 0

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.count += 1
        if self.count == 5:
            from ginproto.table import PlayerFault

            raise PlayerFault(FaultKind.CRASH, 'exit code -11 ("segfault")')
        return super().decide(view, decision)


def test_a_fault_is_recorded_with_its_reason_and_verifies() -> None:
    rules = Rules()
    game_log, record = play_one(rules, [GreedyPlayer(), Crashy()], "fault", 0)
    assert game_log.fault is not None
    text = write_game(record)
    assert 'fault 1 crash "exit code -11 (\\"segfault\\")"' in text
    assert "end forfeit winner 0" in text
    [back] = loads(text)
    assert not verify_game(back)
    assert back.header("Termination") == "forfeit"


def test_engine_info_reads_what_a_player_offers() -> None:
    info = engine_info(RandomPlayer(5, knocks=True))
    assert info.name == "random"
    assert info.command == "in-process ginproto.simulate.RandomPlayer"
    assert dict(info.options) == {"seed": "5", "knocks": "true"}

    class Bare:
        def decide(self, view: GameView, decision: Decision) -> Move:
            return view.hand.legal_moves()[0]

        def hand_over(self, player: int, entry: Entry) -> None:
            pass

        def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
            pass

    bare = engine_info(Bare())
    assert bare.name == "Bare" and bare.version == "" and bare.options == ()


def _sdk_engine(module: str, cls: str) -> Player:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not there")
    engine: Player = getattr(mod, cls)()
    return engine


@pytest.mark.parametrize("variant", list(Variant))
def test_sdk_engines_play_in_process_and_verify(variant: Variant, tmp_path: Path) -> None:
    rules = Rules(variant=variant, target=60)

    def factory(key: int) -> list[Player]:
        made = [
            _sdk_engine("engines.simple_engine", "SimpleEngine"),
            _sdk_engine("engines.random_engine", "RandomEngine"),
            _sdk_engine("engines.simple_engine", "SimpleEngine"),
        ]
        return made[: rules.players]

    path = tmp_path / "sdk.rec"
    run_games(rules, factory, 4, "sdk", record=path)
    report = verify_file(str(path))
    assert report.ok, report.errors[:3]
    first = next(read_games(path))
    assert re.match(r"in-process engines\.\w+\.\w+Engine", first.header("Player0.Command") or "")
    assert first.header("Player1") == "Random"
    assert first.header("Player1.Option") == "Seed=0"


def test_a_bare_game_loop_and_the_runner_agree() -> None:
    rules = Rules(variant=Variant.OKLAHOMA)
    log_a = play_game(rules, [GreedyPlayer(), GreedyPlayer()], "agree", 2)
    log_b, _ = play_one(rules, [GreedyPlayer(), GreedyPlayer()], "agree", 2)
    assert [h.deck for h in log_a.hands] == [h.deck for h in log_b.hands]
    assert log_a.game.totals == log_b.game.totals


def test_a_killed_run_leaves_only_whole_games(tmp_path: Path) -> None:
    """SIGKILL a runner in mid-run: every game in its record file is whole and verifies."""
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "killed.rec"
    script = (
        "from ginproto.rules import Rules\n"
        "from ginproto.simulate import GreedyPlayer, RandomPlayer, run_games\n"
        f"run_games(Rules(), lambda k: [GreedyPlayer(), RandomPlayer(k, knocks=True)], 100000,"
        f" 'kill', record={str(path)!r})\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not path.exists() or path.stat().st_size < 20000):
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    games = list(read_games(path))
    assert len(games) >= 5
    assert all(not g.errors for g in games)
    assert verify_file(str(path)).ok


class Resigner(GreedyPlayer):
    """Gives up every game at its first decision, whichever seat it has."""

    name = "resigner"

    def decide(self, view: GameView, decision: Decision) -> Move:
        raise PlayerFault(FaultKind.RESIGN, "gives up")


def seated(records: list[GameRecord | None]) -> list[tuple[str | None, ...]]:
    """Each game's key and the players in seats 0 and 1."""
    return [
        (r.header("Key"), r.header("Player0"), r.header("Player1")) for r in records if r
    ]


def test_run_games_swaps_the_seats_every_game_and_counts_wins_by_player() -> None:
    records: list[GameRecord | None] = []
    result = run_games(
        Rules(), [GreedyPlayer(), Resigner()], 4, "swap", on_game=lambda _, r: records.append(r)
    )
    assert seated(records) == [
        ("0", "greedy", "resigner"),
        ("1", "resigner", "greedy"),
        ("2", "greedy", "resigner"),
        ("3", "resigner", "greedy"),
    ]
    assert result.wins[:2] == [4, 0]  # the greedy player won all four, from either seat


def test_duplicate_seating_deals_each_key_twice_with_the_seats_swapped() -> None:
    records: list[GameRecord | None] = []
    logs: list[GameLog] = []

    def keep(log: GameLog, record: GameRecord | None) -> None:
        logs.append(log)
        records.append(record)

    run_games(Rules(target=20), [GreedyPlayer(), RandomPlayer(1, knocks=True)], 4, "dup",
              on_game=keep, seating="duplicate")
    assert seated(records) == [
        ("0", "greedy", "random"),
        ("0", "random", "greedy"),
        ("1", "greedy", "random"),
        ("1", "random", "greedy"),
    ]
    assert logs[0].hands[0].deck == logs[1].hands[0].deck != logs[2].hands[0].deck


def test_seating_of_three_players_rotates_through_every_seat() -> None:
    assert [seating_of(g, 3) for g in range(4)] == [(0, 0), (1, 1), (2, 2), (3, 0)]
    assert [seating_of(g, 3, "duplicate") for g in range(4)] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert [seating_of(g, 2, "fixed") for g in range(3)] == [(0, 0), (1, 0), (2, 0)]
    with pytest.raises(ValueError):
        seating_of(0, 2, "sometimes")  # type: ignore[arg-type]
