"""The protocol a seat speaks with its engine, line by line, on a scripted transport
(tests/transport.py): the handshake, what is sent for a game and a decision, how a reply is
read, and the ruling on a reply that breaks the protocol. No process is started here; what
needs one (timeouts, floods, crashes, the sandbox) is in tests/test_engine_player*.py.
"""

from __future__ import annotations

import pytest

import referee.seat.player
from ginproto import protocol as proto
from ginproto.game import Game, GameEnd
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import Decision, Fault, FaultKind, PlayerFault, play_game
from ginproto.text import ID_LIMIT, printable
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec
from tests.helpers import KnockerPlayer, first_view
from tests.transport import ScriptedTransport, seat

SCORE_4_2_1_1 = ["games", "4", "wins", "2", "losses", "1", "draws", "1"]


def game_start(engine: ScriptedTransport) -> ScriptedTransport:
    """The lines of a new game's first decision, answered ``move pass``."""
    return (
        engine.expect("isready", ["readyok"])
        .expect("newgame")
        .expect("position")
        .expect("go", ["move pass"])
    )


def finished(winner: int | None) -> Game:
    """A game over, won by player ``winner`` (by forfeit), or drawn at the hand cap."""
    game = Game(Rules())
    if winner is None:
        game._finish(GameEnd.HAND_CAP, None)
    else:
        game.forfeit(1 - winner)
    return game


# -- the handshake -------------------------------------------------------------------------


def test_the_handshake_records_what_the_engine_says_and_sends_its_options() -> None:
    said = [
        "id name Scripted Bot",
        "id author Ann Author",
        "id version 2.1",
        "option name Depth type spin default 3 min 1 max 9",
        "option name Style type combo default calm var calm var wild",
        "this line is nonsense",
    ]
    engine = ScriptedTransport().handshake(said, [("Depth", "5"), ("Style", "wild")])
    spec = EngineSpec(("bot",), options=(("Depth", "5"), ("Style", "wild")))
    p = seat(engine, spec=spec)
    p.start()
    engine.done()
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
    p.close()
    assert not p.alive and engine.sent[-1] == "quit"


def test_a_display_name_overrides_the_engine_name() -> None:
    p = seat(ScriptedTransport().handshake(["id name Told"]), spec=EngineSpec(("b",), name="Given"))
    assert p.name == "Given"
    p.start()
    assert p.name == "Given" and p.id.name == "Told"


def test_before_the_handshake_the_name_is_the_label() -> None:
    assert seat(ScriptedTransport(), spec=EngineSpec(("/opt/bots/gin-bot", "-x"))).name == "gin-bot"


def test_what_an_engine_says_of_itself_is_bounded_and_printable() -> None:
    long = "N" * (ID_LIMIT + 50)
    said = [
        f"id name {long}",
        "id author a\x1bb",
        f"option name {long} type combo default {long} var {long}",
    ]
    p = seat(ScriptedTransport().handshake(said))
    p.start()
    assert p.id.name is not None and p.id.name.startswith("NNN")
    assert len(p.id.name) < len(long)
    assert p.id.author is not None and "\x1b" not in p.id.author
    option = p.id.options[0]
    for text in (option.name, option.default, *option.vars):
        assert len(text) < len(long) and text.startswith("NNN")


def test_another_protocol_version_is_a_startup_fault() -> None:
    engine = ScriptedTransport().expect(str(proto.Gin()), ["ginok protocol 7"])
    p = seat(engine)
    with pytest.raises(PlayerFault) as info:
        p.start()
    assert info.value.kind is FaultKind.STARTUP
    assert "speaks protocol 7" in info.value.detail
    assert "this referee speaks 1" in info.value.detail
    assert p.process is None and p.id.protocol == 7 and engine.closed


def test_malformed_lines_in_the_handshake_are_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = ScriptedTransport().expect(
        str(proto.Gin()), ["option type spin", "ginok protocol x", "ginok protocol 1"]
    )
    engine.expect("isready", ["readyok"]).expect("newmatch")
    p = seat(engine, spec=EngineSpec(("b",), name="Shown"))
    with caplog.at_level("INFO", logger="referee.seat.player"):
        p.start()
    assert p.alive and p.id.options == []
    ignored = [r.getMessage() for r in caplog.records if "ignored malformed line" in r.getMessage()]
    assert len(ignored) == 2
    assert ignored[0].startswith("Shown: ignored malformed line 'option type spin': malformed")
    assert ignored[1].startswith("Shown: ignored malformed line 'ginok protocol x': malformed")


