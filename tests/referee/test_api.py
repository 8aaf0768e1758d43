"""The documented Python API (docs/API.md), used as a notebook would use it.

These tests import only the names that docs/API.md documents, from ``ginproto`` and
``referee`` themselves, and run real engines: a match whose result is checked field by field
and against ``ginref match --json``, a tournament, an engine driven with ``RunningEngine.popen``
whose moves the rules engine accepts, and the errors a user meets first.
"""

from __future__ import annotations

import asyncio
import doctest
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ginproto
import referee
from ginproto import Decision, Game, GameEnd, Rules, read_games, shuffled_deck, verify_file
from referee import (
    Clock,
    EngineNotReady,
    EngineSpec,
    GameOutcome,
    MatchResult,
    Outputs,
    RunningEngine,
    Sandbox,
    play_match,
    play_match_async,
    play_tournament,
)

GINREF = [str(Path(sys.executable).with_name("ginref"))]


def children() -> set[int]:
    """The live (or unreaped) child processes of this test process."""
    found: set[int] = set()
    for task in Path("/proc/self/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


needs_proc = pytest.mark.skipif(
    not Path("/proc/self/task").exists(), reason="counting child processes needs /proc"
)


def test_every_documented_name_is_importable_from_the_package() -> None:
    for package in (ginproto, referee):
        for name in package.__all__:
            assert getattr(package, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'play_matches'"):
        _ = referee.play_matches  # type: ignore[attr-defined]


def test_a_match_gives_its_games_standings_and_elo_as_the_cli_does(tmp_path: Path) -> None:
    record = tmp_path / "games.gin"
    seen: list[GameOutcome] = []
    engines: list[str | EngineSpec] = [EngineSpec.parse("simple", name="A"), "simple"]
    result = play_match(
        engines, games=4, seed=7, duplicate=True, outputs=Outputs(record), on_game=seen.append
    )
    assert isinstance(result, MatchResult)
    assert result.names == ("A", "Simple")
    assert result.seed == 7 and str(result.variant) == "standard"
    # The games: every one, in order, each played by both engines with the seats swapped.
    assert [g.number for g in result.games] == [1, 2, 3, 4]
    assert list(result.games) == seen
    assert [g.engines for g in result.games] == [(0, 1), (1, 0), (0, 1), (1, 0)]
    assert [g.key for g in result.games] == [0, 0, 1, 1]  # duplicate pairs share a deal
    for game in result.games:
        assert game.fault is None and game.end is GameEnd.TARGET
        assert game.winner in (0, 1)
        assert game.hands >= 1
        (scores,) = game.scores
        assert scores[game.winner] >= 100 > scores[1 - game.winner]
    # The standings add the games up.
    a, b = result.standings
    assert (a.name, b.name) == ("A", "Simple")
    assert a.games == b.games == 4
    assert a.wins == b.losses == sum(g.winner == 0 for g in result.games)
    assert a.draws == b.draws == 0
    assert a.hands == sum(g.hands for g in result.games)
    assert a.faults == {} and b.faults == {}
    assert a.points_per_hand is not None
    assert a.points_per_hand.lo <= a.points_per_hand.mean <= a.points_per_hand.hi
    # A mirror match: the same engine on both sides of each deal.
    assert a.wins == 2
    assert result.elo is not None
    assert result.elo.lo < result.elo.elo < result.elo.hi
    assert all(math.isfinite(x) for x in result.elo)
    assert result.los == pytest.approx(0.5)
    assert result.net_points_per_hand is not None
    assert result.pairs is not None and sum(result.pairs.counts) == 2
    assert result.sprt is None and not result.stopped_early
    assert result.table.startswith("Score of A vs Simple: 2 - 2 - 0")
    # The record holds every game, and each one verifies.
    assert len(list(read_games(record))) == 4
    report = verify_file(str(record))
    assert report.ok and report.games == 4
    # The same match on the command line prints the same figures.
    cli = subprocess.run(
        [
            *GINREF,
            "match",
            "simple",
            "simple",
            "--name",
            "1=A",
            "--games",
            "4",
            "--seed",
            "7",
            "--duplicate",
            "--json",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert json.loads(cli.stdout) == result.to_json()
    assert result.to_json() is not result.to_json()  # a new dict each time


def test_a_match_json_has_no_infinity_where_the_result_has_one() -> None:
    result = play_match(["simple", "random"], games=2, seed=1, clock=Clock(tc="inf"))
    assert result.standings[0].wins == 2
    assert result.elo is not None and result.elo.elo == math.inf
    assert result.to_json()["head_to_head"]["elo"] == {"elo": None, "lo": None, "hi": None}


def test_a_three_player_match_has_no_two_engine_figures() -> None:
    result = play_match(["simple", "random", "simple"], games=3, seed=2, clock=Clock(tc="inf"))
    assert str(result.variant) == "threehanded"
    assert len(result.games) == 3 and len(result.standings) == 3
    assert sorted(result.games[0].engines) == [0, 1, 2]
    assert {g.engines for g in result.games} == {(0, 1, 2), (1, 2, 0), (2, 0, 1)}
    assert result.elo is None and result.los is None and result.net_points_per_hand is None
    assert sum(s.wins for s in result.standings) + result.standings[0].draws == 3
    assert "head_to_head" not in result.to_json()


def test_an_sprt_stops_the_match_and_says_why() -> None:
    result = play_match(["simple", "random"], games=200, seed=1, sprt=(0, 300, 0.05, 0.05))
    assert result.stopped_early and result.sprt is not None
    assert result.sprt.state == "H1" and result.sprt.llr >= result.sprt.upper
    assert len(result.games) == result.standings[0].games < 200
    assert result.to_json()["sprt"]["state"] == "H1"


def test_the_async_flavour_runs_the_same_match() -> None:
    async def main() -> MatchResult:
        return await play_match_async(["simple", "simple"], games=2, seed=3)

    result = asyncio.run(main())
    same = play_match(["simple", "simple"], games=2, seed=3)
    assert result.to_json() == same.to_json()


def test_a_tournament_returns_the_standings_the_cli_shows(tmp_path: Path) -> None:
    config = {
        "games": 2,
        "seed": 5,
        "engines": [
            {"name": "One", "command": "simple"},
            {"name": "Two", "command": "random", "options": {"Seed": 1}},
            {"name": "Three", "command": "simple"},
        ],
    }
    out = tmp_path / "cup"
    standings = play_tournament(config, output=out)
    assert standings.games == 6  # three pairings of two games
    rows = standings.rows()
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert {r["name"] for r in rows} == {"One", "Two", "Three"}
    assert all(r["games"] == 4 for r in rows)
    assert sum(r["wins"] for r in rows) + sum(r["draws"] for r in rows) / 2 == 6
    assert rows[-1]["name"] == "Two"  # random loses to simple
    assert len(list(read_games(out / "games.gin"))) == 6
    # The command line resumes it, finds it finished, and shows the same standings.
    cli = subprocess.run(
        [*GINREF, "tournament", "--resume", str(out), "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    shown = json.loads(cli.stdout)
    assert shown.pop("tournament")["complete"] is True
    assert shown == standings.to_json()


def test_a_tournament_from_a_toml_file(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        'games = 2\nseed = 1\noutput = "results"\nformat = "gauntlet"\n'
        '[[engines]]\nname = "S"\ncommand = "simple"\n'
        '[[engines]]\nname = "R"\ncommand = "random"\n'
    )
    standings = play_tournament(config)
    assert standings.games == 2
    assert (tmp_path / "results" / "games.gin").exists()


@needs_proc
def test_an_engine_driven_from_python_answers_legal_moves() -> None:
    before = children()
    rules = Rules()
    game = Game(rules)
    moves = 0
    with (
        RunningEngine.popen("simple") as simple,
        RunningEngine.popen("random", options={"Seed": 3}) as rnd,
    ):
        assert simple.id.name == "Simple"
        assert [o.name for o in rnd.id.options] == ["Seed"] and rnd.options == {"Seed": "3"}
        pids = {simple.pid, rnd.pid}
        assert None not in pids and pids <= children()
        engines = (simple, rnd)
        for number in (1, 2):
            hand = game.deal(shuffled_deck("api", 0, number))
            while not hand.is_over:
                player = game.seats[hand.to_move]
                view = game.view(player)
                move = engines[player].decide(view, Decision(hand.phase.value))
                game.apply(move)  # the rules engine's own check: IllegalMoveError if not legal
                moves += 1
            if game.is_over:
                break
    assert moves > 10
    assert not simple.alive and simple.pid is None
    assert children() <= before  # both processes are gone, and reaped


@needs_proc
def test_an_engine_is_closed_when_the_block_raises() -> None:
    before = children()
    with pytest.raises(RuntimeError, match="boom"), RunningEngine.popen("simple") as engine:
        assert engine.alive
        raise RuntimeError("boom")
    assert not engine.alive
    assert children() <= before


def test_configure_checks_the_options_and_restarts_the_engine() -> None:
    with RunningEngine.popen("random") as engine:
        with pytest.raises(ValueError, match="declares no such option"):
            engine.configure({"Sede": 1})
        assert engine.options == {}
        engine.configure({"Seed": 9})
        assert engine.options == {"Seed": "9"} and engine.alive
        with pytest.raises(ValueError, match="Seed"):
            engine.configure({"Seed": -1})
        assert engine.options == {"Seed": "9"}


@needs_proc
def test_an_unknown_engine_name_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    before = children()
    record = tmp_path / "games.gin"
    with pytest.raises(EngineNotReady, match="did you mean 'simple'"):
        play_match(["simpel", "random"], games=2, outputs=Outputs(record=record))
    assert not record.exists()  # the file made for the sandbox to hide is removed again
    with (
        pytest.raises(EngineNotReady, match="did you mean 'random'"),
        RunningEngine.popen("randon"),
    ):
        pass  # pragma: no cover - never reached
    with pytest.raises(EngineNotReady, match="declares no such option"):
        play_match(["simple", "random"], games=2, options={"Sede": 1})
    assert children() <= before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"engines": ["simple"]}, "two engines"),
        ({"engines": ["simple", "random"], "variant": "threehanded"}, "3 engines"),
        ({"engines": ["simple", "random"], "rules": {"gin_bonus": "lots"}}, "gin_bonus"),
        ({"engines": ["simple", "random"], "rules": {"colour": 1}}, "colour"),
        ({"engines": ["simple", "random"], "clock": lambda: Clock(tc="fast")}, "time control"),
        ({"engines": ["simple", "random"], "games": 0}, "games"),
        ({"engines": ["simple", "simple", "random"], "sprt": (0, 5, 0.05, 0.05)}, "SPRT"),
        ({"engines": ["simple", "random"], "sandbox": lambda: Sandbox(mode="maybe")}, "maybe"),
        ({"engines": ["simple", "'random"]}, "cannot split"),
    ],
)
def test_bad_arguments_raise_value_errors(kwargs: dict[str, object], message: str) -> None:
    engines = kwargs.pop("engines")
    with pytest.raises(ValueError, match=message):  # a bad Clock or Sandbox: as it is made
        made = {k: v() if callable(v) else v for k, v in kwargs.items()}
        play_match(engines, **made)  # type: ignore[arg-type]


def test_a_tournament_that_would_overwrite_another_is_refused(tmp_path: Path) -> None:
    config = {"games": 1, "seed": 1, "engines": [{"command": "simple"}, {"command": "random"}]}
    play_tournament(config, output=tmp_path)
    with pytest.raises(referee.StoreError, match="already holds a tournament"):
        play_tournament(config, output=tmp_path)
    with pytest.raises(referee.ConfigError, match="output"):
        play_tournament(config)


def test_the_api_page_examples_run_as_doctests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    page = (Path(__file__).resolve().parents[2] / "docs" / "API.md").read_text()
    examples = re.findall(r"^```pycon\n(.*?)^```", page, re.S | re.M)
    assert len(examples) >= 4
    for body in examples:
        test = doctest.DocTestParser().get_doctest(body, {}, "API.md", "docs/API.md", 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, body


def test_the_old_name_of_a_running_engine_is_the_same_class() -> None:
    # ``referee.Engine`` (drives an engine program) kept its old name for existing code; it is
    # not ``ginproto.sdk.Engine``, the base class of an engine written in Python.
    import ginproto.sdk
    import referee

    assert referee.Engine is referee.RunningEngine is RunningEngine
    assert referee.RunningEngine is not ginproto.sdk.Engine
