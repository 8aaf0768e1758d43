"""The spec's generated examples cannot drift from the code: they are regenerated and diffed."""

from __future__ import annotations

from referee.views.transcript import SPEC, render, spec_section, transcript


def test_protocol_transcript_in_the_spec_is_what_the_referee_sends_today() -> None:
    expected = render(transcript())
    actual = spec_section(SPEC.read_text())
    assert actual == expected, (
        "spec/PROTOCOL.md is stale: run python -m referee.views.transcript --write"
    )


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


# -- the defaults and the facts of the game that the spec states -----------------------
import inspect  # noqa: E402
from pathlib import Path  # noqa: E402

from ginproto.rules import Variant  # noqa: E402
from ginproto.simulate import RandomPlayer  # noqa: E402


def _stated_seconds(text: str, what: str) -> float:
    """The default the spec states for ``what`` ("startup timeout", "ping timeout")."""
    m = re.search(rf"{what}[^.]*?(\d+(?:\.\d+)?) seconds by default", text)
    assert m, f"spec/PROTOCOL.md states no default {what} in seconds"
    return float(m.group(1))


def test_the_stated_startup_and_ping_timeouts_are_the_codes(tmp_path: Path) -> None:
    """The handshake and every ``isready`` are allowed the startup timeout: the spec's figure
    is the default of every way to run engines (each command, the API, a tournament file)."""
    from click import Context

    from referee.settings import Clock

    play_match_clock = Clock()
    from referee.cli import cli
    from referee.scheduling.loader import load_config
    from referee.seat.check import run_checks
    from referee.seat.player import EnginePlayer

    text = spec_text()
    startup = _stated_seconds(text, "startup timeout")
    assert _stated_seconds(text, "ping timeout") == startup
    defaults = {
        "EnginePlayer": inspect.signature(EnginePlayer).parameters["startup_timeout"].default,
        "play_match": play_match_clock.startup,  # play_match's clock, where none is given
        "run_checks": inspect.signature(run_checks).parameters["startup_timeout"].default,
    }
    for name in ("match", "check", "play"):
        command = cli.get_command(Context(cli), name)
        assert command is not None
        (option,) = (p for p in command.params if p.name == "startup_timeout")
        defaults[f"ginref {name}"] = option.default
    config = tmp_path / "cup.toml"
    config.write_text(
        'games = 2\n[[engines]]\nname = "A"\ncommand = "random"\n'
        '[[engines]]\nname = "B"\ncommand = "random"\n'
    )
    defaults["a tournament file"] = load_config(config).startup_timeout
    assert defaults == dict.fromkeys(defaults, startup)


class _Watcher(RandomPlayer):
    """A random player that keeps every view it was asked to decide on."""

    def __init__(self, seed: str, seen: list[tuple[GameView, Decision]]) -> None:
        super().__init__(seed, knocks=True)
        self.seen = seen

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.seen.append((view, decision))
        return super().decide(view, decision)


def _views(variant: Variant, games: int) -> list[tuple[GameView, Decision]]:
    seen: list[tuple[GameView, Decision]] = []
    rules = Rules(variant=variant)
    for key in range(games):
        play_game(rules, [_Watcher(f"{key}-{p}", seen) for p in range(rules.players)], 3, key)
    return seen


def test_the_pile_is_never_empty_at_a_draw_but_can_be_at_a_discard() -> None:
    seen = _views(Variant.STANDARD, 6)
    draws = [v for v, d in seen if d is Decision.DRAW]
    assert draws and all(v.hand.pile for v in draws)
    empty = [v for v, d in seen if d is Decision.DISCARD and not v.hand.pile]
    assert empty, "no discard with an empty pile was played: choose other seeds"
    assert " pile - " in P.format_position(empty[0])
    text = spec_text()
    assert "The pile is never empty at a draw" in text
    assert "It can be empty in the `discard` phase, after its only card was taken" in text


def test_in_the_three_player_game_the_box_is_seat_0_and_always_deals() -> None:
    seen = _views(Variant.THREEHANDED, 1)
    assert {v.roles.box for v, _ in seen if v.roles is not None} == {0, 1, 2}  # boxes change
    for view, _ in seen:
        assert view.roles is not None and view.seats[0] == view.roles.box
        assert view.hand.dealer == 0
        assert " dealer 0 " in P.format_position(view)
    assert "the box deals every hand, so its `dealer` is always 0" in spec_text()


def test_hollywood_counts_the_hands_of_the_whole_series() -> None:
    """``hand`` does not start again when one of the three games (columns) ends."""
    rules = Rules(variant=Variant.HOLLYWOOD)
    seen: list[tuple[GameView, Decision]] = []
    log = play_game(rules, [_Watcher("h0", seen), _Watcher("h1", seen)], 3, 0)
    numbers = [v.hand_number for v, _ in seen]
    hands = len(log.game.entries)
    assert sorted(set(numbers)) == list(range(1, hands + 1))
    assert numbers == sorted(numbers)
    first_closed = next(v.hand_number for v, _ in seen if any(v.closed))
    assert first_closed < hands  # a column ended before the series did, and the count went on
    assert "in Hollywood, the hands of the whole series, over all three score columns" in (
        spec_text()
    )
