"""``js-simple``, the Node.js engine written from spec/PROTOCOL.md alone, against the real referee.

It proves the spec is enough to build an engine in another language: it must play whole
matches in every variant without a single fault, and answer a hand-made position legally.
Without ``node`` these tests are skipped, except under CI (CI=true), where they fail: CI must
exercise the engine.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pexpect
import pytest
from click.testing import CliRunner
from helpers import make_deck

import engines
from engines import BUILTIN
from ginproto import protocol as proto
from ginproto.game import Game
from ginproto.moves import Move, MoveKind
from ginproto.record import loads
from ginproto.rules import Rules, Variant
from ginproto.table import Fault
from referee.cli import cli
from referee.scheduling.match import MatchConfig, Played, run_match
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec

SCRIPT = Path(engines.__file__).resolve().parent / "simple.js"
NODE = shutil.which("node")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(autouse=True)
def need_node() -> None:
    """Skip without node, but fail under CI, which must run these tests."""
    if NODE is None:
        if IN_CI:
            pytest.fail("node is not installed, and CI must exercise the js-simple engine")
        pytest.skip("node is not installed")


def play(rules: Rules, *names: str, games: int, seed: int) -> list[Played]:
    """Play a match through the real referee; returns every finished game."""
    config = MatchConfig(
        engines=tuple(EngineSpec.parse(name) for name in names),
        rules=rules,
        games=games,
        seed=seed,
        control=TimeControl(base=60, increment=1, move=5.0),
        startup_timeout=10.0,
    )
    done: list[Played] = []
    run_match(config, list(names), lambda played, _standings: done.append(played))
    assert len(done) == games
    return done


def faults(games: list[Played]) -> list[Fault]:
    return [g.log.fault for g in games if g.log.fault is not None]


def test_builtin_argv_is_node_and_the_absolute_script() -> None:
    assert BUILTIN["js-simple"] == ["node", str(SCRIPT)]
    assert os.path.isabs(BUILTIN["js-simple"][1]) and SCRIPT.is_file()
    assert "js-simple" in list(BUILTIN) and len(BUILTIN) == len(list(BUILTIN))


@pytest.mark.parametrize("variant", ["standard", "oklahoma", "hollywood"])
def test_plays_every_two_player_variant_without_faults(variant: str) -> None:
    games = play(Rules(variant=Variant(variant)), "js-simple", "random", games=4, seed=21)
    assert faults(games) == []
    js_wins = sum(1 for g in games if g.log.winner is not None and g.job.lineup[g.log.winner] == 0)
    assert js_wins >= 3, "a knocking engine should beat random play"
    assert all(g.log.game.entries for g in games)


def test_plays_the_python_simple_engine_under_unusual_rules() -> None:
    rules = Rules.from_params(
        {
            "variant": "oklahoma",
            "oklahoma_ace_limit": "0",
            "spade_double": "true",
            "big_gin": "true",
            "discard_taken": "true",
        }
    )
    assert faults(play(rules, "simple", "js-simple", games=4, seed=8)) == []


def test_three_players_with_advice(tmp_path: Path) -> None:
    record = tmp_path / "three.gin"
    result = CliRunner().invoke(
        cli,
        ["match", "js-simple", "random", "js-simple", "--games", "3", "--seed", "4",
         "--record", str(record), "-q", "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [e["faults"] for e in data["engines"]] == [{}, {}, {}], data["engines"]
    assert "forfeit" not in record.read_text()
    games = loads(record.read_text())
    assert len(games) == 3 and all(not g.errors for g in games)
    assert " advise " in record.read_text()  # the sitter's advice reached the record
    verify = CliRunner().invoke(cli, ["replay", "--verify", str(record)])
    assert verify.exit_code == 0, verify.output


def test_ginref_match_cli() -> None:
    result = CliRunner().invoke(
        cli, ["match", "js-simple", "random", "--games", "2", "--seed", "9", "-q"]
    )
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines() if line[:1].isdigit()]
    assert {row[1] for row in rows} == {"JS", "Random"}, result.output
    assert all(row[-1] == "none" for row in rows), result.output  # no engine has a fault


def test_handshake_and_one_decision_over_a_terminal() -> None:
    game = Game(Rules(), first_dealer=1)
    game.deal(
        make_deck(
            non_dealer="Ac 2c 3c Ad 2d 3d 4h 5h 6h Kd",
            dealer="7c 8c 9c 7d 8d 9d Th Jh Qh Ks",
            upcard="Qc",
            stock="9s",
        )
    )
    for move in (Move.pass_(), Move.pass_(), Move.stock()):
        game.apply(move)
    view = game.view(0)

    child = pexpect.spawn("node", [str(SCRIPT)], echo=False, encoding="utf-8", timeout=10)
    try:
        child.sendline(str(proto.Gin()))
        child.expect(r"id name ([^\r\n]+)\r\n")
        assert child.match.group(1) == "JS Simple"
        child.expect(r"ginok protocol 1\r\n")
        child.sendline("isready")
        child.expect(r"readyok\r\n")
        child.sendline(proto.format_position(view))
        child.sendline("go discard movetime 5000")
        child.expect(r"move ([^\r\n]+)\r\n")
        move = Move.from_str(child.match.group(1))
        # It can knock discarding the Kd (deadwood 9) and must, with melds the rules accept.
        assert move.kind is MoveKind.KNOCK and str(move.card) == "Kd"
        assert move.melds is not None
        assert Move(move.kind, move.card) in view.hand.legal_moves()
        trial = copy.deepcopy(game)
        trial.apply(move)
        assert trial.entries[-1].result.knocker_deadwood_value == 9
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
