"""The built-in engines as real processes, driven line by line with pexpect.

The test is the referee here, by hand: it deals with the library's ``Game``, writes each
position and go to the engine whose turn it is, reads the ``move`` line, and applies it. The
terminal is put in raw mode so that long position lines pass the line discipline unchanged and
nothing is echoed. The minimal bot printed in spec/PROTOCOL.md is run the same way, so the
spec's example cannot rot.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tty
from collections.abc import Iterator
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest

from engines import BUILTIN
from ginproto import protocol as P
from ginproto.cards import shuffled_deck
from ginproto.game import Game, Roles
from ginproto.rules import Rules, Variant

SPEC = Path(__file__).resolve().parents[2] / "spec" / "PROTOCOL.md"
TIMEOUT = 15


class Proc:
    """One engine process on a raw terminal."""

    def __init__(self, argv: list[str]) -> None:
        self.child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", timeout=TIMEOUT)
        self.child.delaybeforesend = None
        tty.setraw(self.child.child_fd)

    def send(self, line: str) -> None:
        self.child.send(line + "\n")

    def expect_line(self, pattern: str) -> str:
        """Wait for a whole line matching ``pattern``; earlier lines are skipped."""
        self.child.expect(rf"(?m)^({pattern})\r?\n")
        match = self.child.match
        assert isinstance(match, re.Match)
        return str(match.group(1))

    def handshake(self) -> list[str]:
        self.send("gin protocol 1")
        self.child.expect(r"ginok protocol 1\r?\n")
        before = str(self.child.before)
        self.send("isready")
        self.expect_line("readyok")
        return [line for line in before.replace("\r", "").split("\n") if line]

    def quit(self) -> int:
        self.send("quit")
        self.child.expect(pexpect.EOF)
        self.child.close()
        status = self.child.exitstatus
        assert isinstance(status, int)
        return status

    def kill(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


def minimal_bot(tmp_path: Path) -> list[str]:
    """The Python bot of spec/PROTOCOL.md section 12, written to a file."""
    text = SPEC.read_text(encoding="utf-8")
    block = text.split("<!-- minimal-bot:begin -->", 1)[1].split("<!-- minimal-bot:end -->")[0]
    code = block.split("```python\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "minimal_bot.py"
    path.write_text(code, encoding="utf-8")
    return [sys.executable, str(path)]


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.kill()


def start(procs: list[Proc], argv: list[str]) -> Proc:
    proc = Proc(argv)
    procs.append(proc)
    return proc


def play_one_hand(game: Game, engines: list[Proc], seed: int) -> int:
    """Play the next hand of ``game`` between the processes; returns the decisions asked."""
    hand = game.deal(shuffled_deck(seed, 0, len(game.entries) + 1))
    asked = 0
    while not hand.is_over:
        mover = game.seats[hand.to_move]
        roles = game.roles
        advice = None
        if roles is not None and mover == roles.captain:
            sitter = engines[roles.sitter]
            sitter.send(P.format_position(game.view(roles.sitter)))
            sitter.send("go advice movetime 5000")
            advice = P.parse_reply(sitter.expect_line("move .*"))
            assert advice is not None
            hand.check(advice)  # legal for the captain, a knock's declared melds included
            asked += 1
        view = game.view(mover)
        line = P.format_position(view)
        if advice is not None:
            line = line.replace(" variant=", f" advice {P.move_token(advice)} variant=", 1)
        engine = engines[mover]
        engine.send(line)
        engine.send(f"go {hand.phase.value} time 60000 inc 100 movetime 5000")
        move = P.parse_reply(engine.expect_line("move .*"))
        assert move is not None
        game.apply(move)  # raises IllegalMoveError on an illegal move
        asked += 1
    entry = game.entries[-1]
    for player, engine in enumerate(engines):
        engine.send(str(P.HandOver(player, entry)))
    return asked


PYTHON_ENGINES = sorted(name for name in BUILTIN if BUILTIN[name][0] == sys.executable)


def test_the_python_builtins_are_there() -> None:
    assert {"random", "simple"} <= set(PYTHON_ENGINES)


@pytest.mark.parametrize("name", PYTHON_ENGINES)
def test_handshake_of_each_builtin_engine(name: str, procs: list[Proc]) -> None:
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if name.startswith("openspiel:") and importlib.util.find_spec("pyspiel") is None and not ci:
        pytest.skip("pyspiel is not installed (pip install 'ginproto[openspiel]')")
    engine = start(procs, BUILTIN[name])
    lines = engine.handshake()
    assert lines[0].startswith("id name ")
    assert lines[1].startswith("id author ")
    assert all(P.parse_engine_line(line) for line in lines)
    engine.send("debug this is not a protocol line")
    engine.send("isready")
    engine.expect_line("readyok")
    assert engine.quit() == 0


def test_random_engine_seed_option(procs: list[Proc]) -> None:
    engine = start(procs, BUILTIN["random"])
    assert "option name Seed type spin default 0 min 0 max 2147483647" in engine.handshake()
    engine.send("setoption name Seed value 12345")
    engine.send("isready")
    engine.expect_line("readyok")
    assert engine.quit() == 0


@pytest.mark.parametrize(
    ("first", "second"), [("random", "simple"), ("simple", "random"), ("expert", "simple")]
)
def test_a_full_hand_between_two_engine_processes(
    first: str, second: str, procs: list[Proc]
) -> None:
    engines = [start(procs, BUILTIN[first]), start(procs, BUILTIN[second])]
    for engine in engines:
        engine.handshake()
    rules = Rules()
    game = Game(rules, first_dealer=1)
    for player, engine in enumerate(engines):
        engine.send(str(P.NewMatch(1)))
        engine.send(str(P.NewGame(1, player, rules)))
    assert play_one_hand(game, engines, seed=31) > 2
    assert len(game.entries) == 1
    for engine in engines:
        engine.send("isready")
        engine.expect_line("readyok")  # still alive after the handover line
        assert engine.quit() == 0


def test_a_three_player_hand_with_advice(procs: list[Proc]) -> None:
    engines = [start(procs, BUILTIN[name]) for name in ("simple", "random", "simple")]
    for engine in engines:
        engine.handshake()
    game = Game(Rules(variant=Variant.THREEHANDED), roles=Roles(box=0, captain=1, sitter=2))
    assert play_one_hand(game, engines, seed=8) > 2
    assert all(engine.quit() == 0 for engine in engines)


def test_the_minimal_bot_of_the_spec(tmp_path: Path, procs: list[Proc]) -> None:
    bot = start(procs, minimal_bot(tmp_path))
    assert bot.handshake() == ["id name Minimal", "id author Anyone"]
    simple = start(procs, BUILTIN["simple"])
    simple.handshake()
    for seed in (1, 2):
        game = Game(Rules(), first_dealer=seed % 2)
        play_one_hand(game, [bot, simple], seed=seed)
    sitter = start(procs, minimal_bot(tmp_path))
    sitter.handshake()
    game = Game(Rules(variant=Variant.THREEHANDED), roles=Roles(box=1, captain=2, sitter=0))
    play_one_hand(game, [sitter, simple, bot], seed=3)
    assert bot.quit() == 0 and simple.quit() == 0 and sitter.quit() == 0
