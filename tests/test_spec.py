"""The spec's generated examples cannot drift from the code: they are regenerated and diffed."""

from __future__ import annotations

from referee.transcript import SPEC, render, spec_section, transcript


def test_protocol_transcript_in_the_spec_is_what_the_referee_sends_today() -> None:
    expected = render(transcript())
    actual = spec_section(SPEC.read_text())
    assert actual == expected, "spec/PROTOCOL.md is stale: run python -m referee.transcript --write"


def test_transcript_shows_a_whole_game_with_every_kind_of_line() -> None:
    text = transcript()
    for word in (
        "gin ",
        "ginok",
        "isready",
        "newgame",
        "position",
        "go offer",
        "go draw",
        "go discard",
        "move ",
        "handover",
        "gameover",
        "matchover",
        "quit",
    ):
        assert word in text, word


# -- what the spec states about the corner cases is what the code does --------------------
import re  # noqa: E402

import pytest  # noqa: E402
from helpers import make_deck  # noqa: E402

from ginproto import protocol as P  # noqa: E402
from ginproto.game import Entry, Game, GameView  # noqa: E402
from ginproto.hand import Hand, IllegalMoveError, Outcome  # noqa: E402
from ginproto.moves import Move, MoveError  # noqa: E402
from ginproto.rules import Rules  # noqa: E402
from ginproto.table import Decision, Fault, FaultKind, PlayerFault, play_game  # noqa: E402


def spec_text() -> str:
    return " ".join(SPEC.read_text().split())


def example_lines() -> list[str]:
    """Every referee line the spec shows outside the generated transcript, in code blocks and
    in backticks."""
    text = SPEC.read_text().split("<!-- transcript:begin -->")[0]
    words = ("position player ", "gameover player ", "handover player ")
    lines = [line for line in text.splitlines() if line.startswith(words)]
    lines += re.findall(r"`((?:gameover|handover|position) player [^`]*)`", text)
    return lines


def test_every_example_line_in_the_spec_reads_back() -> None:
    lines = example_lines()
    assert any("upcard" in line for line in lines)
    assert any("end forfeit" in line for line in lines)
    for line in lines:
        message = P.parse_referee_line(line)
        assert message.format() == line, line


class _Stepper:
    """Plays the first legal non-knocking move, and faults at its decision ``fault_at``."""

    def __init__(self, fault_at: int | None = None) -> None:
        self.fault_at = fault_at
        self.asked = 0
        self.overs: list[str] = []

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.asked += 1
        if self.fault_at is not None and self.asked > self.fault_at:
            raise PlayerFault(FaultKind.TIMEOUT, "test")
        legal = view.hand.legal_moves()
        return next((m for m in legal if m.kind.value not in ("knock", "biggin")), legal[0])

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        self.overs.append(P.GameOver.of(player, game, fault).format())


def test_after_a_forfeit_winner_names_the_winner_and_winners_only_targets_reached() -> None:
    players = [_Stepper(fault_at=30), _Stepper()]
    play_game(Rules(), players, seed=5, key=0)
    line = players[1].overs[0]
    assert " end forfeit winner 1 " in line and " winners - fault 0:timeout" in line
    assert "after a forfeit, `winner` is the player who won by it" in spec_text()


def test_gin_is_written_as_a_knock_with_no_deadwood() -> None:
    deck = make_deck("Ac 2c 3c 4d 5d 6d 7h 8h 9h Ks", "2s 4s 6s 8s Ts Qs 3h 5h Jd Kd", "Th")
    hand = Hand(Rules(), deck, dealer=1)
    hand.apply(Move.from_str("take"))
    hand.apply(Move.from_str("knock Ks"))  # no gin move: a knock whose other cards all meld
    result = hand.result
    assert result is not None and result.outcome is Outcome.GIN
    assert "Gin is a knock" in spec_text()


def test_where_malformed_ends_and_illegal_begins_for_a_knock() -> None:
    for text in ("knock 7h 5s-6s", "knock 7h 5s-5s-6s", "knock 7h 2c-5d-9h", "knock 7h Xx-2c-3c"):
        with pytest.raises(MoveError):  # malformed: seen without the hand
            Move.from_str(text)
    deck = make_deck("Ac 2c 3c 4d 5d 6d 7h 8h 9h Ks", "2s 4s 6s 8s Ts Qs 3h 5h Jd Kd", "Kc")
    hand = Hand(Rules(), deck, dealer=1)
    hand.apply(Move.from_str("take"))
    for text in ("knock Ks 2s-3s-4s", "knock Ks Ac-2c-3c Ac-Ad-Ah", "knock Ks Kc-Kd-Ks"):
        with pytest.raises(IllegalMoveError):  # illegal: well formed, but not this hand's
            hand.check(Move.from_str(text))
    assert "Malformed or illegal melds" in spec_text()


def test_combo_values_are_not_case_sensitive() -> None:
    style = P.OptionDecl.combo("Style", "Normal", ["Safe", "Normal", "Bold"])
    assert style.value_of("bold") == "Bold"
    assert "neither are `combo` values" in spec_text()


def test_the_restart_promise_is_stated_as_it_is() -> None:
    text = spec_text()
    assert "restarted by the referee at any moment without losing the game" not in text
    assert "forfeits that game (a `crash`, section 10)" in text


def test_information_lines_without_newgame_are_stated() -> None:
    assert "with or without a `newgame` before them" in spec_text()
    assert "Every decision, advice included, is answered with exactly one `move` line" in (
        spec_text()
    )
