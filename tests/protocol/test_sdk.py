"""The Python engine SDK, driven in memory: the handshake, ``isready`` mid-play, options, bad and
unknown lines, and whole games both in process and through the text protocol over pipes.

The two ways of playing must agree move for move: the in-process game calls the engine objects
directly, the text game formats every position and go with the codec, feeds them to the
engine's own ``run`` loop in a thread, and parses its replies. Identical game logs prove that
the codec and the SDK read each other exactly.
"""

from __future__ import annotations

import io
import os
import re
import threading
from collections.abc import Iterator
from typing import TextIO

import pytest

import ginproto.sdk
from engines.random_engine import RandomEngine
from engines.simple_engine import SimpleEngine
from ginproto import protocol as P
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move
from ginproto.rules import Rules, Variant
from ginproto.sdk import Engine, Option
from ginproto.table import Decision, Fault, FaultKind, GameLog, PlayerFault, play_game
from tests.helpers import first_view


def run_lines(engine: Engine, *lines: str) -> list[str]:
    """Feed ``lines`` to ``engine.run`` and return what it wrote, line by line."""
    out = io.StringIO()
    engine.run(io.StringIO("".join(line + "\n" for line in lines)), out)
    return out.getvalue().splitlines()


class Recording(RandomEngine):
    """The random engine, also keeping the information lines it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[object] = []
        self.options_set: list[tuple[str, object]] = []

    def on_hand_over(self, message: P.HandOver) -> None:
        self.seen.append(message)

    def on_game_over(self, message: P.GameOver) -> None:
        self.seen.append(message)

    def on_new_game(self, message: P.NewGame) -> None:
        self.seen.append(message)

    def on_match_score(self, message: P.MatchScore) -> None:
        self.seen.append(message)

    def on_option(self, name: str, value: P.OptionValue) -> None:
        self.options_set.append((name, value))


# ------------------------------------------------------------------------------------------
# The text loop


def test_handshake() -> None:
    lines = run_lines(RandomEngine(), "gin protocol 1", "quit")
    assert lines == [
        "id name Random",
        "id author ginproto",
        "option name Seed type spin default 0 min 0 max 2147483647",
        "ginok protocol 1",
    ]
    assert run_lines(SimpleEngine(), "gin")[-1] == "ginok protocol 1"


def test_version_and_options_in_the_handshake() -> None:
    class Bot(SimpleEngine):
        name = "Bot"
        author = "Me"
        version = "2.1"
        options = (
            Option.check("Fast", True),
            Option.combo("Style", "Safe", ["Safe", "Bold"]),
            Option.string("Book"),
        )

    lines = run_lines(Bot(), "gin")
    assert lines == [
        "id name Bot",
        "id author Me",
        "id version 2.1",
        "option name Fast type check default true",
        "option name Style type combo default Safe var Safe var Bold",
        "option name Book type string default <empty>",
        "ginok protocol 1",
    ]
    parsed = [P.parse_engine_line(line) for line in lines]
    assert parsed[3:6] == list(Bot.options)


def test_isready_is_answered_at_any_time_even_between_position_and_go() -> None:
    view = first_view()
    lines = run_lines(
        SimpleEngine(), "isready", P.format_position(view), "isready", "go offer", "isready"
    )
    assert lines[0] == "readyok" and lines[1] == "readyok" and lines[3] == "readyok"
    assert P.parse_reply(lines[2]) in view.hand.legal_moves()


def test_setoption() -> None:
    engine = Recording()
    assert engine.option("Seed") == 0
    run_lines(
        engine,
        "setoption name Seed value 42",
        "setoption name seed value 43",  # names are not case sensitive
        "setoption name Seed value -1",  # out of range: ignored
        "setoption name Seed value many",  # not a number: ignored
        "setoption name Depth value 3",  # unknown: ignored
        "setoption Seed 5",  # malformed: ignored
    )
    assert engine.option("Seed") == 43
    assert engine.options_set == [("Seed", 42), ("Seed", 43)]


def test_seed_changes_the_random_engines_moves() -> None:
    view = first_view()
    position = P.format_position(view)

    def answers(seed: int) -> list[str]:
        out = []
        for hand_seed in range(12):
            shown = position.replace("hand 1 ", f"hand {hand_seed + 1} ")
            out += run_lines(RandomEngine(), f"setoption name Seed value {seed}", shown, "go offer")
        return out

    assert answers(1) == answers(1)
    assert answers(1) != answers(2)


def test_unknown_and_bad_lines_are_ignored() -> None:
    view = first_view()
    lines = run_lines(
        SimpleEngine(),
        "",
        "   ",
        "hello there",
        "info from the referee?",
        "go offer",  # no position yet: ignored
        "position player 0",  # malformed: ignored
        "position " + "x " * 1000,
        "go dance",  # malformed: ignored
        "handover nonsense",
        "gin protocol 1 extra words future=1",
        P.format_position(view) + " newfield 3 newrule=on",  # unknown fields are skipped
        "go offer time 1000 ponder 1",
        "go offer",  # the position was used up: ignored
        "quit",
        "isready",  # after quit: never read
    )
    assert lines[-2] == "ginok protocol 1"
    assert len(lines) - lines.index("ginok protocol 1") == 2
    assert P.parse_reply(lines[-1]) in view.hand.legal_moves()


def test_go_for_a_finished_hand_is_ignored() -> None:
    view = first_view()
    line = P.format_position(view).replace("phase offer", "phase over")
    assert run_lines(SimpleEngine(), line, "go offer") == []


def test_end_of_input_ends_the_loop_and_a_closed_pipe_is_quiet() -> None:
    assert run_lines(SimpleEngine(), "isready") == ["readyok"]

    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    SimpleEngine().run(io.StringIO("isready\nisready\n"), Closed())


def test_information_lines_reach_the_hooks() -> None:
    engine = Recording()
    new_game = P.NewGame(1, 0, Rules())
    score = P.MatchScore(1, 1, 0, 0)
    over = P.MatchOver(1, 1, 0, 0)
    run_lines(engine, str(P.NewMatch(3)), str(new_game), str(score), str(over))
    assert engine.seen == [new_game, score, over]


def test_a_broken_hook_does_not_stop_the_engine() -> None:
    class Broken(SimpleEngine):
        def on_new_game(self, message: P.NewGame) -> None:
            raise RuntimeError("oops")

    assert run_lines(Broken(), str(P.NewGame(1, 0, Rules())), "isready") == ["readyok"]


def test_an_exception_in_the_engines_own_code_propagates() -> None:
    class Buggy(SimpleEngine):
        def offer(self, view: GameView) -> Move:
            raise ZeroDivisionError("bug")

    with pytest.raises(ZeroDivisionError):
        run_lines(Buggy(), P.format_position(first_view()), "go offer")


def test_info_lines() -> None:
    class Chatty(SimpleEngine):
        def offer(self, view: GameView) -> Move:
            self.info("thinking hard")
            return Move.pass_()

    lines = run_lines(Chatty(), P.format_position(first_view()), "go offer")
    assert lines == ["info thinking hard", "move pass"]
    assert P.parse_reply(lines[0]) is None
    Chatty().offer(first_view())  # in process the info goes to the log


def test_the_sitter_is_asked_for_advice() -> None:
    rules = Rules(variant=Variant.THREEHANDED)
    view = first_view(rules)
    lines = run_lines(SimpleEngine(), P.format_position(view), "go advice")
    assert P.parse_reply(lines[0]) in view.hand.legal_moves()


# ------------------------------------------------------------------------------------------
# In process


def test_the_engine_is_a_player_in_process() -> None:
    log = play_game(Rules(), [RandomEngine(), SimpleEngine()], seed=5)
    assert log.fault is None and log.game.is_over
    wins = [play_game(Rules(), [SimpleEngine(), RandomEngine()], seed=s).winner for s in range(6)]
    assert wins.count(0) >= 5  # simple beats random


def test_engine_errors_in_process_are_faults() -> None:
    class Buggy(SimpleEngine):
        def discard(self, view: GameView) -> Move:
            raise KeyError("oops")

    class Sloppy(SimpleEngine):
        def offer(self, view: GameView) -> Move:
            return "pass"  # type: ignore[return-value]

    log = play_game(Rules(), [Buggy(), Buggy()], seed=1)
    assert log.fault is not None and log.fault.kind is FaultKind.CRASH
    assert "KeyError" in log.fault.detail
    log = play_game(Rules(), [Sloppy(), Sloppy()], seed=1)
    assert log.fault is not None and log.fault.kind is FaultKind.MALFORMED


def test_an_engine_must_implement_the_decisions() -> None:
    log = play_game(Rules(), [Engine(), Engine()], seed=1)
    assert log.fault is not None and log.fault.kind is FaultKind.CRASH
    assert "must implement offer" in log.fault.detail


def test_hooks_are_called_in_process() -> None:
    engines = [Recording(), Recording()]
    log = play_game(Rules(target=30), engines, seed=2)
    for player, engine in enumerate(engines):
        hand_overs = [m for m in engine.seen if isinstance(m, P.HandOver)]
        assert [m.entry for m in hand_overs] == log.game.entries
        assert all(m.player == player for m in hand_overs)
        assert engine.seen[-1] == P.GameOver.of(player, log.game, log.fault)


def test_the_readme_bot_in_the_module_docstring_plays() -> None:
    doc = ginproto.sdk.__doc__ or ""
    block = doc.split("A complete engine that plays legal moves::\n", 1)[1]
    code_lines = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith("    "):
            break
        code_lines.append(line[4:])
    code = "\n".join(code_lines)
    assert len([line for line in code_lines if line.strip()]) <= 22
    namespace: dict[str, object] = {"__name__": "readme_bot"}
    exec(compile(code, "<readme bot>", "exec"), namespace)
    bot = namespace["RandomBot"]
    assert isinstance(bot, type) and issubclass(bot, Engine)
    log = play_game(Rules(target=50), [bot(), bot()], seed=4)
    assert log.fault is None
    log = play_game(Rules(variant=Variant.THREEHANDED, target=50), [bot(), bot(), bot()], seed=4)
    assert log.fault is None


# ------------------------------------------------------------------------------------------
# Through the text protocol, in memory


class TextPlayer:
    """A table player that talks to an SDK engine's ``run`` loop over two pipes: a tiny
    in-memory referee made of the codec only."""

    def __init__(self, engine: Engine, ping_every: int = 7) -> None:
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        self._to_engine = open(w1, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._from_engine = open(r2, encoding="utf-8")  # noqa: SIM115
        engine_in: TextIO = open(r1, encoding="utf-8")  # noqa: SIM115
        engine_out: TextIO = open(w2, "w", encoding="utf-8")  # noqa: SIM115
        self._engine_files = (engine_in, engine_out)
        self._thread = threading.Thread(target=engine.run, args=(engine_in, engine_out))
        self._thread.start()
        self.ping_every = ping_every
        self.decisions = 0
        self.sent: list[str] = []
        self.received: list[str] = []
        self.send(P.Gin())
        self.handshake = list(self._until(P.GinOk))
        self.send(P.IsReady())
        list(self._until(P.ReadyOk))

    def send(self, message: object) -> None:
        line = str(message)
        self.sent.append(line)
        self._to_engine.write(line + "\n")
        self._to_engine.flush()

    def _until(self, kind: type) -> Iterator[P.EngineMessage]:
        while True:
            line = self._from_engine.readline()
            assert line, "the engine closed its output"
            self.received.append(line.rstrip("\n"))
            message = P.parse_engine_line(line)
            yield message
            if isinstance(message, kind):
                return

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.decisions += 1
        self.send(P.Position(view))
        if self.decisions % self.ping_every == 0:
            self.send(P.IsReady())  # between position and go: answered at once
            list(self._until(P.ReadyOk))
        self.send(P.Go(decision, time=60_000, inc=100, movetime=5_000))
        for message in self._until(P.MoveReply):
            if isinstance(message, P.MoveReply):
                return message.move
        raise PlayerFault(FaultKind.CRASH, "no reply")  # pragma: no cover

    def hand_over(self, player: int, entry: Entry) -> None:
        self.send(P.HandOver(player, entry))

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        self.send(P.GameOver.of(player, game, fault))
        self.send(P.IsReady())
        list(self._until(P.ReadyOk))

    def close(self) -> None:
        self.send(P.Quit())
        self._thread.join(timeout=10)
        assert not self._thread.is_alive()
        for f in (self._to_engine, self._from_engine, *self._engine_files):
            f.close()


def moves_of(log: GameLog) -> list[tuple[int, str, str | None, str | None]]:
    return [
        (s.player, str(s.turn.move), None if s.turn.card is None else str(s.turn.card),
         None if s.advice is None else str(s.advice))
        for hand in log.hands
        for s in hand.steps
    ]  # fmt: skip


@pytest.mark.parametrize("variant", list(Variant))
def test_text_protocol_game_equals_in_process_game(variant: Variant) -> None:
    rules = Rules(variant=variant, target=60, hand_cap=12)

    def lineup() -> list[Engine]:
        engines: list[Engine] = [Recording(), SimpleEngine(), Recording()]
        return engines[: rules.players]

    direct_engines = lineup()
    direct = play_game(rules, direct_engines, seed=9)
    text_engines = lineup()
    players = [TextPlayer(e) for e in text_engines]
    try:
        text = play_game(rules, players, seed=9)
    finally:
        for p in players:
            p.close()
    assert direct.fault is None and text.fault is None
    assert moves_of(text) == moves_of(direct)
    assert text.game.entries == direct.game.entries
    assert text.winner == direct.winner
    for a, b in zip(direct_engines, text_engines, strict=True):
        if isinstance(a, Recording) and isinstance(b, Recording):
            assert b.seen == a.seen  # the same hand and game results, read from text
    for p in players:
        assert p.handshake[-1] == P.GinOk()
        assert all(re.fullmatch(r"(move|readyok|id|option|ginok)( .*)?", line)
                   for line in p.received)  # fmt: skip
        assert p.decisions > 0


def test_a_go_with_an_unknown_decision_is_answered_from_the_position() -> None:
    """spec 5.7: a decision word the engine does not know still gets one move line, for the
    phase of the latest position; silence would be a timeout."""
    view = first_view()
    lines = run_lines(SimpleEngine(), P.format_position(view), "go ponder time 1000", "quit")
    replies = [line for line in lines if line.startswith("move ")]
    assert len(replies) == 1
    assert P.parse_reply(replies[0]) in view.hand.legal_moves()