# -- a game and a decision -----------------------------------------------------------------


def test_the_go_line_carries_the_clock_and_the_clock_is_charged() -> None:
    engine = game_start(ScriptedTransport().handshake())
    engine.expect("position").expect("go", ["move pass"])
    p = seat(engine, control=TimeControl(30.0, 5.0, 2.0))
    p.start()
    p.new_game(1, 0, Rules())
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    assert [line for line in engine.sent if line.startswith("go ")] == [
        "go offer time 30000 inc 5000 movetime 2000"
    ]
    remaining = p.clock.remaining
    assert remaining is not None and 33.0 < remaining <= 35.0  # 30 - what it took + 5
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    go = [line for line in engine.sent if line.startswith("go ")][-1].split()
    assert go[:2] == ["go", "offer"] and go[4:] == ["inc", "5000", "movetime", "2000"]
    assert int(go[3]) == int(remaining * 1000)
    engine.done()


def test_without_a_game_clock_only_the_move_time_is_sent() -> None:
    engine = game_start(ScriptedTransport().handshake())
    p = seat(engine, control=TimeControl(None, 0.0, 3.0))
    p.new_game(1, 0, Rules())
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    assert [line for line in engine.sent if line.startswith("go ")] == ["go offer movetime 3000"]


def test_a_game_is_announced_before_the_first_decision_and_only_then() -> None:
    engine = game_start(ScriptedTransport().handshake())
    engine.expect("position").expect("go", ["move pass"])  # the second: no ping, no newgame
    p = seat(engine)
    p.start()
    p.new_game(4, 1, Rules())
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    newgame = next(line for line in engine.sent if line.startswith("newgame"))
    assert newgame.split()[1:5] == ["game", "4", "player", "1"]
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    engine.done()


def test_an_engine_is_started_at_its_first_decision() -> None:
    engine = game_start(ScriptedTransport().handshake())
    p = seat(engine)
    p.new_game(1, 0, Rules())
    assert not p.alive
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    assert p.alive
    engine.done()


def test_lines_written_out_of_turn_are_never_the_answer(caplog: pytest.LogCaptureFixture) -> None:
    """A move written after ``newgame``, before any ``go``, is thrown away (and logged): the
    answer is the line written after ``go``."""
    engine = ScriptedTransport().handshake()
    engine.expect("isready", ["readyok"]).expect("newgame", ["move knock"])
    engine.expect("position").expect("go", ["move pass"])
    p = seat(engine, spec=EngineSpec(("b",), name="Shown"))
    p.new_game(1, 0, Rules())
    p._ensure_ready()
    with caplog.at_level("INFO", logger="referee.seat.player"):
        assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    assert [r.getMessage() for r in caplog.records] == [
        "Shown: discarded a line written out of turn: move knock"
    ]


def test_lines_that_are_not_the_move_are_logged_cut_to_200_characters(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = "ginok protocol " + "9" * 300
    chat = "info " + "w" * 300
    engine = ScriptedTransport().expect(str(proto.Gin()), [bad, "ginok protocol 1"])
    engine.expect("isready", ["readyok"]).expect("newmatch")
    engine.expect("isready", ["readyok"]).expect("newgame")
    engine.expect("position").expect("go", [chat, "move pass"])
    p = seat(engine, spec=EngineSpec(("b",), name="Shown"))
    with caplog.at_level("INFO", logger="referee.seat.player"):
        p.new_game(1, 0, Rules())
        assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    with pytest.raises(proto.ProtocolError) as complaint:
        proto.parse_engine_line(bad)
    why = str(complaint.value)
    assert len(why) > 200
    assert [r.getMessage() for r in caplog.records] == [
        f"Shown: ignored malformed line {bad[:80] + '...'!r}: {printable(why, 200)}",
        f"Shown: ignored line: {printable(chat, 200)}",
    ]


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        ("move sideways", "'move sideways': "),
        ("move discard 11x", "'move discard 11x': "),
        ("move", "'move': "),
    ],
)
def test_a_move_that_does_not_parse_is_malformed_and_quoted(reply: str, detail: str) -> None:
    engine = ScriptedTransport().handshake()
    engine.expect("isready", ["readyok"]).expect("newgame")
    engine.expect("position").expect("go", [reply])
    p = seat(engine)
    p.new_game(1, 0, Rules())
    with pytest.raises(PlayerFault) as info:
        p.decide(first_view(), Decision.OFFER)
    assert info.value.kind is FaultKind.MALFORMED
    assert info.value.detail.startswith(detail)


def test_a_move_line_is_parsed_once_and_the_lines_kept_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same ``move`` line answered twice is parsed by the codec once; when as many lines
    as are kept have been read, they are forgotten before the next is kept."""
    kept = {
        f"move from another match {i}": Move.pass_()
        for i in range(referee.seat.player._REPLIES_KEPT)
    }
    monkeypatch.setattr(referee.seat.player, "_REPLIES", kept)
    parsed: list[str] = []
    parse = proto.parse_reply

    def counted(line: str) -> Move | None:
        parsed.append(line)
        return parse(line)

    monkeypatch.setattr(proto, "parse_reply", counted)
    engine = game_start(ScriptedTransport().handshake())
    engine.expect("position").expect("go", ["move pass"])
    p = seat(engine)
    p.new_game(1, 0, Rules())
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    assert parsed == ["move pass"]
    assert kept == {"move pass": Move.pass_()}


# -- what the engine is told ---------------------------------------------------------------


def test_the_game_and_match_results_are_counted_and_sent() -> None:
    engine = ScriptedTransport().handshake()
    for _ in range(4):
        engine.expect("gameover").expect("matchscore")
    engine.expect("matchover")
    p = seat(engine)
    p.start()
    for winner in (0, 1, None, 0):
        p.game_over(0, finished(winner), None)
    assert p.record == [2, 1, 1]
    scores = [line for line in engine.sent if line.startswith("matchscore")]
    assert scores[0].split()[1:] == ["games", "1", "wins", "1", "losses", "0", "draws", "0"]
    assert scores[-1].split()[1:] == SCORE_4_2_1_1
    p.finish_match()
    assert engine.sent[-2].split() == ["matchover", *SCORE_4_2_1_1]
    assert engine.sent[-1] == "quit"
    assert not p.alive and p.process is None
    engine.done()


def test_a_loss_is_counted_from_the_engines_seat() -> None:
    engine = ScriptedTransport().handshake().expect("gameover").expect("matchscore")
    p = seat(engine)
    p.start()
    p.game_over(1, finished(0), None)
    assert p.record == [0, 1, 0]
    engine.done()


def test_information_for_an_engine_not_started_is_dropped_and_the_game_counted() -> None:
    engine = ScriptedTransport()
    p = seat(engine)
    p.game_over(0, finished(None), None)
    assert engine.sent == [] and p.record == [0, 0, 1]


def test_the_end_of_a_hand_and_of_a_game_are_sent_as_the_codec_writes_them() -> None:
    log = play_game(Rules(), [KnockerPlayer(1), KnockerPlayer(2)], seed=3)
    entry = log.game.entries[0]
    game = finished(1)
    fault = Fault(0, FaultKind.TIMEOUT, "no move after 1.00s (draw)", 0)
    engine = ScriptedTransport().handshake()
    engine.expect(str(proto.HandOver(1, entry)))
    engine.expect(str(proto.GameOver.of(0, game, fault))).expect("matchscore")
    p = seat(engine)
    p.start()
    p.hand_over(1, entry)
    p.game_over(0, game, fault)
    assert str(proto.GameOver.of(0, game, fault)) != str(proto.GameOver.of(1, game, fault))
    assert str(proto.GameOver.of(0, game, fault)) != str(proto.GameOver.of(0, game, None))
    engine.done()


def test_a_seat_restarts_its_engine_after_a_fault() -> None:
    first = ScriptedTransport().handshake()
    first.expect("isready", ["readyok"]).expect("newgame")
    first.expect("position").expect("go", ["move sideways"])
    second = game_start(ScriptedTransport().handshake())
    p = seat(first, second)
    p.new_game(1, 0, Rules())
    with pytest.raises(PlayerFault):
        p.decide(first_view(), Decision.OFFER)
    p.close()  # the table closes a seat that faulted
    assert first.closed
    p.new_game(2, 0, Rules())
    assert p.decide(first_view(), Decision.OFFER) == Move.pass_()
    first.done()
    second.done()
